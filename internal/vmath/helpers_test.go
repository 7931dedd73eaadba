package vmath

import (
	"math"
	"math/big"
	"math/rand"
)

// fn describes one function of a dtype: the scalar and slice versions, the reference, and
// the ulp bound asserted against it.
type fn[F float32 | float64] struct {
	name   string
	scalar func(F) F
	slice  func(dst, x []F) error
	ref    func(F) F
	bound  uint64
}

// fn64 and fn32 are the functions of each dtype.
type (
	fn64 = fn[float64]
	fn32 = fn[float32]
)

// ref32 is the float32 reference of a float64 function: computed in float64, rounded once.
func ref32(f func(float64) float64) func(float32) float32 {
	return func(x float32) float32 { return float32(f(float64(x))) }
}

// funcs64 and funcs32 are the functions under test with their references: the math package,
// and for sigmoid (which math lacks) bigSigmoid, correctly rounded from math/big.
func funcs64() []fn64 {
	return []fn64{
		{"Exp64", Exp64, Exp64Slice, refExp64(), 2},
		{"Log64", Log64, Log64Slice, refLog64, 1},
		{"Tanh64", Tanh64, Tanh64Slice, math.Tanh, 2},
		{"Sigmoid64", Sigmoid64, Sigmoid64Slice, bigSigmoid(), 1},
		{"Erf64", Erf64, Erf64Slice, math.Erf, 1},
	}
}

func funcs32() []fn32 {
	return []fn32{
		{"Exp32", Exp32, Exp32Slice, ref32(math.Exp), 1},
		{"Log32", Log32, Log32Slice, ref32(math.Log), 1},
		{"Tanh32", Tanh32, Tanh32Slice, ref32(math.Tanh), 1},
		{"Sigmoid32", Sigmoid32, Sigmoid32Slice, ref32(bigSigmoid()), 1},
		{"Erf32", Erf32, Erf32Slice, ref32(math.Erf), 1},
	}
}

// refExp64 is math.Exp below 709 and e^x from math/big above: math.Exp on amd64 returns +Inf
// for the last few x below ln(MaxFloat64) (709.782712893384 = 0x1.62e42fefa39efp+9 and
// the values just under it), where e^x is finite (1.7976931348622732e308 there, by mpmath too).
func refExp64() func(float64) float64 {
	ln2 := bigLn2(120)
	return func(x float64) float64 {
		if !(x > 709 && x < 710) {
			return math.Exp(x)
		}
		r, _ := bigExpNeg(-x, ln2, 120).Float64()
		return r
	}
}

// refLog64 is math.Log for normal x; for subnormal x, where math.Log on amd64 is wrong
// (math.Log(5e-324) = -709.09, log is -744.44), it is e·ln2 + math.Log(m) for x = m·2^e,
// m in [1, 2), summed in math/big and rounded once.
func refLog64(x float64) float64 {
	if !(x > 0 && x < 0x1p-1022) {
		return math.Log(x)
	}
	m, e := math.Frexp(x) // x = m·2^e, m in [½, 1)
	m, e = 2*m, e-1
	s := new(big.Float).SetPrec(120).Mul(bigLn2(120), big.NewFloat(float64(e)).SetPrec(120))
	s.Add(s, big.NewFloat(math.Log(m)))
	r, _ := s.Float64()
	return r
}

// ord64 maps float64 bits to integers in the order of the values (−0 and +0 both to 0), so
// the distance of two ords is the number of representable values between them (ulps,
// subnormals included; MaxFloat64 to +Inf is one).
func ord64(x float64) int64 {
	u := int64(math.Float64bits(x))
	if u < 0 {
		return math.MinInt64 - u
	}
	return u
}

// ord32 is ord64 for float32.
func ord32(x float32) int64 {
	u := int32(math.Float32bits(x))
	if u < 0 {
		return int64(math.MinInt32) - int64(u)
	}
	return int64(u)
}

