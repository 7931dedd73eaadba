#version 450
// dst[idx[i]*block + r] += src[i*block + r] for 0 <= idx[i] < dstBlocks (others dropped).
// Accumulation is atomic: with -DATOMIC_FLOAT a float32 atomicAdd (VK_EXT_shader_atomic_float),
// otherwise a compare-and-swap loop on the bit pattern (uint for float32, uint64 for float64).
#ifdef F64
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
#extension GL_EXT_shader_atomic_int64 : require
#endif
#ifdef ATOMIC_FLOAT
#extension GL_EXT_shader_atomic_float : require
#endif
#include "common.glsl"
layout(local_size_x = 256) in;
#if defined(ATOMIC_FLOAT)
layout(std430, binding = 0) buffer Dst { float dst[]; };
#elif defined(F64)
layout(std430, binding = 0) buffer Dst { uint64_t dst[]; };
#else
layout(std430, binding = 0) buffer Dst { uint dst[]; };
#endif
layout(std430, binding = 1) readonly buffer Src { T src[]; };
layout(std430, binding = 2) readonly buffer Idx { int idx[]; };
layout(push_constant) uniform P { uint n; uint block; uint dstBlocks; } p;

void add(uint j, T v) {
#if defined(ATOMIC_FLOAT)
	atomicAdd(dst[j], v);
#elif defined(F64)
	uint64_t old = dst[j];
	for (;;) {
		uint64_t want = doubleBitsToUint64(uint64BitsToDouble(old) + v);
		uint64_t seen = atomicCompSwap(dst[j], old, want);
		if (seen == old) {
			break;
		}
		old = seen;
	}
#else
	uint old = dst[j];
	for (;;) {
		uint want = floatBitsToUint(uintBitsToFloat(old) + v);
		uint seen = atomicCompSwap(dst[j], old, want);
		if (seen == old) {
			break;
		}
		old = seen;
	}
#endif
}

void main() {
	uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
	for (uint e = gl_GlobalInvocationID.x; e < p.n; e += stride) {
		uint i = e / p.block;
		int id = idx[i];
		if (id >= 0 && uint(id) < p.dstBlocks) {
			add(uint(id) * p.block + (e - i * p.block), src[e]);
		}
	}
}
