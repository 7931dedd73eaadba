package kernel

import (
	"fmt"
	"testing"
	"unsafe"
)

// TestGemmNonTemporal: products of a few terms into a large c (ntWorth) store its full tiles
// non-temporally, and give the bits of the ordinary kernels, for both dtypes, every
// transposition, c 64-byte aligned (the stores apply) or not (ntWorth refuses; the kernels
// themselves also fall back to ordinary stores on a row that is not aligned), one to three
// goroutines.
func TestGemmNonTemporal(t *testing.T) {
	checkGemmNT[float32](t)
	checkGemmNT[float64](t)
}

func checkGemmNT[T floatT](t *testing.T) {
	mk := gemmMicro[T]()
	if mk.runNT == nil {
		t.Skip("no non-temporal kernels on this CPU (they need AVX-512)")
	}
	plain := mk
	plain.runNT, plain.runUNT = nil, nil
	size := int(unsafe.Sizeof(T(0)))
	bl := blockingFor(mk.mr, mk.nr, size)
	// wide (packed a: runNT) and one column strip (a read in place: runUNT), each with
	// edge tiles, rows whole multiples of 64 bytes, c above ntMin
	shapes := [][2]int{{72, ntMin/size/64 + 64/size}, {ntMin/(size*mk.nr) + mk.mr + 3, mk.nr}}
	for _, k := range []int{1, 8, 32} {
		for _, tr := range [][2]bool{{false, false}, {false, true}, {true, false}, {true, true}} {
			for _, sh := range shapes {
				m, n := sh[0], sh[1]
				a, lda, b, ldb := gemmOperands[T](int64(k), tr[0], tr[1], m, n, k)
				for _, shift := range []int{0, 1} {
					what := fmt.Sprintf("%T %dx%dx%d ta=%v tb=%v c shifted %d", T(0), m, n, k, tr[0], tr[1], shift)
					c := alignedSlice[T](m*n + shift)[shift:]
					if got := ntWorth(mk, bl, m, n, k, c, n); got != (shift == 0) {
						t.Fatalf("%s: ntWorth %v", what, got)
					}
					want := make([]T, m*n)
					gemmWith(nil, plain, tr[0], tr[1], m, n, k, a, lda, b, ldb, want, n)
					got := checkSplit(t, what, func() any {
						for i := range c {
							c[i] = -1
						}
						gemmWith(nil, mk, tr[0], tr[1], m, n, k, a, lda, b, ldb, c, n)
						return append([]T(nil), c...)
					})
					if i, ok := sameBits(got, want); !ok {
						t.Fatalf("%s: element %d differs from the ordinary kernels", what, i)
					}
				}
			}
		}
	}
	// the kernels alone, on a misaligned c: ordinary stores, the same tile
	as, bs := make([]T, 8*mk.mr), make([]T, 8*mk.nr)
	for i := range as {
		as[i] = T(i%7) - 3
	}
	for i := range bs {
		bs[i] = T(i%5) - 2
	}
	c, want := alignedSlice[T](mk.mr*mk.nr + 1)[1:], make([]T, mk.mr*mk.nr)
	mk.runNT(8, as, bs, c, mk.nr, false)
	mk.run(8, as, bs, want, mk.nr, false)
	mk.fence()
	if i, ok := sameBits(c, want); !ok {
		t.Fatalf("%T: runNT on a misaligned tile: element %d differs", T(0), i)
	}
}

// alignedSlice is a slice of n elements whose first element lies on a 64-byte boundary.
func alignedSlice[T floatT](n int) []T {
	s := make([]T, n+64)
	off := 0
	for uintptr(unsafe.Pointer(&s[off]))%64 != 0 {
		off++
	}
	return s[off : off+n]
}
