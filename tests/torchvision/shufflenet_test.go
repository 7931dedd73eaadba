package torchvision

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/bulkad/bulkad"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// TestShuffleNet: shufflenet_v2_x0_5, whose torch.chunk and channel shuffle export as slices
// and reshapes of sizes computed from Shape (integer Gather, Add, Div, Mul at import time),
// imports; on a TapeMachine its output equals PyTorch's and bulkad.Grad of Σ output ⊙ r with
// respect to the input equals PyTorch's autograd gradient, 1e-9 relative to the largest
// entry, in float64.
func TestShuffleNet(t *testing.T) {
	if testing.Short() {
		t.Skip("exports a torchvision model with PyTorch: skipped under -short")
	}
	py := python(t)
	dir := t.TempDir()
	const name = "shufflenet_v2_x0_5"
	if out, err := exec.Command(py, "export.py", "--reference", "--float64", dir, name).CombinedOutput(); err != nil {
		t.Fatalf("export.py: %v\n%s", err, out)
	}
	base := filepath.Join(dir, name)
	raw, err := os.ReadFile(base + ".json")
	if err != nil {
		t.Fatal(err)
	}
	var ref reference
	if err := json.Unmarshal(raw, &ref); err != nil {
		t.Fatal(err)
	}
	m, err := bulkad.ImportONNXFile(base + ".onnx")
	if err != nil {
		t.Fatal(err)
	}
	if n := len(m.Graph.AllNodes()); n > 1000 {
		t.Errorf("%d Gorgonia nodes after import, want at most 1000", n)
	}
	if err := G.Let(m.Inputs[0], dense(ref.Input.Shape, ref.Input.Data)); err != nil {
		t.Fatal(err)
	}
	out := m.Outputs[0]
	var outVal G.Value
	G.Read(out, &outVal)
	r := G.NewTensor(m.Graph, tensor.Float64, len(ref.Output.Shape), G.WithShape(ref.Output.Shape...),
		G.WithName("r"), G.WithValue(dense(ref.Output.Shape, ref.R)))
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
