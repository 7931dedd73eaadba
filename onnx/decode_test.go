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
	paths, err := filepath.Glob(filepath.Join("testdata", "*.onnx"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no fixtures: %v", err)
	}
	layers, err := filepath.Glob(filepath.Join("testdata", "layers", "*.onnx"))
	if err != nil {
		t.Fatal(err)
	}
	paths = append(paths, layers...)
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
		if err := importBytes(t, b); err != nil {
			t.Fatalf("intact fixture: %v", err)
		}
		for k := 0; k < 60; k++ {
			cut := rng.Intn(len(b))
			if err := importBytes(t, b[:cut]); err != nil && !strings.HasPrefix(err.Error(), "onnx: ") {
				t.Errorf("error without the package name: %v", err)
			}
		}
		for k := 0; k < 200; k++ {
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
	for _, b := range [][]byte{nil, {0}, []byte("not a model"), {0x3a, 0xff, 0xff, 0xff, 0xff, 0x0f}} {
		if err := importBytes(t, b); err == nil {
			t.Errorf("%q: no error", b)
		}
	}
}

// FuzzImport: any bytes decode and lower to an error or a program, without a panic.
//
//	go test -run XXX -fuzz FuzzImport -fuzztime 60s ./onnx
func FuzzImport(f *testing.F) {
	for _, b := range fixtures(f) {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		_ = importBytes(t, b)
	})
}
