package main

import (
	"bytes"
	"testing"

	"gorgonia.org/tensor"

	"github.com/bulkad/bulkad"
	"github.com/bulkad/bulkad/examples/internal/train"
)

// TestShortTrainingLearns: a short run with bulkad.Grad lowers the loss and beats chance.
func TestShortTrainingLearns(t *testing.T) {
	ex := example()
	trainSet, testSet, _, err := ex.Load("", 600, 3)
	if err != nil {
		t.Fatal(err)
	}
	cfg := ex.Defaults
	cfg.Name, cfg.Dtype, cfg.Batch, cfg.Epochs = ex.Name, tensor.Float32, 30, 2
	var out bytes.Buffer
	res, err := train.Run(cfg, ex.Build, ex.Init(cfg.Dtype, 5), bulkad.Grad, "bulkad.Grad", trainSet, testSet, ex.XShape(30), &out)
	if err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	n := len(res.Curve.Loss)
	first, last := mean(res.Curve.Loss[:5]), mean(res.Curve.Loss[n-5:])
	t.Logf("%d steps, loss %.3f -> %.3f, held-out accuracy %.3f", n, first, last, res.TestAcc)
	if !(last < 0.8*first) {
		t.Errorf("loss did not decrease: %.3f -> %.3f", first, last)
	}
	if res.TestAcc < 0.3 {
		t.Errorf("held-out accuracy %.3f, want > 0.3 (chance is 0.1)", res.TestAcc)
	}
}

func mean(v []float64) float64 {
	s := 0.0
	for _, x := range v {
		s += x
	}
	return s / float64(len(v))
}
