package lower

import (
	"math"

	"github.com/bulkad/bulkad/core"
	"github.com/pkg/errors"
)

// unaryNames lists the element-wise functions Unary accepts (the names are Gorgonia's, whose
// unary set it covers; the definitions are the mathematical functions).
var unaryNames = [...]string{
	"abs", "sign", "ceil", "floor", "sin", "cos", "exp", "ln", "log2", "neg", "square", "sqrt",
	"inv", "invSqrt", "cube", "tanh", "sigmoid", "log1p", "expm1", "softplus", "erf",
}

// UnaryNames returns the names accepted by Unary.
func UnaryNames() []string { return append([]string{}, unaryNames[:]...) }

// Unary applies the element-wise function name (one of UnaryNames) to the float array x.
//
// Every function is the mathematical one as core defines it (sigmoid is core's stable
// sigmoid, softplus is max(x, 0) + log1p(exp(-|x|)), which neither overflows nor loses the
// small values); sign is -1 for negative, 1 for positive and ±0 at ±0. A front end that must
// reproduce a framework's deviations (Gorgonia v0.9.18 clamps sigmoid and softplus) applies
// them itself: see package adapter.
func Unary(name string, x core.Term) (core.Term, error) {
	op := "unary " + name
	if err := checkTerm(op, x); err != nil {
		return nil, err
	}
	t := x.Type()
	if !t.Dtype.IsFloat() {
		return nil, errors.Errorf("lower: %s: operand dtype %v, want f64 or f32", op, t.Dtype)
	}
	var b core.Builder
	lit := func(v float64) core.Term { return b.Full(t, v) }
	var r core.Term
	// Gorgonia's names of the functions that are one core operation.
	direct := map[string]core.UnOp{
		"abs": core.OpAbs, "sign": core.OpSign, "ceil": core.OpCeil, "floor": core.OpFloor,
		"sin": core.OpSin, "cos": core.OpCos, "exp": core.OpExp, "ln": core.OpLog, "neg": core.OpNeg,
		"sqrt": core.OpSqrt, "inv": core.OpRecip, "tanh": core.OpTanh, "log1p": core.OpLog1p,
		"expm1": core.OpExpm1, "erf": core.OpErf,
	}
	switch op, ok := direct[name]; {
	case ok:
		r = b.Unary(op, x)
	case name == "log2":
		r = b.Div(b.Unary(core.OpLog, x), lit(math.Ln2))
	case name == "square":
		r = b.Mul(x, x)
	case name == "invSqrt":
		r = b.Unary(core.OpRecip, b.Unary(core.OpSqrt, x))
	case name == "cube":
		r = b.Mul(b.Mul(x, x), x)
	case name == "sigmoid":
		r = b.Unary(core.OpSigmoid, x)
	case name == "softplus":
		// max(x, 0) + log1p(exp(-|x|)): exp never overflows, and exp(-|x|) underflowing to 0
		// leaves max(x, 0), the value to the last bit.
		r = b.Add(b.Binary(core.OpMax, x, lit(0)), b.Unary(core.OpLog1p, b.Unary(core.OpExp, b.Unary(core.OpNeg, b.Unary(core.OpAbs, x)))))
	default:
		return nil, errors.Errorf("lower: unary: unknown function %q (known: %v)", name, unaryNames)
	}
	return result(op, &b, r)
}

// binaryNames maps the element-wise operation names BinaryOp accepts to core operations.
var binaryNames = map[string]core.BinOp{
	"add": core.OpAdd, "sub": core.OpSub, "mul": core.OpMul, "div": core.OpDiv, "pow": core.OpPow,
	"lt": core.OpLt, "gt": core.OpGt, "le": core.OpLe, "ge": core.OpGe, "eq": core.OpEq, "ne": core.OpNe,
	"max": core.OpMax, "min": core.OpMin,
}

// BinaryOp returns the core operation of an element-wise operation name (add sub mul div pow
// lt gt le ge eq ne max min).
func BinaryOp(name string) (core.BinOp, bool) {
	o, ok := binaryNames[name]
	return o, ok
}

