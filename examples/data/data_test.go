package data

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func idxBytes(dims []int, vals []byte) []byte {
	var b bytes.Buffer
	b.Write([]byte{0, 0, 0x08, byte(len(dims))})
	for _, d := range dims {
		binary.Write(&b, binary.BigEndian, uint32(d))
	}
	b.Write(vals)
	return b.Bytes()
}

func gz(b []byte) []byte {
	var out bytes.Buffer
	w := gzip.NewWriter(&out)
	w.Write(b)
	w.Close()
	return out.Bytes()
}

func TestReadIDX(t *testing.T) {
	raw := idxBytes([]int{2, 3}, []byte{1, 2, 3, 4, 5, 6})
	for _, tc := range []struct {
		name string
		in   []byte
	}{{"plain", raw}, {"gzip", gz(raw)}} {
		dims, vals, err := ReadIDX(bytes.NewReader(tc.in))
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if len(dims) != 2 || dims[0] != 2 || dims[1] != 3 {
			t.Errorf("%s: dims %v, want [2 3]", tc.name, dims)
		}
		if !bytes.Equal(vals, []byte{1, 2, 3, 4, 5, 6}) {
			t.Errorf("%s: vals %v", tc.name, vals)
		}
	}
}

func TestReadIDXErrors(t *testing.T) {
	for _, tc := range []struct {
		name, want string
		in         []byte
	}{
		{"empty", "header", nil},
		{"bad magic", "bad magic", []byte{1, 2, 8, 1, 0, 0, 0, 1, 0}},
		{"float type", "not supported", []byte{0, 0, 0x0d, 1, 0, 0, 0, 1, 0, 0, 0, 0}},
		{"truncated", "reading 6 data bytes", idxBytes([]int{2, 3}, []byte{1, 2})},
	} {
		_, _, err := ReadIDX(bytes.NewReader(tc.in))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want it to mention %q", tc.name, err, tc.want)
		}
	}
}

func TestMNISTFromFiles(t *testing.T) {
	dir := t.TempDir()
	n := 3
	img := make([]byte, n*Pixels)
	for i := range img {
		img[i] = byte(i % 256)
	}
	lab := []byte{7, 0, 9}
	// Images gzipped, labels plain: both forms must be found.
	if err := os.WriteFile(filepath.Join(dir, "t10k-images-idx3-ubyte.gz"), gz(idxBytes([]int{n, 28, 28}, img)), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "t10k-labels-idx1-ubyte"), idxBytes([]int{n}, lab), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := MNIST(dir, "t10k")
	if err != nil {
		t.Fatal(err)
	}
	if s.N != 3 || s.Labels[0] != 7 || s.Labels[2] != 9 {
		t.Fatalf("got N=%d labels %v", s.N, s.Labels)
	}
	if got, want := s.Image(1)[5], float64((Pixels+5)%256)/255; got != want {
		t.Errorf("pixel: got %v want %v", got, want)
	}
	if _, err := MNIST(dir, "train"); err == nil || !strings.Contains(err.Error(), "train-images-idx3-ubyte") {
		t.Errorf("missing train set: error %v", err)
	}
}

func TestDigitsDeterministicBalancedInRange(t *testing.T) {
	a, err := Digits(200, 42)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := Digits(200, 42)
	c, _ := Digits(200, 43)
	if !slices.Equal(a.Images, b.Images) || !slices.Equal(a.Labels, b.Labels) {
		t.Fatal("same seed gave different data")
	}
	if slices.Equal(a.Images, c.Images) {
		t.Fatal("different seeds gave the same data")
	}
	count := make([]int, 10)
	for _, l := range a.Labels {
		count[l]++
	}
	for d, k := range count {
		if k != 20 {
			t.Errorf("digit %d appears %d times, want 20", d, k)
		}
	}
	for _, v := range a.Images {
		if v < 0 || v > 1 {
			t.Fatalf("pixel %v outside [0,1]", v)
		}
	}
	if _, err := Digits(-1, 0); err == nil {
		t.Error("negative count accepted")
	}
}

// TestDigitsLearnableButNotTrivial: a nearest-centroid classifier (independent of bulkad)
// separates the classes far above chance, so the data has class structure, but the
// distortions keep it from being perfect on raw pixels.
func TestDigitsLearnableButNotTrivial(t *testing.T) {
	train, _ := Digits(2000, 1)
	test, _ := Digits(500, 2)
	var cent [10][Pixels]float64
	var cnt [10]float64
	for i := 0; i < train.N; i++ {
		l := train.Labels[i]
		cnt[l]++
		for k, v := range train.Image(i) {
			cent[l][k] += v
		}
	}
	for d := range cent {
		for k := range cent[d] {
			cent[d][k] /= cnt[d]
		}
	}
	ok := 0
	for i := 0; i < test.N; i++ {
		best, bd := -1, 0.0
		for d := range cent {
			s := 0.0
			for k, v := range test.Image(i) {
				e := v - cent[d][k]
				s += e * e
			}
			if best < 0 || s < bd {
				best, bd = d, s
			}
		}
		if best == test.Labels[i] {
			ok++
		}
	}
	acc := float64(ok) / float64(test.N)
	t.Logf("nearest-centroid accuracy %.3f", acc)
	if acc < 0.4 || acc > 0.995 {
		t.Errorf("nearest-centroid accuracy %.3f outside (0.4, 0.995)", acc)
	}
}

func TestIris(t *testing.T) {
	f, l, err := Iris()
	if err != nil {
		t.Fatal(err)
	}
	if len(f) != 150 || len(l) != 150 {
		t.Fatalf("%d rows", len(f))
	}
	// First row of Fisher's data: 5.1, 3.5, 1.4, 0.2, setosa.
	if f[0] != [4]float64{5.1, 3.5, 1.4, 0.2} || l[0] != 0 {
		t.Errorf("first row %v %d", f[0], l[0])
	}
	var count [3]int
	for _, c := range l {
		count[c]++
	}
	if count != [3]int{50, 50, 50} {
		t.Errorf("class counts %v", count)
	}
}
