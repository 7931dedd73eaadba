// Package conformance holds the conformance test of issue 27: every element-wise operation
// of the core language (every core.UnOp and core.BinOp, comparisons and logic included, and
// the casts between every pair of dtypes), evaluated at special values by every executor
// bulkad has, and compared bit for bit (any NaN equals any NaN) with the reference
// evaluator, core.Eval; the reference itself is compared with the mathematical definitions
// (the math package and hand-written tables of special values).
//
// The package has no code of its own: it is its tests (go test ./tests/conformance).
//
//   - TestReference: core.Eval against the definitions, operation by operation.
//   - TestExecutors: each executor against core.Eval on the same program: core.Eval at rank 0
//     and rank n, kernel.Compile (the one-op program at ranks 0, 1 and n, and two-op
//     element-wise chains, which kernel fuses), the single-op kernels (kernel.Unary,
//     kernel.Binary with equal and cyclic operands, kernel.StridedBinary with broadcast
//     operands, kernel.Cast), raised nodes on a Gorgonia TapeMachine (raise.RaiseWith per
//     operation and with Options.Coarse, at rank 0 (scalar nodes), 1 and n), and the same
//     kernels and raised nodes with a Vulkan device forced (lavapipe on machines without a
//     GPU; skipped when there is no device unless VULKAN_REQUIRED=1).
//   - TestKinks: the first and second derivatives at kinks and ties (ad.Grad, ad.HVP),
//     evaluated by core.Eval and by the raised gradient nodes, against the one-sided
//     slopes that package ad documents.
//
// The special values are ±0 (a real negative zero), ±the smallest subnormal, ±the smallest
// normal, ±0.5, ±1, ±2.5, ±25, ±1e30, ±2⁶³, ±the largest finite value, ±Inf and NaN (with
// either sign bit), and for binary operations every pair of them (ties and ±0 pairs
// included); i64 operands take 0, ±1, ±2, 3, ±7, 2⁵³+1, 2⁶⁰+2³⁶+1 and the int64 extremes, bool both
// values. A few operations also take extra operands off that grid (extraOperands), where one
// of Gorgonia's native ops was seen to disagree with core.Eval only there.
//
// Package raise uses a native Gorgonia op for an element-wise operation (raised per operation,
// at a dtype) only where this test shows it agrees; its tables (raise/native.go) list the
// ones left out and the values where they disagree.
package conformance
