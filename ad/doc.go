// Package ad is bulkad's reverse-mode automatic differentiation: the dual-arrays algorithm of
// paper 000 (Smeding, Konarski, Peyton Jones, Fitzgibbon, “Dual-Numbers Reverse AD for Array
// Programs”, 2025; see package core), §6–7, on the core language.
//
// A program is differentiated once into an Artifact, an ordinary core program
//
//	fn (params…[, dret]) => let <primal lets> in let <cotangent lets> in (value, g_1, …, g_k)
//
// that computes the value and the gradients and can then be evaluated many times. The
// pipeline: core.Check → BOT (bot.Vectorize) → simplify → forward pass into dual arrays
// (Figs. 14–15: the primal stays a core term, the tangent is a symbolic Delta whose Share IDs
// come from a per-differentiation counter) → symbolic reverse pass (Fig. 19: cotangents are
// core terms, shared with `share` where they are duplicated) → shareToLet (Fig. 20) → wrapper
// (Fig. 21) → simplify. The result contains no `share`.
//
// The reverse pass visits shared Delta nodes in decreasing ID order, each once (paper 001), so
// differentiation time and artifact size are linear in the program size. A concrete reverse
// pass on arrays (Fig. 17) over the same Delta exists for testing; it evaluates with core.Eval
// (package ad has no evaluator of its own), and Artifact.Run does too (Artifact.RunWith takes
// another evaluator, such as kernel.EvalTuple).
//
// Conventions for non-smooth points and special cases:
//   - integers and booleans are never differentiated; argmaxOuter, comparisons, floor, ceil,
//     sign and casts to integers have derivative 0; a gradient has its parameter's dtype;
//   - max/min: on a tie (±0 against ±0 included) the first argument gets the whole gradient
//     and the second none, so ReLU written max x 0 has slope 1 at x = 0 and written max 0 x
//     slope 0;
//   - abs'(±0) = ±0 (abs' = sign);
//   - at these kinks and ties, as everywhere for the piecewise linear operations (abs, sign,
//     max, min, floor, ceil), the second derivative is 0;
//   - pow x y: ∂/∂x = y·x^(y−1), taken as 0 where y = 0; ∂/∂y = x^y·log x, taken as 0 where
//     x^y = 0 (both by element-wise selection, so the undefined value does not leak);
//   - atan2 x y: ∂/∂x = y/(x²+y²), ∂/∂y = −x/(x²+y²) (NaN at the origin);
//   - cond c u v: the branch not taken gets a zero cotangent, selected with cond (not a
//     multiplication by 0), and inside a branch every multiplication of the cotangent by a
//     primal value (a local derivative) is guarded by the branch condition, so a NaN or
//     infinite derivative in the branch not taken does not poison the gradient (the "double
//     where" problem: the gradient of cond (x > 0) (sqrt x) 0 at x = -1 is 0). The guard is
//     kept through shared subterms whose every use is inside the same branch; a value
//     computed outside the cond and used in both places is not guarded. Conds inside build1
//     become gathers under the BOT and are not guarded;
//   - a parameter the result does not depend on gets a zero gradient.
//
// VJP artifacts take the incoming cotangent as the parameter "dret"; JVP programs take one
// tangent parameter "d_<name>" per differentiated parameter and return (value, tangent).
package ad
