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
// The exact semantics follow Gorgonia v0.9.18 where a Gorgonia operation of the same name
// exists (output sizes of pooling, the thresholds of sigmoid and softplus, the divisor of
// average pooling); each function's doc comment says so where it matters.
package lower
