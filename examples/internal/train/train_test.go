package train

import (
	"bytes"
	"fmt"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gorgonia.org/tensor"
)

func TestArgmaxAccuracyOneHot(t *testing.T) {
	pred := Argmax([]float64{0.1, 0.7, 0.2, 0.9, 0.05, 0.05}, 2, 3)
	if pred[0] != 1 || pred[1] != 0 {
		t.Fatalf("argmax %v", pred)
	}
	if a := Accuracy(pred, []int{1, 2}); a != 0.5 {
		t.Errorf("accuracy %v", a)
	}
	dst := make([]float64, 6)
	OneHot(dst, []int{2, 0}, 3)
	if dst[2] != 1 || dst[3] != 1 || dst[0]+dst[1]+dst[4]+dst[5] != 0 {
		t.Errorf("one-hot %v", dst)
	}
}

func TestProgressNonTTYPrintsOnceAtEnd(t *testing.T) {
	var b bytes.Buffer
	p := NewProgress(&b, "epoch 1", 4, false)
	for i := 1; i <= 4; i++ {
		p.Update(i, 0.5, 0.25, 3*time.Millisecond)
	}
	out := b.String()
	if strings.Count(out, "\n") != 1 || !strings.Contains(out, "4/4 train loss 0.5000 train acc 0.250 3.0ms/step") {
		t.Errorf("output %q", out)
	}
}

func TestMedian(t *testing.T) {
	if m := Median([]time.Duration{5, 1, 3}); m != 3 {
		t.Errorf("median %v", m)
	}
}

func TestPlotWritesPNG(t *testing.T) {
	var c Curve
	for i := 0; i < 20; i++ {
		c.Add(2/float64(i+1), float64(i)/20)
	}
	path := filepath.Join(t.TempDir(), "loss.png")
	if err := c.Plot(path, "test"); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("not a PNG: %v", err)
	}
	if b := img.Bounds(); b.Dx() < 400 || b.Dy() < 200 {
		t.Errorf("image too small: %v", b)
	}
	if err := (&Curve{}).Plot(path, "empty"); err == nil {
		t.Error("empty curve accepted")
	}
}

// TestEpochShown: without a terminal at most about ten epochs print a progress line, evenly
// spaced, and the last always.
func TestEpochShown(t *testing.T) {
	for _, c := range []struct {
		epochs int
		want   []int
	}{
		{1, []int{1}},
		{4, []int{1, 2, 3, 4}},
		{10, []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}},
		{12, []int{2, 4, 6, 8, 10, 12}},
		{40, []int{4, 8, 12, 16, 20, 24, 28, 32, 36, 40}},
		{41, []int{5, 10, 15, 20, 25, 30, 35, 40, 41}},
	} {
		var got []int
		for e := 1; e <= c.epochs; e++ {
			if EpochShown(e, c.epochs) {
				got = append(got, e)
			}
		}
		if fmt.Sprint(got) != fmt.Sprint(c.want) {
			t.Errorf("%d epochs: lines for %v, want %v", c.epochs, got, c.want)
		}
	}
}

// TestCheckFlagsUpFront: the checks Main runs before training refuse what would fail later.
func TestCheckFlagsUpFront(t *testing.T) {
	for _, lr := range []float64{math.NaN(), math.Inf(1), math.Inf(-1), 0, -0.1} {
		if err := CheckLearnRate("cmd", lr); err == nil {
			t.Errorf("-lr %v accepted", lr)
		}
	}
	if err := CheckLearnRate("cmd", 1e-3); err != nil {
		t.Errorf("-lr 1e-3: %v", err)
	}
	dir := t.TempDir()
	for _, name := range []string{"loss.png", "loss.SVG", "loss.pdf", "loss"} {
		if err := CheckPlotPath(filepath.Join(dir, name)); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	if err := CheckPlotPath(filepath.Join(dir, "loss.txt")); err == nil || !strings.Contains(err.Error(), `"txt" is no image format`) {
		t.Errorf("loss.txt: %v", err)
	}
	if err := CheckPlotPath(filepath.Join(dir, "no", "loss.png")); err == nil {
		t.Error("a path in a missing folder accepted")
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("the checks left files behind: %v", entries)
	}
}

// TestEvaluateEveryExample: the held-out accuracy counts every example, whether or not the
// batch divides the set or exceeds it (-batch 6000 with 1000 test examples).
func TestEvaluateEveryExample(t *testing.T) {
	h := 8
	ex := MLP(&h)
	_, test, _, err := ex.Load("", 100, 1)
	if err != nil {
		t.Fatal(err)
	}
	test.N, test.X, test.Labels = 7, test.X[:7*test.Features], test.Labels[:7]
	params := ex.Init(tensor.Float64, 1)
	cfg := ex.Defaults
	cfg.Name, cfg.Dtype = ex.Name, tensor.Float64
	var accs []float64
	for _, batch := range []int{1, 3, 7, 10} {
		cfg.Batch = batch
		acc, err := Evaluate(cfg, ex.Build, params, test, ex.XShape(batch))
		if err != nil {
			t.Fatalf("batch %d: %v", batch, err)
		}
		if k := acc * 7; math.Abs(k-math.Round(k)) > 1e-9 {
			t.Errorf("batch %d: accuracy %v is no count of 7 examples", batch, acc)
		}
		accs = append(accs, acc)
	}
	for _, a := range accs[1:] {
		if a != accs[0] {
			t.Errorf("accuracies by batch size (1, 3, 7, 10) differ: %v", accs)
		}
	}
}
