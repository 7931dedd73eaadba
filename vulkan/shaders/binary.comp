#version 450
// dst[i] = x[xi] op y[yi]. Specialization constants: OP (codes in vulkan/api.go, binaryCode)
// and MODE: 0 full operands (xi = yi = i); 1 cyclic operands, xi = i % lx, yi = i % ly (a
// broadcast scalar has length 1); 2 strided, i is decomposed row-major over shape (rank 1..4)
// and xi, yi are the dot products of that multi-index with the operands' strides (0 along
// broadcast dimensions). max and min return NaN when an operand is NaN and order +0 above -0,
// as bulkad's core evaluator does.
#include "common.glsl"
layout(local_size_x = 256) in;
layout(std430, binding = 0) writeonly buffer Dst { T dst[]; };
layout(std430, binding = 1) readonly buffer X { T x[]; };
layout(std430, binding = 2) readonly buffer Y { T y[]; };
layout(push_constant) uniform P {
	uint n; uint lx; uint ly; uint rank;
	uint shape[4]; uint xs[4]; uint ys[4];
} p;
layout(constant_id = 0) const uint OP = 0u;
layout(constant_id = 1) const uint MODE = 0u;

#ifndef F64
// prodErr is the rounding error of the float product a·b (a·b = p + prodErr exactly, for
// |a|, |b| < 2^100), by Dekker's splitting: fma would do, but lavapipe does not fuse it.
float prodErr(float a, float b, float p) {
	precise float ca = 4097.0 * a;
	precise float ah = ca - (ca - a);
	precise float al = a - ah;
	precise float cb = 4097.0 * b;
	precise float bh = cb - (cb - b);
	precise float bl = b - bh;
	precise float e = ((ah * bh - p) + ah * bl + al * bh) + al * bl;
	return e;
}

// log2FF is log2 a for finite a > 0 as a float-float hi + lo, accurate to about 2^-29
// relatively: a = m·2^k with m in [sqrt(1/2), sqrt(2)) (subnormals scaled first), and
// log2 m = (2/ln2)·atanh(s), s = (m-1)/(m+1), with 2/ln2·s in float-float arithmetic and the
// series' remainder (below 1% of it) in float. exp2 amplifies log2's error by |y|, so the
// builtin log2 (about 2^-24) would cost pow up to 100 ulp.
vec2 log2FF(float a) {
	int k = 0;
	if (a < 1.17549435e-38) {
		a *= 16777216.0;
		k = -24;
	}
	uint bits = floatBitsToUint(a);
	k += int(bits >> 23) - 127;
	float m = uintBitsToFloat((bits & 0x7fffffu) | 0x3f800000u); // [1, 2)
	if (m > 1.41421356) {
		m *= 0.5;
		k += 1;
	}
	precise float num = m - 1.0;            // exact
	precise float u = 1.0 + m;
	precise float ue = m - (u - 1.0);       // 1 + m = u + ue exactly
	precise float sh = num / u;
	precise float sl = ((num - sh * u) - prodErr(sh, u, sh * u) - sh * ue) / u; // num - sh·u is exact
	const float C1 = 2.88539004;            // 2/ln2 = C1 + C2
	const float C2 = 3.85192607e-08;
	precise float ph = sh * C1;
	precise float pl = prodErr(sh, C1, ph) + (sh * C2 + sl * C1);
	float s2 = sh * sh;
	float corr = sh * s2 * C1 * (1.0 / 3.0 + s2 * (1.0 / 5.0 + s2 * (1.0 / 7.0 + s2 * (1.0 / 9.0 +
		s2 * (1.0 / 11.0 + s2 * (1.0 / 13.0))))));
	precise float lh = ph + (pl + corr);
	precise float ll = (ph - lh) + (pl + corr);
	precise float h = float(k) + lh;        // two-sum of k and lh
	precise float hv = h - float(k);
	precise float he = (float(k) - (h - hv)) + (lh - hv);
	return vec2(h, he + ll);
}

// powPos is a^b for finite a > 0 and finite b, as 2^(b·log2 a) with b·log2 a in float-float
// (log2FF), and a subnormal result scaled down by a multiplication (which rounds once;
// ldexp may flush it).
float powPos(float a, float b) {
	vec2 l = log2FF(a);
	precise float t = b * l.x;
	if (t >= 128.0) {
		return uintBitsToFloat(0x7f800000u);
	}
	if (t < -151.0) {
		return 0.0;
	}
	// here |b| < 2^30 (|log2 a| >= 2^-23 for a != 1), so prodErr applies
	precise float tl = prodErr(b, l.x, t) + b * l.y;
	float n = floor(t + 0.5);
	precise float f = (t - n) + tl; // t - n is exact; |f| <= 1/2
	int e = int(n);
	// 2^f = e^z, z = f·ln2 (|z| < 0.35), by its Taylor polynomial (truncation below 2^-29):
	// the builtin exp2 of lavapipe is off by up to 2.6e-6 on [0, 1).
	precise float z = f * 0.693147182 + f * -1.90465421e-09;
	float v = 1.0 + z * (1.0 + z * (0.5 + z * (1.0 / 6.0 + z * (1.0 / 24.0 + z * (1.0 / 120.0 +
		z * (1.0 / 720.0 + z * (1.0 / 5040.0)))))));
	if (e < -125) {
		return ldexp(v, e + 64) * 5.42101086e-20; // 2^-64
	}
	return ldexp(v, e);
}

