// Package gorgoniasuite runs the gradient cases of Gorgonia v0.9.18's own test files against
// bulkad: the same graphs, built here, with bulkad.Grad where Gorgonia's tests call Grad (or
// Backpropagate), run on a TapeMachine and compared with the expected numbers of Gorgonia's
// tables. Where a table and bulkad disagree, central differences in float64 decide and the
// case records who is wrong.
package gorgoniasuite

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/bulkad/bulkad"
	"github.com/bulkad/bulkad/examples/opgraphs"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// floats copies a value's data as float64s.
func floats(v G.Value) []float64 { return opgraphs.Floats(v) }

// run builds a TapeMachine over g, runs it once and closes it, turning a panic into an error.
func run(g *G.ExprGraph, opts ...G.VMOpt) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("tape machine panicked: %v", r)
		}
	}()
	m := G.NewTapeMachine(g, opts...)
	defer m.Close()
	return m.RunAll()
}

// bulkadGrads differentiates cost w.r.t. wrt with bulkad.Grad, runs the graph and returns the
// cost and the gradient values.
func bulkadGrads(cost *G.Node, wrt ...*G.Node) (float64, [][]float64, error) {
	grads, err := bulkad.Grad(cost, wrt...)
	if err != nil {
		return 0, nil, err
	}
	if err := run(cost.Graph()); err != nil {
		return 0, nil, err
	}
	out := make([][]float64, len(grads))
	for i, gn := range grads {
		out[i] = floats(gn.Value())
	}
	return floats(cost.Value())[0], out, nil
}

// gradOfSum returns bulkad's gradients of Σ ret with respect to wrt, run on a TapeMachine;
// it fails the test on any error, including errOp (that of the op that built ret).
func gradOfSum(t *testing.T, ret *G.Node, errOp error, wrt ...*G.Node) [][]float64 {
	t.Helper()
	if errOp != nil {
		t.Fatal(errOp)
	}
	cost, err := G.Sum(ret)
	if err != nil {
		t.Fatal(err)
	}
	_, grads := mustGrads(t, cost, wrt...)
	return grads
}

// mustGrads is bulkadGrads failing the test on an error.
func mustGrads(t *testing.T, cost *G.Node, wrt ...*G.Node) (float64, [][]float64) {
	t.Helper()
	c, grads, err := bulkadGrads(cost, wrt...)
	if err != nil {
		t.Fatal(err)
	}
	return c, grads
}

// builtGrads builds b's graph and returns bulkad's cost and gradients of it, failing the test
// on any error.
func builtGrads(t *testing.T, b builder) (float64, [][]float64) {
	t.Helper()
	cost, wrt, err := b()
	if err != nil {
		t.Fatal(err)
	}
	return mustGrads(t, cost, wrt...)
}

