package lower

import (
	"math"

	"github.com/bulkad/bulkad/core"
	"github.com/pkg/errors"
)

// unaryNames lists the element-wise functions Unary accepts (Gorgonia's unary set).
var unaryNames = [...]string{
	"abs", "sign", "ceil", "floor", "sin", "cos", "exp", "ln", "log2", "neg", "square", "sqrt",
	"inv", "invSqrt", "cube", "tanh", "sigmoid", "log1p", "expm1", "softplus", "erf",
}

// UnaryNames returns the names accepted by Unary.
func UnaryNames() []string { return append([]string{}, unaryNames[:]...) }

// Unary applies the element-wise function name (one of UnaryNames) to the float array x.
//
// The definitions follow Gorgonia v0.9.18 exactly where it deviates from the mathematical
// function: sigmoid is 1 above 19 (15 for float32) and 0 below -709 (-88); softplus is x above
// 16 (14) and 0 below -708 (-103); sign is -1 for negative, 1 for positive and 0 at 0 (the tensor
// kernels' convention).
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
	// masks are the 0/1 arrays x > hi and x ≥ lo, with the float64 or float32 bounds.
	masks := func(lo64, hi64, lo32, hi32 float64) (above, inside core.Term) {
		lo, hi := lo64, hi64
		if t.Dtype == core.Float32 {
			lo, hi = lo32, hi32
		}
		return b.Cast(t.Dtype, b.Binary(core.OpGt, x, lit(hi))), b.Cast(t.Dtype, b.Binary(core.OpGe, x, lit(lo)))
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
		// 1 above hi, 0 below lo, sigmoid x in between; the masks are exact 0/1 factors.
		above, inside := masks(-709, 19, -88, 15)
		r = b.Add(above, b.Mul(b.Mul(b.Sub(lit(1), above), inside), b.Unary(core.OpSigmoid, x)))
	case name == "softplus":
		// x above hi, 0 below lo, log1p (exp x) in between (exp of min x hi cannot overflow).
		above, inside := masks(-708, 16, -103, 14)
		hi := 16.0
		if t.Dtype == core.Float32 {
			hi = 14
		}
		sp := b.Unary(core.OpLog1p, b.Unary(core.OpExp, b.Binary(core.OpMin, x, lit(hi))))
		r = b.Add(b.Mul(above, x), b.Mul(b.Mul(b.Sub(lit(1), above), inside), sp))
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
