package kernel

import (
	"fmt"
	"testing"

	"github.com/bulkad/bulkad/core"
)

// TestTransposeKernel checks the Transpose kernel (tiled where it applies, whole rows copied
// where the last dimension stays, the plain walk elsewhere) against the definition out[i_0..i_n] = x[i at the permuted positions], computed
// here coordinate by coordinate, on shapes with and without a full tile, partial tiles and
// outer dimensions on both sides of the tiled ones.
func TestTransposeKernel(t *testing.T) {
	cases := []struct {
		shape, perm []int
	}{
		{[]int{1024, 1000}, []int{1, 0}},
		{[]int{17, 33}, []int{1, 0}},
		{[]int{5, 40}, []int{1, 0}}, // too short for a tile
		{[]int{3, 20, 37}, []int{0, 2, 1}},
		{[]int{20, 3, 37}, []int{2, 1, 0}},
		{[]int{2, 64, 32, 17}, []int{1, 0, 3, 2}},
		{[]int{2, 16, 18, 19}, []int{3, 1, 2, 0}},
		{[]int{4, 5, 6}, []int{1, 2, 0}},
		{[]int{32, 1, 48}, []int{2, 1, 0}},
		{[]int{64, 2, 1024}, []int{1, 0, 2}}, // whole rows move
		{[]int{4, 5, 6}, []int{1, 0, 2}},
	}
	for _, c := range cases {
		t.Run(fmt.Sprint(c.shape, c.perm), func(t *testing.T) {
			n := core.Shape(c.shape).Size()
			x := make([]float32, n)
			for i := range x {
				x[i] = float32(i)
			}
			out := make([]float32, n)
			if err := (Transpose{Perm: c.perm, Shape: c.shape}).Run(out, []any{x}); err != nil {
				t.Fatal(err)
			}
			osh := make([]int, len(c.perm))
			for p, q := range c.perm {
				osh[p] = c.shape[q]
			}
			inStr := core.Shape(c.shape).Strides()
			idx := make([]int, len(osh))
			for o := 0; o < n; o++ {
				// idx: the coordinates of output element o
				r := o
				for d := len(osh) - 1; d >= 0; d-- {
					idx[d] = r % osh[d]
					r /= osh[d]
				}
				want := 0
				for p, q := range c.perm {
					want += idx[p] * inStr[q]
				}
				if out[o] != float32(want) {
					t.Fatalf("out%v = %v, want x element %d", idx, out[o], want)
				}
			}
		})
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
