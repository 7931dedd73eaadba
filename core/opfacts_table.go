package core

import (
	"math"

	"github.com/bulkad/bulkad/internal/vmath"
)

// The op-facts tables (see opfacts.go). A unary or binary operation is added here and in the
// list of constants in term.go; the arrays are sized by numUnOps and numBinOps, and
// TestOpFacts fails for an entry left out.

// unFacts holds the facts of every unary operation, indexed by UnOp.
var unFacts = [numUnOps]UnFacts{
	OpNeg: {
		Name: "neg", Dtypes: Numeric, Float: func(x float64) float64 { return -x }, Int: func(e int64) int64 { return -e },
		KeepsZero: I64, // float neg 0 is -0, which atan2, / and recip tell from the 0 of an out-of-bounds read
		Cost:      CostCheap, Smooth: Smooth, Deriv: UnDeriv{Kind: DerivLinear, Coef: -1}, Native: "Neg",
	},
	OpAbs: {
		Name: "abs", Dtypes: Numeric, Float: math.Abs, Int: absInt, KeepsZero: Numeric, Cost: CostCheap, Smooth: Kinked,
		Kinks:  "abs' 0 = sign 0 = 0 (the mean of the one-sided slopes -1 and 1); abs' -0 = -0",
		Deriv:  UnDeriv{Kind: DerivRule, Factor: func(e DerivEnv) Term { return e.Builder().Unary(OpSign, e.X()) }},
		Native: "Abs",
	},
	OpSign: {
		Name: "sign", Dtypes: Numeric, Float: sign[float64], Int: sign[int64], KeepsZero: Numeric, Cost: CostCheap,
		Smooth: PiecewiseConstant, Kinks: "sign ±0 = ±0 and sign NaN = NaN; the derivative is 0 everywhere, at 0 included",
		Deriv: UnDeriv{Kind: DerivZero}, Native: NoNative, // gorgonia.Sign: 1 at ±0 on scalars
	},
	OpExp: {
		Name: "exp", Dtypes: Floats, Float: vmath.Exp64, Float32: vmath.Exp32, KeepsZero: NoDtype, Cost: CostHeavy, Smooth: Smooth,
		Deriv: ofResult(func(_ TermBuilder, s Term, _ DerivEnv) Term { return s }), Native: NoNative, // gorgonia.Exp: math.Exp
	},
	OpLog: {
		Name: "log", Dtypes: Floats, Float: vmath.Log64, Float32: vmath.Log32, KeepsZero: NoDtype, Cost: CostHeavy, Smooth: Smooth,
		Kinks:  "log' 0 = recip 0 = +Inf; log of a negative number (and its derivative's use) is NaN",
		Deriv:  UnDeriv{Kind: DerivRule, Factor: func(e DerivEnv) Term { return e.Builder().Unary(OpRecip, e.X()) }},
		Native: NoNative, // gorgonia.Log: math.Log, wrong on subnormals on amd64
	},
	OpSqrt: {
		Name: "sqrt", Dtypes: Floats, Float: math.Sqrt, KeepsZero: Floats, Cost: CostHeavy, Smooth: Smooth,
		Kinks:  "sqrt' 0 = 1/(2·sqrt 0) = +Inf; negative operands give NaN",
		Deriv:  ofResult(func(b TermBuilder, s Term, _ DerivEnv) Term { return b.Unary(OpRecip, b.Add(s, s)) }),
		Native: "Sqrt",
	},
	OpSin: {
		Name: "sin", Dtypes: Floats, Float: math.Sin, KeepsZero: Floats, Cost: CostHeavy, Smooth: Smooth,
		Deriv:  UnDeriv{Kind: DerivRule, Factor: func(e DerivEnv) Term { return e.Builder().Unary(OpCos, e.X()) }},
		Native: "Sin",
	},
	OpCos: {
		Name: "cos", Dtypes: Floats, Float: math.Cos, KeepsZero: NoDtype, Cost: CostHeavy, Smooth: Smooth,
		Deriv: UnDeriv{Kind: DerivRule, Factor: func(e DerivEnv) Term {
			b := e.Builder()
			return b.Unary(OpNeg, b.Unary(OpSin, e.X()))
		}},
		Native: "Cos",
	},
	OpTan: {
		Name: "tan", Dtypes: Floats, Float: math.Tan, KeepsZero: Floats, Cost: CostHeavy, Smooth: Smooth,
		Kinks:  "tan' = 1 + tan², computed from the value (huge, not infinite, near the poles)",
		Deriv:  ofResult(func(b TermBuilder, s Term, e DerivEnv) Term { return b.Add(e.Const(1), b.Mul(s, s)) }),
		Native: NoNative,
	},
	OpTanh: {
		Name: "tanh", Dtypes: Floats, Float: vmath.Tanh64, Float32: vmath.Tanh32, KeepsZero: Floats, Cost: CostHeavy, Smooth: Smooth,
		Deriv:  ofResult(func(b TermBuilder, s Term, e DerivEnv) Term { return b.Sub(e.Const(1), b.Mul(s, s)) }),
		Native: NoNative, // gorgonia.Tanh: math.Tanh
	},
	OpSigmoid: {
		Name: "sigmoid", Dtypes: Floats, Float: vmath.Sigmoid64, Float32: vmath.Sigmoid32, KeepsZero: NoDtype, Cost: CostHeavy, Smooth: Smooth,
		Deriv:  ofResult(func(b TermBuilder, s Term, e DerivEnv) Term { return b.Mul(s, b.Sub(e.Const(1), s)) }),
		Native: NoNative, // gorgonia.Sigmoid clamps
	},
	OpRecip: {
		Name: "recip", Dtypes: Floats, Float: func(x float64) float64 { return 1 / x }, KeepsZero: NoDtype,
		Cost: CostHeavy, Smooth: Smooth, Kinks: "recip ±0 = ±Inf and recip' ±0 = -Inf (IEEE division)",
		Deriv:  ofResult(func(b TermBuilder, s Term, _ DerivEnv) Term { return b.Unary(OpNeg, b.Mul(s, s)) }),
		Native: "Inverse",
	},
	OpFloor: {
		Name: "floor", Dtypes: Floats, Float: math.Floor, KeepsZero: Floats, Cost: CostHeavy, Smooth: PiecewiseConstant,
		Kinks: "the derivative is 0 everywhere, at the integers included", Deriv: UnDeriv{Kind: DerivZero}, Native: "Floor",
	},
	OpCeil: {
		Name: "ceil", Dtypes: Floats, Float: math.Ceil, KeepsZero: Floats, Cost: CostHeavy, Smooth: PiecewiseConstant,
		Kinks: "the derivative is 0 everywhere, at the integers included", Deriv: UnDeriv{Kind: DerivZero}, Native: "Ceil",
	},
	OpLog1p: {
		Name: "log1p", Dtypes: Floats, Float: math.Log1p, KeepsZero: Floats, Cost: CostHeavy, Smooth: Smooth,
		Kinks: "log1p' -1 = +Inf; below -1 the value is NaN",
		Deriv: UnDeriv{Kind: DerivRule, Factor: func(e DerivEnv) Term {
			b := e.Builder()
			return b.Unary(OpRecip, b.Add(e.Const(1), e.X()))
		}},
		Native: "Log1p",
	},
	OpExpm1: {
		Name: "expm1", Dtypes: Floats, Float: math.Expm1, KeepsZero: Floats, Cost: CostHeavy, Smooth: Smooth,
		Deriv:  UnDeriv{Kind: DerivRule, Factor: func(e DerivEnv) Term { return e.Builder().Unary(OpExp, e.X()) }},
		Native: "Expm1",
	},
	OpNot: {
		Name: "not", Dtypes: Bools, Bool: func(x bool) bool { return !x }, KeepsZero: NoDtype, Cost: CostCheap,
		Smooth: Discrete, Kinks: "not differentiable (bool)", Deriv: UnDeriv{Kind: NoDeriv}, Native: NoNative,
	},
	OpErf: {
		Name: "erf", Dtypes: Floats, Float: vmath.Erf64, Float32: vmath.Erf32, KeepsZero: Floats, Cost: CostHeavy, Smooth: Smooth,
		Deriv: UnDeriv{Kind: DerivRule, Factor: func(e DerivEnv) Term {
			// erf' x = 2/√π · exp(−x²)
			b, x := e.Builder(), e.X()
			c := e.Const(2 / math.Sqrt(math.Pi))
			return b.Mul(c, b.Unary(OpExp, b.Unary(OpNeg, b.Mul(x, x))))
		}},
		Native: NoNative,
	},
	OpStopGrad: {
		Name: "stopgrad", Dtypes: Floats, Float: func(x float64) float64 { return x }, KeepsZero: Floats,
		Cost: CostHeavy, Smooth: Smooth, Kinks: "the identity, whose derivative is taken to be 0 (stop-gradient)",
		Deriv: UnDeriv{Kind: DerivZero}, Native: NoNative,
	},
	OpAtan: {
		Name: "atan", Dtypes: Floats, Float: math.Atan, KeepsZero: Floats, Cost: CostHeavy, Smooth: Smooth,
		Deriv: UnDeriv{Kind: DerivRule, Factor: func(e DerivEnv) Term {
			// atan' x = 1/(1 + x²)
			b, x := e.Builder(), e.X()
			return b.Unary(OpRecip, b.Add(e.Const(1), b.Mul(x, x)))
		}},
		Native: NoNative,
	},
}