// powG is Go's math.Pow in float32: its special cases exactly, in its order (x^0 = 1^y = 1,
// x^1 = x, NaN, ±0, infinite y, infinite x, y = ±1/2 as sqrt), then powPos on |x|, negated for
// x < 0 and odd integer y (NaN for x < 0 and y not an integer).
float powG(float a, float b) {
	float inf = uintBitsToFloat(0x7f800000u);
	if (b == 0.0 || a == 1.0) {
		return 1.0;
	}
	if (b == 1.0) {
		return a;
	}
	if (isnan(a) || isnan(b)) {
		return uintBitsToFloat(0x7fc00000u);
	}
	bool integer = floor(b) == b;
	bool odd = integer && abs(b) < 16777216.0 && fract(b * 0.5) != 0.0;
	if (a == 0.0) {
		if (b < 0.0) {
			return odd ? (1.0 / a) : inf;
		}
		return odd ? a : 0.0;
	}
	if (isinf(b)) {
		if (a == -1.0) {
			return 1.0;
		}
		return (abs(a) < 1.0) == (b > 0.0) ? 0.0 : inf;
	}
	if (isinf(a)) {
		float r = b > 0.0 ? inf : 0.0;
		return a < 0.0 && odd ? -r : r; // (-Inf)^b = (-0)^-b
	}
	if (b == 0.5) {
		return sqrt(a); // NaN for a < 0
	}
	if (b == -0.5) {
		return 1.0 / sqrt(a);
	}
	if (a < 0.0 && !integer) {
		return uintBitsToFloat(0x7fc00000u);
	}
	float r = a == -1.0 ? 1.0 : powPos(abs(a), b);
	return a < 0.0 && odd ? -r : r;
}
#endif

// zeroAnd and zeroOr combine two zeros' bits: +0 unless both are -0, and -0 if either is.
// Arithmetic on zeros (-0 + +0 = +0) would do only where the device keeps the signs of zeros,
// which Vulkan leaves to it (NVIDIA's driver drops them without SignedZeroInfNanPreserve).
#ifdef F64
T zeroAnd(T a, T b) { return packDouble2x32(unpackDouble2x32(a) & unpackDouble2x32(b)); }
T zeroOr(T a, T b) { return packDouble2x32(unpackDouble2x32(a) | unpackDouble2x32(b)); }
#else
T zeroAnd(T a, T b) { return uintBitsToFloat(floatBitsToUint(a) & floatBitsToUint(b)); }
T zeroOr(T a, T b) { return uintBitsToFloat(floatBitsToUint(a) | floatBitsToUint(b)); }
#endif

T maxG(T a, T b) {
	if (isnan(a) || isnan(b)) {
		return a + b;
	}
	if (a == b) {
		return a == T(0) ? zeroAnd(a, b) : a; // +0 unless both are -0
	}
	return a > b ? a : b;
}

T minG(T a, T b) {
	if (isnan(a) || isnan(b)) {
		return a + b;
	}
	if (a == b) {
		return a == T(0) ? zeroOr(a, b) : a; // -0 if either is -0
	}
	return a < b ? a : b;
}

T apply(T a, T b) {
	switch (OP) {
	case 0u: return a + b;
	case 1u: return a - b;
	case 2u: return a * b;
#ifdef EXACT
	case 3u: return float(double(a) / double(b)); // correctly rounded: see unary.comp
#else
	case 3u: return a / b;
#endif
	case 4u: return maxG(a, b);
	case 5u: return minG(a, b);
#ifndef F64
	case 6u: return powG(a, b);
#endif
	}
	return a;
}

void main() {
	uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
	for (uint i = gl_GlobalInvocationID.x; i < p.n; i += stride) {
		uint xi = i;
		uint yi = i;
		if (MODE == 1u) {
			xi = i % p.lx;
			yi = i % p.ly;
		} else if (MODE == 2u) {
			xi = 0u;
			yi = 0u;
			uint r = i;
			for (int d = int(p.rank) - 1; d >= 0; d--) {
				uint c = r % p.shape[d];
				r /= p.shape[d];
				xi += c * p.xs[d];
				yi += c * p.ys[d];
			}
		}
		dst[i] = apply(x[xi], y[yi]);
	}
}
