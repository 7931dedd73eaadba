package core

import "strings"

// The op-facts table: one entry per element-wise operation holding everything the other
// packages need to know about it — its name, the dtypes it accepts, its reference value
// (what core.Eval computes and every executor must reproduce), whether it maps 0 to 0, its
// cost class, its smoothness and the convention at its kinks, its derivative as terms built
// with a Builder, and the native framework operation it may map to. The tables themselves
// are in opfacts_table.go; TestOpFacts checks that every field of every entry is set, so a
// new operation without a complete entry fails the tests instead of falling back to a
// default somewhere else.

// DtypeSet is a set of dtypes (a bit per Dtype).
type DtypeSet uint8

// Dtype sets used by the tables.
const (
	F64     DtypeSet = 1 << Float64
	F32     DtypeSet = 1 << Float32
	I64     DtypeSet = 1 << Int64
	Bools   DtypeSet = 1 << Bool
	Floats           = F64 | F32
	Numeric          = Floats | I64
	// AnyDtype is every dtype.
	AnyDtype = Numeric | Bools
	// NoDtype is the empty set (an operation that keeps zero for no dtype).
	NoDtype DtypeSet = 0
)

// Has reports whether d is in the set.
func (s DtypeSet) Has(d Dtype) bool { return d.Valid() && s&(1<<d) != 0 }

