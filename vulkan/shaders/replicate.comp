#version 450
// Word-level replicate: dst[e] = src[e % nSrc] (float64 counts two words per element).
layout(local_size_x = 256) in;
layout(std430, binding = 0) writeonly buffer Dst { uint dst[]; };
layout(std430, binding = 1) readonly buffer Src { uint src[]; };
layout(push_constant) uniform P { uint n; uint nSrc; } p;

void main() {
	uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
	for (uint e = gl_GlobalInvocationID.x; e < p.n; e += stride) {
		dst[e] = src[e % p.nSrc];
	}
}
