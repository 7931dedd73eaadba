package vmath

import "math"

//go:generate sh -c "cd internal/asmgen && go run . -godir ../.. -out ../../vmath_amd64.s -stubs ../../vmath_amd64_stub.go -pkg vmath"

// Float is the element type of the generic functions.
type Float interface{ float32 | float64 }

// vmin is MINPS/MINPD: a if a < b, else b (so b when either is NaN).
func vmin[T Float](a, b T) T {
	if a < b {
		return a
	}
	return b
}

// vmax is MAXPS/MAXPD: a if a > b, else b.
func vmax[T Float](a, b T) T {
	if a > b {
		return a
	}
	return b
}

// vsel is BLENDVPS/BLENDVPD: a where m, else b.
func vsel[T Float](m bool, a, b T) T {
	if m {
		return a
	}
	return b
}

// fma32 is a*b+c rounded once to float32 (VFMADD…PS). The product of two float32 values is
// exact in float64; the sum s = p+c is rounded to odd (s's last bit set when s is inexact,
// from the exact error of TwoSum), and rounding a round-to-odd value of 53 bits to 24 bits
// gives the correctly rounded result, subnormals and overflow included.
func fma32(a, b, c float32) float32 {
	p := float64(a) * float64(b)
	q := float64(c)
	s := p + q
	if math.IsInf(s, 0) || math.IsNaN(s) {
		return float32(s)
	}
	// TwoSum: e = (p+q) - s exactly.
	bv := s - p
	av := s - bv
	e := (p - av) + (q - bv)
	if e != 0 {
		u := math.Float64bits(s)
		if u&1 == 0 {
			if (e > 0) == (s > 0) {
				u++
			} else {
				u--
			}
			s = math.Float64frombits(u)
		}
	}
	return float32(s)
}
