// Package vmath computes exp, log, tanh, sigmoid (1/(1+e^-x)) and erf element-wise over
// slices of float32 and float64 — AVX-512F or AVX2+FMA assembly where the CPU has it — and
// one element at a time with pure-Go functions that return exactly the same bits.
//
// API, for F in Exp, Log, Tanh, Sigmoid, Erf:
//
//	F64(x float64) float64, F32(x float32) float32    the scalar functions (the reference)
//	F64Slice(dst, x []float64) error, F32Slice(…)     dst[i] = F(x[i]); dst may be x
//	F[T](x T) T, FSlice[T](dst, x []T) error          the same, picked by T
//
// # One algorithm, two back ends
//
// Each function is written once, in internal/asmgen (algs.go), as a sequence of IEEE
// operations (add, multiply, divide, FMA, MINPS-style min/max, compares, blends, bit
// operations, an 8-entry table lookup). The generator emits that sequence three times: as avo
// loops over whole AVX2 and AVX-512 vectors (vmath_amd64.s) and as a Go function (scalar_gen.go) that performs
// the same operations in the same order, every product rounded explicitly (so the compiler
// fuses nothing) and every FMA written math.FMA (float64) or fma32 (float32: the product is
// exact in float64, the sum rounded to odd, then to float32, which is the correctly rounded
// fused result). So the slice functions (assembly for whole vectors, the scalar function for
// the tail, or the scalar function alone off amd64 or with -tags purego) agree bit for bit
// with F64/F32 on every platform; tests assert it on all samples, for slice lengths 0..80,
// unaligned starts and in place, and two fuzz targets. NaN results have fixed bits too: a NaN
// input is returned as it is (as the math package does), log of a negative number returns
// the NaN constant math.NaN() (float32: 0x7fc00000).
//
// float32 is computed in float32 throughout (no float64 detour).
//
// # Algorithms
//
//   - exp: x clamped to the range where exp is neither 0 nor +Inf, x = k·ln2 + r (ln 2 in two
//     parts, FMA), e^r by its Taylor polynomial (degree 13 / 7), times 2^k as 2^k1·2^k2 with
//     k1 = round(k/2), so subnormal results are rounded once.
//   - log: x = 2^k·z with z in [√½, √2) (subnormals scaled by 2^52 / 2^23 first), f = z-1,
//     s = f/(2+f), log(1+f) = f - f²/2 + s(f²/2 + R(s²)), R the series Σ 2s^(2n)/(2n+1)
//     (10 / 4 terms).
//   - tanh: sign(x)·m/(m+2), m = expm1(2|x|) = 2^k·p + (2^k-1), p = expm1(r) by Taylor; the
//     division keeps m+2 to twice the precision (TwoSum) and corrects the quotient once.
//   - sigmoid: e = e^-|x| (exp's algorithm), then 1/(1+e) or e/(1+e) by the sign of x, the
//     same corrected division; stable for both signs, 0 below exp's underflow.
//   - erf: below 0.5 the odd Maclaurin series |x| + |x|·(P(x²)-1); above, one of 8 Taylor
//     polynomials about the centres of pieces 0.7 (float64) / 0.5 (float32) wide, degree 22 /
//     11, coefficients chosen per lane by a table lookup (VPERMPS); |x| clamped where erf
//     rounds to 1. All coefficients are computed by the generator from their definitions in
//     math/big (Taylor coefficients, Hermite polynomials for erf's derivatives).
//
// # Speed
//
// On a CPU with AVX-512F the slice functions run an AVX-512 kernel (512-bit vectors, compares
// into opmask registers, blends under them) on the whole 512-bit vectors, then the AVX2
// kernel on a 256-bit vector left, then the scalar function: the same IR, so the same bits.
// Each kernel's main loop computes several vectors an iteration, their instructions
// interleaved, so that the long dependent chains of the polynomials overlap: as many as the
// registers hold (AVX2: exp and tanh three, erf64 one, the others two, within Y0–Y15;
// AVX-512: log and erf two, the others four). BenchmarkVmath, one thread, 65,536 elements, ns
// an element, three builds alternating twice on an AMD EPYC (Zen 4, which runs 512-bit
// operations in two halves), one vector an iteration → AVX2 interleaved → AVX-512:
//
//	exp64  1.40–1.41 → 1.19–1.39 → 1.18–1.19     exp32  0.49–0.50 → 0.43–0.54 → 0.46
//	log64  1.72–1.82 → 1.63–1.74 → 1.34–1.35     log32  0.60–0.68 → 0.51–0.58 → 0.49–0.50
//	tanh64 2.42–2.75 → 1.78–1.81 → 1.27–1.29     tanh32 0.92–1.06 → 0.66–0.72 → 0.49–0.50
//	sigm64 2.46–2.65 → 2.05–2.22 → 1.32–1.49     sigm32 0.97–1.06 → 0.76–0.83 → 0.56–0.63
//	erf64  4.67–4.99 → 4.76–4.83 → 2.05–2.08     erf32  0.92–0.96 → 0.83–0.90 → 0.63–0.71
//
// (math.Exp 9–13, math.Tanh 12–18 ns an element.)
//
// # Accuracy (measured, and asserted by the tests)
//
// Largest error in ulps (distance in representable values, subnormals counted) over every
// 2^44-th float64 bit pattern and every 2^12-th float32 bit pattern, both signs, the special
// values and boundaries, and 20 000–50 000 random values in each of several ranges:
//
//	            float64 vs math     float32 vs float32(math.F(float64(x)))
//	Exp         2 (see below)       1
//	Log         1                   1
//	Tanh        2                   1
//	Sigmoid     1 (vs math/big)     1 (vs math/big rounded to float32)
//	Erf         1                   1
//
// The float64 references are not correctly rounded themselves: at x = -0.36140729648205394
// math.Exp is 1 ulp above e^x (mpmath: 0x1.64b53b03aee45p-1, math.Exp ...46p-1, Exp64
// ...44p-1), so 2 ulp against math is 1 ulp against the exact value there. Tanh64 is 2 ulp
// from the correctly rounded result too (at -0.21069475833190635, checked with mpmath: m's
// relative error grows where m crosses 0.5); only these worst points were checked against
// the exact value.
//
// Special values are exact, as in math: ±0 (tanh, erf keep the sign; exp(±0) = 1, log(±0) =
// -Inf, sigmoid(±0) = 0.5), ±Inf (exp: +Inf, 0; log(+Inf) = +Inf, log(-Inf) = NaN; tanh,
// erf: ±1; sigmoid: 1, 0), NaN, subnormal inputs and outputs, overflow to +Inf and underflow
// to 0 at math's boundaries. Deviations, both from bugs in math on amd64 (its assembly
// Exp and Log): math.Exp returns +Inf for the last few x below ln(MaxFloat64) (x =
// 709.782712893384 has e^x = 1.7976931348622732e308, which Exp64 returns), and math.Log is
// wrong for subnormal x (math.Log(5e-324) = -709.09; Log64 returns -744.44007192138126); the
// tests compare with math/big there.
package vmath
