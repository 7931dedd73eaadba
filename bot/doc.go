// Package bot implements the bulk-operation transform (BOT) of paper 000 §5 (Figs. 9–11;
// Smeding, Konarski, Peyton Jones, Fitzgibbon, “Dual-Numbers Reverse AD for Array Programs”, 2025):
// it rewrites element-at-a-time code (build1, index) into bulk operations (gather, replicate,
// tr, sumOuter, …), so that reverse AD only meets bulk operations.
//
// Vectorize and VectorizeTerm return the normal form of Theorem 5.1: no build1, and every
// index is index x (v:ix) with x a variable, index c (v:ix) with c a literal, index [..] [v],
// or index (scatter ..) (v:ix). CheckNormalForm checks exactly that, everywhere in the term,
// including inside the index functions of gather and scatter (see its documentation).
//
// # Strategy
//
// The rewrite system is confluent, so any strategy gives the same normal form; this package
// normalises bottom-up in one memoised pass. norm(t) returns the normal form of t;
// at a build1 it first normalises the body, then pushes the build1 into the (normal) body
// with pushB, a pass over the body memoised per build1 node; at an index it normalises the
// operands, then pushes the index into the (normal) operand with pushI, memoised per
// (operand, index list). pushB never substitutes: the let rule
//
//	build1 k (\i. let x = v in u) ~> let x = build1 k (\i. v) in build1 k (\i. u[index x [i]/x])
//
// is implemented by marking x as "lifted" in the build's context; pushB then treats an
// occurrence of x as index x [i] when it meets it (x becomes gather x (\[i] -> [i]), and
// index x ix becomes gather x (\[i] -> i :: ix)). Only the discrete terms that move into an
// index function are substituted, once per build1 and node. Every distinct node is therefore
// rewritten once per enclosing build1 (the rewrite system itself does no better), and the
// shared structure of the input is kept.
//
// Binder names are made unique first (lets of the top-level spine keep their names; other
// clashing binders are renamed), and lets keep their names through the transform, so the
// names of top-level lets are unchanged.
//
// # Rules beyond the paper, and refinements
//
// Every rule is written next to its code. Rules for the constructs the paper leaves out
// (argmaxOuter, iota, matmul, cast, comparisons, logic, share, tuple) are derived there.
// Three kinds of refinements are applied; each is a consequence of the paper's rules plus a
// semantics-preserving identity:
//
//   - let floating: build1 k (\i. let x = v in u) with i not free in v (nor any lifted
//     variable) becomes let x = v in build1 k (\i. u) instead of lifting x to
//     replicate k v; likewise cond with an i-independent condition becomes a cond of builds;
//   - gather of replicate: where the paper's rule would build gather (k::sh) (replicate k t) f'
//     (t independent of i), the i component is dropped and t is gathered directly;
//   - the lets that Fig. 10 introduces for index components (let i1 = t1 in …) are omitted
//     when t1 is a variable or literal.
//
// Out of bounds. Some index rules of Fig. 10 drop a bounds check: index (replicate k t)
// (u::ix) → index t ix reads t even when u ≥ k, where the left side reads 0 (§5.2);
// likewise for gather (the domain of the gather), reshape (linearisation) and iota. This
// package keeps the semantics exact: when core.IntRange cannot prove the dropped index in
// bounds, the rule adds a guard that costs no array: the first remaining index component is
// replaced by cond ok e (-1) (an out-of-bounds index reads 0), or, when no component is left,
// the result r becomes index [r] [cond ok 0 (-1)].
//
// Known limitation: pushing an index into a node that is shared without a let and indexed at
// several different positions rewrites that node once per distinct index (as the rewrite
// rules do); programs that share through let, as the adapter produces, are not affected.
package bot
