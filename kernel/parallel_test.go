package kernel

import (
	"testing"

	"github.com/bulkad/bulkad/core"
)

// Benchmarks of the single-op kernels (the ones package raise wraps as Gorgonia ops) on 1M
// float64 elements; run with -cpu 1,2 to see the split across goroutines.

const opBenchN = benchN * benchN

// benchOp times k.Run(out, ins) per iteration.
func benchOp(b *testing.B, k Kernel, out any, ins ...any) {
	b.Helper()
	if err := k.Run(out, ins); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(8 * SliceLen(out)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := k.Run(out, ins); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkOpUnaryExp(b *testing.B) {
	benchOp(b, Unary{Op: core.OpExp}, make([]float64, opBenchN), benchData(opBenchN, 1))
}

func BenchmarkOpBinaryMul(b *testing.B) {
	benchOp(b, Binary{Op: core.OpMul}, make([]float64, opBenchN), benchData(opBenchN, 1), benchData(opBenchN, 2))
}

// x (1024×1024) times a row broadcast along the rows.
func BenchmarkOpStridedBinary(b *testing.B) {
	k := StridedBinary{Op: core.OpMul, Shape: []int{benchN, benchN}, XS: []int{benchN, 1}, YS: []int{0, 1}}
	benchOp(b, k, make([]float64, opBenchN), benchData(opBenchN, 1), benchData(benchN, 2))
}

// z · (x > 0) with the 0 broadcast: the derivative of relu.
func BenchmarkOpMaskMul(b *testing.B) {
	k := MaskMul{Cmp: core.OpGt, Shape: []int{benchN, benchN}, St: [3][]int{{benchN, 1}, {0, 0}, {benchN, 1}}}
	benchOp(b, k, make([]float64, opBenchN), benchData(opBenchN, 1), []float64{0}, benchData(opBenchN, 2))
}

func BenchmarkOpCast(b *testing.B) {
	benchOp(b, Cast{}, make([]float32, opBenchN), benchData(opBenchN, 1))
}

// The affine gather kernel: a transposition of a 1024×1024 matrix.
func BenchmarkOpGatherTranspose(b *testing.B) {
	benchOp(b, transposeGather(b, benchN, benchN, 1), make([]float64, opBenchN), benchData(opBenchN, 1))
}

// transposeGather is the Gather kernel (affine plan) of out[i, j, :] = x[j, i, :] for x of
// shape [m, n, rest].
func transposeGather(tb testing.TB, m, n, rest int) *Gather {
	var bl core.Builder
	i, j := bl.Var("i", core.Scalar(core.Int64)), bl.Var("j", core.Scalar(core.Int64))
	prog, err := CompileIndexFn(bl.IndexFn([]*core.Var{i, j}, j, i))
	if err != nil {
		tb.Fatal(err)
	}
	k := &Gather{Dom: []int{n, m}, Src: []int{m, n}, Rest: rest, IndexPlan: IndexPlan{Fn: prog}}
	k.ASt, k.ABase, k.Aff = prog.AffinePlan(k.Dom, k.Src)
	if !k.Aff {
		tb.Fatal("transposition: no affine plan")
	}
	return k
}

// sumOuter of a 1024×1024 matrix through the op kernel (pre = 1: split along post).
func BenchmarkOpSumOuter(b *testing.B) {
	benchOp(b, SumOuter{}, make([]float64, benchN), benchData(opBenchN, 1))
}

// Sums and argmaxes along the middle axis of [32, 1024, 32].
func BenchmarkOpAxisSum(b *testing.B) {
	benchOp(b, Axis{Pre: 32, N: benchN, Post: 32}, make([]float64, 32*32), benchData(opBenchN, 1))
}

func BenchmarkOpAxisArgmax(b *testing.B) {
	benchOp(b, Axis{Argmax: true, Pre: 32, N: benchN, Post: 32}, make([]int64, 32*32), benchData(opBenchN, 1))
}
