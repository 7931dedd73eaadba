package bulkad_test

import (
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// vec64 is a float64 vector node holding xs.
func vec64(g *G.ExprGraph, name string, xs ...float64) *G.Node {
	return G.NewVector(g, tensor.Float64, G.WithShape(len(xs)), G.WithName(name),
		G.WithValue(tensor.New(tensor.WithShape(len(xs)), tensor.WithBacking(xs))))
}

// runGraph runs g once on a TapeMachine; the values (and, with BindDualValues, the gradients)
// stay on the nodes. An error fails the test.
func runGraph(t testing.TB, g *G.ExprGraph, opts ...G.VMOpt) {
	t.Helper()
	vm := G.NewTapeMachine(g, opts...)
	defer vm.Close()
	if err := vm.RunAll(); err != nil {
		t.Fatal(err)
	}
}
