#version 450
// src viewed as [outer, n, inner], the axis cut into S = ceil(n/seg) segments as in
// sum_thread.comp; dst[(a*S + s)*inner + b] = the smallest j in segment s maximising
// src[(a*n + j)*inner + b] (first maximum wins). One invocation per output element.
#include "common.glsl"
layout(local_size_x = 256) in;
layout(std430, binding = 0) writeonly buffer Dst { int dst[]; };
layout(std430, binding = 1) readonly buffer Src { T src[]; };
layout(push_constant) uniform P { uint outer; uint n; uint inner; uint seg; } p;

void main() {
	uint segs = (p.n + p.seg - 1u) / p.seg;
	uint outs = p.outer * segs * p.inner;
	uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
	for (uint o = gl_GlobalInvocationID.x; o < outs; o += stride) {
		uint a = o / (segs * p.inner);
		uint r = o - a * segs * p.inner;
		uint s = r / p.inner;
		uint b = r - s * p.inner;
		uint base = a * p.n * p.inner + b;
		uint j0 = s * p.seg;
		uint j1 = min(p.n, j0 + p.seg);
		T best = src[base + j0 * p.inner];
		uint arg = j0;
		for (uint j = j0 + 1u; j < j1; j++) {
			T v = src[base + j * p.inner];
			if (v > best) {
				best = v;
				arg = j;
			}
		}
		dst[o] = int(arg);
	}
}
