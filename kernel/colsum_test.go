package kernel

import (
	"fmt"
	"math"
	"math/rand"

	"github.com/bulkad/bulkad/core"
	"testing"
)

// seqColSums is the reference of colSums: each column one chain in the order of the rows.
func seqColSums[T numT](dst, x []T, ldx, rows int) {
	for j := range dst {
		a := dst[j]
		for r := range rows {
			a += x[r*ldx+j]
		}
		dst[j] = a
	}
}

// randSlice draws n values of mixed magnitudes (so that the order of the additions shows in
// the bits).
func randSlice[T numT](r *rand.Rand, n int) []T {
	x := make([]T, n)
	for i := range x {
		x[i] = T(r.NormFloat64() * math.Pow(10, float64(r.Intn(9)-4)))
	}
	return x
}

// TestColSums: column sums of every width from 1 to 70 (whole vectors, a partial vector and
// scalar tails, more than four vectors), with a row stride above the width, equal the
// sequential chain of each column bit for bit, in float32, float64 and int64, adding into
// dst's values.
func TestColSums(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	for _, rows := range []int{1, 2, 7, 64} {
		for cols := 1; cols <= 70; cols++ {
			ldx := cols + rows%3
			t.Run(fmt.Sprintf("%dx%d", rows, cols), func(t *testing.T) {
				checkColSums[float32](t, r, rows, cols, ldx)
				checkColSums[float64](t, r, rows, cols, ldx)
				checkColSums[int64](t, r, rows, cols, ldx)
			})
		}
	}
}

func checkColSums[T numT](t *testing.T, r *rand.Rand, rows, cols, ldx int) {
	t.Helper()
	x := randSlice[T](r, (rows-1)*ldx+cols)
	got := randSlice[T](r, cols)
	want := append([]T(nil), got...)
	colSums(got, x, ldx, rows)
	seqColSums(want, x, ldx, rows)
	for j := range want {
		if math.Float64bits(float64(got[j])) != math.Float64bits(float64(want[j])) {
			t.Fatalf("%T column %d of %d: %v, want %v (sequential sum)", got[0], j, cols, got[j], want[j])
		}
	}
}

// TestReductionPaths: sumOuter with short rows, the affine scatter whose rows reduce into one
// row of the output (channels-last per-channel sums, with and without outer blocks) and the
// affine gather that spreads each element over the last axis equal their element-by-element
// definitions (serial order of the domain) bit for bit.
func TestReductionPaths(t *testing.T) {
	r := rand.New(rand.NewSource(2))
	t.Run("sumOuter", func(t *testing.T) {
		for _, c := range [][3]int{{1, 9, 16}, {3, 50, 33}, {2, 8192, 16}, {1, 7, 256}, {2, 5, 300}} {
			pre, n, post := c[0], c[1], c[2]
			x := randSlice[float32](r, pre*n*post)
			got := make([]float32, pre*post)
			sumOuterK(got, x, pre, n, post)
			for p := range pre {
				for j := range post {
					var a float32
					for i := range n {
						a += x[(p*n+i)*post+j]
					}
					if math.Float32bits(a) != math.Float32bits(got[p*post+j]) {
						t.Fatalf("sumOuter %v at %d,%d: %v, want %v", c, p, j, got[p*post+j], a)
					}
				}
			}
		}
	})
	type aff struct {
		dom, st []int
		base    int
	}
	t.Run("scatter", func(t *testing.T) {
		for _, c := range []aff{
			{[]int{8192, 32}, []int{0, 1}, 0},
			{[]int{40, 20}, []int{0, 1}, 3},
			{[]int{4, 30, 12}, []int{12, 0, 1}, 0},     // a block of rows per output row
			{[]int{3, 30, 12}, []int{0, 0, 1}, 1},      // outer blocks into the same row
			{[]int{2, 3, 10, 9}, []int{9, 0, 0, 1}, 0}, // two outer dimensions
		} {
			checkScatterAffine(t, r, c.dom, c.st, c.base, 1)
		}
		// blocks of rest elements: rows of blocks reduced into one block
		for _, c := range []aff{{[]int{8192}, []int{0}, 0}, {[]int{5, 30}, []int{1, 0}, 2}, {[]int{30, 5}, []int{0, 1}, 0}} {
			for _, rest := range []int{3, 32, 40} {
				checkScatterAffine(t, r, c.dom, c.st, c.base, rest)
			}
		}
	})

	t.Run("gather", func(t *testing.T) {
		for _, c := range []aff{
			{[]int{32, 16, 16, 16}, []int{256, 16, 1, 0}, 0},
			{[]int{5, 7, 3}, []int{1, 5, 0}, 2}, // a transposed read spread over rows of 3
			{[]int{6, 2}, []int{1, 0}, 0},
		} {
			n, span := 1, c.base
			for k, d := range c.dom {
				n *= d
				span += (d - 1) * c.st[k]
			}
			x := randSlice[float32](r, span+1)
			got := make([]float32, n)
			gatherAffine(got, x, c.dom, c.st, c.base, 1)
			idx := make([]int64, len(c.dom))
			for p := range got {
				off := c.base
				for k := range idx {
					off += int(idx[k]) * c.st[k]
				}
				if got[p] != x[off] {
					t.Fatalf("gather %v at %d: %v, want %v", c, p, got[p], x[off])
				}
				odometer(idx, c.dom)
			}
		}
	})
}

