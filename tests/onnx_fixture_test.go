package tests

import (
	"path/filepath"
	"sort"
	"testing"

	"github.com/bulkad/bulkad"
	"github.com/bulkad/bulkad/examples/opgraphs"
	"github.com/bulkad/bulkad/gradcheck"
	"github.com/bulkad/bulkad/onnx/onnxtest"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// onnxCase says how one PyTorch fixture (base.onnx and base.json) is checked.
type onnxCase struct {
	base string // the fixture's path without extension
	tag  string // "f64" or "f32": the dtype, and the tolerances with it
	// fwd64 is the float64 forward tolerance when not 1e-9.
	fwd64 float64
	// coarse: the imported model and the gradient are a few nodes each (at most 8 more than
	// the inputs, parameters and outputs; at most 8 more than the wrt nodes).
	coarse bool
	// check: gradcheck.Check (finite differences through the raised nodes) runs too.
	check bool
}

// tolerances are the case's dtype and its forward and gradient tolerances (relative):
// 1e-9 / 1e-8 in float64 (fwd64 where set), 1e-5 / 1e-4 in float32.
func (c onnxCase) tolerances() (dt tensor.Dtype, fwdTol, gradTol float64) {
	if c.tag == "f32" {
		return tensor.Float32, 1e-5, 1e-4
	}
	if c.fwd64 != 0 {
		return tensor.Float64, c.fwd64, 1e-8
	}
	return tensor.Float64, 1e-9, 1e-8
}

// fixtureBase is the path without extension of fixture name_tag in onnx/testdata/dir.
func fixtureBase(dir, name, tag string) string {
	return filepath.Join("..", "onnx", "testdata", dir, name+"_"+tag)
}

// importFixture loads base.json and imports base.onnx, checking the node count when coarse.
func importFixture(t *testing.T, base string, coarse bool) (*onnxtest.Fixture, *bulkad.ONNXModel) {
	t.Helper()
	fx, err := onnxtest.Load(base + ".json")
	if err != nil {
		t.Fatal(err)
	}
	m, err := bulkad.ImportONNXFile(base + ".onnx")
	if err != nil {
		t.Fatal(err)
	}
	if n, most := len(m.Graph.AllNodes()), len(m.Inputs)+len(m.Params)+len(m.Outputs)+8; coarse && n > most {
		t.Errorf("the imported model has %d nodes, want at most %d (inputs + parameters + outputs + 8)", n, most)
	}
	return fx, m
}

// paramGrads appends to wrt, names and want every parameter PyTorch gave a gradient of, by
// name, with that gradient.
func paramGrads(t *testing.T, m *bulkad.ONNXModel, grads map[string][]float64, wrt G.Nodes, names []string, want [][]float64) (G.Nodes, []string, [][]float64) {
	t.Helper()
	pnames := make([]string, 0, len(grads))
	for p := range grads {
		pnames = append(pnames, p)
	}
	sort.Strings(pnames)
	for _, p := range pnames {
		n := m.Param(p)
		if n == nil {
			t.Fatalf("PyTorch parameter %q is not an initializer of the model (have %v)", p, m.ParamNames)
		}
		wrt, names, want = append(wrt, n), append(names, p), append(want, grads[p])
	}
	return wrt, names, want
}

// checkONNXFixture checks a fixture with one input and one output: the output node has the
// fixture's dtype, and against PyTorch as checkAgainstPyTorch, with respect to every
// parameter PyTorch gave a gradient of.
func checkONNXFixture(t *testing.T, c onnxCase) {
	t.Helper()
	fx, m := importFixture(t, c.base, c.coarse)
	dt, _, _ := c.tolerances()
	if len(m.Inputs) != 1 || len(m.Outputs) != 1 {
		t.Fatalf("%d inputs and %d outputs, want 1 and 1", len(m.Inputs), len(m.Outputs))
	}
	if out := m.Outputs[0]; out.Dtype() != dt {
		t.Fatalf("the output node has dtype %v, want %v (the graph output's)", out.Dtype(), dt)
	}
	if err := G.Let(m.Inputs[0], opgraphs.Dense(dt, tensor.Shape(fx.Input.Shape), fx.Input.Data)); err != nil {
		t.Fatal(err)
	}
	wrt, names, want := paramGrads(t, m, fx.Grads, nil, nil, nil)
	checkAgainstPyTorch(t, c, fx, m, wrt, names, want)
}

// checkAgainstPyTorch differentiates loss = Σ output ⊙ r (the fixture's r) with bulkad.Grad
// with respect to wrt (named names), runs the graph once on a TapeMachine, and compares the
// output, the loss and each gradient with PyTorch's (want, one per wrt node) within the
// case's tolerances; then gradcheck.Check where the case says so.
func checkAgainstPyTorch(t *testing.T, c onnxCase, fx *onnxtest.Fixture, m *bulkad.ONNXModel, wrt G.Nodes, names []string, want [][]float64) {
	t.Helper()
	dt, fwdTol, gradTol := c.tolerances()
	out := m.Outputs[0]
	var outVal G.Value // pinned: Gorgonia may run the next op in place on out
	G.Read(out, &outVal)
	r := G.NewTensor(m.Graph, dt, len(fx.Output.Shape), G.WithShape(fx.Output.Shape...), G.WithName("r"), G.WithValue(opgraphs.Dense(dt, tensor.Shape(fx.Output.Shape), fx.R)))
	cost := G.Must(G.Sum(G.Must(G.HadamardProd(out, r))))
	before := len(m.Graph.AllNodes())
	var grads G.Nodes
	if len(wrt) > 0 {
		var err error
		if grads, err = bulkad.Grad(cost, wrt...); err != nil {
			t.Fatal(err)
		}
	}
	if added := len(m.Graph.AllNodes()) - before; c.coarse && added > len(wrt)+8 {
		t.Errorf("Grad added %d nodes for %d wrt nodes, want at most %d", added, len(wrt), len(wrt)+8)
	}
	mustRunOnce(t, m.Graph, nil)
	if e := relErr(valuesOf(outVal), fx.Output.Data); !(e <= fwdTol) {
		t.Errorf("output differs from PyTorch's by %.2g relative:\n got %v\nwant %v", e, valuesOf(outVal), fx.Output.Data)
	}
	if e := relErr(valuesOf(cost.Value()), []float64{fx.Loss}); !(e <= fwdTol*10) {
		t.Errorf("loss %v, PyTorch %v", cost.Value(), fx.Loss)
	}
	for i, gn := range grads {
		if e := relErr(valuesOf(gn.Value()), want[i]); !(e <= gradTol) {
			t.Errorf("∂loss/∂%s differs from PyTorch's by %.2g relative:\n got %v\nwant %v", names[i], e, valuesOf(gn.Value()), want[i])
		}
	}
	if !c.check {
		return
	}
	rep, err := gradcheck.Check(cost, wrt, gradcheck.WithMaxProbes(4))
	if err != nil {
		t.Fatal(err)
	}
	if !rep.OK() {
		t.Errorf("gradcheck.Check:\n%s", rep)
	}
}
