package main

import (
	"bytes"
	"strings"
	"testing"

	G "gorgonia.org/gorgonia"
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

// TestCompareSaysWhichSide: -compare does not leave the gradient difference unexplained: it
// checks bulkad's side against finite differences, says why Gorgonia's side cannot be checked
// that way (dropout draws new values in each graph), and names Gorgonia's Dropout error.
func TestCompareSaysWhichSide(t *testing.T) {
	var out bytes.Buffer
	err := train.Main(example(), bulkad.Grad, "bulkad.Grad", G.Grad, []string{"-steps", "2", "-n", "200", "-batch", "20", "-compare"}, &out)
	if err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	for _, want := range []string{"largest gradient difference", "bulkad.Grad agrees with them", "gorgonia.Grad is not checked: the graph has random operations",
		"divides by the drop probability"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}
