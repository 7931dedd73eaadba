#version 450
// dst[m,n] = op(A)[m,k] * op(B)[k,n], op = transpose when the flag is set:
// A is stored [m,k] (or [k,m] when TRANS_A), B is stored [k,n] (or [n,k] when TRANS_B);
// the flags are specialization constants.
// 16x16 output tiles through shared memory. One dispatch covers the tiles from tile0 on
// (workgroups stride over them) and the products with l in [k0, k1); with accumulate set it
// adds to dst instead of overwriting it, so the host can split long k ranges and many tiles
// into several dispatches (see common.glsl on lavapipe's loop limit).
#include "common.glsl"
layout(local_size_x = 16, local_size_y = 16) in;
layout(std430, binding = 0) buffer Dst { T dst[]; };
layout(std430, binding = 1) readonly buffer A { T a[]; };
layout(std430, binding = 2) readonly buffer B { T b[]; };
layout(push_constant) uniform P {
	uint m; uint k; uint n; uint tile0; uint tile1; uint k0; uint k1; uint accumulate;
} p;
layout(constant_id = 0) const uint TRANS_A = 0u;
layout(constant_id = 1) const uint TRANS_B = 0u;

shared T As[16][16];
shared T Bs[16][16];

void main() {
	uint tilesN = (p.n + 15u) / 16u;
	uint tx = gl_LocalInvocationID.x;
	uint ty = gl_LocalInvocationID.y;
	for (uint t = p.tile0 + gl_WorkGroupID.x; t < p.tile1; t += gl_NumWorkGroups.x) {
		uint row = (t / tilesN) * 16u + ty;
		uint col = (t % tilesN) * 16u + tx;
		T acc = T(0);
		for (uint l0 = p.k0; l0 < p.k1; l0 += 16u) {
			uint la = l0 + tx;
			T va = T(0);
			if (row < p.m && la < p.k1) {
				va = TRANS_A != 0u ? a[la * p.m + row] : a[row * p.k + la];
			}
			As[ty][tx] = va;
			uint lb = l0 + ty;
			T vb = T(0);
			if (lb < p.k1 && col < p.n) {
				vb = TRANS_B != 0u ? b[col * p.k + lb] : b[lb * p.n + col];
			}
			Bs[ty][tx] = vb;
			barrier();
			for (uint q = 0u; q < 16u; q++) {
				acc += As[ty][q] * Bs[q][tx];
			}
			barrier();
		}
		if (row < p.m && col < p.n) {
			uint o = row * p.n + col;
			dst[o] = p.accumulate != 0u ? dst[o] + acc : acc;
		}
	}
}
