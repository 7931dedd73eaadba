package kernel

import (
	"github.com/pkg/errors"
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas32"
	"gonum.org/v1/gonum/blas/blas64"
)

// gemmThreshold is the number of multiply-adds from which gemm calls, on CPUs without
// AVX2+FMA and under -tags purego, the BLAS (gonum's GEMM unless blas64.Use/blas32.Use
// registered another); smaller products without transposes use matmulK, which does not
// allocate.
const gemmThreshold = 64 * 64 * 64

// gemmSmall is gemmThreshold where the assembly micro-kernels run (gemmGo): from about 10³
// multiply-adds the packed GEMM beats matmulK's i-k-j loop, and by far above (a 64×32×64
// product, attention's, is 6–7× faster; kernel benchmarks of both on the 2-core AVX-512
// machine, float64 and float32: matmulK wins at 8³ and 10³, the GEMM from 12³).
const gemmSmall = 1 << 11

// smallProduct is the number of multiply-adds below which gemm runs matmulK.
func smallProduct() int {
	if asmGemm() {
		return gemmSmall
	}
	return gemmThreshold
}

// gemm computes c[m,n] = op(a) · op(b), row-major, with op a transpose when the flag is set:
// a is stored as [m,k] (or [k,m] when ta), b as [k,n] (or [n,k] when tb). It is the one entry
// point of every float matrix product of this package (the compiled evaluator's matmul and
// the MatMul kernel), so a faster GEMM replaces it in one place.
func gemm[T floatT](ws *Workspace, ta, tb bool, m, n, k int, a, b, c []T) {
	if m == 0 || n == 0 {
		return
	}
	if k == 0 {
		clear(c[:m*n])
		return
	}
	if !ta && !tb && m*k*n < smallProduct() {
		matmulK(c, a, b, m, k, n)
		return
	}
	// Without the assembly (the portable micro-kernel is ≈ 3× slower than gonum's SIMD GEMM)
	// the BLAS stays.
	lda, ldb := k, n
	if ta {
		lda = m
	}
	if tb {
		ldb = k
	}
	if GEMM(ws, ta, tb, m, n, k, a, lda, b, ldb, c, n) {
		return
	}
	tA, tB := blas.NoTrans, blas.NoTrans
	if ta {
		tA = blas.Trans
	}
	if tb {
		tB = blas.Trans
	}
	switch a := any(a).(type) {
	case []float64:
		blas64.Implementation().Dgemm(tA, tB, m, n, k, 1, a, lda, any(b).([]float64), ldb, 0, any(c).([]float64), n)
	case []float32:
		blas32.Implementation().Sgemm(tA, tB, m, n, k, 1, a, lda, any(b).([]float32), ldb, 0, any(c).([]float32), n)
	}
}

// matmulK computes dst[M,N] = x[M,K] · y[K,N] with an i-k-j loop (row of y streamed).
func matmulK[T floatT](dst, x, y []T, m, k, n int) {
	for i := 0; i < m; i++ {
		c := dst[i*n : (i+1)*n]
		clear(c)
		xr := x[i*k : (i+1)*k]
		for p, a := range xr {
			b := y[p*n : (p+1)*n]
			b = b[:len(c)]
			for j := range c {
				c[j] += a * b[j]
			}
		}
	}
}

// MatMul is out[m,n] = op(a) · op(b) with op a transpose when the flag is set: a is stored as
// [m,k] (or [k,m] when transA), b as [k,n] (or [n,k] when transB). With Batch > 1 the slices
// hold Batch such matrices each, one after the other (a batched core.MatMul, the transposes
// swapping the last two dimensions), and out[p] = op(a[p]) · op(b[p]) for every p (the
// products split across goroutines when they are small; see gemmBatched).
//
// With Acc the kernel accumulates: it takes three inputs x, a, b and computes out = x +
// op(a)·op(b) for one product (Batch 0 or 1), each element x's plus the product's rounded
// once — the bits of the product and a separate addition, NaN payloads aside — and may
// write over x (see InPlace); a chain of gradient contributions W̄ = Σ_t h_tᵀ·δ_t (an RNN's
// weights) then adds each product into one array instead of writing it and adding it.
type MatMul struct {
	TransA, TransB bool
	M, N, K        int
	Batch          int // number of products (0 and 1: one)
	VK             *Vulkan
	WS             *Workspace // GEMM packing buffers (nil: allocated per call)
	Acc            bool       // out = ins[0] + op(ins[1])·op(ins[2])
	S              *Scratch   // Acc: the product's buffer when it is not added in place (nil: allocated per call)
}

