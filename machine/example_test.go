package machine_test

import (
	"fmt"

	"github.com/bulkad/bulkad"
	"github.com/bulkad/bulkad/machine"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// ExampleNew steps a small model on a Machine instead of a TapeMachine: bulkad.Grad adds the
// gradient, the machine runs forward and gradient from one compiled plan, and a solver reads
// the dual values as usual. ReuseValues writes every run into the same memory.
func ExampleNew() {
	g := gorgonia.NewGraph()
	x := gorgonia.NewMatrix(g, tensor.Float64, gorgonia.WithShape(2, 2), gorgonia.WithName("x"),
		gorgonia.WithValue(tensor.New(tensor.WithShape(2, 2), tensor.WithBacking([]float64{1, 2, 3, 4}))))
	w := gorgonia.NewMatrix(g, tensor.Float64, gorgonia.WithShape(2, 2), gorgonia.WithName("w"),
		gorgonia.WithValue(tensor.New(tensor.WithShape(2, 2), tensor.WithBacking([]float64{0.5, -1, 2, 0}))))
	cost := gorgonia.Must(gorgonia.Sum(gorgonia.Must(gorgonia.Square(gorgonia.Must(gorgonia.Mul(x, w))))))
	if _, err := bulkad.Grad(cost, w); err != nil {
		fmt.Println(err)
		return
	}
	m, err := machine.New(g, machine.BindDualValues(w), machine.ReuseValues())
	if err != nil {
		fmt.Println(err)
		return
	}
	defer m.Close()
	if err := m.RunAll(); err != nil {
		fmt.Println(err)
		return
	}
	dw, _ := w.Grad()
	// By hand: x·w = [[4.5 -1] [9.5 -3]], the cost is the sum of its squares and
	// dcost/dw = xᵀ·2(x·w) = 2·[[33 -10] [47 -14]].
	fmt.Println("cost", cost.Value())
	fmt.Println("dcost/dw", dw.Data())
	// Output:
	// cost 120.5
	// dcost/dw [66 -20 94 -28]
}

// ExampleLean runs a step that fills only the values a training step reads: the cost (kept)
// and the gradients; the intermediate product x·w gets no value.
func ExampleLean() {
	g := gorgonia.NewGraph()
	x := gorgonia.NewMatrix(g, tensor.Float64, gorgonia.WithShape(2, 2), gorgonia.WithName("x"),
		gorgonia.WithValue(tensor.New(tensor.WithShape(2, 2), tensor.WithBacking([]float64{1, 2, 3, 4}))))
	w := gorgonia.NewMatrix(g, tensor.Float64, gorgonia.WithShape(2, 2), gorgonia.WithName("w"),
		gorgonia.WithValue(tensor.New(tensor.WithShape(2, 2), tensor.WithBacking([]float64{0.5, -1, 2, 0}))))
	xw := gorgonia.Must(gorgonia.Mul(x, w))
	cost := gorgonia.Must(gorgonia.Sum(gorgonia.Must(gorgonia.Square(xw))))
	if _, err := bulkad.Grad(cost, w); err != nil {
		fmt.Println(err)
		return
	}
	m, err := machine.New(g, machine.BindDualValues(w), machine.Lean(cost))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer m.Close()
	if err := m.RunAll(); err != nil {
		fmt.Println(err)
		return
	}
	dw, _ := w.Grad()
	fmt.Println("cost", cost.Value())
	fmt.Println("dcost/dw", dw.Data())
	fmt.Println("x·w has a value:", xw.Value() != nil)
	// Output:
	// cost 120.5
	// dcost/dw [66 -20 94 -28]
	// x·w has a value: false
}
