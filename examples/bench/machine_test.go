package main

import (
	"bytes"
	"math"
	"strings"
	"testing"
	"time"

	"gorgonia.org/tensor"
)

// TestMachineSmoke runs -machine on the tiny models: every model steps on machine.New
// (none is refused), its first step matches the TapeMachine's within the dtype's tolerance,
// and the table has a row per model with no footnote.
func TestMachineSmoke(t *testing.T) {
	res, err := run(options{small: true, rounds: 1, engine: true, steps: true, machine: true})
	if err != nil {
		t.Fatal(err)
	}
	if n := 2 * len(specs(true)); len(res.Rows) != n {
		t.Fatalf("%d rows, want %d", len(res.Rows), n)
	}
	for _, r := range res.Rows {
		m := r.Machine
		if m == nil {
			t.Fatalf("%s %s: no machine measurement", r.Model, r.Dtype)
		}
		if m.Error != "" || m.Mismatch != "" {
			t.Errorf("%s %s: error %q, mismatch %q", r.Model, r.Dtype, m.Error, m.Mismatch)
		}
		if !(m.StepMS > 0 && m.Setup.CompileMS > 0 && m.Setup.FirstRunMS > 0 && m.Setup.GradMS > 0) {
			t.Errorf("%s %s: %+v", r.Model, r.Dtype, m)
		}
		if math.Abs(m.OverBulkad-m.StepMS/r.BulkadStepMS) > 1e-12 {
			t.Errorf("%s %s: machine/bulkad %v, want %v / %v", r.Model, r.Dtype, m.OverBulkad, m.StepMS, r.BulkadStepMS)
		}
	}
	var buf bytes.Buffer
	printMachine(&buf, res.Rows)
	if got, want := strings.Count(buf.String(), "\n| "), len(res.Rows)+1; got != want {
		t.Errorf("%d table lines, want %d (header and one per row):\n%s", got, want, buf.String())
	}
	if strings.Contains(buf.String(), "[1]") {
		t.Errorf("a footnote in a table without refusals:\n%s", buf.String())
	}
}

// TestCompareFirst checks the first-step comparison on hand-made steps: the loss is compared
// relatively, gradients against the largest entry of any gradient (so that a gradient that
// is rounding noise around zero does not fail), and NaN always fails.
func TestCompareFirst(t *testing.T) {
	tape := firstStep{loss: 2, grads: [][]float64{{1, -4}, {1e-17, 0}}, names: []string{"w", "bk"}}
	cases := []struct {
		name     string
		mach     firstStep
		mismatch string // a substring of Mismatch; "" for none
		gradDiff float64
	}{
		{"equal", firstStep{loss: 2, grads: [][]float64{{1, -4}, {1e-17, 0}}}, "", 0},
		{"noise around zero", firstStep{loss: 2, grads: [][]float64{{1, -4}, {-3e-17, 2e-17}}}, "", 4e-17 / 4},
		{"loss", firstStep{loss: 2.01, grads: [][]float64{{1, -4}, {1e-17, 0}}}, "loss 2.01", 0},
		{"gradient", firstStep{loss: 2, grads: [][]float64{{1, -3.9}, {1e-17, 0}}}, `"w"`, 0.1 / 4},
		{"NaN gradient", firstStep{loss: 2, grads: [][]float64{{math.NaN(), -4}, {1e-17, 0}}}, `"w"`, math.NaN()},
		{"NaN loss", firstStep{loss: math.NaN(), grads: [][]float64{{1, -4}, {1e-17, 0}}}, "loss NaN", 0},
		{"count", firstStep{loss: 2, grads: [][]float64{{1, -4}}}, "1 gradients", 0},
		{"size", firstStep{loss: 2, grads: [][]float64{{1, -4, 0}, {1e-17, 0}}}, "3 elements", 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var r MachineRow
			compareFirst(&r, c.mach, tape, 1e-6)
			if c.mismatch == "" && r.Mismatch != "" || !strings.Contains(r.Mismatch, c.mismatch) {
				t.Errorf("mismatch %q, want one containing %q", r.Mismatch, c.mismatch)
			}
			if math.IsNaN(c.gradDiff) != math.IsNaN(r.GradDiff) || !math.IsNaN(c.gradDiff) && math.Abs(r.GradDiff-c.gradDiff) > 1e-12*c.gradDiff+1e-30 {
				t.Errorf("gradient difference %v, want %v", r.GradDiff, c.gradDiff)
			}
			if r.Loss != c.mach.loss && !math.IsNaN(c.mach.loss) || r.TapeLoss != tape.loss {
				t.Errorf("losses %v / %v, want %v / %v", r.Loss, r.TapeLoss, c.mach.loss, tape.loss)
			}
		})
	}
}

// TestFmtMachineRefused checks that a refused model prints "—" with a footnote giving the
// reason, and that the other rows keep their numbers.
func TestFmtMachineRefused(t *testing.T) {
	rows := []Row{
		{Model: "a", Dtype: "float64", BulkadStepMS: 2, Machine: &MachineRow{Error: "machine: new: node \"x\" (op Dropout): use gorgonia.NewTapeMachine"}},
		{Model: "b", Dtype: "float32", BulkadStepMS: 2, TorchStepMS: 4, Machine: &MachineRow{StepMS: 1, OverBulkad: 0.5, OverTorch: 0.25, PairedOverTorch: 0.3, Loss: 1, TapeLoss: 1}},
	}
	var buf bytes.Buffer
	printMachine(&buf, rows)
	out := buf.String()
	for _, want := range []string{"| a | float64 | 2.00 | — [1] |", "[1] a float64: machine.New or its run failed: machine: new: node \"x\" (op Dropout)",
		"| b | float32 | 2.00 | 1.00 | **0.50** | 4.00 | **0.25** (0.30) |"} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in\n%s", want, out)
		}
	}
	if strings.Contains(out, "[2]") {
		t.Errorf("a second footnote:\n%s", out)
	}
}

// TestTolerance pins the first-step tolerances to a few thousand roundings of each dtype.
func TestTolerance(t *testing.T) {
	for _, c := range []struct {
		dt  tensor.Dtype
		eps float64
	}{{tensor.Float64, 0x1p-52}, {tensor.Float32, 0x1p-23}} {
		if k := tolerance(c.dt) / c.eps; !(k >= 100 && k <= 1e8) {
			t.Errorf("%v: tolerance %v is %v roundings", c.dt, tolerance(c.dt), k)
		}
	}
}

// TestPairedRatio checks the median of per-round ratios against hand-computed values.
func TestPairedRatio(t *testing.T) {
	ms := func(xs ...float64) []time.Duration {
		var d []time.Duration
		for _, x := range xs {
			d = append(d, time.Duration(x*float64(time.Millisecond)))
		}
		return d
	}
	for _, c := range []struct {
		name string
		a, b []time.Duration
		want float64
	}{
		// the medians' ratio would be 20/10 = 2; the rounds' ratios are 1, 1, 3
		{"drift", ms(10, 20, 30), ms(10, 20, 10), 1},
		{"odd", ms(2, 9, 4), ms(1, 3, 1), 3},
		{"lengths differ", ms(1, 2), ms(1), 0},
		{"none", nil, nil, 0},
		{"a zero step", ms(1, 2, 3), ms(1, 0, 1), 0},
	} {
		if got := pairedRatio(c.a, c.b); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("%s: pairedRatio = %g, want %g", c.name, got, c.want)
		}
	}
}
