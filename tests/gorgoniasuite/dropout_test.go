package gorgoniasuite

import (
	"math"
	"testing"

	"github.com/bulkad/bulkad"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// TestDropoutGradient is the dropout of the convnet example (p = 0.2), where Gorgonia's
// gradient is wrong. Gorgonia's Dropout draws a new mask on every run from a time-seeded
// generator, so central differences across runs are impossible; but for the mask of one run the
// output is linear in x, y_i = s_i·x_i, and the exact derivative of Σ c ⊙ Dropout(x) is c_i·y_i/x_i
// (the difference quotient (y_i(x) − y_i(0))/x_i, read from the same run's forward values).
// bulkad's gradient must equal it; gorgoniaWrong records that Gorgonia's does not (its
// backward pass divides by the drop probability instead of the keep probability).
func TestDropoutGradient(t *testing.T) {
	cases := []struct {
		name          string
		grad          gradFunc
		gorgoniaWrong bool
	}{
		{"bulkad", bulkad.Grad, false},
		{"gorgonia", G.Grad, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			const n, p = 200, 0.2
			xs := make([]float64, n)
			cs := make([]float64, n)
			for i := range xs {
				xs[i] = float64(i + 1)
				cs[i] = math.Sin(float64(i)) + 1.5
			}
			g := G.NewGraph()
			x := inputNode(g, tensor.Float64, tensor.Shape{n}, xs, "x")
			cn := inputNode(g, tensor.Float64, tensor.Shape{n}, cs, "c")
			y, err := G.Dropout(x, p)
			if err != nil {
				t.Fatal(err)
			}
			var yv G.Value
			G.Read(y, &yv)
			cost := G.Must(G.Sum(G.Must(G.HadamardProd(y, cn))))
			grads, err := c.grad(cost, x)
			if err != nil {
				t.Fatal(err)
			}
			if err := run(g); err != nil {
				t.Fatal(err)
			}
			ys, gs := floats(yv), floats(grads[0].Value())
			kept, worst := 0, 0.0
			for i := range xs {
				want := cs[i] * ys[i] / xs[i]
				if ys[i] != 0 {
					kept++
				}
				worst = math.Max(worst, math.Abs(gs[i]-want))
			}
			if kept == 0 || kept == n {
				t.Fatalf("mask kept %d of %d entries; the check needs both kinds", kept, n)
			}
			if wrong := worst > 1e-9; wrong != c.gorgoniaWrong {
				t.Errorf("gradient off the same-run derivative by %g (wrong=%v, recorded %v)", worst, wrong, c.gorgoniaWrong)
			}
		})
	}
}