// BatchedMatMul is the MatMul kernel of batch products op(a_p) · op(b_p) of [m,k]·[k,n]
// (batch ≥ 0; Batch 0 in a MatMul means one product, so an empty batch is written as one
// product of empty matrices, whose inputs and output are empty too).
func BatchedMatMul(batch, m, k, n int, transA, transB bool, vk *Vulkan, ws *Workspace) MatMul {
	if batch == 0 {
		m, k, n, batch = 0, 0, 0, 1
	}
	return MatMul{TransA: transA, TransB: transB, M: m, K: k, N: n, Batch: batch, VK: vk, WS: ws}
}

// batch is the number of products (at least 1).
func (g MatMul) batch() int { return max(g.Batch, 1) }

// Run implements Kernel.
func (g MatMul) Run(out any, ins []any) error {
	if g.Acc {
		return g.runAcc(out, ins)
	}
	if len(ins) != 2 {
		return errors.Errorf("kernel: matmul: %d inputs, want 2", len(ins))
	}
	if g.device(out, ins) {
		return nil
	}
	ar, ac, br, bc := g.M, g.K, g.K, g.N
	if g.TransA {
		ar, ac = g.K, g.M
	}
	if g.TransB {
		br, bc = g.N, g.K
	}
	nb := g.batch()
	switch o := out.(type) {
	case []float64:
		return matmulRun(g, o, ins, ar*ac, br*bc)
	case []float32:
		return matmulRun(g, o, ins, ar*ac, br*bc)
	case []int64:
		a, ok1 := ins[0].([]int64)
		b, ok2 := ins[1].([]int64)
		if !ok1 || !ok2 || len(a) != nb*ar*ac || len(b) != nb*br*bc || len(o) != nb*g.M*g.N {
			break
		}
		for p := range nb {
			matmulInt(g, o[p*g.M*g.N:], a[p*ar*ac:], b[p*br*bc:])
		}
		return nil
	}
	return typeErr("matmul", out, ins)
}

// matmulInt is one int64 product of g into o.
func matmulInt(g MatMul, o, a, b []int64) {
	for i := 0; i < g.M; i++ {
		for j := 0; j < g.N; j++ {
			var s int64
			for l := 0; l < g.K; l++ {
				ai, bi := i*g.K+l, l*g.N+j
				if g.TransA {
					ai = l*g.M + i
				}
				if g.TransB {
					bi = j*g.K + l
				}
				s += a[ai] * b[bi]
			}
			o[i*g.N+j] = s
		}
	}
}

func matmulRun[T floatT](g MatMul, o []T, ins []any, na, nb int) error {
	a, ok1 := ins[0].([]T)
	b, ok2 := ins[1].([]T)
	n := g.batch()
	if !ok1 || !ok2 {
		return typeErr("matmul", o, ins)
	}
	if len(a) != n*na || len(b) != n*nb || len(o) != n*g.M*g.N {
		return errors.Errorf("kernel: matmul: %d product(s) of [%d,%d]·[%d,%d] (transA=%v transB=%v) need inputs of %d and %d elements and an output of %d, got %d, %d and %d",
			n, g.M, g.K, g.K, g.N, g.TransA, g.TransB, n*na, n*nb, n*g.M*g.N, len(a), len(b), len(o))
	}
	gemmBatched(g.WS, g.TransA, g.TransB, n, g.M, g.N, g.K, a, b, o)
	return nil
}

// runAcc is Run with Acc.
func (g MatMul) runAcc(out any, ins []any) error {
	if len(ins) != 3 {
		return errors.Errorf("kernel: matmul accumulate: %d inputs, want 3 (x, a, b)", len(ins))
	}
	na, nb := g.M*g.K, g.K*g.N
	switch o := out.(type) {
	case []float64:
		return matmulAccRun(g, o, ins, na, nb)
	case []float32:
		return matmulAccRun(g, o, ins, na, nb)
	}
	return typeErr("matmul accumulate", out, ins)
}
