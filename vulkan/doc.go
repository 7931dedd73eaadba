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
// inputs into host-visible storage buffers (staged through device-local ones inside the same
// submission on discrete GPUs), run the dispatch, and copy the result back:
//
//	Unary(d, "exp", dst, src)               dst[i] = exp(src[i])
//	Binary(d, "+", dst, x, y)               dst[i] = x[i%len(x)] + y[i%len(y)]
//	BinaryStrided(d, "*", dst, x, y, shape, xStrides, yStrides)  broadcasting through strides
//	SumAxis(d, dst, src, outer, n, inner)   sum over the middle axis of [outer, n, inner]
//	ArgmaxAxis(d, dst, src, outer, n, inner) first index of the maximum along that axis
//	MatMul(d, dst, a, b, m, k, n, tA, tB)   dst[m,n] = op(a)[m,k] * op(b)[k,n]
//	Gather(d, dst, src, idx, block)         dst block i = src block idx[i] (0 when out of range)
//	ScatterAdd(d, dst, src, idx, block)     dst block idx[i] += src block i (dropped when out of range)
//	GatherAffine(d, dst, src, dom, strides, base, block)      Gather with block index base + Σ c·strides
//	ScatterAddAffine(d, dst, src, dom, strides, base, block)  ScatterAdd with the same affine map
//	Replicate(d, dst, src)                  dst = src repeated len(dst)/len(src) times
//
// A kernel the device cannot run (float64 without shaderFloat64, transcendental float64 ops,
// which GLSL does not have, float64 scatter without 64-bit atomics, buffers above the device's
// storage-buffer limit) returns an error for which errors.Is(err, ErrUnsupported) holds; the
// caller then runs its CPU kernel. Supports answers the same question without running anything.
//
// Semantics follow bulkad's core evaluator (core.Eval), special values included: max and min
// propagate NaN and order +0 above -0, sign keeps ±0 and NaN, pow follows math.Pow's special
// cases, argmax skips NaN (0 when an axis has no number), gather reads 0 and scatter drops
// writes out of range. Element-wise results are bitwise those of core.Eval for neg abs sign
// floor ceil recip sqrt + - * / max min (float32 and float64), and within ULPBound(op) units
// in the last place for the float32 transcendentals, anywhere in the float32 range including
// subnormals, with special results (±0, ±Inf, NaN) exact: exp log sin cos tan log1p 4 ulp,
// tanh sigmoid expm1 pow 8 ulp (measured on lavapipe: 3, 2, 2, 2, 3, 2, 4, 5, 4, 2). The
// shaders do not trust the builtins where they fall short: sin, cos and tan reduce their
// argument exactly (Payne-Hanek, 256 bits of 2/pi) and use their own polynomials; log and
// pow scale subnormal arguments (lavapipe reads them as 2^-127) and pow computes y·log2 x in
// float-float arithmetic; results that are subnormal are scaled by a multiplication. No
// float64 transcendental runs on the device (GLSL has none): Supports declines them and the
// caller's CPU kernel runs. Two things GPUs do by default would break these promises, so the
// float32 shaders avoid them: Vulkan lets float division (and so 1/x and sqrt) be 2.5 ulp
// off, so on devices with float64 those three go through double, whose correctly rounded
// result rounds to the correctly rounded float (53 >= 2·24 + 2 bits); without float64 they
// are declined. Drivers may flush float32 subnormals to zero (NVIDIA's does, measured on an
// H100), so the shaders run with SPV_KHR_float_controls' DenormPreserve where the device
// offers it (Vulkan 1.2's float-controls properties), and where it does not — and the device
// is not a CPU implementation — the float32 element-wise kernels are declined
// (Info.Float32Subnormals). The signs of zeros in max and min are combined bitwise, not by
// arithmetic on zeros, which drivers may fold (SignedZeroInfNanPreserve is added where
// offered). Sums, matmul and scatter-add are within 1e-5 of the sum of the
// magnitudes of their terms (float32), since the summation order differs (scatter-add is
// atomic, in no fixed order).
//
// Shaders are GLSL in shaders/*.comp (with shared code in shaders/*.glsl) and their SPIR-V
// committed next to them and embedded; after editing one, run `go generate ./vulkan` (glslc
// from Debian's glslc package; see generate.go) and check with
// `for f in vulkan/shaders/*.spv; do spirv-val --target-env vulkan1.0 $f; done`. Ops and transpose flags are specialization
// constants (one pipeline per op, created on first use and cached per Device). Every kernel
// loops grid-stride, so sizes beyond 65535 workgroups work, and the host splits long
// reductions and large matmuls so that no invocation runs more than about 20000 loop
// iterations: llvmpipe (lavapipe) silently cuts every invocation off after 65535. Device.Timings
// separates host↔buffer transfer time from dispatch time. On CPU devices the kernels avoid
// workgroup barriers (matmul without shared-memory tiles, one invocation per reduction output),
// which lavapipe runs slowly; GPUs get the tiled matmul and workgroup reductions.
//
// # Using it from a CPU kernel
//
// Open one Device per process (it is safe for concurrent use) and, in each kernel, try the
// device first when it is expected to pay (Worthwhile) or when forced (tests on lavapipe), and
// fall back on any error:
//
//	if (force || dev.Worthwhile("unary", op, len(out))) && vulkan.Supports[float32](dev, "unary", op) {
//		if err := vulkan.Unary(dev, op, out, in); err == nil {
//			return nil
//		} else if !errors.Is(err, vulkan.ErrUnsupported) {
//			// a real failure: report it once, then run the CPU kernel
//		}
//	}
//	// CPU kernel
//
// Gather and scatter take index tables: entry i is the flat block index (in units of block
// elements) that block i reads from or adds to, -1 (or anything out of range) to read 0 or drop
// the write; compute them once per op when the index function does not depend on run-time
// arrays. On a CPU device (Type() == CPU) the device path is never faster than Go: use it only
// to test.
package vulkan
