package gorgoniasuite

import (
	"math"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// TestSoftMax is operations_test.go's TestSoftMax: cost = −log SoftMax(x)[2] at
// x = (0.1, 0.2, −0.3, 0.4, 0.5); the gradient against Gorgonia's correctXGrad (its
// floatsEqual64 tolerance is 1e-8) and read both from the gradient node and x.Grad().
func TestSoftMax(t *testing.T) {
	g := G.NewGraph()
	x := inputNode(g, tensor.Float64, tensor.Shape{5}, []float64{0.1, 0.2, -0.3, 0.4, 0.5}, "x")
	sm := G.Must(G.SoftMax(x))
	cost := G.Must(G.Slice(G.Must(G.Neg(G.Must(G.Log(sm)))), G.S(2)))
	_, grads := mustGrads(t, cost, x)
	want := []float64{0.178025447751409, 0.1967485475322529, -0.8806659736677602, 0.24030921861990098, 0.2655827597641975}
	if d := maxAbsDiff(grads[0], want); d > 1e-12 {
		t.Errorf("∂/∂x = %v, Gorgonia's correctXGrad %v", grads[0], want)
	}
	xg, err := x.Grad()
	if err != nil {
		t.Fatal(err)
	}
	if d := maxAbsDiff(floats(xg), want); d > 1e-12 || math.IsNaN(d) {
		t.Errorf("x.Grad() = %v, Gorgonia's correctXGrad %v", floats(xg), want)
	}
}
