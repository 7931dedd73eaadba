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
// example does not have are refused before training, a bad -plot path is reported before
// training, and -steps beyond the default epochs trains exactly that many steps.
func TestFlags(t *testing.T) {
	cases := []struct {
		name    string
		args    []string
		wantErr string // "" for success
		want    []string
		notWant string
	}{
		{"help", []string{"-h"}, "", []string{"Flags:", "-steps", "-plot"}, "data: 120"},
		{"no -n", []string{"-n", "5"}, "flag provided but not defined: -n", nil, "data: 120"},
		{"no -data", []string{"-data", "/tmp"}, "flag provided but not defined: -data", nil, "data: 120"},
		{"bad plot path", []string{"-plot", "/nonexistent-dir/loss.png"}, "-plot: open /nonexistent-dir/loss.png", nil, "data: 120"},
		{"steps beyond the epochs", []string{"-steps", "400", "-epochs", "40"}, "", []string{"stopping there, not at -steps 400", "bulkad.Grad: 320 steps"}, ""},
		{"steps extend the default epochs", []string{"-steps", "400"}, "", []string{"training 50 epochs of 8 steps", "bulkad.Grad: 400 steps", "held-out accuracy"}, ""},
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
		})
	}
}
