package main

import (
	"bytes"
	"regexp"
	"strconv"
	"strings"
	"testing"
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
	out.Reset()
	if err := run([]string{"-h"}, &out); err != nil || !strings.Contains(out.String(), "-steps") {
		t.Errorf("-h: %v %s", err, out.String())
	}
	for _, args := range [][]string{{"-steps", "0"}, {"-model", "/no/such.onnx"}, {"-plot", "/no/such/dir/p.png"}, {"x"}} {
		if err := run(args, &out); err == nil {
			t.Errorf("%v: no error", args)
		}
	}
}
