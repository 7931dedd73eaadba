#version 450
// src viewed as [outer, n, inner], the axis cut into S = ceil(n/seg) segments as in
// sum_thread.comp; dst[(a*S + s)*inner + b] = the smallest j in segment s maximising
// src[(a*n + j)*inner + b] (first maximum wins, NaN skipped, as in bulkad's core evaluator);
// a segment of NaNs only gives 0 when it is the whole axis and -1 (for the host's combining
// step) otherwise. One invocation per output element.
#include "common.glsl"
layout(local_size_x = 256) in;
layout(std430, binding = 0) writeonly buffer Dst { int dst[]; };
layout(std430, binding = 1) readonly buffer Src { T src[]; };
layout(push_constant) uniform P { uint outer; uint n; uint inner; uint seg; } p;

const uint NONE = 0xffffffffu;

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
		T best = T(0);
		uint arg = NONE;
		for (uint j = j0; j < j1; j++) {
			T v = src[base + j * p.inner];
			if (!isnan(v) && (arg == NONE || v > best)) {
				best = v;
				arg = j;
			}
		}
		dst[o] = arg != NONE ? int(arg) : (segs == 1u ? 0 : -1);
	}
}
