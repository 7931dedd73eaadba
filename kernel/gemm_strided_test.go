package kernel

import (
	"fmt"
	"math"
	"testing"
	"unsafe"
)

// TestGemmTransposedInPlace: a narrow product (one or two column strips) with op(a) = aᵀ reads
// a's strips in place (micro.runT) instead of packing them, and gives the same bits as the
// packed kernel — full and partial row strips, several panels (sums added to c), one and two
// column strips and a partial one, 1 to 3 workers — and agrees with the naive product.
func TestGemmTransposedInPlace(t *testing.T) {
	// m, n in column strips of the kernel, k
	shapes := func(nr int) [][3]int {
		return [][3]int{{1024, nr, 512}, {203, nr, 300}, {64, 2 * nr, 70}, {37, nr + nr/2, 260}, {992, nr + 3, 128}}
	}
	for _, mk := range gemmMicros[float64]() {
		if mk.runT == nil {
			continue
		}
		for _, s := range shapes(mk.nr) {
			t.Run(fmt.Sprintf("f64/%v", s), func(t *testing.T) { checkGemmT(t, mk, s[0], s[1], s[2], 1e-13) })
		}
	}
	for _, mk := range gemmMicros[float32]() {
		if mk.runT == nil {
			continue
		}
		for _, s := range shapes(mk.nr) {
			t.Run(fmt.Sprintf("f32/%v", s), func(t *testing.T) { checkGemmT(t, mk, s[0], s[1], s[2], 1e-5) })
		}
	}
}

func checkGemmT[T floatT](t *testing.T, mk micro[T], m, n, k int, tol float64) {
	a, lda, b, ldb := gemmOperands[T](int64(m*n+k), true, false, m, n, k)
	want, mag := naiveGemm(true, false, m, n, k, a, lda, b, ldb)
	packed := mk
	packed.runT = nil
	ref := make([]T, m*n)
	gemmWithBlocking(&Workspace{}, packed, blockingFor(mk.mr, mk.nr, int(unsafe.Sizeof(T(0)))), 1, true, false, m, n, k, a, lda, b, ldb, ref, n)
	calls := 0
	counted := mk
	counted.runT = func(kc int, a []T, lda int, bs, c []T, ldc int, add bool) {
		calls++
		mk.runT(kc, a, lda, bs, c, ldc, add)
	}
	for procs := 1; procs <= 3; procs++ {
		c := make([]T, m*n)
		for i := range c {
			c[i] = T(math.NaN()) // every element must be written
		}
		gemmWithBlocking(&Workspace{}, counted, blockingFor(mk.mr, mk.nr, int(unsafe.Sizeof(T(0)))), procs, true, false, m, n, k, a, lda, b, ldb, c, n)
		for i := range c {
			if math.Float64bits(float64(c[i])) != math.Float64bits(float64(ref[i])) {
				t.Fatalf("procs %d: c[%d] = %v, packed kernel %v", procs, i, c[i], ref[i])
			}
			if d := math.Abs(float64(c[i]) - want[i]); d > tol*(mag[i]+1) {
				t.Fatalf("procs %d: c[%d] = %v, naive %v", procs, i, c[i], want[i])
			}
		}
	}
	if calls == 0 {
		t.Fatal("the in-place kernel never ran")
	}
}
