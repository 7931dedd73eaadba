package main

import (
	"testing"

	"gorgonia.org/tensor"

	"github.com/bulkad/bulkad"
	"github.com/bulkad/bulkad/examples/internal/train"
)

// TestShortTrainingLearns: a short run with bulkad.Grad lowers the loss and beats chance.
func TestShortTrainingLearns(t *testing.T) {
	res, _, _, err := train.Quick(example(), bulkad.Grad, 600, 3, 5, func(c *train.Config) {
		c.Dtype, c.Batch, c.Epochs = tensor.Float32, 30, 2
	})
	if err != nil {
		t.Fatal(err)
	}
	n := len(res.Curve.Loss)
	first, last := train.Mean(res.Curve.Loss[:5]), train.Mean(res.Curve.Loss[n-5:])
	t.Logf("%d steps, loss %.3f -> %.3f, held-out accuracy %.3f", n, first, last, res.TestAcc)
	if !(last < 0.8*first) {
		t.Errorf("loss did not decrease: %.3f -> %.3f", first, last)
	}
	if res.TestAcc < 0.3 {
		t.Errorf("held-out accuracy %.3f, want > 0.3 (chance is 0.1)", res.TestAcc)
	}
}