// denseMean is the head of Gorgonia's normalisation tests: y (reshaped to fc's shape when it
// has more than two dimensions) times fcᵀ, and the mean of that product.
func denseMean(t *testing.T, y, fc *G.Node) (prod, cost *G.Node) {
	t.Helper()
	var err error
	if y.Dims() > 2 {
		if y, err = G.Reshape(y, fc.Shape()); err != nil {
			t.Fatal(err)
		}
	}
	fcT, err := G.Transpose(fc, 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	if prod, err = G.Mul(y, fcT); err != nil {
		t.Fatal(err)
	}
	if cost, err = G.Mean(prod); err != nil {
		t.Fatal(err)
	}
	return prod, cost
}

// gradAndRun adds bulkad's gradient nodes of cost with respect to wrt and runs the graph on a
// TapeMachine that binds the dual values of dual (Gorgonia's own tests read those nodes'
// gradients); it fails the test on any error.
func gradAndRun(t *testing.T, cost *G.Node, dual G.Nodes, wrt ...*G.Node) G.Nodes {
	t.Helper()
	grads, err := bulkad.Grad(cost, wrt...)
	if err != nil {
		t.Fatal(err)
	}
	m := G.NewTapeMachine(cost.Graph(), G.BindDualValues(dual...))
	defer m.Close()
	if err := m.RunAll(); err != nil {
		t.Fatal(err)
	}
	return grads
}

// meanSquaredError is mean((out − y)²), the cost of Gorgonia's pooling and ByIndices tests.
func meanSquaredError(out, y *G.Node) (*G.Node, error) {
	d, err := G.Sub(out, y)
	if err != nil {
		return nil, err
	}
	sq, err := G.Square(d)
	if err != nil {
		return nil, err
	}
	return G.Mean(sq)
}

// builder builds a fresh graph with the scalar cost of a case and returns it with the nodes to
// differentiate; values are set (WithValue) so that a second call gives an equal graph.
type builder func() (cost *G.Node, wrt G.Nodes, err error)

// centralDiff returns d cost / d wrt[k] by central differences in float64: the graph is built
// again for every evaluation with wrt[k]'s entry i moved by ±h (forward pass only).
func centralDiff(b builder, k int, h float64) ([]float64, error) {
	_, wrt, err := b()
	if err != nil {
		return nil, err
	}
	all := make([]int, wrt[k].Shape().TotalSize())
	for i := range all {
		all[i] = i
	}
	return centralDiffAt(b, k, h, all)
}

// readTable decodes the JSON file testdata/name (a table of Gorgonia's tests) into v.
func readTable(t *testing.T, name string, v any) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, v); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
}

// maxAbsDiff is the largest |a[i]-b[i]| (Inf when the lengths differ).
func maxAbsDiff(a, b []float64) float64 {
	if len(a) != len(b) {
		return math.Inf(1)
	}
	m := 0.0
	for i := range a {
		if d := math.Abs(a[i] - b[i]); d > m || math.IsNaN(d) {
			m = d
		}
	}
	return m
}

// twoScalars is a graph with the float64 scalar inputs x = x0 and y = y0 of Gorgonia's
// smallest examples.
func twoScalars(x0, y0 float64) (g *G.ExprGraph, x, y *G.Node) {
	g = G.NewGraph()
	x = G.NewScalar(g, tensor.Float64, G.WithName("x"), G.WithValue(x0))
	y = G.NewScalar(g, tensor.Float64, G.WithName("y"), G.WithValue(y0))
	return g, x, y
}

// rangedInit is the initialiser RangedFromWithStep(start, step) with the arguments in dtype dt,
// as Gorgonia's tests write them (float32 literals in the float32 cases).
func rangedInit(dt tensor.Dtype, start, step float64) G.NodeConsOpt {
	if dt == tensor.Float32 {
		return G.WithInit(G.RangedFromWithStep(float32(start), float32(step)))
	}
	return G.WithInit(G.RangedFromWithStep(start, step))
}

// inputNode makes an input node holding a copy of data.
func inputNode(g *G.ExprGraph, dt tensor.Dtype, shape tensor.Shape, data []float64, name string) *G.Node {
	return G.NewTensor(g, dt, len(shape), G.WithShape(shape...), G.WithName(name), G.WithValue(opgraphs.Dense(dt, shape, data)))
}

// gorgoniaGrads differentiates a fresh graph from b with gorgonia.Grad, runs it and returns
// the gradient values.
func gorgoniaGrads(b builder) ([][]float64, error) {
	cost, wrt, err := b()
	if err != nil {
		return nil, err
	}
	grads, err := G.Grad(cost, wrt...)
	if err != nil {
		return nil, err
	}
	if err := run(cost.Graph()); err != nil {
		return nil, err
	}
	out := make([][]float64, len(grads))
	for i, gn := range grads {
		out[i] = floats(gn.Value())
	}
	return out, nil
}

