//go:build !((linux || darwin || freebsd) && (amd64 || arm64))

package accel

import "github.com/pkg/errors"

// systemGEMM is unavailable on this platform (purego's Dlopen needs a Unix).
type systemGEMM struct{ name string }

func loadSystemGEMM() (*systemGEMM, error) {
	return nil, errors.New("bulkad: system BLAS: not supported on this platform")
}

func (g *systemGEMM) gemm64(ta, tb bool, m, n, k int, alpha float64, a []float64, lda int, b []float64, ldb int, beta float64, c []float64, ldc int) {
}

func (g *systemGEMM) gemm32(ta, tb bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
}
