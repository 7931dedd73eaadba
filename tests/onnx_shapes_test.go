package tests

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bulkad/bulkad"
	"github.com/bulkad/bulkad/examples/opgraphs"
	"github.com/bulkad/bulkad/onnx/onnxtest"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// shapesFixture is what onnx/testdata/gen_shapes.py records: onnxtest.Fixture's fields
// (grads keyed by ONNX initializer name) and, for models with several or non-float inputs,
// every graph input with its dtype, and the gradients with respect to the float inputs.
type shapesFixture struct {
	onnxtest.Fixture
	Inputs []struct {
		Name  string    `json:"name"`
		Dtype string    `json:"dtype"` // float, int64 or bool (0/1)
		Shape []int     `json:"shape"`
		Data  []float64 `json:"data"`
	} `json:"inputs"`
	GradInputs map[string][]float64 `json:"grad_inputs"`
}

// inputValue is a fixture input as the tensor gorgonia.Let takes: the model's float type, or
// Int64 and Bool tensors for integer and boolean inputs.
func inputValue(dt tensor.Dtype, dtype string, sh []int, xs []float64) G.Value {
	switch dtype {
	case "int64":
		v := make([]int64, len(xs))
		for i, x := range xs {
			v[i] = int64(x)
		}
		return tensor.New(tensor.WithShape(sh...), tensor.WithBacking(v))
	case "bool":
		v := make([]bool, len(xs))
		for i, x := range xs {
			v[i] = x != 0
		}
		return tensor.New(tensor.WithShape(sh...), tensor.WithBacking(v))
	}
	return opgraphs.Dense(dt, tensor.Shape(sh), xs)
}

// TestONNXShapes: the models of issue 26 (shape arithmetic folded at import, chunk, flatten,
// masks from buffers and from graph inputs, F.pad in every mode, Expand, batch-broadcasting
// matmul, nn.Embedding on int64 ids, LayerNormalization, nn.MultiheadAttention and
// nn.TransformerEncoderLayer), exported from PyTorch at several operator sets
// (onnx/testdata/gen_shapes.py), import with bulkad.ImportONNXFile; on a TapeMachine the
// output equals PyTorch's, and bulkad.Grad of loss = Σ output ⊙ r equals PyTorch's autograd
// gradient with respect to every parameter and every float input: 1e-9 / 1e-8 relative in
// float64, 1e-5 / 1e-4 in float32; in float64 gradcheck.Check (central differences through the
// raised nodes) passes too. The imported model is a few nodes (coarse raising).
func TestONNXShapes(t *testing.T) {
	dir := filepath.Join("..", "onnx", "testdata", "shapes")
	files, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 40 {
		t.Fatalf("%d fixtures in %s, want the 50 of gen_shapes.py", len(files), dir)
	}
	for _, file := range files {
		name := strings.TrimSuffix(filepath.Base(file), ".json")
		t.Run(name, func(t *testing.T) {
			raw, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			var fx shapesFixture
			if err := json.Unmarshal(raw, &fx); err != nil {
				t.Fatal(err)
			}
			m, err := bulkad.ImportONNXFile(strings.TrimSuffix(file, ".json") + ".onnx")
			if err != nil {
				t.Fatal(err)
			}
			if n, most := len(m.Graph.AllNodes()), len(m.Inputs)+len(m.Params)+len(m.Outputs)+8; n > most {
				t.Errorf("the imported model has %d nodes, want at most %d (inputs + parameters + outputs + 8)", n, most)
			}
			c := onnxCase{tag: "f64", check: true}
			if strings.HasSuffix(name, "_f32") {
				c = onnxCase{tag: "f32"}
			}
			dt, _, _ := c.tolerances()
			if len(m.Inputs) != len(fx.Inputs) || len(m.Outputs) != 1 {
				t.Fatalf("%d inputs and %d outputs, want %d and 1", len(m.Inputs), len(m.Outputs), len(fx.Inputs))
			}
			var wrt G.Nodes
			var names []string
			var want [][]float64
			for i, in := range fx.Inputs {
				if m.InputNames[i] != in.Name {
					t.Fatalf("input %d is %q, want %q", i, m.InputNames[i], in.Name)
				}
				if err := G.Let(m.Inputs[i], inputValue(dt, in.Dtype, in.Shape, in.Data)); err != nil {
					t.Fatalf("input %s (%s): %v", in.Name, in.Dtype, err)
				}
				if g, ok := fx.GradInputs[in.Name]; ok {
					wrt, names, want = append(wrt, m.Inputs[i]), append(names, "input "+in.Name), append(want, g)
				}
			}
			wrt, names, want = paramGrads(t, m, fx.Grads, wrt, names, want)
			checkAgainstPyTorch(t, c, &fx.Fixture, m, wrt, names, want)
		})
	}
}
