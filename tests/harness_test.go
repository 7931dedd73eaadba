package tests

import (
	"fmt"
	"math"
	"testing"

	"github.com/bulkad/bulkad"
	"github.com/bulkad/bulkad/examples/opgraphs"
	"github.com/bulkad/bulkad/internal/testutil"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// built is one deterministic graph: the same constructor called twice gives two graphs with
// the same values (used to compare bulkad and Gorgonia on separate graphs).
type built struct {
	g    *G.ExprGraph
	cost *G.Node
	wrt  G.Nodes
}

type ctor func() (built, error)

// mustBuild calls mk, failing the test when it cannot build the graph.
func mustBuild(t *testing.T, mk ctor) built {
	t.Helper()
	b, err := mk()
	if err != nil {
		t.Fatalf("building the graph: %v", err)
	}
	return b
}

// valuesOf copies a node's value as float64s.
func valuesOf(v G.Value) []float64 { return opgraphs.Floats(v) }

// runOnce runs a TapeMachine over g (binding dual values of wrt when bind) and returns it
// after one RunAll.
func runOnce(g *G.ExprGraph, bind G.Nodes, extra ...G.VMOpt) (m G.VM, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("tape machine panicked: %v", r)
		}
	}()
	opts := append([]G.VMOpt(nil), extra...)
	if bind != nil {
		opts = append(opts, G.BindDualValues(bind...))
	}
	m = G.NewTapeMachine(g, opts...)
	if err := m.RunAll(); err != nil {
		m.Close()
		return nil, err
	}
	return m, nil
}

