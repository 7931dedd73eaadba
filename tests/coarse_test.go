package tests

import (
	"math/rand"
	"path/filepath"
	"testing"

	"github.com/bulkad/bulkad"
	"github.com/bulkad/bulkad/examples/opgraphs"
	"github.com/bulkad/bulkad/gradcheck"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// TestCoarseSecondOrderONNX: an imported model is one plan node and its gradient another,
// which reads the forward plan's activations; differentiating the gradient again reads both
// plan nodes back (adapter.Planned, adapter.Part). Grad of Σ g ⊙ v equals HessianVector, and
// gradcheck.Check's second-order rows (central differences of the gradient) pass, for every
// parameter of the LeNet fixture in float64.
func TestCoarseSecondOrderONNX(t *testing.T) {
	m, err := bulkad.ImportONNXFile(filepath.Join("..", "onnx", "testdata", "lenet_f64.onnx"))
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewSource(3))
	random := func(name string, sh tensor.Shape) *G.Node {
		v := make([]float64, sh.TotalSize())
		for i := range v {
			v[i] = rng.NormFloat64()
		}
		return G.NewTensor(m.Graph, G.Float64, len(sh), G.WithShape(sh...), G.WithName(name), G.WithValue(opgraphs.Dense(G.Float64, sh, v)))
	}
	x := m.Inputs[0]
	if err := G.Let(x, random("x0", x.Shape()).Value()); err != nil {
		t.Fatal(err)
	}
	out := m.Outputs[0]
	cost := G.Must(G.Sum(G.Must(G.HadamardProd(out, random("r", out.Shape())))))
	for i, w := range m.Params {
		gs, err := bulkad.Grad(cost, w)
		if err != nil {
			t.Fatal(err)
		}
		v := random("v"+m.ParamNames[i], w.Shape())
		hv, err := bulkad.Grad(G.Must(G.Sum(G.Must(G.HadamardProd(gs[0], v)))), w)
		if err != nil {
			t.Fatalf("%s: grad of grad: %v", m.ParamNames[i], err)
		}
		hv2, err := bulkad.HessianVector(cost, G.Nodes{w}, G.Nodes{v})
		if err != nil {
			t.Fatal(err)
		}
		mustRunOnce(t, m.Graph, nil)
		a, b := valuesOf(hv[0].Value()), valuesOf(hv2[0].Value())
		if e := relErr(a, b); !(e <= 1e-10) {
			t.Errorf("%s: grad of Σ g⊙v differs from HessianVector by %.2g relative", m.ParamNames[i], e)
		}
	}
	rep, err := gradcheck.Check(cost, m.Params, gradcheck.WithSecondOrder(), gradcheck.WithMaxProbes(4))
	if err != nil {
		t.Fatal(err)
	}
	if !rep.OK() {
		t.Errorf("gradcheck.Check:\n%s", rep)
	}
}
