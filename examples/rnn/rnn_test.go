package main

import (
	"fmt"
	"math"
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
	train.CheckLearned(t, res, 10, 10, 0.8, math.Nextafter(base+0.05, 1), fmt.Sprintf("above the most-frequent baseline %.3f", base))
}
