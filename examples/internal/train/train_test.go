package train

import (
	"bytes"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
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
