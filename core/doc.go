// Package core is bulkad's typed array language: the core language of paper 000 (§3.2–3.3,
// Figs. 7–8) with the extensions bulkad needs
// (more element-wise operations, casts, argmaxOuter, iota, matmul, share, result tuples).
//
// Types are Array sh ρ with a static shape sh and ρ ∈ {f64, f32, i64, bool}; rank 0 is a
// scalar. Every construct has its own Go type (Var, Lit, Let, Share, Cond, Unary, Cast,
// Binary, Index, SumOuter, ArgmaxOuter, Gather, Scatter, FromVector, Replicate, Transpose,
// Reshape, Build1, Iota, MatMul, Tuple); constructors (NewBinary, …, or a Builder) check the
// typing rules and return errors such as
//
//	core: add: operand shapes [3 4] and [4 3] differ
//
// Terms are immutable DAGs; every traversal is linear in the number of distinct nodes.
//
// matmul multiplies matrices, or stacks of matrices with equal leading (batch) dimensions:
// x : B ++ [m,k] and y : B ++ [k,n] give B ++ [m,n] (multi-head attention's products, what
// BOT makes of a matmul under build1 whose operands both depend on the build variable).
// SwapLastTwo is the permutation that transposes every matrix of such a stack.
//
// Partial operations never crash (§5.2): index and gather out of bounds give 0, scatter drops
// out-of-range writes and adds colliding ones, integer quot and rem by zero give 0.
//
// Eval, EvalTuple and EvalTerm are the reference evaluator: a memoising tree walk, element by
// element, that states the semantics of every construct (see Eval) and is obviously correct
// rather than fast. Package kernel compiles programs into fast kernels and is tested against
// it; core itself executes nothing else. Values are literals (*Lit); core imports no array
// library and no BLAS. Package core/tensors converts literals to and from gorgonia.org/tensor
// Dense tensors and gives the reference evaluator a tensor face (tensors.Eval).
//
// # Text syntax
//
// Programs print (Program.String, Term.String) and parse (ParseProgram, Parse) in this syntax:
//
//	fn (a : [5] f64, b : [5] f64, k : [] i64) => body
//	let x = u in v        cond b u v        x        1.5   2   true   lit [2,3] f64 [1,2,3,4,5,6]
//	t + u  t - u  t * u  t / u  -t  t < u  t <= u  t > u  t >= u  t == u  t != u  b && c  b || c
//	exp t  log t  sqrt t  sin t  cos t  tan t  tanh t  sigmoid t  abs t  sign t  recip t
//	floor t  ceil t  log1p t  expm1 t  erf t  atan t  neg t  not b  stopgrad t (the identity, derivative 0)
//	max t u  min t u  pow t u  atan2 t u  quot t u  rem t u  cast f32 t
//	index t [e1, e2]  (also t ! [e1, e2])
//	sumOuter t  argmaxOuter t  replicate 3 t  tr [1,0] t  reshape [2,3] t  iota 5
//	gather [4,2] t (\[i,j] -> [e1, e2])        scatter [6] t (\[i] -> [quot i 2])
//	[t1, t2, t3]  (fromVector)     build1 5 (\i -> t)     build [2,3] (\[i,j] -> t)
//	matmul t u    share 7 t        (t1, t2)  (result tuple, top level only)
//
// Precedence, loosest first: let and lambdas (extend to the right); ||; &&; comparisons
// (non-associative); + and - (left); * and / (left); prefix minus and prefix application (an
// operation name followed by atomic arguments), each optionally followed by postfix
// indexing t ! [e1, …] (so exp x ! [0] is index (exp x) [0] and -x ! [0] is neg (index x [0]));
// atoms (variables, literals, parenthesised terms, [..]).
// Unary minus is printed as neg; a negative literal is printed in parentheses, (-1.5), and
// a minus sign written directly before a number makes a negative literal.
//
// Literals: an integer literal (2) is i64; a literal with '.' or an exponent (1.5, 2e-3) and
// inf and nan (reserved words) are floating and take the float dtype their context needs —
// the other operand of a binary operation, the other branch of a cond, the other elements
// of a [..] — and f64 otherwise. In lit sh ρ [..] the values of a float array may be
// written without '.'. A rank-0 operand of a binary operation whose other operand is an
// array is broadcast with replicate: x * 2.0 with x : [5] f64 is x * replicate 5 2.0.
// build1 n (\[i] -> t) may also be written with brackets, gather and scatter accept \i ->
// for a single variable, and build [k1,…,kn] (\[i1,…,in] -> t) is n nested build1s.
// A result tuple (t1, t2) (or (t,) or ()) may only be the whole body, possibly under lets.
// Scalar f64, i64 and bool literals print bare; every other literal prints as lit sh ρ [..].
// A share whose ID was already printed in the same term prints without its body (share 7);
// the parser resolves it to the earlier occurrence.
//
// A comment runs from -- to the end of the line (so a double negation needs a space: - -x).
//
// Limits: the parser refuses a type whose arrays could not be addressed (more than 2^48
// bytes) and a term nested deeper than 100,000 levels (also a flat chain x + x + … of that
// many operations; split it with lets). Eval (and kernel.Compile) refuse, before allocating anything,
// a program with an array larger than ArrayLimit: the environment variable
// BULKAD_MAX_ARRAY_BYTES (bytes, with an optional K, M, G or T suffix; 0 or off: no limit),
// a quarter of the physical memory by default. CheckArrayLimit applies any other limit.
//
// Parse errors read "core: parse: line L:C: expected X, found Y"; type errors carry the
// position of the construct in front of the constructor's message, e.g.
// "core: parse: line 1:40: core: add: operand shapes [3 4] and [4 3] differ".
//
// # Reference
//
// "Paper 000", its sections (§) and figures (Fig.) in bulkad's documentation refer to
// T. Smeding, M. Konarski, S. Peyton Jones and A. Fitzgibbon, “Dual-Numbers Reverse AD for Array Programs”, technical report, July 2025.
package core
