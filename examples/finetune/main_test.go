package main

import (
	"bytes"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"

	"github.com/bulkad/bulkad/internal/testutil"
)

// TestFineTune: the shipped ONNX model imports, and 40 steps of bulkad gradients + Adam at
// least halve the training loss; bad flags are errors, -h is not.
func TestFineTune(t *testing.T) {
	var out bytes.Buffer
	if err := run([]string{"-steps", "40"}, &out); err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`training loss ([0-9.]+) → ([0-9.]+)`).FindStringSubmatch(out.String())
	if m == nil {
		t.Fatalf("no loss line in:\n%s", out.String())
	}
	first, _ := strconv.ParseFloat(m[1], 64)
	last, _ := strconv.ParseFloat(m[2], 64)
	if !(last < first/2) {
		t.Errorf("loss %g → %g: want at least halved", first, last)
	}
	testutil.CheckFlags(t, run, "-steps", [][]string{{"-steps", "0"}, {"-model", "/no/such.onnx"}, {"-plot", "/no/such/dir/p.png"}, {"x"},
		{"-plot", "p.txt"}, {"-lr", "Inf"}, {"-lr", "NaN"}, {"-lr", "0"}}, "training loss")
}

// TestFineTuneSave: -save writes the fine-tuned model; fine-tuning the saved model again
// starts from the loss the first run reached (its parameters are the fine-tuned ones), below
// the shipped model's starting loss.
func TestFineTuneSave(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tuned.onnx")
	var out bytes.Buffer
	if err := run([]string{"-steps", "40", "-save", path}, &out); err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile(`training loss ([0-9.]+) → ([0-9.]+)`)
	m := re.FindStringSubmatch(out.String())
	out.Reset()
	if err := run([]string{"-steps", "1", "-model", path}, &out); err != nil {
		t.Fatal(err)
	}
	m2 := re.FindStringSubmatch(out.String())
	if m == nil || m2 == nil {
		t.Fatalf("no loss lines:\n%s", out.String())
	}
	first, _ := strconv.ParseFloat(m[1], 64)
	tuned, _ := strconv.ParseFloat(m[2], 64)
	again, _ := strconv.ParseFloat(m2[1], 64)
	// the saved parameters are those after step 40's update: their loss is at most the last
	// loss the first run printed (before that update), up to the printed precision
	if !(again <= tuned+1e-3) || !(again < first/2) {
		t.Errorf("shipped loss %g, tuned %g, the saved model starts at %g", first, tuned, again)
	}
	if err := run([]string{"-save", "/no/such/dir/m.onnx"}, &out); err == nil {
		t.Error("-save into a missing folder: no error")
	}
}

// TestFineTuneCNN: the shipped ResNet-style CNN from PyTorch imports, and 30 steps of bulkad
// gradients + Adam on the built-in digits lower its training loss and lift its held-out
// accuracy well above chance (10%); -n below one batch is an error.
func TestFineTuneCNN(t *testing.T) {
	var out bytes.Buffer
	if err := run([]string{"-cnn", "-steps", "30", "-n", "512"}, &out); err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`training loss ([0-9.]+) → ([0-9.]+) .*held-out accuracy ([0-9.]+)%`).FindStringSubmatch(out.String())
	if m == nil {
		t.Fatalf("no loss line in:\n%s", out.String())
	}
	first, _ := strconv.ParseFloat(m[1], 64)
	last, _ := strconv.ParseFloat(m[2], 64)
	acc, _ := strconv.ParseFloat(m[3], 64)
	if !(last < first) || !(acc >= 25) {
		t.Errorf("loss %g → %g, held-out accuracy %g%%: want a lower loss and at least 25%%", first, last, acc)
	}
	if err := run([]string{"-cnn", "-n", "8"}, &out); err == nil {
		t.Error("-cnn -n 8: no error")
	}
}
