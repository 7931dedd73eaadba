package raise

import (
	"fmt"
	"hash"
	"hash/fnv"
	"reflect"
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
	node   *gorgonia.Node
	text   string // the op's String at Grad time
	window [3]int // the slice's window at Grad time (SliceWindow), when slice
	slice  bool
	zero   *gorgonia.F64 // the value of every run
}

func (g guardOp) Arity() int { return 1 }
func (g guardOp) Type() hm.Type {
	return hm.NewFnType(hm.TypeVariable('a'), tensor.Float64)
}
func (g guardOp) InferShape(...gorgonia.DimSizer) (tensor.Shape, error) {
	return tensor.ScalarShape(), nil
}
func (g guardOp) Do(...gorgonia.Value) (gorgonia.Value, error) {
	if w, ok := SliceWindow(g.node.Op()); g.slice && ok && w == g.window {
		return g.zero, nil // the same window, compared without printing the op
	}
	if now := fmt.Sprint(g.node.Op()); now != g.text {
		return nil, errors.Errorf("bulkad: node %q changed after Grad (its op was %s, is now %s, e.g. by UnsafeLet): the gradient nodes differentiate the old graph; build the graph again and call Grad on it", g.node.Name(), g.text, now)
	}
	return g.zero, nil
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
		g := guardOp{node: n, text: mutable[n], zero: gorgonia.NewF64(0)}
		g.window, g.slice = SliceWindow(n.Op())
		if _, err := gorgonia.ApplyOp(g, n); err != nil {
			return errors.Wrapf(err, "raise: guarding node %q", n.Name())
		}
	}
	return nil
}

// SliceWindow is the window (start, end, step) of a slicing op — gorgonia's sliceOp, which
// gorgonia.UnsafeLet changes in place — or false for another op. Two ops of one node with the
// same window mean the same; comparing windows allocates nothing, where printing the op does.
// A slice op without a window (a nil tensor.Slice: the whole axis) has the window -1, -1, -1.
func SliceWindow(op gorgonia.Op) ([3]int, bool) {
	s, ok := op.(tensor.Slice)
	if !ok {
		return [3]int{}, false
	}
	v := reflect.ValueOf(op)
	if v.Kind() == reflect.Pointer {
		if v.IsNil() {
			return [3]int{}, false
		}
		v = v.Elem()
	}
	if v.Kind() == reflect.Struct && v.NumField() > 0 && v.Type().Field(0).Anonymous && v.Field(0).Kind() == reflect.Interface && v.Field(0).IsNil() {
		return [3]int{-1, -1, -1}, true // the embedded Slice is nil: calling it would panic
	}
	return [3]int{s.Start(), s.End(), s.Step()}, true
}
