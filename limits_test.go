package bulkad_test

import (
	"strings"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/bulkad/bulkad"
	"github.com/bulkad/bulkad/core"
)

// TestGradArrayLimit: a graph whose gradient needs an array of 8 TB (the outer product of a
// vector of a million entries with itself, never evaluated) gives an error from Grad that
// names the array's size, instead of killing the process; the same process then
// differentiates a small graph.
func TestGradArrayLimit(t *testing.T) {
	t.Setenv(core.ArrayLimitEnv, "")
	g := G.NewGraph()
	const n = 1000000
	x := G.NewVector(g, tensor.Float64, G.WithShape(n), G.WithName("x"))
	col := G.Must(G.Reshape(x, tensor.Shape{n, 1}))
	row := G.Must(G.Reshape(x, tensor.Shape{1, n}))
	cost := G.Must(G.Sum(G.Must(G.Tanh(G.Must(G.Mul(col, row))))))
	_, err := bulkad.Grad(cost, x)
	if err == nil || !strings.Contains(err.Error(), "[1000000,1000000] f64 needs 7.3 TiB, above the array limit") {
		t.Fatalf("Grad: %v", err)
	}
	t.Log(err)
	// still alive
	g2 := G.NewGraph()
	w := vec64(g2, "w", 1, 2, 3)
	c2 := G.Must(G.Sum(G.Must(G.Square(w))))
	grads, err := bulkad.Grad(c2, w)
	if err != nil {
		t.Fatal(err)
	}
	runGraph(t, g2)
	if got := grads[0].Value().Data().([]float64); got[2] != 6 { // ∂/∂w Σw² = 2w
		t.Errorf("gradient %v, want [2 4 6]", got)
	}
}
