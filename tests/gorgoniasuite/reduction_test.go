package gorgoniasuite

import (
	"fmt"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// TestMaxOpGrad is op_reduction_test.go's TestMaxOpGrad: Gorgonia back-propagates an output
// gradient through Max along some axes; here the same vector-Jacobian product is the gradient
// of Σ Max(x, along) ⊙ outGrad (outGrad an input held constant).
func TestMaxOpGrad(t *testing.T) {
	cases := []struct {
		dt      tensor.Dtype
		shape   tensor.Shape
		along   []int
		outGrad []float64
		want    []float64
	}{
		{tensor.Float64, tensor.Shape{6}, nil, []float64{1}, []float64{0, 0, 0, 0, 0, 1}},
		{tensor.Float32, tensor.Shape{6}, []int{0}, []float64{1}, []float64{0, 0, 0, 0, 0, 1}},
		{tensor.Float32, tensor.Shape{6}, nil, []float64{1}, []float64{0, 0, 0, 0, 0, 1}},
		{tensor.Float32, tensor.Shape{3, 2}, []int{0}, []float64{0.2, 0.8}, []float64{0, 0, 0, 0, 0.2, 0.8}},
		{tensor.Float32, tensor.Shape{3, 2}, []int{1}, []float64{0.1, 0.3, 0.6}, []float64{0, 0.1, 0, 0.3, 0, 0.6}},
		{tensor.Float32, tensor.Shape{3, 2}, []int{0, 1}, []float64{1}, []float64{0, 0, 0, 0, 0, 1}},
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("%v along %v %v", c.shape, c.along, c.dt), func(t *testing.T) {
			g := G.NewGraph()
			x := inputNode(g, c.dt, c.shape, []float64{1, 2, 3, 4, 5, 6}, "x")
			y, err := G.Max(x, c.along...)
			if err != nil {
				t.Fatal(err)
			}
			var cost *G.Node
			if y.IsScalar() {
				og := G.NewScalar(g, c.dt, G.WithName("outGrad"), G.WithValue(scalarOf(c.dt, c.outGrad[0])))
				cost, err = G.Mul(y, og)
			} else {
				og := inputNode(g, c.dt, y.Shape(), c.outGrad, "outGrad")
				var p *G.Node
				if p, err = G.HadamardProd(y, og); err == nil {
					cost, err = G.Sum(p)
				}
			}
			if err != nil {
				t.Fatal(err)
			}
			_, grads := mustGrads(t, cost, x)
			if d := maxAbsDiff(grads[0], c.want); d > 1e-6 {
				t.Errorf("bulkad ∂/∂x = %v, Gorgonia's table %v", grads[0], c.want)
			}
		})
	}
}

// scalarOf is v as a Go scalar of dtype dt.
func scalarOf(dt tensor.Dtype, v float64) interface{} {
	if dt == tensor.Float32 {
		return float32(v)
	}
	return v
}

// TestMinMaxBetween is op_minmax_test.go's TestMinBetween and TestMaxBetween: the gradients of
// Σ MinBetween(a, b) and Σ MaxBetween(a, b) route each entry's 1 to the chosen operand.
func TestMinMaxBetween(t *testing.T) {
	cases := []struct {
		name         string
		op           func(a, b *G.Node) (*G.Node, error)
		wantA, wantB []float64
	}{
		{"MinBetween", G.MinBetween, []float64{0, 1, 1, 1}, []float64{1, 0, 0, 0}},
		{"MaxBetween", G.MaxBetween, []float64{1, 0, 0, 0}, []float64{0, 1, 1, 1}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g := G.NewGraph()
			a := inputNode(g, tensor.Float64, tensor.Shape{2, 2}, []float64{1000, 2, 3, 4}, "a")
			b := inputNode(g, tensor.Float64, tensor.Shape{2, 2}, []float64{100, 200, 300, 400}, "b")
			m, err := c.op(a, b)
			grads := gradOfSum(t, m, err, a, b)
			if maxAbsDiff(grads[0], c.wantA) != 0 || maxAbsDiff(grads[1], c.wantB) != 0 {
				t.Errorf("bulkad ∂/∂a = %v, ∂/∂b = %v; Gorgonia's table %v, %v", grads[0], grads[1], c.wantA, c.wantB)
			}
		})
	}
}
