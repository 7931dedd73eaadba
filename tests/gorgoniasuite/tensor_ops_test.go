package gorgoniasuite

import (
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// TestTransposeAndConcatOp are op_tensor_test.go's TestTransposeOp (Σ Aᵀ of a 2×3 range) and
// TestConcatOp (Σ Concat(0, x, x) at x = (1, 2)). Gorgonia's tests compare its TapeMachine with
// its LispMachine; here bulkad's gradient must equal the hand derivation (ones; twos, as x
// appears twice), gorgonia.Grad and central differences.
func TestTransposeAndConcatOp(t *testing.T) {
	cases := []struct {
		name  string
		build builder
		want  []float64
	}{
		{"Transpose", func() (*G.Node, G.Nodes, error) {
			g := G.NewGraph()
			a := G.NewMatrix(g, tensor.Float64, G.WithShape(2, 3), G.WithInit(G.RangedFrom(0)), G.WithName("A"))
			at, err := G.Transpose(a)
			if err != nil {
				return nil, nil, err
			}
			cost, err := G.Sum(at)
			return cost, G.Nodes{a}, err
		}, []float64{1, 1, 1, 1, 1, 1}},
		{"Concat", func() (*G.Node, G.Nodes, error) {
			g := G.NewGraph()
			x := inputNode(g, tensor.Float64, tensor.Shape{2}, []float64{1, 2}, "x")
			xx, err := G.Concat(0, x, x)
			if err != nil {
				return nil, nil, err
			}
			cost, err := G.Sum(xx)
			return cost, G.Nodes{x}, err
		}, []float64{2, 2}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, grads := builtGrads(t, c.build)
			if maxAbsDiff(grads[0], c.want) != 0 {
				t.Errorf("bulkad %v, want %v", grads[0], c.want)
			}
			compareWithGorgonia(t, c.build, nil, 0, 0.25, func(n int) []int { return everyNth(n, 1) })
		})
	}
}
