package kernel

import (
	"fmt"
	"math"
	"math/rand"
	"runtime"
	"testing"
	"unsafe"

	"github.com/bulkad/bulkad/core"
)

// TestMatMulAcc: an accumulating MatMul (x + op(a)·op(b)) gives, bit for bit, the plain
// MatMul's product added to x by the Binary kernel — in place (the output is x's slice) and
// into another slice, on one and two threads, float32 and float64, every transpose, at shapes
// reaching each of the GEMM's paths (the in-place adding path where accInPlace holds, the
// product through scratch elsewhere) — and agrees with a float64 triple loop within rounding.
// x has large entries, so that adding the products to x one at a time (instead of adding
// their sum once) would change low bits, and ±0 and ±Inf.
func TestMatMulAcc(t *testing.T) {
	shapes := []struct {
		m, n, k int
		inPlace bool // accInPlace holds (with the assembly GEMM, float32 and float64, no transposes)
	}{
		{2, 3, 4, false},      // below smallProduct: matmulK
		{8, 64, 3, false},     // k ≤ smallK: scaled rows
		{64, 5, 64, false},    // narrow: dot tiles
		{100, 7, 20, false},   // narrow: swapped
		{128, 512, 32, true},  // tiled, one panel
		{32, 512, 128, true},  // few rows: gemmSmallM
		{70, 90, 600, false},  // k beyond one panel
		{10, 10, 0, false},    // empty sum: x + 0
		{300, 300, 200, true}, // large enough to split
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	for _, s := range shapes {
		for _, tr := range [][2]bool{{false, false}, {true, false}, {false, true}, {true, true}} {
			name := fmt.Sprintf("%dx%dx%d ta=%v tb=%v", s.m, s.n, s.k, tr[0], tr[1])
			checkMatMulAcc[float64](t, name+" f64", s.m, s.n, s.k, tr[0], tr[1])
			checkMatMulAcc[float32](t, name+" f32", s.m, s.n, s.k, tr[0], tr[1])
			if HasGEMM() && !tr[0] && !tr[1] {
				if got := accInPlace[float64](false, false, s.m, s.n, s.k); got != s.inPlace {
					t.Errorf("%s: accInPlace float64 = %v, want %v", name, got, s.inPlace)
				}
				if got := accInPlace[float32](false, false, s.m, s.n, s.k); got != s.inPlace {
					t.Errorf("%s: accInPlace float32 = %v, want %v", name, got, s.inPlace)
				}
			}
		}
	}
}

func checkMatMulAcc[T floatT](t *testing.T, name string, m, n, k int, ta, tb bool) {
	t.Helper()
	a, lda, b, ldb := gemmOperands[T](int64(m*n+k), ta, tb, m, n, k)
	rng := rand.New(rand.NewSource(int64(m + n + k)))
	x := make([]T, m*n)
	for i := range x {
		x[i] = T(rng.NormFloat64() * 1e4)
	}
	special := []float64{0, math.Copysign(0, -1), math.Inf(1), math.Inf(-1)}
	for i := 0; i < len(x) && i < 4; i++ {
		x[i] = T(special[i])
	}
	var ws Workspace
	plain := MatMul{M: m, N: n, K: k, TransA: ta, TransB: tb, WS: &ws}
	acc := plain
	acc.Acc, acc.S = true, &Scratch{}
	for _, procs := range []int{1, 2} {
		runtime.GOMAXPROCS(procs)
		prod, want := make([]T, m*n), make([]T, m*n)
		if err := plain.Run(prod, []any{a, b}); err != nil {
			t.Fatal(err)
		}
		if err := (Binary{Op: core.OpAdd}).Run(want, []any{x, prod}); err != nil {
			t.Fatal(err)
		}
		other := make([]T, m*n)
		if err := acc.Run(other, []any{x, a, b}); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		in := append([]T(nil), x...)
		if err := acc.Run(in, []any{in, a, b}); err != nil {
			t.Fatalf("%s: in place: %v", name, err)
		}
		ref, mag := naiveGemm(ta, tb, m, n, k, a, lda, b, ldb)
		eps := 1e-14
		if unsafe.Sizeof(T(0)) == 4 {
			eps = 1e-6
		}
		for i := range want {
			for _, got := range []struct {
				v    T
				what string
			}{{other[i], "into another slice"}, {in[i], "in place"}} {
				if bitsOf(got.v) != bitsOf(want[i]) {
					t.Fatalf("%s, %d threads, %s: element %d = %v, want %v (the product %v added to %v)", name, procs, got.what, i, got.v, want[i], prod[i], x[i])
				}
			}
			r := float64(x[i]) + ref[i]
			if d := math.Abs(float64(want[i]) - r); !math.IsInf(r, 0) && d > eps*(mag[i]+math.Abs(float64(x[i]))+1) {
				t.Fatalf("%s: element %d = %v, the float64 loop gives %v", name, i, want[i], r)
			}
		}
	}
}

// TestMatMulAccErrors: wrong inputs give errors, not panics.
func TestMatMulAccErrors(t *testing.T) {
	g := MatMul{M: 2, N: 3, K: 4, Acc: true}
	x, a, b := make([]float64, 6), make([]float64, 8), make([]float64, 12)
	for _, c := range []struct {
		name string
		out  any
		ins  []any
	}{
		{"two inputs", make([]float64, 6), []any{a, b}},
		{"short x", make([]float64, 6), []any{x[:5], a, b}},
		{"mixed dtypes", make([]float64, 6), []any{x, make([]float32, 8), b}},
		{"overlapping output", x[1:], []any{x[:5], a, b}},
		{"batched", make([]float64, 6), []any{x, a, b}},
	} {
		k := g
		if c.name == "batched" {
			k.Batch = 2
		}
		if err := k.Run(c.out, c.ins); err == nil {
			t.Errorf("%s: no error", c.name)
		}
	}
}

// TestAddTo: AddTo gives Go's += element by element, bit for bit (±0, infinities, subnormals,
// lengths around the vector widths), float32 and float64, and leaves dst past len(src) alone.
func TestAddTo(t *testing.T) {
	for _, n := range []int{0, 1, 7, 8, 15, 16, 17, 33, 1000} {
		checkAddTo[float64](t, n)
		checkAddTo[float32](t, n)
	}
}

func checkAddTo[T floatT](t *testing.T, n int) {
	t.Helper()
	rng := rand.New(rand.NewSource(int64(n)))
	special := []float64{0, math.Copysign(0, -1), math.Inf(1), math.Inf(-1), 5e-324, 1e-45, -3}
	dst, src := make([]T, n+3), make([]T, n)
	for i := range dst {
		dst[i] = T(rng.NormFloat64())
	}
	for i := range src {
		src[i] = T(rng.NormFloat64())
		if i%5 == 0 {
			src[i] = T(special[i%len(special)])
			dst[i] = T(special[(i/5)%len(special)])
		}
	}
	want := append([]T(nil), dst...)
	for i, v := range src {
		want[i] += v
	}
	AddTo(dst, src)
	for i := range want {
		if bitsOf(dst[i]) != bitsOf(want[i]) && !(dst[i] != dst[i] && want[i] != want[i]) {
			t.Fatalf("n=%d %T: element %d = %v, want %v", n, dst[i], i, dst[i], want[i])
		}
	}
}
