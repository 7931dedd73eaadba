package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bulkad/bulkad/internal/testutil"
	"gorgonia.org/tensor"
)

// TestNewtonBeatsGradientDescent: from the same start and at equal machine runs, Newton-CG
// with bulkad.HessianVector reaches a lower training loss than gradient descent with step 1/L,
// Newton's loss never increases (backtracking), and both dtypes work.
func TestNewtonBeatsGradientDescent(t *testing.T) {
	for _, dt := range []tensor.Dtype{tensor.Float64, tensor.Float32} {
		res, err := compare(config{steps: 6, cg: 8, damping: 1e-4, l2: 1e-3, dtype: dt, seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		runs := len(res.newton) - 1
		if len(res.gd) != runs+1 {
			t.Fatalf("%v: gradient descent has %d points, Newton %d", dt, len(res.gd), runs+1)
		}
		for i := 1; i < len(res.newton); i++ {
			if res.newton[i] > res.newton[i-1]*(1+1e-6) {
				t.Errorf("%v: Newton-CG loss rose at run %d: %g → %g", dt, i, res.newton[i-1], res.newton[i])
			}
		}
		if !(res.newton[runs] < 0.5*res.gd[runs]) {
			t.Errorf("%v: Newton-CG loss %g, gradient descent %g at %d runs: want Newton below half", dt, res.newton[runs], res.gd[runs], runs)
		}
		if !(res.gd[runs] < res.gd[0]) {
			t.Errorf("%v: gradient descent did not decrease the loss: %g → %g", dt, res.gd[0], res.gd[runs])
		}
		if !(res.lipschitz > 0) {
			t.Errorf("%v: L = %g", dt, res.lipschitz)
		}
	}
}

// TestRunFlags: -h succeeds, bad flags are errors before anything is computed, -plot writes a
// PNG.
func TestRunFlags(t *testing.T) {
	var out bytes.Buffer
	testutil.CheckFlags(t, run, "-steps", [][]string{{"-dtype", "int"}, {"-steps", "0"}, {"extra"}, {"-plot", "/no/such/dir/x.png"},
		{"-plot", "x.txt"}, {"-damping", "Inf"}, {"-l2", "Inf"}, {"-l2", "NaN"}}, "Newton-CG")
	png := filepath.Join(t.TempDir(), "n.png")
	out.Reset()
	if err := run([]string{"-steps", "3", "-cg", "4", "-plot", png}, &out); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(png); err != nil || fi.Size() == 0 {
		t.Errorf("plot not written: %v", err)
	}
	if !strings.Contains(out.String(), "Newton-CG") || !strings.Contains(out.String(), "gradient descent") {
		t.Errorf("output:\n%s", out.String())
	}
}