// ord is ord64 or ord32 by x's type.
func ord[F float32 | float64](x F) int64 {
	if v, ok := any(x).(float32); ok {
		return ord32(v)
	}
	return ord64(float64(x))
}

// bitsOf is x's bit pattern (math.Float32bits or math.Float64bits).
func bitsOf[F float32 | float64](x F) uint64 {
	if v, ok := any(x).(float32); ok {
		return uint64(math.Float32bits(v))
	}
	return math.Float64bits(float64(x))
}

// ulps is the ulp distance of got from want; NaN against NaN is 0, NaN against a number is
// MaxUint64.
func ulps[F float32 | float64](got, want F) uint64 {
	gn, wn := got != got, want != want
	if gn || wn {
		if gn && wn {
			return 0
		}
		return math.MaxUint64
	}
	d := ord(got) - ord(want)
	if d < 0 {
		d = -d
	}
	return uint64(d)
}

// same is bitwise equality (any NaN equals any NaN: the NaN a function returns is the input
// or a fixed constant, but tests of references cannot ask more than NaN-ness).
func same[F float32 | float64](a, b F) bool { return bitsOf(a) == bitsOf(b) || (a != a && b != b) }

// bitsEqual is equality of bits (NaN results are the input or a fixed constant, so the bits
// of NaN must agree too).
func bitsEqual[F float32 | float64](a, b F) bool { return bitsOf(a) == bitsOf(b) }

// specials64 are the special values and boundaries of float64.
func specials64() []float64 {
	s := []float64{
		0, math.Inf(1), math.NaN(), 1, 0.5, 2, 0x1p-1074, 0x1p-1073, 0x1p-1022 - 0x1p-1074, 0x1p-1022,
		0x1p-1022 + 0x1p-1074, math.MaxFloat64, math.SmallestNonzeroFloat64, 1e-300, 1e-20, 1e-8,
		// exp overflow and underflow, tanh's and erf's saturation, erf's pieces
		709.782712893384, 709.7827128933841, 709.78, 710, 745.1332191019411, 745.1332191019412,
		745.2, 746, 708.3964185322641, 708.39641853226420, 19.06, 22, 44, 0.625,
		0.5, 0.5 - 0x1p-54, 1.2, 1.9, 2.6, 3.3, 4, 4.7, 5.4, 5.85, 5.9, 6, 6.1, 0.84375, 1.25, 2.857142857142857,
		math.Ln2, math.Ln2 / 2, math.Sqrt2, math.Sqrt2 / 2,
	}
	out := []float64{}
	for _, v := range s {
		out = append(out, v, -v, math.Nextafter(v, 0), -math.Nextafter(v, 0),
			math.Nextafter(v, math.Inf(1)), -math.Nextafter(v, math.Inf(1)))
	}
	return out
}

// specials32 are the special values and boundaries of float32.
func specials32() []float32 {
	s := []float32{
		0, float32(math.Inf(1)), float32(math.NaN()), 1, 0.5, 2, 0x1p-149, 0x1p-148, 0x1p-126 - 0x1p-149,
		0x1p-126, math.MaxFloat32, 1e-30, 1e-10, 1e-4,
		88.72283, 88.722839, 88.7, 89, 103.97208, 103.972084, 104, 87.33654, 9.01, 10, 0.625,
		0.5, 0.75, 1.25, 1.75, 2.25, 2.75, 3.25, 3.75, 3.9, 3.92, 4, 4.4, 4.5, 0.84375,
		math.Ln2, math.Ln2 / 2, math.Sqrt2, math.Sqrt2 / 2,
	}
	out := []float32{}
	inf := float32(math.Inf(1))
	for _, v := range s {
		out = append(out, v, -v, next32(v, 0), -next32(v, 0), next32(v, inf), -next32(v, inf))
	}
	return out
}

func next32(x, y float32) float32 { return float32(math.Nextafter32(x, y)) }

