package onnx

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/bulkad/bulkad/ad"
	"github.com/bulkad/bulkad/core"
	"github.com/bulkad/bulkad/examples/opgraphs"
	"github.com/bulkad/bulkad/kernel"
	"github.com/bulkad/bulkad/onnx/onnxtest"
	"gorgonia.org/tensor"
)

// TestFixturesCore checks the PyTorch fixtures at the level of the core program, without
// Gorgonia (package tests checks them through bulkad.ImportONNX and bulkad.Grad): the
// lowered program run by the kernels gives PyTorch's output, and ad.Grad of Σ output ⊙ r
// gives PyTorch's autograd gradient of every parameter (1e-9 relative in float64, 1e-4 in
// float32). sepconv holds depthwise (channel multiplier 2, stride 2; dilated), pointwise and
// grouped convolutions.
func TestFixturesCore(t *testing.T) {
	for _, name := range []string{"sepconv", "lenet"} {
		for _, tag := range []string{"f64", "f32"} {
			t.Run(name+"_"+tag, func(t *testing.T) {
				base := filepath.Join("testdata", name+"_"+tag)
				fx, err := onnxtest.Load(base + ".json")
				if err != nil {
					t.Fatal(err)
				}
				data, err := os.ReadFile(base + ".onnx")
				if err != nil {
					t.Fatal(err)
				}
				md, err := Decode(data)
				if err != nil {
					t.Fatal(err)
				}
				p, err := Lower(md)
				if err != nil {
					t.Fatal(err)
				}
				if len(p.InputVars) != 1 || len(p.Outputs) != 1 {
					t.Fatalf("%d inputs and %d outputs, want 1 and 1", len(p.InputVars), len(p.Outputs))
				}
				tol := 1e-9
				if tag == "f32" {
					tol = 1e-4
				}
				args := map[string]*tensor.Dense{p.InputVars[0].Name: denseOf(p.Dtype, core.Shape(fx.Input.Shape), fx.Input.Data)}
				for i, v := range p.ParamVars {
					args[v.Name] = p.Values[p.Params[i]]
				}
				outs, err := kernel.EvalTuple(p.Prog, args)
				if err != nil {
					t.Fatal(err)
				}
				if e := onnxtest.RelErr(opgraphs.Floats(outs[0]), fx.Output.Data, 1e-3); !(e <= tol) {
					t.Errorf("output differs from PyTorch's by %.2g relative", e)
				}

				// loss program: the model's lets around Σ output ⊙ r, r a new parameter
				lets, res := core.LetChain(p.Prog.Body)
				y := core.Results(res)[0]
				ys := y.Type().Shape
				r, err := core.NewVar("r_fixture", y.Type())
				if err != nil {
					t.Fatal(err)
				}
				var b core.Builder
				body := b.SumOuter(b.Reshape(core.Shape{ys.Size()}, b.Mul(y, r)))
				for i := len(lets) - 1; i >= 0; i-- {
					body = b.Let(lets[i].Var, lets[i].Bound, body)
				}
				lp, err := core.NewProgram(append(append([]*core.Var{}, p.Prog.Params...), r), body)
				if err != nil {
					t.Fatal(err, b.Err())
				}
				var wrt []string
				onnxName := map[string]string{}
				for i, v := range p.ParamVars {
					if _, ok := fx.Grads[p.Params[i]]; ok {
						wrt = append(wrt, v.Name)
						onnxName[v.Name] = p.Params[i]
					}
				}
				if len(wrt) != len(fx.Grads) {
					t.Fatalf("PyTorch has gradients of %d parameters, the model %d of them as initializers (%v)", len(fx.Grads), len(wrt), p.Params)
				}
				art, err := ad.Grad(lp, wrt...)
				if err != nil {
					t.Fatal(err)
				}
				args[r.Name] = denseOf(p.Dtype, ys, fx.R)
				v, gs, err := art.RunWith(kernel.EvalTuple, args)
				if err != nil {
					t.Fatal(err)
				}
				if e := onnxtest.RelErr(opgraphs.Floats(v), []float64{fx.Loss}, 1e-3); !(e <= 10*tol) {
					t.Errorf("loss %v, PyTorch %v", opgraphs.Floats(v), fx.Loss)
				}
				for _, w := range wrt {
					if e := onnxtest.RelErr(opgraphs.Floats(gs[w]), fx.Grads[onnxName[w]], 1e-3); !(e <= tol) {
						t.Errorf("∂loss/∂%s differs from PyTorch's by %.2g relative", onnxName[w], e)
					}
				}
			})
		}
	}
}
