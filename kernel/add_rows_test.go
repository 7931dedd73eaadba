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

// TestMulAddRep: mulAddRepVec (the whole vectors of every row in one assembly call, the rest
// of each row in Go) adds each rounded product as the scalar loop d += T(x·y) does, to the
// bit, for rows around the vector widths; it declines rows shorter than a vector.
func TestMulAddRep(t *testing.T) {
	testMulAddRep[float32](t)
	testMulAddRep[float64](t)
}

func testMulAddRep[T floatT](t *testing.T) {
	r := rand.New(rand.NewSource(5))
	for _, reps := range []int{1, 3} {
		for _, n := range []int{8, 9, 12, 16, 17, 32, 35} {
			dst := make([]T, reps*n)
			x, y := make([]T, n), make([]T, reps*n)
			for i := range dst {
				dst[i], y[i] = T(r.NormFloat64()), T(r.NormFloat64()*7)
			}
			for i := range x {
				x[i] = T(r.NormFloat64() * 3)
			}
			want := append([]T(nil), dst...)
			for i := range reps {
				for j := range n {
					want[i*n+j] += T(x[j] * y[i*n+j])
				}
			}
			if !mulAddRepVec(dst, x, y, n, reps) {
				if hasVec {
					t.Fatalf("%T n %d reps %d: declined", dst[0], n, reps)
				}
				continue
			}
			for i := range dst {
				if math.Float64bits(float64(dst[i])) != math.Float64bits(float64(want[i])) {
					t.Fatalf("%T n %d reps %d: element %d = %v, want %v", dst[0], n, reps, i, dst[i], want[i])
				}
			}
		}
	}
	if mulAddRepVec(make([]T, 3), make([]T, 3), make([]T, 3), 3, 1) {
		t.Errorf("%T: a row of 3 taken", T(0))
	}
}

// TestPadInto: padInto (a plane of x at a time through the AVX row copy, offsets kept
// incrementally) puts every element of x where its index plus lo puts it in the padded
// array, leaving the rest as it was (a sentinel here), for ranks 1 to 5, rows around the
// vector widths, padding on either side or none, and an empty plane.
func TestPadInto(t *testing.T) {
	testPadInto[float32](t)
	testPadInto[float64](t)
}

func testPadInto[T floatT](t *testing.T) {
	r := rand.New(rand.NewSource(7))
	cases := []struct{ src, lo, hi []int }{
		{[]int{5}, []int{2}, []int{1}},
		{[]int{3, 16}, []int{1, 1}, []int{1, 1}},
		{[]int{4, 7}, []int{0, 2}, []int{3, 0}},
		{[]int{2, 3, 16, 16}, []int{0, 0, 1, 1}, []int{0, 0, 1, 1}},
		{[]int{2, 3, 5, 9}, []int{1, 0, 2, 0}, []int{0, 1, 0, 3}},
		{[]int{2, 2, 3, 4, 17}, []int{0, 1, 1, 0, 2}, []int{1, 0, 1, 2, 1}},
		{[]int{3, 4, 33}, []int{0, 0, 0}, []int{0, 0, 0}},
		{[]int{2, 0, 8}, []int{0, 1, 1}, []int{0, 1, 1}},
	}
	for _, c := range cases {
		n := len(c.src)
		pad := make([]int, n)
		size := 1
		for d := range n {
			pad[d] = c.lo[d] + c.src[d] + c.hi[d]
			size *= c.src[d]
		}
		padded := 1
		for _, p := range pad {
			padded *= p
		}
		x := make([]T, size)
		for i := range x {
			x[i] = T(r.NormFloat64())
		}
		xp := make([]T, padded)
		for i := range xp {
			xp[i] = -7
		}
		want := append([]T(nil), xp...)
		for i := range x {
			// x's index of element i, moved by lo, as an offset in pad
			rem, off, st := i, 0, 1
			for d := n - 1; d >= 0; d-- {
				off += (rem%c.src[d] + c.lo[d]) * st
				rem /= c.src[d]
				st *= pad[d]
			}
			want[off] = x[i]
		}
		padInto(xp, x, c.src, c.lo, pad)
		for i := range xp {
			if xp[i] != want[i] {
				t.Fatalf("%T %v lo %v: element %d = %v, want %v", x[0], c.src, c.lo, i, xp[i], want[i])
			}
		}
	}
}
