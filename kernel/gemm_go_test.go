package kernel

import (
	"fmt"
	"math"
	"math/rand"
	"runtime"
	"testing"
	"unsafe"

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
		{9, 13, 77}, {6, 31, 64}, {130, 3, 100}, {5, 1, 1000}, {11, 9, 200}, {2000, 10, 600},
		// few rows (b transposed: computed as cᵀ by the dot tiles), a batch-2 classifier included
		{2, 1000, 1280}, {1, 129, 200}, {4, 70, 301}, {7, 64, 64}, {31, 40, 128}, {32, 100, 64}, {48, 70, 300}, {64, 40, 33},
		// k ≤ smallK with rows of at least smallKRow (b untransposed: scaled rows, gemmSmallK),
		// a batch-2 classifier's weight gradient included
		{300, 200, 2}, {17, 64, 1}, {33, 130, 3}, {40, 100, 4}, {1000, 1280, 2},
		// at most four rows, b untransposed (gemmSmallK, the rows interleaved): a batch-2
		// classifier's input gradient, several pieces of columns, the shortest rows
		{2, 1280, 1000}, {3, 5000, 9}, {4, 256, 5}}
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

// TestGemmSplit: the tiled GEMM gives the same bits on 1 to 4 workers (splitting the rows of
// c or, for few rows, its columns; the shared operand packed by all of them), with the
// blocking of the micro-kernel and with small blockings that make several column blocks, row
// blocks, panels and groups of panels; and agrees with the naive loop.
func TestGemmSplit(t *testing.T) {
	type tc struct {
		m, n, k int
		ta, tb  bool
		bl      blocking // zero: blockingFor's
	}
	cases := []tc{
		{200, 600, 300, false, false, blocking{}},
		{128, 512, 784, false, false, blocking{}},
		{784, 512, 128, true, false, blocking{}},
		{9, 1000, 300, false, true, blocking{}}, // two row strips: the columns split
		{136, 512, 64, true, true, blocking{}},  // 17 row strips: the columns split
		{67, 1100, 260, false, false, blocking{mc: 24, kc: 40, nc: 192}},
		{300, 1030, 70, true, false, blocking{mc: 48, kc: 24, nc: 128}},
		{20, 1024, 600, false, false, blocking{mc: 256, kc: 256, nc: 1024}}, // 2 MiB panels (f64): one per group
		{10, 700, 500, false, true, blocking{mc: 16, kc: 256, nc: 512}},
		{16, 1000, 600, true, false, blocking{}},                       // few rows: b read in place (gemmSmallM), columns split
		{1000, 8, 300, true, false, blocking{}},                        // narrow and transposed: computed as cᵀ (gemmSwapped)
		{20000, 8, 40, true, false, blocking{}},                        // the same, cᵀ's transposition split (GOMAXPROCS 3)
		{32, 6272, 10, false, true, blocking{}},                        // few rows, b transposed: swapped, transposition split
		{13, 750, 70, false, false, blocking{mc: 24, kc: 24, nc: 192}}, // few rows, a partial last strip, several panels
		{3, 9000, 300, false, false, blocking{}},                       // at most four rows: b streamed, pieces split
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(3)) // gemmSwapped splits its transposition by GOMAXPROCS
	for _, c := range cases {
		for _, mk := range gemmMicros[float64]() {
			t.Run(fmt.Sprintf("%+v/f64/%dx%d", c, mk.mr, mk.nr), func(t *testing.T) { checkGemmSplit(t, mk, c.bl, c.ta, c.tb, c.m, c.n, c.k, 1e-13) })
		}
		for _, mk := range gemmMicros[float32]() {
			t.Run(fmt.Sprintf("%+v/f32/%dx%d", c, mk.mr, mk.nr), func(t *testing.T) { checkGemmSplit(t, mk, c.bl, c.ta, c.tb, c.m, c.n, c.k, 1e-5) })
		}
	}
}

