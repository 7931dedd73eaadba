package gorgoniasuite

import (
	"math"
	"testing"

	"github.com/bulkad/bulkad"
	"github.com/bulkad/bulkad/examples/opgraphs"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// TestAdamSolverPrecision is solvers_test.go's TestAdamSolverPrecision: weights [n, 1] of
// ones, input [1, n] set to d = 0, 0.1, …, 0.9 in turn (ten steps; the loop variable
// accumulates float32 round-off for both dtypes, as in Gorgonia's test), loss mean(x·w),
// one Adam step (learn rate 0.1) per input; the final weights against the table.
func TestAdamSolverPrecision(t *testing.T) {
	for _, c := range []struct {
		dt   tensor.Dtype
		size int
		want float64
	}{{tensor.Float32, 4, 0.18293014}, {tensor.Float64, 8, 0.18293561851374684}} {
		g := G.NewGraph()
		w := G.NewTensor(g, c.dt, 2, G.WithShape(c.size, 1), G.WithInit(G.Ones()), G.WithName("weights"))
		x := G.NewTensor(g, c.dt, 2, G.WithShape(1, c.size), G.WithName("x"))
		loss := G.Must(G.Mean(G.Must(G.Mul(x, w))))
		if _, err := bulkad.Grad(loss, w); err != nil {
			t.Fatal(err)
		}
		solver := G.NewAdamSolver(G.WithLearnRate(0.1))
		m := G.NewTapeMachine(g, G.BindDualValues(w))
		var inputs []float64
		for d := float32(0); d < 1; d += 0.1 { // Gorgonia's loop variable is float32 for both dtypes
			inputs = append(inputs, float64(d))
		}
		for _, d := range inputs {
			vals := make([]float64, c.size)
			for i := range vals {
				vals[i] = d
			}
			if err := G.Let(x, opgraphs.Dense(c.dt, tensor.Shape{1, c.size}, vals)); err != nil {
				t.Fatal(err)
			}
			if err := m.RunAll(); err != nil {
				t.Fatal(err)
			}
			if err := solver.Step([]G.ValueGrad{w}); err != nil {
				t.Fatal(err)
			}
			m.Reset()
		}
		m.Close()
		tol := 1e-12
		if c.dt == tensor.Float32 {
			tol = 1e-6
		}
		for i, v := range floats(w.Value()) {
			if math.Abs(v-c.want) > tol {
				t.Errorf("%v: weight %d = %.10g, the table %.10g", c.dt, i, v, c.want)
				break
			}
		}
	}
}
