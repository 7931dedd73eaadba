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
	train.CheckLearned(t, res, 5, 5, 0.8, 0.3, "chance is 0.1")
}