// Binary applies an element-wise binary operation. The operands have one dtype and equal
// shapes, or one of them has a single element and is broadcast to the other's shape.
// Comparisons return bool, or with retSame 1 and 0 in the operands' dtype.
func Binary(op core.BinOp, x, y core.Term, retSame bool) (core.Term, error) {
	name := "binary " + op.Word()
	if err := checkTerm(name, x, y); err != nil {
		return nil, err
	}
	x, y, err := matchShapes(name, x, y)
	if err != nil {
		return nil, err
	}
	var b core.Builder
	r := b.Binary(op, x, y)
	if op.IsComparison() && retSame {
		r = b.Cast(x.Type().Dtype, r)
	}
	return result(name, &b, r)
}

// matchShapes broadcasts a single-element operand to the other operand's shape.
func matchShapes(op string, x, y core.Term) (core.Term, core.Term, error) {
	xs, ys := x.Type().Shape, y.Type().Shape
	if xs.Equal(ys) {
		return x, y, nil
	}
	var err error
	switch {
	case xs.Size() == 1 && len(xs) <= len(ys):
		x, err = Broadcast(x, ys)
	case ys.Size() == 1 && len(ys) <= len(xs):
		y, err = Broadcast(y, xs)
	case xs.Size() == ys.Size():
		return nil, nil, errors.Errorf("lower: %s: operand shapes %v and %v differ", op, xs, ys)
	default:
		return nil, nil, errors.Errorf("lower: %s: operand shapes %v and %v differ and neither is a single element", op, xs, ys)
	}
	if err != nil {
		return nil, nil, err
	}
	return x, y, nil
}

// MaxBetween is the element-wise maximum of two arrays of one type.
func MaxBetween(x, y core.Term) (core.Term, error) { return Binary(core.OpMax, x, y, false) }

// MinBetween is the element-wise minimum of two arrays of one type.
func MinBetween(x, y core.Term) (core.Term, error) { return Binary(core.OpMin, x, y, false) }

// Clamp limits every element of x to [lo, hi].
func Clamp(x core.Term, lo, hi float64) (core.Term, error) {
	if err := checkTerm("clamp", x); err != nil {
		return nil, err
	}
	if lo > hi {
		return nil, errors.Errorf("lower: clamp: lower bound %v above upper bound %v", lo, hi)
	}
	var b core.Builder
	return result("clamp", &b, b.Binary(core.OpMin, b.Binary(core.OpMax, x, b.Full(x.Type(), lo)), b.Full(x.Type(), hi)))
}

// Convert changes the dtype of x (float↔float rounds, float→int truncates toward zero).
func Convert(x core.Term, to core.Dtype) (core.Term, error) {
	if err := checkTerm("convert", x); err != nil {
		return nil, err
	}
	if x.Type().Dtype == to {
		return x, nil
	}
	var b core.Builder
	return result("convert", &b, b.Cast(to, x))
}

// Where selects element-wise: x where mask is true, else y (mask : bool and x, y of one float
// type, all three of one shape; a rank-0 mask is a cond). It is a gather from [y, x] at the
// mask's value, so a NaN or an infinity in the branch not selected does not leak into the
// result (a multiplication by a 0/1 mask would), and the derivative flows to the selected
// branch only.
func Where(mask, x, y core.Term) (core.Term, error) {
	if err := checkTerm("where", x, y); err != nil {
		return nil, err
	}
	mt := mask.Type()
	if mt.Dtype != core.Bool || !mt.Shape.Equal(x.Type().Shape) || !x.Type().Equal(y.Type()) {
		return nil, errors.Errorf("lower: where: mask %v, branches %v and %v: want a bool mask and two float arrays of its shape", mt, x.Type(), y.Type())
	}
	var b core.Builder
	sh := mt.Shape
	if len(sh) == 0 {
		return result("where", &b, b.Cond(mask, x, y))
	}
	namer := core.NewNamer(mask, x, y)
	// The index function reads the mask through a let-bound variable: an index function
	// holding the mask's whole term would evaluate it at every point.
	mv := namer.FreshVar("mask", mt)
	return result("where", &b, b.Let(mv, mask, b.Select(namer, mv, x, y)))
}
