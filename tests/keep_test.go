package tests

import (
	"testing"

	"github.com/bulkad/bulkad"
	"github.com/bulkad/bulkad/examples/models"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// TestKeptGradientSurvivesNextRun: on every zoo model, the value of a gradient node kept after
// one TapeMachine run is not changed by the next run (after Reset, with other weights), as
// for Gorgonia's own gradient nodes, while the new run's gradient does differ. (wrt.Grad()
// under BindDualValues is the dual value Gorgonia accumulates into, for its own gradients as
// for bulkad's: it is one object across runs by Gorgonia's design.)
func TestKeptGradientSurvivesNextRun(t *testing.T) {
	eachZoo(t, tensor.Float64, func(t *testing.T, m *models.Model) {
		gs, err := bulkad.Grad(m.Cost, m.Wrt...)
		if err != nil {
			t.Fatal(err)
		}
		vm := mustRunOnce(t, m.G, nil)
		kept := make([]G.Value, len(gs))
		copies := make([][]float64, len(gs))
		for i, n := range gs {
			kept[i] = n.Value()
			copies[i] = valuesOf(kept[i])
		}
		for _, w := range m.Wrt {
			vals := valuesOf(w.Value())
			for j := range vals {
				vals[j] = 1.25*vals[j] + 0.01
			}
			var v G.Value = G.NewF64(vals[0])
			if !w.IsScalar() {
				v = tensor.New(tensor.WithShape(w.Shape()...), tensor.WithBacking(vals))
			}
			if err := G.Let(w, v); err != nil {
				t.Fatal(err)
			}
		}
		vm.Reset()
		if err := vm.RunAll(); err != nil {
			t.Fatal(err)
		}
		changed := false
		for i, n := range gs {
			if d := maxRelDiff([][]float64{valuesOf(kept[i])}, [][]float64{copies[i]}); d != 0 {
				t.Errorf("gradient %d kept from run 1 changed by run 2 (by %g)", i, d)
			}
			if maxRelDiff([][]float64{valuesOf(n.Value())}, [][]float64{copies[i]}) > 1e-9 {
				changed = true
			}
		}
		if !changed {
			t.Errorf("run 2 with other weights gave the same gradients: the test shows nothing")
		}
	})
}