// ofResult is the derivative rule of a unary operation whose derivative is written with its
// value s = f(x) (exp, sqrt, tan, tanh, sigmoid, recip): df builds f'(x) from s with the
// builder b (and e for constants).
func ofResult(df func(b TermBuilder, s Term, e DerivEnv) Term) UnDeriv {
	return UnDeriv{Kind: DerivRule, Factor: func(e DerivEnv) Term {
		s := e.Result()
		return df(e.Builder(), s, e)
	}}
}

// binFacts holds the facts of every binary operation, indexed by BinOp.
var binFacts = [numBinOps]BinFacts{
	OpAdd: {
		Name: "+", Word: "add", Infix: true, Dtypes: Numeric,
		Float: func(x, y float64) float64 { return x + y }, Int: func(x, y int64) int64 { return x + y },
		KeepsZero: true, Cost: CostCheap, Smooth: Smooth, Deriv: BinDeriv{Kind: DerivLinear, Coef: [2]float64{1, 1}},
		Native: "Add",
	},
	OpSub: {
		Name: "-", Word: "sub", Infix: true, Dtypes: Numeric,
		Float: func(x, y float64) float64 { return x - y }, Int: func(x, y int64) int64 { return x - y },
		KeepsZero: true, Cost: CostCheap, Smooth: Smooth, Deriv: BinDeriv{Kind: DerivLinear, Coef: [2]float64{1, -1}},
		Native: "Sub",
	},
	OpMul: {
		Name: "*", Word: "mul", Infix: true, Dtypes: Numeric,
		Float: func(x, y float64) float64 { return x * y }, Int: func(x, y int64) int64 { return x * y },
		KeepsZero: true, Cost: CostCheap, Smooth: Smooth, Deriv: BinDeriv{Kind: DerivRule, Factors: mulDeriv},
		Native: "HadamardProd",
	},
	OpDiv: {
		Name: "/", Word: "div", Infix: true, Dtypes: Floats, Float: func(x, y float64) float64 { return x / y },
		KeepsZero: false, Cost: CostDivide, Smooth: Smooth,
		Kinks: "IEEE division: x/±0 is ±Inf or NaN, and so are the partials 1/y and -(x/y)/y there",
		Deriv: BinDeriv{Kind: DerivRule, Factors: divDeriv}, Native: NoNative, // gorgonia.HadamardDiv: +Inf at every ±0 divisor
	},
	OpPow: {
		Name: "pow", Word: "pow", Dtypes: Floats, Float: math.Pow, KeepsZero: false, Cost: CostHeavy, Smooth: Smooth,
		Kinks: "math.Pow's special values; ∂/∂x = y·x^(y-1) is taken as 0 where y = 0 (x^0 is constant, even at " +
			"x = 0), ∂/∂y = x^y·log x as 0 where x^y = 0 (a zero base)",
		Deriv: BinDeriv{Kind: DerivRule, Factors: powDeriv}, Native: NoNative, // gorgonia.Pow: x·x for x^2, math32 in float32
	},
	OpMax: {
		Name: "max", Word: "max", Dtypes: Numeric,
		// NaN if either is NaN (math.Max returns +Inf for NaN and +Inf); +0 > -0
		Float: func(x, y float64) float64 { return max(x, y) }, Int: func(x, y int64) int64 { return max(x, y) },
		KeepsZero: true, Cost: CostCheap, Smooth: Kinked,
		Kinks: "on ties x = y the first operand gets the whole derivative (∂/∂x = 1, ∂/∂y = 0, from x >= y), " +
			"so relu written max x 0 has slope 1 at 0 and max 0 x slope 0",
		Deriv: BinDeriv{Kind: DerivRule, Factors: extremumDeriv(OpGe)}, Native: NoNative,
	},
	OpMin: {
		Name: "min", Word: "min", Dtypes: Numeric,
		// NaN if either is NaN; -0 < +0
		Float: func(x, y float64) float64 { return min(x, y) }, Int: func(x, y int64) int64 { return min(x, y) },
		KeepsZero: true, Cost: CostCheap, Smooth: Kinked,
		Kinks: "on ties x = y the first operand gets the whole derivative (∂/∂x = 1, ∂/∂y = 0, from x <= y)",
		Deriv: BinDeriv{Kind: DerivRule, Factors: extremumDeriv(OpLe)}, Native: NoNative,
	},
	OpAtan2: {
		Name: "atan2", Word: "atan2", Dtypes: Floats, Float: math.Atan2, KeepsZero: true, Cost: CostHeavy,
		Smooth: Smooth, Kinks: "atan2 x y is the angle of (y, x) (math.Atan2); the partials y/(x²+y²) and " +
			"-x/(x²+y²) are NaN at the origin; the jump across the negative y axis has derivative 0",
		Deriv: BinDeriv{Kind: DerivRule, Factors: atan2Deriv}, Native: NoNative,
	},
	OpQuot: {
		Name: "quot", Word: "quot", Dtypes: I64, Int: quotInt, KeepsZero: true, Cost: CostDivide, Smooth: Discrete,
		Kinks: "integer only; truncates toward zero, quot x 0 = 0", Deriv: BinDeriv{Kind: NoDeriv}, Native: NoNative,
	},
	OpRem: {
		Name: "rem", Word: "rem", Dtypes: I64, Int: remInt, KeepsZero: true, Cost: CostDivide, Smooth: Discrete,
		Kinks: "integer only; the sign of the dividend, rem x 0 = 0", Deriv: BinDeriv{Kind: NoDeriv}, Native: NoNative,
	},
	OpLt: comparison("<", "lt", Numeric, false, func(x, y float64) bool { return x < y }, func(x, y int64) bool { return x < y }, nil),
	OpLe: comparison("<=", "le", Numeric, true, func(x, y float64) bool { return x <= y }, func(x, y int64) bool { return x <= y }, nil),
	OpGt: comparison(">", "gt", Numeric, false, func(x, y float64) bool { return x > y }, func(x, y int64) bool { return x > y }, nil),
	OpGe: comparison(">=", "ge", Numeric, true, func(x, y float64) bool { return x >= y }, func(x, y int64) bool { return x >= y }, nil),
	OpEq: comparison("==", "eq", AnyDtype, true, func(x, y float64) bool { return x == y }, func(x, y int64) bool { return x == y },
		func(x, y bool) bool { return x == y }),
	OpNe: comparison("!=", "ne", AnyDtype, false, func(x, y float64) bool { return x != y }, func(x, y int64) bool { return x != y },
		func(x, y bool) bool { return x != y }),
	OpAnd: {
		Name: "&&", Word: "and", Infix: true, Dtypes: Bools, Bool: func(x, y bool) bool { return x && y },
		KeepsZero: true, Cost: CostCheap, Smooth: Discrete, Kinks: "not differentiable (bool)",
		Deriv: BinDeriv{Kind: NoDeriv}, Native: NoNative,
	},
	OpOr: {
		Name: "||", Word: "or", Infix: true, Dtypes: Bools, Bool: func(x, y bool) bool { return x || y },
		KeepsZero: true, Cost: CostCheap, Smooth: Discrete, Kinks: "not differentiable (bool)",
		Deriv: BinDeriv{Kind: NoDeriv}, Native: NoNative,
	},
}

