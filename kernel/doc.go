// Package kernel is bulkad's execution engine: it compiles a core program (or one term) into a
// plan of kernels over flat slices and runs it many times.
//
// Compile checks a program once and turns it into an Exec: preallocated buffers, index
// functions compiled (by the one index-function compiler of index.go, shared with the op
// kernels) into clipped affine plans (clip.go), vector closures or closures, fused element-wise loops, reductions,
// argmax, gather and scatter kernels and a GEMM, with one memo slot per distinct subterm and
// loop-invariant subterms of build1 bodies hoisted out of the loop. Exec.Run and Exec.RunInto
// run it; Eval, EvalTuple and EvalTerm compile and run once.
//
// The kernels of single operations (the Kernel interface: Run(out, ins) on flat slices of
// the element type) are what package raise wraps as Gorgonia custom ops: Gather and Scatter
// with their index functions compiled once (CompileIndexFn: an IndexProgram of closures, with
// its affine form when there is one; IndexProgram.AffinePlan: strided block copies;
// IndexProgram.ClipPlan: strided runs clipped to the in-bounds interval of each row, for an
// affine function that reaches out of bounds such as a padded convolution's window, walked
// with a contiguous variable innermost when rows are short (clip_across.go) or, for a small
// domain with short rows, by a table of offsets (clip_table.go); LookupPlan: an affine offset plus a table over an argmax value), Unary, Binary, StridedBinary (operands read through strides), MaskMul, Cast, Cond,
// Concat, Transpose, Index, SumOuter, Axis (sum or argmax along an axis), ArgmaxView, MatMul (the one GEMM entry
// point; with a batch count, one product per batch position of a batched matmul),
// ScatterMatMul (the product of a sparse scatter with a matrix), WindowDot (a sum or
// scatter of products of affine, clipped accesses: a depthwise convolution and its gradient
// without materialised windows, window_dot.go) and ExecKernel (a compiled program, for what
// no specialised kernel covers).
//
// Device back ends: a Vulkan (package vulkan, imported by this package only) makes the float
// kernels try the device first and fall back to the CPU kernel whenever the device declines
// or fails.
//
// The meaning of every construct is that of core.Eval, the reference evaluator, against which
// this package is tested on generated programs (both float dtypes, nested builds, shares,
// out-of-bounds indices, infinities and NaNs): results agree bit for bit except where a kernel
// adds in another order (matmul), and there within rounding.
//
// GEMM (gemm_go.go, exported as GEMM) packs and blocks its operands for register-blocked
// micro-kernels: AVX-512F (8×16 float64, 8×32 float32, also reading A's rows in place for
// narrow products) or AVX2+FMA (6×8, 6×16) assembly generated with avo (internal/asmgen),
// chosen from the CPU's features, or a portable Go kernel (and gonum) elsewhere and under
// -tags purego. A product with fewer columns than one register tile (the 10 logits of a
// classifier) runs instead as dot products along k (AVX-512 tiles of 4 or 1 rows × 1–5
// columns, gemmDot), which spend no lanes on padding columns. Large products split rows or
// columns of c across GOMAXPROCS goroutines; a Workspace keeps the packing buffers between
// calls.
//
// Imports: core (the language), core/tensors (tensor values), vulkan (the device back end),
// gonum (the GEMM of builds without the assembly). Package raise wraps kernel plans as Gorgonia
// custom ops; package core imports neither kernel nor any array library.
package kernel
