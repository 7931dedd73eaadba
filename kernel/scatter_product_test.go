package kernel

import (
	"fmt"
	"strings"
	"testing"

	"github.com/bulkad/bulkad/core"
)

// windowScatter is the Scatter of a 3×3, padding-1 col2im of [b, c, h, h] images over the
// domain [b, h, h, c, 3, 3] (its plan's fast paths set).
func windowScatter(t *testing.T, b, c, h int) *Scatter {
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
	fn, err := core.NewIndexFn(iv, []core.Term{iv[0], iv[3], pos(iv[1], iv[4]), pos(iv[2], iv[5])})
	if err != nil {
		t.Fatal(err)
	}
	prog, err := CompileIndexFn(fn)
	if err != nil {
		t.Fatal(err)
	}
	s := &Scatter{Dom: []int{b, h, h, c, 3, 3}, Dst: []int{b, c, h, h}, Rest: 1}
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
