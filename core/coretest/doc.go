// Package coretest generates random well-typed core programs and arguments for property
// tests (BOT, simplifier, parser round trips, AD finite-difference checks).
//
// RandomProgram(rng, cfg) returns a closed program built with the core constructors, so it
// always type-checks. What it covers:
//
//   - every construct of the core language except Tuple (Share only with Config.Shares):
//     variables, literals
//     (scalars and small arrays), let (with sharing: the let variable is preferred in the
//     body, so it is usually used several times), strict cond, every unary and binary
//     operation, cast, index, sumOuter, argmaxOuter (in index positions), gather and scatter,
//     fromVector, replicate, tr, reshape, build1 (nested up to Config.MaxBuildNest deep,
//     default 3), iota and matmul (batched for rank ≥ 3);
//   - index functions and index positions that are affine (i, i+1, 2*i, literals) and
//     non-affine (quot, rem, cond, index into an i64 array parameter, argmaxOuter), some
//     of them out of bounds on purpose (index, gather and scatter must then read 0 / drop);
//   - float64 or float32 programs (Config.Dtype; zero picks one at random), with i64 and bool
//     subterms.
//
// Options: Config.BuildProb makes build1 (and so deep nesting) more frequent; Config.Shares
// adds share nodes (a share used as both operands of an operation, and closed shares reused
// across the program); Config.ReuseNames draws binder names from a small pool, so binders
// shadow each other (capture-avoidance tests). All three are off by default, and then the
// generated programs are the same as without them. Config.ScalarResult makes the result a rank-0 float (for gradients);
// Config.Smooth restricts the float computation to operations that are differentiable
// everywhere the program is evaluated (no abs, sign, floor, ceil, max, min, atan2, rem on
// floats, no float comparisons or float-to-int casts that feed conds or indices, no
// argmaxOuter of floats), so finite differences can be taken at random points.
//
// Domains: the operand of log, sqrt, recip and log1p, the denominator of /, and the base of
// pow are always wrapped as exp (tanh t), which lies in (1/e, e); in Smooth mode exp, expm1
// and tan also get tanh-wrapped arguments and pow's exponent is tanh-wrapped, so values stay
// moderate. RandomArgs draws floats uniformly from [-2, 2], i64 elements from [-1, 6] (so
// some indices taken from them are out of bounds) and bools uniformly.
//
// Config.TargetNodes > 0 makes a large program (a chain of lets, each bound to a random
// term that may use the earlier ones) with roughly that many distinct nodes, for benchmarks.
package coretest
