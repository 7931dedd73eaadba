package raise

import (
	"fmt"
	"hash"
	"hash/fnv"
	"sort"

	"github.com/chewxy/hm"
	"github.com/pkg/errors"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// guardOp fails the run when the op of a node changed after Grad (gorgonia.UnsafeLet on a
// slice): the gradient nodes were built from the old op and would silently be wrong. Its
// node reads the guarded node, so it runs once per step after it; its value is a scalar 0.
type guardOp struct {
	node *gorgonia.Node
	text string // the op's String at Grad time
}

func (g guardOp) Arity() int { return 1 }
func (g guardOp) Type() hm.Type {
	return hm.NewFnType(hm.TypeVariable('a'), tensor.Float64)
}
func (g guardOp) InferShape(...gorgonia.DimSizer) (tensor.Shape, error) {
	return tensor.ScalarShape(), nil
}
func (g guardOp) Do(...gorgonia.Value) (gorgonia.Value, error) {
	if now := fmt.Sprint(g.node.Op()); now != g.text {
		return nil, errors.Errorf("bulkad: node %q changed after Grad (its op was %s, is now %s, e.g. by UnsafeLet): the gradient nodes differentiate the old graph; build the graph again and call Grad on it", g.node.Name(), g.text, now)
	}
	return gorgonia.NewF64(0), nil
}
func (g guardOp) ReturnsPtr() bool      { return false }
func (g guardOp) CallsExtern() bool     { return false }
func (g guardOp) OverwritesInput() int  { return -1 }
func (g guardOp) WriteHash(h hash.Hash) { fmt.Fprintf(h, "bulkad guard %d %s", g.node.ID(), g.text) }
func (g guardOp) Hashcode() uint32 {
	h := fnv.New32a()
	g.WriteHash(h)
	return h.Sum32()
}
func (g guardOp) String() string { return fmt.Sprintf("bulkad guard(%s)", g.text) }

// AddGuards adds one guard node per node of mutable (a node whose op gorgonia.UnsafeLet can
// change in place, with its op's String when the gradient was built: adapter.Translation.Mutable).
// Calling it again for the same nodes adds nothing: Gorgonia finds the node by its hash.
func AddGuards(mutable map[*gorgonia.Node]string) error {
	ns := make(gorgonia.Nodes, 0, len(mutable))
	for n := range mutable {
		ns = append(ns, n)
	}
	sort.Slice(ns, func(i, j int) bool { return ns[i].ID() < ns[j].ID() })
	for _, n := range ns {
		if _, err := gorgonia.ApplyOp(guardOp{node: n, text: mutable[n]}, n); err != nil {
			return errors.Wrapf(err, "raise: guarding node %q", n.Name())
		}
	}
	return nil
}
