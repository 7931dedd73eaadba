#version 450
// Same contract as argmax_thread.comp, one workgroup per output element with a shared-memory
// reduction that keeps the smallest index among equal maxima.
#include "common.glsl"
layout(local_size_x = 256) in;
layout(std430, binding = 0) writeonly buffer Dst { int dst[]; };
layout(std430, binding = 1) readonly buffer Src { T src[]; };
layout(push_constant) uniform P { uint outer; uint n; uint inner; uint seg; } p;

shared T bestV[256];
shared uint bestI[256];

const uint NONE = 0xffffffffu;

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
		T best = T(0);
		uint arg = NONE;
		for (uint j = s * p.seg + lid; j < j1; j += 256u) {
			T v = src[base + j * p.inner];
			if (!isnan(v) && (arg == NONE || v > best)) {
				best = v;
				arg = j;
			}
		}
		bestV[lid] = best;
		bestI[lid] = arg;
		barrier();
		for (uint h = 128u; h > 0u; h >>= 1) {
			if (lid < h) {
				uint oi = bestI[lid + h];
				uint mi = bestI[lid];
				T ov = bestV[lid + h];
				T mv = bestV[lid];
				if (oi != NONE && (mi == NONE || ov > mv || (ov == mv && oi < mi))) {
					bestV[lid] = ov;
					bestI[lid] = oi;
				}
			}
			barrier();
		}
		if (lid == 0u) {
			dst[o] = bestI[0] != NONE ? int(bestI[0]) : (segs == 1u ? 0 : -1);
		}
		barrier();
	}
}
