package main

import (
	"bytes"
	"testing"

	"gorgonia.org/tensor"

	"github.com/bulkad/bulkad"
	"github.com/bulkad/bulkad/examples/internal/train"
)

// TestTrainingLearns: the loss goes down and next-character accuracy on held-out text beats
// always predicting the most frequent character of the training text.
func TestTrainingLearns(t *testing.T) {
	ex := example()
	trainSet, testSet, _, err := ex.Load("", 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	count := map[int]int{}
	best := 0
	for _, l := range trainSet.Labels {
		count[l]++
		if count[l] > count[best] {
			best = l
		}
	}
	baseline := 0
	for _, l := range testSet.Labels {
		if l == best {
			baseline++
		}
	}
	base := float64(baseline) / float64(testSet.N)
	cfg := ex.Defaults
	cfg.Name, cfg.Dtype, cfg.Epochs = ex.Name, tensor.Float32, 6
	var out bytes.Buffer
	res, err := train.Run(cfg, ex.Build, ex.Init(cfg.Dtype, 1), bulkad.Grad, "bulkad.Grad", trainSet, testSet, ex.XShape(cfg.Batch), &out)
	if err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	n := len(res.Curve.Loss)
	first, last := mean(res.Curve.Loss[:10]), mean(res.Curve.Loss[n-10:])
	t.Logf("%d steps, loss %.3f -> %.3f, held-out accuracy %.3f (most-frequent baseline %.3f)", n, first, last, res.TestAcc, base)
	if !(last < 0.8*first) {
		t.Errorf("loss did not decrease: %.3f -> %.3f", first, last)
	}
	if res.TestAcc <= base+0.05 {
		t.Errorf("held-out accuracy %.3f does not beat the baseline %.3f", res.TestAcc, base)
	}
}

func mean(v []float64) float64 {
	s := 0.0
	for _, x := range v {
		s += x
	}
	return s / float64(len(v))
}
