package torchvision

import (
	"os/exec"
	"testing"
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
	checkExported(t, dir, name, 1000)
}
