package gorgoniasuite

import (
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// byIndicesMSE builds the graph of TestByIndicesOpFull: ByIndices picks rows idx of the 4×2
// range 0…7 along axis 0, and the cost is the MSE against want + shift.
func byIndicesMSE(idx []int, want []float64, shift float64) builder {
	return func() (*G.Node, G.Nodes, error) {
		g := G.NewGraph()
		ix := G.NewTensor(g, tensor.Int, 1, G.WithName("indices"), G.WithShape(len(idx)), G.WithValue(tensor.New(tensor.WithShape(len(idx)), tensor.WithBacking(append([]int(nil), idx...)))))
		in := inputNode(g, tensor.Float64, tensor.Shape{4, 2}, []float64{0, 1, 2, 3, 4, 5, 6, 7}, "input")
		out, err := G.ByIndices(in, ix, 0)
		if err != nil {
			return nil, nil, err
		}
		target := make([]float64, len(want))
		for i := range want {
			target[i] = want[i] + shift
		}
		y := inputNode(g, tensor.Float64, out.Shape(), target, "target")
		cost, err := meanSquaredError(out, y)
		return cost, G.Nodes{in}, err
	}
}

// checkByIndices runs bulkad.Grad on the graph with targets shifted by 0 (cost 0, as
// Gorgonia's test requires) and 1, and compares the gradient with central differences of
// Gorgonia's forward pass.
func checkByIndices(t *testing.T, idx []int, want []float64) {
	t.Helper()
	for _, shift := range []float64{0, 1} {
		b := byIndicesMSE(idx, want, shift)
		cost, wrt, err := b()
		if err != nil {
			t.Fatal(err)
		}
		got, grads, err := bulkadGrads(cost, wrt...)
		if err != nil {
			t.Fatalf("shift %v: %v", shift, err)
		}
		if shift == 0 && got != 0 {
			t.Errorf("cost %v, Gorgonia's test 0", got)
		}
		fd, err := centralDiff(b, 0, 0.25)
		if err != nil {
			t.Fatal(err)
		}
		if d := maxAbsDiff(grads[0], fd); d > 1e-12 {
			t.Errorf("shift %v: bulkad gradient %v, central differences of Gorgonia's forward %v", shift, grads[0], fd)
		}
	}
}

// TestByIndicesOpFull is op_by_indices_test.go's TestByIndicesOpFull, Example 0: ByIndices
// picks rows 0, 3, 2, 1 of a 4×2 range; the cost is the MSE against Gorgonia's expected output,
// which must be 0, with a zero gradient. A second target, the expected output plus 1, makes the
// gradient non-zero: central differences decide it.
func TestByIndicesOpFull(t *testing.T) {
	checkByIndices(t, []int{0, 3, 2, 1}, []float64{0, 1, 6, 7, 4, 5, 2, 3})
}

// TestByIndicesOutOfRange is TestByIndicesOpFull's Example 1 (the one case Gorgonia's test
// runs): rows 0, 3, 2, 1, 0, 5, 1 of a 4×2 range — index 5 is out of range; Gorgonia's table
// expects the output row [0 1] for it and an MSE of 0 against the table.
func TestByIndicesOutOfRange(t *testing.T) {
	checkByIndices(t, []int{0, 3, 2, 1, 0, 5, 1}, []float64{0, 1, 6, 7, 4, 5, 2, 3, 0, 1, 0, 1, 2, 3})
}
