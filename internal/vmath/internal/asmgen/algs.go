package main

import "math/big"

// params holds what differs between the float32 and float64 versions of an algorithm.
type params struct {
	magic    float64 // 1.5·2^(mantissa bits): adding it rounds to an integer kept in the low bits
	mant     uint    // mantissa bits (52, 23)
	bias     uint64  // exponent bias (1023, 127)
	expLo    float64 // exp's input clamp: below it exp rounds to 0
	expHi    float64 // above it exp overflows
	expDeg   int     // Taylor degree of exp(r), |r| ≤ ln2/2
	tanhMax  float64 // tanh(x) rounds to 1 above it
	tanhDeg  int     // Taylor degree of expm1(r)
	logTerms int     // terms 2/(2n+1) of log's R(s²)
	logOff   uint64  // bits of ≈√½: the mantissa is reduced to [√½, √2)
	minNorm  float64 // smallest normal
	erfSmall int     // terms of erf's Maclaurin series below 0.5
	erfW     float64 // width of each of erf's 8 pieces above 0.5
	erfMax   float64 // erf rounds to 1 above it
	erfDeg   int     // Taylor degree of each piece
}

func paramsOf(f32 bool) params {
	if f32 {
		return params{magic: 0x1.8p23, mant: 23, bias: 127, expLo: -104, expHi: 89, expDeg: 7,
			tanhMax: 10, tanhDeg: 9, logTerms: 4, logOff: 0x3f3504f3, minNorm: 0x1p-126,
			erfSmall: 8, erfW: 0.5, erfMax: 4.4, erfDeg: 11}
	}
	return params{magic: 0x1.8p52, mant: 52, bias: 1023, expLo: -746, expHi: 710, expDeg: 13,
		tanhMax: 22, tanhDeg: 15, logTerms: 10, logOff: 0x3fe6a09e667f3bcd, minNorm: 0x1p-1022,
		erfSmall: 13, erfW: 0.7, erfMax: 6, erfDeg: 22}
}

// ln2Split is ln 2 = hi + lo with hi ln 2 rounded to the dtype.
func ln2Split(b *B) (hi, lo V) {
	l := bigLn2()
	h := b.CB(l)
	return h, b.CB(sub(l, bf(b.nodes[h].f)))
}

// negLn2Split is -ln 2 = hi + lo.
func negLn2Split(b *B) (hi, lo V) {
	l := new(big.Float).Neg(bigLn2())
	h := b.CB(l)
	return h, b.CB(sub(l, bf(b.nodes[h].f)))
}

// reduce writes y = k ln2 + r with k = round(y/ln2) and |r| ≤ ln2/2 (two FMAs with ln 2 in
// two parts); kq is k + magic, whose low bits hold k.
func reduce(b *B, p params, y V) (kq, k, r V) {
	kq = b.FMA(y, b.CB(quo(bf(1), bigLn2())), b.C(p.magic))
	k = b.Sub(kq, b.C(p.magic))
	nhi, nlo := negLn2Split(b)
	r = b.FMA(k, nhi, y)
	r = b.FMA(k, nlo, r)
	return kq, k, r
}

// pow2 is 2^k from kq = k + magic (|k| below the exponent range).
func pow2(b *B, p params, kq V) V {
	return b.Float(b.IAdd(b.Shl(b.Bits(kq), p.mant), b.U(p.bias<<p.mant)))
}

// expCore is exp(x) for any non-NaN x: x clamped to [expLo, expHi], x = k ln2 + r,
// exp(r) by its Taylor polynomial, times 2^k as 2^k1·2^k2 (k1 = round(k/2)) so that both
// factors are normal and the result underflows with a single rounding.
func expCore(b *B, p params, x V) V {
	xc := b.Min(b.Max(x, b.C(p.expLo)), b.C(p.expHi))
	_, k, r := reduce(b, p, xc)
	c := make([]V, p.expDeg+1)
	for i := range c {
		c[i] = b.CB(invFact(i))
	}
	e := b.Horner(r, c)
	k1q := b.FMA(k, b.C(0.5), b.C(p.magic))
	k1 := b.Sub(k1q, b.C(p.magic))
	k2q := b.Add(b.Sub(k, k1), b.C(p.magic))
	return b.Mul(b.Mul(e, pow2(b, p, k1q)), pow2(b, p, k2q))
}

func algExp(f32 bool) *fn {
	b := newB("Exp", f32, "e**x")
	p := paramsOf(f32)
	x := b.In()
	b.Out(b.KeepNaN(x, expCore(b, p, x)))
	return b.fn
}

// algSigmoid is 1/(1+e^-x) as e = e^-|x|, then 1/(1+e) for x ≥ 0 and e/(1+e) for x < 0
// (DivAdd: the sum 1+e kept exactly).
func algSigmoid(f32 bool) *fn {
	b := newB("Sigmoid", f32, "the logistic function 1/(1+e**-x)")
	p := paramsOf(f32)
	x := b.In()
	z := b.Float(b.Or(b.Bits(x), b.signMask())) // -|x|
	e := expCore(b, p, z)
	num := b.Sel(b.LT(x, b.C(0)), e, b.C(1))
	b.Out(b.KeepNaN(x, b.DivAdd(num, e, b.C(1))))
	return b.fn
}