// String lists the set's dtypes as an error message wants them: "f64, f32 or i64".
func (s DtypeSet) String() string {
	var names []string
	for d := Float64; d <= Bool; d++ {
		if s.Has(d) {
			names = append(names, d.String())
		}
	}
	switch len(names) {
	case 0:
		return "no dtype"
	case 1:
		return names[0]
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

// Cost is the cost class of an element-wise operation; package kernel maps it to the work
// weight that decides when a loop is split across goroutines.
type Cost uint8

// The cost classes (the zero Cost is unset, a missing entry).
const (
	_ Cost = iota
	// CostCheap is a memory-bound operation: a few instructions per element (+, neg, max, <).
	CostCheap
	// CostDivide is a division (/, quot, rem).
	CostDivide
	// CostHeavy is a transcendental function (exp, log, tanh, pow, …).
	CostHeavy
)

// Smoothness classifies an operation's value as a function of real operands.
type Smoothness uint8

// The smoothness classes (the zero Smoothness is unset, a missing entry).
const (
	_ Smoothness = iota
	// Smooth is differentiable everywhere on the domain (singular points such as log 0 or
	// atan2 at the origin are documented in the entry's Kinks).
	Smooth
	// Kinked is continuous with kinks where the one-sided slopes differ (abs, max, min);
	// Kinks says which slope the derivative takes there.
	Kinked
	// PiecewiseConstant has jumps and is constant between them (sign, floor, ceil); its
	// derivative is 0 everywhere, at the jumps included.
	PiecewiseConstant
	// Discrete takes or gives no floats (not, comparisons, and, or, quot, rem): there is no
	// derivative to speak of.
	Discrete
)

// DerivKind is the form of an operation's derivative rule.
type DerivKind uint8

// The forms of derivative rules (the zero DerivKind is unset, a missing entry).
const (
	_ DerivKind = iota
	// NoDeriv: the operation is Discrete; package ad never differentiates it.
	NoDeriv
	// DerivZero: the derivative is 0 everywhere (piecewise constant operations, stopgrad).
	DerivZero
	// DerivLinear: the operation is linear, d = Σ Coef[k] · d operand k (neg, +, -).
	DerivLinear
	// DerivRule: the tangent is Σ factor_k · d operand k with the factors that the entry's
	// rule builds.
	DerivRule
)

// TermBuilder is the part of a Builder that derivative rules use (*Builder implements it;
// the rules reach it through an interface so that the tables do not refer to the
// constructors, which read the tables).
type TermBuilder interface {
	Unary(op UnOp, x Term) Term
	Binary(op BinOp, x, y Term) Term
	Cast(to Dtype, x Term) Term
	Add(x, y Term) Term
	Sub(x, y Term) Term
	Mul(x, y Term) Term
	Div(x, y Term) Term
}

// DerivEnv is what a derivative rule builds its terms with (package ad implements it). The
// terms it returns are the primal values the rule may use; each may be used several times.
type DerivEnv interface {
	// Builder is the builder the rule makes its terms with.
	Builder() TermBuilder
	// X is the (first) operand, as a variable or a literal.
	X() Term
	// Y is the second operand of a binary operation, as a variable or a literal (nil for a
	// unary one).
	Y() Term
	// Result is the operation's value as a variable, bound once and shared with the primal.
	Result() Term
	// Const is the array of the result's type with every element v.
	Const(v float64) Term
	// Atom binds t to a fresh variable (once per term) and returns the variable.
	Atom(t Term) Term
	// Select is element-wise a where mask is true, else b (Builder.Select with fresh names):
	// unlike a product with a 0/1 mask, the branch not selected cannot leak a NaN.
	Select(mask, a, b Term) Term
}

// UnDeriv is the derivative of a unary operation.
type UnDeriv struct {
	Kind DerivKind
	// Coef is the slope of a DerivLinear operation.
	Coef float64
	// Factor builds the derivative f'(x) of a DerivRule operation (the tangent is f'(x)·dx).
	Factor func(e DerivEnv) Term
}

// BinDeriv is the derivative of a binary operation.
type BinDeriv struct {
	Kind DerivKind
	// Coef holds the slopes in x and y of a DerivLinear operation.
	Coef [2]float64
	// Factors builds the partial derivatives ∂f/∂x and ∂f/∂y of a DerivRule operation (the
	// tangent is ∂f/∂x·dx + ∂f/∂y·dy). wantX and wantY say which are needed: a rule may leave
	// the other nil (it must still make the same calls on e, so that names come out alike).
	Factors func(e DerivEnv, wantX, wantY bool) (dx, dy Term)
}

// NoNative is the Native of an operation with no native framework operation.
const NoNative = "none"

// UnFacts are the facts of one unary operation.
type UnFacts struct {
	// Name is the operation's name in the text syntax.
	Name string
	// Dtypes are the operand dtypes it accepts; the result has the operand's type.
	Dtypes DtypeSet
	// Float, Int and Bool are the reference value on one element of each dtype (nil where
	// Dtypes lacks it). Float32 arrays apply Float32 where it is set (a function computed in
	// float32, package internal/vmath's for the transcendentals it vectorises), else Float in
	// float64 and round the result once.
	Float   func(float64) float64
	Float32 func(float32) float32
	Int     func(int64) int64
	Bool    func(bool) bool
	// KeepsZero are the dtypes on which op 0 is exactly 0 (+0 for floats, false for bool): an
	// out-of-bounds read (0) may then be pushed through the operation unguarded (package bot).
	KeepsZero DtypeSet
	// Cost is the cost class of one element.
	Cost Cost
	// Smooth is the smoothness of the value in its float operand.
	Smooth Smoothness
	// Kinks states the convention at kinks, jumps and singular points (the one-sided slope
	// the derivative takes; "" only for an operation smooth on all reals).
	Kinks string
	// Deriv is the derivative rule.
	Deriv UnDeriv
	// Native is the name of the framework (Gorgonia) operation it maps to, NoNative for none:
	// an operation has one only where tests/conformance shows that the framework's op agrees
	// with Eval bit for bit (package raise owns the mapping to functions and may use it at
	// float64 only, where the float32 op computes differently).
	Native string
}

// BinFacts are the facts of one binary operation.
type BinFacts struct {
	// Name is the operation's symbol or name in the text syntax; Word its name in error
	// messages (add, lt, …).
	Name, Word string
	// Infix says the text syntax writes the operation between its operands.
	Infix bool
	// Compare says the result is bool (a comparison); otherwise it has the operands' type.
	Compare bool
	// Dtypes are the operand dtypes it accepts (both operands have the same type).
	Dtypes DtypeSet
	// Float, Int and Bool are the reference value of an operation whose result has the
	// operands' dtype; FloatCmp, IntCmp and Bool (bool operands) that of a comparison. Each
	// is nil where Dtypes lacks the dtype. Float32 arrays apply Float in float64 and round the
	// result once.
	Float    func(x, y float64) float64
	Int      func(x, y int64) int64
	Bool     func(x, y bool) bool
	FloatCmp func(x, y float64) bool
	IntCmp   func(x, y int64) bool
	// KeepsZero says op 0 0 is exactly 0 (+0 for floats, false for bool) on every accepted
	// dtype.
	KeepsZero bool
	// Cost is the cost class of one element.
	Cost Cost
	// Smooth is the smoothness of the value in its float operands.
	Smooth Smoothness
	// Kinks states the convention at kinks, ties and singular points ("" only for an
	// operation smooth on all reals).
	Kinks string
	// Deriv is the derivative rule.
	Deriv BinDeriv
	// Native is the name of the framework (Gorgonia) operation it may map to (NoNative for
	// none), as for UnFacts.
	Native string
}

// Facts returns the operation's entry of the op-facts table (the zero UnFacts for an
// invalid operation).
func (o UnOp) Facts() UnFacts {
	if o > 0 && o < numUnOps {
		return unFacts[o]
	}
	return UnFacts{}
}

// Facts returns the operation's entry of the op-facts table (the zero BinFacts for an
// invalid operation).
func (o BinOp) Facts() BinFacts {
	if o > 0 && o < numBinOps {
		return binFacts[o]
	}
	return BinFacts{}
}

// Accepts reports whether the operation takes operands of dtype d.
func (o UnOp) Accepts(d Dtype) bool { return o.Facts().Dtypes.Has(d) }

// Accepts reports whether the operation takes operands of dtype d.
func (o BinOp) Accepts(d Dtype) bool { return o.Facts().Dtypes.Has(d) }

// FloatFunc returns the operation on one float64 element (nil for an operation that takes
// no floats): the one statement of each float unary operation's value, read by the
// reference evaluator and by package kernel. Float32 arrays apply it in float64 and round
// the result once.
func (o UnOp) FloatFunc() func(float64) float64 { return o.Facts().Float }

// Float32Func returns the operation on one float32 element: Float32 of its facts where set,
// else Float in float64 rounded once.
func (o UnOp) Float32Func() func(float32) float32 {
	f := o.Facts()
	if f.Float32 != nil {
		return f.Float32
	}
	if f.Float == nil {
		return nil
	}
	return func(x float32) float32 { return float32(f.Float(float64(x))) }
}

// IntFunc returns the operation on one int64 element (neg, abs, sign; nil for the others):
// the one statement of each integer unary operation's value (two's complement: neg and abs
// of math.MinInt64 give math.MinInt64), read by the reference evaluator, the simplifier and
// package kernel.
func (o UnOp) IntFunc() func(int64) int64 { return o.Facts().Int }

// FloatFunc returns the arithmetic operation on one pair of float64 elements (nil for a
// comparison or an operation that takes no floats). Float32 arrays apply it in float64 and
// round the result once.
func (o BinOp) FloatFunc() func(x, y float64) float64 { return o.Facts().Float }

// IntFunc returns the arithmetic operation on one pair of int64 elements (+ - * max min quot
// rem; nil for the others): quot truncates toward zero and rem has the sign of the dividend
// (Go's / and %), both give 0 when dividing by zero.
func (o BinOp) IntFunc() func(x, y int64) int64 { return o.Facts().Int }
