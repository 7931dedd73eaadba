package raise

import (
	"fmt"
	"hash/fnv"
	"strconv"
	"time"

	"github.com/bulkad/bulkad/core"
	kern "github.com/bulkad/bulkad/kernel"
	"github.com/chewxy/hm"
	"github.com/pkg/errors"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Options tunes RaiseWith.
type Options struct {
	// FreshResults makes every returned node a node created by this call and distinct from
	// the other results (a result that would be an existing node, a constant or a repeated
	// node is wrapped in a copy op). Grad needs this: gorgonia.SetDerivOf must be applied to a
	// node the TapeMachine executes and that denotes one gradient only.
	FreshResults bool
	// Reuse, with FreshResults, lets a result that is an existing node be returned as it is
	// when Reuse(i, node) says so (Grad: the node is already the registered gradient of the
	// same wrt node, from an earlier call).
	Reuse func(i int, n *gorgonia.Node) bool
	// Salts, with FreshResults, names the copies of the results: a copy of node n for
	// result i is salted with n's ID and Salts[i], so raising the same program again gives
	// the same copy (Gorgonia deduplicates it). Without Salts, copies are fresh at each call.
	Salts []string
	// Marked, with FreshResults, makes every result a node of one of raise's own ops
	// (IsRaised): a result a native Gorgonia op computes is wrapped in a copy (salted as
	// above). Grad raising per operation sets it, so that gradient nodes an earlier Grad
	// registered can be told from those of another autodiff (gorgonia.Grad).
	Marked bool
	// Components selects the result components to raise, by position in the result tuple
	// (nil: all). Lets that no selected component depends on are not raised.
	Components []int
	// Vulkan, when set with a device, lets the float kernels of the raised ops run on that
	// device (see Vulkan); nil keeps everything on the CPU.
	Vulkan *Vulkan
	// MaxArrayBytes refuses a program with an array larger than this many bytes before any
	// node is added (0: core.ArrayLimit, i.e. the BULKAD_MAX_ARRAY_BYTES environment variable
	// or a quarter of physical memory; negative: no limit).
	MaxArrayBytes int64
	// Stats, when non-nil, receives where the time went (see Stats).
	Stats *Stats
	// Coarse raises the whole program as one plan node, which runs every planned kernel in
	// one kernel.Plan, and one node per selected result, which copies the result out of the
	// plan node's packed value (see coarse.go). Gorgonia's graph and TapeMachine compile are
	// quadratic in the number of nodes; a coarse program adds len(results)+1 nodes whatever
	// its size. The results must share one dtype (otherwise RaiseWith raises per operation).
	Coarse bool
	// Tape, with Coarse, keeps in the plan node's packed value every top-level let of the
	// program that the plan computes into a buffer of its own (of the results' dtype), so
	// that a later program (a gradient) reads them there instead of recomputing them; the
	// plan node's op lists them (PackedLets).
	Tape bool
	// Slots binds let names (and parameters) to a range of a node's elements: the packed
	// value of a plan node raised with Tape (see Slot). Only coarse raising reads slots.
	Slots map[string]Slot
	// Materialised plans a convolution's window products (see window_matmul.go) as the
	// gather and a GEMM, and its input gradient as a product and a scatter, as before
	// kern.WindowMatMul: for comparisons, and for tests of those plans.
	Materialised bool
}

// Slot is a typed range of a node's elements: Offset is the first element; the length and
// shape are those of the let or parameter bound to it.
type Slot struct {
	Node   *gorgonia.Node
	Offset int
}

// Stats splits the time of one RaiseWith call: planning (ours), building the nodes, and
// within building the time spent in Gorgonia's node constructors (ApplyOp and the native
// op functions). Gorgonia looks every new node up by scanning all nodes of the graph, so
// Gorgonia is quadratic in the graph's size whatever the raiser does; Plan and Build − Gorgonia
// are bulkad's share.
type Stats struct {
	Plan, Build, Gorgonia time.Duration
	// Steps is the number of planned nodes (before Gorgonia's deduplication).
	Steps int
}

// Raise adds to g the nodes that compute p's result and returns one node per component of
// the result tuple (one node when the body is not a tuple).
//
// bind maps names to existing nodes of g: every parameter of p must be bound, with a node of
// the parameter's type; a let whose name is bound is not raised — its variable denotes the
// bound node (this is how a gradient program reuses the forward pass instead of recomputing
// it). The whole program is validated before the first node is added; on error the graph is
// left unchanged and the error names the offending term.
func Raise(g *gorgonia.ExprGraph, p *core.Program, bind map[string]*gorgonia.Node) ([]*gorgonia.Node, error) {
	return RaiseWith(g, p, bind, Options{})
}

// RaiseWith is Raise with options.
func RaiseWith(g *gorgonia.ExprGraph, p *core.Program, bind map[string]*gorgonia.Node, opt Options) ([]*gorgonia.Node, error) {
	if err := opt.checkLimit(p); err != nil {
		return nil, err
	}
	t0 := time.Now()
	coarse, err := opt.coarse(p)
	if err != nil {
		return nil, err
	}
	if coarse {
		// one term for the copies of a subterm that the lowering of a graph's nodes and its
		// gradient each made (the planner memoises terms by identity)
		if p, err = core.CSE(p); err != nil {
			return nil, errors.Wrap(err, "raise: common subterms")
		}
	}
	pl, err := newPlan(g, p, bind, opt.Slots)
	if err != nil {
		return nil, err
	}
	pl.coarse, pl.materialised, pl.tape = coarse, opt.Materialised, coarse && opt.Tape
	if opt.Vulkan.On() {
		pl.vk = opt.Vulkan
	}
	if err := pl.program(p, opt); err != nil {
		return nil, err
	}
	t1 := time.Now()
	var out []*gorgonia.Node
	if coarse {
		out, err = pl.buildCoarse(opt)
	} else {
		out, err = pl.build(opt)
	}
	if opt.Stats != nil {
		opt.Stats.Plan, opt.Stats.Build, opt.Stats.Gorgonia, opt.Stats.Steps = t1.Sub(t0), time.Since(t1), pl.inGorgonia, len(pl.steps)
	}
	return out, err
}

// checkLimit refuses p when one of its arrays exceeds the array limit (see MaxArrayBytes).
func (opt Options) checkLimit(p *core.Program) error {
	limit := opt.MaxArrayBytes
	if limit == 0 {
		var err error
		if limit, err = core.ArrayLimit(); err != nil {
			return errors.Wrap(err, "raise")
		}
	}
	return core.CheckArrayLimit(p, limit, "raise: program")
}

// ---- planning ----

// A ref is a planned value: either an existing node or the result of a step.
type ref struct {
	node *gorgonia.Node
	step int // index into plan.steps when node == nil
	// sliced refs denote elements off … off+size(typ)-1 of node's value (a Slot).
	sliced bool
	off    int
	typ    core.Type
}

// A step makes one node from the nodes of its inputs.
type step struct {
	term core.Term // for error messages
	ins  []ref
	make func(kids []*gorgonia.Node) (*gorgonia.Node, error)
	typ  core.Type
	// native steps call Gorgonia's own constructors, whose shape inference assumes every
	// child's DimSizer is a tensor.Shape.
	native bool
	// fallback, for native steps, builds the step's term over variables standing for its
	// inputs: used (through the core evaluator) when Gorgonia returns an unrelated node.
	fallback func(vs []*core.Var) (core.Term, error)
	// For coarse raising (no native steps there): the custom op of the step, or the
	// constant's elements (lit), or alias (the input's elements under the step's type).
	op    *Op
	lit   any
	alias bool
}

type plan struct {
	g     *gorgonia.ExprGraph
	bind  map[string]*gorgonia.Node
	steps []step
	env   map[string]ref
	memo  map[core.Term]ref
	share map[int]ref
	outs  []ref
	ever  map[string]bool // names ever bound by a let
	// lazy holds the bound terms of top-level lets planned on first use (when every
	// top-level let name is distinct), so fusions can look through them.
	lazy   map[string]core.Term
	pushed map[unKey]core.Term // unary operations pushed through broadcast views
	vk     *kern.Vulkan        // device for the kernels (nil: CPU only)
	// defs holds the bound terms of all top-level lets (also those bound to existing
	// nodes) when every top-level let name is distinct; used only to analyse values (see
	// isMask01).
	defs map[string]core.Term
	// inGorgonia is the time spent in Gorgonia's node constructors while building.
	inGorgonia time.Duration
	// ws holds the GEMM packing buffers of the matmul kernels raised by this plan (created
	// on first use).
	ws *kern.Workspace
	// coarse: plan kernels only (no Gorgonia ops, no constant nodes), built by buildCoarse.
	coarse bool
	// materialised: no window products (Options.Materialised)
	materialised bool
	// tape: the plan packs its lets for later programs (Options.Tape with Coarse)
	tape  bool
	slots map[string]Slot
	// what program() planned, for buildCoarse: the top-level lets, which of them are
	// needed, the names the selected results read from outside the planned lets, and the
	// selected results.
	chain     []*core.Let
	needed    []bool
	live      map[string]bool
	results   []core.Term
	lazyOK    bool
	paramVars map[string]*core.Var
	// argmaxViews: the argmax-of-view steps planned, by their base's ref and the view's
	// geometry (argmaxOfView): the max-pooling's forward and each gradient that needs its
	// argmax state the same windows with differently named index variables
	argmaxViews map[string]ref
	// argmaxOf: the argmax steps planned, by their operand term: an index function's argmax
	// of one window (a max-pool's gradient) is compiled as the argmax of the whole operand,
	// a term of its own, which the forward's argmax of that operand already computes
	argmaxOf map[core.Term]ref
	// dwStaging: per x read by a depthwise product, the first such kernel planned, which a
	// second one (the forward's or the filter gradient's pair) shares x's staged copy with
	dwStaging map[core.Term]*kern.DepthwiseWindows
	// winStaging: per x read by a window product, the first such kernel planned, which a
	// window product of the other form shares its padded copy with (shareWindowStaging)
	winStaging map[core.Term]*kern.WindowMatMul
	// winPads: the input gradients' window products, one of each padding, whose padded
	// buffer the next of the same padding shares (sharePadding)
	winPads []*kern.WindowMatMul
	// body holds what is planned: the selected results and the bound terms of the lets they
	// need (a tuple of them; not the whole program, whose other results, a machine's unneeded
	// node values, would count as readers). uses counts the references to its terms and
	// varUses to its variables by name (made on first use: onlyUse)
	body    core.Term
	uses    map[core.Term]int
	varUses map[string]int
}

// gemmWS is the plan's GEMM workspace, shared by its matmul kernels.
func (pl *plan) gemmWS() *kern.Workspace {
	if pl.ws == nil {
		pl.ws = &kern.Workspace{}
	}
	return pl.ws
}

func newPlan(g *gorgonia.ExprGraph, p *core.Program, bind map[string]*gorgonia.Node, slots map[string]Slot) (*plan, error) {
	if g == nil {
		return nil, errors.New("raise: graph: nil graph")
	}
	if p == nil || p.Body == nil {
		return nil, errors.New("raise: program: nil program or body")
	}
	pl := &plan{g: g, bind: bind, env: map[string]ref{}, memo: map[core.Term]ref{}, share: map[int]ref{}, ever: map[string]bool{}, lazy: map[string]core.Term{}, pushed: map[unKey]core.Term{}, slots: slots, argmaxViews: map[string]ref{}, argmaxOf: map[core.Term]ref{}}
	for _, v := range p.Params {
		if _, ok := pl.slots[v.Name]; ok {
			continue // checked when the plan's slots are set (pl.slotRef)
		}
		n, ok := bind[v.Name]
		if !ok || n == nil {
			return nil, errors.Errorf("raise: param %s : %v: not bound to a node", v.Name, v.Type())
		}
		if err := pl.checkBound(v.Name, v.Type(), n); err != nil {
			return nil, err
		}
		pl.env[v.Name] = ref{node: n}
	}
	return pl, nil
}

func (pl *plan) checkBound(name string, t core.Type, n *gorgonia.Node) error {
	if n.Graph() != pl.g {
		return errors.Errorf("raise: binding %s: node %v belongs to another graph", name, n)
	}
	nt, ok := nodeType(n)
	if !ok || !nt.Equal(t) {
		return errors.Errorf("raise: binding %s: node %v has dtype %v shape %v, want %v", name, n, n.Dtype(), n.Shape(), t)
	}
	return nil
}

func (pl *plan) program(p *core.Program, opt Options) error {
	// The let chain above the result (primal lets, cotangent lets): iterate, do not recurse.
	chain, body := core.LetChain(p.Body)
	results := core.Results(body)
	if opt.Components != nil {
		sel := make([]core.Term, len(opt.Components))
		for i, c := range opt.Components {
			if c < 0 || c >= len(results) {
				return errors.Errorf("raise: program: component %d requested, the result has %d", c, len(results))
			}
			sel[i] = results[c]
		}
		results = sel
	}
	// Liveness: only lets the selected results depend on are raised (the TapeMachine runs
	// every node of the graph, so a dead node costs time at every step).
	needed, live := liveLets(chain, results, pl.isBound)
	distinct := map[string]bool{}
	for _, v := range p.Params {
		distinct[v.Name] = true
	}
	lazyOK := true
	for _, l := range chain {
		if distinct[l.Var.Name] {
			lazyOK = false
		}
		distinct[l.Var.Name] = true
	}
	pl.chain, pl.needed, pl.live, pl.results, pl.lazyOK = chain, needed, live, results, lazyOK
	pl.body, pl.uses, pl.varUses = plannedTerms(chain, needed, results, pl.isBound), nil, nil
	pl.paramVars = make(map[string]*core.Var, len(p.Params))
	for _, v := range p.Params {
		pl.paramVars[v.Name] = v
	}
	for _, v := range p.Params {
		if _, ok := pl.slots[v.Name]; ok {
			r, err := pl.slotRef(v.Name, v.Type())
			if err != nil {
				return err
			}
			pl.env[v.Name] = r
		}
	}
	if lazyOK {
		pl.defs = make(map[string]core.Term, len(chain))
		for _, l := range chain {
			pl.defs[l.Var.Name] = l.Bound
		}
	}
	for i, l := range chain {
		if !needed[i] {
			continue
		}
		if n, ok := pl.bind[l.Var.Name]; lazyOK && (!ok || n == nil) && !pl.isSlot(l.Var.Name) {
			pl.lazy[l.Var.Name] = l.Bound
			pl.ever[l.Var.Name] = true
			continue
		}
		r, err := pl.letBound(l)
		if err != nil {
			return err
		}
		pl.bindVar(l.Var.Name, r)
	}
	for _, e := range results {
		r, err := pl.term(e)
		if err != nil {
			return err
		}
		pl.outs = append(pl.outs, r)
	}
	return nil
}

// bindVar binds name in the environment; rebinding a name that was bound before starts a
// fresh memo table (terms planned under the old binding may mean something else now).
func (pl *plan) bindVar(name string, r ref) {
	if _, had := pl.env[name]; had || pl.ever[name] {
		pl.memo = map[core.Term]ref{}
		pl.share = map[int]ref{}
		pl.argmaxOf = map[core.Term]ref{} // keyed by terms too
	}
	pl.ever[name] = true
	pl.env[name] = r
}

func (pl *plan) letBound(l *core.Let) (ref, error) {
	if pl.isSlot(l.Var.Name) {
		return pl.slotRef(l.Var.Name, l.Var.Type())
	}
	if n, ok := pl.bind[l.Var.Name]; ok && n != nil {
		if err := pl.checkBound(l.Var.Name, l.Var.Type(), n); err != nil {
			return ref{}, err
		}
		return ref{node: n}, nil
	}
	return pl.term(l.Bound)
}

func (pl *plan) add(t core.Term, ins []ref, mk func([]*gorgonia.Node) (*gorgonia.Node, error)) ref {
	pl.steps = append(pl.steps, step{term: t, ins: ins, make: mk, typ: t.Type()})
	return ref{step: len(pl.steps) - 1}
}

func termErr(t core.Term, format string, args ...any) error {
	s := t.String()
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return errors.Errorf("raise: %s: %s", s, fmt.Sprintf(format, args...))
}

func (pl *plan) term(t core.Term) (ref, error) {
	if r, ok := pl.memo[t]; ok {
		return r, nil
	}
	r, err := pl.plan1(t)
	if err != nil {
		return ref{}, err
	}
	pl.memo[t] = r
	return r, nil
}

func (pl *plan) terms(ts ...core.Term) ([]ref, error) {
	rs := make([]ref, len(ts))
	for i, t := range ts {
		r, err := pl.term(t)
		if err != nil {
			return nil, err
		}
		rs[i] = r
	}
	return rs, nil
}

// inVars makes the parameter variables of a custom op's one-node program.
func inVars(avoid map[string]bool, ts ...core.Type) ([]*core.Var, error) {
	vs := make([]*core.Var, len(ts))
	for i, t := range ts {
		name := "x" + strconv.Itoa(i)
		for avoid[name] {
			name += "_"
		}
		v, err := core.NewVar(name, t)
		if err != nil {
			return nil, err
		}
		vs[i] = v
	}
	return vs, nil
}

func asTerms(vs []*core.Var) []core.Term {
	ts := make([]core.Term, len(vs))
	for i, v := range vs {
		ts[i] = v
	}
	return ts
}

// custom plans a custom op over the given input terms: the op's program is t rebuilt with
// each input replaced by a parameter (extra params, e.g. index-function free variables, are
// appended by the caller through rebuild).
func (pl *plan) custom(t core.Term, kind string, ins []core.Term, rebuild func(vs []*core.Var) (core.Term, []*core.Var, error), k kern.Kernel) (ref, error) {
	return pl.customAvoid(t, kind, ins, nil, rebuild, k)
}

// customAvoid is custom whose parameters are also not named as the index variables of fns
// (index functions that the op's program keeps besides t's own).
func (pl *plan) customAvoid(t core.Term, kind string, ins []core.Term, fns []*core.IndexFn, rebuild func(vs []*core.Var) (core.Term, []*core.Var, error), k kern.Kernel) (ref, error) {
	rs, err := pl.terms(ins...)
	if err != nil {
		return ref{}, err
	}
	types := make([]core.Type, len(ins))
	for i, x := range ins {
		types[i] = x.Type()
	}
	// Parameter names must not clash with the names the op's program keeps: the variables
	// of an index function (the rest of t is replaced by parameters). Walk only those, so
	// planning stays linear in the program size.
	avoid := map[string]bool{}
	switch u := t.(type) {
	case *core.Gather:
		fns = append(fns[:len(fns):len(fns)], u.Fn)
	case *core.Scatter:
		fns = append(fns[:len(fns):len(fns)], u.Fn)
	}
	for _, fn := range fns {
		for _, v := range fn.Vars {
			avoid[v.Name] = true
		}
		for _, o := range fn.Out {
			core.PostOrder(o, func(u core.Term) {
				if v, ok := u.(*core.Var); ok {
					avoid[v.Name] = true
				}
			})
		}
	}
	vs, err := inVars(avoid, types...)
	if err != nil {
		return ref{}, termErr(t, "%v", err)
	}
	body, params, err := rebuild(vs)
	if err != nil {
		return ref{}, termErr(t, "%v", err)
	}
	op, err := newOp(kind, params, body, k)
	if err != nil {
		return ref{}, termErr(t, "%v", err)
	}
	if pl.vk != nil {
		// Keep a device op distinct from the CPU op of the same program (Gorgonia
		// deduplicates nodes by hash): a graph raised with a device runs on it.
		op.text += " #vulkan"
	}
	r := pl.add(t, rs, func(kids []*gorgonia.Node) (*gorgonia.Node, error) {
		return applyChecked(pl.g, op, kids)
	})
	pl.steps[r.step].op = op
	return r, nil
}

// applyChecked applies op to kids. Gorgonia deduplicates nodes by a 32-bit hash and its
// equality test does not compare children, so a hash collision would silently return an
// unrelated node (in long chains this happens: an 8000-step chain collided in our tests). A
// returned node with other children or another op is detected and the op is salted.
func applyChecked(g *gorgonia.ExprGraph, op *Op, kids []*gorgonia.Node) (*gorgonia.Node, error) {
	op.argHM = make([]hm.Type, len(kids))
	for i, k := range kids {
		op.argHM[i] = k.Type()
	}
	for salt := 0; salt < 8; salt++ {
		o := op
		if salt > 0 {
			o = op.salted(fmt.Sprintf("salt %d", salt))
		}
		n, err := gorgonia.ApplyOp(o, kids...)
		if err != nil {
			return nil, err
		}
		if n.Op() != nil && n.Op().Hashcode() == o.Hashcode() && n.Op().String() == o.String() && sameChildren(g, n, kids) {
			return n, nil
		}
	}
	return nil, errors.Errorf("raise: %s: Gorgonia keeps returning an unrelated node (hash collisions)", op.kind)
}

func sameChildren(g *gorgonia.ExprGraph, n *gorgonia.Node, kids []*gorgonia.Node) bool {
	it := g.From(n.ID())
	i := 0
	for it.Next() {
		if i >= len(kids) || it.Node() != kids[i] {
			return false
		}
		i++
	}
	return i == len(kids)
}

// simple plans a custom op whose program is t with its children replaced by parameters.
func (pl *plan) simple(t core.Term, kind string, k kern.Kernel) (ref, error) {
	kids := core.Children(t)
	return pl.custom(t, kind, kids, func(vs []*core.Var) (core.Term, []*core.Var, error) {
		b, err := core.Rebuild(t, asTerms(vs))
		return b, vs, err
	}, k)
}

// swapped returns what a matrix product reads for its operand t and whether it reads it
// transposed: every swap of the last two dimensions on the way, through lazily planned lets
// (the gradient's tr (tr W) of a layer y = x·Wᵀ, the inner one bound to a let), becomes the
// transpose flag instead of a transposition; t itself when there is none.
func (pl *plan) swapped(t core.Term) (core.Term, bool) {
	u, flag := t, false
	for {
		tr, ok := pl.peel(u).(*core.Transpose)
		if !ok || !core.IsSwapLastTwo(tr.Perm, len(tr.X.Type().Shape)) {
			return u, flag
		}
		u, flag = tr.X, !flag
	}
}

func (pl *plan) plan1(t core.Term) (ref, error) {
	switch t := t.(type) {
	case *core.Var:
		r, ok := pl.env[t.Name]
		if !ok {
			if b, lazy := pl.lazy[t.Name]; lazy {
				r, err := pl.term(b)
				if err != nil {
					return ref{}, err
				}
				pl.env[t.Name] = r
				return r, nil
			}
			return ref{}, termErr(t, "unbound variable (%v)", t.Type())
		}
		return r, nil
	case *core.Let:
		r, err := pl.letBound(t)
		if err != nil {
			return ref{}, err
		}
		old, had := pl.env[t.Var.Name]
		pl.bindVar(t.Var.Name, r)
		body, err := pl.term(t.Body)
		if had {
			pl.bindVar(t.Var.Name, old)
		} else {
			delete(pl.env, t.Var.Name)
		}
		return body, err
	case *core.Share:
		if r, ok := pl.share[t.ID]; ok {
			return r, nil
		}
		r, err := pl.term(t.Body)
		if err != nil {
			return ref{}, err
		}
		pl.share[t.ID] = r
		return r, nil
	case *core.Lit:
		return pl.constant(t, litValue(t), litName(t))
	case *core.Iota:
		v := make([]int64, t.N)
		for i := range v {
			v[i] = int64(i)
		}
		var val any = tensor.New(tensor.WithShape(t.N), tensor.WithBacking(v))
		return pl.constant(t, val, fmt.Sprintf("bulkad: iota %d", t.N))
	case *core.Unary:
		if t.Op == core.OpStopGrad { // the identity in a forward pass
			return pl.term(t.X)
		}
		if r, ok, err := pl.elementwise(t); ok {
			return r, err
		}
		if f, ok := nativeFor(nativeUnary, t.Op, t.X.Type().Dtype); ok && !pl.coarse && !pl.vk.Wants(t.X.Type().Dtype, "unary", t.Op.String(), t.Type().Shape.Size()) {
			return pl.native(t, []core.Term{t.X}, func(k []*gorgonia.Node) (*gorgonia.Node, error) { return f(k[0]) })
		}
		return pl.simple(t, t.Op.String(), kern.Unary{Op: t.Op, VK: pl.vk})
	case *core.Binary:
		return pl.binary(t)
	case *core.Cast:
		if t.To == t.X.Type().Dtype {
			return pl.term(t.X)
		}
		if r, ok, err := pl.elementwise(t); ok { // a mask: cast ρ (p cmp q) in one pass
			return r, err
		}
		return pl.simple(t, "cast", kern.Cast{})
	case *core.Cond:
		return pl.simple(t, "cond", kern.Cond{})
	case *core.Index:
		return pl.index(t)
	case *core.SumOuter:
		return pl.sumOuter(t)
	case *core.ArgmaxOuter:
		return pl.argmaxOuter(t)
	case *core.Gather:
		if g, ok := pl.gatherOfTranspose(t); ok {
			return pl.term(g)
		}
		if g, ok := pl.gatherOfMask(t); ok {
			return pl.term(g)
		}
		return pl.gatherScatter(t, t.Shape, t.X, t.Fn, false)
	case *core.Scatter:
		if r, ok, err := pl.negatedScatter(t); ok {
			return r, err
		}
		if r, ok, err := pl.scatterSum(t); ok {
			return r, err
		}
		if r, ok, err := pl.windowScatter(t); ok {
			return r, err
		}
		if r, ok, err := pl.windowCol2im(t); ok || err != nil {
			return r, err
		}
		if r, ok, err := pl.transposedScatter(t); ok || err != nil {
			return r, err
		}
		if r, ok, err := pl.productScatter(t); ok || err != nil {
			return r, err
		}
		if r, ok, err := pl.productReduce(t); ok || err != nil {
			return r, err
		}
		if r, ok, err := pl.sumScatter(t); ok {
			return r, err
		}
		return pl.gatherScatter(t, t.Shape, t.X, t.Fn, true)
	case *core.FromVector:
		return pl.simple(t, "fromVector", kern.Concat{Copies: 1})
	case *core.Replicate:
		return pl.simple(t, "replicate", kern.Concat{Copies: t.N, VK: pl.vk})
	case *core.Transpose:
		return pl.transpose(t)
	case *core.Reshape:
		xt := t.X.Type()
		if xt.Shape.Equal(t.Shape) {
			return pl.term(t.X)
		}
		if pl.coarse {
			return pl.aliasStep(t, t.X)
		}
		if xt.Dtype.IsFloat() && len(xt.Shape) > 0 && len(t.Shape) > 0 {
			sh := tensor.Shape(append([]int(nil), t.Shape...))
			return pl.native(t, []core.Term{t.X}, func(k []*gorgonia.Node) (*gorgonia.Node, error) { return gorgonia.Reshape(k[0], sh) })
		}
		return pl.simple(t, "reshape", kern.Concat{Copies: 1})
	case *core.MatMul:
		return pl.matmul(t)
	case *core.Build1:
		return pl.evalOp(t, "build1")
	case *core.Tuple:
		return ref{}, termErr(t, "a tuple below the top level")
	}
	return ref{}, termErr(t, "unsupported term %T", t)
}

func (pl *plan) constant(t core.Term, val any, name string) (ref, error) {
	if pl.coarse {
		r := pl.add(t, nil, nil)
		pl.steps[r.step].lit = constElems(t.Type(), val)
		return r, nil
	}
	return pl.add(t, nil, func([]*gorgonia.Node) (*gorgonia.Node, error) {
		return pl.g.AddNode(gorgonia.NewConstant(val, gorgonia.WithName(name), gorgonia.In(pl.g))), nil
	}), nil
}

// litName names a literal constant uniquely by dtype, shape and content (Gorgonia
// deduplicates constants by name).
func litName(l *core.Lit) string {
	t := l.Type()
	if t.Shape.Size() <= 8 {
		return "bulkad: " + l.String() + " : " + t.String()
	}
	h := fnv.New64a()
	fmt.Fprint(h, l.F, l.I, l.B)
	return fmt.Sprintf("bulkad: lit %v #%x", t, h.Sum64())
}

func (pl *plan) index(t *core.Index) (ref, error) {
	xt := t.X.Type()
	ins := []core.Term{t.X}
	fixed := make([]int64, len(t.Ix))
	for i, e := range t.Ix {
		if l, ok := e.(*core.Lit); ok && l.I[0] >= 0 {
			fixed[i] = l.I[0]
			continue
		}
		fixed[i] = -1
		ins = append(ins, e)
	}
	if len(t.Ix) == 0 {
		return pl.term(t.X)
	}
	k := kern.Index{Outer: xt.Shape[:len(t.Ix)], Fixed: fixed, Rest: t.Type().Shape.Size()}
	return pl.custom(t, "index", ins, func(vs []*core.Var) (core.Term, []*core.Var, error) {
		ix := make([]core.Term, len(t.Ix))
		j := 1
		for i, e := range t.Ix {
			if fixed[i] >= 0 {
				ix[i] = e
			} else {
				ix[i] = vs[j]
				j++
			}
		}
		b, err := core.NewIndex(vs[0], ix)
		return b, vs, err
	}, k)
}

func (pl *plan) gatherScatter(t core.Term, sh core.Shape, x core.Term, fn *core.IndexFn, scatter bool) (ref, error) {
	prog, err := kern.CompileIndexFn(fn)
	if err != nil {
		return pl.evalIndexed(t, x, scatter)
	}
	ins := append([]core.Term{x}, prog.Frees...)
	xt := x.Type()
	n, m := len(fn.Vars), len(fn.Out)
	var k kern.Kernel
	var ip *kern.IndexPlan
	var kind string
	var dom, outer core.Shape
	if scatter {
		kind, dom, outer = "scatter", xt.Shape[:n], sh[:m]
		sk := &kern.Scatter{Dom: dom, Dst: outer, Rest: xt.Shape[n:].Size()}
		k, ip = sk, &sk.IndexPlan
	} else {
		kind, dom, outer = "gather", sh[:n], xt.Shape[:m]
		gk := &kern.Gather{Dom: dom, Src: outer, Rest: xt.Shape[m:].Size()}
		k, ip = gk, &gk.IndexPlan
	}
	ip.Fn, ip.VK = prog, pl.vk
	ip.SetFastPaths(dom, outer)
	if len(prog.Frees) > 0 {
		if lp, ok := kern.LookupClipPlan(fn, prog, dom, outer, pl.argmaxRange); ok {
			ip.Lookup = lp
		}
	}
	return pl.custom(t, kind, ins, func(vs []*core.Var) (core.Term, []*core.Var, error) {
		// The op's program: the extra inputs (free variables, hoisted subterms) become
		// parameters, so the printed program is closed and names exactly what the op computes.
		vars := map[string]core.Term{}
		terms := map[core.Term]core.Term{}
		for i, f := range prog.Frees {
			if v, ok := f.(*core.Var); ok {
				vars[v.Name] = vs[i+1]
			} else {
				terms[f] = vs[i+1]
			}
		}
		out := make([]core.Term, len(fn.Out))
		r := &replacer{vars: vars, terms: terms, rewrites: prog.Rewrites}
		for i, o := range fn.Out {
			var err error
			if out[i], err = r.run(o, fn.Vars); err != nil {
				return nil, nil, err
			}
		}
		fn2, err := core.NewIndexFn(fn.Vars, out)
		if err != nil {
			return nil, nil, err
		}
		var b core.Term
		if scatter {
			b, err = core.NewScatter(sh, vs[0], fn2)
		} else {
			b, err = core.NewGather(sh, vs[0], fn2)
		}
		return b, vs, err
	}, k)
}

// replacer substitutes parameter variables for free variables (by name, unless shadowed)
// and for hoisted subterms (by identity) in an index function's outputs.
type replacer struct {
	vars     map[string]core.Term
	terms    map[core.Term]core.Term
	rewrites map[core.Term]core.Term
}

func (r *replacer) run(t core.Term, bound []*core.Var) (core.Term, error) {
	if x, ok := r.terms[t]; ok {
		return x, nil
	}
	if x, ok := r.rewrites[t]; ok {
		return r.run(x, bound)
	}
	if v, ok := t.(*core.Var); ok {
		for _, b := range bound {
			if b.Name == v.Name {
				return t, nil
			}
		}
		if x, ok := r.vars[v.Name]; ok {
			return x, nil
		}
		return t, nil
	}
	kids := core.Children(t)
	nk := make([]core.Term, len(kids))
	for i, k := range kids {
		b := bound
		if extra := core.BoundIn(t, i); len(extra) > 0 {
			b = append(append([]*core.Var{}, bound...), extra...)
		}
		var err error
		if nk[i], err = r.run(k, b); err != nil {
			return nil, err
		}
	}
	x, err := core.Rebuild(t, nk)
	if err != nil {
		return nil, err
	}
	return x, nil
}

// matmul plans matmul x y, batched or not, as one MatMul kernel: operands that transpose
// their last two dimensions become its transpose flags.
func (pl *plan) matmul(t *core.MatMul) (ref, error) {
	a, ta := pl.swapped(t.X)
	b, tb := pl.swapped(t.Y)
	if r, ok, err := pl.windowMatmul(t, a, ta, b, tb); ok {
		return r, err
	}
	if r, ok, err := pl.scatterMatmul(t, a, ta, b, tb); ok {
		return r, err
	}
	xs, ys := t.X.Type().Shape, t.Y.Type().Shape
	r := len(xs)
	k := kern.BatchedMatMul(xs[:r-2].Size(), xs[r-2], xs[r-1], ys[r-1], ta, tb, pl.vk, pl.gemmWS())
	return pl.custom(t, "matmul", []core.Term{a, b}, func(vs []*core.Var) (core.Term, []*core.Var, error) {
		m, err := opProduct(vs[0], vs[1], ta, tb)
		return m, vs, err
	}, k)
}