// samples64 are every 2^step-th bit pattern (both signs), the specials, and n random values
// in each of a few ranges where the functions change character.
func samples64(step uint, n int) []float64 {
	out := specials64()
	for u := uint64(0); ; u += 1 << step {
		out = append(out, math.Float64frombits(u))
		if u+1<<step < u {
			break
		}
	}
	r := rand.New(rand.NewSource(1))
	for _, w := range []float64{1e-6, 0.7, 1, 3, 8, 25, 100, 750} {
		for i := 0; i < n; i++ {
			out = append(out, (2*r.Float64()-1)*w)
		}
	}
	for i := 0; i < n; i++ { // log over many binades
		out = append(out, math.Exp(r.Float64()*1400-700))
	}
	return out
}

func samples32(step uint, n int) []float32 {
	out := specials32()
	for u := uint64(0); u < 1<<32; u += 1 << step {
		out = append(out, math.Float32frombits(uint32(u)))
	}
	r := rand.New(rand.NewSource(1))
	for _, w := range []float32{1e-3, 0.7, 1, 3, 5, 12, 100} {
		for i := 0; i < n; i++ {
			out = append(out, (2*r.Float32()-1)*w)
		}
	}
	return out
}

// bigSigmoid returns 1/(1+e^-x) correctly rounded to float64, from e^-|x| in math/big
// (Taylor series after -|x| = k ln2 + r, 100 bits) and the stable branch for the sign of x.
func bigSigmoid() func(float64) float64 {
	const p = 100
	ln2 := bigLn2(p)
	return func(x float64) float64 {
		switch a := math.Abs(x); {
		case math.IsNaN(x):
			return x
		case a > 800: // e^-a < 2^-1154
			if x > 0 {
				return 1
			}
			return 0
		case a < 0x1p-60: // 1/2 + x/4 + O(x³) rounds to 1/2
			return 0.5
		}
		e := bigExpNeg(math.Abs(x), ln2, p)
		one := new(big.Float).SetPrec(p).SetInt64(1)
		d := new(big.Float).SetPrec(p).Add(one, e)
		num := one
		if x < 0 {
			num = e
		}
		r, _ := new(big.Float).SetPrec(p).Quo(num, d).Float64()
		return r
	}
}

// bigLn2 is ln 2 to p bits: 2 Σ 3^-(2n+1)/(2n+1).
func bigLn2(p uint) *big.Float {
	s := new(big.Float).SetPrec(p)
	t := new(big.Float).SetPrec(p).Quo(big.NewFloat(1).SetPrec(p), big.NewFloat(3).SetPrec(p))
	for n := int64(0); n < int64(p); n++ {
		q := new(big.Float).SetPrec(p).Quo(t, new(big.Float).SetPrec(p).SetInt64(2*n+1))
		s.Add(s, q)
		t.Quo(t, big.NewFloat(9).SetPrec(p))
	}
	return s.Mul(s, big.NewFloat(2).SetPrec(p))
}

// bigExpNeg is e^-a (0 ≤ a ≤ 800) to about p bits: -a = k ln2 + r, |r| ≤ ln2/2, Taylor
// series of e^r to 30 terms (0.35^30/30! < 2^-150), times 2^k.
func bigExpNeg(a float64, ln2 *big.Float, p uint) *big.Float {
	xa := new(big.Float).SetPrec(p).SetFloat64(-a)
	kf, _ := new(big.Float).SetPrec(p).Quo(xa, ln2).Float64()
	k := math.Round(kf)
	r := new(big.Float).SetPrec(p).Sub(xa, new(big.Float).SetPrec(p).Mul(ln2, new(big.Float).SetPrec(p).SetFloat64(k)))
	s := new(big.Float).SetPrec(p).SetInt64(1)
	t := new(big.Float).SetPrec(p).SetInt64(1)
	for n := int64(1); n <= 30; n++ {
		t.Mul(t, r)
		t.Quo(t, new(big.Float).SetPrec(p).SetInt64(n))
		s.Add(s, t)
	}
	return s.SetMantExp(s, int(k))
}
