package tests

import (
	"testing"

	"github.com/bulkad/bulkad/onnx/onnxtest"
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
				checkONNXFixture(t, onnxCase{base: fixtureBase("", name, tag), tag: tag, coarse: true, check: true})
			})
		}
	}
}