func checkGemmSplit[T floatT](t *testing.T, mk micro[T], bl blocking, ta, tb bool, m, n, k int, tol float64) {
	if bl == (blocking{}) {
		bl = blockingFor(mk.mr, mk.nr, int(unsafe.Sizeof(T(0))))
	}
	bl.mc, bl.nc = bl.mc/mk.mr*mk.mr, bl.nc/mk.nr*mk.nr // multiples of the tile (as blockingFor's)
	a, lda, b, ldb := gemmOperands[T](int64(m+n+k), ta, tb, m, n, k)
	want, mag := naiveGemm(ta, tb, m, n, k, a, lda, b, ldb)
	ws := &Workspace{}
	var first []T
	for procs := 1; procs <= 4; procs++ {
		c := make([]T, m*n)
		gemmWithBlocking(ws, mk, bl, procs, ta, tb, m, n, k, a, lda, b, ldb, c, n)
		if procs == 1 {
			first = c
			for i, v := range c {
				if d := math.Abs(float64(v) - want[i]); d > tol*(mag[i]+1) {
					t.Fatalf("c[%d] = %v, naive %v (|diff| %g)", i, v, want[i], d)
				}
			}
			continue
		}
		for i := range c {
			if math.Float64bits(float64(c[i])) != math.Float64bits(float64(first[i])) {
				t.Fatalf("%d workers: c[%d] = %v, one worker %v", procs, i, c[i], first[i])
			}
		}
	}
}

// TestGemmNoAllocs: once a Workspace has served a product, the same product allocates
// nothing, serial or split across workers (rows, columns, narrow), both dtypes.
func TestGemmNoAllocs(t *testing.T) {
	for _, s := range [][3]int{{128, 512, 784}, {784, 512, 128}, {9, 1000, 300}, {2000, 10, 600}} {
		for _, procs := range []int{1, 2} {
			t.Run(fmt.Sprintf("%v/procs=%d", s, procs), func(t *testing.T) {
				if n := gemmAllocs[float64](s[0], s[1], s[2], procs); n != 0 {
					t.Errorf("float64: %v allocations per call, want 0", n)
				}
				if n := gemmAllocs[float32](s[0], s[1], s[2], procs); n != 0 {
					t.Errorf("float32: %v allocations per call, want 0", n)
				}
			})
		}
	}
}

// gemmAllocs is the number of allocations of an m×n×k product (after a first call) on a
// Workspace with up to procs workers.
func gemmAllocs[T floatT](m, n, k, procs int) float64 {
	a, b, c := make([]T, m*k), make([]T, k*n), make([]T, m*n)
	ws := &Workspace{}
	mk := gemmMicro[T]()
	bl := blockingFor(mk.mr, mk.nr, int(unsafe.Sizeof(T(0))))
	return testing.AllocsPerRun(20, func() { gemmWithBlocking(ws, mk, bl, procs, false, false, m, n, k, a, k, b, n, c, n) })
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

// BenchmarkGemmBlocking runs the tiled GEMM at the bench's product shapes with the panel size
// kc of blockingFor and others (mc and nc as blockingFor derives them from kc), both dtypes;
// -cpu 1,2 for one and two threads.
func BenchmarkGemmBlocking(b *testing.B) {
	// the MLP's x·W0, xᵀ·dz1, and a square-ish one (op(a) transposed where the MLP's is)
	for _, s := range []struct {
		m, n, k int
		ta      bool
	}{{128, 512, 784, false}, {784, 512, 128, true}, {128, 784, 512, false}} {
		for _, kc := range []int{64, 128, 192, 256, 384} {
			benchBlocking[float64](b, s.m, s.n, s.k, s.ta, kc, "f64")
			benchBlocking[float32](b, s.m, s.n, s.k, s.ta, kc, "f32")
		}
	}
}

func benchBlocking[T floatT](b *testing.B, m, n, k int, ta bool, kc int, dt string) {
	mk := gemmMicro[T]()
	size := int(unsafe.Sizeof(T(0)))
	bl := blockingFor(mk.mr, mk.nr, size)
	bl = blocking{kc: kc, mc: max(cacheL2/2/(kc*size)/mk.mr*mk.mr, mk.mr), nc: bl.nc}
	lda := k
	if ta {
		lda = m
	}
	x, y, z := make([]T, m*k), make([]T, k*n), make([]T, m*n)
	for i := range x {
		x[i] = T(i%7) - 3
	}
	for i := range y {
		y[i] = T(i%5) - 2
	}
	ws := &Workspace{}
	b.Run(fmt.Sprintf("%dx%dx%d/%s/kc=%d", m, n, k, dt, bl.kc), func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			gemmWithBlocking(ws, mk, bl, runtime.GOMAXPROCS(0), ta, false, m, n, k, x, lda, y, n, z, n)
		}
		b.ReportMetric(float64(2*m*n*k)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
	})
}

