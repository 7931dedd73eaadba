package vmath

import (
	"math"
	"testing"
)

// sampleStep is the stride (as a power of two) of the bit patterns sampled.
func sampleStep(t testing.TB, full, short uint) uint {
	if testing.Short() {
		return short
	}
	return full
}

// TestAccuracy64 measures the largest ulp error of every float64 function against its
// reference over the samples, asserts the documented bound, that NaN comes exactly where
// the reference has NaN, and that zeros and infinities are exact (sign included).
func TestAccuracy64(t *testing.T) { accuracy(t, samples64(sampleStep(t, 44, 50), 20000), funcs64()) }

// TestAccuracy32 is TestAccuracy64 for float32, against the float64 reference rounded to
// float32.
func TestAccuracy32(t *testing.T) { accuracy(t, samples32(sampleStep(t, 12, 18), 50000), funcs32()) }

// accuracy is TestAccuracy64 and TestAccuracy32 on the samples xs.
func accuracy[F float32 | float64](t *testing.T, xs []F, fs []fn[F]) {
	for _, f := range fs {
		t.Run(f.name, func(t *testing.T) {
			got := make([]F, len(xs))
			if err := f.slice(got, xs); err != nil {
				t.Fatal(err)
			}
			var worst uint64
			var worstX F
			for i, x := range xs {
				want := f.ref(x)
				if !exactOK(got[i], want) {
					t.Fatalf("%s(%v) = %v (%#x), reference %v (%#x)", f.name, x, got[i], bitsOf(got[i]), want, bitsOf(want))
				}
				if u := ulps(got[i], want); u > worst {
					worst, worstX = u, x
				}
			}
			t.Logf("%s: max %d ulp (at %v) over %d inputs", f.name, worst, worstX, len(xs))
			if worst > f.bound {
				t.Errorf("%s: %d ulp at %v (%v, reference %v), bound %d", f.name, worst, worstX, f.scalar(worstX), f.ref(worstX), f.bound)
			}
		})
	}
}

// exactOK: a NaN reference needs a NaN; a zero or infinite reference the same bits.
func exactOK[F float32 | float64](got, want F) bool {
	switch {
	case want != want || got != got:
		return want != want && got != got
	case want == 0 || math.IsInf(float64(want), 0):
		return bitsOf(got) == bitsOf(want)
	}
	return !math.IsInf(float64(got), 0) && got != 0
}

// TestSpecialValues checks special inputs against values derived by hand (not from math):
// the sign of zero, the limits at ±Inf, NaN in, NaN out.
func TestSpecialValues(t *testing.T) {
	inf, nan := math.Inf(1), math.NaN()
	negz := math.Copysign(0, -1)
	// Per function: its points (x, the value there).
	cases := []struct {
		name string
		f    func(float64) float64
		g    func(float32) float32
		at   [][2]float64
	}{
		{"exp", Exp64, Exp32, [][2]float64{{0, 1}, {negz, 1}, {inf, inf}, {-inf, 0}, {nan, nan}, {1000, inf}, {-1000, 0}}},
		{"log", Log64, Log32, [][2]float64{{1, 0}, {0, -inf}, {negz, -inf}, {inf, inf}, {-inf, nan}, {-1, nan}, {nan, nan}, {2, math.Ln2}}},
		{"tanh", Tanh64, Tanh32, [][2]float64{{0, 0}, {negz, negz}, {inf, 1}, {-inf, -1}, {nan, nan}, {50, 1}}},
		{"sigmoid", Sigmoid64, Sigmoid32, [][2]float64{{0, 0.5}, {negz, 0.5}, {inf, 1}, {-inf, 0}, {nan, nan}, {1000, 1}, {-1000, 0}}},
		{"erf", Erf64, Erf32, [][2]float64{{0, 0}, {negz, negz}, {inf, 1}, {-inf, -1}, {nan, nan}, {10, 1}, {-10, -1}}},
	}
	for _, c := range cases {
		for _, p := range c.at {
			x, want := p[0], p[1]
			if got := c.f(x); !same(got, want) {
				t.Errorf("float64 %s(%v) = %v, want %v", c.name, x, got, want)
			}
			if got := c.g(float32(x)); !same(got, float32(want)) {
				t.Errorf("float32 %s(%v) = %v, want %v", c.name, x, got, float32(want))
			}
		}
	}
	// NaN inputs come back as they are (payload and sign); log of a negative number is NaN.
	for _, f := range funcs64() {
		for _, bits := range []uint64{0x7ff8000000000001, 0xfff8000000000123, 0x7ff4000000000000} {
			x := math.Float64frombits(bits)
			var out [5]float64
			in := [5]float64{x, x, x, x, x}
			if err := f.slice(out[:], in[:]); err != nil {
				t.Fatal(err)
			}
			for _, g := range append(out[:], f.scalar(x)) {
				if math.Float64bits(g) != bits && !(bits == 0x7ff4000000000000 && math.IsNaN(g)) {
					t.Errorf("%s(NaN %#x) = %#x", f.name, bits, math.Float64bits(g))
				}
			}
		}
	}
}
