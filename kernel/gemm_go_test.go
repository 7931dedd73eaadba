package kernel

import (
	"fmt"
	"math"
	"math/rand"
	"testing"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas32"
	"gonum.org/v1/gonum/blas/blas64"
)

// naiveGemm is the reference: the textbook triple loop over strided operands, in float64.
func naiveGemm[T floatT](ta, tb bool, m, n, k int, a []T, lda int, b []T, ldb int) (c, mag []float64) {
	c, mag = make([]float64, m*n), make([]float64, m*n)
	for i := 0; i < m; i++ {
		for j := 0; j < n; j++ {
			var s, g float64
			for p := 0; p < k; p++ {
				ai, bi := i*lda+p, p*ldb+j
				if ta {
					ai = p*lda + i
				}
				if tb {
					bi = j*ldb + p
				}
				x, y := a[ai], b[bi]
				s += float64(x) * float64(y)
				g += math.Abs(float64(x) * float64(y))
			}
			c[i*n+j], mag[i*n+j] = s, g
		}
	}
	return c, mag
}

func TestGemmGo(t *testing.T) {
	type shape struct{ m, n, k int }
	shapes := []shape{{1, 1, 1}, {1, 7, 1}, {7, 1, 7}, {7, 7, 7}, {1, 129, 7}, {129, 7, 129}, {5, 3, 300},
		{129, 129, 129}, {67, 513, 260}, {128, 10, 512}, {200, 600, 300}, {400, 100, 150}, {1000, 7, 400},
		// narrow products (the dot-product tiles): every row and column remainder, k with and
		// without a tail past the vector length
		{9, 13, 77}, {6, 31, 64}, {130, 3, 100}, {5, 1, 1000}, {11, 9, 200}, {2000, 10, 600}}
	for _, s := range shapes {
		for _, tr := range [][2]bool{{false, false}, {true, false}, {false, true}, {true, true}} {
			for _, pad := range []int{0, 3} {
				name := fmt.Sprintf("%dx%dx%d/ta=%v,tb=%v/pad=%d", s.m, s.n, s.k, tr[0], tr[1], pad)
				for _, mk := range gemmMicros[float64]() {
					t.Run(fmt.Sprintf("%s/f64/%dx%d", name, mk.mr, mk.nr), func(t *testing.T) { checkGemmGo(t, mk, tr[0], tr[1], s.m, s.n, s.k, pad, 1e-13) })
				}
				for _, mk := range gemmMicros[float32]() {
					t.Run(fmt.Sprintf("%s/f32/%dx%d", name, mk.mr, mk.nr), func(t *testing.T) { checkGemmGo(t, mk, tr[0], tr[1], s.m, s.n, s.k, pad, 1e-5) })
				}
			}
		}
	}
}

// checkGemmGo multiplies random strided operands with the micro-kernel mk (leading
// dimensions padded by pad, c's padding must stay untouched) and compares with naiveGemm, up
// to tol·Σ|a||b| per element.
func checkGemmGo[T floatT](t *testing.T, mk micro[T], ta, tb bool, m, n, k, pad int, tol float64) {
	rng := rand.New(rand.NewSource(int64(m*1000003 + n*1009 + k)))
	ar, ac, br, bc := m, k, k, n
	if ta {
		ar, ac = k, m
	}
	if tb {
		br, bc = n, k
	}
	lda, ldb, ldc := ac+pad, bc+pad, n+pad
	a, b, c := make([]T, ar*lda), make([]T, br*ldb), make([]T, m*ldc)
	for i := range a {
		a[i] = T(rng.NormFloat64())
	}
	for i := range b {
		b[i] = T(rng.NormFloat64())
	}
	for i := range c {
		c[i] = -7
	}
	gemmWith(&Workspace{}, mk, ta, tb, m, n, k, a, lda, b, ldb, c, ldc)
	want, mag := naiveGemm(ta, tb, m, n, k, a, lda, b, ldb)
	for i := 0; i < m; i++ {
		for j := 0; j < ldc; j++ {
			got := float64(c[i*ldc+j])
			if j >= n {
				if got != -7 {
					t.Fatalf("c[%d,%d] (padding) = %v, want untouched -7", i, j, got)
				}
				continue
			}
			if d := math.Abs(got - want[i*n+j]); d > tol*(mag[i*n+j]+1) {
				t.Fatalf("c[%d,%d] = %v, naive %v (|diff| %g)", i, j, got, want[i*n+j], d)
			}
		}
	}
}

