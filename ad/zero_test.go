package ad

import (
	"math"
	"testing"

	"github.com/bulkad/bulkad/core"
	"gorgonia.org/tensor"
)

// TestAtZero: cost = Σ sin(x² + d) differentiated at d = 0 with d bound inside the artifact:
// ∂/∂x = 2x·cos(x²) and ∂/∂d = cos(x²) (hand derivation); the artifact takes only x.
func TestAtZero(t *testing.T) {
	cases := []struct {
		name string
		src  string
	}{
		{"vector", "fn (x : [3] f64, d : [3] f64) => sumOuter (sin (x * x + d))"},
		{"perturbation used twice", "fn (x : [3] f64, d : [3] f64) => let h = x * x + d in sumOuter (sin h) + 0.0 * sumOuter (h * h)"},
	}
	xs := []float64{0.3, -1.2, 2}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, err := core.ParseProgram(c.src)
			if err != nil {
				t.Fatal(err)
			}
			a, err := GradWith(p, Options{Wrt: []string{"x", "d"}, AtZero: []string{"d"}})
			if err != nil {
				t.Fatal(err)
			}
			if ps := a.Program().Params; len(ps) != 1 || ps[0].Name != "x" {
				t.Fatalf("artifact params %v, want only x", ps)
			}
			_, g, err := a.Run(map[string]*tensor.Dense{"x": tensor.New(tensor.WithShape(3), tensor.WithBacking(append([]float64(nil), xs...)))})
			if err != nil {
				t.Fatal(err)
			}
			gx, gd := g["x"].Data().([]float64), g["d"].Data().([]float64)
			for i, x := range xs {
				if want := 2 * x * math.Cos(x*x); math.Abs(gx[i]-want) > 1e-12 {
					t.Errorf("∂/∂x[%d] = %v, want %v", i, gx[i], want)
				}
				if want := math.Cos(x * x); math.Abs(gd[i]-want) > 1e-12 {
					t.Errorf("∂/∂d[%d] = %v, want %v", i, gd[i], want)
				}
			}
		})
	}
	p, _ := core.ParseProgram("fn (x : [3] f64) => sumOuter x")
	if _, err := GradWith(p, Options{Wrt: []string{"x"}, AtZero: []string{"y"}}); err == nil {
		t.Error("AtZero naming no parameter: no error")
	}
}