// TestGemmPathsSameBits: the products that gemmWithBlocking sends to gemmSmallM (few rows, b
// read in place) or to gemmSwapped (narrow, computed as cᵀ) give the same bits as the plain
// tiled kernel on the same operands: the same panels and the same order of products per
// element (checked against the naive loop too, by TestGemmGo's shapes).
func TestGemmPathsSameBits(t *testing.T) {
	cases := []struct {
		m, n, k int
		ta, tb  bool
	}{
		{8, 4608, 512, true, false}, {8, 300, 700, false, false}, {13, 100, 40, true, false}, {16, 64, 1000, false, false},
		{4608, 8, 512, true, false}, {2304, 3, 256, true, true}, {700, 20, 33, true, false}, {300, 1, 600, true, true},
		{32, 300, 200, false, true}, {64, 129, 77, true, true}, // few rows, b transposed: cᵀ by the tiled kernel
		{32, 300, 10, false, true}, {16, 200, 31, false, true}, {32, 100, 40, true, true}, // and short k: untransposed
		// three and four row strips (AVX-512 kernels: mr = 8), several panels, partial strips
		{32, 512, 600, false, false}, {32, 300, 600, false, false}, {24, 300, 130, true, false}, {29, 100, 40, false, false}, {32, 2048, 256, true, false},
		// up to 16 row strips when b is wider than two column strips; narrower: tiled
		{128, 512, 784, false, false}, {101, 300, 600, true, false}, {128, 784, 512, false, false}, {100, 64, 300, false, false},
		// three or four row strips against one or two column strips: tiled; two row strips: gemmSmallM
		{32, 32, 700, true, false}, {24, 40, 300, false, false}, {16, 32, 500, true, false},
		// b's rows 4 KiB apart (float64 512, float32 1024) and k ≤ 32: tiled
		{128, 512, 32, true, false}, {64, 1024, 20, false, false},
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(3)) // gemmSwapped splits its transposition by GOMAXPROCS
	for _, c := range cases {
		for _, mk := range gemmMicros[float64]() {
			t.Run(fmt.Sprintf("%+v/f64/%dx%d", c, mk.mr, mk.nr), func(t *testing.T) { checkSameBits(t, mk, c.ta, c.tb, c.m, c.n, c.k) })
		}
		for _, mk := range gemmMicros[float32]() {
			t.Run(fmt.Sprintf("%+v/f32/%dx%d", c, mk.mr, mk.nr), func(t *testing.T) { checkSameBits(t, mk, c.ta, c.tb, c.m, c.n, c.k) })
		}
	}
}

// TestSmallMChoice: which products gemmSmallM takes (AVX-512 shapes: mr 8, nr 32 float32).
func TestSmallMChoice(t *testing.T) {
	mk := micro[float32]{mr: 8, nr: 32, runB: func(int, []float32, []float32, int, []float32, int, bool) {}}
	for _, c := range []struct {
		m, n int
		tb   bool
		want bool
	}{
		{8, 32, false, true}, {16, 32, false, true}, {16, 64, false, true}, // up to two row strips
		{24, 32, false, false}, {32, 32, false, false}, {32, 64, false, false}, // three or four, narrow b: tiled
		{32, 65, false, true}, {128, 512, false, true}, {129, 512, false, false}, // wide b: up to 16 strips
		{8, 31, false, false}, {8, 32, true, false}, // less than a column strip; b transposed
	} {
		if got := smallM(mk, c.tb, c.m, c.n); got != c.want {
			t.Errorf("smallM(m %d, n %d, tb %v) = %v, want %v", c.m, c.n, c.tb, got, c.want)
		}
	}
	mk.runB = nil
	if smallM(mk, false, 8, 64) {
		t.Error("smallM without a kernel that reads b in place")
	}
	for _, c := range []struct {
		ldb, k int
		f64    bool
		want   bool
	}{
		{512, 32, true, true}, {1024, 16, true, true}, {500, 32, true, false}, {512, 33, true, false},
		{1024, 32, false, true}, {512, 32, false, false}, {2048, 8, false, true},
	} {
		var got bool
		if c.f64 {
			got = aliased4K[float64](c.ldb, c.k)
		} else {
			got = aliased4K[float32](c.ldb, c.k)
		}
		if got != c.want {
			t.Errorf("aliased4K(ldb %d, k %d, float64 %v) = %v, want %v", c.ldb, c.k, c.f64, got, c.want)
		}
	}
}

