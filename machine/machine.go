package machine

import (
	"fmt"
	"maps"
	"reflect"
	"sort"

	"github.com/bulkad/bulkad/adapter"
	"github.com/bulkad/bulkad/core"
	kern "github.com/bulkad/bulkad/kernel"
	"github.com/bulkad/bulkad/raise"
	"github.com/pkg/errors"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Option configures a Machine (see New).
type Option func(*config)

type config struct {
	bindDV  bool
	dvNodes map[*gorgonia.Node]bool
	reuse   bool
	lean    bool
	keep    map[*gorgonia.Node]bool
}

// ReuseValues makes every run write node values into the packed vector of the run before
// (and the copies of nodes that share elements with another into their buffers of the run
// before), instead of fresh ones: a step then allocates nothing for its values (a convnet's
// activations and gradients are tens of megabytes a step), but a value kept from one run is
// overwritten by the next, as Gorgonia's TapeMachine does with the values of ops it runs
// in place. Dual values (BindDualValues) are separate and not affected; copy a node's value
// (gorgonia.CloneValue) to keep it across runs. Scalar nodes still get new values. Together
// with Lean, a steady-state step at one thread allocates nothing but those scalars (two small
// allocations each: the loss, a scalar learnable's gradient): the plan keeps the views it
// cut from the last run's slices, inputs are read through the last run's slices while a node
// keeps its value object over the same array, and dual values (tensors and scalars) are
// added into in place.
func ReuseValues() Option {
	return func(c *config) { c.reuse = true }
}

// Lean makes every run fill the values of only the nodes a training step reads: the gradient
// nodes (those that are the derivative of another node: their values feed the dual values of
// BindDualValues, n.Grad() and every solver), the nodes read by gorgonia.Read statements and
// the nodes listed in keep (the cost, the logits, any node whose value the caller reads after
// a run). Every other node's value is left as it was (nil when no run filled it). The plan
// then computes only what those values need: the intermediate values of a Gorgonia-built
// layer (an im2col matrix, a broadcast product, a transposed copy) are not written out, and
// the planner fuses across them where it can (a depthwise convolution's windows times its
// filter, summed over the taps). Without Lean every node gets its value, as on the
// TapeMachine.
func Lean(keep ...*gorgonia.Node) Option {
	return func(c *config) {
		c.lean = true
		for _, n := range keep {
			if n != nil {
				c.keep[n] = true
			}
		}
	}
}

// BindDualValues is gorgonia.BindDualValues for a Machine: after each run, every gradient
// node adds its value into the dual value of the nodes it is the derivative of (only those
// listed, when nodes are given), so that n.Grad() and every solver read the accumulated
// gradient.
func BindDualValues(nodes ...*gorgonia.Node) Option {
	return func(c *config) {
		c.bindDV = true
		for _, n := range nodes {
			if n != nil {
				c.dvNodes[n] = true
			}
		}
	}
}

// Machine runs a whole graph from one compiled plan per dtype; it implements gorgonia.VM.
// See the package documentation.
type Machine struct {
	g       *gorgonia.ExprGraph
	inputs  []*gorgonia.Node // nodes without an op, whose values a run reads
	pre     []*gorgonia.Node // nodes run by their own op before the plans, in graph order
	plans   []*planRun
	aux     []*gorgonia.Node        // raise's keepAlive and guard nodes, run by their op after the plans
	keeps   map[*gorgonia.Node]bool // every node of aux: true for a keepAlive (its value is a constant), false for a guard
	reads   []*gorgonia.Node        // Read statement nodes
	grads   []gradLink              // dual-value registrations (BindDualValues)
	mutable map[*gorgonia.Node]string
	windows map[*gorgonia.Node][3]int // the mutable slices' windows at New (raise.SliceWindow)
	kids    map[*gorgonia.Node][]*gorgonia.Node
	args    map[*gorgonia.Node][]gorgonia.Value // doOp's operand values, one slice per node
	ran     bool                                // RunAll ran since the last Reset
	closed  bool
}

// planRun is one compiled plan: its inputs and where each node's value lies in its output.
type planRun struct {
	kp   *kern.Plan
	dt   core.Dtype
	ins  []source
	outs []result
	args []any // the flat inputs of a run (the slice is reused)
	// reuse: buf, the packed vector of the last run, is the next run's (ReuseValues)
	reuse bool
	buf   any
}

// source is a plan input: a node's value, or a constant the raise added.
type source struct {
	node  *gorgonia.Node
	konst any
	// the flat slice of the last run's value: a dense tensor's backing array is read again
	// while the node keeps the same value object over the same array; a scalar's one-element
	// slice is refilled (a run then allocates nothing for its inputs)
	last gorgonia.Value
	ptr  uintptr
	size int
	flat any
}

// result is a node whose value is elements off … off+size-1 of a plan's output.
type result struct {
	node  *gorgonia.Node
	off   int
	typ   core.Type
	copy  bool         // another result lies at the same elements: the node gets its own copy
	buf   any          // with ReuseValues, the copy's buffer, reused by every run
	shape tensor.Shape // the node's shape (n.Shape() clones it at every call)
}

// gradLink says that grad's value is added into src's dual value.
type gradLink struct {
	grad, src *gorgonia.Node
}

var _ gorgonia.VM = (*Machine)(nil)

// New compiles g into a Machine. It translates every node with an op (package adapter),
// raises the program coarsely into a scratch graph to obtain its kernel.Plan (package raise)
// and leaves g unchanged. It fails, naming the node and its op, when a node cannot be run
// exactly as Gorgonia runs it; such graphs need gorgonia.NewTapeMachine.
func New(g *gorgonia.ExprGraph, opts ...Option) (m *Machine, err error) {
	defer func() {
		if r := recover(); r != nil {
			m, err = nil, errors.Errorf("machine: new: panic inside Gorgonia or bulkad: %v", r)
		}
	}()
	if g == nil {
		return nil, errors.New("machine: new: graph is nil")
	}
	cfg := &config{dvNodes: map[*gorgonia.Node]bool{}, keep: map[*gorgonia.Node]bool{}}
	for _, o := range opts {
		if o != nil {
			o(cfg)
		}
	}
	sorted, err := gorgonia.Sort(g)
	if err != nil {
		return nil, errors.Wrap(err, "machine: new: sorting the graph")
	}
	order := make([]*gorgonia.Node, len(sorted)) // operands first
	for i, n := range sorted {
		order[len(sorted)-1-i] = n
	}
	m = &Machine{g: g, kids: map[*gorgonia.Node][]*gorgonia.Node{}, args: map[*gorgonia.Node][]gorgonia.Value{}, keeps: map[*gorgonia.Node]bool{}}
	var roots []*gorgonia.Node
	for _, n := range order {
		op := n.Op()
		switch {
		case op == nil:
			m.inputs = append(m.inputs, n)
		case isConstant(op):
		case isStatement(n):
			if fmt.Sprintf("%T", op) != "gorgonia.readOp" {
				return nil, unsupported(n, "a statement node other than Read")
			}
			m.reads = append(m.reads, n)
		case isPlanned(op):
			// a coarse raise's packed vector: inlined by the adapter, read by its part nodes
		case isAux(op):
			m.aux = append(m.aux, n)
			m.keeps[n] = fmt.Sprintf("%T", op) == "*raise.keepAlive"
		default:
			roots = append(roots, n)
		}
	}
	if err := m.childrenOf(order); err != nil {
		return nil, err
	}
	var needed func(*gorgonia.Node) bool
	if cfg.lean {
		needed = m.leanNeeds(cfg.keep)
	}
	if len(roots) > 0 {
		if err := m.compile(roots, order, needed); err != nil {
			return nil, err
		}
		for _, pr := range m.plans {
			pr.reuse = cfg.reuse
		}
	}
	if cfg.bindDV {
		for _, n := range order {
			if n.Op() == nil || isStatement(n) {
				continue
			}
			for _, src := range n.DerivOf() {
				if len(cfg.dvNodes) == 0 || cfg.dvNodes[src] {
					m.grads = append(m.grads, gradLink{grad: n, src: src})
				}
			}
		}
	}
	return m, nil
}

// leanNeeds is Lean's choice of the nodes whose values a run fills: the gradient nodes, the
// nodes in keep, and the operands of the Read statements (raise's keepAlive and guard nodes
// read no operand value).
func (m *Machine) leanNeeds(keep map[*gorgonia.Node]bool) func(*gorgonia.Node) bool {
	need := maps.Clone(keep)
	for _, s := range m.reads {
		for _, k := range m.kids[s] {
			need[k] = true
		}
	}
	return func(n *gorgonia.Node) bool { return need[n] || len(n.DerivOf()) > 0 }
}

// compile translates the roots, finds the nodes run by their own op and plans the rest: the
// nodes needed reports (all when it is nil).
func (m *Machine) compile(roots, order []*gorgonia.Node, needed func(*gorgonia.Node) bool) error {
	tr, err := adapter.TranslateAll(roots, m.inputs...)
	if err != nil {
		return errors.Wrap(err, "machine: new: the graph cannot be run on bulkad's kernels (use gorgonia.NewTapeMachine)")
	}
	m.mutable = tr.Mutable
	m.windows = map[*gorgonia.Node][3]int{}
	for n := range m.mutable {
		if w, ok := raise.SliceWindow(n.Op()); ok {
			m.windows[n] = w
		}
	}
	_, body := core.LetChain(tr.Program.Body)
	elems := core.Results(body)
	if len(elems) != len(roots) {
		return errors.Errorf("machine: new: the translation has %d results for %d nodes (internal error)", len(elems), len(roots))
	}
	// A root whose term is its own parameter depends on no input (a random node, arithmetic
	// on constants): Gorgonia's op computes it before the plans.
	isPre := map[*gorgonia.Node]bool{}
	byDtype := map[core.Dtype][]int{}
	var dts []core.Dtype
	for i, e := range elems {
		if v, isVar := e.(*core.Var); isVar && tr.Params[v.Name] == roots[i] {
			isPre[roots[i]] = true
			continue
		}
		if needed != nil && !needed(roots[i]) {
			continue
		}
		dt := e.Type().Dtype
		if _, seen := byDtype[dt]; !seen {
			dts = append(dts, dt)
		}
		byDtype[dt] = append(byDtype[dt], i)
	}
	// Any other parameter with an op would be a value only Gorgonia's op computes, read by the
	// translation (a dropout node's own output): the plan cannot compute it.
	for _, p := range tr.Program.Params {
		n := tr.Params[p.Name]
		if n != nil && n.Op() != nil && !isConstant(n.Op()) && !isPre[n] {
			return unsupported(n, "an op whose value the translation reads from the node itself, which only Gorgonia's op computes")
		}
	}
	for _, n := range order {
		if isPre[n] {
			m.pre = append(m.pre, n)
		}
	}
	sort.SliceStable(dts, func(i, j int) bool { return len(byDtype[dts[i]]) > len(byDtype[dts[j]]) })
	for _, dt := range dts {
		pr, err := m.plan(tr, roots, byDtype[dt], dt)
		if err != nil {
			return err
		}
		m.plans = append(m.plans, pr)
	}
	return nil
}

// plan raises the results idx (of dtype dt) of the translation coarsely into a scratch graph
// whose input nodes stand for the program's parameters, and takes the kernel.Plan of the
// plan node it adds: the user's graph is never touched.
func (m *Machine) plan(tr *adapter.Translation, roots []*gorgonia.Node, idx []int, dt core.Dtype) (*planRun, error) {
	sg := gorgonia.NewGraph()
	bind := make(map[string]*gorgonia.Node, len(tr.Program.Params))
	real := make(map[*gorgonia.Node]*gorgonia.Node, len(tr.Program.Params))
	for _, p := range tr.Program.Params {
		n := tr.Params[p.Name]
		if n == nil {
			return nil, errors.Errorf("machine: new: parameter %s is bound to no node (internal error)", p.Name)
		}
		s, err := scratchInput(sg, p)
		if err != nil {
			return nil, err
		}
		bind[p.Name] = s
		real[s] = n
	}
	parts, err := raise.RaiseWith(sg, tr.Program, bind, raise.Options{Coarse: true, Components: idx})
	if err != nil {
		return nil, errors.Wrapf(err, "machine: new: planning the %v nodes (use gorgonia.NewTapeMachine)", dt)
	}
	if len(parts) != len(idx) || len(parts) == 0 {
		return nil, errors.Errorf("machine: new: raise gave %d nodes for %d results (internal error)", len(parts), len(idx))
	}
	pr := &planRun{dt: dt}
	var pn *gorgonia.Node
	for i, part := range parts {
		op, ok := part.Op().(adapter.Part)
		kids := from(sg, part)
		if !ok || len(kids) != 1 {
			return nil, errors.Errorf("machine: new: result %d of the %v plan is not a coarse part node (%v) (internal error)", i, dt, part.Op())
		}
		if pn == nil {
			pn = kids[0]
		} else if kids[0] != pn {
			return nil, errors.Errorf("machine: new: the %v results read several plan nodes (internal error)", dt)
		}
		off, typ := op.Part()
		n := roots[idx[i]]
		if typ.Shape.Size() != n.Shape().TotalSize() && !(n.IsScalar() && typ.Shape.Size() == 1) {
			return nil, errors.Errorf("machine: new: node %q (ID %d) has shape %v, its plan result %v (internal error)", n.Name(), n.ID(), n.Shape(), typ)
		}
		pr.outs = append(pr.outs, result{node: n, off: off, typ: typ, shape: n.Shape()})
	}
	pop, ok := pn.Op().(interface{ Plan() *kern.Plan })
	if !ok {
		return nil, errors.Errorf("machine: new: the %v plan node has op %T, not a coarse plan (internal error)", dt, pn.Op())
	}
	pr.kp = pop.Plan()
	for _, k := range from(sg, pn) {
		if n, ok := real[k]; ok {
			pr.ins = append(pr.ins, source{node: n})
			continue
		}
		if k.Op() == nil || !isConstant(k.Op()) {
			return nil, errors.Errorf("machine: new: the %v plan reads node %v, neither a parameter nor a constant (internal error)", dt, k)
		}
		s, err := Flat(k.Value())
		if err != nil {
			return nil, errors.Wrapf(err, "machine: new: constant %v", k)
		}
		pr.ins = append(pr.ins, source{konst: s})
	}
	if len(pr.ins) != pr.kp.Inputs() {
		return nil, errors.Errorf("machine: new: the %v plan takes %d inputs, its node has %d operands (internal error)", dt, pr.kp.Inputs(), len(pr.ins))
	}
	at := map[int]bool{}
	for i := range pr.outs {
		if at[pr.outs[i].off] && !isReshape(pr.outs[i].node) {
			pr.outs[i].copy = true
		}
		at[pr.outs[i].off] = true
	}
	return pr, nil
}

// isReshape reports whether n is a Gorgonia reshape, whose value shares its operand's
// elements on the TapeMachine too (reshapeOp.Do returns a shallow clone, reshaped): it
// lies at the same elements as its operand without a copy (the zoo ResNet copied 23 MB of
// im2col reshapes a step, 1.5 ms of 27).
func isReshape(n *gorgonia.Node) bool {
	op := n.Op()
	if op == nil {
		return false
	}
	t := reflect.TypeOf(op)
	return t.Name() == "reshapeOp" && t.PkgPath() == "gorgonia.org/gorgonia"
}

// scratchInput makes the scratch graph's input node standing for parameter p.
func scratchInput(sg *gorgonia.ExprGraph, p *core.Var) (*gorgonia.Node, error) {
	t := p.Type()
	dt, ok := tensorDtype(t.Dtype)
	if !ok {
		return nil, errors.Errorf("machine: new: parameter %s has dtype %v", p.Name, t.Dtype)
	}
	if len(t.Shape) == 0 {
		return gorgonia.NewScalar(sg, dt, gorgonia.WithName(p.Name)), nil
	}
	return gorgonia.NewTensor(sg, dt, len(t.Shape), gorgonia.WithShape([]int(t.Shape)...), gorgonia.WithName(p.Name)), nil
}

func tensorDtype(d core.Dtype) (tensor.Dtype, bool) {
	switch d {
	case core.Float64:
		return tensor.Float64, true
	case core.Float32:
		return tensor.Float32, true
	case core.Int64:
		return tensor.Int64, true
	case core.Bool:
		return tensor.Bool, true
	}
	return tensor.Dtype{}, false
}

// unsupported is New's error for a node the machine cannot run.
func unsupported(n *gorgonia.Node, why string) error {
	return errors.Errorf("machine: new: node %q (ID %d) with op %v (%T) cannot run on bulkad's kernels: %s; use gorgonia.NewTapeMachine for this graph", n.Name(), n.ID(), n.Op(), n.Op(), why)
}

// isConstant reports whether op is one of Gorgonia's constant ops (the node holds its value).
func isConstant(op gorgonia.Op) bool {
	_, ok := op.(interface{ Value() gorgonia.Value })
	return ok
}

// isPlanned reports whether op is a coarse raise's plan op (its value is a packed vector).
func isPlanned(op gorgonia.Op) bool {
	_, ok := op.(adapter.Planned)
	return ok
}

// isAux reports whether op is one of raise's keepAlive or guard ops, which only matter to
// the TapeMachine (a guard still checks its node when run).
func isAux(op gorgonia.Op) bool {
	switch fmt.Sprintf("%T", op) {
	case "*raise.keepAlive", "raise.guardOp":
		return true
	}
	return false
}

// isStatement reports whether n is one of Gorgonia's statement nodes (Read, Set, …).
func isStatement(n *gorgonia.Node) bool {
	f := reflect.ValueOf(n).Elem().FieldByName("isStmt")
	return n.Type() == nil || (f.IsValid() && f.Kind() == reflect.Bool && f.Bool())
}

// childrenOf records the operands of the nodes, read from each node's unexported children
// field (g.From can be stale after Gorgonia's stabilising rewrites remove a node; see the
// adapter), each pointer matched against the graph's nodes.
func (m *Machine) childrenOf(nodes []*gorgonia.Node) error {
	byPtr := map[uintptr]*gorgonia.Node{}
	for _, n := range m.g.AllNodes() {
		byPtr[reflect.ValueOf(n).Pointer()] = n
	}
	for _, n := range nodes {
		f := reflect.ValueOf(n).Elem().FieldByName("children")
		if !f.IsValid() || f.Kind() != reflect.Slice {
			return errors.Errorf("machine: new: node %q (ID %d): cannot read its operands", n.Name(), n.ID())
		}
		cs := make([]*gorgonia.Node, f.Len())
		for i := range cs {
			c, ok := byPtr[f.Index(i).Pointer()]
			if !ok {
				return errors.Errorf("machine: new: node %q (ID %d): operand %d is not a node of the graph", n.Name(), n.ID(), i)
			}
			cs[i] = c
		}
		m.kids[n] = cs
	}
	return nil
}

// from lists n's operands in the scratch graph (no node is ever removed from it, so g.From
// is exact there).
func from(g *gorgonia.ExprGraph, n *gorgonia.Node) []*gorgonia.Node {
	var out []*gorgonia.Node
	it := g.From(n.ID())
	for it.Next() {
		if k, ok := it.Node().(*gorgonia.Node); ok {
			out = append(out, k)
		}
	}
	return out
}
