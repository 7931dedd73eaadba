package gorgoniasuite

import (
	"testing"

	"github.com/bulkad/bulkad"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// TestIssue182 is known_issues_test.go's TestIssue182: z = (x ⊙ a)·b with a a constant (2, 2, 2),
// b = −0.5, x = (1, 1, 1); after four runs of one TapeMachine (Reset between them) the gradient
// node must still hold −1 in every entry (a gradient must not accumulate across runs).
// Gorgonia differentiates the vector z itself (seeded with ones); here the cost is Σ z, the same
// vector-Jacobian product.
func TestIssue182(t *testing.T) {
	g := G.NewGraph()
	x := inputNode(g, tensor.Float64, tensor.Shape{3}, []float64{1, 1, 1}, "x")
	a := G.NewConstant(tensor.New(tensor.WithBacking([]float64{2, 2, 2}), tensor.WithShape(3)))
	b := G.NewScalar(g, tensor.Float64, G.WithName("b"), G.WithValue(-0.5))
	z := G.Must(G.Mul(G.Must(G.Mul(x, a)), b))
	dz, err := bulkad.Grad(G.Must(G.Sum(z)), x)
	if err != nil {
		t.Fatal(err)
	}
	m := G.NewTapeMachine(g)
	defer m.Close()
	for turn := 0; turn < 4; turn++ {
		if err := m.RunAll(); err != nil {
			t.Fatalf("turn %d: %v", turn, err)
		}
		m.Reset()
	}
	if got := floats(dz[0].Value()); maxAbsDiff(got, []float64{-1, -1, -1}) != 0 {
		t.Errorf("∂/∂x after 4 runs = %v, Gorgonia's test −1, −1, −1", got)
	}
}

// TestIssue363 is known_issues_test.go's TestIssue363: z = −(x + y) at x = 2.5, y = 2; the
// gradients must not be zero (Gorgonia's LispMachine once gave 0): −1 each, by hand.
func TestIssue363(t *testing.T) {
	_, x, y := twoScalars(2.5, 2.0)
	z := G.Must(G.Neg(G.Must(G.Add(x, y))))
	v, grads := mustGrads(t, z, x, y)
	if v != -4.5 || grads[0][0] != -1 || grads[1][0] != -1 {
		t.Errorf("z = %v, ∂x %v, ∂y %v; want −4.5, −1, −1", v, grads[0], grads[1])
	}
}