// TestFewRowsSwapChoice: products with whole column strips of rows and b transposed run
// transposed only from fewRowsSwapK terms per element (AVX-512 shapes: nr 32 float32, 16
// float64).
func TestFewRowsSwapChoice(t *testing.T) {
	m32 := micro[float32]{mr: 8, nr: 32}
	m64 := micro[float64]{mr: 8, nr: 16}
	for _, c := range []struct {
		m, n, k int
		f64     bool
		want    bool
	}{
		{32, 6272, 10, false, false}, {64, 2048, 20, false, false}, {32, 2048, 31, false, false},
		{32, 1000, 32, false, true}, {64, 2048, 40, false, true}, {32, 1000, 256, false, true},
		{64, 64, 32, false, false}, {64, 2048, 32, false, false}, // k not above m/2
		{32, 2048, 32, true, false}, {16, 2048, 39, true, false}, {32, 2048, 40, true, true}, {16, 2048, 64, true, true},
	} {
		var got bool
		if c.f64 {
			got, _ = fewRowsSwaps(m64, true, c.m, c.n, c.k)
		} else {
			got, _ = fewRowsSwaps(m32, true, c.m, c.n, c.k)
		}
		if got != c.want {
			t.Errorf("fewRowsSwaps(m %d, n %d, k %d, float64 %v) = %v, want %v", c.m, c.n, c.k, c.f64, got, c.want)
		}
	}
	if swap, _ := fewRowsSwaps(m32, false, 32, 1000, 256); swap {
		t.Error("b not transposed: swapped")
	}
}

func checkSameBits[T floatT](t *testing.T, mk micro[T], ta, tb bool, m, n, k int) {
	a, lda, b, ldb := gemmOperands[T](int64(m*7+n*3+k), ta, tb, m, n, k)
	bl := blockingFor(mk.mr, mk.nr, int(unsafe.Sizeof(T(0))))
	ws := &Workspace{}
	want := make([]T, m*n)
	gemmTiled(ws, mk, bl, 1, false, ta, tb, m, n, k, a, lda, b, ldb, want, n)
	for procs := 1; procs <= 2; procs++ {
		got := make([]T, m*n)
		gemmWithBlocking(ws, mk, bl, procs, ta, tb, m, n, k, a, lda, b, ldb, got, n)
		for i := range got {
			if math.Float64bits(float64(got[i])) != math.Float64bits(float64(want[i])) {
				t.Fatalf("%d workers: c[%d] = %v, tiled kernel %v", procs, i, got[i], want[i])
			}
		}
	}
}

// gemmOperands are random normal operands of an m×n×k product stored as ta and tb say
// (unpadded), with their leading dimensions.
func gemmOperands[T floatT](seed int64, ta, tb bool, m, n, k int) (a []T, lda int, b []T, ldb int) {
	rng := rand.New(rand.NewSource(seed))
	a, b = make([]T, m*k), make([]T, k*n)
	for i := range a {
		a[i] = T(rng.NormFloat64())
	}
	for i := range b {
		b[i] = T(rng.NormFloat64())
	}
	lda, ldb = k, n
	if ta {
		lda = m
	}
	if tb {
		ldb = k
	}
	return a, lda, b, ldb
}

