package raise

import (
	"fmt"
	"math"
	"math/rand"
	"slices"
	"testing"

	"github.com/bulkad/bulkad/internal/testutil"
	kern "github.com/bulkad/bulkad/kernel"

	"github.com/bulkad/bulkad/core"
	"github.com/bulkad/bulkad/core/tensors"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Helpers shared by the package's tests: input nodes, running raised programs on a
// TapeMachine, and comparing their values with package core's evaluator or each other.

// input makes a graph input node holding the given float64 or int64 data (one element for
// shape ()).
func input(t *testing.T, g *gorgonia.ExprGraph, name string, sh []int, data any) *gorgonia.Node {
	t.Helper()
	return inputNode(t, g, name, sh, tensor.New(tensor.WithShape(sh...), tensor.WithBacking(data)))
}

// inputNode makes an input node of shape sh (a scalar node for shape ()) holding a copy of d.
func inputNode(t *testing.T, g *gorgonia.ExprGraph, name string, sh []int, d *tensor.Dense) *gorgonia.Node {
	t.Helper()
	if d.Dims() != len(sh) {
		t.Fatalf("input %s: tensor of shape %v for shape %v", name, d.Shape(), sh)
	}
	n, err := testutil.InputNode(g, name, d)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// values is a copy of n's value as a flat slice.
func values(t *testing.T, n *gorgonia.Node) any {
	t.Helper()
	s, err := flat(n.Value())
	if err != nil {
		t.Fatal(err)
	}
	switch x := s.(type) {
	case []float32:
		return slices.Clone(x)
	case []float64:
		return slices.Clone(x)
	case []int64:
		return slices.Clone(x)
	case []bool:
		return slices.Clone(x)
	}
	return s
}

func randF(r *rand.Rand, n int) []float64 {
	v := make([]float64, n)
	for i := range v {
		v[i] = r.NormFloat64()
	}
	return v
}

func mustVar(t *testing.T, name string, ty core.Type) *core.Var {
	v, err := core.NewVar(name, ty)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// run raises p over the bindings, runs a TapeMachine twice (the second run exercises the
// preallocated path) and returns the result nodes.
func run(t *testing.T, g *gorgonia.ExprGraph, p *core.Program, bind map[string]*gorgonia.Node) []*gorgonia.Node {
	t.Helper()
	return runWith(t, g, p, bind, Options{})
}

// runWith is run with options.
func runWith(t *testing.T, g *gorgonia.ExprGraph, p *core.Program, bind map[string]*gorgonia.Node, opt Options) []*gorgonia.Node {
	t.Helper()
	outs, err := RaiseWith(g, p, bind, opt)
	if err != nil {
		t.Fatalf("RaiseWith(%v): %v", p, err)
	}
	runMachine(t, g, p, 2, nil)
	return outs
}

// runMachine runs a TapeMachine on g (raised from p) n times, calling check (unless nil)
// after each run.
func runMachine(t *testing.T, g *gorgonia.ExprGraph, p *core.Program, n int, check func(run int)) {
	t.Helper()
	m := gorgonia.NewTapeMachine(g)
	defer m.Close()
	for i := 0; i < n; i++ {
		if err := m.RunAll(); err != nil {
			t.Fatalf("RunAll(%v), run %d: %v", p, i, err)
		}
		if check != nil {
			check(i)
		}
		m.Reset()
	}
}

func sameValues(a, b any, tol float64) bool {
	switch x := a.(type) {
	case []float64:
		y, ok := b.([]float64)
		return ok && closeTo(x, y, tol)
	case []float32:
		y, ok := b.([]float32)
		return ok && closeTo(x, y, tol)
	case []int64:
		y, ok := b.([]int64)
		return ok && slices.Equal(x, y)
	}
	return false
}

// closeTo reports whether x and y have the same length and each x[i] is within
// tol·(1 + |y[i]|) of y[i], or both are NaN.
func closeTo[T float32 | float64](x, y []T, tol float64) bool {
	if len(x) != len(y) {
		return false
	}
	for i := range x {
		d := math.Abs(float64(x[i]) - float64(y[i]))
		if !(d <= tol*(1+math.Abs(float64(y[i]))) || (x[i] != x[i] && y[i] != y[i])) {
			return false
		}
	}
	return true
}

// raisedEqualsEval raises p with its parameters bound to nodes holding args, runs the nodes and
// requires the first result to equal core.EvalTuple's within tol; it returns the raised nodes.
func raisedEqualsEval(t *testing.T, p *core.Program, args map[string]*tensor.Dense, tol float64) []*gorgonia.Node {
	t.Helper()
	return raisedEqualsEvalWith(t, p, args, tol, Options{})
}

// raisedEqualsEvalWith is raisedEqualsEval with raise options.
func raisedEqualsEvalWith(t *testing.T, p *core.Program, args map[string]*tensor.Dense, tol float64, opt Options) []*gorgonia.Node {
	t.Helper()
	want, err := tensors.EvalTuple(p, args)
	if err != nil {
		t.Fatalf("core.EvalTuple: %v", err)
	}
	g := gorgonia.NewGraph()
	bind := bindParams(t, g, p, args)
	outs := runWith(t, g, p, bind, opt)
	got, err := flat(outs[0].Value())
	if err != nil {
		t.Fatal(err)
	}
	wantFlat, err := flat(want[0])
	if err != nil {
		t.Fatal(err)
	}
	if !sameValues(got, wantFlat, tol) {
		t.Errorf("%s\n raise %v\n  core %v", p, got, wantFlat)
	}
	return outs
}

// raiseRun raises p on a fresh graph holding copies of args (Vulkan v, nil for the CPU) and
// returns the flat values of its result after two TapeMachine runs.
func raiseRun(t *testing.T, p *core.Program, args map[string]*tensor.Dense, v *kern.Vulkan) any {
	t.Helper()
	g := gorgonia.NewGraph()
	bind := bindParams(t, g, p, args)
	return values(t, runWith(t, g, p, bind, Options{Vulkan: v})[0])
}

// randDense is a tensor of dtype dt ("f32" or "f64") and shape sh of standard normal draws.
func randDense(r *rand.Rand, dt string, sh ...int) *tensor.Dense {
	return testutil.RandDense(r, dt == "f32", sh...)
}

// compareScaled compares element-wise within tol·(1 + max |want|) (exactly when tol = 0) and
// describes the first difference ("" when none).
func compareScaled(got, want any, tol float64) string {
	g, w := toF64(got), toF64(want)
	if g == nil || w == nil || len(g) != len(w) {
		return fmt.Sprintf("types or lengths differ: %T[%d] vs %T[%d]", got, len(g), want, len(w))
	}
	return testutil.ScaledDiff(g, w, tol, 1)
}

// toF64 converts a slice of float64, float32 or int64 to float64s (nil for anything else).
func toF64(a any) []float64 {
	switch a.(type) {
	case []float64, []float32, []int64:
		out, _ := testutil.Floats(a)
		return out
	}
	return nil
}

// parseProgram parses "fn (params) => src", failing the test on an error.
func parseProgram(t *testing.T, params, src string) *core.Program {
	t.Helper()
	p, err := core.ParseProgram("fn (" + params + ") => " + src)
	if err != nil {
		t.Fatalf("parse %s: %v", src, err)
	}
	return p
}

// randArgs returns standard normal arguments for p's parameters (f64 unless float32).
func randArgs(r *rand.Rand, p *core.Program) map[string]*tensor.Dense {
	args := make(map[string]*tensor.Dense, len(p.Params))
	for _, v := range p.Params {
		dt := "f64"
		if v.Type().Dtype == core.Float32 {
			dt = "f32"
		}
		args[v.Name] = randDense(r, dt, v.Type().Shape...)
	}
	return args
}

// coarseRun raises p coarsely (Options{Coarse: true, FreshResults: true}) with its parameters
// bound to nodes holding args, runs it and returns its first result's flat values, core.Eval's
// (flat) and the kernel plans of the raised graph.
func coarseRun(t *testing.T, p *core.Program, args map[string]*tensor.Dense) (got, want any, plans []*kern.Plan) {
	t.Helper()
	ws, err := tensors.EvalTuple(p, args)
	if err != nil {
		t.Fatal(err)
	}
	g := gorgonia.NewGraph()
	bind := bindParams(t, g, p, args)
	outs := runWith(t, g, p, bind, Options{Coarse: true, FreshResults: true})
	for _, n := range outs[0].Graph().AllNodes() {
		if op, ok := n.Op().(*planOp); ok {
			plans = append(plans, op.Plan())
		}
	}
	return values(t, outs[0]), ws[0].Data(), plans
}

// setElem sets element i of a float64 or float32 tensor to v (rounded to float32).
func setElem(x *tensor.Dense, i int, v float64) {
	switch d := x.Data().(type) {
	case []float64:
		d[i] = v
	case []float32:
		d[i] = float32(v)
	}
}

// bindParams binds each of p's parameters to a new input node of g holding args[name].
func bindParams(t *testing.T, g *gorgonia.ExprGraph, p *core.Program, args map[string]*tensor.Dense) map[string]*gorgonia.Node {
	t.Helper()
	bind := make(map[string]*gorgonia.Node, len(p.Params))
	for _, v := range p.Params {
		bind[v.Name] = inputNode(t, g, v.Name, v.Type().Shape, args[v.Name])
	}
	return bind
}
