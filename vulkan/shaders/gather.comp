#version 450
// Word-level gather (float32 = 1 word, float64 = 2 words, folded into block): block i of dst
// (block words each) is block j of src, or zeros when j is outside [0, blocks).
// AFFINE = 0: j = idx[i] (an index table).
// AFFINE = 1: i is decomposed row-major over dom[0..rank) and j = base + Σ c_k·st[k].
layout(local_size_x = 256) in;
layout(std430, binding = 0) writeonly buffer Dst { uint dst[]; };
layout(std430, binding = 1) readonly buffer Src { uint src[]; };
layout(std430, binding = 2) readonly buffer Idx { int idx[]; };
layout(push_constant) uniform P {
	uint n; uint block; uint blocks; int base; uint rank;
	uint dom[6]; int st[6];
} p;
layout(constant_id = 0) const uint AFFINE = 0u;

int source(uint i) {
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

void main() {
	uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
	for (uint e = gl_GlobalInvocationID.x; e < p.n; e += stride) {
		uint i = e / p.block;
		int j = source(i);
		uint v = 0u;
		if (j >= 0 && uint(j) < p.blocks) {
			v = src[uint(j) * p.block + (e - i * p.block)];
		}
		dst[e] = v;
	}
}
