package kernel

import (
	"math"
	"math/rand"
	"testing"
)

// TestAddRows: addRows (one assembly call for the whole vectors of every row, a scalar loop
// for the rest) adds each element as the scalar loop does, to the bit, for rows of every
// length around the vector widths, strides wider than the rows, and no rows.
func TestAddRows(t *testing.T) {
	testAddRows[float32](t)
	testAddRows[float64](t)
}

func testAddRows[T floatT](t *testing.T) {
	r := rand.New(rand.NewSource(3))
	for _, h := range []int{0, 1, 3, 16} {
		for _, w := range []int{1, 3, 4, 7, 8, 9, 15, 16, 17, 33} {
			s := w + 2 + r.Intn(5)
			o := r.Intn(4)
			xp := make([]T, o+h*s+w)
			src := make([]T, h*w)
			for i := range xp {
				xp[i] = T(r.NormFloat64())
			}
			for i := range src {
				src[i] = T(r.NormFloat64() * 1e3)
			}
			want := append([]T(nil), xp...)
			for i := range h {
				for j := range w {
					want[o+i*s+j] += src[i*w+j]
				}
			}
			addRows(xp, src, o, h, s, w)
			for i := range xp {
				if math.Float64bits(float64(xp[i])) != math.Float64bits(float64(want[i])) {
					t.Fatalf("%T h %d w %d s %d: element %d = %v, want %v", xp[0], h, w, s, i, xp[i], want[i])
				}
			}
		}
	}
}
