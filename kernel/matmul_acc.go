package kernel

import (
	"runtime"
	"unsafe"

	"github.com/pkg/errors"
)

// InPlace is implemented by a kernel that may write its output over its first input: a Plan
// gives the output the first input's buffer when that input is an unpacked step output of
// the same dtype and size that no later step reads (its value is dead after this step), and
// the kernel's Run finds out and input starting at the same element. With other slices the
// kernel reads its first input as any other.
type InPlace interface {
	// InPlace reports whether the kernel may share its output's buffer with its first input.
	InPlace() bool
}

// InPlace implements InPlace: an accumulating product (Acc) adds into its first input's
// buffer.
func (g MatMul) InPlace() bool { return g.Acc }

// matmulAccRun is Run of an accumulating product: o = x + op(a)·op(b), ins = x, a, b.
func matmulAccRun[T floatT](g MatMul, o []T, ins []any, na, nb int) error {
	x, ok0 := ins[0].([]T)
	a, ok1 := ins[1].([]T)
	b, ok2 := ins[2].([]T)
	if !ok0 || !ok1 || !ok2 {
		return typeErr("matmul accumulate", o, ins)
	}
	if g.Batch > 1 || len(x) != g.M*g.N || len(a) != na || len(b) != nb || len(o) != g.M*g.N {
		return errors.Errorf("kernel: matmul accumulate: x + [%d,%d]·[%d,%d] (transA=%v transB=%v, batch %d; supported: one product) needs x and an output of %d elements and factors of %d and %d, got %d, %d, %d and %d",
			g.M, g.K, g.K, g.N, g.TransA, g.TransB, g.batch(), g.M*g.N, na, nb, len(x), len(o), len(a), len(b))
	}
	if overlapsPartly(o, x) {
		return errors.Errorf("kernel: matmul accumulate: the output overlaps x without starting at its first element")
	}
	if len(o) > 0 && unsafe.SliceData(o) != unsafe.SliceData(x) {
		copy(o, x)
	}
	gemmAcc(g.WS, g.S, g.TransA, g.TransB, g.M, g.N, g.K, a, b, o)
	return nil
}

// overlapsPartly reports whether a and b share memory without starting at the same element
// (a vector loop reads b ahead of writing a, so only exact aliasing, an operation done in
// place, keeps the scalar loop's results).
func overlapsPartly[T floatT](a, b []T) bool {
	if len(a) == 0 || len(b) == 0 {
		return false
	}
	size := unsafe.Sizeof(a[0])
	pa, pb := uintptr(unsafe.Pointer(unsafe.SliceData(a))), uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	return pa != pb && pa < pb+uintptr(len(b))*size && pb < pa+uintptr(len(a))*size
}

// gemmAcc sets c (m×n, row-major, holding x) to x + op(a)·op(b): each element is x's element
// plus the product's element as gemm computes it (into a slice of its own), rounded once —
// the bits of a gemm followed by an addition, NaN payloads aside (the two operands' order
// differs between the paths). When gemm would run the product through the tiled
// micro-kernels in one panel (accInPlace), their tiles are added to c as they are computed:
// no product array is written and read again. Otherwise the product goes through scratch
// (s, or a new slice when s is nil or busy).
func gemmAcc[T floatT](ws *Workspace, s *Scratch, ta, tb bool, m, n, k int, a, b, c []T) {
	if m == 0 || n == 0 {
		return
	}
	if accInPlace[T](ta, tb, m, n, k) {
		lda, ldb := k, n
		if ta {
			lda = m
		}
		if tb {
			ldb = k
		}
		mk := gemmMicro[T]()
		bl := blockingFor(mk.mr, mk.nr, int(unsafe.Sizeof(T(0))))
		gemmTiledOrSmall(ws, mk, bl, runtime.GOMAXPROCS(0), true, ta, tb, m, n, k, a, lda, b, ldb, c, n)
		return
	}
	t, kept := scratchOf[T](s, m*n)
	if kept {
		defer s.release()
	}
	gemm(ws, ta, tb, m, n, k, a, b, t)
	addTo(c[:m*n], t)
}

// accInPlace reports whether gemm computes an m×n×k product on the assembly micro-kernels of
// gemmTiledOrSmall in one panel of kc products: each tile's sums are then taken from zero in
// registers and stored once, so adding them to c instead (the micro-kernels' add mode) gives
// x + the product with the product's bits.
func accInPlace[T floatT](ta, tb bool, m, n, k int) bool {
	switch any(T(0)).(type) {
	case float32, float64:
	default:
		return false // a named type: gemm runs it as its underlying type
	}
	if !HasGEMM() || !ta && !tb && m*k*n < smallProduct() {
		return false
	}
	mk := gemmMicro[T]()
	return k <= blockingFor(mk.mr, mk.nr, int(unsafe.Sizeof(T(0)))).kc && gemmPathOf(mk, ta, tb, m, n, k) == pathTiled
}

// AddTo adds src into dst element by element (dst[i] += src[i] for i < len(src); dst holds at
// least as many elements), with the vector loops where the CPU has them: each element
// dst[i] + src[i] rounded once, as Go's += (NaN payloads aside). It allocates nothing.
func AddTo[T ~float32 | ~float64](dst, src []T) {
	addTo(dst[:len(src)], src)
}
