package opgraphs

import (
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// TestEveryCaseBuildsAndRuns: each case builds in both dtypes and its forward pass runs on a
// TapeMachine to a finite scalar cost.
func TestEveryCaseBuildsAndRuns(t *testing.T) {
	for _, c := range Cases() {
		for _, dt := range []tensor.Dtype{tensor.Float64, tensor.Float32} {
			gr, err := c.Build(dt, 1)
			if err != nil {
				t.Errorf("%s %v: %v", c.Name, dt, err)
				continue
			}
			if !gr.Cost.IsScalar() || len(gr.Wrt) == 0 {
				t.Errorf("%s: cost shape %v, %d wrt nodes", c.Name, gr.Cost.Shape(), len(gr.Wrt))
			}
			vm := G.NewTapeMachine(gr.G)
			if err := vm.RunAll(); err != nil {
				t.Errorf("%s %v: forward: %v", c.Name, dt, err)
			} else if v := Values(gr.Cost)[0]; v != v {
				t.Errorf("%s %v: cost is NaN", c.Name, dt)
			}
			vm.Close()
		}
	}
	if _, ok := Lookup("log2"); !ok {
		t.Error("Lookup(log2) failed")
	}
}
