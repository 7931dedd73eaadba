#version 450
// The contract of matmul.comp without shared memory or barriers: one invocation per output
// element (outputs o0 <= o < o1 of this dispatch, grid-stride), summing l in [k0, k1).
// Used on CPU devices (lavapipe), where workgroup barriers are expensive and the invocations
// of a workgroup run as SIMD lanes anyway.
#include "common.glsl"
layout(local_size_x = 256) in;
layout(std430, binding = 0) buffer Dst { T dst[]; };
layout(std430, binding = 1) readonly buffer A { T a[]; };
layout(std430, binding = 2) readonly buffer B { T b[]; };
layout(push_constant) uniform P {
	uint m; uint k; uint n; uint o0; uint o1; uint k0; uint k1; uint accumulate;
} p;
layout(constant_id = 0) const uint TRANS_A = 0u;
layout(constant_id = 1) const uint TRANS_B = 0u;

void main() {
	uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
	for (uint o = p.o0 + gl_GlobalInvocationID.x; o < p.o1; o += stride) {
		uint row = o / p.n;
		uint col = o - row * p.n;
		T acc = T(0);
		uint l = p.k0;
		// Sixteen products per loop iteration: fewer trips through llvmpipe's loop machinery.
		for (; l + 16u <= p.k1; l += 16u) {
			for (uint q = 0u; q < 16u; q++) {
				T va = TRANS_A != 0u ? a[(l + q) * p.m + row] : a[row * p.k + l + q];
				T vb = TRANS_B != 0u ? b[col * p.k + l + q] : b[(l + q) * p.n + col];
				acc += va * vb;
			}
		}
		for (; l < p.k1; l++) {
			T va = TRANS_A != 0u ? a[l * p.m + row] : a[row * p.k + l];
			T vb = TRANS_B != 0u ? b[col * p.k + l] : b[l * p.n + col];
			acc += va * vb;
		}
		dst[o] = p.accumulate != 0u ? dst[o] + acc : acc;
	}
}
