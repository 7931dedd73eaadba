// Package lower defines the high-level array operations of deep-learning frameworks in
// bulkad's core language (package core), independently of any framework.
//
// Every function takes core terms and static parameters (axes, strides, paddings, …) and
// returns a well-typed core term, or an error of the form
//
//	lower: <operation>: <problem, with the shapes involved>
//
// The definitions are written the way a user of the core language would write them: with
// gather (affine index functions), scatter, transposes, sumOuter and argmaxOuter, and with the
// backend primitive matmul for matrix products. Vectorisation and fusion are left to the
// bulk-operation transform and the simplifier.
//
// Operations that index out of bounds on purpose rely on the core semantics (§5.2 of paper
// 000): a gather reads 0 outside its operand, which is exactly zero padding (im2col,
// average pooling); a scatter drops writes outside its result (col2im).
//
// The package is framework-neutral: each operation is the mathematical one (the textbook
// average pool, unclamped sigmoid and softplus, …). Where a framework deviates, its front end
// reproduces the deviation on top of lower (package adapter: Gorgonia v0.9.18's clamped
// sigmoid and softplus and its average-pool divisor; package onnx: PyTorch's conventions);
// where frameworks agree on a convention lower has to choose (pooling output sizes, ties),
// each function's doc comment says which.
//
// # Reductions and scans over monoids
//
// Reduce and Scan (paper 004, Paszke and Frostig; paper 002's reduce and scan rules) add no
// new core construct. A reduction or scan along an axis is written in the core
// language as a balanced tree (Blelloch's work-efficient scan): pad the axis to a power of two
// with the monoid's identity; the up-sweep combines pairs of rows, level by level (n/2 + n/4
// + … element-wise combinations: O(n) work, ⌈log₂ n⌉ levels), its root is the reduction; the
// down-sweep rebuilds the exclusive prefixes from the levels (each level interleaves the
// parent's prefixes with prefix ⊕ left child: O(n) again), and the inclusive scan is the
// exclusive one combined with the input. Every step is a bulk operation (strided slices,
// concatenation, reshape and the element-wise combine), so:
//   - the text syntax, typing, core.Eval, the kernels, BOT (nothing to vectorise: no build1)
//     and the simplifier are those of the existing constructs;
//   - the derivative is the derivative of that program, which package ad builds in the same
//     shape: O(n) work, bulk operations only, no division (the product's derivative at a zero
//     is exact: ∂/∂x_i Πx = (product of the elements left of i) · (product right of i), both
//     computed by the tree), and the maximum's first-argument tie rule gives the derivative of
//     a tied maximum to its earliest entry;
//   - a user-given operator (Monoid.Combine) is differentiated like any term it builds.
//
// The cost is a constant factor (about 4n combinations and the copies of the interleaving)
// over a sequential loop, in exchange for log depth and a parallel derivative. A reduction
// ends with a sum over the root's unit axis rather than an index: an index at the top would
// be pushed by the simplifier down the tree to single elements, whose derivatives are one
// n-element scatter each (O(n²)). A Combine that does not map two arrays to one of their type
// is refused with an error; one that is not associative gives the tree's grouping, not the
// sequential one.
package lower
