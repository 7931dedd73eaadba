#version 450
// Word-level gather (float32 = 1 word, float64 = 2 words, folded into block):
// dst[i*block + r] = 0 <= idx[i] < srcBlocks ? src[idx[i]*block + r] : 0.
layout(local_size_x = 256) in;
layout(std430, binding = 0) writeonly buffer Dst { uint dst[]; };
layout(std430, binding = 1) readonly buffer Src { uint src[]; };
layout(std430, binding = 2) readonly buffer Idx { int idx[]; };
layout(push_constant) uniform P { uint n; uint block; uint srcBlocks; } p;

void main() {
	uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
	for (uint e = gl_GlobalInvocationID.x; e < p.n; e += stride) {
		uint i = e / p.block;
		int id = idx[i];
		uint v = 0u;
		if (id >= 0 && uint(id) < p.srcBlocks) {
			v = src[uint(id) * p.block + (e - i * p.block)];
		}
		dst[e] = v;
	}
}
