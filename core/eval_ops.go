package core

import "math"

// The element-wise operations of the reference evaluator (see Eval for their semantics).

// sigmoid is the numerically stable logistic function: it never evaluates exp of a large
// positive argument.
func sigmoid(x float64) float64 {
	if x >= 0 {
		return 1 / (1 + math.Exp(-x))
	}
	e := math.Exp(x)
	return e / (1 + e)
}

// FloatFunc returns the operation on one float64 element (nil for not, which takes booleans):
// the one statement of each float unary operation's value, read by the reference evaluator
// and by package kernel. Float32 arrays apply it in float64 and round the result once.
func (o UnOp) FloatFunc() func(float64) float64 {
	switch o {
	case OpNeg:
		return func(x float64) float64 { return -x }
	case OpAbs:
		return math.Abs
	case OpSign:
		return sign[float64]
	case OpExp:
		return math.Exp
	case OpLog:
		return math.Log
	case OpSqrt:
		return math.Sqrt
	case OpSin:
		return math.Sin
	case OpCos:
		return math.Cos
	case OpTan:
		return math.Tan
	case OpTanh:
		return math.Tanh
	case OpSigmoid:
		return sigmoid
	case OpRecip:
		return func(x float64) float64 { return 1 / x }
	case OpFloor:
		return math.Floor
	case OpCeil:
		return math.Ceil
	case OpLog1p:
		return math.Log1p
	case OpExpm1:
		return math.Expm1
	case OpErf:
		return math.Erf
	case OpStopGrad:
		return func(x float64) float64 { return x }
	}
	return nil
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

// IntFunc returns the operation on one int64 element (neg, abs, sign; nil for the others):
// the one statement of each integer unary operation's value (two's complement: neg and abs
// of math.MinInt64 give math.MinInt64), read by the reference evaluator, the simplifier and
// package kernel.
func (o UnOp) IntFunc() func(int64) int64 {
	switch o {
	case OpNeg:
		return func(e int64) int64 { return -e }
	case OpAbs:
		return func(e int64) int64 {
			if e < 0 {
				return -e
			}
			return e
		}
	case OpSign:
		return sign[int64]
	}
	return nil
}

func unaryValue(op UnOp, a *value) *value {
	out := newValue(a.t)
	for k, e := range a.b {
		out.b[k] = !e
	}
	for k, e := range a.i {
		out.i[k] = op.IntFunc()(e)
	}
	if f := op.FloatFunc(); f != nil {
		for k, e := range a.f {
			out.f[k] = round(a.t.Dtype, f(e))
		}
	}
	return out
}

// FloatToInt is the cast of a float to i64: truncation toward zero; NaN and values outside
// the int64 range give 0.
func FloatToInt(f float64) int64 {
	if math.IsNaN(f) || f >= 0x1p63 || f < -0x1p63 {
		return 0
	}
	return int64(f)
}

func castValue(to Dtype, a *value) *value {
	out := newValue(Type{Shape: a.t.Shape, Dtype: to})
	for k := range a.t.Shape.Size() {
		var f float64
		var i int64
		var b bool
		switch {
		case a.f != nil:
			f, i, b = a.f[k], FloatToInt(a.f[k]), a.f[k] != 0
		case a.i != nil:
			f, i, b = float64(a.i[k]), a.i[k], a.i[k] != 0
		case a.b[k]:
			f, i, b = 1, 1, true
		}
		switch to {
		case Float64, Float32:
			if to == Float32 && a.i != nil {
				out.f[k] = float64(float32(a.i[k])) // one rounding (through float64 rounds twice)
			} else {
				out.f[k] = round(to, f)
			}
		case Int64:
			out.i[k] = i
		default:
			out.b[k] = b
		}
	}
	return out
}

func binaryFloat(op BinOp, x, y float64) float64 {
	switch op {
	case OpAdd:
		return x + y
	case OpSub:
		return x - y
	case OpMul:
		return x * y
	case OpDiv:
		return x / y
	case OpPow:
		return math.Pow(x, y)
	case OpMax:
		return max(x, y) // NaN if either is NaN (math.Max returns +Inf for NaN and +Inf); +0 > -0
	case OpMin:
		return min(x, y) // NaN if either is NaN; -0 < +0
	case OpAtan2:
		return math.Atan2(x, y)
	}
	panic("binary " + op.String() + " on floats")
}

// IntFunc returns the arithmetic operation on one pair of int64 elements (+ - * max min quot
// rem; nil for the others): quot truncates toward zero and rem has the sign of the dividend
// (Go's / and %), both give 0 when dividing by zero.
func (o BinOp) IntFunc() func(x, y int64) int64 {
	switch o {
	case OpAdd:
		return func(x, y int64) int64 { return x + y }
	case OpSub:
		return func(x, y int64) int64 { return x - y }
	case OpMul:
		return func(x, y int64) int64 { return x * y }
	case OpMax:
		return func(x, y int64) int64 { return max(x, y) }
	case OpMin:
		return func(x, y int64) int64 { return min(x, y) }
	case OpQuot:
		return func(x, y int64) int64 {
			if y == 0 {
				return 0
			}
			return x / y
		}
	case OpRem:
		return func(x, y int64) int64 {
			if y == 0 {
				return 0
			}
			return x % y
		}
	}
	return nil
}

// compareOrd applies a comparison given the operands' order (lt, eq); unordered operands
// (a NaN) compare false except under !=.
func compareOrd(op BinOp, lt, eq, unordered bool) bool {
	if unordered {
		return op == OpNe
	}
	switch op {
	case OpLt:
		return lt
	case OpLe:
		return lt || eq
	case OpGt:
		return !lt && !eq
	case OpGe:
		return !lt
	case OpEq:
		return eq
	case OpNe:
		return !eq
	}
	panic("comparison " + op.String())
}

func binaryValue(op BinOp, a, b *value, rt Type) *value {
	out := newValue(rt)
	for k := range a.t.Shape.Size() {
		switch {
		case op.IsComparison() && a.f != nil:
			x, y := a.f[k], b.f[k]
			out.b[k] = compareOrd(op, x < y, x == y, math.IsNaN(x) || math.IsNaN(y))
		case op.IsComparison() && a.i != nil:
			x, y := a.i[k], b.i[k]
			out.b[k] = compareOrd(op, x < y, x == y, false)
		case a.b != nil:
			x, y := a.b[k], b.b[k]
			switch op {
			case OpAnd:
				out.b[k] = x && y
			case OpOr:
				out.b[k] = x || y
			case OpEq:
				out.b[k] = x == y
			case OpNe:
				out.b[k] = x != y
			}
		case a.i != nil:
			out.i[k] = op.IntFunc()(a.i[k], b.i[k])
		default:
			out.f[k] = round(rt.Dtype, binaryFloat(op, a.f[k], b.f[k]))
		}
	}
	return out
}