// algTanh is sign(x)·m/(m+2) (DivAdd) with m = expm1(2|x|) = 2^k(1+p) - 1 = 2^k·p + (2^k - 1), p =
// expm1(r) by its Taylor polynomial; |x| is clamped to tanhMax (tanh rounds to 1 there).
func algTanh(f32 bool) *fn {
	b := newB("Tanh", f32, "the hyperbolic tangent of x")
	p := paramsOf(f32)
	x := b.In()
	a := b.Min(b.Abs(x), b.C(p.tanhMax))
	kq, _, r := reduce(b, p, b.Add(a, a))
	c := make([]V, p.tanhDeg-1) // 1/2!, 1/3!, ...
	for i := range c {
		c[i] = b.CB(invFact(i + 2))
	}
	q := b.Horner(r, c)
	pm := b.FMA(b.Mul(r, r), q, r)
	s := pow2(b, p, kq)
	m := b.FMA(s, pm, b.Sub(s, b.C(1)))
	t := b.DivAdd(m, m, b.C(2))
	b.Out(b.KeepNaN(x, b.CopySignOf(t, x)))
	return b.fn
}

// algLog follows the classic reduction x = 2^k·z, z in [√½, √2), f = z-1, s = f/(2+f),
// log(1+f) = f - f²/2 + s(f²/2 + R(s²)) with R the series Σ 2s^(2n)/(2n+1); subnormal x are
// first scaled by 2^mant.
func algLog(f32 bool) *fn {
	b := newB("Log", f32, "the natural logarithm of x")
	p := paramsOf(f32)
	x := b.In()
	w := b.bits()
	sub := b.LT(x, b.C(p.minNorm))
	xs := b.Sel(sub, b.Mul(x, b.C(float64(uint64(1)<<p.mant))), x)
	one := uint64(p.bias) << p.mant
	ix := b.Bits(xs)
	tmp := b.IAdd(ix, b.U(one-p.logOff))
	kb := b.Shr(tmp, p.mant)
	hiMask := (uint64(1)<<(w-p.mant) - 1) << p.mant
	z := b.Float(b.IAdd(b.ISub(ix, b.And(tmp, b.U(hiMask))), b.U(one)))
	// k = kb - bias (- mant when scaled), kb read as a float through the magic 2^mant.
	two := float64(uint64(1) << p.mant)
	kf := b.Float(b.Or(kb, b.Bits(b.C(two))))
	k := b.Sub(kf, b.Sel(sub, b.C(two+float64(p.bias)+float64(p.mant)), b.C(two+float64(p.bias))))
	f := b.Sub(z, b.C(1))
	s := b.Div(f, b.Add(f, b.C(2)))
	z2 := b.Mul(s, s)
	c := make([]V, p.logTerms)
	for i := range c {
		c[i] = b.CB(quo(bf(2), bint(int64(2*i+3))))
	}
	r := b.Mul(z2, b.Horner(z2, c))
	hfsq := b.Mul(b.Mul(f, f), b.C(0.5))
	hi, lo := ln2Split(b)
	v := b.FMA(s, b.Add(hfsq, r), b.Mul(k, lo))
	y := b.Sub(f, b.Sub(hfsq, v))
	res := b.FMA(k, hi, y)
	inf := b.C(posInf)
	res = b.Sel(b.EQ(x, b.C(0)), b.C(negInf), res)
	res = b.Sel(b.LT(x, b.C(0)), b.C(nan), res)
	res = b.Sel(b.NotLT(x, inf), x, res) // NaN and +Inf are returned as they are
	b.Out(res)
	return b.fn
}

// algErf: below 0.5 the odd Maclaurin series |x|·P(x²); above, one of 8 Taylor polynomials
// (about the centres of pieces erfW wide from 0.5, |x| clamped to erfMax) picked per lane
// by a table lookup; the sign of x is copied on.
func algErf(f32 bool) *fn {
	b := newB("Erf", f32, "the error function of x")
	p := paramsOf(f32)
	x := b.In()
	a := b.Abs(x)
	// small: a + a·(P(a²) - 1), the rounding of P's leading 2/√π kept out of the result
	cs := make([]V, p.erfSmall)
	for i := range cs {
		c := erfSeries(i)
		if i == 0 {
			c = sub(c, bf(1))
		}
		cs[i] = b.CB(c)
	}
	small := b.FMA(a, b.Horner(b.Mul(a, a), cs), a)
	// pieces
	ap := b.Min(b.Max(a, b.C(0.5)), b.C(p.erfMax))
	inv := 1 / p.erfW
	off := 0.5/p.erfW + 0.5
	t := b.Max(b.FMA(ap, b.C(inv), b.C(-off)), b.C(0))
	idx := b.And(b.Bits(b.Add(t, b.C(p.magic))), b.U(7))
	centres := make([]float64, 8)
	coef := make([][]float64, p.erfDeg+1) // coef[n][piece]
	for i := range coef {
		coef[i] = make([]float64, 8)
	}
	for j := range centres {
		c := 0.5 + (float64(j)+0.5)*p.erfW
		if f32 {
			c = float64(float32(c))
		}
		centres[j] = c
		for n, a := range erfTaylor(c, p.erfDeg) {
			if f32 {
				f, _ := a.Float32()
				coef[n][j] = float64(f)
			} else {
				coef[n][j], _ = a.Float64()
			}
		}
	}
	d := b.Sub(ap, b.Lookup(idx, centres))
	pp := b.Lookup(idx, coef[p.erfDeg])
	for n := p.erfDeg - 1; n >= 0; n-- {
		pp = b.FMA(pp, d, b.Lookup(idx, coef[n]))
	}
	r := b.Sel(b.LT(a, b.C(0.5)), small, pp)
	b.Out(b.KeepNaN(x, b.CopySignOf(r, x)))
	return b.fn
}
