package gorgoniasuite

import (
	"encoding/json"
	"os"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// TestExampleSymbolicDiff is example_symdiff_test.go's Example_symbolicDiff: z = x + y at
// x = 2, y = 2.5 gives z = 4.5 and dz/dx = dz/dy = 1, read both from the returned gradient
// nodes and from x.Grad() and y.Grad().
func TestExampleSymbolicDiff(t *testing.T) {
	g := G.NewGraph()
	x := G.NewScalar(g, tensor.Float64, G.WithName("x"), G.WithValue(2.0))
	y := G.NewScalar(g, tensor.Float64, G.WithName("y"), G.WithValue(2.5))
	z, err := G.Add(x, y)
	if err != nil {
		t.Fatal(err)
	}
	got, grads := mustGrads(t, z, x, y)
	if got != 4.5 || grads[0][0] != 1 || grads[1][0] != 1 {
		t.Errorf("z = %v, dz/dx = %v, dz/dy = %v; Gorgonia's output 4.5, 1, 1", got, grads[0], grads[1])
	}
	for _, n := range []*G.Node{x, y} {
		v, err := n.Grad()
		if err != nil {
			t.Fatalf("%s.Grad(): %v", n.Name(), err)
		}
		if d := floats(v); len(d) != 1 || d[0] != 1 {
			t.Errorf("%s.Grad() = %v, Gorgonia's output 1", n.Name(), d)
		}
	}
}

// TestExampleBatchedMatMulWithBackprop is example_linalg_test.go's
// ExampleBatchedMatMul_withBackprop: a, b of shape [2,4,3,9] holding 1… and 13…,
// c = BatchedMatMul(a, b, false, true), cost Σ c; the printed c and ∂/∂a are kept in
// testdata/batched_matmul_backprop.json.
func TestExampleBatchedMatMulWithBackprop(t *testing.T) {
	raw, err := os.ReadFile("testdata/batched_matmul_backprop.json")
	if err != nil {
		t.Fatal(err)
	}
	var want struct {
		C     []float64 `json:"c"`
		GradA []float64 `json:"gradA"`
	}
	if err := json.Unmarshal(raw, &want); err != nil {
		t.Fatal(err)
	}
	g := G.NewGraph()
	a := G.NewTensor(g, tensor.Float64, 4, G.WithShape(2, 4, 3, 9), G.WithInit(G.RangedFrom(1)), G.WithName("a"))
	b := G.NewTensor(g, tensor.Float64, 4, G.WithShape(2, 4, 3, 9), G.WithInit(G.RangedFrom(13)), G.WithName("b"))
	c, err := G.BatchedMatMul(a, b, false, true)
	grads := gradOfSum(t, c, err, a, b)
	if d := maxAbsDiff(floats(c.Value()), want.C); d != 0 {
		t.Errorf("c differs from Gorgonia's output by %g", d)
	}
	if d := maxAbsDiff(grads[0], want.GradA); d != 0 {
		t.Errorf("∂/∂a = %v, Gorgonia's output %v", grads[0], want.GradA)
	}
}