// comparison is the entry of a comparison (IEEE: a NaN compares unequal to everything, so
// only != holds); trueAtZero says 0 op 0 holds (then the operation does not keep zero).
func comparison(name, word string, ds DtypeSet, trueAtZero bool, f func(x, y float64) bool, i func(x, y int64) bool,
	b func(x, y bool) bool) BinFacts {
	return BinFacts{
		Name: name, Word: word, Infix: true, Compare: true, Dtypes: ds, FloatCmp: f, IntCmp: i, Bool: b,
		KeepsZero: !trueAtZero, Cost: CostCheap, Smooth: Discrete, Kinks: "not differentiable (bool result)",
		Deriv: BinDeriv{Kind: NoDeriv}, Native: NoNative,
	}
}

func absInt(e int64) int64 {
	if e < 0 {
		return -e
	}
	return e
}

// sign is -1, 0 or 1 by the sign of x; ±0 and NaN are returned unchanged.
func sign[T int64 | float64](x T) T {
	switch {
	case x > 0:
		return 1
	case x < 0:
		return -1
	}
	return x
}

func quotInt(x, y int64) int64 {
	if y == 0 {
		return 0
	}
	return x / y
}

func remInt(x, y int64) int64 {
	if y == 0 {
		return 0
	}
	return x % y
}

