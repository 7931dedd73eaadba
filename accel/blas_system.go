//go:build (linux || darwin || freebsd) && (amd64 || arm64)

package accel

import (
	"runtime"

	"github.com/ebitengine/purego"
	"github.com/pkg/errors"
)

// systemGEMM is the GEMM of a BLAS library installed on the machine (OpenBLAS, BLIS, Apple's
// Accelerate), called through purego: no cgo, nothing to install at build time.
type systemGEMM struct {
	name  string
	dgemm func(order, ta, tb, m, n, k int32, alpha float64, a *float64, lda int32, b *float64, ldb int32, beta float64, c *float64, ldc int32)
	sgemm func(order, ta, tb, m, n, k int32, alpha float32, a *float32, lda int32, b *float32, ldb int32, beta float32, c *float32, ldc int32)
}

// CBLAS constants (cblas.h).
const (
	cblasRowMajor = 101
	cblasNoTrans  = 111
	cblasTrans    = 112
)

// systemBLASNames are the libraries loadSystemGEMM tries, in order: OpenBLAS (Debian:
// libopenblas0-pthread), BLIS, a generic CBLAS, Apple's Accelerate.
func systemBLASNames() []string {
	if runtime.GOOS == "darwin" {
		return []string{"/System/Library/Frameworks/Accelerate.framework/Accelerate", "libopenblas.dylib"}
	}
	return []string{"libopenblas.so.0", "libopenblas.so", "libblis.so.4", "libblis.so", "libcblas.so.3"}
}

// loadSystemGEMM opens the first system BLAS library that has cblas_dgemm and cblas_sgemm,
// and sets its thread count to GOMAXPROCS when the library lets it (OpenBLAS, BLIS). It never
// panics: a missing library or symbol is an error.
func loadSystemGEMM() (*systemGEMM, error) {
	var tried []string
	for _, name := range systemBLASNames() {
		lib, err := purego.Dlopen(name, purego.RTLD_NOW|purego.RTLD_LOCAL)
		if err != nil {
			tried = append(tried, name)
			continue
		}
		d, errD := purego.Dlsym(lib, "cblas_dgemm")
		s, errS := purego.Dlsym(lib, "cblas_sgemm")
		if errD != nil || errS != nil || d == 0 || s == 0 {
			tried = append(tried, name+" (no cblas_dgemm/cblas_sgemm)")
			continue
		}
		g := &systemGEMM{name: name}
		purego.RegisterFunc(&g.dgemm, d)
		purego.RegisterFunc(&g.sgemm, s)
		threads := runtime.GOMAXPROCS(0)
		if f, err := purego.Dlsym(lib, "openblas_set_num_threads"); err == nil && f != 0 {
			var set func(int32)
			purego.RegisterFunc(&set, f)
			set(int32(threads))
		} else if f, err := purego.Dlsym(lib, "bli_thread_set_num_threads"); err == nil && f != 0 {
			var set func(int64)
			purego.RegisterFunc(&set, f)
			set(int64(threads))
		}
		return g, nil
	}
	return nil, errors.Errorf("bulkad: system BLAS: none found (tried %v)", tried)
}

func cblasTranspose(t bool) int32 {
	if t {
		return cblasTrans
	}
	return cblasNoTrans
}

// gemm64 is c = alpha·op(a)·op(b) + beta·c, row-major, with the system's cblas_dgemm.
func (g *systemGEMM) gemm64(ta, tb bool, m, n, k int, alpha float64, a []float64, lda int, b []float64, ldb int, beta float64, c []float64, ldc int) {
	g.dgemm(cblasRowMajor, cblasTranspose(ta), cblasTranspose(tb), int32(m), int32(n), int32(k),
		alpha, &a[0], int32(lda), &b[0], int32(ldb), beta, &c[0], int32(ldc))
}

// gemm32 is gemm64 for float32 (cblas_sgemm).
func (g *systemGEMM) gemm32(ta, tb bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	g.sgemm(cblasRowMajor, cblasTranspose(ta), cblasTranspose(tb), int32(m), int32(n), int32(k),
		alpha, &a[0], int32(lda), &b[0], int32(ldb), beta, &c[0], int32(ldc))
}
