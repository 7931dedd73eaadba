package main

import (
	"bytes"
	"strings"
	"testing"

	"gorgonia.org/tensor"

	"github.com/bulkad/bulkad"
	"github.com/bulkad/bulkad/examples/internal/train"
)

// TestTrainingLearns: softmax regression on iris with bulkad.Grad reaches a held-out
// accuracy far above chance (1/3); linear models are known to reach > 90% on iris.
func TestTrainingLearns(t *testing.T) {
	res, trainSet, testSet, err := train.Quick(example(), bulkad.Grad, 0, 1, 1, func(c *train.Config) { c.Dtype = tensor.Float64 })
	if err != nil {
		t.Fatal(err)
	}
	if trainSet.N != 120 || testSet.N != 30 {
		t.Fatalf("split %d/%d", trainSet.N, testSet.N)
	}
	train.CheckLearned(t, res, 1, 8, 0.5, 0.8, "chance is 1/3")
}

// TestFlags runs the command line as a newcomer would: -h succeeds with the usage, flags the
// example does not have are refused before training, so are a bad -plot path or format, a
// learning rate that is not a finite positive number and a batch larger than the training
// set; a batch larger than the 30 held-out flowers still evaluates all of them; -steps beyond
// the default epochs trains exactly that many steps; and the output, not a terminal, holds one
// progress line for every fifth of the 50 epochs.
func TestFlags(t *testing.T) {
	cases := []struct {
		name       string
		args       []string
		wantErr    string // "" for success
		want       []string
		notWant    string
		epochLines int // progress lines expected (0: not counted)
	}{
		{"help", []string{"-h"}, "", []string{"Trains", "Flags:", "-steps", "-plot"}, "data: 120", 0},
		{"no -n", []string{"-n", "5"}, "flag provided but not defined: -n", nil, "data: 120", 0},
		{"no -data", []string{"-data", "/tmp"}, "flag provided but not defined: -data", nil, "data: 120", 0},
		{"bad plot path", []string{"-plot", "/nonexistent-dir/loss.png"}, "-plot: open /nonexistent-dir/loss.png", nil, "data: 120", 0},
		{"bad plot format", []string{"-plot", "loss.txt"}, `-plot: loss.txt: "txt" is no image format`, nil, "data: 120", 0},
		{"NaN learning rate", []string{"-lr", "NaN"}, "-lr NaN: want a finite learning rate above 0", nil, "data: 120", 0},
		{"batch above the training set", []string{"-batch", "121"}, "-batch 121: the 120 training examples are fewer than one batch", nil, "with bulkad.Grad", 0},
		{"batch above the test set", []string{"-batch", "40", "-epochs", "2"}, "", []string{"bulkad.Grad: 6 steps", "(30 test examples)"}, "", 2},
		{"steps beyond the epochs", []string{"-steps", "400", "-epochs", "40"}, "", []string{"stopping there, not at -steps 400", "bulkad.Grad: 320 steps"}, "", 10},
		{"steps extend the default epochs", []string{"-steps", "400"}, "", []string{"training 50 epochs of 8 steps", "one progress line every 5 epochs", "epoch 50 [", "bulkad.Grad: 400 steps", "held-out accuracy"}, "epoch 49 [", 10},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var out bytes.Buffer
			err := train.Main(example(), bulkad.Grad, "bulkad.Grad", nil, c.args, &out)
			switch {
			case c.wantErr == "" && err != nil:
				t.Fatalf("%v\n%s", err, out.String())
			case c.wantErr != "" && (err == nil || !strings.Contains(err.Error(), c.wantErr) && !strings.Contains(out.String(), c.wantErr)):
				t.Fatalf("error %v, want %q\n%s", err, c.wantErr, out.String())
			}
			for _, w := range c.want {
				if !strings.Contains(out.String(), w) {
					t.Errorf("output lacks %q:\n%s", w, out.String())
				}
			}
			if c.notWant != "" && strings.Contains(out.String(), c.notWant) {
				t.Errorf("output contains %q:\n%s", c.notWant, out.String())
			}
			if n := strings.Count(out.String(), "\nepoch "); c.epochLines > 0 && n != c.epochLines {
				t.Errorf("%d progress lines, want %d:\n%s", n, c.epochLines, out.String())
			}
		})
	}
}