// centralDiffAt is centralDiff at the listed entries only (for big inputs).
func centralDiffAt(b builder, k int, h float64, entries []int) ([]float64, error) {
	out := make([]float64, len(entries))
	eval := func(i int, d float64) (float64, error) {
		cost, wrt, err := b()
		if err != nil {
			return 0, err
		}
		if err := perturb(wrt[k], i, d); err != nil {
			return 0, err
		}
		if err := run(cost.Graph()); err != nil {
			return 0, err
		}
		return floats(cost.Value())[0], nil
	}
	for j, i := range entries {
		p, err := eval(i, h)
		if err != nil {
			return nil, err
		}
		m, err := eval(i, -h)
		if err != nil {
			return nil, err
		}
		out[j] = (p - m) / (2 * h)
	}
	return out, nil
}

// pick returns xs at the listed entries.
func pick(xs []float64, entries []int) []float64 {
	out := make([]float64, len(entries))
	for j, i := range entries {
		out[j] = xs[i]
	}
	return out
}

// everyNth lists 0, n, 2n, … below size, and size-1.
func everyNth(size, n int) []int {
	var out []int
	for i := 0; i < size; i += n {
		out = append(out, i)
	}
	if out[len(out)-1] != size-1 {
		out = append(out, size-1)
	}
	return out
}

// perturb adds d to entry i of n's value (a tensor in place, a scalar through Let).
func perturb(n *G.Node, i int, d float64) error {
	switch data := n.Value().Data().(type) {
	case []float64:
		data[i] += d
	case []float32:
		data[i] += float32(d)
	case float64:
		return G.Let(n, data+d)
	case float32:
		return G.Let(n, data+float32(d))
	default:
		return fmt.Errorf("perturb: unsupported data %T", data)
	}
	return nil
}

// trainSolver differentiates cost with grad, then runs steps of a TapeMachine (dual values
// bound to learnables) and solver, and returns the cost at each step.
func trainSolver(t *testing.T, grad gradFunc, cost *G.Node, learnables G.Nodes, solver G.Solver, steps int) []float64 {
	t.Helper()
	if _, err := grad(cost, learnables...); err != nil {
		t.Fatal(err)
	}
	m := G.NewTapeMachine(cost.Graph(), G.BindDualValues(learnables...))
	defer m.Close()
	var costs []float64
	for i := 0; i < steps; i++ {
		if err := m.RunAll(); err != nil {
			t.Fatal(err)
		}
		costs = append(costs, floats(cost.Value())[0])
		if err := solver.Step(G.NodesToValueGrads(learnables)); err != nil {
			t.Fatal(err)
		}
		m.Reset()
	}
	return costs
}

// sameCurves trains with gorgonia.Grad and with bulkad.Grad (separate graphs from identical
// weights): the cost curves must agree to 1e-9 relative and the cost must fall.
func sameCurves(t *testing.T, train func(*testing.T, gradFunc, int) []float64, steps int) {
	t.Helper()
	gc := train(t, G.Grad, steps)
	bc := train(t, bulkad.Grad, steps)
	for i := range gc {
		if math.Abs(gc[i]-bc[i]) > 1e-9*math.Max(1, math.Abs(gc[i])) {
			t.Fatalf("step %d: cost %v with gorgonia.Grad, %v with bulkad.Grad", i, gc[i], bc[i])
		}
	}
	if !(bc[steps-1] < bc[0]) {
		t.Errorf("cost did not fall: %v → %v", bc[0], bc[steps-1])
	}
}

// nearTable checks got against a table's want entry by entry: |Δ| ≤ tol·(1 + |want|).
func nearTable(t *testing.T, name string, got, want []float64, tol float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s: %d entries, Gorgonia's table %d", name, len(got), len(want))
		return
	}
	for i := range got {
		if math.Abs(got[i]-want[i]) > tol*(1+math.Abs(want[i])) {
			t.Errorf("%s[%d] = %v, Gorgonia's table %v (all: %v)", name, i, got[i], want[i], got)
			return
		}
	}
}
