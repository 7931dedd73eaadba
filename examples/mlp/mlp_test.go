package main

import (
	"bytes"
	"math/rand"
	"strings"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/bulkad/bulkad"
	"github.com/bulkad/bulkad/examples/internal/train"
)

// exampleWithDigits is the MLP with the given hidden width and a training set of n built-in
// digits drawn with seed.
func exampleWithDigits(t *testing.T, hidden, n int, seed int64) (train.Example, *train.Data) {
	t.Helper()
	ex := example(&hidden)
	trainSet, _, _, err := ex.Load("", n, seed)
	if err != nil {
		t.Fatal(err)
	}
	return ex, trainSet
}

// TestShortTrainingLearns trains briefly with bulkad.Grad and checks that the loss goes down
// and the held-out accuracy is far above chance (10%).
func TestShortTrainingLearns(t *testing.T) {
	h := 64
	res, _, _, err := train.Quick(example(&h), bulkad.Grad, 1500, 3, 5, func(c *train.Config) {
		c.Dtype, c.Batch, c.Epochs, c.LearnRate, c.Seed = tensor.Float64, 50, 2, 0.003, 5
	})
	if err != nil {
		t.Fatal(err)
	}
	n := len(res.Curve.Loss)
	if n != 60 {
		t.Fatalf("%d steps, want 60", n)
	}
	train.CheckLearned(t, res, 10, 10, 0.6, 0.5, "chance is 0.1")
}

// TestGradientsMatchGorgonia: on the MLP, bulkad's gradients equal Gorgonia's (which are
// correct for these ops) for both dtypes.
func TestGradientsMatchGorgonia(t *testing.T) {
	ex, trainSet := exampleWithDigits(t, 32, 200, 7)
	for _, tc := range []struct {
		dt  tensor.Dtype
		tol float64
	}{{tensor.Float64, 1e-10}, {tensor.Float32, 1e-4}} {
		cfg := ex.Defaults
		cfg.Dtype, cfg.Batch = tc.dt, 20
		idx := rand.New(rand.NewSource(1)).Perm(trainSet.N)[:20]
		x, y, _ := train.Batch(tc.dt, trainSet, idx, ex.XShape(20), 10)
		diff, err := train.GradientDifference(cfg, ex.Build, ex.Init(tc.dt, 3), bulkad.Grad, G.Grad, x, y)
		if err != nil {
			t.Fatal(err)
		}
		if diff > tc.tol {
			t.Errorf("%v: largest gradient difference %g > %g", tc.dt, diff, tc.tol)
		}
	}
}

// TestMainSmoke runs the command's flag path for a few steps with -compare.
func TestMainSmoke(t *testing.T) {
	var out bytes.Buffer
	h := 16
	err := train.Main(example(&h), bulkad.Grad, "bulkad.Grad", G.Grad, []string{"-steps", "3", "-n", "300", "-batch", "50", "-compare"}, &out)
	if err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	for _, want := range []string{"held-out accuracy", "step time bulkad.Grad / gorgonia.Grad", "largest gradient difference",
		"gradcheck.Check on that batch", "bulkad.Grad agrees with them", "gorgonia.Grad agrees with them"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}

// TestHiddenFlag: a hidden width below 1 is refused before the data is drawn (it used to
// panic inside Gorgonia or in the weight initialisation).
func TestHiddenFlag(t *testing.T) {
	for _, arg := range []string{"0", "-3"} {
		var out bytes.Buffer
		h := 256
		err := train.Main(example(&h), bulkad.Grad, "bulkad.Grad", G.Grad, []string{"-hidden", arg}, &out)
		if err == nil || !strings.Contains(err.Error(), "-hidden "+arg+": want at least one hidden unit") {
			t.Errorf("-hidden %s: error %v", arg, err)
		}
		if strings.Contains(out.String(), "data:") {
			t.Errorf("-hidden %s: data drawn before the flag was refused:\n%s", arg, out.String())
		}
	}
}
