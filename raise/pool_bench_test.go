package raise

import (
	"math/rand"
	"testing"
)

// Kernels of the convnet's max-pool gradient at the benchmark's sizes (batch 32, 32 filters,
// 28×28 maps, 2×2 windows): the argmax over the windows, the scatter to the argmax positions,
// and the sparse filter-gradient product with the [25088,9] im2col matrix.

func poolBenchArgmax(r *rand.Rand) (*argmaxViewK, []float64, []int64) {
	x := make([]float64, 32*32*28*28)
	for i := range x {
		x[i] = r.NormFloat64()
	}
	k := &argmaxViewK{outerOff: []int{0, 1, 28, 29}, inner: []int{32, 32, 14, 14}, innerSt: []int{25088, 784, 56, 2}}
	am := make([]int64, 32*32*14*14)
	argmaxView(k, am, x)
	return k, x, am
}

func BenchmarkPoolArgmax(b *testing.B) {
	k, x, am := poolBenchArgmax(rand.New(rand.NewSource(1)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		argmaxView(k, am, x)
	}
}

func BenchmarkPoolScatterLookup(b *testing.B) {
	_, _, am := poolBenchArgmax(rand.New(rand.NewSource(1)))
	out := make([]float64, 32*32*28*28)
	g := make([]float64, len(am))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		scatterLookup(out, g, am, []int{0, 1, 28, 29}, []int{32, 32, 14, 14}, []int{25088, 784, 56, 2}, 0, 1, func(a, b float64) float64 { return a + b })
	}
}

func BenchmarkPoolScatterMatmul(b *testing.B) {
	r := rand.New(rand.NewSource(1))
	_, _, am := poolBenchArgmax(r)
	// S : [32,28,28,32] (b, h, w, c) ← [b, c, i, j]: rows n = (b·28 + 2i + a/2)·28 + 2j + a%2,
	// column c.
	k := &scatterMatmulK{dom: []int{32, 32, 14, 14},
		rowP: &lookupK{st: []int{784, 0, 56, 2}, table: []int{0, 1, 28, 29}},
		colP: &lookupK{st: []int{0, 1, 0, 0}},
		n:    25088, c: 32, k: 9, hasTable: true}
	y := randF(r, len(am))
	cols := randF(r, 25088*9)
	out := make([]float64, 32*9)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := k.run(out, []any{y, cols, am}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPoolDenseFilterGrad is, with the scatter of BenchmarkPoolScatterLookup, what
// BenchmarkPoolScatterMatmul replaces: the dense GEMM of the materialised [25088,32] scatter
// with the im2col matrix.
func BenchmarkPoolDenseFilterGrad(b *testing.B) {
	r := rand.New(rand.NewSource(1))
	s := randF(r, 25088*32)
	cols := randF(r, 25088*9)
	out := make([]float64, 32*9)
	g := gemmK{transA: true, m: 32, k: 25088, n: 9}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := g.run(out, []any{s, cols}); err != nil {
			b.Fatal(err)
		}
	}
}
