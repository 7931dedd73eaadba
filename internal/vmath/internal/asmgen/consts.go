package main

import (
	"fmt"
	"math"
	"math/big"
)

// prec is the working precision of the constants (bits); every constant is computed here from
// its definition and rounded once to the dtype.
const prec = 512

// piDigits is π to 100 significant digits.
const piDigits = "3.141592653589793238462643383279502884197169399375105820974944592307816406286208998628034825342117068"

func bf(x float64) *big.Float { return new(big.Float).SetPrec(prec).SetFloat64(x) }

func bint(n int64) *big.Float { return new(big.Float).SetPrec(prec).SetInt64(n) }

func add(x, y *big.Float) *big.Float { return new(big.Float).SetPrec(prec).Add(x, y) }
func sub(x, y *big.Float) *big.Float { return new(big.Float).SetPrec(prec).Sub(x, y) }
func mul(x, y *big.Float) *big.Float { return new(big.Float).SetPrec(prec).Mul(x, y) }
func quo(x, y *big.Float) *big.Float { return new(big.Float).SetPrec(prec).Quo(x, y) }

// tiny is 2^-(prec-8): series stop once a term is below it (relative to 1).
var tiny = new(big.Float).SetMantExp(bf(1), -(prec - 8))

// bigPi is π.
func bigPi() *big.Float {
	p, _, err := big.ParseFloat(piDigits, 10, prec, big.ToNearestEven)
	if err != nil {
		panic(err)
	}
	return p
}

// bigLn2 is ln 2 = 2 atanh(1/3) = 2 Σ 3^-(2n+1)/(2n+1).
func bigLn2() *big.Float {
	s := bf(0)
	third := quo(bf(1), bf(3))
	ninth := quo(bf(1), bf(9))
	p := third
	for n := int64(0); p.Cmp(tiny) > 0; n++ {
		s = add(s, quo(p, bint(2*n+1)))
		p = mul(p, ninth)
	}
	return mul(bf(2), s)
}

// bigExp is e^x by Taylor series of e^|x| (positive terms) and a reciprocal for x < 0.
func bigExp(x *big.Float) *big.Float {
	ax := new(big.Float).SetPrec(prec).Abs(x)
	s, t := bf(1), bf(1)
	for n := int64(1); ; n++ {
		t = quo(mul(t, ax), bint(n))
		s = add(s, t)
		if quo(t, s).Cmp(tiny) < 0 {
			break
		}
	}
	if x.Sign() < 0 {
		return quo(bf(1), s)
	}
	return s
}

// twoOverSqrtPi is 2/√π.
func twoOverSqrtPi() *big.Float {
	r := new(big.Float).SetPrec(prec).Sqrt(bigPi())
	return quo(bf(2), r)
}

// invFact is 1/n!.
func invFact(n int) *big.Float {
	f := bf(1)
	for i := 2; i <= n; i++ {
		f = mul(f, bint(int64(i)))
	}
	return quo(bf(1), f)
}

// erfSeries is the coefficient of x^(2n+1) in erf's Maclaurin series: 2/√π (-1)^n/(n!(2n+1)).
func erfSeries(n int) *big.Float {
	c := quo(mul(twoOverSqrtPi(), invFact(n)), bint(int64(2*n+1)))
	if n%2 == 1 {
		c.Neg(c)
	}
	return c
}

// bigErf is erf(c) by its Maclaurin series (at 512 bits the cancellation of c ≤ 6 is harmless).
func bigErf(c *big.Float) *big.Float {
	c2 := mul(c, c)
	s := bf(0)
	p := new(big.Float).SetPrec(prec).Set(c) // c^(2n+1)/n!
	for n := 0; ; n++ {
		t := quo(p, bint(int64(2*n+1)))
		if n%2 == 1 {
			t.Neg(t)
		}
		s = add(s, t)
		if n > 10 && new(big.Float).Abs(t).Cmp(tiny) < 0 {
			break
		}
		p = quo(mul(p, c2), bint(int64(n+1)))
	}
	return mul(twoOverSqrtPi(), s)
}

// erfTaylor is the Taylor coefficients a_0..a_deg of erf about c:
// a_0 = erf(c), a_n = erf⁽ⁿ⁾(c)/n! with erf⁽ⁿ⁾(c) = 2/√π (-1)^(n-1) H_{n-1}(c) e^(-c²)
// (H the physicists' Hermite polynomials: H_0 = 1, H_1 = 2c, H_{m+1} = 2c H_m - 2m H_{m-1}).
func erfTaylor(c float64, deg int) []*big.Float {
	bc := bf(c)
	out := []*big.Float{bigErf(bc)}
	g := mul(twoOverSqrtPi(), bigExp(new(big.Float).Neg(mul(bc, bc))))
	h0, h1 := bf(1), mul(bf(2), bc)
	for n := 1; n <= deg; n++ {
		h := h0 // H_{n-1}
		a := quo(mul(g, h), new(big.Float).SetPrec(prec).SetInt(new(big.Int).MulRange(1, int64(n))))
		if (n-1)%2 == 1 {
			a.Neg(a)
		}
		out = append(out, a)
		// advance: (h0, h1) = (H_n, H_{n+1})
		h2 := sub(mul(mul(bf(2), bc), h1), mul(bint(int64(2*n)), h0))
		h0, h1 = h1, h2
	}
	return out
}

// checkConsts compares the constants computed here with the math package's.
func checkConsts() {
	check := func(name string, got *big.Float, want float64) {
		if f, _ := got.Float64(); f != want {
			panic(fmt.Sprintf("asmgen: constant %s = %v, math has %v", name, f, want))
		}
	}
	check("pi", bigPi(), math.Pi)
	check("ln2", bigLn2(), math.Ln2)
	if f, _ := twoOverSqrtPi().Float64(); math.Abs(f-2/math.SqrtPi) > 3e-16 {
		panic("asmgen: 2/sqrt(pi)")
	}
	check("e^-2", bigExp(bf(-2)), math.Exp(-2))
	for _, c := range []float64{0.3, 1, 2.5, 4} {
		if f, _ := bigErf(bf(c)).Float64(); math.Abs(f-math.Erf(c)) > 2e-16 {
			panic(fmt.Sprintf("asmgen: erf(%v) = %v, math has %v", c, f, math.Erf(c)))
		}
	}
	// the Taylor expansion about 1 evaluated at 1.25 against the series at 1.25
	a := erfTaylor(1, 40)
	s := bf(0)
	for n := len(a) - 1; n >= 0; n-- {
		s = add(mul(s, bf(0.25)), a[n])
	}
	if d, _ := sub(s, bigErf(bf(1.25))).Float64(); math.Abs(d) > 1e-30 {
		panic(fmt.Sprintf("asmgen: erf Taylor about 1 misses erf(1.25) by %g", d))
	}
}
