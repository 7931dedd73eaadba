package gorgoniasuite

import (
	"math"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// TestUnaryDiff is operatorPointwise_unary_test.go's Test{Sin,Cos,Exp,Ln,Log2,Square,Sqrt,
// Inverse,Cube,Tanh,Sigmoid,Log1p,Expm1}Diff, TestAbs and TestSoftplus: the derivative of Σ f(x) is the formula the test
// states, at a scalar v and at a vector. Gorgonia draws v at random; here v = 0.7 and the vector
// is (−v, v), or (v, 2v) where f needs positive input. Gorgonia's tests check its LispMachine's
// DoDiff; here bulkad.Grad and gorgonia.Grad (TapeMachine) are both checked against the formula,
// and gorgoniaWrong records where Gorgonia's Grad is off (Log2).
func TestUnaryDiff(t *testing.T) {
	const v = 0.7
	cases := []struct {
		name          string
		op            func(*G.Node) (*G.Node, error)
		deriv         func(x float64) float64
		positive      bool
		gorgoniaWrong bool
	}{
		{"Sin", G.Sin, math.Cos, false, false},
		{"Cos", G.Cos, func(x float64) float64 { return -math.Sin(x) }, false, false},
		{"Exp", G.Exp, math.Exp, false, false},
		{"Ln", G.Log, func(x float64) float64 { return 1 / x }, true, false},
		{"Log2", G.Log2, func(x float64) float64 { return 1 / (x * math.Ln2) }, true, true},
		{"Square", G.Square, func(x float64) float64 { return 2 * x }, false, false},
		{"Sqrt", G.Sqrt, func(x float64) float64 { return 1 / (2 * math.Sqrt(x)) }, true, false},
		{"Inverse", G.Inverse, func(x float64) float64 { return -1 / (x * x) }, false, false},
		{"Cube", G.Cube, func(x float64) float64 { return 3 * x * x }, false, false},
		{"Tanh", G.Tanh, func(x float64) float64 { return 1 - math.Tanh(x)*math.Tanh(x) }, false, false},
		{"Sigmoid", G.Sigmoid, func(x float64) float64 { return math.Exp(-x) / ((1 + math.Exp(-x)) * (1 + math.Exp(-x))) }, false, false},
		{"Log1p", G.Log1p, func(x float64) float64 { return 1 / (1 + x) }, true, false},
		{"Expm1", G.Expm1, math.Exp, false, false},
		// TestAbs and TestSoftplus of the same file: sign(x) and sigmoid(x).
		{"Abs", G.Abs, func(x float64) float64 { return math.Copysign(1, x) }, false, false},
		{"Softplus", G.Softplus, func(x float64) float64 { return 1 / (1 + math.Exp(-x)) }, false, false},
	}
	for _, c := range cases {
		for _, scalar := range []bool{true, false} {
			xs := []float64{-v, v}
			if c.positive {
				xs = []float64{v, 2 * v}
			}
			if scalar {
				xs = []float64{v}
			}
			build := func() (*G.Node, G.Nodes, error) {
				g := G.NewGraph()
				var x *G.Node
				if scalar {
					x = G.NewScalar(g, tensor.Float64, G.WithName("x"), G.WithValue(xs[0]))
				} else {
					x = inputNode(g, tensor.Float64, tensor.Shape{len(xs)}, xs, "x")
				}
				y, err := c.op(x)
				if err != nil {
					return nil, nil, err
				}
				cost, err := G.Sum(y)
				return cost, G.Nodes{x}, err
			}
			name := c.name + "/vector"
			if scalar {
				name = c.name + "/scalar"
			}
			t.Run(name, func(t *testing.T) {
				want := make([]float64, len(xs))
				for i, x := range xs {
					want[i] = c.deriv(x)
				}
				_, grads := builtGrads(t, build)
				if d := maxAbsDiff(grads[0], want); d > 1e-12 {
					t.Errorf("bulkad: %v, formula %v", grads[0], want)
				}
				gg, err := gorgoniaGrads(build)
				if err != nil {
					t.Fatal(err)
				}
				if wrong := maxAbsDiff(gg[0], want) > 1e-9; wrong != c.gorgoniaWrong {
					t.Errorf("gorgonia.Grad: %v, formula %v (wrong=%v, recorded gorgoniaWrong=%v)", gg[0], want, wrong, c.gorgoniaWrong)
				}
			})
		}
	}
}
