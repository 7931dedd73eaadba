package kernel

import (
	"math/rand"
	"testing"

	"github.com/bulkad/bulkad/core"
)

// BenchmarkFused times fused trees at the zoo ResNet's sizes, one thread hot: a batch norm's
// γ·x̂ + β over [32, 16, 256] (γ and β leaves repeating every 16 rows, kept once a run) and the
// sum of c·x̂ along rows of 16 (Gorgonia's Repeat gradient, a fused row sum).
func BenchmarkFused(b *testing.B) {
	L := func(i int) FusedIns { return ins(FuseLeaf, i) }
	affine := []FusedIns{L(0), L(1), bin(core.OpMul), L(2), bin(core.OpAdd)}
	prod := []FusedIns{L(0), L(1), bin(core.OpMul)}
	n := 32 * 16 * 256
	channels := []FusedLeaf{leaf(0, 16*256, 256, 1), leaf(0, 0, 1, 0), leaf(0, 0, 1, 0)}
	rows := []FusedLeaf{leaf(0, 16, 1), leaf(0, 16, 1)}
	for _, c := range []struct {
		name   string
		shape  []int
		leaves []FusedLeaf
		code   []FusedIns
		sizes  []int
		out    int
		rowSum bool
	}{
		{"affine", []int{32, 16, 256}, channels, affine, []int{n, 16, 16}, n, false},
		{"rowSum", []int{n / 16, 16}, rows, prod, []int{n, n}, n / 16, true},
	} {
		b.Run(c.name+"/f32", func(b *testing.B) { benchFusedKernel[float32](b, c.shape, c.leaves, c.code, c.sizes, c.out, c.rowSum) })
		b.Run(c.name+"/f64", func(b *testing.B) { benchFusedKernel[float64](b, c.shape, c.leaves, c.code, c.sizes, c.out, c.rowSum) })
	}
}

func benchFusedKernel[T floatT](b *testing.B, shape []int, leaves []FusedLeaf, code []FusedIns, sizes []int, outLen int, rowSum bool) {
	var k *Fused
	var err error
	if rowSum {
		k, err = NewFusedRowSum(shape, code, leaves)
	} else {
		k, err = NewFused(shape, code, leaves)
	}
	if err != nil {
		b.Fatal(err)
	}
	rng := rand.New(rand.NewSource(1))
	in := make([]any, len(sizes))
	for i, n := range sizes {
		in[i] = fusedData[T](rng, n)
	}
	out := make([]T, outLen)
	b.ResetTimer()
	for range b.N {
		if err := k.Run(out, in); err != nil {
			b.Fatal(err)
		}
	}
}
