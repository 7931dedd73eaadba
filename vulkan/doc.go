// Package vulkan runs bulkad's hot array kernels as Vulkan compute shaders, without cgo.
//
// The Vulkan loader (libvulkan.so.1) is opened at run time through github.com/ebitengine/purego,
// once per process; a binary that imports this package builds with CGO_ENABLED=0 and runs on
// machines without Vulkan, where Open returns an error and callers stay on their CPU kernels.
// Builds for platforms purego does not cover, or with the build tag novulkan, get a stub whose
// Open always fails.
//
// A Device is one logical device on the best physical device (discrete GPU, then integrated,
// then virtual, then CPU implementations such as Mesa's lavapipe) with one compute queue. Its
// kernels are package-level generic functions over float32 and float64 slices that copy their
// inputs into host-visible storage buffers, run one compute dispatch, and copy the result back:
//
//	Unary(d, "exp", dst, src)               dst[i] = exp(src[i])
//	Binary(d, "+", dst, x, y)               dst[i] = x[i] + y[i] (x or y may have length 1)
//	SumAxis(d, dst, src, outer, n, inner)   sum over the middle axis of [outer, n, inner]
//	ArgmaxAxis(d, dst, src, outer, n, inner) first index of the maximum along that axis
//	MatMul(d, dst, a, b, m, k, n, tA, tB)   dst[m,n] = op(a)[m,k] * op(b)[k,n]
//	Gather(d, dst, src, idx, block)         dst block i = src block idx[i] (0 when out of range)
//	ScatterAdd(d, dst, src, idx, block)     dst block idx[i] += src block i (dropped when out of range)
//	Replicate(d, dst, src)                  dst = src repeated len(dst)/len(src) times
//
// A kernel the device cannot run (float64 without shaderFloat64, transcendental float64 ops,
// which GLSL does not have, float64 scatter without 64-bit atomics, buffers above the device's
// storage-buffer limit) returns an error for which errors.Is(err, ErrUnsupported) holds; the
// caller then runs its CPU kernel. Supports answers the same question without running anything.
//
// Shaders are GLSL in shaders/*.comp with their SPIR-V committed next to them and embedded;
// `go generate` rebuilds the SPIR-V with glslc. Every kernel loops grid-stride, so sizes beyond
// 65535 workgroups work. Device.Timings separates host↔buffer transfer time from dispatch time.
package vulkan
