package gorgoniasuite

import (
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// TestTensordotOpDoDiff is op_math_test.go's TestTensordotOpDoDiff: Gorgonia calls the
// tensordot op's DoDiff with an output gradient of ones, which is the gradient of Σ Tensordot.
func TestTensordotOpDoDiff(t *testing.T) {
	cases := []struct {
		name                 string
		aShape, bShape       tensor.Shape
		aData, bData         []float64
		aAxes, bAxes         []int
		wantAGrad, wantBGrad []float64
	}{
		{"scalars", tensor.Shape{1}, tensor.Shape{1}, []float64{2}, []float64{21}, []int{0}, []int{0}, []float64{21}, []float64{2}},
		{"vectors", tensor.Shape{2}, tensor.Shape{2}, []float64{1, 2}, []float64{3, 4}, []int{0}, []int{0}, []float64{3, 4}, []float64{1, 2}},
		{"matrix vector", tensor.Shape{2, 2}, tensor.Shape{2}, []float64{1, 2, 3, 4}, []float64{1, 2}, []int{1}, []int{0}, []float64{1, 2, 1, 2}, []float64{4, 6}},
		{"matrix multiplication", tensor.Shape{2, 2}, tensor.Shape{2, 2}, []float64{1, 2, 3, 4}, []float64{1, 2, 3, 4}, []int{1}, []int{0}, []float64{3, 7, 3, 7}, []float64{4, 4, 6, 6}},
		{"both axes", tensor.Shape{2, 2}, tensor.Shape{2, 2}, []float64{1, 2, 3, 4}, []float64{5, 6, 7, 8}, []int{1, 0}, []int{0, 1}, []float64{5, 7, 6, 8}, []float64{1, 3, 2, 4}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g := G.NewGraph()
			a := inputNode(g, tensor.Float64, c.aShape, c.aData, "a")
			b := inputNode(g, tensor.Float64, c.bShape, c.bData, "b")
			td, err := G.Tensordot(c.aAxes, c.bAxes, a, b)
			if err != nil {
				t.Fatal(err)
			}
			cost, err := G.Sum(td)
			if err != nil {
				t.Fatal(err)
			}
			_, grads, err := bulkadGrads(cost, a, b)
			if err != nil {
				t.Fatal(err)
			}
			if maxAbsDiff(grads[0], c.wantAGrad) != 0 || maxAbsDiff(grads[1], c.wantBGrad) != 0 {
				t.Errorf("∂/∂a = %v, ∂/∂b = %v; Gorgonia's test %v, %v", grads[0], grads[1], c.wantAGrad, c.wantBGrad)
			}
		})
	}
}
