package bulkad

import (
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/bulkad/bulkad/kernel"
)

// UseBLAS installs bulkad's GEMM (package kernel's AVX2+FMA assembly) as the BLAS of
// Gorgonia (gorgonia.Use) and of its tensors (tensor.Use), so Gorgonia's own matrix products,
// the forward pass included, run on it. Dgemm and Sgemm with alpha 1 and beta 0 go to bulkad's
// GEMM; every other call and every other BLAS routine is gonum's. On CPUs without AVX2+FMA
// (or with -tags purego) the calls go to gonum as before. It is opt-in and process-wide, like
// gorgonia.Use; the gradient ops bulkad raises use kernel's GEMM whether or not it is called.
func UseBLAS() {
	b := gemmBLAS{ws: &kernel.Workspace{}}
	gorgonia.Use(b)
	tensor.Use(b)
}

// gemmBLAS is gonum's BLAS with Dgemm and Sgemm taken by kernel.GEMM where it applies.
type gemmBLAS struct {
	gonum.Implementation
	ws *kernel.Workspace // packing buffers, reused across calls
}

// Dgemm implements blas.Float64.
func (g gemmBLAS) Dgemm(tA, tB blas.Transpose, m, n, k int, alpha float64, a []float64, lda int, b []float64, ldb int, beta float64, c []float64, ldc int) {
	if !gemmFits(tA, tB, m, n, k, alpha, len(a), lda, len(b), ldb, beta, len(c), ldc) ||
		!kernel.GEMM(g.ws, tA != blas.NoTrans, tB != blas.NoTrans, m, n, k, a, lda, b, ldb, c, ldc) {
		g.Implementation.Dgemm(tA, tB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
	}
}

// Sgemm implements blas.Float32.
func (g gemmBLAS) Sgemm(tA, tB blas.Transpose, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	if !gemmFits(tA, tB, m, n, k, float64(alpha), len(a), lda, len(b), ldb, float64(beta), len(c), ldc) ||
		!kernel.GEMM(g.ws, tA != blas.NoTrans, tB != blas.NoTrans, m, n, k, a, lda, b, ldb, c, ldc) {
		g.Implementation.Sgemm(tA, tB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
	}
}

// gemmFits reports whether a GEMM call is one kernel.GEMM computes (alpha 1, beta 0, real
// transposes, non-empty and valid sizes); gonum handles (and reports) everything else.
func gemmFits(tA, tB blas.Transpose, m, n, k int, alpha float64, na, lda, nb, ldb int, beta float64, nc, ldc int) bool {
	if alpha != 1 || beta != 0 || m <= 0 || n <= 0 || k <= 0 {
		return false
	}
	ok := func(t blas.Transpose, rows, cols, size, ld int) bool {
		switch t {
		case blas.Trans, blas.ConjTrans:
			rows, cols = cols, rows
		case blas.NoTrans:
		default:
			return false
		}
		return ld >= cols && size >= (rows-1)*ld+cols
	}
	return ok(tA, m, k, na, lda) && ok(tB, k, n, nb, ldb) && ok(blas.NoTrans, m, n, nc, ldc)
}
