package gorgoniasuite

import (
	"hash"
	"hash/fnv"
	"math"
	"strings"
	"testing"

	"github.com/bulkad/bulkad"
	"github.com/chewxy/hm"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// TestIssue363 is known_issues_test.go's TestIssue363: z = −(x + y) at x = 2.5, y = 2; the
// gradients must not be zero (Gorgonia's LispMachine once gave 0): −1 each, by hand.
func TestIssue363(t *testing.T) {
	g := G.NewGraph()
	x := G.NewScalar(g, tensor.Float64, G.WithName("x"), G.WithValue(2.5))
	y := G.NewScalar(g, tensor.Float64, G.WithName("y"), G.WithValue(2.0))
	z := G.Must(G.Neg(G.Must(G.Add(x, y))))
	v, grads := mustGrads(t, z, x, y)
	if v != -4.5 || grads[0][0] != -1 || grads[1][0] != -1 {
		t.Errorf("z = %v, ∂x %v, ∂y %v; want −4.5, −1, −1", v, grads[0], grads[1])
	}
}

// TestExampleAutodiff is example_autodiff_test.go's Example_autodiff: z = x + y at x = 2,
// y = 2.5 prints z: 4.5, dz/dx: 1, dz/dy: 1 (read with x.Grad() after BindDualValues).
func TestExampleAutodiff(t *testing.T) {
	g := G.NewGraph()
	x := G.NewScalar(g, tensor.Float64, G.WithName("x"), G.WithValue(2.0))
	y := G.NewScalar(g, tensor.Float64, G.WithName("y"), G.WithValue(2.5))
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
type userOp struct{}

func (userOp) Arity() int { return 2 }
func (userOp) Type() hm.Type {
	a := hm.TypeVariable('a')
	return hm.NewFnType(a, a, a)
}
func (userOp) InferShape(ds ...G.DimSizer) (tensor.Shape, error) {
	return ds[0].(tensor.Shape).Clone(), nil
}
func (userOp) Do(vs ...G.Value) (G.Value, error) {
	return tensor.Add(vs[0].(tensor.Tensor), vs[1].(tensor.Tensor))
}
func (userOp) ReturnsPtr() bool      { return false }
func (userOp) CallsExtern() bool     { return false }
func (userOp) OverwritesInput() int  { return -1 }
func (userOp) WriteHash(h hash.Hash) { h.Write([]byte("userOp")) }
func (userOp) Hashcode() uint32 {
	h := fnv.New32a()
	h.Write([]byte("userOp"))
	return h.Sum32()
}
func (userOp) String() string { return "userOp" }

// TestExampleIop is example_iop_test.go's Example_iop: a user-defined op with its own SymDiff
// on the path. bulkad cannot know such an op's meaning (it translates the ops of its table and
// its own raised ops), so Grad refuses with an error naming the op and how to list the
// supported ones — never a wrong gradient (a documented difference from gorgonia.Grad).
func TestExampleIop(t *testing.T) {
	g := G.NewGraph()
	x := G.NewTensor(g, tensor.Float64, 4, G.WithShape(4, 5, 6, 7), G.WithName("x"), G.WithInit(G.Ones()))
	y := G.NewTensor(g, tensor.Float64, 4, G.WithShape(4, 5, 6, 7), G.WithName("y"), G.WithInit(G.Zeroes()))
	z, err := G.ApplyOp(userOp{}, x, y)
	if err != nil {
		t.Fatal(err)
	}
	_, err = bulkad.Grad(G.Must(G.Sum(z)), x, y)
	if err == nil || !strings.Contains(err.Error(), "userOp") || !strings.Contains(err.Error(), "adapter.SupportedOps()") {
		t.Errorf("user-defined op on the path: %v; want an error naming it and adapter.SupportedOps()", err)
	}
}

// TestAdamSolverPrecision is solvers_test.go's TestAdamSolverPrecision: weights [n, 1] of
// ones, input [1, n] set to d = 0, 0.1, …, 0.9 in turn (ten steps; the loop variable
// accumulates float32 round-off for both dtypes, as in Gorgonia's test), loss mean(x·w),
// one Adam step (learn rate 0.1) per input; the final weights against the table.
func TestAdamSolverPrecision(t *testing.T) {
	for _, c := range []struct {
		dt   tensor.Dtype
		size int
		want float64
	}{{tensor.Float32, 4, 0.18293014}, {tensor.Float64, 8, 0.18293561851374684}} {
		g := G.NewGraph()
		w := G.NewTensor(g, c.dt, 2, G.WithShape(c.size, 1), G.WithInit(G.Ones()), G.WithName("weights"))
		x := G.NewTensor(g, c.dt, 2, G.WithShape(1, c.size), G.WithName("x"))
		loss := G.Must(G.Mean(G.Must(G.Mul(x, w))))
		if _, err := bulkad.Grad(loss, w); err != nil {
			t.Fatal(err)
		}
		solver := G.NewAdamSolver(G.WithLearnRate(0.1))
		m := G.NewTapeMachine(g, G.BindDualValues(w))
		var inputs []float64
		for d := float32(0); d < 1; d += 0.1 { // Gorgonia's loop variable is float32 for both dtypes
			inputs = append(inputs, float64(d))
		}
		for _, d := range inputs {
			vals := make([]float64, c.size)
			for i := range vals {
				vals[i] = d
			}
			if err := G.Let(x, tensorOf(c.dt, tensor.Shape{1, c.size}, vals)); err != nil {
				t.Fatal(err)
			}
			if err := m.RunAll(); err != nil {
				t.Fatal(err)
			}
			if err := solver.Step([]G.ValueGrad{w}); err != nil {
				t.Fatal(err)
			}
			m.Reset()
		}
		m.Close()
		tol := 1e-12
		if c.dt == tensor.Float32 {
			tol = 1e-6
		}
		for i, v := range floats(w.Value()) {
			if math.Abs(v-c.want) > tol {
				t.Errorf("%v: weight %d = %.10g, the table %.10g", c.dt, i, v, c.want)
				break
			}
		}
	}
}
