#version 450
// Same contract as sum_thread.comp, one workgroup per output element: the 256 invocations
// stride over the segment, then reduce in shared memory (good for long axes).
#include "common.glsl"
layout(local_size_x = 256) in;
layout(std430, binding = 0) writeonly buffer Dst { T dst[]; };
layout(std430, binding = 1) readonly buffer Src { T src[]; };
layout(push_constant) uniform P { uint outer; uint n; uint inner; uint seg; } p;

shared T part[256];

void main() {
	uint segs = (p.n + p.seg - 1u) / p.seg;
	uint outs = p.outer * segs * p.inner;
	uint lid = gl_LocalInvocationID.x;
	for (uint o = gl_WorkGroupID.x; o < outs; o += gl_NumWorkGroups.x) {
		uint a = o / (segs * p.inner);
		uint r = o - a * segs * p.inner;
		uint s = r / p.inner;
		uint b = r - s * p.inner;
		uint base = a * p.n * p.inner + b;
		uint j1 = min(p.n, (s + 1u) * p.seg);
		precise T acc = T(0);
		precise T comp = T(0);
		for (uint j = s * p.seg + lid; j < j1; j += 256u) {
			precise T y = src[base + j * p.inner] - comp;
			precise T t = acc + y;
			comp = (t - acc) - y;
			acc = t;
		}
		part[lid] = acc;
		barrier();
		for (uint h = 128u; h > 0u; h >>= 1) {
			if (lid < h) {
				part[lid] += part[lid + h];
			}
			barrier();
		}
		if (lid == 0u) {
			dst[o] = part[0];
		}
		barrier();
	}
}
