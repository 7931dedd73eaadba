package gorgoniasuite

import (
	"fmt"
	"math"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// groupNormExpected is one row of Gorgonia's groupNormTestCases table (op_group_norm_test.go,
// v0.9.18), whose numbers are kept in testdata/group_norm_expected.json in table order.
type groupNormExpected struct {
	Output    []float64 `json:"output"`
	Cost      float64   `json:"cost"`
	InputGrad []float64 `json:"inputGrad"`
	BiasGrad  []float64 `json:"biasGrad"`
	ScaleGrad []float64 `json:"scaleGrad"`
}

// TestGroupNorm is op_group_norm_test.go's TestGroupNorm: GroupNorm(x, scale, bias) (reshaped to
// [N, rest] when 4-D), times the transpose of a weight matrix, mean as the cost; gradients
// w.r.t. x, the weight, scale and bias. Gorgonia's tolerance is 1e-3; bulkad meets 1e-6
// (relative to the entry's size when it is above 1).
func TestGroupNorm(t *testing.T) {
	var want []groupNormExpected
	readTable(t, "group_norm_expected.json", &want)
	cases := []struct {
		dt               tensor.Dtype
		xStart, xStep    float64
		xShape           tensor.Shape
		groups, channels int
		scaleShape       tensor.Shape
		tol              float64
	}{
		{tensor.Float64, 0.1, 2, tensor.Shape{2, 20, 2, 2}, 2, 20, tensor.Shape{1, 20, 1, 1}, 1e-6},
		{tensor.Float64, 0.5, 5, tensor.Shape{3, 2}, 2, 2, tensor.Shape{1, 2}, 1e-6},
		{tensor.Float64, 0.1, 2, tensor.Shape{2, 20, 2, 3}, 2, 20, tensor.Shape{1, 20, 1, 1}, 1e-6},
		{tensor.Float32, 0.5, 5, tensor.Shape{3, 2}, 2, 2, tensor.Shape{1, 2}, 1e-4},
	}
	if len(want) != len(cases) {
		t.Fatalf("testdata has %d rows, the table %d", len(want), len(cases))
	}
	for i, c := range cases {
		w := want[i]
		t.Run(fmt.Sprintf("Example #%d %v - %v", i+1, c.dt, c.xShape), func(t *testing.T) {
			g := G.NewGraph()
			x := G.NewTensor(g, c.dt, c.xShape.Dims(), G.WithShape(c.xShape...), G.WithInit(G.RangedFromWithStep(c.xStart, c.xStep)), G.WithName("x"))
			scale := G.NewTensor(g, c.dt, c.scaleShape.Dims(), G.WithShape(c.scaleShape...), G.WithInit(G.RangedFromWithStep(0.3, 0.3)), G.WithName("scale"))
			bias := G.NewTensor(g, c.dt, c.scaleShape.Dims(), G.WithShape(c.scaleShape...), G.WithInit(G.RangedFromWithStep(0.2, 0.2)), G.WithName("bias"))
			fc := G.NewTensor(g, c.dt, 2, G.WithShape(c.xShape[0], tensor.Shape(c.xShape[1:]).TotalSize()), G.WithInit(G.RangedFromWithStep(0.3, 0.3)), G.WithName("fcWeight"))
			y, err := G.GroupNorm(x, scale, bias, c.groups, c.channels, 1e-5)
			if err != nil {
				t.Fatal(err)
			}
			y, cost := denseMean(t, y, fc)
			got, grads := mustGrads(t, cost, x, fc, scale, bias)
			close := func(name string, got, want []float64) {
				if len(got) != len(want) {
					t.Errorf("%s: %d entries, Gorgonia's table %d", name, len(got), len(want))
					return
				}
				for j := range got {
					if math.Abs(got[j]-want[j]) > c.tol*math.Max(1, math.Abs(want[j])) {
						t.Errorf("%s[%d] = %v, Gorgonia's table %v", name, j, got[j], want[j])
						return
					}
				}
			}
			close("output", floats(y.Value()), w.Output)
			close("cost", []float64{got}, []float64{w.Cost})
			close("∂/∂x", grads[0], w.InputGrad)
			close("∂/∂bias", grads[3], w.BiasGrad)
			close("∂/∂scale", grads[2], w.ScaleGrad)
		})
	}
}
