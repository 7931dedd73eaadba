#version 450
// Block j of dst (block elements) gets block i of src added, for 0 <= j < blocks (others are
// dropped). AFFINE = 0: j = idx[i] (an index table); AFFINE = 1: i is decomposed row-major over
// dom[0..rank) and j = base + Σ c_k·st[k]. Accumulation is atomic: with -DATOMIC_FLOAT a float32 atomicAdd (VK_EXT_shader_atomic_float),
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
layout(push_constant) uniform P {
	uint n; uint block; uint blocks; int base; uint rank;
	uint dom[6]; int st[6];
} p;
layout(constant_id = 0) const uint AFFINE = 0u;

int target(uint i) {
	if (AFFINE == 0u) {
		return idx[i];
	}
	int j = p.base;
	uint r = i;
	for (int d = int(p.rank) - 1; d >= 0; d--) {
		uint c = r % p.dom[d];
		r /= p.dom[d];
		j += int(c) * p.st[d];
	}
	return j;
}

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
		int j = target(i);
		if (j >= 0 && uint(j) < p.blocks) {
			add(uint(j) * p.block + (e - i * p.block), src[e]);
		}
	}
}
