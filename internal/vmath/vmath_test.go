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
	cases := []struct {
		name string
		f    func(float64) float64
		g    func(float32) float32
		x    float64
		want float64
	}{
		{"exp(+0)", Exp64, Exp32, 0, 1},
		{"exp(-0)", Exp64, Exp32, negz, 1},
		{"exp(+Inf)", Exp64, Exp32, inf, inf},
		{"exp(-Inf)", Exp64, Exp32, -inf, 0},
		{"exp(NaN)", Exp64, Exp32, nan, nan},
		{"exp(1000)", Exp64, Exp32, 1000, inf},
		{"exp(-1000)", Exp64, Exp32, -1000, 0},
		{"log(1)", Log64, Log32, 1, 0},
		{"log(+0)", Log64, Log32, 0, -inf},
		{"log(-0)", Log64, Log32, negz, -inf},
		{"log(+Inf)", Log64, Log32, inf, inf},
		{"log(-Inf)", Log64, Log32, -inf, nan},
		{"log(-1)", Log64, Log32, -1, nan},
		{"log(NaN)", Log64, Log32, nan, nan},
		{"log(2)", Log64, Log32, 2, math.Ln2},
		{"tanh(+0)", Tanh64, Tanh32, 0, 0},
		{"tanh(-0)", Tanh64, Tanh32, negz, negz},
		{"tanh(+Inf)", Tanh64, Tanh32, inf, 1},
		{"tanh(-Inf)", Tanh64, Tanh32, -inf, -1},
		{"tanh(NaN)", Tanh64, Tanh32, nan, nan},
		{"tanh(50)", Tanh64, Tanh32, 50, 1},
		{"sigmoid(0)", Sigmoid64, Sigmoid32, 0, 0.5},
		{"sigmoid(-0)", Sigmoid64, Sigmoid32, negz, 0.5},
		{"sigmoid(+Inf)", Sigmoid64, Sigmoid32, inf, 1},
		{"sigmoid(-Inf)", Sigmoid64, Sigmoid32, -inf, 0},
		{"sigmoid(NaN)", Sigmoid64, Sigmoid32, nan, nan},
		{"sigmoid(1000)", Sigmoid64, Sigmoid32, 1000, 1},
		{"sigmoid(-1000)", Sigmoid64, Sigmoid32, -1000, 0},
		{"erf(+0)", Erf64, Erf32, 0, 0},
		{"erf(-0)", Erf64, Erf32, negz, negz},
		{"erf(+Inf)", Erf64, Erf32, inf, 1},
		{"erf(-Inf)", Erf64, Erf32, -inf, -1},
		{"erf(NaN)", Erf64, Erf32, nan, nan},
		{"erf(10)", Erf64, Erf32, 10, 1},
		{"erf(-10)", Erf64, Erf32, -10, -1},
	}
	for _, c := range cases {
		got := c.f(c.x)
		if !same(got, c.want) {
			t.Errorf("float64 %s = %v, want %v", c.name, got, c.want)
		}
		got32 := c.g(float32(c.x))
		if !same(got32, float32(c.want)) {
			t.Errorf("float32 %s = %v, want %v", c.name, got32, float32(c.want))
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