// TestGemmGoNaNInf: a NaN or Inf in one operand facing a zero in the other gives NaN, as
// in the naive loop (0·NaN = 0·Inf = NaN); an Inf facing finite values stays Inf.
func TestGemmGoNaNInf(t *testing.T) {
	// n = 70: the tiled kernel; n = 10: the dot-product tiles of narrow products.
	for _, n := range []int{70, 10} {
		for _, mk := range gemmMicros[float64]() {
			t.Run(fmt.Sprintf("n=%d/%dx%d", n, mk.mr, mk.nr), func(t *testing.T) { checkNaNInf(t, mk, n) })
		}
	}
}

func checkNaNInf(t *testing.T, mk micro[float64], n int) {
	const m, k = 9, 300
	a, b := make([]float64, m*k), make([]float64, k*n)
	for i := range b {
		b[i] = 1
	}
	b[17*n+5] = math.NaN() // a is all zero except row 2: every c[i,5] is 0·NaN = NaN
	b[40*n+9] = math.Inf(1)
	a[2*k+40] = 2 // c[2,9] = 2·Inf = +Inf; the other c[i,9] are 0·Inf = NaN
	c := make([]float64, m*n)
	gemmWith(nil, mk, false, false, m, n, k, a, k, b, n, c, n)
	for i := 0; i < m; i++ {
		for j := 0; j < n; j++ {
			got := c[i*n+j]
			switch {
			case j == 5 || (j == 9 && i != 2):
				if !math.IsNaN(got) {
					t.Errorf("c[%d,%d] = %v, want NaN", i, j, got)
				}
			case j == 9:
				if !math.IsInf(got, 1) {
					t.Errorf("c[2,9] = %v, want +Inf", got)
				}
			case i == 2:
				if got != 2 {
					t.Errorf("c[2,%d] = %v, want 2", j, got)
				}
			default:
				if got != 0 {
					t.Errorf("c[%d,%d] = %v, want 0", i, j, got)
				}
			}
		}
	}
}

// BenchmarkGemm compares gemmGo with gonum's GEMM at the models' shapes, both dtypes,
// alternating per shape (run with -cpu 1 for one thread).
func BenchmarkGemm(b *testing.B) {
	for _, s := range [][3]int{{128, 512, 784}, {128, 10, 512}, {784, 512, 128}, {128, 784, 512}} {
		benchGemm[float64](b, s[0], s[1], s[2], "f64", func(m, n, k int, x, y, z []float64) {
			blas64.Implementation().Dgemm(blas.NoTrans, blas.NoTrans, m, n, k, 1, x, k, y, n, 0, z, n)
		})
		benchGemm[float32](b, s[0], s[1], s[2], "f32", func(m, n, k int, x, y, z []float32) {
			blas32.Implementation().Sgemm(blas.NoTrans, blas.NoTrans, m, n, k, 1, x, k, y, n, 0, z, n)
		})
	}
}

func benchGemm[T floatT](b *testing.B, m, n, k int, dt string, gonum func(m, n, k int, x, y, z []T)) {
	x, y, z := make([]T, m*k), make([]T, k*n), make([]T, m*n)
	for i := range x {
		x[i] = T(i%7) - 3
	}
	for i := range y {
		y[i] = T(i%5) - 2
	}
	flops := float64(2 * m * n * k)
	name := fmt.Sprintf("%dx%dx%d/%s", m, n, k, dt)
	b.Run(name+"/gemmGo", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			gemmGo(false, false, m, n, k, x, k, y, n, z, n)
		}
		b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
	})
	b.Run(name+"/gonum", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			gonum(m, n, k, x, y, z)
		}
		b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
	})
}
