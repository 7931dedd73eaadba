package raise

import (
	"fmt"
	"math/rand"
	"testing"

	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// sharesMemory reports whether two values have overlapping backing arrays.
func sharesMemory(a, b gorgonia.Value) bool {
	x, ok1 := a.(*tensor.Dense)
	y, ok2 := b.(*tensor.Dense)
	if !ok1 || !ok2 || x.DataSize() == 0 || y.DataSize() == 0 {
		return false
	}
	xs, ys := x.Uintptr(), y.Uintptr()
	xe := xs + uintptr(x.MemSize())
	ye := ys + uintptr(y.MemSize())
	return xs < ye && ys < xe
}

// TestCopyingOpsCopy runs the Do of every op listed in copyingOps on values and checks that
// the result never shares memory with an operand; Reshape, which is not listed, does.
func TestCopyingOpsCopy(t *testing.T) {
	g := gorgonia.NewGraph()
	rng := rand.New(rand.NewSource(3))
	in := func(shape ...int) *gorgonia.Node {
		n := 1
		for _, k := range shape {
			n *= k
		}
		v := make([]float64, n)
		for i := range v {
			v[i] = 0.5 + rng.Float64()
		}
		if len(shape) == 0 {
			return gorgonia.NewScalar(g, tensor.Float64, gorgonia.WithValue(v[0]))
		}
		return gorgonia.NewTensor(g, tensor.Float64, len(shape), gorgonia.WithShape(shape...),
			gorgonia.WithValue(tensor.New(tensor.WithShape(shape...), tensor.WithBacking(v))))
	}
	m, m2, v, v2, s := in(3, 4), in(3, 4), in(4), in(4), in()
	must := func(n *gorgonia.Node, err error) *gorgonia.Node {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	cube := in(2, 3, 4)
	nodes := []*gorgonia.Node{
		must(gorgonia.Add(m, m2)), must(gorgonia.Sub(m, s)), must(gorgonia.HadamardProd(s, m)),
		must(gorgonia.HadamardDiv(m, m2)), must(gorgonia.Pow(m, s)), must(gorgonia.Gt(m, m2, true)),
		must(gorgonia.Add(s, s)), must(gorgonia.Lt(v, v2, false)),
		must(gorgonia.Tanh(m)), must(gorgonia.Neg(v)), must(gorgonia.Exp(s)), must(gorgonia.Abs(m)),
		must(gorgonia.Square(m)), must(gorgonia.Sqrt(m)), must(gorgonia.Inverse(m)), must(gorgonia.Sigmoid(m)),
		must(gorgonia.Mul(m, in(4, 3))), must(gorgonia.Mul(m, v)), must(gorgonia.Mul(v, v2)),
		must(gorgonia.OuterProd(v, v2)), must(gorgonia.Tensordot([]int{1}, []int{0}, m, in(4, 2))),
		must(gorgonia.Sum(m)), must(gorgonia.Sum(m, 0)), must(gorgonia.Sum(m, 0, 1)), must(gorgonia.Sum(in(1, 4), 0)),
		must(gorgonia.Max(m, 1)), must(gorgonia.Max(in(4, 1), 1)),
		must(gorgonia.Transpose(m)), must(gorgonia.Transpose(cube, 0, 1, 2)), must(gorgonia.Transpose(cube, 2, 0, 1)),
		must(gorgonia.Slice(m, gorgonia.S(0, 3))), must(gorgonia.Slice(m, nil, gorgonia.S(1))),
		must(gorgonia.Slice(m, gorgonia.S(1, 3, 1))), must(gorgonia.Slice(cube, nil, nil, gorgonia.S(0, 4))),
	}
	// Values for every operand (TraceExec binds copies, untouched by in-place runs).
	vm := gorgonia.NewTapeMachine(g, gorgonia.TraceExec())
	defer vm.Close()
	if err := vm.RunAll(); err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, n := range nodes {
		if n.Op() == nil {
			continue // a slice of everything is its operand itself
		}
		kind := fmt.Sprintf("%T", n.Op())
		seen[kind] = true
		if !copyingOps[kind] {
			t.Errorf("%v (%s) is not in copyingOps", n.Op(), kind)
			continue
		}
		var vals []gorgonia.Value
		for _, c := range kidsOf(t, g, n) {
			vals = append(vals, c.Value())
		}
		out, err := n.Op().Do(vals...)
		if err != nil {
			t.Fatalf("%v: Do: %v", n.Op(), err)
		}
		for i, x := range vals {
			if sharesMemory(out, x) {
				t.Errorf("%v (%s): the result shares memory with operand %d", n.Op(), kind, i)
			}
		}
		if mayView(n.Op()) {
			t.Errorf("mayView(%v) is true", n.Op())
		}
	}
	for kind := range copyingOps {
		if !seen[kind] {
			t.Errorf("copyingOps lists %s, which no probe built", kind)
		}
	}
	r := must(gorgonia.Reshape(m, tensor.Shape{12})) // added after the run: m is an input
	out, err := r.Op().Do(m.Value())
	if err != nil {
		t.Fatal(err)
	}
	if !sharesMemory(out, m.Value()) || !mayView(r.Op()) {
		t.Errorf("Reshape: Do shares memory %v, mayView %v; want both", sharesMemory(out, m.Value()), mayView(r.Op()))
	}
}