// TestRepeatedRows: a StridedBinary with one operand a row repeated along the second-innermost
// dimension (either side, rows of 16 to 255, outer blocks moving the row or not) equals its
// element-by-element definition (Go's scalar operation), for + − · ÷ max in float32 and
// float64 and − and quot in int64.
func TestRepeatedRows(t *testing.T) {
	r := rand.New(rand.NewSource(3))
	type sb struct {
		shape, xs, ys []int
	}
	cases := []sb{
		{[]int{300, 32}, []int{32, 1}, []int{0, 1}},
		{[]int{300, 32}, []int{0, 1}, []int{32, 1}},
		{[]int{7, 16}, []int{16, 1}, []int{0, 1}},
		{[]int{40, 255}, []int{0, 1}, []int{255, 1}},
		{[]int{3, 50, 20}, []int{1000, 20, 1}, []int{20, 0, 1}}, // the row moves with the block
		{[]int{3, 50, 20}, []int{0, 0, 1}, []int{1000, 20, 1}},
	}
	for _, c := range cases {
		for _, op := range []core.BinOp{core.OpAdd, core.OpSub, core.OpMul, core.OpDiv, core.OpMax} {
			checkRepeatedRows[float32](t, r, StridedBinary{Op: op, Shape: c.shape, XS: c.xs, YS: c.ys})
			checkRepeatedRows[float64](t, r, StridedBinary{Op: op, Shape: c.shape, XS: c.xs, YS: c.ys})
		}
		for _, op := range []core.BinOp{core.OpSub, core.OpQuot} {
			checkRepeatedRows[int64](t, r, StridedBinary{Op: op, Shape: c.shape, XS: c.xs, YS: c.ys})
		}
	}
}

func checkRepeatedRows[T numT](t *testing.T, r *rand.Rand, k StridedBinary) {
	t.Helper()
	span := func(st []int) int {
		s := 1
		for i, d := range k.Shape {
			s += (d - 1) * st[i]
		}
		return s
	}
	x, y := randSlice[T](r, span(k.XS)), randSlice[T](r, span(k.YS))
	for i := range y {
		if y[i] == 0 {
			y[i] = 3
		}
	}
	n := 1
	for _, d := range k.Shape {
		n *= d
	}
	got := make([]T, n)
	if err := k.Run(got, []any{x, y}); err != nil {
		t.Fatal(err)
	}
	f := arithFunc[T](k.Op)
	idx := make([]int64, len(k.Shape))
	for p := range got {
		xo, yo := 0, 0
		for i := range idx {
			xo += int(idx[i]) * k.XS[i]
			yo += int(idx[i]) * k.YS[i]
		}
		if want := f(x[xo], y[yo]); math.Float64bits(float64(got[p])) != math.Float64bits(float64(want)) {
			t.Fatalf("%T %v %v at %d: %v, want %v", got[0], k.Op, k.Shape, p, got[p], want)
		}
		odometer(idx, k.Shape)
	}
}

// checkScatterAffine compares scatterAffine over dom (strides st, blocks of rest elements)
// with the serial definition, bit for bit.
func checkScatterAffine(t *testing.T, r *rand.Rand, dom, st []int, base, rest int) {
	t.Helper()
	n, span := rest, base
	for k, d := range dom {
		n *= d
		span += (d - 1) * st[k]
	}
	x := randSlice[float64](r, n)
	got := make([]float64, (span+1)*rest)
	want := make([]float64, (span+1)*rest)
	scatterAffine(got, x, dom, st, base, rest, addOf[float64]())
	idx := make([]int64, len(dom))
	for p := 0; p < n; p += rest {
		off := base
		for k := range idx {
			off += int(idx[k]) * st[k]
		}
		for j := range rest {
			want[off*rest+j] += x[p+j]
		}
		odometer(idx, dom)
	}
	for i := range want {
		if math.Float64bits(got[i]) != math.Float64bits(want[i]) {
			t.Fatalf("scatter %v %v rest %d at %d: %v, want %v", dom, st, rest, i, got[i], want[i])
		}
	}
}

// TestReductionSplit: the row-reducing scatters large enough to split across goroutines
// (rows into one element each, rows into one row, with outer blocks) give the serial run's
// bits at GOMAXPROCS 2 and 3.
func TestReductionSplit(t *testing.T) {
	r := rand.New(rand.NewSource(4))
	for _, c := range []struct{ dom, st []int }{
		{[]int{64, 32, 512}, []int{0, 1, 0}},  // per-channel sums of [b, c, h·w]
		{[]int{65536, 32}, []int{0, 1}},       // of channels-last rows
		{[]int{4, 8192, 40}, []int{40, 0, 1}}, // a block of rows per output row
		{[]int{3, 2, 40000, 5}, []int{5, 0, 0, 1}},
	} {
		n, span := 1, 0
		for k, d := range c.dom {
			n *= d
			span += (d - 1) * c.st[k]
		}
		x := randSlice[float32](r, n)
		checkSplit(t, fmt.Sprint(c.dom, c.st), func() any {
			out := make([]float32, span+1)
			scatterAffine(out, x, c.dom, c.st, 0, 1, addOf[float32]())
			return out
		})
	}
}
