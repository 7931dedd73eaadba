package raise

import (
	"github.com/bulkad/bulkad/core"
	"gorgonia.org/gorgonia"
)

// Gorgonia's own element-wise ops, used for a float unary or binary operation raised per
// operation (not coarsely, and not when a Vulkan device takes the kernel) only where they
// agree with core.Eval; everywhere else bulkad's kernel runs.

// native plans a node built by a Gorgonia function of the children's nodes.
func (pl *plan) native(t core.Term, ins []core.Term, f func(kids []*gorgonia.Node) (*gorgonia.Node, error)) (ref, error) {
	rs, err := pl.terms(ins...)
	if err != nil {
		return ref{}, err
	}
	r := pl.add(t, rs, f)
	pl.steps[r.step].native = true
	pl.steps[r.step].fallback = func(vs []*core.Var) (core.Term, error) { return core.Rebuild(t, asTerms(vs)) }
	return r, nil
}

// native is a Gorgonia constructor that agrees with core.Eval bit for bit, at float64 and,
// when f32 is set, at float32 too (at ranks 0, 1 and n): what tests/conformance checks at
// every special value and at the extra operands where Gorgonia's ops were seen to disagree.
type native[F any] struct {
	fn  F
	f32 bool
}

// nativeFor returns the Gorgonia constructor of an operation at dtype d, when it has one that
// agrees with core.Eval there.
func nativeFor[K comparable, F any](m map[K]native[F], op K, d core.Dtype) (F, bool) {
	n, ok := m[op]
	if !ok || (d == core.Float32 && !n.f32) || !d.IsFloat() {
		var zero F
		return zero, false
	}
	return n.fn, true
}

// nativeUnary holds the core unary operations that Gorgonia has as ops of its own and that
// agree with core.Eval (see native); the others run bulkad's kernel. Left out, with what
// tests/conformance saw (Gorgonia v0.9.18):
//   - sign: scalar nodes give 1 at ±0 and ±1 at NaN (core: ±0 and NaN), which made the
//     gradient of abs 1 at 0 on a TapeMachine;
//   - sigmoid: clamped to 1 above 19 (15 in float32) and to 0 below -709 (-88 in float32):
//     sigmoid 25 = 1 where core gives 0.999999999986112, sigmoid 16f = 1f where core gives
//     0.9999999f, sigmoid -100f = 0 where core gives 3.7e-44f; and 1 ulp off at -0.5, -2.5, -25;
//   - exp, log, sin, cos, tanh and expm1 at float32 compute in float32 (package math32) where
//     core computes in float64 and rounds once: exp 2.5f = 12.182492f (core 12.182494f), exp
//     1e30f = 0 (core +Inf), log of the smallest subnormal = -88.03f (core -103.28f), sin 1f,
//     sin 2.5f and cos 2.5f 1 ulp off, sin and cos wrong at ±1e30f and ±2⁶³ (sin 2⁶³f = NaN),
//     tanh 0.625f = 0.55459976f on arrays (core 0.5545997f), expm1 1f 1 ulp off;
//   - exp, log and tanh at float64 too: core computes them with package internal/vmath
//     (within 1–2 ulp of the math package, and right where math.Log is wrong on amd64:
//     math.Log of the smallest subnormal is -709.09, the logarithm is -744.44).
var nativeUnary = map[core.UnOp]native[func(*gorgonia.Node) (*gorgonia.Node, error)]{
	core.OpNeg:   {gorgonia.Neg, true},
	core.OpAbs:   {gorgonia.Abs, true},
	core.OpSqrt:  {gorgonia.Sqrt, true},
	core.OpSin:   {gorgonia.Sin, false},
	core.OpCos:   {gorgonia.Cos, false},
	core.OpRecip: {gorgonia.Inverse, true},
	core.OpFloor: {gorgonia.Floor, true},
	core.OpCeil:  {gorgonia.Ceil, true},
	core.OpLog1p: {gorgonia.Log1p, true},
	core.OpExpm1: {gorgonia.Expm1, false},
}

// nativeBinary holds the core binary operations that Gorgonia has as ops of its own and that
// agree with core.Eval (see native). Left out, with what tests/conformance saw:
//   - div: arrays give +Inf wherever the divisor is ±0 (0/0 = +Inf where core gives NaN,
//     1/-0 = +Inf where core gives -Inf), which made atan2's gradient +Inf at the origin
//     where core gives NaN;
//   - pow: float64 arrays compute x^2 as x*x and x^3 as x*x*x, which round once where
//     math.Pow rounds twice when the result is subnormal (pow 1.0230426852789173e-154 2 =
//     1.0466163359026976e-308, core 1.046616335902698e-308); float32 computes in float32
//     (math32.Pow): pow -0f 0.5f = -0f (core 0), pow of the smallest subnormal and -1e30f
//     = 0 (core +Inf), and 89 of the 576 pairs of special values differ.
var nativeBinary = map[core.BinOp]native[func(a, b *gorgonia.Node) (*gorgonia.Node, error)]{
	core.OpAdd: {gorgonia.Add, true}, core.OpSub: {gorgonia.Sub, true},
	core.OpMul: {gorgonia.HadamardProd, true},
}
