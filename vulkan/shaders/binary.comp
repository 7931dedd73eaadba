#version 450
// dst[i] = x[i*xs] op y[i*ys], xs and ys are 1 (full operand) or 0 (a broadcast scalar).
// Op codes match vulkan/kernels.go (binaryOps).
#include "common.glsl"
layout(local_size_x = 256) in;
layout(std430, binding = 0) writeonly buffer Dst { T dst[]; };
layout(std430, binding = 1) readonly buffer X { T x[]; };
layout(std430, binding = 2) readonly buffer Y { T y[]; };
layout(push_constant) uniform P { uint n; uint op; uint xs; uint ys; } p;

#ifndef F64
// powG follows Go's math.Pow on the cases GLSL's pow leaves undefined (x <= 0, y = 0, x = 1).
float powG(float a, float b) {
	if (b == 0.0 || a == 1.0) {
		return 1.0;
	}
	if (a > 0.0) {
		return pow(a, b);
	}
	bool integer = floor(b) == b;
	bool odd = integer && abs(b) < 16777216.0 && fract(b * 0.5) != 0.0;
	if (a == 0.0) {
		if (b < 0.0) {
			return odd ? (1.0 / a) : uintBitsToFloat(0x7f800000u);
		}
		return odd ? a : 0.0;
	}
	if (!integer) {
		return uintBitsToFloat(0x7fc00000u);
	}
	float r = pow(-a, b);
	return odd ? -r : r;
}
#endif

T apply(T a, T b) {
	switch (p.op) {
	case 0u: return a + b;
	case 1u: return a - b;
	case 2u: return a * b;
	case 3u: return a / b;
	case 4u: return max(a, b);
	case 5u: return min(a, b);
#ifndef F64
	case 6u: return powG(a, b);
#endif
	}
	return a;
}

void main() {
	uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
	for (uint i = gl_GlobalInvocationID.x; i < p.n; i += stride) {
		dst[i] = apply(x[i * p.xs], y[i * p.ys]);
	}
}
