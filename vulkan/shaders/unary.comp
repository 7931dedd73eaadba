#version 450
// dst[i] = op(src[i]). The op is a specialization constant (codes in vulkan/api.go,
// unaryCode), so each op compiles to its own pipeline without a per-element switch.
#include "common.glsl"
layout(local_size_x = 256) in;
layout(std430, binding = 0) writeonly buffer Dst { T dst[]; };
layout(std430, binding = 1) readonly buffer Src { T src[]; };
layout(push_constant) uniform P { uint n; } p;
layout(constant_id = 0) const uint OP = 0u;

T nanT() {
#ifdef F64
	return packDouble2x32(uvec2(0u, 0x7ff80000u));
#else
	return uintBitsToFloat(0x7fc00000u);
#endif
}

T infT() {
#ifdef F64
	return packDouble2x32(uvec2(0u, 0x7ff00000u));
#else
	return uintBitsToFloat(0x7f800000u);
#endif
}

#ifndef F64
// expG is exp with Cody-Waite range reduction: x = n*ln2 + r, |r| <= ln2/2, exp(x) =
// 2^n * exp(r). The builtin's error grows with |x| (Vulkan allows 3 + 2|x| ulp); this keeps
// it near the builtin's error at small arguments.
float expG(float x) {
	if (x > 88.72284) {
		return infT();
	}
	if (x < -103.97208) {
		return 0.0;
	}
	float n = floor(x * 1.44269504 + 0.5);
	precise float r = x - n * 0.693145752; // ln2 high part (16 significant bits): n*hi is exact
	r = r - n * 1.42860677e-06;            // ln2 low part
	int e = int(n);
	if (e < -125) {
		// a subnormal result: scale by a multiplication, which rounds once (ldexp may flush)
		return ldexp(exp(r), e + 64) * 5.42101086e-20; // 2^-64
	}
	// Split the scaling so that neither factor overflows prematurely.
	return ldexp(ldexp(exp(r), e / 2), e - e / 2);
}

// tanhG avoids the cancellation of (e^2x - 1)/(e^2x + 1) near 0 with the Taylor series there;
// below 2^-12 tanh x rounds to x (which keeps -0 and subnormals).
float tanhG(float x) {
	float a = abs(x);
	if (a < 0.000244140625 || isnan(x)) {
		return x;
	}
	if (a < 0.25) {
		float x2 = x * x;
		return x + x * x2 * (-1.0 / 3.0 + x2 * (2.0 / 15.0 + x2 * (-17.0 / 315.0 + x2 * (62.0 / 2835.0))));
	}
	if (a > 20.0) {
		return sign(x);
	}
	return sign(x) * (1.0 - 2.0 / (expG(2.0 * a) + 1.0));
}

// log1pG is log(1+x), accurate for small x: for |x| < 0.5 it sums the series of
// 2 atanh(s), s = x/(2+x), |s| < 1/3, instead of calling log near 1 (whose Vulkan precision is
// absolute, not relative).
float log1pG(float x) {
	if (x < -1.0) {
		return nanT();
	}
	if (x == -1.0) {
		return -infT();
	}
	if (abs(x) < 5.96046448e-08 || isnan(x)) {
		return x; // log1p x rounds to x below 2^-24 (keeps -0 and subnormals)
	}
	if (abs(x) >= 0.5) {
		return log(1.0 + x);
	}
	float s = x / (2.0 + x);
	float s2 = s * s;
	float poly = 1.0 + s2 * (1.0 / 3.0 + s2 * (1.0 / 5.0 + s2 * (1.0 / 7.0 + s2 * (1.0 / 9.0 +
		s2 * (1.0 / 11.0 + s2 * (1.0 / 13.0 + s2 * (1.0 / 15.0 + s2 * (1.0 / 17.0))))))));
	return 2.0 * s * poly;
}

// expm1G is exp(x)-1, accurate for small x: the Taylor series for |x| < 1 (expG(x) - 1 loses
// up to 5 ulp to the subtraction at 0.65).
float expm1G(float x) {
	if (abs(x) < 5.96046448e-08 || isnan(x)) {
		return x; // expm1 x rounds to x below 2^-24 (keeps -0 and subnormals)
	}
	if (abs(x) >= 1.0) {
		return expG(x) - 1.0;
	}
	float r = 1.0 + x / 13.0;
	r = 1.0 + x / 12.0 * r;
	r = 1.0 + x / 11.0 * r;
	r = 1.0 + x / 10.0 * r;
	r = 1.0 + x / 9.0 * r;
	r = 1.0 + x / 8.0 * r;
	r = 1.0 + x / 7.0 * r;
	r = 1.0 + x / 6.0 * r;
	r = 1.0 + x / 5.0 * r;
	r = 1.0 + x / 4.0 * r;
	r = 1.0 + x / 3.0 * r;
	r = 1.0 + x / 2.0 * r;
	return x * r;
}

// logG is log with Go's special values (log of a negative number is NaN, log(±0) = -Inf),
// subnormal arguments scaled into the normal range first (lavapipe's log reads them as
// 2^-127), and log1pG near 1.
float logG(float x) {
	if (x < 0.0) {
		return nanT();
	}
	if (x == 0.0) {
		return -infT();
	}
	if (x < 1.17549435e-38) {
		return log(x * 16777216.0) - 16.6355323; // log 2^24 = 16.63553233...
	}
	if (abs(x - 1.0) < 0.5) {
		return log1pG(x - 1.0); // x - 1 is exact; the builtin's error near 1 is absolute
	}
	return log(x);
}

#include "trig.glsl"
#endif

// signG is -1, 0 or 1 by the sign of x, with ±0 and NaN returned unchanged (as core's sign;
// GLSL's sign gives +0 for -0 and is undefined for NaN).
T signG(T x) {
	return x > T(0) ? T(1) : (x < T(0) ? T(-1) : x);
}

T apply(T x) {
	switch (OP) {
	case 0u: return -x;
	case 1u: return abs(x);
	case 2u: return signG(x);
	case 3u: return floor(x);
	case 4u: return ceil(x);
#ifdef EXACT
	// Through double, whose division and square root the devices round correctly (a
	// double result rounded to float is then the correctly rounded float: 53 >= 2*24 + 2);
	// Vulkan lets float division be 2.5 ulp off, and GPUs use that.
	case 5u: return float(1.0lf / double(x));
	case 6u: return x < T(0) ? nanT() : float(sqrt(double(x)));
#else
	case 5u: return T(1) / x;
	case 6u: return x < T(0) ? nanT() : sqrt(x);
#endif
#ifndef F64
	case 7u: return expG(x);
	case 8u: return logG(x);
	case 9u: return trigG(x, 0u);
	case 10u: return trigG(x, 1u);
	case 11u: return trigG(x, 2u);
	case 12u: return tanhG(x);
	case 13u: return x < T(-88) ? expG(x) : T(1) / (T(1) + expG(-x)); // 1 + e^x rounds to 1 there
	case 14u: return log1pG(x);
	case 15u: return expm1G(x);
#endif
	}
	return nanT();
}

void main() {
	uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
	for (uint i = gl_GlobalInvocationID.x; i < p.n; i += stride) {
		dst[i] = apply(src[i]);
	}
}
