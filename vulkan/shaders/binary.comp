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
// powPos is a^b for finite a > 0 and finite b, as 2^(b·log2 a): a subnormal a is scaled into
// the normal range before log2 (lavapipe reads subnormals as 2^-127), the product b·log2 a
// is kept in two floats (its rounding error would be amplified by exp2), and a subnormal
// result is scaled down by a multiplication (which rounds once; ldexp may flush it).
float powPos(float a, float b) {
	float l = a < 1.17549435e-38 ? log2(a * 16777216.0) - 24.0 : log2(a);
	precise float t = b * l;
	precise float tl = fma(b, l, -t);
	if (t >= 128.0) {
		return uintBitsToFloat(0x7f800000u);
	}
	if (t < -151.0) {
		return 0.0;
	}
	float n = floor(t);
	precise float f = (t - n) + tl; // t - n is exact
	int e = int(n);
	float v = exp2(f);
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
	float r = powPos(abs(a), b);
	return a < 0.0 && odd ? -r : r;
}
#endif

T maxG(T a, T b) {
	if (isnan(a) || isnan(b)) {
		return a + b;
	}
	if (a == b) {
		return a == T(0) ? a + b : a; // -0 + +0 = +0
	}
	return a > b ? a : b;
}

T minG(T a, T b) {
	if (isnan(a) || isnan(b)) {
		return a + b;
	}
	if (a == b) {
		return a == T(0) ? -((-a) + (-b)) : a; // -(+0 + -0) = -0
	}
	return a < b ? a : b;
}

T apply(T a, T b) {
	switch (OP) {
	case 0u: return a + b;
	case 1u: return a - b;
	case 2u: return a * b;
	case 3u: return a / b;
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
