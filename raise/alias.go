package raise

import (
	"fmt"
	"reflect"
	"sort"
	"strings"

	"github.com/chewxy/hm"
	"github.com/pkg/errors"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Views and in-place operations (Gorgonia v0.9.18, TapeMachine).
//
// The TapeMachine gives every node a register. A node whose op has ReturnsPtr() true and
// OverwritesInput() k ≥ 0 takes the register of its k-th child when that child is not read
// after it (its liveness interval ends there), and then runs UnsafeDo: it writes its result
// into the child's memory. Liveness is per node, not per memory: a view — a node whose value
// shares memory with a child while having a register of its own, such as Reshape
// (ShallowClone), Concat of one operand, Repeat by 1 or the identity Iop — is not known to
// the analysis. So an in-place operation on a view that is dead overwrites the memory of the
// viewed node even when that node is still read later, and an in-place operation on the
// viewed node overwrites the view. Gradient nodes that read a forward value through (or
// next to) such a view then read overwritten memory: Σ Reshape(a/b) ⊙ r, whose ⊙ runs in
// place on the reshape of a/b while the gradient with respect to b still reads a/b.
//
// protectViews makes such reads safe for every op with one mechanism: the nodes are grouped
// into alias classes (connected through ops that may return a view of a child), and every
// class that matters — one containing an input, a raised node or a node a raised node reads,
// with a member some op may overwrite in place — is read by an extra node, keepAlive, that
// also depends on the raised results. Its reads extend the liveness of every member of the
// class to after the last raised node, so no in-place operation can write into the class's
// memory before then (an in-place write needs its operand dead). Classes of one node need
// nothing: Gorgonia's own liveness already protects a value that has no view.
//
// The protection is decided when the gradient is raised: nodes added to the graph later (a
// new view of a forward node and an in-place op on it) are not covered.

// copyingOps are the Gorgonia ops (by %T) with ReturnsPtr() true whose Do always returns
// fresh memory (checked on Gorgonia v0.9.18's source and by TestCopyingOpsCopy): they
// alias a child only when they run in place, in the child's own register, which Gorgonia's
// liveness analysis accounts for. Every other op with ReturnsPtr() true may return a view.
var copyingOps = map[string]bool{
	"gorgonia.elemBinOp":   true,
	"gorgonia.elemUnaryOp": true,
	"gorgonia.linAlgBinOp": true,
	"gorgonia.tensordotOp": true,
	"gorgonia.sumOp":       true,
	"*gorgonia.maxOp":      true,
	"gorgonia.transposeOp": true, // SafeT copies
	"*gorgonia.sliceOp":    true, // materialises the view
}

// mayView reports whether a node with op may hold a value sharing memory with one of its
// children in a register of its own.
func mayView(op gorgonia.Op) bool {
	if op == nil || !op.ReturnsPtr() {
		return false // inputs; ops that return copies (the Op contract)
	}
	switch op.(type) {
	case *Op, *keepAlive:
		return false
	}
	return !copyingOps[fmt.Sprintf("%T", op)]
}

// protectViews adds keepAlive nodes, after the results, reading every member of each alias
// class that (1) has a member X viewed while X is still needed (X is an input, a constant, a
// result or has a reader besides the view) and (2) has a member that some node may overwrite
// in place (the operand OverwritesInput names of an op with ReturnsPtr). Without (1) the views
// take their operands' registers and Gorgonia's liveness is right; without (2) nothing writes
// the class's memory. Any class at risk is kept, also when no raised node reads it: it can
// feed them through Gorgonia's own forward nodes (h viewed by a dead Reshape(h) − x computed
// in place before tanh h runs makes the forward value and the gradient read from it wrong, and
// the nodes Grad adds change Gorgonia's schedule so that this happens; found by FuzzGrad). It
// adds nothing when no class qualifies — the common case.
func protectViews(g *gorgonia.ExprGraph, results []*gorgonia.Node) error {
	a, err := newAliasGraph(g.AllNodes(), results)
	if err != nil {
		return err
	}
	keep := a.atRisk()
	if len(keep) == 0 {
		return nil
	}
	return keepAliveAfter(results, keep)
}

// aliasGraph is a graph's nodes grouped into alias classes (a union-find over the edges of
// ops that may return a view of a child), with what protectViews needs to know of each node.
type aliasGraph struct {
	all         []*gorgonia.Node
	idx         map[*gorgonia.Node]int // the index in all of each node with a value
	byPtr       map[uintptr]int        // the same, by the node's address
	parent      []int                  // union-find forest over all
	isResult    map[int]bool
	readers     []int  // number of nodes reading each node
	viewed      []bool // some view op reads the node
	overwritten []int  // nodes some op may overwrite in place
}

// newAliasGraph groups all into alias classes.
func newAliasGraph(all, results []*gorgonia.Node) (*aliasGraph, error) {
	a := &aliasGraph{
		all:      all,
		idx:      make(map[*gorgonia.Node]int, len(all)),
		byPtr:    make(map[uintptr]int, len(all)),
		parent:   make([]int, len(all)),
		isResult: make(map[int]bool, len(results)),
		readers:  make([]int, len(all)),
		viewed:   make([]bool, len(all)),
	}
	for i, n := range all {
		a.parent[i] = i
		if n == nil || isStatement(n) {
			continue // a removed node's slot; Read and Set statements (no value of their own)
		}
		a.idx[n] = i
		a.byPtr[reflect.ValueOf(n).Pointer()] = i
	}
	for _, n := range results {
		if i, ok := a.idx[n]; ok {
			a.isResult[i] = true
		}
	}
	for i, n := range all {
		if _, ok := a.idx[n]; !ok || n.Op() == nil {
			continue
		}
		kids, err := a.kidsOf(n)
		if err != nil {
			return nil, err
		}
		view, k := mayView(n.Op()), -1
		if n.Op().ReturnsPtr() {
			k = n.Op().OverwritesInput()
		}
		for c, j := range kids {
			if j < 0 {
				continue
			}
			a.readers[j]++
			if c == k {
				a.overwritten = append(a.overwritten, j)
			}
			if view {
				a.viewed[j] = true
				if r, s := a.find(i), a.find(j); r != s {
					a.parent[r] = s
				}
			}
		}
	}
	return a, nil
}

// find returns the representative of i's alias class.
func (a *aliasGraph) find(i int) int {
	for a.parent[i] != i {
		a.parent[i] = a.parent[a.parent[i]]
		i = a.parent[i]
	}
	return i
}

// kidsOf returns the indices of n's operands (-1 for one not in the graph). The operands are
// read from the node's children field, as Gorgonia's compiler does (g.From can be stale
// after a stabilising rewrite removed a node; see package adapter).
func (a *aliasGraph) kidsOf(n *gorgonia.Node) ([]int, error) {
	f := reflect.ValueOf(n).Elem().FieldByName("children")
	if !f.IsValid() || f.Kind() != reflect.Slice {
		return nil, errors.Errorf("raise: keeping views alive: node %v: cannot read its operands", n)
	}
	out := make([]int, f.Len())
	for c := range out {
		j, ok := a.byPtr[f.Index(c).Pointer()]
		if !ok {
			j = -1
		}
		out[c] = j
	}
	return out, nil
}

// atRisk returns the members, by increasing ID, of every class of more than one node that is
// both shared (see protectViews) and written in place.
func (a *aliasGraph) atRisk() []*gorgonia.Node {
	// A view of X shares memory with X in another register only when X is still needed after
	// the view is made: X is an input or a constant, a result, or has another reader. When the
	// view is X's only reader, X is dead there and the view takes X's own register.
	hazard := map[int]bool{}
	for i, n := range a.all {
		if _, ok := a.idx[n]; ok && a.viewed[i] && (n.Op() == nil || isConstantNode(n) || a.isResult[i] || a.readers[i] > 1) {
			hazard[a.find(i)] = true
		}
	}
	if len(hazard) == 0 {
		return nil
	}
	written := make(map[int]bool, len(a.overwritten))
	for _, j := range a.overwritten {
		written[a.find(j)] = true
	}
	members := map[int][]*gorgonia.Node{}
	for i, n := range a.all {
		if _, ok := a.idx[n]; ok {
			r := a.find(i)
			members[r] = append(members[r], n)
		}
	}
	var keep []*gorgonia.Node
	for r, ms := range members {
		if len(ms) > 1 && written[r] && hazard[r] {
			keep = append(keep, ms...)
		}
	}
	sort.Slice(keep, func(i, j int) bool { return keep[i].ID() < keep[j].ID() })
	return keep
}

// keepAliveAfter adds keepAlive nodes reading keep and depending on every result.
// Gorgonia's type inference is quadratic in an op's arity: the nodes read at most keepArity
// children. One node (or a tree of them) follows every result; each node that reads class
// members also reads it.
func keepAliveAfter(results, keep []*gorgonia.Node) error {
	var after []*gorgonia.Node
	seen := map[*gorgonia.Node]bool{}
	for _, n := range results {
		if n != nil && !seen[n] {
			seen[n] = true
			after = append(after, n)
		}
	}
	for len(after) > keepArity {
		var next []*gorgonia.Node
		for i := 0; i < len(after); i += keepArity {
			n, err := applyKeepAlive(after[i:min(i+keepArity, len(after))])
			if err != nil {
				return err
			}
			next = append(next, n)
		}
		after = next
	}
	if len(after)+len(keep) <= keepArity {
		_, err := applyKeepAlive(append(after, keep...))
		return err
	}
	if len(after) > 1 {
		n, err := applyKeepAlive(after)
		if err != nil {
			return err
		}
		after = []*gorgonia.Node{n}
	}
	for i := 0; i < len(keep); i += keepArity - 1 {
		if _, err := applyKeepAlive(append(after[:1:1], keep[i:min(i+keepArity-1, len(keep))]...)); err != nil {
			return err
		}
	}
	return nil
}

// keepArity is the largest number of children of a keepAlive node.
const keepArity = 64

// applyKeepAlive adds a keepAlive node over kids, checking that Gorgonia's deduplication did
// not answer with an unrelated node (then salting the op).
func applyKeepAlive(kids []*gorgonia.Node) (*gorgonia.Node, error) {
	op := &keepAlive{types: make([]hm.Type, len(kids))}
	ids := make([]string, len(kids))
	for i, k := range kids {
		op.types[i] = k.Type()
		ids[i] = fmt.Sprint(k.ID())
	}
	op.text = "keepAlive(" + strings.Join(ids, ",") + ")"
	for salt := 0; ; salt++ {
		n, err := gorgonia.ApplyOp(op, kids...)
		if err != nil {
			return nil, errors.Wrap(err, "raise: keeping views alive")
		}
		if ka, ok := n.Op().(*keepAlive); ok && ka.text == op.text && ownChildrenAre(n, kids) {
			return n, nil
		}
		if salt > 8 {
			return nil, errors.Errorf("raise: keeping views alive: Gorgonia keeps returning the unrelated node %v", n)
		}
		op = &keepAlive{pure: pure{text: fmt.Sprintf("%s #%d", op.text, salt)}, types: op.types}
	}
}

// markFresh makes every custom op whose value can become the value of one of the results
// return a new value at every run (see Op.Do): the results themselves, and the custom ops
// they reach through ops that may return their operand's memory (views, and in-place ops
// through the operand they overwrite).
func markFresh(g *gorgonia.ExprGraph, results []*gorgonia.Node) error {
	all := g.AllNodes()
	byPtr := make(map[uintptr]*gorgonia.Node, len(all))
	for _, n := range all {
		if n != nil {
			byPtr[reflect.ValueOf(n).Pointer()] = n
		}
	}
	seen := map[*gorgonia.Node]bool{}
	stack := append([]*gorgonia.Node(nil), results...)
	for len(stack) > 0 {
		n := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if n == nil || seen[n] || n.Op() == nil {
			continue
		}
		seen[n] = true
		op := n.Op()
		if o, ok := op.(*Op); ok {
			o.fresh.Store(true)
			continue
		}
		view, k := mayView(op), -1
		if op.ReturnsPtr() {
			k = op.OverwritesInput()
		}
		if !view && k < 0 {
			continue
		}
		f := reflect.ValueOf(n).Elem().FieldByName("children")
		if !f.IsValid() || f.Kind() != reflect.Slice {
			return errors.Errorf("raise: node %v: cannot read its operands", n)
		}
		for c := 0; c < f.Len(); c++ {
			if kid, ok := byPtr[f.Index(c).Pointer()]; ok && (view || c == k) {
				stack = append(stack, kid)
			}
		}
	}
	return nil
}

// ownChildrenAre reports whether n's children field holds exactly kids (g.From can be stale;
// see protectViews).
func ownChildrenAre(n *gorgonia.Node, kids []*gorgonia.Node) bool {
	f := reflect.ValueOf(n).Elem().FieldByName("children")
	if !f.IsValid() || f.Kind() != reflect.Slice || f.Len() != len(kids) {
		return false
	}
	for i, k := range kids {
		if f.Index(i).Pointer() != reflect.ValueOf(k).Pointer() {
			return false
		}
	}
	return true
}

// isStatement reports whether n is one of Gorgonia's statement nodes (Read, Set, device
// transfers), which the compiler handles apart from values.
func isStatement(n *gorgonia.Node) bool {
	f := reflect.ValueOf(n).Elem().FieldByName("isStmt")
	return n.Type() == nil || (f.IsValid() && f.Kind() == reflect.Bool && f.Bool())
}

// keepAlive is a node that reads its children and does nothing: its only effect is on the
// TapeMachine's liveness analysis (every child stays live until it runs). Its value is a
// constant scalar.
type keepAlive struct {
	pure  // text: the op's name and its children's IDs
	types []hm.Type
}

var _ gorgonia.Op = (*keepAlive)(nil)

// Arity is the number of children.
func (k *keepAlive) Arity() int { return len(k.types) }

// Type is children's types → float64.
func (k *keepAlive) Type() hm.Type {
	return hm.NewFnType(append(append([]hm.Type(nil), k.types...), tensor.Float64)...)
}

// InferShape is the scalar shape.
func (k *keepAlive) InferShape(...gorgonia.DimSizer) (tensor.Shape, error) {
	return tensor.ScalarShape(), nil
}

// Do returns 0 without reading its inputs.
func (k *keepAlive) Do(...gorgonia.Value) (gorgonia.Value, error) {
	return gorgonia.NewF64(0), nil
}

// String names the op and its children's IDs.
func (k *keepAlive) String() string { return k.text }

// Protect keeps every value of g that Gorgonia could overwrite by running an op in place on
// a view (a Reshape of an intermediate node followed by an in-place subtraction, say) alive
// until after the nodes after have run: keepAlive nodes depending on after read each alias
// class at risk. For callers that run Gorgonia's own forward pass and read intermediate values
// afterwards (gradcheck.Check's point of evaluation). Nothing is added when no class is at risk.
func Protect(g *gorgonia.ExprGraph, after []*gorgonia.Node) error {
	return protectViews(g, after)
}
