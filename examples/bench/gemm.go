package main

import (
	"fmt"
	"io"
	"time"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas32"
	"gonum.org/v1/gonum/blas/blas64"

	"github.com/bulkad/bulkad/kernel"
)

// GemmRow is one line of the GEMM table: GFLOP/s at one of the models' product shapes.
type GemmRow struct {
	Shape  string  `json:"shape"` // m×n×k: (m×k)·(k×n)
	Dtype  string  `json:"dtype"`
	Bulkad float64 `json:"bulkad_gflops"`
	Gonum  float64 `json:"gonum_gflops"`
	Numpy  float64 `json:"numpy_gflops,omitempty"`
}

// gemmShapes are the products of the benchmarked models (m, n, k).
var gemmShapes = [][3]int{
	{128, 512, 784}, // MLP x·W0
	{784, 512, 128}, // MLP xᵀ·dz1 (as a plain product)
	{128, 10, 512},  // MLP h·W1
	{128, 512, 10},  // MLP dz2·W1ᵀ
	{32, 128, 128},  // RNN h·Wh
	{128, 128, 64},  // attention Q·Kᵀ
	{128, 64, 128},  // attention A·V
}

// gflops times f (2·m·n·k flops) for about 50 ms, seven times, and returns the best rate.
func gflops(m, n, k int, f func()) float64 {
	for i := 0; i < 3; i++ {
		f()
	}
	best := time.Duration(1 << 62)
	for r := 0; r < 7; r++ {
		t0 := time.Now()
		reps := 0
		for time.Since(t0) < 50*time.Millisecond {
			f()
			reps++
		}
		if d := time.Since(t0) / time.Duration(reps); d < best {
			best = d
		}
	}
	return 2 * float64(m*n*k) / best.Seconds() / 1e9
}

// gemmTable measures bulkad's GEMM (kernel.GEMM), gonum's and, with a, numpy's.
func gemmTable(a *anchor) ([]GemmRow, error) {
	var rows []GemmRow
	ws := &kernel.Workspace{} // as the raised matmul kernels and UseBLAS reuse their buffers
	for _, s := range gemmShapes {
		m, n, k := s[0], s[1], s[2]
		for _, dt := range []string{"float64", "float32"} {
			r := GemmRow{Shape: fmt.Sprintf("%d×%d×%d", m, n, k), Dtype: dt}
			if dt == "float64" {
				x, y, z := filled[float64](m*k), filled[float64](k*n), make([]float64, m*n)
				if kernel.GEMM(ws, false, false, m, n, k, x, k, y, n, z, n) { // else: no assembly GEMM on this CPU
					r.Bulkad = gflops(m, n, k, func() { kernel.GEMM(ws, false, false, m, n, k, x, k, y, n, z, n) })
				}
				r.Gonum = gflops(m, n, k, func() {
					blas64.Implementation().Dgemm(blas.NoTrans, blas.NoTrans, m, n, k, 1, x, k, y, n, 0, z, n)
				})
			} else {
				x, y, z := filled[float32](m*k), filled[float32](k*n), make([]float32, m*n)
				if kernel.GEMM(ws, false, false, m, n, k, x, k, y, n, z, n) {
					r.Bulkad = gflops(m, n, k, func() { kernel.GEMM(ws, false, false, m, n, k, x, k, y, n, z, n) })
				}
				r.Gonum = gflops(m, n, k, func() {
					blas32.Implementation().Sgemm(blas.NoTrans, blas.NoTrans, m, n, k, 1, x, k, y, n, 0, z, n)
				})
			}
			if a != nil {
				v, err := a.number("gemm %d %d %d %s", m, n, k, dt)
				if err != nil {
					return nil, err
				}
				r.Numpy = v
			}
			rows = append(rows, r)
		}
	}
	return rows, nil
}

func printGemm(w io.Writer, rows []GemmRow) {
	fmt.Fprintln(w, "| product m×n×k | dtype | bulkad GEMM GFLOP/s | gonum GFLOP/s | numpy (OpenBLAS) GFLOP/s | bulkad/gonum | bulkad/numpy |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|")
	for _, r := range rows {
		np, ratio := "–", "–"
		if r.Numpy > 0 {
			np, ratio = fmt.Sprintf("%.1f", r.Numpy), fmt.Sprintf("**%.2f**", r.Bulkad/r.Numpy)
		}
		fmt.Fprintf(w, "| %s | %s | %.1f | %.1f | %s | %.2f | %s |\n", r.Shape, r.Dtype, r.Bulkad, r.Gonum, np, r.Bulkad/r.Gonum, ratio)
	}
}

// filled is n values in [-1, 1) with no zeros (gonum's GEMM skips zero elements of a).
func filled[T float32 | float64](n int) []T {
	v := make([]T, n)
	for i := range v {
		v[i] = T(i%13-6) + 0.5
	}
	return v
}
