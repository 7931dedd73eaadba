package kernel

import (
	"testing"

	"github.com/bulkad/bulkad/core"
)

// Benchmarks of reductions written as scatters and sums over an axis.

// BenchmarkScatterRowSum is scatter [1,32,9] x (\[k0] -> [0]) over 8192 rows of float32: the
// gradient of a depthwise filter broadcast over the rows (the bench's MobileNet blocks).
func BenchmarkScatterRowSum(b *testing.B) {
	n, r := 8192, 288
	x := make([]float32, n*r)
	for i := range x {
		x[i] = float32(i % 7)
	}
	out := make([]float32, r)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		scatterAffine(out, x, []int{n}, []int{0}, 0, r, addOf[float32]())
	}
}

// BenchmarkSumLastAxis sums the last axis (9 elements) of [8192·32, 9] float32: the window sum
// of a depthwise convolution built from Gorgonia primitives (Sum(prod, 2)).
func BenchmarkSumLastAxis(b *testing.B) {
	x := make([]float32, 8192*32*9)
	for i := range x {
		x[i] = float32(i % 5)
	}
	benchOp(b, Axis{Pre: 8192 * 32, N: 9, Post: 1}, make([]float32, 8192*32), x)
}

// BenchmarkScatterChannelSum is scatter [64] x (\[b,c,p] -> [c]) over a float32 [32,64,256]:
// the per-channel sum of a batch norm's gradient (one element a block).
func BenchmarkScatterChannelSum(b *testing.B) {
	x := make([]float32, 32*64*256)
	for i := range x {
		x[i] = float32(i % 7)
	}
	out := make([]float32, 64)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		scatterAffine(out, x, []int{32, 64, 256}, []int{0, 1, 0}, 0, 1, addOf[float32]())
	}
}

// BenchmarkStridedPairs: a Gorgonia-built depthwise convolution's product, the activation
// [8192,32] broadcast over the 9 taps times the filter [32,9] broadcast over the rows
// (float32 [8192,32,9]): rows of 9, run two dimensions at a time.
func BenchmarkStridedPairs(b *testing.B) {
	x, y := make([]float32, 8192*32), make([]float32, 32*9)
	for i := range x {
		x[i] = float32(i%7) - 3
	}
	for i := range y {
		y[i] = float32(i%5) - 2
	}
	k := StridedBinary{Op: core.OpMul, Shape: []int{8192, 32, 9}, XS: []int{32, 1, 0}, YS: []int{0, 9, 1}}
	benchOp(b, k, make([]float32, 8192*32*9), x, y)
}
