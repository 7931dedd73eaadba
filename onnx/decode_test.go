package onnx

import (
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fixtures are the exported models of testdata and testdata/layers (testdata/shapes has a
// corruption test of its own, TestCorruptShapeModels).
func fixtures(t testing.TB) [][]byte {
	return readFixtures(t, "testdata", filepath.Join("testdata", "layers"))
}

// readFixtures reads the .onnx files of dirs; it fails t when the first folder has none.
func readFixtures(t testing.TB, dirs ...string) [][]byte {
	var paths []string
	for i, dir := range dirs {
		ps, err := filepath.Glob(filepath.Join(dir, "*.onnx"))
		if err != nil || (i == 0 && len(ps) == 0) {
			t.Fatalf("no fixtures in %s: %v", dir, err)
		}
		paths = append(paths, ps...)
	}
	var out [][]byte
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, b)
	}
	return out
}

// importBytes decodes and lowers, turning a panic into a test failure.
func importBytes(t testing.TB, b []byte) (err error) {
	defer func() {
		if r := recover(); r != nil {
			t.Fatalf("panic on %d bytes: %v", len(b), r)
		}
	}()
	m, err := Decode(b)
	if err != nil {
		return err
	}
	_, err = Lower(m)
	return err
}

// TestCorruptModels: truncated and bit-flipped fixtures give errors or valid programs, never a
// panic; every error names the package.
func TestCorruptModels(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	for _, b := range fixtures(t) {
		corrupt(t, rng, b, 60, 200)
	}
	for _, b := range [][]byte{nil, {0}, []byte("not a model"), {0x3a, 0xff, 0xff, 0xff, 0xff, 0x0f}} {
		if err := importBytes(t, b); err == nil {
			t.Errorf("%q: no error", b)
		}
	}
}

// FuzzImport: any bytes decode and lower to an error or a program, without a panic.
//
//	go test -run XXX -fuzz FuzzImport -fuzztime 60s ./onnx
func FuzzImport(f *testing.F) { fuzzImport(f, fixtures(f)) }

// fuzzImport is FuzzImport seeded with seeds.
func fuzzImport(f *testing.F, seeds [][]byte) {
	for _, b := range seeds {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		_ = importBytes(t, b)
	})
}

// corrupt imports b intact (which must succeed), truncated at cuts random lengths and with
// 1 to 3 random bits flipped in flips copies: each gives a program or an error naming the
// package, never a panic.
func corrupt(t *testing.T, rng *rand.Rand, b []byte, cuts, flips int) {
	t.Helper()
	if err := importBytes(t, b); err != nil {
		t.Fatalf("intact fixture: %v", err)
	}
	for k := 0; k < cuts; k++ {
		cut := rng.Intn(len(b))
		if err := importBytes(t, b[:cut]); err != nil && !strings.HasPrefix(err.Error(), "onnx: ") {
			t.Errorf("error without the package name: %v", err)
		}
	}
	for k := 0; k < flips; k++ {
		c := append([]byte(nil), b...)
		for f := 0; f < 1+rng.Intn(3); f++ {
			i := rng.Intn(len(c))
			c[i] ^= 1 << uint(rng.Intn(8))
		}
		if err := importBytes(t, c); err != nil && !strings.HasPrefix(err.Error(), "onnx: ") {
			t.Errorf("error without the package name: %v", err)
		}
	}
}
