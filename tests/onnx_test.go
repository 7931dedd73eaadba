package tests

import (
	"path/filepath"
	"testing"

	"github.com/bulkad/bulkad"
	"github.com/bulkad/bulkad/gradcheck"
	"github.com/bulkad/bulkad/onnx/onnxtest"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// relErr is the largest |a−b| relative to the largest |b| (at least 1e-3, so that entries
// near 0 are compared absolutely at that scale).
func relErr(a, b []float64) float64 { return onnxtest.RelErr(a, b, 1e-3) }

// TestONNXFixtures: every model exported from PyTorch imports, its forward pass equals
// PyTorch's output, and bulkad.Grad of loss = Σ output ⊙ r (run on a TapeMachine) equals
// PyTorch's autograd gradient w.r.t. every parameter: 1e-9 / 1e-8 relative in float64,
// 1e-5 / 1e-4 in float32; gradcheck.Check (finite differences, the raised nodes) passes. The
// imported model and its gradient are a few nodes each (coarse raising).
func TestONNXFixtures(t *testing.T) {
	for _, name := range []string{"mlp", "lenet", "gru", "block", "gated", "scans", "sepconv"} {
		for _, tag := range []string{"f64", "f32"} {
			name, tag := name, tag
			t.Run(name+"_"+tag, func(t *testing.T) {
				base := filepath.Join("..", "onnx", "testdata", name+"_"+tag)
				fx, err := onnxtest.Load(base + ".json")
				if err != nil {
					t.Fatal(err)
				}
				m, err := bulkad.ImportONNXFile(base + ".onnx")
				if err != nil {
					t.Fatal(err)
				}
				// Coarse raising: the model is its inputs, parameters and outputs and a few
				// nodes more, whatever its size.
				if n, most := len(m.Graph.AllNodes()), len(m.Inputs)+len(m.Params)+len(m.Outputs)+8; n > most {
					t.Errorf("the imported model has %d nodes, want at most %d (inputs + parameters + outputs + 8)", n, most)
				}
				dt := tensor.Float64
				fwdTol, gradTol := 1e-9, 1e-8
				if tag == "f32" {
					dt, fwdTol, gradTol = tensor.Float32, 1e-5, 1e-4
				}
				if len(m.Inputs) != 1 || len(m.Outputs) != 1 {
					t.Fatalf("%d inputs and %d outputs, want 1 and 1", len(m.Inputs), len(m.Outputs))
				}
				if err := G.Let(m.Inputs[0], denseOf(dt, tensor.Shape(fx.Input.Shape), fx.Input.Data)); err != nil {
					t.Fatal(err)
				}
				out := m.Outputs[0]
				var outVal G.Value // pinned: Gorgonia may run the next op in place on out
				G.Read(out, &outVal)
				r := G.NewTensor(m.Graph, dt, len(fx.Output.Shape), G.WithShape(fx.Output.Shape...), G.WithName("r"), G.WithValue(denseOf(dt, tensor.Shape(fx.Output.Shape), fx.R)))
				cost := G.Must(G.Sum(G.Must(G.HadamardProd(out, r))))
				var wrt G.Nodes
				var names []string
				for pname := range fx.Grads {
					p := m.Param(pname)
					if p == nil {
						t.Fatalf("PyTorch parameter %q is not an initializer of the model (have %v)", pname, m.ParamNames)
					}
					wrt, names = append(wrt, p), append(names, pname)
				}
				before := len(m.Graph.AllNodes())
				grads, err := bulkad.Grad(cost, wrt...)
				if err != nil {
					t.Fatal(err)
				}
				if added := len(m.Graph.AllNodes()) - before; added > len(wrt)+8 {
					t.Errorf("Grad added %d nodes for %d wrt nodes, want at most %d", added, len(wrt), len(wrt)+8)
				}
				mustRunOnce(t, m.Graph, nil)
				if e := relErr(valuesOf(outVal), fx.Output.Data); !(e <= fwdTol) {
					t.Errorf("output differs from PyTorch's by %.2g relative", e)
				}
				if e := relErr(valuesOf(cost.Value()), []float64{fx.Loss}); !(e <= fwdTol*10) {
					t.Errorf("loss %v, PyTorch %v", cost.Value(), fx.Loss)
				}
				for i, gn := range grads {
					if e := relErr(valuesOf(gn.Value()), fx.Grads[names[i]]); !(e <= gradTol) {
						t.Errorf("∂loss/∂%s differs from PyTorch's by %.2g relative", names[i], e)
					}
				}
				rep, err := gradcheck.Check(cost, wrt, gradcheck.WithMaxProbes(4))
				if err != nil {
					t.Fatal(err)
				}
				if !rep.OK() {
					t.Errorf("gradcheck.Check:\n%s", rep)
				}
			})
		}
	}
}
