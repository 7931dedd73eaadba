// Package torchvision tests bulkad's ONNX importer on torchvision networks and torch.nn
// models exported by export.py and reference.py (in this folder; TestSuite is issue 26's
// acceptance suite). The tests need Debian's python3 with torch 1.13, torchvision and onnx;
// they are skipped without them and under -short.
package torchvision

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/bulkad/bulkad"
	"github.com/bulkad/bulkad/examples/opgraphs"
	"github.com/bulkad/bulkad/onnx/onnxtest"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// python returns a Python interpreter with torch and torchvision ($BULKAD_PYTHON, then
// /usr/bin/python3, then python3 on the PATH), or skips the test.
func python(t *testing.T) string {
	t.Helper()
	var cands []string
	if p := os.Getenv("BULKAD_PYTHON"); p != "" {
		cands = append(cands, p)
	}
	cands = append(cands, "/usr/bin/python3", "python3")
	for _, c := range cands {
		if err := exec.Command(c, "-c", "import torch, torchvision, onnx").Run(); err == nil {
			return c
		}
	}
	t.Skipf("no python3 with torch, torchvision and onnx (tried %v; set BULKAD_PYTHON): skipping the torchvision tests", cands)
	return ""
}

type reference struct {
	Input struct {
		Shape []int     `json:"shape"`
		Data  []float64 `json:"data"`
	} `json:"input"`
	Output struct {
		Shape []int     `json:"shape"`
		Data  []float64 `json:"data"`
	} `json:"output"`
	R         []float64 `json:"r"`
	Loss      float64   `json:"loss"`
	GradInput []float64 `json:"grad_input"`
}

func values(v G.Value) []float64 {
	switch d := v.Data().(type) {
	case []float64:
		return d
	case float64:
		return []float64{d}
	}
	return nil
}

// readJSON decodes the JSON file at path into v; an error fails t.
func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, v); err != nil {
		t.Fatal(err)
	}
}

// relErr is the largest |a−b| relative to the largest |b|.
func relErr(a, b []float64) float64 { return onnxtest.RelErr(a, b, 1e-30) }

// TestDepthwiseNetworks: the depthwise-convolution networks import as a few thousand
// Gorgonia nodes at most (one bulk operation per grouped convolution, not one convolution per
// channel: mobilenet_v2 was 78,914 nodes), the forward pass on a TapeMachine gives PyTorch's
// output, and bulkad.Grad of Σ output ⊙ r with respect to the input gives PyTorch's autograd
// gradient, 1e-9 relative to the largest entry. The models are exported in float64: in
// float32 mnasnet0_5 has a pre-activation 4e-8 (relative) from a ReLU kink, whose side
// depends on the order of the additions (export.py's doc comment).
func TestDepthwiseNetworks(t *testing.T) {
	if testing.Short() {
		t.Skip("exports torchvision models with PyTorch: skipped under -short")
	}
	py := python(t)
	dir := t.TempDir()
	models := []struct {
		name     string
		maxNodes int
	}{{"mobilenet_v2", 1000}, {"mnasnet0_5", 1000}, {"efficientnet_b0", 2000}}
	args := []string{"export.py", "--reference", "--float64", dir}
	for _, m := range models {
		args = append(args, m.name)
	}
	if out, err := exec.Command(py, args...).CombinedOutput(); err != nil {
		t.Fatalf("export.py: %v\n%s", err, out)
	}
	for _, mc := range models {
		t.Run(mc.name, func(t *testing.T) { checkExported(t, dir, mc.name, mc.maxNodes) })
	}
}

// checkExported imports dir/name.onnx, exported by export.py --reference --float64 with its
// reference dir/name.json, and checks that it is at most maxNodes Gorgonia nodes, that its
// forward pass on a TapeMachine gives PyTorch's output and loss = Σ output ⊙ r, and that
// bulkad.Grad of the loss with respect to the input gives PyTorch's autograd gradient, each
// within 1e-9 relative to the largest entry.
func checkExported(t *testing.T, dir, name string, maxNodes int) {
	t.Helper()
	base := filepath.Join(dir, name)
	var ref reference
	readJSON(t, base+".json", &ref)
	m, err := bulkad.ImportONNXFile(base + ".onnx")
	if err != nil {
		t.Fatal(err)
	}
	if n := len(m.Graph.AllNodes()); n > maxNodes {
		t.Errorf("%d Gorgonia nodes after import, want at most %d", n, maxNodes)
	}
	if err := G.Let(m.Inputs[0], opgraphs.Dense(tensor.Float64, ref.Input.Shape, ref.Input.Data)); err != nil {
		t.Fatal(err)
	}
	out := m.Outputs[0]
	var outVal G.Value
	G.Read(out, &outVal)
	r := G.NewTensor(m.Graph, tensor.Float64, len(ref.Output.Shape), G.WithShape(ref.Output.Shape...),
		G.WithName("r"), G.WithValue(opgraphs.Dense(tensor.Float64, ref.Output.Shape, ref.R)))
	cost := G.Must(G.Sum(G.Must(G.HadamardProd(out, r))))
	grads, err := bulkad.Grad(cost, m.Inputs[0])
	if err != nil {
		t.Fatal(err)
	}
	vm := G.NewTapeMachine(m.Graph)
	defer vm.Close()
	if err := vm.RunAll(); err != nil {
		t.Fatal(err)
	}
	const tol = 1e-9
	if e := relErr(values(outVal), ref.Output.Data); !(e <= tol) {
		t.Errorf("output differs from PyTorch's by %.2g relative", e)
	}
	if e := relErr(values(cost.Value()), []float64{ref.Loss}); !(e <= tol) {
		t.Errorf("loss %v, PyTorch %v", cost.Value(), ref.Loss)
	}
	if e := relErr(values(grads[0].Value()), ref.GradInput); !(e <= tol) {
		t.Errorf("∂loss/∂input differs from PyTorch's by %.2g relative", e)
	}
}
