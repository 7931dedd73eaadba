package kernel

import (
	"math/rand"
	"testing"
)

// Kernels of the convnet's max-pool gradient at the benchmark's sizes (batch 32, 32 filters,
// 28×28 maps, 2×2 windows): the argmax over the windows, the scatter to the argmax positions,
// and the sparse filter-gradient product with the [25088,9] im2col matrix.

func poolBenchArgmax(r *rand.Rand) (*ArgmaxView, []float64, []int64) {
	x := make([]float64, 32*32*28*28)
	for i := range x {
		x[i] = r.NormFloat64()
	}
	k := &ArgmaxView{OuterOff: []int{0, 1, 28, 29}, Inner: []int{32, 32, 14, 14}, InnerSt: []int{25088, 784, 56, 2}}
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

func BenchmarkPoolArgmax32(b *testing.B) {
	k, x, am := poolBenchArgmax(rand.New(rand.NewSource(1)))
	x32 := make([]float32, len(x))
	for i, v := range x {
		x32[i] = float32(v)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		argmaxView(k, am, x32)
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
	k := &ScatterMatMul{Dom: []int{32, 32, 14, 14},
		RowP: &Lookup{St: []int{784, 0, 56, 2}, Table: []int{0, 1, 28, 29}},
		ColP: &Lookup{St: []int{0, 1, 0, 0}},
		N:    25088, C: 32, K: 9, HasTable: true}
	y := benchData(len(am), r.Int63())
	cols := benchData(25088*9, r.Int63())
	out := make([]float64, 32*9)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := k.Run(out, []any{y, cols, am}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPoolDenseFilterGrad is, with the scatter of BenchmarkPoolScatterLookup, what
// BenchmarkPoolScatterMatmul replaces: the dense GEMM of the materialised [25088,32] scatter
// with the im2col matrix.
func BenchmarkPoolDenseFilterGrad(b *testing.B) {
	r := rand.New(rand.NewSource(1))
	s := benchData(25088*32, r.Int63())
	cols := benchData(25088*9, r.Int63())
	out := make([]float64, 32*9)
	g := MatMul{TransA: true, M: 32, K: 25088, N: 9}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := g.Run(out, []any{s, cols}); err != nil {
			b.Fatal(err)
		}
	}
}