// BenchmarkGemmFewRows: products with few rows and b transposed (x·Wᵀ of a small batch, a
// filter gradient with few output channels), float32, through the tiled kernel, cᵀ by the dot
// tiles and cᵀ by the tiled kernel, and gemmWith's choice (fewRowsSwaps); -cpu 1 for one
// thread.
func BenchmarkGemmFewRows(b *testing.B) {
	mk := gemmMicro[float32]()
	bl := blockingFor(mk.mr, mk.nr, 4)
	for _, m := range []int{2, 8, 16, 24, 32, 48, 64} {
		for _, nk := range [][2]int{{1000, 1280}, {1152, 256}, {2304, 128}} {
			n, k := nk[0], nk[1]
			a, lda, w, ldb := gemmOperands[float32](1, false, true, m, n, k)
			c := make([]float32, m*n)
			ws := &Workspace{}
			for _, path := range []string{"tiled", "dot", "swap", "gemmWith"} {
				b.Run(fmt.Sprintf("m=%d/%dx%d/%s", m, n, k, path), func(b *testing.B) {
					for range b.N {
						switch path {
						case "tiled":
							gemmTiledOrSmall(ws, mk, bl, 1, false, false, true, m, n, k, a, lda, w, ldb, c, n)
						case "dot":
							gemmSwapped(ws, mk, bl, 1, true, false, true, m, n, k, a, lda, w, ldb, c, n)
						case "swap":
							gemmSwapped(ws, mk, bl, 1, false, false, true, m, n, k, a, lda, w, ldb, c, n)
						default:
							gemmWithBlocking(ws, mk, bl, 1, false, true, m, n, k, a, lda, w, ldb, c, n)
						}
					}
					b.ReportMetric(float64(2*m*n*k)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
				})
			}
		}
	}
}

// BenchmarkGemmTransposedA: filter gradients computed transposed (op(a) = aᵀ, a the im2col
// windows stored k × m), whose row strips of op(a) are packed from a's columns; float32,
// -cpu 1 for one thread.
func BenchmarkGemmTransposedA(b *testing.B) {
	mk := gemmMicro[float32]()
	for _, s := range [][3]int{{1152, 32, 512}, {1024, 32, 128}, {4608, 64, 128}} {
		m, n, k := s[0], s[1], s[2]
		a, lda, w, ldb := gemmOperands[float32](1, true, false, m, n, k)
		c := make([]float32, m*n)
		ws := &Workspace{}
		b.Run(fmt.Sprintf("%dx%dx%d", m, n, k), func(b *testing.B) {
			for range b.N {
				gemmWith(ws, mk, true, false, m, n, k, a, lda, w, ldb, c, n)
			}
			b.ReportMetric(float64(2*m*n*k)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
	}
}

// BenchmarkGemmCold times products whose operands come from memory, as a plan's do when a
// layer's weights and activations have left the caches since they were last touched (64 MB
// swept between calls, outside the timer): the MNIST convnet's dense layer and the MLP's,
// float32 and float64, through gemmWith's choice; -cpu 1 for one thread.
func BenchmarkGemmCold(b *testing.B) {
	sweep := make([]byte, 64<<20)
	for _, s := range [][5]int{{50, 625, 1152, 0, 0}, {50, 1152, 625, 0, 1}, {1152, 625, 50, 1, 0}, {128, 512, 784, 0, 0}, {256, 512, 128, 0, 0}, {512, 128, 256, 1, 0}, {256, 128, 512, 0, 0}, {784, 512, 128, 1, 0}} {
		b.Run(fmt.Sprintf("%dx%dx%d/f32", s[0], s[1], s[2]), func(b *testing.B) { gemmCold[float32](b, sweep, s) })
		b.Run(fmt.Sprintf("%dx%dx%d/f64", s[0], s[1], s[2]), func(b *testing.B) { gemmCold[float64](b, sweep, s) })
	}
}

func gemmCold[T floatT](b *testing.B, sweep []byte, s [5]int) {
	m, n, k, ta, tb := s[0], s[1], s[2], s[3] == 1, s[4] == 1
	a, lda, w, ldb := gemmOperands[T](1, ta, tb, m, n, k)
	c := make([]T, m*n)
	ws := &Workspace{}
	mk := gemmMicro[T]()
	bl := blockingFor(mk.mr, mk.nr, int(unsafe.Sizeof(T(0))))
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		for j := 0; j < len(sweep); j += 64 {
			sweep[j]++
		}
		b.StartTimer()
		gemmWithBlocking(ws, mk, bl, runtime.GOMAXPROCS(0), ta, tb, m, n, k, a, lda, w, ldb, c, n)
	}
	b.ReportMetric(float64(2*m*n*k)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
}
