package gorgoniasuite

import (
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// tensordotCase is Σ Tensordot(aAxes, bAxes, a, b) with Gorgonia's expected value (nil: not
// stated) and gradients.
type tensordotCase struct {
	name                 string
	aShape, bShape       tensor.Shape
	aData, bData         []float64
	aAxes, bAxes         []int
	want                 []float64
	wantAGrad, wantBGrad []float64
}

func runTensordot(t *testing.T, cases []tensordotCase) {
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g := G.NewGraph()
			a := inputNode(g, tensor.Float64, c.aShape, c.aData, "a")
			b := inputNode(g, tensor.Float64, c.bShape, c.bData, "b")
			td, err := G.Tensordot(c.aAxes, c.bAxes, a, b)
			grads := gradOfSum(t, td, err, a, b)
			if got := floats(td.Value()); c.want != nil && maxAbsDiff(got, c.want) != 0 {
				t.Errorf("value %v, Gorgonia's test %v", got, c.want)
			}
			if maxAbsDiff(grads[0], c.wantAGrad) != 0 || maxAbsDiff(grads[1], c.wantBGrad) != 0 {
				t.Errorf("∂/∂a = %v, ∂/∂b = %v; Gorgonia's test %v, %v", grads[0], grads[1], c.wantAGrad, c.wantBGrad)
			}
		})
	}
}

// TestTensordotOpDoDiff is op_math_test.go's TestTensordotOpDoDiff: Gorgonia calls the
// tensordot op's DoDiff with an output gradient of ones, which is the gradient of Σ Tensordot.
func TestTensordotOpDoDiff(t *testing.T) {
	runTensordot(t, []tensordotCase{
		{"scalars", tensor.Shape{1}, tensor.Shape{1}, []float64{2}, []float64{21}, []int{0}, []int{0}, nil, []float64{21}, []float64{2}},
		{"vectors", tensor.Shape{2}, tensor.Shape{2}, []float64{1, 2}, []float64{3, 4}, []int{0}, []int{0}, nil, []float64{3, 4}, []float64{1, 2}},
		{"matrix vector", tensor.Shape{2, 2}, tensor.Shape{2}, []float64{1, 2, 3, 4}, []float64{1, 2}, []int{1}, []int{0}, nil, []float64{1, 2, 1, 2}, []float64{4, 6}},
		{"matrix multiplication", tensor.Shape{2, 2}, tensor.Shape{2, 2}, []float64{1, 2, 3, 4}, []float64{1, 2, 3, 4}, []int{1}, []int{0}, nil, []float64{3, 7, 3, 7}, []float64{4, 4, 6, 6}},
		{"both axes", tensor.Shape{2, 2}, tensor.Shape{2, 2}, []float64{1, 2, 3, 4}, []float64{5, 6, 7, 8}, []int{1, 0}, []int{0, 1}, nil, []float64{5, 7, 6, 8}, []float64{1, 3, 2, 4}},
	})
}

// TestTensordot is operations_test.go's TestTensordot: Tensordot of RangedFrom tensors,
// back-propagated with an output gradient of ones (so: the gradient of Σ Tensordot), values
// and gradients from Gorgonia's test (the first, scalar-like case states only the value 42;
// its gradients 21 and 2 are a hand derivation).
func TestTensordot(t *testing.T) {
	rng := func(n int, from float64) []float64 {
		out := make([]float64, n)
		for i := range out {
			out[i] = from + float64(i)
		}
		return out
	}
	runTensordot(t, []tensordotCase{
		{"scalar-like", tensor.Shape{1}, tensor.Shape{1}, rng(1, 2), rng(1, 21), []int{0}, []int{0}, []float64{42}, []float64{21}, []float64{2}},
		{"vectors", tensor.Shape{2}, tensor.Shape{2}, rng(2, 1), rng(2, 3), []int{0}, []int{0}, []float64{11}, []float64{3, 4}, []float64{1, 2}},
		{"matrix vector", tensor.Shape{2, 2}, tensor.Shape{2}, rng(4, 0), rng(2, 0), []int{1}, []int{0}, []float64{1, 3}, []float64{0, 1, 0, 1}, []float64{2, 4}},
		{"matrix matrix", tensor.Shape{2, 2}, tensor.Shape{2, 2}, rng(4, 0), rng(4, 0), []int{1}, []int{1}, []float64{1, 3, 3, 13}, []float64{2, 4, 2, 4}, []float64{2, 4, 2, 4}},
		{"full contraction", tensor.Shape{2, 2}, tensor.Shape{2, 2}, rng(4, 0), rng(4, 0), []int{0, 1}, []int{0, 1}, []float64{14}, []float64{0, 1, 2, 3}, []float64{0, 1, 2, 3}},
	})
}
