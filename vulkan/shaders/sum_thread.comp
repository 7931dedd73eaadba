#version 450
// src viewed as [outer, n, inner]; the axis n is cut into S = ceil(n/seg) segments and
// dst[(a*S + s)*inner + b] = sum of src[(a*n + j)*inner + b] for j in segment s
// (S = 1 when seg >= n: the plain sum over the axis). One invocation per output element.
#include "common.glsl"
layout(local_size_x = 256) in;
layout(std430, binding = 0) writeonly buffer Dst { T dst[]; };
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
		uint j1 = min(p.n, (s + 1u) * p.seg);
		// Kahan-compensated: the error stays O(eps) whatever the segment length.
		precise T acc = T(0);
		precise T comp = T(0);
		for (uint j = s * p.seg; j < j1; j++) {
			precise T y = src[base + j * p.inner] - comp;
			precise T t = acc + y;
			comp = (t - acc) - y;
			acc = t;
		}
		dst[o] = acc;
	}
}
