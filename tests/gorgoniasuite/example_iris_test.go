package gorgoniasuite

import (
	"math"
	"math/rand"
	"testing"

	"github.com/bulkad/bulkad"
	"github.com/bulkad/bulkad/examples/data"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// trainIris is Gorgonia's examples/iris: linear regression of the species number (1, 2, 3)
// on the four measurements and a bias column, cost = mean squared error, θ drawn from a
// standard normal (fixed seed), TapeMachine with BindDualValues(θ) and a VanillaSolver with
// learn rate 0.001, as in the example. It returns the cost at each step.
func trainIris(t *testing.T, grad gradFunc, steps int) []float64 {
	t.Helper()
	features, labels, err := data.Iris()
	if err != nil {
		t.Fatal(err)
	}
	n := len(features)
	xs := make([]float64, 0, n*5)
	ys := make([]float64, n)
	for i, f := range features {
		xs = append(xs, f[0], f[1], f[2], f[3], 1)
		ys[i] = float64(labels[i] + 1)
	}
	r := rand.New(rand.NewSource(7))
	theta0 := make([]float64, 5)
	for i := range theta0 {
		theta0[i] = r.NormFloat64()
	}
	g := G.NewGraph()
	x := G.NewMatrix(g, tensor.Float64, G.WithName("x"), G.WithShape(n, 5), G.WithValue(tensor.New(tensor.WithShape(n, 5), tensor.WithBacking(xs))))
	y := G.NewVector(g, tensor.Float64, G.WithName("y"), G.WithShape(n), G.WithValue(tensor.New(tensor.WithShape(n), tensor.WithBacking(ys))))
	theta := G.NewVector(g, tensor.Float64, G.WithName("theta"), G.WithShape(5), G.WithValue(tensor.New(tensor.WithShape(5), tensor.WithBacking(theta0))))
	pred := G.Must(G.Mul(x, theta))
	cost := G.Must(G.Mean(G.Must(G.Square(G.Must(G.Sub(pred, y))))))
	if _, err := grad(cost, theta); err != nil {
		t.Fatal(err)
	}
	m := G.NewTapeMachine(g, G.BindDualValues(theta))
	defer m.Close()
	solver := G.NewVanillaSolver(G.WithLearnRate(0.001))
	var costs []float64
	for i := 0; i < steps; i++ {
		if err := m.RunAll(); err != nil {
			t.Fatal(err)
		}
		costs = append(costs, floats(cost.Value())[0])
		if err := solver.Step([]G.ValueGrad{theta}); err != nil {
			t.Fatal(err)
		}
		m.Reset()
	}
	return costs
}

// TestExampleIris trains Gorgonia's iris example for 100 steps from identical weights with
// gorgonia.Grad and with bulkad.Grad (separate graphs, the solver unchanged); the cost curves
// must agree to 1e-9 and the cost must fall.
func TestExampleIris(t *testing.T) {
	const steps = 100
	gc := trainIris(t, G.Grad, steps)
	bc := trainIris(t, bulkad.Grad, steps)
	for i := range gc {
		if math.Abs(gc[i]-bc[i]) > 1e-9*math.Max(1, math.Abs(gc[i])) {
			t.Fatalf("step %d: cost %v with gorgonia.Grad, %v with bulkad.Grad", i, gc[i], bc[i])
		}
	}
	if !(bc[steps-1] < bc[0]) {
		t.Errorf("cost did not fall: %v → %v", bc[0], bc[steps-1])
	}
}
