package main

import (
	"testing"

	"gorgonia.org/tensor"

	"github.com/bulkad/bulkad"
	"github.com/bulkad/bulkad/examples/internal/train"
)

// TestTrainingLearns: the loss goes down and next-character accuracy on held-out text beats
// always predicting the most frequent character of the training text.
func TestTrainingLearns(t *testing.T) {
	res, trainSet, testSet, err := train.Quick(example(), bulkad.Grad, 0, 1, 1, func(c *train.Config) {
		c.Dtype, c.Epochs = tensor.Float32, 6
	})
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
	n := len(res.Curve.Loss)
	first, last := train.Mean(res.Curve.Loss[:10]), train.Mean(res.Curve.Loss[n-10:])
	t.Logf("%d steps, loss %.3f -> %.3f, held-out accuracy %.3f (most-frequent baseline %.3f)", n, first, last, res.TestAcc, base)
	if !(last < 0.8*first) {
		t.Errorf("loss did not decrease: %.3f -> %.3f", first, last)
	}
	if res.TestAcc <= base+0.05 {
		t.Errorf("held-out accuracy %.3f does not beat the baseline %.3f", res.TestAcc, base)
	}
}
