package opgraphs

import (
	"math"
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

// TestDense: Dense holds a copy of its values and its shape (changing the arguments
// afterwards changes nothing), float32 rounds each value, and Floats reads them back.
func TestDense(t *testing.T) {
	cases := []struct {
		dt   tensor.Dtype
		sh   []int
		v    []float64
		want []float64 // Floats of the result
	}{
		{tensor.Float64, []int{2, 2}, []float64{1, 0.1, -3, 1e300}, []float64{1, 0.1, -3, 1e300}},
		// float32(0.1) is 0x3dcccccd = 13421773·2^-27; 1e300 overflows to +Inf
		{tensor.Float32, []int{4}, []float64{1, 0.1, -3, 1e300}, []float64{1, 13421773.0 / (1 << 27), -3, math.Inf(1)}},
	}
	for _, c := range cases {
		d := Dense(c.dt, c.sh, c.v)
		c.sh[0], c.v[0] = 99, 99
		if d.Dtype() != c.dt || d.Shape()[0] == 99 {
			t.Errorf("%v: dtype %v shape %v after changing the arguments", c.dt, d.Dtype(), d.Shape())
		}
		got := Floats(d)
		for i := range c.want {
			if got[i] != c.want[i] {
				t.Errorf("%v: element %d = %v, want %v", c.dt, i, got[i], c.want[i])
			}
		}
	}
}
