package accel

import (
	"os"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/bulkad/bulkad/kernel"
)

// UseBLAS installs a fast GEMM as the BLAS of Gorgonia (gorgonia.Use) and of its tensors
// (tensor.Use), so Gorgonia's own matrix products, the forward pass included, run on it, and
// returns the name of what it installed:
//
//   - a system BLAS when one is installed (OpenBLAS — Debian: libopenblas0-pthread —, BLIS, a
//     CBLAS, Apple's Accelerate), found at run time and called through purego (no cgo), its
//     thread count set to GOMAXPROCS; every Dgemm and Sgemm goes to it;
//   - otherwise bulkad's own GEMM (package kernel: AVX-512 or AVX2+FMA assembly) for Dgemm and
//     Sgemm with alpha 1 and beta 0, gonum for the other calls;
//   - "gonum" when neither applies (no system BLAS, a CPU without AVX2+FMA or -tags purego).
//
// BULKAD_BLAS=bulkad skips the system BLAS; BULKAD_BLAS=gonum installs nothing. Every other
// BLAS routine stays gonum's. It is opt-in and process-wide, like gorgonia.Use; the gradient
// ops bulkad raises use kernel's GEMM whether or not it is called.
func UseBLAS() string {
	choice := os.Getenv("BULKAD_BLAS")
	if choice == "gonum" {
		return "gonum"
	}
	b := gemmBLAS{ws: &kernel.Workspace{}}
	name := "bulkad"
	if choice != "bulkad" {
		if sys, err := loadSystemGEMM(); err == nil {
			b.sys, name = sys, sys.name
		}
	}
	if b.sys == nil && !kernel.HasGEMM() {
		return "gonum" // no assembly GEMM on this CPU or build
	}
	gorgonia.Use(b)
	tensor.Use(b)
	return name
}

// gemmBLAS is gonum's BLAS with Dgemm and Sgemm taken by the system's BLAS (sys) or by
// kernel.GEMM where it applies.
type gemmBLAS struct {
	gonum.Implementation
	ws  *kernel.Workspace // packing buffers, reused across calls
	sys *systemGEMM       // nil: bulkad's GEMM
}

// Dgemm implements blas.Float64.
func (g gemmBLAS) Dgemm(tA, tB blas.Transpose, m, n, k int, alpha float64, a []float64, lda int, b []float64, ldb int, beta float64, c []float64, ldc int) {
	if !fastGEMM(g, tA, tB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc) {
		g.Implementation.Dgemm(tA, tB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
	}
}

// Sgemm implements blas.Float32.
func (g gemmBLAS) Sgemm(tA, tB blas.Transpose, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	if !fastGEMM(g, tA, tB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc) {
		g.Implementation.Sgemm(tA, tB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
	}
}

// fastGEMM runs a valid GEMM call on the system BLAS, or on bulkad's GEMM when alpha is 1 and
// beta 0, and reports whether it did (gonum takes the others).
func fastGEMM[T float32 | float64](g gemmBLAS, tA, tB blas.Transpose, m, n, k int, alpha T, a []T, lda int, b []T, ldb int, beta T, c []T, ldc int) bool {
	if !gemmValid(tA, tB, m, n, k, len(a), lda, len(b), ldb, len(c), ldc) {
		return false
	}
	ta, tb := tA != blas.NoTrans, tB != blas.NoTrans
	if g.sys == nil {
		return alpha == 1 && beta == 0 && kernel.GEMM(g.ws, ta, tb, m, n, k, a, lda, b, ldb, c, ldc)
	}
	switch a := any(a).(type) {
	case []float64:
		g.sys.gemm64(ta, tb, m, n, k, float64(alpha), a, lda, any(b).([]float64), ldb, float64(beta), any(c).([]float64), ldc)
	case []float32:
		g.sys.gemm32(ta, tb, m, n, k, float32(alpha), a, lda, any(b).([]float32), ldb, float32(beta), any(c).([]float32), ldc)
	}
	return true
}

// gemmValid reports whether a GEMM call has real transposes and non-empty, valid sizes (every
// operand holds its matrix); gonum handles (and reports) everything else.
func gemmValid(tA, tB blas.Transpose, m, n, k int, na, lda, nb, ldb int, nc, ldc int) bool {
	if m <= 0 || n <= 0 || k <= 0 {
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
