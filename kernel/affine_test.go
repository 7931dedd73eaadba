package kernel

import (
	"fmt"
	"math"
	"math/rand"
	"strings"
	"testing"

	"github.com/bulkad/bulkad/core"
)

// TestRows: the row walker visits the innermost rows of every domain in row-major order with
// the offsets a naive odometer gives, for ranks 0 to 12 (past the walker's stack index),
// empty dimensions, and absent, zero and negative strides.
func TestRows(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	for rank := 0; rank <= 12; rank++ {
		for trial := 0; trial < 20; trial++ {
			dom := make([]int, rank)
			for d := range dom {
				dom[d] = 1 + rng.Intn(3)
				if rank > 0 && trial == 0 && d == rank/2 {
					dom[d] = 0 // an empty domain: no row
				}
			}
			var st [3][]int
			var base [3]int
			for k := 0; k < 3; k++ {
				if k == 2 && trial%2 == 0 {
					continue // an absent operand keeps offset base[2]
				}
				st[k] = make([]int, rank)
				for d := range st[k] {
					st[k][d] = rng.Intn(9) - 4
				}
				base[k] = rng.Intn(100)
			}
			t.Run(fmt.Sprintf("%v/%d", dom, trial), func(t *testing.T) { checkRows(t, dom, st, base) })
		}
	}
}

func checkRows(t *testing.T, dom []int, st [3][]int, base [3]int) {
	var got [][3]int
	r := newRows(dom, st, base)
	for p := 0; r.ok; p += r.last {
		if p != len(got)*r.last {
			t.Fatalf("row %d starts at %d", len(got), p)
		}
		got = append(got, r.off)
		r.next()
	}
	// naive: every point with a zero innermost index, in row-major order
	var want [][3]int
	each(dom, func(idx []int) {
		if len(dom) > 0 && idx[len(dom)-1] != 0 {
			return
		}
		off := base
		for k := range st {
			for d, s := range st[k] {
				off[k] += s * idx[d]
			}
		}
		want = append(want, off)
	})
	if len(got) != len(want) {
		t.Fatalf("%d rows, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("row %d: offsets %v, want %v", i, got[i], want[i])
		}
	}
}

// TestArgmaxViewParallel: the argmax view split across goroutines (inputs above parallelMin)
// gives the single-goroutine result, for window counts on both paths (few and general), with
// NaNs and ties, and both float types.
func TestArgmaxViewParallel(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	x := make([]float64, 40*40*40*3)
	for i := range x {
		x[i] = float64(rng.Intn(5)) // ties
		if rng.Intn(50) == 0 {
			x[i] = math.NaN()
		}
	}
	x32 := make([]float32, len(x))
	for i, v := range x {
		x32[i] = float32(v)
	}
	for _, outer := range [][]int{{0, 1, 120, 121}, offsets(20, 1)} {
		k := &ArgmaxView{OuterOff: outer, Inner: []int{40, 38, 40}, InnerSt: []int{40 * 40 * 3, 40 * 3, 3}}
		n := 40 * 38 * 40
		if n*len(outer) < parallelMin {
			t.Fatalf("%d elements read: below parallelMin, the split is not tested", n*len(outer))
		}
		for name, run := range map[string]func(par bool) []int64{
			"f64": func(par bool) []int64 { return argmaxWith(k, n, x, par) },
			"f32": func(par bool) []int64 { return argmaxWith(k, n, x32, par) },
		} {
			got, want := run(true), run(false)
			for i := range want {
				if got[i] != want[i] {
					t.Fatalf("%d windows, %s: output %d is %d split, %d whole", len(outer), name, i, got[i], want[i])
				}
			}
		}
	}
}

// offsets is n offsets step apart.
func offsets(n, step int) []int {
	o := make([]int, n)
	for i := range o {
		o[i] = i * step
	}
	return o
}

func argmaxWith[T num](k *ArgmaxView, n int, x []T, par bool) []int64 {
	out := make([]int64, n)
	if par {
		argmaxView(k, out, x)
	} else {
		argmaxViewRange(k, out, x)
	}
	return out
}

// TestKernelsRefuseBadLengths: the strided kernels, the argmax view and sumOuter refuse an
// output (or input list) that does not fit their shape: an error, not a panic or a partial
// write.
func TestKernelsRefuseBadLengths(t *testing.T) {
	sb := StridedBinary{Op: core.OpAdd, Shape: []int{2, 3}, XS: []int{3, 1}, YS: []int{3, 1}}
	mm := MaskMul{Cmp: core.OpGt, Shape: []int{2, 3}, St: [3][]int{{3, 1}, {3, 1}, {3, 1}}}
	x := make([]float64, 6)
	for _, c := range []struct {
		name string
		run  func(out []float64) error
	}{
		{"stridedBinary", func(out []float64) error { return sb.Run(out, []any{x, x}) }},
		{"maskMul", func(out []float64) error { return mm.Run(out, []any{x, x, x}) }},
	} {
		if err := c.run(make([]float64, 6)); err != nil {
			t.Errorf("%s: %v", c.name, err)
		}
		if err := c.run(make([]float64, 5)); err == nil || !strings.Contains(err.Error(), "[2 3]") {
			t.Errorf("%s with 5 outputs: error %v, want one naming the shape [2 3]", c.name, err)
		}
	}
	av := &ArgmaxView{OuterOff: []int{0, 1}, Inner: []int{3}, InnerSt: []int{2}}
	if err := av.Run(make([]int64, 3), []any{x}); err != nil {
		t.Errorf("argmax view: %v", err)
	}
	if err := av.Run(make([]int64, 2), []any{x}); err == nil {
		t.Errorf("argmax view with 2 outputs for 3 positions: no error")
	}
	if err := (SumOuter{}).Run(make([]float64, 3), nil); err == nil || !strings.Contains(err.Error(), "inputs") {
		t.Errorf("sumOuter without an input: error %v", err)
	}
	if err := (SumOuter{}).Run(make([]float64, 4), []any{x}); err == nil {
		t.Errorf("sumOuter of 6 elements into 4: no error")
	}
}
