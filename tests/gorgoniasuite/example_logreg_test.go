package gorgoniasuite

import (
	"math/rand"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// gradFunc is gorgonia.Grad or bulkad.Grad: the one-line switch.
type gradFunc func(cost *G.Node, wrt ...*G.Node) (G.Nodes, error)

// logRegData is the generated data of the logistic-regression port: x uniform in [0,1),
// labels 0/1, w uniform in [0,1) as in Gorgonia's example (tensor.Random and rand.Intn),
// from a fixed seed and at a small size.
func logRegData(n, feats int) (x, y, w []float64) {
	r := rand.New(rand.NewSource(1337))
	x = make([]float64, n*feats)
	for i := range x {
		x[i] = r.Float64()
	}
	y = make([]float64, n)
	for i := range y {
		y[i] = float64(r.Intn(2))
	}
	w = make([]float64, feats)
	for i := range w {
		w[i] = r.Float64()
	}
	return x, y, w
}

// trainLogReg is Gorgonia's examples/logisticregression at a small size: cost = mean binary
// cross-entropy of sigmoid(x·w + b) plus 0.01·Σw², plain gradient descent with learn rate 0.1
// (the example's update, done here in Go on the gradient values). It returns the cost at each
// step.
func trainLogReg(t *testing.T, grad gradFunc, steps int) []float64 {
	t.Helper()
	const n, feats = 64, 10
	xs, ys, ws := logRegData(n, feats)
	g := G.NewGraph()
	x := G.NewMatrix(g, tensor.Float64, G.WithName("x"), G.WithShape(n, feats), G.WithValue(tensor.New(tensor.WithShape(n, feats), tensor.WithBacking(xs))))
	y := G.NewVector(g, tensor.Float64, G.WithName("y"), G.WithShape(n), G.WithValue(tensor.New(tensor.WithShape(n), tensor.WithBacking(ys))))
	w := G.NewVector(g, tensor.Float64, G.WithName("w"), G.WithShape(feats), G.WithValue(tensor.New(tensor.WithShape(feats), tensor.WithBacking(ws))))
	b := G.NewScalar(g, tensor.Float64, G.WithName("bias"), G.WithValue(0.0))
	one := G.NewConstant(1.0)
	prob := G.Must(G.Sigmoid(G.Must(G.Add(G.Must(G.Mul(x, w)), b))))
	fst := G.Must(G.HadamardProd(G.Must(G.Neg(y)), G.Must(G.Log(prob))))
	snd := G.Must(G.HadamardProd(G.Must(G.Sub(one, y)), G.Must(G.Log(G.Must(G.Sub(one, prob))))))
	loss := G.Must(G.Mean(G.Must(G.Sub(fst, snd))))
	reg := G.Must(G.Mul(G.NewConstant(0.01), G.Must(G.Sum(G.Must(G.Square(w))))))
	cost := G.Must(G.Add(loss, reg))
	grads, err := grad(cost, w, b)
	if err != nil {
		t.Fatal(err)
	}
	m := G.NewTapeMachine(g)
	defer m.Close()
	var costs []float64
	for i := 0; i < steps; i++ {
		m.Reset()
		if err := m.RunAll(); err != nil {
			t.Fatal(err)
		}
		costs = append(costs, floats(cost.Value())[0])
		gw := floats(grads[0].Value())
		gb := floats(grads[1].Value())[0]
		wd := w.Value().Data().([]float64)
		for j := range wd {
			wd[j] -= 0.1 * gw[j]
		}
		if err := G.Let(b, floats(b.Value())[0]-0.1*gb); err != nil {
			t.Fatal(err)
		}
	}
	return costs
}

// TestExampleLogisticRegression trains Gorgonia's logistic-regression example for 30 steps
// from identical weights with gorgonia.Grad and with bulkad.Grad (separate graphs); the cost
// curves must agree to 1e-9 and the cost must fall.
func TestExampleLogisticRegression(t *testing.T) {
	const steps = 30
	sameCurves(t, trainLogReg, steps)
}