// mulDeriv: ∂(x·y)/∂x = y, ∂/∂y = x.
func mulDeriv(e DerivEnv, _, _ bool) (Term, Term) { return e.Y(), e.X() }

// divDeriv: ∂(x/y)/∂x = 1/y, ∂/∂y = -(x/y)/y.
func divDeriv(e DerivEnv, wantX, wantY bool) (dx, dy Term) {
	b, r := e.Builder(), e.Result()
	if wantX {
		dx = b.Unary(OpRecip, e.Y())
	}
	if wantY {
		dy = b.Unary(OpNeg, b.Div(r, e.Y()))
	}
	return dx, dy
}

// powDeriv: ∂x^y/∂x = y·x^(y-1) (0 where y = 0), ∂/∂y = x^y·log x (0 where x^y = 0).
func powDeriv(e DerivEnv, wantX, wantY bool) (dx, dy Term) {
	b, x, y, r := e.Builder(), e.X(), e.Y(), e.Result()
	zero := e.Const(0)
	if wantX {
		dx = e.Select(e.Atom(b.Binary(OpEq, y, zero)), zero, b.Mul(y, b.Binary(OpPow, x, b.Sub(y, e.Const(1)))))
	}
	if wantY {
		dy = e.Select(e.Atom(b.Binary(OpEq, r, zero)), zero, b.Mul(r, b.Unary(OpLog, x)))
	}
	return dx, dy
}

// extremumDeriv is the derivative of max (cmp >=) or min (cmp <=): the mask m = x cmp y as
// 0/1 for x, 1 - m for y, so the first operand gets the derivative on ties.
func extremumDeriv(cmp BinOp) func(e DerivEnv, wantX, wantY bool) (Term, Term) {
	return func(e DerivEnv, wantX, wantY bool) (dx, dy Term) {
		b := e.Builder()
		m := e.Atom(b.Cast(e.X().Type().Dtype, b.Binary(cmp, e.X(), e.Y())))
		if wantX {
			dx = m
		}
		if wantY {
			dy = b.Sub(e.Const(1), m)
		}
		return dx, dy
	}
}

// atan2Deriv: ∂ atan2(x, y)/∂x = y/(x²+y²), ∂/∂y = -x/(x²+y²).
func atan2Deriv(e DerivEnv, wantX, wantY bool) (dx, dy Term) {
	b, x, y := e.Builder(), e.X(), e.Y()
	den := e.Atom(b.Add(b.Mul(x, x), b.Mul(y, y)))
	if wantX {
		dx = b.Div(y, den)
	}
	if wantY {
		dy = b.Div(b.Unary(OpNeg, x), den)
	}
	return dx, dy
}
