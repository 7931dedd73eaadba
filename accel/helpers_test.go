package accel_test

import (
	"testing"

	G "gorgonia.org/gorgonia"
)

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
