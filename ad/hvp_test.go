package ad

import (
	"math"
	"testing"

	"github.com/bulkad/bulkad/core"
	"github.com/bulkad/bulkad/core/tensors"
	"gorgonia.org/tensor"
)

// TestHVPHand: f(x, y) = Σ x³ + Σ x ⊙ y ⊙ y. By hand: ∂f/∂x = 3x² + y², ∂f/∂y = 2xy;
// H = [[6x, 2y], [2y, 2x]] (diagonal blocks, element-wise), so with directions (u, w):
// (Hv)_x = 6x⊙u + 2y⊙w, (Hv)_y = 2y⊙u + 2x⊙w, and ⟨∇f, v⟩ = Σ (3x²+y²)u + 2xy w.
func TestHVPHand(t *testing.T) {
	p, err := core.ParseProgram(`fn (x : [3] f64, y : [3] f64) => sumOuter (x * x * x) + sumOuter (x * y * y)`)
	if err != nil {
		t.Fatal(err)
	}
	h, err := HVP(p, Options{Wrt: []string{"x", "y"}})
	if err != nil {
		t.Fatal(err)
	}
	x, y := []float64{1, -2, 0.5}, []float64{0.3, 1.5, -1}
	u, w := []float64{0.7, 0.1, -0.4}, []float64{-1, 2, 0.25}
	vec := func(v []float64) *tensor.Dense {
		return tensor.New(tensor.WithShape(3), tensor.WithBacking(append([]float64(nil), v...)))
	}
	outs, err := tensors.EvalTuple(h, map[string]*tensor.Dense{"x": vec(x), "y": vec(y), "d_x": vec(u), "d_y": vec(w)})
	if err != nil {
		t.Fatal(err)
	}
	if len(outs) != 6 {
		t.Fatalf("%d components, want 6 (value, 2 gradients, directional derivative, 2 products)", len(outs))
	}
	var dir float64
	wantHx, wantHy := make([]float64, 3), make([]float64, 3)
	for i := range x {
		dir += (3*x[i]*x[i]+y[i]*y[i])*u[i] + 2*x[i]*y[i]*w[i]
		wantHx[i] = 6*x[i]*u[i] + 2*y[i]*w[i]
		wantHy[i] = 2*y[i]*u[i] + 2*x[i]*w[i]
	}
	near := func(name string, got, want []float64) {
		for i := range want {
			if math.Abs(got[i]-want[i]) > 1e-12 {
				t.Errorf("%s = %v, want %v", name, got, want)
				return
			}
		}
	}
	near("⟨∇f, v⟩", flat(outs[3]), []float64{dir})
	near("(Hv)_x", flat(outs[4]), wantHx)
	near("(Hv)_y", flat(outs[5]), wantHy)
}

func flat(d *tensor.Dense) []float64 {
	if x, ok := d.Data().(float64); ok {
		return []float64{x}
	}
	return d.Data().([]float64)
}
