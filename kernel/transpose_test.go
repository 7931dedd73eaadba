package kernel

import (
	"fmt"
	"testing"

	"github.com/bulkad/bulkad/core"
)

// TestTransposeKernel checks the Transpose kernel (tiled where it applies, whole rows copied
// where the last dimension stays, the plain walk elsewhere) against the definition
// out[i_0..i_n] = x[i at the permuted positions], computed here coordinate by coordinate, on
// shapes with and without a full tile, partial tiles, outer dimensions on both sides of the
// tiled ones, dimensions that merge (a convolution's [b, h, w, c] → [b, c, h, w] is [b, h·w,
// c] transposed) and dimensions of one element, in every dtype; the large cases also run
// split across goroutines (GOMAXPROCS 2 and 3 against 1, checkSplit).
func TestTransposeKernel(t *testing.T) {
	cases := []struct {
		shape, perm []int
	}{
		{[]int{1024, 1000}, []int{1, 0}},
		{[]int{17, 33}, []int{1, 0}},
		{[]int{5, 40}, []int{1, 0}}, // too short for a tile
		{[]int{8, 9}, []int{1, 0}},  // half a tile each way
		{[]int{3, 20, 37}, []int{0, 2, 1}},
		{[]int{20, 3, 37}, []int{2, 1, 0}},
		{[]int{2, 64, 32, 17}, []int{1, 0, 3, 2}},
		{[]int{2, 16, 18, 19}, []int{3, 1, 2, 0}},
		{[]int{4, 5, 6}, []int{1, 2, 0}},
		{[]int{32, 1, 48}, []int{2, 1, 0}},
		{[]int{64, 2, 1024}, []int{1, 0, 2}}, // whole rows move
		{[]int{4, 5, 6}, []int{1, 0, 2}},
		{[]int{3, 7, 9, 20}, []int{0, 3, 1, 2}},    // channels-last to first: h, w merge
		{[]int{32, 28, 28, 32}, []int{0, 3, 1, 2}}, // the convnet's, above the split threshold
		{[]int{32, 16, 16, 16}, []int{0, 3, 1, 2}},
		{[]int{5, 1, 12, 1, 33}, []int{4, 1, 0, 3, 2}},
		{[]int{0, 17}, []int{1, 0}},
		// short contiguous rows, a block of rows at a time (gatherAffineRun): rows of 2, 4,
		// 8, 16, 32 (register moves for the floats) and 7 (element by element)
		{[]int{2, 5, 4}, []int{1, 0, 2}},
		{[]int{2, 6, 2}, []int{1, 0, 2}},
		{[]int{3, 4, 8}, []int{1, 0, 2}},
		{[]int{2, 9, 16}, []int{1, 0, 2}},
		{[]int{2, 3, 32}, []int{1, 0, 2}},
		{[]int{3, 2, 5, 7}, []int{2, 0, 1, 3}},
		{[]int{4, 2048, 16}, []int{1, 0, 2}}, // above the split threshold
	}
	for _, c := range cases {
		n := core.Shape(c.shape).Size()
		osh := make([]int, len(c.perm))
		for p, q := range c.perm {
			osh[p] = c.shape[q]
		}
		inStr := core.Shape(c.shape).Strides()
		// want[o]: the input position output element o reads
		want := make([]int, n)
		idx := make([]int, len(osh))
		for o := range want {
			r := o
			for d := len(osh) - 1; d >= 0; d-- {
				idx[d] = r % osh[d]
				r /= osh[d]
			}
			for p, q := range c.perm {
				want[o] += idx[p] * inStr[q]
			}
		}
		for _, dt := range []core.Dtype{core.Float32, core.Float64, core.Int64, core.Bool} {
			t.Run(fmt.Sprint(c.shape, c.perm, dt), func(t *testing.T) {
				x := NewSlice(dt, n)
				val := func(i int) any { return i }
				switch v := x.(type) {
				case []float32:
					for i := range v {
						v[i] = float32(i)
					}
				case []float64:
					for i := range v {
						v[i] = float64(i)
					}
				case []int64:
					for i := range v {
						v[i] = int64(i)
					}
				case []bool:
					for i := range v {
						v[i] = i%3 == 0
					}
					val = func(i int) any { return i%3 == 0 }
				}
				run := func() any {
					out := NewSlice(dt, n)
					if err := (Transpose{Perm: c.perm, Shape: c.shape}).Run(out, []any{x}); err != nil {
						t.Fatal(err)
					}
					return out
				}
				out := run()
				if n >= 1<<17 {
					out = checkSplit(t, "transpose", run)
				}
				for o, w := range want {
					var got any
					switch v := out.(type) {
					case []float32:
						got = int(v[o])
					case []float64:
						got = int(v[o])
					case []int64:
						got = int(v[o])
					case []bool:
						got = v[o]
					}
					if got != val(w) {
						t.Fatalf("out element %d = %v, want x element %d (%v)", o, got, w, val(w))
					}
				}
			})
		}
	}
}

// BenchmarkOpTranspose transposes a 1024×1000 float32 matrix (a classifier's weights).
func BenchmarkOpTranspose(b *testing.B) {
	x := make([]float32, 1024*1000)
	for i := range x {
		x[i] = float32(i) // touched: an untouched slice reads the one zero page
	}
	benchOp(b, Transpose{Perm: []int{1, 0}, Shape: []int{1024, 1000}}, make([]float32, len(x)), x)
}

// BenchmarkOpTransposeNHWC moves a float64 batch of 32 images 28×28×32 from channels-last to
// channels-first (Gorgonia's convolution output).
func BenchmarkOpTransposeNHWC(b *testing.B) {
	sh := []int{32, 28, 28, 32}
	x := make([]float64, core.Shape(sh).Size())
	for i := range x {
		x[i] = float64(i)
	}
	benchOp(b, Transpose{Perm: []int{0, 3, 1, 2}, Shape: sh}, make([]float64, len(x)), x)
}

// BenchmarkOpTransposeRows swaps the two outer dimensions of a float32 [64, 2, 1024] (a
// convolution's output from the product's layout to batch-first): whole rows move.
func BenchmarkOpTransposeRows(b *testing.B) {
	sh := []int{64, 2, 1024}
	x := make([]float32, core.Shape(sh).Size())
	for i := range x {
		x[i] = float32(i)
	}
	benchOp(b, Transpose{Perm: []int{1, 0, 2}, Shape: sh}, make([]float32, len(x)), x)
}
