package kernel

import (
	"fmt"
	"math/rand"
	"strings"
	"testing"

	"github.com/bulkad/bulkad/core"
)

// windowScatter is the Scatter of a 3×3, padding-1 col2im of [b, c, h, h] images over the
// domain [b, h, h, c, 3, 3] (its plan's fast paths set).
func windowScatter(t *testing.T, b, c, h int) *Scatter { return windowScatterOf(t, b, c, h, false) }

// windowScatterOf is windowScatter, into [b, h, h, c] images with channelsLast.
func windowScatterOf(t *testing.T, b, c, h int, channelsLast bool) *Scatter {
	t.Helper()
	iv := make([]*core.Var, 6)
	for j := range iv {
		iv[j], _ = core.NewVar(fmt.Sprintf("i%d", j), core.Scalar(core.Int64))
	}
	one, _ := core.NewLitI(core.Shape{}, []int64{1})
	pos := func(o, tap *core.Var) core.Term {
		s, _ := core.NewBinary(core.OpAdd, o, tap)
		d, _ := core.NewBinary(core.OpSub, s, one)
		return d
	}
	out, dst := []core.Term{iv[0], iv[3], pos(iv[1], iv[4]), pos(iv[2], iv[5])}, []int{b, c, h, h}
	if channelsLast {
		out, dst = []core.Term{iv[0], pos(iv[1], iv[4]), pos(iv[2], iv[5]), iv[3]}, []int{b, h, h, c}
	}
	fn, err := core.NewIndexFn(iv, out)
	if err != nil {
		t.Fatal(err)
	}
	prog, err := CompileIndexFn(fn)
	if err != nil {
		t.Fatal(err)
	}
	s := &Scatter{Dom: []int{b, h, h, c, 3, 3}, Dst: dst, Rest: 1}
	s.Fn = prog
	s.SetFastPaths(s.Dom, s.Dst)
	return s
}

// TestScatterProductErrors: a geometry the kernel cannot run is an error naming it, at
// construction, and factors shorter than their strides reach are an error at run time, not
// a panic.
func TestScatterProductErrors(t *testing.T) {
	s := windowScatter(t, 2, 3, 8)
	if !s.PaddedWindows() {
		t.Fatal("the col2im scatter does not run in the padded windows mode")
	}
	pts := 2 * 8 * 8
	cases := []struct {
		name   string
		s      *Scatter
		shape  []int
		xs, ys []int
		want   string
	}{
		{"taps", s, []int{pts, 3, 8}, []int{24, 8, 1}, []int{24, 8, 1}, "taps"},
		{"runs", s, []int{12, 32, 9}, []int{288, 9, 1}, []int{288, 9, 1}, "no run"},
		{"strides", s, []int{pts, 3, 9}, []int{3, 1}, []int{27, 9, 1}, "strides"},
		{"not padded", &Scatter{Dom: []int{pts, 3, 9}, Rest: 1}, []int{pts, 3, 9}, []int{27, 9, 1}, []int{27, 9, 1}, "windows"},
	}
	for _, c := range cases {
		if _, err := NewScatterProduct(c.s, c.shape, c.xs, c.ys, 0, 0); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one saying %q", c.name, err, c.want)
		}
	}
	k, err := NewScatterProduct(s, []int{pts, 3, 9}, []int{3, 1, 0}, []int{0, 9, 1}, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]float64, 2*3*8*8)
	if err := k.Run(out, []any{make([]float64, pts*3-1), make([]float64, 27)}); err == nil {
		t.Error("a short δ ran")
	}
	if err := k.Run(out, []any{make([]float64, pts*3), make([]float32, 27)}); err == nil {
		t.Error("mixed dtypes ran")
	}
	if err := k.Run(out, []any{make([]float64, pts*3), make([]float64, 27)}); err != nil {
		t.Errorf("factors of the right sizes: %v", err)
	}
}

// TestProductSplits: ScatterProduct (channels first: the windows walk; channels last: the
// rows walk) and ReduceProduct split across goroutines give the serial run's bits.
func TestProductSplits(t *testing.T) {
	r := rand.New(rand.NewSource(9))
	const b, c, h = 32, 16, 16
	pts := b * h * h
	dl, wf := randSlice[float32](r, pts*c), randSlice[float32](r, c*9)
	for _, last := range []bool{false, true} {
		k, err := NewScatterProduct(windowScatterOf(t, b, c, h, last), []int{pts, c, 9}, []int{c, 1, 0}, []int{0, 9, 1}, 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		if k.channels != last {
			t.Fatalf("channels last %v: the kernel's rows walk %v", last, k.channels)
		}
		checkSplit(t, fmt.Sprint("scatterProduct channels last ", last), func() any {
			out := make([]float32, b*c*h*h)
			if err := k.Run(out, []any{dl, wf}); err != nil {
				t.Fatal(err)
			}
			return out
		})
	}
	win := randSlice[float32](r, pts*c*9)
	rk := &ReduceProduct{Lead: []int{pts}, C: c, T: 9, XS: []int{c}, YS: []int{c * 9}, XC: 1, YC: 9, Out: c * 9}
	checkSplit(t, "reduceProduct", func() any {
		out := make([]float32, c*9)
		if err := rk.Run(out, []any{dl, win}); err != nil {
			t.Fatal(err)
		}
		return out
	})
}
