package core

import "fmt"

// Term is a node of the core language (paper 000, Fig. 7). Every construct has its own Go
// type (go/ast style); a switch on the concrete type is the way to inspect a term.
//
// Terms are immutable DAGs: a subterm may be shared by pointer, and every traversal in this
// module is linear in the number of distinct nodes. Build terms only through the constructors
// (NewBinary, NewGather, …, or a Builder): they check the typing rules of Fig. 8 and cache the
// result type. A term built as a struct literal has no type and is rejected by the checkers.
type Term interface {
	// Type is the array type of the term (shape and dtype). A Tuple has no array type and
	// returns the zero Type; use Tuple.Types.
	Type() Type
	String() string
	// base is the term's embedded node: its identity as a pointer, a cheaper map key than
	// the interface value (one word, hashed as a pointer).
	base() *node
}

// node carries the cached result type of every term.
type node struct{ typ Type }

func (n *node) Type() Type  { return n.typ }
func (n *node) base() *node { return n }

// Var is a variable reference (and, in Let, Build1, IndexFn and Program.Params, a binder).
// Variables are identified by name; two Var values with the same name in the same scope
// denote the same variable.
type Var struct {
	node
	Name string
}

// Lit is a literal array. Floating literals keep their values in F (float32 literals hold
// values exactly representable as float32), Int64 literals in I, Bool literals in B, all in
// row-major order; exactly one of the three is non-nil.
type Lit struct {
	node
	F []float64
	I []int64
	B []bool
}

// Let binds Var to Bound in Body (let x = u in v).
type Let struct {
	node
	Var   *Var
	Bound Term
	Body  Term
}

// Share is global sharing (paper 000 §2.5, §7.3): all Share nodes with the same ID denote the
// same value, computed once. IDs are generated per transformation, never globally.
type Share struct {
	node
	ID   int
	Body Term
}

// Cond is the strict conditional cond c u v (c : [] bool; u and v of equal type). Both
// branches are evaluated (§5.2).
type Cond struct {
	node
	C, Then, Else Term
}

// UnOp names an element-wise unary operation.
type UnOp uint8

// The element-wise unary operations.
const (
	OpNeg UnOp = iota + 1
	OpAbs
	OpSign
	OpExp
	OpLog
	OpSqrt
	OpSin
	OpCos
	OpTan
	OpTanh
	OpSigmoid
	OpRecip
	OpFloor
	OpCeil
	OpLog1p
	OpExpm1
	OpNot
	// OpErf is the error function erf x = 2/√π ∫₀ˣ e^(−t²) dt (ONNX Erf; GELU is written with it).
	OpErf
	// OpStopGrad is the identity whose derivative is taken to be zero (stop-gradient). It is
	// only sound where the result does not depend on its operand's value, like the shift of a
	// stable softmax or logsumexp (exp(x − m) / Σ exp(x − m) is the same for every m): there
	// it spares the derivative of the shift (an argmax, a gather and a scatter of a cotangent
	// that is zero up to rounding). Finite differences see the identity, so generators of
	// programs for derivative checks leave it out.
	OpStopGrad
	// OpAtan is the arctangent, with values in [-π/2, π/2] (ONNX Atan).
	OpAtan
	numUnOps
)

// String returns the operation's name in the text syntax.
func (o UnOp) String() string { return opString(o.Facts().Name, "unop", o) }

// UnOps lists every unary operation (for tables and generators).
func UnOps() []UnOp { return allOps(numUnOps) }

// ParseUnOp looks an operation up by its name in the text syntax.
func ParseUnOp(s string) (UnOp, bool) {
	return lookupOp[UnOp](unFacts[:], func(f *UnFacts) string { return f.Name }, s)
}

// Unary is an element-wise unary operation; the result has the operand's type.
type Unary struct {
	node
	Op UnOp
	X  Term
}

// Cast converts every element to dtype To. Float→int truncates toward zero (NaN and values
// outside the int64 range give 0); bool→number gives 0 or 1; number→bool tests x != 0.
type Cast struct {
	node
	To Dtype
	X  Term
}

// BinOp names an element-wise binary operation.
type BinOp uint8

// The element-wise binary operations. Both operands have the same type; comparisons return bool.
const (
	OpAdd BinOp = iota + 1
	OpSub
	OpMul
	OpDiv
	OpPow
	OpMax
	OpMin
	OpAtan2
	OpQuot
	OpRem
	OpLt
	OpLe
	OpGt
	OpGe
	OpEq
	OpNe
	OpAnd
	OpOr
	numBinOps
)

// String returns the operation's symbol or name in the text syntax.
func (o BinOp) String() string { return opString(o.Facts().Name, "binop", o) }

// Word returns the operation's name as used in error messages (add, sub, lt, …).
func (o BinOp) Word() string {
	if o > 0 && o < numBinOps {
		return binFacts[o].Word
	}
	return o.String()
}

// BinOps lists every binary operation.
func BinOps() []BinOp { return allOps(numBinOps) }

// ParseBinOp looks an operation up by its symbol or name in the text syntax.
func ParseBinOp(s string) (BinOp, bool) {
	return lookupOp[BinOp](binFacts[:], func(f *BinFacts) string { return f.Name }, s)
}

// opString is the String of an operation of a kind (unop, binop) whose facts give it name:
// the name, or kind(o) for an invalid operation (which has none).
func opString[O ~uint8](name, kind string, o O) string {
	if name != "" {
		return name
	}
	return fmt.Sprintf("%s(%d)", kind, uint8(o))
}

