package main

import (
	"bytes"
	"testing"

	"gorgonia.org/tensor"

	"github.com/bulkad/bulkad"
	"github.com/bulkad/bulkad/examples/internal/train"
)

// TestTrainingLearns: softmax regression on iris with bulkad.Grad reaches a held-out
// accuracy far above chance (1/3); linear models are known to reach > 90% on iris.
func TestTrainingLearns(t *testing.T) {
	ex := example()
	trainSet, testSet, _, err := ex.Load("", 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	if trainSet.N != 120 || testSet.N != 30 {
		t.Fatalf("split %d/%d", trainSet.N, testSet.N)
	}
	cfg := ex.Defaults
	cfg.Name, cfg.Dtype = ex.Name, tensor.Float64
	var out bytes.Buffer
	res, err := train.Run(cfg, ex.Build, ex.Init(cfg.Dtype, 1), bulkad.Grad, "bulkad.Grad", trainSet, testSet, ex.XShape(cfg.Batch), &out)
	if err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	n := len(res.Curve.Loss)
	first, last := res.Curve.Loss[0], mean(res.Curve.Loss[n-8:])
	t.Logf("loss %.3f -> %.3f, held-out accuracy %.3f", first, last, res.TestAcc)
	if !(last < 0.5*first) {
		t.Errorf("loss did not decrease: %.3f -> %.3f", first, last)
	}
	if res.TestAcc < 0.8 {
		t.Errorf("held-out accuracy %.3f, want ≥ 0.8", res.TestAcc)
	}
}

func mean(v []float64) float64 {
	s := 0.0
	for _, x := range v {
		s += x
	}
	return s / float64(len(v))
}
