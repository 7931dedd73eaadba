package adapter

import (
	"fmt"
	"reflect"
	"sort"
	"strings"

	"github.com/bulkad/bulkad/core"
	"github.com/bulkad/bulkad/core/tensors"
	"github.com/pkg/errors"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Translation is a Gorgonia graph translated into a core program.
type Translation struct {
	// Program's params are the graph inputs the cost depends on, the wrt nodes and the
	// untranslated nodes; its body is one let per translated node, with the cost's variable
	// as the result.
	Program *core.Program
	// Params maps each parameter name to the node whose value it is bound to.
	Params map[string]*gorgonia.Node
	// Lets maps each let variable to the Gorgonia node whose value it denotes (same shape and
	// dtype).
	Lets map[string]*gorgonia.Node
	// Wrt holds, in the order given to Translate, the parameter names whose gradients are the
	// gradients with respect to the wrt nodes: a wrt node's own parameter, or for an interior
	// wrt node that other wrt nodes lie behind, its perturbation parameter (see Zero).
	Wrt []string
	// Zero maps perturbation parameters to their interior wrt nodes. Such a node h is not cut
	// from the graph: its let is its own translation plus the parameter δ_h, which must be
	// bound to zeros (ad.Options.AtZero does it in an artifact). The gradient with respect to
	// δ_h at zero is h's adjoint, and every other gradient stays the full derivative (PyTorch's
	// retain_grad). Zero parameters are not in Params: no node holds their value.
	Zero map[string]*gorgonia.Node
	// Mutable maps the translated nodes whose op gorgonia.UnsafeLet can change in place
	// (slices between a wrt node and the cost) to the op's text at translation: the
	// translation is their meaning only while the text stays the same.
	Mutable map[*gorgonia.Node]string
	// Slots maps lets whose values lie in the packed value of a plan node (a coarse raise's
	// node, see Planned) to that node and their offset there: like Lets, their values exist
	// after a run, so a gradient reads them instead of recomputing them.
	Slots map[string]Slot
}

// ZeroNames returns the names of the Zero parameters, sorted.
func (t *Translation) ZeroNames() []string {
	names := make([]string, 0, len(t.Zero))
	for k := range t.Zero {
		names = append(names, k)
	}
	sort.Strings(names)
	return names
}

// String prints the program followed by the parameter and let bindings.
func (t *Translation) String() string {
	var sb strings.Builder
	sb.WriteString(t.Program.String())
	sb.WriteString("\n-- params:")
	for _, p := range t.Program.Params {
		n := t.Params[p.Name]
		if n == nil {
			if z := t.Zero[p.Name]; z != nil {
				fmt.Fprintf(&sb, "\n--   %s = zeros (perturbs node %d %q)", p.Name, z.ID(), z.Name())
			}
			continue
		}
		fmt.Fprintf(&sb, "\n--   %s = node %d %q", p.Name, n.ID(), n.Name())
	}
	names := make([]string, 0, len(t.Lets))
	for k := range t.Lets {
		names = append(names, k)
	}
	sort.Strings(names)
	sb.WriteString("\n-- lets:")
	for _, k := range names {
		n := t.Lets[k]
		fmt.Fprintf(&sb, "\n--   %s = node %d %q", k, n.ID(), n.Name())
	}
	sb.WriteString("\n-- wrt: " + strings.Join(t.Wrt, ", "))
	return sb.String()
}

// translator holds the state of one translation (no package-level state).
type translator struct {
	g       *gorgonia.ExprGraph
	terms   map[int64]core.Term // node ID → the term denoting its value (a Var)
	params  []*core.Var
	pnames  map[string]*gorgonia.Node
	lets    []*core.Var
	bounds  []core.Term
	letNode map[string]*gorgonia.Node
	used    map[string]bool
	delta   map[int64]*core.Var        // interior wrt nodes kept in the graph → their perturbation
	byPtr   map[uintptr]*gorgonia.Node // the graph's nodes by address (see children)
	mutable map[*gorgonia.Node]string  // see Translation.Mutable
	slots   map[string]Slot            // see Translation.Slots
	packed  map[packKey]core.Term      // ranges of plan nodes' packed values (see Planned)
}

// Translate translates the graph of cost (a scalar node) into a core program whose parameters
// include the wrt nodes. See the package documentation for the rules.
func Translate(cost *gorgonia.Node, wrt ...*gorgonia.Node) (*Translation, error) {
	return translateGraph(cost, wrt, true)
}

// TranslateAll translates the graph of several root nodes at once (for a machine that runs a
// whole graph): the program's body is the tuple of the roots' terms, in the order given, and
// every node a root reads that depends on a wrt node is translated once, shared by the roots
// that read it. Roots may have any shape and may themselves be wrt nodes or depend on no wrt
// node (their tuple element is then their parameter). The rules are Translate's.
func TranslateAll(roots []*gorgonia.Node, wrt ...*gorgonia.Node) (*Translation, error) {
	if len(roots) == 0 {
		return nil, errors.New("adapter: translate all: no root nodes")
	}
	return translateRoots(roots, wrt, false, true)
}

// translateGraph is Translate; with scalarCost false it accepts any result node (tests use it
// to check single operations).
func translateGraph(cost *gorgonia.Node, wrt []*gorgonia.Node, scalarCost bool) (tr *Translation, err error) {
	return translateRoots([]*gorgonia.Node{cost}, wrt, scalarCost, false)
}

// translateRoots translates the graph of roots; with tuple the body is the tuple of the roots'
// terms, otherwise the one root's term.
func translateRoots(roots []*gorgonia.Node, wrt []*gorgonia.Node, scalarCost, tuple bool) (tr *Translation, err error) {
	defer func() {
		if r := recover(); r != nil {
			tr, err = nil, errors.Errorf("adapter: translate: panic during translation (inside Gorgonia or an op table entry): %v", r)
		}
	}()
	var g *gorgonia.ExprGraph
	for i, cost := range roots {
		if cost == nil {
			return nil, errors.Errorf("adapter: translate: cost node (root %d) is nil", i)
		}
		cg := cost.Graph()
		if cg == nil {
			return nil, errors.Errorf("adapter: translate: cost node %q (ID %d) belongs to no graph", cost.Name(), cost.ID())
		}
		if g == nil {
			g = cg
		}
		if cg != g || !g.Has(cost.ID()) || g.Node(cost.ID()).(*gorgonia.Node) != cost {
			return nil, errors.Errorf("adapter: translate: root node %q (ID %d) is not in the first root's graph", cost.Name(), cost.ID())
		}
		if scalarCost && (!cost.IsScalar() || cost.Shape().Dims() != 0) {
			return nil, errors.Errorf("adapter: translate: cost node %q (ID %d) has shape %v, want a scalar", cost.Name(), cost.ID(), cost.Shape())
		}
	}
	isWrt := map[int64]bool{}
	for i, w := range wrt {
		if w == nil {
			return nil, errors.Errorf("adapter: translate: wrt node %d is nil", i)
		}
		if w.Graph() != g || !g.Has(w.ID()) || g.Node(w.ID()).(*gorgonia.Node) != w {
			return nil, errors.Errorf("adapter: translate: wrt node %q (ID %d) is not in the cost's graph", w.Name(), w.ID())
		}
		isWrt[w.ID()] = true
	}
	t := &translator{
		g: g, terms: map[int64]core.Term{}, pnames: map[string]*gorgonia.Node{},
		letNode: map[string]*gorgonia.Node{}, used: map[string]bool{}, delta: map[int64]*core.Var{},
		mutable: map[*gorgonia.Node]string{}, slots: map[string]Slot{}, packed: map[packKey]core.Term{},
	}
	order, deps, err := t.postOrder(roots, isWrt)
	if err != nil {
		return nil, err
	}
	visited := make(map[int64]bool, len(order))
	for _, n := range order {
		visited[n.ID()] = true
	}
	// An interior wrt node that another wrt node lies behind is kept in the graph and
	// perturbed by a zero parameter; any other wrt node is a parameter (for one with nothing
	// to differentiate behind it, cutting the graph there gives the same adjoint).
	zero := map[string]*gorgonia.Node{}
	wrtNames := make([]string, len(wrt))
	for i, w := range wrt {
		if v, ok := t.delta[w.ID()]; ok {
			wrtNames[i] = v.Name
			continue
		}
		behind := false
		if visited[w.ID()] && w.Op() != nil {
			kids, err := t.children(w)
			if err != nil {
				return nil, err
			}
			for _, k := range kids {
				behind = behind || deps[k.ID()]
			}
		}
		if !behind {
			v, err := t.param(w)
			if err != nil {
				return nil, err
			}
			wrtNames[i] = v.Name
			continue
		}
		v, err := t.newZero(w)
		if err != nil {
			return nil, err
		}
		t.delta[w.ID()] = v
		zero[v.Name] = w
		wrtNames[i] = v.Name
	}
	for _, n := range order {
		if _, done := t.terms[n.ID()]; done || !deps[n.ID()] {
			continue // a wrt parameter, or a node no wrt node reaches (a parameter if read)
		}
		if err := t.translate(n); err != nil {
			return nil, err
		}
	}
	elems := make([]core.Term, len(roots))
	for i, cost := range roots {
		if _, done := t.terms[cost.ID()]; !done {
			if _, err := t.param(cost); err != nil { // the cost depends on no wrt node
				return nil, err
			}
		}
		elems[i] = t.terms[cost.ID()]
	}
	if err := t.checkScopes(); err != nil {
		return nil, err
	}
	body := elems[0]
	if tuple {
		tu, err := core.NewTuple(elems)
		if err != nil {
			return nil, errors.Wrap(err, "adapter: translate all: result tuple")
		}
		body = tu
	}
	for i := len(t.lets) - 1; i >= 0; i-- {
		l, err := core.NewLet(t.lets[i], t.bounds[i], body)
		if err != nil {
			return nil, errors.Wrapf(err, "adapter: translate: let %s", t.lets[i].Name)
		}
		body = l
	}
	// Every term was built by the type-checking constructors and checkScopes verified the
	// scoping let by let, so the program is closed and well typed. core.NewProgram would check
	// it again, but its free-variable analysis is quadratic on long let chains (a 1000-layer
	// MLP takes about a minute), so the program is assembled directly.
	p := &core.Program{Params: t.params, Body: body}
	return &Translation{Program: p, Params: t.pnames, Lets: t.letNode, Wrt: wrtNames, Zero: zero, Mutable: t.mutable, Slots: t.slots}, nil
}

// checkScopes verifies, in time linear in the size of the let-bound terms, that every free
// variable of each let's bound term is a parameter or an earlier let, of the same type.
func (t *translator) checkScopes() error {
	scope := make(map[string]core.Type, len(t.params)+len(t.lets))
	for _, p := range t.params {
		scope[p.Name] = p.Type()
	}
	for i, v := range t.lets {
		for _, fv := range core.FreeVars(t.bounds[i]) {
			ty, ok := scope[fv.Name]
			if !ok || !ty.Equal(fv.Type()) {
				return errors.Errorf("adapter: translate: let %s uses %s : %v, which is not in scope with that type (internal error)", v.Name, fv.Name, fv.Type())
			}
		}
		scope[v.Name] = v.Type()
	}
	return nil
}

// children returns a node's operands in order (duplicates kept), read from the node itself.
//
// g.From(id) is not used: Gorgonia caches node positions by ID, and a node removed from the
// graph (its stabilising rewrites remove the node they replace, e.g. 1 − x under log in
// BinaryXent) shifts the positions of the later nodes, so g.From returns another node's
// operands. The operands are read from the node's unexported children field by reflection
// (without unsafe: each pointer is matched against the graph's own nodes).
func (t *translator) children(n *gorgonia.Node) ([]*gorgonia.Node, error) {
	f := reflect.ValueOf(n).Elem().FieldByName("children")
	if !f.IsValid() || f.Kind() != reflect.Slice {
		return nil, errors.Errorf("adapter: translate: node %q (ID %d): cannot read its operands (Gorgonia's Node has no children field)", n.Name(), n.ID())
	}
	if f.Len() == 0 {
		return nil, nil
	}
	if t.byPtr == nil {
		all := t.g.AllNodes()
		t.byPtr = make(map[uintptr]*gorgonia.Node, len(all))
		for _, m := range all {
			t.byPtr[reflect.ValueOf(m).Pointer()] = m
		}
	}
	cs := make([]*gorgonia.Node, f.Len())
	for i := range cs {
		c, ok := t.byPtr[f.Index(i).Pointer()]
		if !ok {
			return nil, errors.Errorf("adapter: translate: node %q (ID %d): operand %d is not a node of the graph", n.Name(), n.ID(), i)
		}
		cs[i] = c
	}
	return cs, nil
}

// postOrder lists the nodes the roots read, children first, and marks the ones that depend on
// a wrt node. It is iterative (deep graphs).
func (t *translator) postOrder(roots []*gorgonia.Node, isWrt map[int64]bool) ([]*gorgonia.Node, map[int64]bool, error) {
	type frame struct {
		n    *gorgonia.Node
		kids []*gorgonia.Node
		next int
	}
	deps := map[int64]bool{}
	seen := map[int64]bool{}
	var order []*gorgonia.Node
	var err error
	push := func(n *gorgonia.Node) frame {
		kids, e := t.children(n)
		if e != nil && err == nil {
			err = e
		}
		return frame{n: n, kids: kids}
	}
	var stack []frame
	for r := 0; r < len(roots) || len(stack) > 0; {
		if len(stack) == 0 {
			if root := roots[r]; !seen[root.ID()] {
				seen[root.ID()] = true
				stack = append(stack, push(root))
			}
			r++
			continue
		}
		top := &stack[len(stack)-1]
		if top.next < len(top.kids) {
			c := top.kids[top.next]
			top.next++
			if !seen[c.ID()] {
				seen[c.ID()] = true
				stack = append(stack, push(c))
			}
			continue
		}
		n := top.n
		d := isWrt[n.ID()]
		for _, c := range top.kids {
			d = d || deps[c.ID()]
		}
		deps[n.ID()] = d
		order = append(order, n)
		stack = stack[:len(stack)-1]
	}
	return order, deps, err
}

// coreType converts a node's shape and dtype.
func coreType(n *gorgonia.Node) (core.Type, error) {
	d, err := coreDtype(n.Dtype())
	if err != nil {
		return core.Type{}, errors.Wrapf(err, "adapter: node %q (ID %d)", n.Name(), n.ID())
	}
	sh := core.Shape{}
	if !n.IsScalar() {
		sh = core.Shape(n.Shape().Clone())
	}
	return core.Type{Shape: sh, Dtype: d}, nil
}

func coreDtype(d tensor.Dtype) (core.Dtype, error) {
	if d == tensor.Int {
		// Go's int is 64 bits on every platform Gorgonia supports; a parameter of dtype Int
		// must be given as an int64 tensor.
		return core.Int64, nil
	}
	if dt := tensors.Dtype(d); dt.Valid() {
		return dt, nil
	}
	return core.InvalidDtype, errors.Errorf("dtype %v has no core equivalent (want float64, float32, int64 or bool)", d)
}

// name derives a fresh, valid core identifier from a node: its sanitised name (or the op's
// tag for unnamed op nodes), "_", its ID, and a suffix when needed.
func (t *translator) name(n *gorgonia.Node, tag, suffix string) string {
	base := n.Name()
	if n.Op() != nil && strings.HasPrefix(base, fmt.Sprint(n.Op())+"(") { // fmt survives a panicking String
		base = tag
	}
	var sb strings.Builder
	for _, r := range base {
		if sb.Len() >= 24 {
			break
		}
		switch {
		case r == '_' || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9'):
			sb.WriteRune(r)
		default:
			if s := sb.String(); len(s) > 0 && s[len(s)-1] != '_' {
				sb.WriteByte('_')
			}
		}
	}
	s := strings.TrimRight(sb.String(), "_")
	if s == "" || (s[0] >= '0' && s[0] <= '9') {
		s = "n" + s
	}
	name := fmt.Sprintf("%s_%d%s", s, n.ID(), suffix)
	for k := 2; t.used[name] || !core.ValidName(name); k++ {
		name = fmt.Sprintf("%s_%d%s_%d", s, n.ID(), suffix, k)
	}
	t.used[name] = true
	return name
}

// param binds a new parameter to node n (once per node) and records it as n's term.
func (t *translator) param(n *gorgonia.Node) (*core.Var, error) {
	if v, ok := t.terms[n.ID()].(*core.Var); ok && t.pnames[v.Name] == n {
		return v, nil
	}
	v, err := t.newParam(n, "")
	if err != nil {
		return nil, err
	}
	t.terms[n.ID()] = v
	return v, nil
}

// newParam makes a parameter bound to n's value without making it n's term (used by
// translations that read their own node's value, like dropout).
func (t *translator) newParam(n *gorgonia.Node, suffix string) (*core.Var, error) {
	ty, err := coreType(n)
	if err != nil {
		return nil, err
	}
	v, err := core.NewVar(t.name(n, "input", suffix), ty)
	if err != nil {
		return nil, errors.Wrap(err, "adapter: translate")
	}
	t.params = append(t.params, v)
	t.pnames[v.Name] = n
	return v, nil
}

// newZero makes the perturbation parameter of an interior wrt node kept in the graph (see
// Translation.Zero); it is not bound to a node.
func (t *translator) newZero(n *gorgonia.Node) (*core.Var, error) {
	ty, err := coreType(n)
	if err != nil {
		return nil, err
	}
	if !ty.Dtype.IsFloat() {
		return nil, errors.Errorf("adapter: translate: wrt node %q (ID %d) has dtype %v: only float nodes have gradients", n.Name(), n.ID(), n.Dtype())
	}
	v, err := core.NewVar(t.name(n, "input", "_adj"), ty)
	if err != nil {
		return nil, errors.Wrap(err, "adapter: translate")
	}
	t.params = append(t.params, v)
	return v, nil
}

// translate emits the let of one node whose children are already translated (children that
// depend on no wrt node become parameters here).
func (t *translator) translate(n *gorgonia.Node) error {
	op := n.Op()
	if op == nil {
		_, err := t.param(n)
		return err
	}
	if pop, ok := op.(Planned); ok {
		kids, err := t.children(n)
		if err != nil {
			return err
		}
		return t.translatePlanned(n, pop, kids)
	}
	if part, ok := op.(Part); ok {
		return t.translatePart(n, part)
	}
	e, ok := lookup(op)
	if _, prog := op.(Programmed); prog && !ok {
		e, ok = entry{typ: "Programmed", tag: "raised", arity: variadic, fn: trProgrammed}, true
	}
	if !ok {
		return errors.Errorf("adapter: translate: node %q (ID %d) with op %s (Go type %T) is on a path from a wrt node to the cost but has no translation (adapter.SupportedOps() lists the %d supported ops)",
			n.Name(), n.ID(), op, op, len(opTable))
	}
	kids, err := t.children(n)
	if err != nil {
		return err
	}
	args := make([]core.Term, len(kids))
	for i, k := range kids {
		args[i] = t.terms[k.ID()]
		if args[i] == nil && k.ID() != n.ID() {
			if _, err := t.param(k); err != nil {
				return err
			}
			args[i] = t.terms[k.ID()]
		}
		if args[i] == nil {
			return errors.Errorf("adapter: translate: node %q (ID %d): operand %d (node %d) was not translated", n.Name(), n.ID(), i, k.ID())
		}
	}
	want, err := coreType(n)
	if err != nil {
		return err
	}
	c := &opCtx{t: t, n: n, op: op, want: want, kids: kids}
	term, err := e.apply(c, args)
	if err != nil {
		return errors.Wrapf(err, "adapter: translate: node %q (ID %d) with op %s (%T)", n.Name(), n.ID(), op, op)
	}
	term, err = fit(term, want)
	if err != nil {
		return errors.Wrapf(err, "adapter: translate: node %q (ID %d) with op %s (%T)", n.Name(), n.ID(), op, op)
	}
	if fmt.Sprintf("%T", op) == "*gorgonia.sliceOp" { // UnsafeLet can move its window
		t.mutable[n] = fmt.Sprint(op)
	}
	if d := t.delta[n.ID()]; d != nil {
		// let n_pre = <n's translation> in let n = n_pre + δ: both denote n's value (δ is
		// zero), so the gradient reads the node for either and never recomputes it.
		pre, err := t.let(n, e.tag, "_pre", term)
		if err != nil {
			return err
		}
		if term, err = core.NewBinary(core.OpAdd, pre, d); err != nil {
			return errors.Wrapf(err, "adapter: translate: node %q (ID %d): perturbation", n.Name(), n.ID())
		}
	}
	v, err := t.let(n, e.tag, "", term)
	if err != nil {
		return err
	}
	t.terms[n.ID()] = v
	return nil
}

// let appends a let of term (of node n's type), named after n with the op's tag and suffix,
// and binds it to n.
func (t *translator) let(n *gorgonia.Node, tag, suffix string, term core.Term) (*core.Var, error) {
	v, err := core.NewVar(t.name(n, tag, suffix), term.Type())
	if err != nil {
		return nil, errors.Wrap(err, "adapter: translate")
	}
	t.lets = append(t.lets, v)
	t.bounds = append(t.bounds, term)
	t.letNode[v.Name] = n
	return v, nil
}

// fit reshapes a translated term to the node's shape when only the shape's spelling differs
// (Gorgonia sometimes keeps or drops unit dimensions); anything else is an error.
func fit(term core.Term, want core.Type) (core.Term, error) {
	got := term.Type()
	if got.Dtype != want.Dtype {
		return nil, errors.Errorf("translation has dtype %v, the node has %v", got.Dtype, want.Dtype)
	}
	if got.Shape.Equal(want.Shape) {
		return term, nil
	}
	if got.Shape.Size() != want.Shape.Size() {
		return nil, errors.Errorf("translation has shape %v, the node has %v", got.Shape, want.Shape)
	}
	return core.NewReshape(want.Shape, term)
}

// Path returns the nodes on a path from a wrt node to the cost, in an order where operands
// come first: every float node with an op that the cost reads and that depends on a wrt
// node, the cost included, the wrt nodes excluded. These are the nodes gorgonia.Grad gives a
// gradient node (bulkad.GradAll asks for them all).
func Path(cost *gorgonia.Node, wrt ...*gorgonia.Node) (gorgonia.Nodes, error) {
	if cost == nil || cost.Graph() == nil {
		return nil, errors.New("adapter: path: nil cost or cost without a graph")
	}
	isWrt := map[int64]bool{}
	for i, w := range wrt {
		if w == nil {
			return nil, errors.Errorf("adapter: path: wrt node %d is nil", i)
		}
		isWrt[w.ID()] = true
	}
	t := &translator{g: cost.Graph()}
	order, deps, err := t.postOrder([]*gorgonia.Node{cost}, isWrt)
	if err != nil {
		return nil, err
	}
	var out gorgonia.Nodes
	for _, n := range order {
		if _, planned := n.Op().(Planned); planned {
			continue // a packed vector of several values, not one the user sees
		}
		if deps[n.ID()] && !isWrt[n.ID()] && n.Op() != nil && (n.Dtype() == tensor.Float64 || n.Dtype() == tensor.Float32) {
			out = append(out, n)
		}
	}
	return out, nil
}