// allOps lists the operations of a kind numbered 1 to n-1 (n is the kind's numUnOps or
// numBinOps).
func allOps[O ~uint8](n O) []O {
	ops := make([]O, 0, n-1)
	for o := O(1); o < n; o++ {
		ops = append(ops, o)
	}
	return ops
}

// lookupOp returns the operation whose name is s in an operation kind's facts table
// (indexed by operation from 1).
func lookupOp[O ~uint8, F any](facts []F, name func(*F) string, s string) (O, bool) {
	for o := 1; o < len(facts); o++ {
		if name(&facts[o]) == s {
			return O(o), true
		}
	}
	return 0, false
}

// IsInfix reports whether the text syntax writes the operation between its operands.
func (o BinOp) IsInfix() bool { return o.Facts().Infix }

// IsComparison reports whether the operation returns bool from numeric (or bool, for == and !=) operands.
func (o BinOp) IsComparison() bool { return o.Facts().Compare }

// Converse is the comparison that holds for (b, a) exactly when o holds for (a, b): < and >,
// ≤ and ≥ swap, == and != are their own. Any other operation is returned as it is.
func (o BinOp) Converse() BinOp {
	switch o {
	case OpLt:
		return OpGt
	case OpGt:
		return OpLt
	case OpLe:
		return OpGe
	case OpGe:
		return OpLe
	}
	return o
}

// Binary is an element-wise binary operation on two operands of equal type.
type Binary struct {
	node
	Op   BinOp
	X, Y Term
}

// Index projects the subarray at a (possibly partial) index: index t [e1, …, em].
// Out-of-bounds indices give zeros (§5.2).
type Index struct {
	node
	X  Term
	Ix []Term
}

// SumOuter sums along the outermost dimension.
type SumOuter struct {
	node
	X Term
}

// ArgmaxOuter returns, for every position of the inner dimensions, the index along the
// outermost dimension of the largest element (the first one on ties; NaN is never the
// maximum unless all are NaN, then 0; an empty outer dimension gives 0). The result is i64.
type ArgmaxOuter struct {
	node
	X Term
}

// IndexFn is an index function \[i1,…,in] -> [e1,…,em]: Vars are i64 scalar binders and Out
// are i64 scalar terms. Index functions are never differentiated (§6.3).
type IndexFn struct {
	Vars []*Var
	Out  []Term
}

// Gather is gather sh t f: result[is ++ rest] = t[f(is) ++ rest]; out-of-bounds reads give 0.
type Gather struct {
	node
	Shape Shape
	X     Term
	Fn    *IndexFn
}

// Scatter is scatter sh t f: result[f(is) ++ rest] += t[is ++ rest]; out-of-range writes are
// dropped and colliding writes are added.
type Scatter struct {
	node
	Shape Shape
	X     Term
	Fn    *IndexFn
}

// FromVector stacks n ≥ 1 arrays of equal type into one with a new outermost dimension n.
type FromVector struct {
	node
	Elems []Term
}

// Replicate adds an outermost dimension of size N holding copies of X.
type Replicate struct {
	node
	N int
	X Term
}

// Transpose is the generalised transpose tr [j1,…,jm] t (§3.2): the result's dimension p is
// the operand's dimension Perm[p] for p < m; dimensions from m on are unchanged.
type Transpose struct {
	node
	Perm []int
	X    Term
}

// Reshape reinterprets the row-major elements of X with a new shape of equal size.
type Reshape struct {
	node
	Shape Shape
	X     Term
}

// Build1 is build1 N (\Var -> Body): an array whose outermost index i holds Body[Var := i].
type Build1 struct {
	node
	N    int
	Var  *Var
	Body Term
}

// Iota is [0, 1, …, N-1] as an i64 vector.
type Iota struct {
	node
	N int
}

// MatMul is the backend primitive matrix product of X : [m,k] and Y : [k,n], or, batched, of
// X : B ++ [m,k] and Y : B ++ [k,n] with equal batch dimensions B: the result B ++ [m,n] holds
// at every batch position b the product of X's and Y's matrices at b.
//
// The batched form is the same term kind rather than a separate one: its typing, meaning, BOT
// rules and derivative are those of the 2-D product applied per batch position (the 2-D
// product is the batched one with no batch dimensions), so every pass has one rule for both,
// and a matmul under build1 whose operands both depend on the build variable vectorises to
// one (a batch dimension more) instead of a materialised product of rank 4.
type MatMul struct {
	node
	X, Y Term
}

// Tuple groups several results. It may only be the body of a program (possibly under lets);
// it is how gradient programs return the value and the gradients together.
type Tuple struct {
	node
	Elems []Term
}

// Types returns the types of the tuple's components.
func (t *Tuple) Types() []Type {
	ts := make([]Type, len(t.Elems))
	for i, e := range t.Elems {
		ts[i] = e.Type()
	}
	return ts
}

// Program is a closed core program: fn (params) => body.
type Program struct {
	Params []*Var
	Body   Term
	// checked is set by NewProgram, which checks the program: Check of the same body (terms
	// are immutable) and the same parameters does not walk the body again.
	checked *checkedProgram
}

// checkedProgram is what NewProgram checked: the body, a copy of the parameter list and the
// number of (node, scope) pairs the check visited.
type checkedProgram struct {
	body   Term
	params []*Var
	size   int
}

// Param returns the parameter with the given name, or nil.
func (p *Program) Param(name string) *Var {
	for _, v := range p.Params {
		if v.Name == name {
			return v
		}
	}
	return nil
}
