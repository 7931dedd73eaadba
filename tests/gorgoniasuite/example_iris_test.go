package gorgoniasuite

import (
	"math/rand"
	"testing"

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
	return trainSolver(t, grad, cost, G.Nodes{theta}, G.NewVanillaSolver(G.WithLearnRate(0.001)), steps)
}

// TestExampleIris trains Gorgonia's iris example for 100 steps from identical weights with
// gorgonia.Grad and with bulkad.Grad (separate graphs, the solver unchanged); the cost curves
// must agree to 1e-9 and the cost must fall.
func TestExampleIris(t *testing.T) {
	const steps = 100
	sameCurves(t, trainIris, steps)
}
