// Package raise turns a core program (typically a gradient artifact of package ad) into
// nodes of an existing Gorgonia expression graph, so that Gorgonia's TapeMachine, its
// BindDualValues option and every solver run bulkad's gradients unchanged.
//
// # Granularity
//
// Options.Coarse (what package bulkad uses) raises a whole program as one plan node plus one
// node per result: the terms are planned into kernels exactly as described below, but
// nothing becomes a Gorgonia op; the kernels run in order in one kernel.Plan (buffers
// allocated once and shared by values whose lifetimes do not overlap), and each result node
// copies its range of the plan node's packed value into a fresh value (coarse.go). Gorgonia's
// graph construction and TapeMachine compile are quadratic in the number of nodes (24,000
// nodes compile in 11 s, 175,000 in 8 minutes), and the TapeMachine spends about 4 µs per
// instruction; a coarse program is a handful of nodes whatever its size, so set-up grows
// linearly with the model and the machine's own overhead is negligible. That is why bulkad
// does not need a machine of its own (a gorgonia.VM running the whole graph from one plan):
// with coarse nodes the TapeMachine only sequences a few large kernels, keeps the values a
// user reads (node values, dual values, Read targets) exactly as Gorgonia's own ops do, and
// stays the machine every solver and user of Gorgonia already knows. A program's forward
// values are read from the nodes that hold them: the bound lets (the user's forward nodes) and
// the Slots, ranges of a plan node raised with Options.Tape (an imported model's plan node
// keeps its activations in its value, where the gradient reads them).
//
// Without Options.Coarse, each term becomes a node (below). That mode remains for comparison
// and debugging (BULKAD_RAISE=ops in package bulkad) and for programs whose results have
// different dtypes (one packed value has one dtype).
//
// Raise maps each term of the program to a node:
//
//   - parameters, and let names listed in the bindings, become the existing nodes they are
//     bound to (a primal let that still denotes an original node is not recomputed);
//   - float element-wise arithmetic and unary functions, sumOuter, tr and reshape use
//     Gorgonia's own ops (Add, Sub, HadamardProd, HadamardDiv, Pow, Exp, Log, …, Sum, Transpose,
//     Reshape);
//   - everything else becomes a bulkad custom op (gorgonia.Op) that runs a kernel of package
//     kernel on flat slices (raise plans, kernel executes): gather, scatter (accumulating), replicate, index, fromVector, cond, argmaxOuter,
//     casts, comparisons and the element-wise operations Gorgonia lacks, and a matmul with
//     transA/transB flags (one GEMM, no materialised transpose; a batched matmul is one
//     kernel running a GEMM per batch position);
//   - literals and iota become Gorgonia constants;
//   - what no specialised kernel covers (build1, an index function the compiler rejects) runs
//     as one custom op through package kernel's compiled evaluator (kernel.Compile, Exec.RunInto).
//
// Cheap fusions: an element-wise binary operation whose operands are replicates and
// transposes of smaller arrays (x * tr [1,0] (replicate n s), with unary functions and casts
// pushed onto the small array) reads them through strides instead of materialising them;
// tr [1,0] feeding a matmul (the transpose of the last two dimensions, for a batched one)
// becomes a transpose flag of the GEMM; sumOuter and argmaxOuter of
// a transpose reduce along an axis of the operand; a transpose of a gather or scatter is folded
// into its index function. Top-level lets are planned lazily, so a let used only through such
// fusions never becomes a node, and lets the selected results do not need are not raised.
//
// Element-wise trees (coarse plans on the CPU, elementwise.go): a float operation whose
// operands are element-wise operations nothing else reads is planned with them as one
// kern.Fused that computes the tree block by block, its leaves read through strides, so the
// intermediate arrays are never written; the bits are the unfused kernels'. Only trees of two
// operations or more whose leaves are read along contiguous or broadcast rows.
//
// Sums of products over windows: sumOuter of a product (or of a reshape merging its
// leading dimensions into the summed one) and a scatter of a product by an affine index
// function, when a factor is a gather with an affine index function (the other such a
// gather, a strided view of a smaller array or a plain array), run as one
// kernel.WindowDot that reads the factors where they lie, clipped at their bounds, and never
// materialises the product (windows.go): a depthwise convolution (lower.GroupedConv2d's
// element-wise form) and the two products of its gradient, its col2im-like scatter into the
// image and its reduction into the filter. The kernel adds in the reference's order, so the
// results equal core.Eval's bit for bit. Programs raised for a Vulkan device keep the
// unfused kernels.
//
// Window matrices read in place (window_matmul.go): a matrix product one of whose factors
// is reshape [P, J] (gather dom x fn), fn affine — the im2col of a convolution, times the
// filter (the forward pass) or times the cotangent (the filter's gradient) — runs as one
// kernel.WindowMatMul that reads x's elements in a zero-padded copy instead of the window
// matrix, and col2im of a product (the input gradient) as the filter times the cotangent's
// windows, written straight into the image. Only where the window matrix is at least four
// times the other factor (Options.Materialised turns them off). The sums run in another
// order than the GEMM's: results agree with the materialised plan to rounding, not to the
// bit. In a coarse plan the filter gradient reads the padded copy of x that the forward
// product of the same x made, and the input gradients of convolutions of one padding pad
// their cotangents in one buffer (kernel.WindowMatMul's ShareStaging and SharePadding).
//
// Common subterms (core.CSE, coarse plans): a use of a top-level let counts as its bound
// term, so that the gradient's primal lets and the forward's inline terms they recompute (a
// batch norm's mean and variance) are one term, planned once; an element-wise operation of an
// array with a per-row broadcast that several fused trees then read (x − mean) is computed in
// each tree rather than written and read back.
//
// Gathers and scatters whose index functions are affine and provably in bounds (convolution
// and pooling windows, strided slices) run as strided copies without per-element closures.
// So do those that add to such an affine offset a function of one argmax value looked up at
// the current point (max-pooling as a gather at the window's argmax, and its derivative, a
// scatter to it): the looked-up part is a table over the argmax's range. A 0/1 mask times
// such a scatter, when no two points meet, becomes a scatter of the cotangent times the mask
// gathered at the scattered positions (the ReLU mask of the max-pool gradient), and
// matmul (tr [1,0] S) B with S such a scatter (a convolution's filter gradient) walks S's
// domain instead of multiplying the mostly zero S densely (falling back to the dense sum
// when B holds an infinity or a NaN).
//
// A custom op whose value can become a result's value returns a new value at every run, as
// Gorgonia's ops do after the TapeMachine's Reset (a gradient value kept from one run survives
// the next); the others reuse their output buffer across runs (their values are read within
// the run only), and all write into the node's previous value when the machine offers it
// (UsePreallocDo, no Reset).
//
// Views: the TapeMachine runs an op in place on an operand that is not read afterwards, and
// its liveness analysis does not know that a Reshape (and a few other ops) may return a view
// sharing its operand's memory. Raise adds, when the graph needs them, keepAlive nodes that
// keep every node sharing memory with a value the raised nodes read alive until the raised
// results are computed (see protectViews in alias.go), so no raised node reads a value that
// an in-place op overwrote.
//
// Index functions of gather and scatter are compiled once, when the op is built, by package
// kernel (kernel.CompileIndexFn); their free variables (for example an argmax array)
// become extra inputs of the op. Every custom op prints in the core syntax and hashes its
// full printed form, so Gorgonia's hash-based node deduplication is sound.
//
// Gorgonia deduplicates nodes by a 32-bit hash without comparing children, so a collision
// would silently return an unrelated node. Raise checks every node it gets back: a custom op
// answered with another node is salted and applied again; a native constructor answered with
// an existing node on other children is rebuilt as a custom op.
//
// With Options.Vulkan set, the float kernels of these ops try a Vulkan device first, and the
// Gorgonia ops above are replaced by bulkad's own where the device would run them (see
// kernel.Vulkan; package raise makes no device call itself).
//
// Raise validates the whole program (supported constructs, compilable index functions,
// bindings with matching types) before it adds any node; an error names the offending term
// and leaves the graph unchanged.
package raise
