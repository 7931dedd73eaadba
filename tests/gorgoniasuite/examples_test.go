package gorgoniasuite

import (
	"strings"
	"testing"

	"github.com/bulkad/bulkad"
	"github.com/bulkad/bulkad/examples/opgraphs"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// TestExampleSymbolicDiff is example_symdiff_test.go's Example_symbolicDiff: z = x + y at
// x = 2, y = 2.5 gives z = 4.5 and dz/dx = dz/dy = 1, read both from the returned gradient
// nodes and from x.Grad() and y.Grad().
func TestExampleSymbolicDiff(t *testing.T) {
	_, x, y := twoScalars(2.0, 2.5)
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
	var want struct {
		C     []float64 `json:"c"`
		GradA []float64 `json:"gradA"`
	}
	readTable(t, "batched_matmul_backprop.json", &want)
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

// TestExampleAutodiff is example_autodiff_test.go's Example_autodiff: z = x + y at x = 2,
// y = 2.5 prints z: 4.5, dz/dx: 1, dz/dy: 1 (read with x.Grad() after BindDualValues).
func TestExampleAutodiff(t *testing.T) {
	g, x, y := twoScalars(2.0, 2.5)
	z := G.Must(G.Add(x, y))
	if _, err := bulkad.Grad(z, x, y); err != nil {
		t.Fatal(err)
	}
	if err := run(g, G.BindDualValues(x, y)); err != nil {
		t.Fatal(err)
	}
	xg, err1 := x.Grad()
	yg, err2 := y.Grad()
	if err1 != nil || err2 != nil || floats(z.Value())[0] != 4.5 || floats(xg)[0] != 1 || floats(yg)[0] != 1 {
		t.Errorf("z %v dz/dx %v dz/dy %v (%v %v); the example prints 4.5, 1, 1", z.Value(), xg, yg, err1, err2)
	}
}

// userOp is a user-defined op like example_iop_test.go's MyNewOp (x + y with its own SymDiff).
type userOp struct{ opgraphs.UserOp }

func (userOp) Do(vs ...G.Value) (G.Value, error) {
	return tensor.Add(vs[0].(tensor.Tensor), vs[1].(tensor.Tensor))
}

// TestExampleIop is example_iop_test.go's Example_iop: a user-defined op with its own SymDiff
// on the path. bulkad cannot know such an op's meaning (it translates the ops of its table and
// its own raised ops), so Grad refuses with an error naming the op and how to list the
// supported ones — never a wrong gradient (a documented difference from gorgonia.Grad).
func TestExampleIop(t *testing.T) {
	g := G.NewGraph()
	x := G.NewTensor(g, tensor.Float64, 4, G.WithShape(4, 5, 6, 7), G.WithName("x"), G.WithInit(G.Ones()))
	y := G.NewTensor(g, tensor.Float64, 4, G.WithShape(4, 5, 6, 7), G.WithName("y"), G.WithInit(G.Zeroes()))
	z, err := G.ApplyOp(userOp{opgraphs.UserOp{Name: "userOp", Inputs: 2}}, x, y)
	if err != nil {
		t.Fatal(err)
	}
	_, err = bulkad.Grad(G.Must(G.Sum(z)), x, y)
	if err == nil || !strings.Contains(err.Error(), "userOp") || !strings.Contains(err.Error(), "adapter.SupportedOps()") {
		t.Errorf("user-defined op on the path: %v; want an error naming it and adapter.SupportedOps()", err)
	}
}
