// Package raise turns a core program (typically a gradient artifact of package ad) into
// nodes of an existing Gorgonia expression graph, so that Gorgonia's TapeMachine, its
// BindDualValues option and every solver run bulkad's gradients unchanged.
//
// Raise maps each term of the program to a node:
//
//   - parameters, and let names listed in the bindings, become the existing nodes they are
//     bound to (a primal let that still denotes an original node is not recomputed);
//   - float element-wise arithmetic and unary functions, sumOuter, tr and reshape use
//     Gorgonia's own ops (Add, Sub, HadamardProd, HadamardDiv, Pow, Exp, Log, …, Sum, Transpose,
//     Reshape);
//   - everything else becomes a bulkad custom op (gorgonia.Op) with a CPU kernel on flat
//     slices: gather, scatter (accumulating), replicate, index, fromVector, cond, argmaxOuter,
//     casts, comparisons and the element-wise operations Gorgonia lacks, and a matmul with
//     transA/transB flags (one gonum GEMM, no materialised transpose);
//   - literals and iota become Gorgonia constants.
//
// Cheap fusions: an element-wise binary operation with a replicated operand
// (x * replicate n s) reads the small operand cyclically instead of materialising the
// replicated array, and tr [1,0] feeding a matmul becomes a transpose flag of the GEMM.
//
// Index functions of gather and scatter are compiled once, when the op is built, into
// closures over an integer environment; their free variables (for example an argmax array)
// become extra inputs of the op. Every custom op prints in the core syntax and hashes its
// full printed form, so Gorgonia's hash-based node deduplication is sound.
//
// Raise validates the whole program (supported constructs, compilable index functions,
// bindings with matching types) before it adds any node; an error names the offending term
// and leaves the graph unchanged.
package raise