// mustRunOnce is runOnce in a test: an error fails it, and the machine is closed when the
// test ends.
func mustRunOnce(t testing.TB, g *G.ExprGraph, bind G.Nodes, extra ...G.VMOpt) G.VM {
	t.Helper()
	m, err := runOnce(g, bind, extra...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return m
}

// bulkadTape differentiates with bulkad.Grad and returns the gradient node values after one
// TapeMachine run, plus the values seen through wrt.Grad() (BindDualValues).
func bulkadTape(t *testing.T, b built) (grads, dual [][]float64, nodes G.Nodes) {
	t.Helper()
	gs, err := bulkad.Grad(b.cost, b.wrt...)
	if err != nil {
		t.Fatalf("bulkad.Grad: %v", err)
	}
	m, err := runOnce(b.g, b.wrt)
	if err != nil {
		t.Fatalf("TapeMachine with bulkad gradients: %v", err)
	}
	defer m.Close()
	for i, n := range gs {
		grads = append(grads, valuesOf(n.Value()))
		gv, err := b.wrt[i].Grad()
		if err != nil {
			t.Fatalf("wrt %v: Grad(): %v", b.wrt[i], err)
		}
		dual = append(dual, valuesOf(gv))
	}
	return grads, dual, gs
}

// gorgoniaTape differentiates with gorgonia.Grad (on its own graph); ok is false when
// Gorgonia fails (error or panic).
func gorgoniaTape(b built) (grads [][]float64, err error) {
	defer func() {
		if r := recover(); r != nil {
			grads, err = nil, fmt.Errorf("gorgonia.Grad panicked: %v", r)
		}
	}()
	gs, err := G.Grad(b.cost, b.wrt...)
	if err != nil {
		return nil, err
	}
	m, err := runOnce(b.g, nil)
	if err != nil {
		return nil, err
	}
	defer m.Close()
	for _, n := range gs {
		grads = append(grads, valuesOf(n.Value()))
	}
	return grads, nil
}

// artifactRun evaluates the gradient artifact (package core's evaluator) on the values the
// graph's nodes hold after a forward run; gradients in wrt order.
func artifactRun(t *testing.T, b built) [][]float64 {
	t.Helper()
	d, err := bulkad.Differentiate(b.cost, b.wrt...)
	if err != nil {
		t.Fatalf("bulkad.Differentiate: %v", err)
	}
	// TraceExec binds copies: without it an intermediate node's value may have been
	// overwritten in place by a later op that reused its register.
	m, err := runOnce(b.g, nil, G.TraceExec())
	if err != nil {
		t.Fatalf("forward run: %v", err)
	}
	defer m.Close()
	args := map[string]*tensor.Dense{}
	for name, n := range d.Translation.Params {
		args[name] = dense(n.Value())
	}
	_, grads, err := d.Artifact.Run(args)
	if err != nil {
		t.Fatalf("Artifact.Run: %v\n%v", err, d)
	}
	var out [][]float64
	for _, name := range d.Translation.Wrt {
		out = append(out, valuesOf(grads[name]))
	}
	return out
}

func dense(v G.Value) *tensor.Dense {
	switch x := v.(type) {
	case *tensor.Dense:
		if is, ok := x.Data().([]int); ok { // Gorgonia's Int is the core language's i64
			i64 := make([]int64, len(is))
			for i, v := range is {
				i64[i] = int64(v)
			}
			return tensor.New(tensor.WithShape(x.Shape()...), tensor.WithBacking(i64))
		}
		return x
	case *G.F64:
		return tensor.New(tensor.FromScalar(float64(*x)))
	case *G.F32:
		return tensor.New(tensor.FromScalar(float32(*x)))
	case *G.I64:
		return tensor.New(tensor.FromScalar(int64(*x)))
	case *G.I:
		return tensor.New(tensor.FromScalar(int64(*x)))
	case *G.B:
		return tensor.New(tensor.FromScalar(bool(*x)))
	}
	return nil
}

// finiteDiff returns central differences of the cost w.r.t. up to maxPer elements of each wrt
// node (which must be inputs), on a forward-only graph; idx lists the elements probed.
func finiteDiff(t *testing.T, b built, h float64, maxPer int) (fd [][]float64, idx [][]int) {
	t.Helper()
	m := G.NewTapeMachine(b.g)
	defer m.Close()
	// Pristine copies of the wrt values, re-bound before every run: Gorgonia may write into an
	// input's backing array through an aliasing op (Reshape followed by an in-place op).
	vals := make([][]float64, len(b.wrt))
	for i, w := range b.wrt {
		if w.Dtype() != tensor.Float64 {
			t.Fatalf("finite differences: wrt %v is not float64", w)
		}
		vals[i] = valuesOf(w.Value())
	}
	cost := func() float64 {
		for i, w := range b.wrt {
			var fresh G.Value = G.NewF64(vals[i][0])
			if !w.IsScalar() {
				fresh = tensor.New(tensor.WithShape(w.Shape()...), tensor.WithBacking(append([]float64(nil), vals[i]...)))
			}
			if err := G.Let(w, fresh); err != nil {
				t.Fatalf("binding %v: %v", w, err)
			}
		}
		m.Reset()
		if err := m.RunAll(); err != nil {
			t.Fatalf("forward run: %v", err)
		}
		return valuesOf(b.cost.Value())[0]
	}
	for i := range b.wrt {
		data := vals[i]
		step := 1
		if len(data) > maxPer {
			step = (len(data) + maxPer - 1) / maxPer
		}
		var f []float64
		var ix []int
		for j := 0; j < len(data); j += step {
			f = append(f, testutil.CentralDiff(data, j, h, cost))
			ix = append(ix, j)
		}
		fd = append(fd, f)
		idx = append(idx, ix)
	}
	return fd, idx
}

// maxRelDiff is max |a-b| / max(1, max|b|) over two gradient lists.
func maxRelDiff(a, b [][]float64) float64 {
	if len(a) != len(b) {
		return math.Inf(1)
	}
	worst := 0.0
	for i := range a {
		if len(a[i]) != len(b[i]) {
			return math.Inf(1)
		}
		scale := 1.0
		for _, v := range b[i] {
			scale = math.Max(scale, math.Abs(v))
		}
		for j := range a[i] {
			d := math.Abs(a[i][j]-b[i][j]) / scale
			if d != d {
				return math.Inf(1)
			}
			worst = math.Max(worst, d)
		}
	}
	return worst
}

// pick restricts gradients to the probed elements.
func pick(gs [][]float64, idx [][]int) [][]float64 {
	out := make([][]float64, len(gs))
	for i, g := range gs {
		for _, j := range idx[i] {
			out[i] = append(out[i], g[j])
		}
	}
	return out
}

// checkAll runs the acceptance checks on one graph constructor: bulkad's TapeMachine gradients
// equal Artifact.Run (1e-12) and BindDualValues, match central differences (1e-6) and, unless
// gorgoniaWrong, Gorgonia's own Grad (1e-10). It returns Gorgonia's error, if any.
func checkAll(t *testing.T, mk ctor, gorgoniaWrong bool) error {
	t.Helper()
	fresh := func() built { return mustBuild(t, mk) }
	b1 := fresh()
	tape, dual, _ := bulkadTape(t, b1)
	if d := maxRelDiff(dual, tape); d != 0 {
		t.Errorf("wrt.Grad() (BindDualValues) differs from the gradient nodes by %g", d)
	}
	b2 := fresh()
	art := artifactRun(t, b2)
	if d := maxRelDiff(tape, art); d > 1e-12 {
		t.Errorf("TapeMachine gradients differ from Artifact.Run by %g (> 1e-12)", d)
	}
	b3 := fresh()
	fd, idx := finiteDiff(t, b3, 1e-5, 24)
	if d := maxRelDiff(pick(tape, idx), fd); d > 1e-6 {
		t.Errorf("gradients differ from central finite differences by %g (> 1e-6)\n bulkad %v\n fd     %v", d, pick(tape, idx), fd)
	}
	gg, gerr := gorgoniaTape(fresh())
	switch {
	case gerr != nil && !gorgoniaWrong:
		t.Logf("gorgonia.Grad refuses: %v", gerr)
	case gerr == nil && !gorgoniaWrong:
		if d := maxRelDiff(tape, gg); d > 1e-10 {
			t.Errorf("bulkad differs from gorgonia.Grad by %g (> 1e-10)", d)
		}
	case gerr == nil && gorgoniaWrong:
		d := maxRelDiff(pick(gg, idx), fd)
		t.Logf("gorgonia.Grad vs finite differences: %g (bulkad: %g)", d, maxRelDiff(pick(tape, idx), fd))
		if d <= 1e-6 {
			t.Errorf("case marked Gorgonia-wrong but gorgonia.Grad matches finite differences (%g)", d)
		}
	default:
		t.Logf("gorgonia.Grad fails: %v", gerr)
	}
	return gerr
}
