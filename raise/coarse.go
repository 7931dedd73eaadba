package raise

import (
	"fmt"
	"hash/fnv"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/bulkad/bulkad/core"
	kern "github.com/bulkad/bulkad/kernel"
	"github.com/chewxy/hm"
	"github.com/pkg/errors"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Coarse raising (Options.Coarse).
//
// The planner is the same as for raising per operation: each term becomes a kernel of
// package kernel with its fusions (strided operands, transpose flags of the GEMM, the
// max-pool's argmax view and lookup scatter, the scatter-matmul of a filter gradient, …),
// except that nothing becomes a Gorgonia op: Gorgonia's own element-wise ops, sums and
// transposes are replaced by bulkad's kernels, reshapes by aliases and constants by constant
// slots. buildCoarse then puts the planned kernels, in order, into one kernel.Plan and adds
// to the graph:
//
//   - one plan node (planOp), whose operands are the existing nodes the program reads and
//     whose value is a packed vector: the selected results, then (Options.Tape) the
//     top-level lets the plan computes, at fixed offsets;
//   - one node per result (partOp), which copies its range of the packed vector into a new
//     value at every run, so that a gradient value a user keeps is not changed by the next
//     run, and which Grad registers with SetDerivOf.
//
// The plan node carries the program it computes (Program, with the operand and offset each
// parameter reads and the offsets of the packed results and lets), so the adapter reads it
// back: a graph holding coarse nodes can be differentiated again. A later program binds lets
// to ranges of a taped plan node (Options.Slots) and reads them in place: the gradient of an
// imported model reads the forward pass's activations from the forward plan node.

// coarse decides whether p is raised coarsely: asked for, with results of one dtype and
// distinct top-level binders (the plan's packed lets are named by them).
func (opt Options) coarse(p *core.Program) (bool, error) {
	if !opt.Coarse {
		if len(opt.Slots) > 0 {
			return false, errors.New("raise: options: Slots are read by coarse raising only (set Options.Coarse)")
		}
		return false, nil
	}
	if p == nil || p.Body == nil {
		return false, nil // newPlan reports it
	}
	chain, body := core.LetChain(p.Body)
	results := core.Results(body)
	why := ""
	seen := map[string]bool{}
	for _, v := range p.Params {
		seen[v.Name] = true
	}
	for _, l := range chain {
		if seen[l.Var.Name] {
			why = fmt.Sprintf("the name %s is bound twice", l.Var.Name)
		}
		seen[l.Var.Name] = true
	}
	sel := opt.Components
	if sel == nil {
		for i := range results {
			sel = append(sel, i)
		}
	}
	var dt core.Dtype
	for k, c := range sel {
		if c < 0 || c >= len(results) {
			return false, nil // program() reports it
		}
		if d := results[c].Type().Dtype; k == 0 {
			dt = d
		} else if d != dt {
			why = fmt.Sprintf("results of dtypes %v and %v", dt, d)
		}
	}
	if why == "" {
		return true, nil
	}
	if len(opt.Slots) > 0 {
		return false, errors.Errorf("raise: options: the program cannot be raised coarsely (%s), and only coarse raising reads Slots", why)
	}
	return false, nil
}

// isBound reports whether a name denotes an existing node's value (bound or a slot).
func (pl *plan) isBound(name string) bool {
	if n, ok := pl.bind[name]; ok && n != nil {
		return true
	}
	return pl.isSlot(name)
}

func (pl *plan) isSlot(name string) bool {
	_, ok := pl.slots[name]
	return ok
}

// slotRef checks the slot bound to name (of type t) and returns its ref.
func (pl *plan) slotRef(name string, t core.Type) (ref, error) {
	s := pl.slots[name]
	if s.Node == nil {
		return ref{}, errors.Errorf("raise: slot %s: nil node", name)
	}
	if s.Node.Graph() != pl.g {
		return ref{}, errors.Errorf("raise: slot %s: node %v belongs to another graph", name, s.Node)
	}
	nt, ok := nodeType(s.Node)
	if !ok || nt.Dtype != t.Dtype || s.Offset < 0 || s.Offset+t.Shape.Size() > nt.Shape.Size() {
		return ref{}, errors.Errorf("raise: slot %s : %v: node %v (%v %v) has no such range at offset %d", name, t, s.Node, s.Node.Dtype(), s.Node.Shape(), s.Offset)
	}
	return ref{node: s.Node, sliced: true, off: s.Offset, typ: t}, nil
}

// aliasStep plans t (a reshape of x) as x's elements under t's type.
func (pl *plan) aliasStep(t, x core.Term) (ref, error) {
	r, err := pl.term(x)
	if err != nil {
		return ref{}, err
	}
	a := pl.add(t, []ref{r}, nil)
	pl.steps[a.step].alias = true
	return a, nil
}

// constElems returns a constant's elements (litValue's or iota's value) as a flat slice.
func constElems(t core.Type, val any) any {
	switch v := val.(type) {
	case float64:
		return []float64{v}
	case float32:
		return []float32{v}
	case int64:
		return []int64{v}
	case bool:
		return []bool{v}
	case *tensor.Dense:
		s, err := flat(v)
		if err == nil {
			return s
		}
	}
	return nil
}

// buildCoarse adds the plan node and one part node per result (see the comment above).
func (pl *plan) buildCoarse(opt Options) (out []*gorgonia.Node, err error) {
	pre := pl.existing()
	defer func() {
		if pl.undo(pre, recover(), &err) {
			out = nil
		}
	}()
	params, prefs := pl.coarseParams()
	dt := pl.results[0].Type().Dtype
	taped, tapedRefs := pl.tapedLets(opt, dt)
	used := pl.usedSteps(pl.outs, tapedRefs)
	kids := pl.coarseOperands(prefs, used)
	kp, offs, err := pl.coarseKernels(kids, used, tapedRefs, dt)
	if err != nil {
		return nil, err
	}
	op, err := pl.coarseOp(coarseParts{params: params, prefs: prefs, taped: taped, kids: kids, kp: kp, offs: offs, dt: dt})
	if err != nil {
		return nil, err
	}
	tm := time.Now()
	pn, err := applyText(pl.g, op, kids.nodes)
	if err != nil {
		return nil, errors.Wrap(err, "raise: coarse plan node")
	}
	if out, err = pl.partNodes(op, pn, opt.Salts); err != nil {
		return nil, err
	}
	pl.inGorgonia += time.Since(tm)
	if err := protectViews(pl.g, out); err != nil {
		return nil, err
	}
	return out, nil
}

// operandSet numbers the existing nodes a plan node reads, in the order they are added.
type operandSet struct {
	nodes []*gorgonia.Node
	index map[*gorgonia.Node]int
}

// add returns n's operand number, numbering it if it is new.
func (s *operandSet) add(n *gorgonia.Node) int {
	k, ok := s.index[n]
	if !ok {
		k = len(s.nodes)
		s.index[n] = k
		s.nodes = append(s.nodes, n)
	}
	return k
}

// coarseParams returns the program's parameters: the bound names the planned lets and
// results read, with the refs of their existing nodes.
func (pl *plan) coarseParams() (params []*core.Var, prefs []ref) {
	for _, name := range sortedNames(pl.live) {
		r, ok := pl.env[name]
		if !ok || r.node == nil {
			continue
		}
		v := pl.paramVar(name)
		if v == nil {
			continue
		}
		params = append(params, v)
		prefs = append(prefs, r)
	}
	return params, prefs
}

// tapedLets returns the top-level lets of dtype dt the plan computes and packs into its
// value (Options.Tape), with the refs of their steps.
func (pl *plan) tapedLets(opt Options, dt core.Dtype) (taped []*core.Let, refs []ref) {
	if !opt.Tape || !pl.lazyOK {
		return nil, nil
	}
	for i, l := range pl.chain {
		if !pl.needed[i] || pl.isBound(l.Var.Name) || l.Var.Type().Dtype != dt {
			continue
		}
		if r, ok := pl.env[l.Var.Name]; ok && r.node == nil {
			taped = append(taped, l)
			refs = append(refs, r)
		}
	}
	return taped, refs
}

// usedSteps marks the steps the roots reach through their operands.
func (pl *plan) usedSteps(roots ...[]ref) []bool {
	used := make([]bool, len(pl.steps))
	var stack []int
	mark := func(r ref) {
		if r.node == nil && !used[r.step] {
			used[r.step] = true
			stack = append(stack, r.step)
		}
	}
	for _, rs := range roots {
		for _, r := range rs {
			mark(r)
		}
	}
	for len(stack) > 0 {
		i := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for _, r := range pl.steps[i].ins {
			mark(r)
		}
	}
	return used
}

// coarseOperands returns the existing nodes the plan node reads, in a fixed order:
// parameters first, then the operands of the used steps, then results that are nodes.
func (pl *plan) coarseOperands(prefs []ref, used []bool) *operandSet {
	kids := &operandSet{index: map[*gorgonia.Node]int{}}
	for _, r := range prefs {
		kids.add(r.node)
	}
	for i, s := range pl.steps {
		if used[i] {
			for _, r := range s.ins {
				if r.node != nil {
					kids.add(r.node)
				}
			}
		}
	}
	for _, r := range pl.outs {
		if r.node != nil {
			kids.add(r.node)
		}
	}
	if len(kids.nodes) == 0 {
		// Gorgonia finds a node's graph through its operands: a program that reads no node
		// (a constant gradient) reads a constant it ignores.
		kids.add(pl.g.AddNode(gorgonia.NewConstant(0.0, gorgonia.WithName("bulkad: plan anchor"), gorgonia.In(pl.g))))
	}
	return kids
}

// coarseKernels puts the used steps, in order, into one kernel.Plan whose value packs the
// results and then the taped lets; offs are their offsets in it.
func (pl *plan) coarseKernels(kids *operandSet, used []bool, tapedRefs []ref, dt core.Dtype) (*kern.Plan, []int, error) {
	b := kern.NewPlanBuilder(len(kids.nodes))
	type inKey struct {
		kid, off int
		typ      string
	}
	inSlots := map[inKey]kern.Slot{}
	stepSlot := make([]kern.Slot, len(pl.steps))
	slotOf := func(r ref) kern.Slot {
		if r.node == nil {
			return stepSlot[r.step]
		}
		t, off := r.typ, r.off
		if !r.sliced {
			t, _ = nodeType(r.node)
		}
		k := inKey{kids.index[r.node], off, t.String()}
		s, ok := inSlots[k]
		if !ok {
			s = b.Input(k.kid, off, t)
			inSlots[k] = s
		}
		return s
	}
	for i, s := range pl.steps {
		if !used[i] {
			continue
		}
		ins := make([]kern.Slot, len(s.ins))
		for j, r := range s.ins {
			ins[j] = slotOf(r)
		}
		switch {
		case s.lit != nil:
			stepSlot[i] = b.Const(s.lit, s.typ)
		case s.alias:
			stepSlot[i] = b.Alias(ins[0], s.typ)
		case s.op != nil:
			stepSlot[i] = b.Step(s.op.k, s.term, s.typ, ins...)
		default:
			return nil, nil, termErr(s.term, "coarse raising planned a step without a kernel (internal error)")
		}
	}
	layout := make([]kern.Slot, 0, len(pl.outs)+len(tapedRefs))
	for _, r := range pl.outs {
		layout = append(layout, slotOf(r))
	}
	for _, r := range tapedRefs {
		layout = append(layout, slotOf(r))
	}
	kp, offs, err := b.Build(dt, layout)
	if err != nil {
		return nil, nil, errors.Wrap(err, "raise: coarse plan")
	}
	return kp, offs, nil
}

// coarseParts is what coarseOp needs of the plan being built.
type coarseParts struct {
	params []*core.Var
	prefs  []ref
	taped  []*core.Let
	kids   *operandSet
	kp     *kern.Plan
	offs   []int
	dt     core.Dtype
}

// coarseOp returns the plan node's op: the program it computes (the needed, unbound lets
// around the results), the operand and offset of each parameter, and its texts.
func (pl *plan) coarseOp(c coarseParts) (*planOp, error) {
	var body core.Term
	body, err := core.NewTuple(pl.results)
	if err != nil {
		return nil, errors.Wrap(err, "raise: coarse plan: results")
	}
	for i := len(pl.chain) - 1; i >= 0; i-- {
		l := pl.chain[i]
		if !pl.needed[i] || pl.isBound(l.Var.Name) {
			continue
		}
		if body, err = core.NewLet(l.Var, l.Bound, body); err != nil {
			return nil, errors.Wrap(err, "raise: coarse plan: let")
		}
	}
	op := &planOp{
		prog:    &core.Program{Params: c.params, Body: body},
		results: c.offs[:len(pl.outs)],
		lets:    map[string]int{},
		kp:      c.kp,
		out:     core.Type{Shape: core.Shape{max(c.kp.OutLen(), 1)}, Dtype: c.dt},
	}
	for _, r := range c.prefs {
		op.operand = append(op.operand, c.kids.index[r.node])
		op.offset = append(op.offset, r.off)
	}
	for i, l := range c.taped {
		op.lets[l.Var.Name] = c.offs[len(pl.outs)+i]
	}
	op.viewResults(pl.results, c.taped)
	var sb strings.Builder
	fmt.Fprintf(&sb, "plan %s", op.prog)
	for i := range op.operand {
		fmt.Fprintf(&sb, " %d@%d", op.operand[i], op.offset[i])
	}
	fmt.Fprintf(&sb, " -> %v %v", op.results, op.letsText())
	if pl.vk != nil {
		sb.WriteString(" #vulkan")
	}
	op.text = sb.String()
	h := fnv.New64a()
	h.Write([]byte(op.text))
	op.short = fmt.Sprintf("bulkad plan(%d kernels, %d results, %d packed lets, #%x)", c.kp.Steps(), len(pl.outs), len(c.taped), h.Sum64())
	for _, k := range c.kids.nodes {
		op.kidT = append(op.kidT, k.Type())
	}
	return op, nil
}

// partNodes adds one part node per result, reading its range of the plan node pn.
func (pl *plan) partNodes(op *planOp, pn *gorgonia.Node, salts []string) ([]*gorgonia.Node, error) {
	out := make([]*gorgonia.Node, len(pl.outs))
	for i := range pl.outs {
		t := pl.results[i].Type()
		salt := fmt.Sprint(i)
		if i < len(salts) {
			salt = salts[i]
		}
		part := &partOp{off: op.results[i], typ: t, in: pn.Type(), salt: salt, view: op.views[i]}
		part.text = fmt.Sprintf("part [%d:%d] %v of %s #%s", part.off, part.off+t.Shape.Size(), t, op.short, salt)
		if part.view {
			part.text += " view"
		}
		var err error
		if out[i], err = applyText(pl.g, part, []*gorgonia.Node{pn}); err != nil {
			return nil, errors.Wrapf(err, "raise: result %d", i)
		}
	}
	return out, nil
}

// paramVar returns the variable a bound name has in the program (a parameter or a
// top-level let), or nil.
func (pl *plan) paramVar(name string) *core.Var {
	for _, l := range pl.chain {
		if l.Var.Name == name {
			return l.Var
		}
	}
	return pl.paramVars[name]
}

func sortedNames(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// textOp is a raised op identified by its full text (hashed), with a salted copy for hash
// collisions.
type textOp interface {
	gorgonia.Op
	fullText() string
	withSalt(salt string) textOp
}

// applyText applies op to kids and checks that Gorgonia's deduplication did not answer with
// an unrelated node (see applyChecked).
func applyText(g *gorgonia.ExprGraph, op textOp, kids []*gorgonia.Node) (*gorgonia.Node, error) {
	for salt := 0; salt < 8; salt++ {
		o := op
		if salt > 0 {
			o = op.withSalt(fmt.Sprintf("salt %d", salt))
		}
		n, err := gorgonia.ApplyOp(o, kids...)
		if err != nil {
			return nil, err
		}
		if t, ok := n.Op().(textOp); ok && t.fullText() == o.fullText() && sameChildren(g, n, kids) {
			return n, nil
		}
	}
	return nil, errors.New("raise: Gorgonia keeps returning an unrelated node (hash collisions)")
}

// planOp runs a whole raised program (a kernel.Plan) and returns its packed value.
type planOp struct {
	pure           // text: the program, its operands and its packed layout
	short   string // String
	prog    *core.Program
	operand []int // per program parameter: the operand it reads
	offset  []int // … and the element offset there
	results []int // the packed offsets of the results
	lets    map[string]int
	kp      *kern.Plan
	kidT    []hm.Type
	out     core.Type

	// views: per result, its part node's value is a view of the packed value instead of a
	// copy (viewResults); fresh: the packed value is allocated at every run, not reused
	views []bool
	fresh bool

	mu        sync.Mutex
	cache     gorgonia.Value
	cacheFlat any
}

var _ gorgonia.Op = (*planOp)(nil)

func (o *planOp) fullText() string { return o.text }

func (o *planOp) withSalt(salt string) textOp {
	c := &planOp{pure: pure{text: o.text + " #" + salt}, short: o.short + " #" + salt, prog: o.prog, operand: o.operand,
		offset: o.offset, results: o.results, lets: o.lets, kp: o.kp, kidT: o.kidT, out: o.out, views: o.views, fresh: o.fresh}
	return c
}

func (o *planOp) letsText() string {
	names := make([]string, 0, len(o.lets))
	for k := range o.lets {
		names = append(names, k)
	}
	sort.Strings(names)
	var sb strings.Builder
	for _, k := range names {
		fmt.Fprintf(&sb, " %s@%d", k, o.lets[k])
	}
	return sb.String()
}

// Program is the program the node computes: fn (params) => let … in (r_1, …, r_k). Parameter
// i reads operand ParamOperands()[i] from element ParamOffsets()[i] on.
func (o *planOp) Program() *core.Program { return o.prog }

// ParamOperands gives, per parameter of Program, the index of the operand it reads.
func (o *planOp) ParamOperands() []int { return append([]int(nil), o.operand...) }

// ParamOffsets gives, per parameter of Program, the element offset it reads in its operand
// (0 unless the operand is the packed value of another plan node).
func (o *planOp) ParamOffsets() []int { return append([]int(nil), o.offset...) }

// ResultOffsets gives the offset of each result in the packed value.
func (o *planOp) ResultOffsets() []int { return append([]int(nil), o.results...) }

// PackedLets maps the top-level lets of Program kept in the packed value to their offsets.
func (o *planOp) PackedLets() map[string]int {
	m := make(map[string]int, len(o.lets))
	for k, v := range o.lets {
		m[k] = v
	}
	return m
}

// Plan is the kernel plan the node runs.
func (o *planOp) Plan() *kern.Plan { return o.kp }

// Arity is the number of operands.
func (o *planOp) Arity() int { return len(o.kidT) }

// Type is operands → the packed vector.
func (o *planOp) Type() hm.Type {
	ts := append(append([]hm.Type{}, o.kidT...), hmType(o.out))
	if len(ts) == 1 {
		return ts[0]
	}
	return hm.NewFnType(ts...)
}

// InferShape is the packed vector's shape.
func (o *planOp) InferShape(...gorgonia.DimSizer) (tensor.Shape, error) {
	return tensorShape(o.out.Shape), nil
}

// viewResults decides which part nodes view their range of the packed value instead of
// copying it, and whether the packed value is then allocated at every run. A gradient plan's
// packed value is its results (a resnet18's 11.7M parameters' gradients): copying each out
// of a reused packed value into a new value was a read and a write of all of them per step
// on top of the allocation. A part may be a view when no other result and no packed let
// (which later plans read) lies in its range, so that an op the TapeMachine runs in place
// on the part's value changes nothing else; and the packed value is then fresh at every
// run, so that a value kept from one run is not changed by the next. Plans whose views
// would cover less than half the packed value keep reusing it and copying (allocating it
// per run would cost more than the copies save).
func (o *planOp) viewResults(results []core.Term, taped []*core.Let) {
	type span struct{ lo, hi int }
	var taken []span
	for _, l := range taped {
		off := o.lets[l.Var.Name]
		taken = append(taken, span{off, off + max(l.Var.Type().Shape.Size(), 1)})
	}
	spans := make([]span, len(results))
	for i, r := range results {
		spans[i] = span{o.results[i], o.results[i] + max(r.Type().Shape.Size(), 1)}
	}
	o.views = make([]bool, len(results))
	viewed := 0
	for i, a := range spans {
		ok := len(results[i].Type().Shape) > 0
		for j, b := range spans {
			if j != i && a.lo < b.hi && b.lo < a.hi {
				ok = false
			}
		}
		for _, b := range taken {
			if a.lo < b.hi && b.lo < a.hi {
				ok = false
			}
		}
		if ok {
			o.views[i] = true
			viewed += a.hi - a.lo
		}
	}
	o.fresh = viewed > 0 && 2*viewed >= o.kp.OutLen()
	if !o.fresh {
		clear(o.views)
	}
}

// Do runs the plan into the node's packed value: allocated at every run when its part nodes
// view their results (fresh, see viewResults), else allocated at the first run and reused,
// the part nodes copying the results out of it; later programs read its lets within the run.
func (o *planOp) Do(vs ...gorgonia.Value) (gorgonia.Value, error) {
	ins, err := flatAll(vs, len(o.kidT), o.short, "operand")
	if err != nil {
		return nil, err
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.fresh || o.cache == nil || aliases(o.cacheFlat, ins) {
		o.cache, o.cacheFlat = newValue(o.out)
	}
	out := o.cacheFlat
	if o.kp.OutLen() == 0 {
		out = subLen(out, 0)
	}
	if err := o.kp.Run(out, ins); err != nil {
		o.cache, o.cacheFlat = nil, nil
		return nil, errors.Wrap(err, "raise: "+o.short)
	}
	return o.cache, nil
}

// String names the plan briefly (its full text is hashed).
func (o *planOp) String() string { return o.short }

// partOp copies a typed range of its operand (a plan node's packed value) into a new value
// at every run, or returns a view of the range when the plan allocates its packed value at
// every run (planOp.viewResults).
type partOp struct {
	pure // text: the range, the plan it reads and a salt
	off  int
	typ  core.Type
	in   hm.Type
	salt string // Options.Salts[i] of its result i (or i)
	view bool   // the value is a view of the range (planOp.viewResults), not a copy
}

// IsRaised reports whether op is one of the ops package raise adds to a graph (per-operation
// custom ops, plan and result nodes, keepAlive nodes).
func IsRaised(op gorgonia.Op) bool {
	switch op.(type) {
	case *Op, *planOp, *partOp, *keepAlive:
		return true
	}
	return false
}

// PartSalt reports whether op is the op of a result node of a coarse raise, and the salt it
// was raised with (Options.Salts): a caller finds the results it raised before by their salts.
func PartSalt(op gorgonia.Op) (string, bool) {
	p, ok := op.(*partOp)
	if !ok {
		return "", false
	}
	return p.salt, true
}

var _ gorgonia.Op = (*partOp)(nil)

func (o *partOp) fullText() string { return o.text }

func (o *partOp) withSalt(salt string) textOp {
	return &partOp{pure: pure{text: o.text + " #" + salt}, off: o.off, typ: o.typ, in: o.in, salt: o.salt, view: o.view}
}

// Part returns the first element and the type of the range the op copies.
func (o *partOp) Part() (int, core.Type) { return o.off, o.typ }

// Arity is 1.
func (o *partOp) Arity() int { return 1 }

// Type is the packed vector → the part.
func (o *partOp) Type() hm.Type { return hm.NewFnType(o.in, hmType(o.typ)) }

// InferShape is the part's shape.
func (o *partOp) InferShape(...gorgonia.DimSizer) (tensor.Shape, error) {
	return tensorShape(o.typ.Shape), nil
}

// Do copies the range into a new value (or views it).
func (o *partOp) Do(vs ...gorgonia.Value) (gorgonia.Value, error) {
	if len(vs) != 1 {
		return nil, errors.Errorf("raise: part: %d operands, want 1", len(vs))
	}
	src, err := flat(vs[0])
	if err != nil {
		return nil, errors.Wrap(err, "raise: part")
	}
	n := o.typ.Shape.Size()
	if kern.SliceLen(src) < o.off+n {
		return nil, errors.Errorf("raise: part: operand has %d elements, the part is [%d:%d]", kern.SliceLen(src), o.off, o.off+n)
	}
	if o.view && len(o.typ.Shape) > 0 {
		if v, ok := viewValue(o.typ, src, o.off); ok {
			return v, nil
		}
	}
	v, dst := newValue(o.typ)
	if !copyFrom(dst, src, o.off) {
		return nil, errors.Errorf("raise: part: operand of %v, the part is %v", vs[0].Dtype(), o.typ)
	}
	return v, nil
}

// String prints the range.
func (o *partOp) String() string {
	return fmt.Sprintf("part[%d:%d]", o.off, o.off+o.typ.Shape.Size())
}
