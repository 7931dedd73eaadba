package core

import "github.com/pkg/errors"

// Builder wraps the constructors with a sticky error, for code that builds many terms in a
// row (lower, bot, ad): after the first failure every method returns nil and Err reports the
// first error. A nil operand (from an earlier failure) makes a method return nil too.
//
//	var b core.Builder
//	t := b.Add(b.Mul(x, y), b.Replicate(3, one))
//	if err := b.Err(); err != nil { … }
type Builder struct{ err error }

// Err returns the first error met, or nil.
func (b *Builder) Err() error { return b.err }

// SetErr records err if no error was recorded yet (for callers' own checks).
func (b *Builder) SetErr(err error) {
	if b.err == nil {
		b.err = err
	}
}

func (b *Builder) ok(ts ...Term) bool {
	if b.err != nil {
		return false
	}
	for _, t := range ts {
		if t == nil {
			if b.err == nil {
				b.err = nilErr("builder", "operand")
			}
			return false
		}
	}
	return true
}

// kept returns t, or (after recording err) the zero T: for the methods that return a concrete
// type (*Var, *IndexFn).
func kept[T any](b *Builder, t T, err error) T {
	if err != nil {
		b.SetErr(err)
		var zero T
		return zero
	}
	return t
}

// keep is kept for a term returned as a Term, so that a failure gives a nil interface (not a
// typed nil pointer).
func keep[T Term](b *Builder, t T, err error) Term {
	if err != nil {
		b.SetErr(err)
		return nil
	}
	return t
}

// build is the body of the Builder methods: unless an error is recorded or an operand is nil
// (see ok), it runs the constructor mk and keeps its result (see keep).
func build[T Term](b *Builder, mk func() (T, error), operands ...Term) Term {
	if !b.ok(operands...) {
		return nil
	}
	t, err := mk()
	return keep(b, t, err)
}

// missing records the nil-operand error for a nil operand that is not a Term (a variable or
// an index function) and returns nil.
func (b *Builder) missing() Term {
	b.ok(nil)
	return nil
}

// Var makes a variable (see NewVar).
func (b *Builder) Var(name string, t Type) *Var {
	if b.err != nil {
		return nil
	}
	v, err := NewVar(name, t)
	return kept(b, v, err)
}

// Let makes let v = bound in body.
func (b *Builder) Let(v *Var, bound, body Term) Term {
	if v == nil {
		return b.missing()
	}
	return build(b, func() (*Let, error) { return NewLet(v, bound, body) }, bound, body)
}

// Cond makes cond c u v.
func (b *Builder) Cond(c, u, v Term) Term {
	return build(b, func() (*Cond, error) { return NewCond(c, u, v) }, c, u, v)
}

// Unary makes op x.
func (b *Builder) Unary(op UnOp, x Term) Term {
	return build(b, func() (*Unary, error) { return NewUnary(op, x) }, x)
}

// Cast makes cast to x.
func (b *Builder) Cast(to Dtype, x Term) Term {
	return build(b, func() (*Cast, error) { return NewCast(to, x) }, x)
}

// Binary makes x op y.
func (b *Builder) Binary(op BinOp, x, y Term) Term {
	return build(b, func() (*Binary, error) { return NewBinary(op, x, y) }, x, y)
}

// Add is x + y.
func (b *Builder) Add(x, y Term) Term { return b.Binary(OpAdd, x, y) }

// Sub is x - y.
func (b *Builder) Sub(x, y Term) Term { return b.Binary(OpSub, x, y) }

// Mul is x * y.
func (b *Builder) Mul(x, y Term) Term { return b.Binary(OpMul, x, y) }

// Div is x / y.
func (b *Builder) Div(x, y Term) Term { return b.Binary(OpDiv, x, y) }

// Index makes index x ix.
func (b *Builder) Index(x Term, ix ...Term) Term {
	if !b.ok(x) {
		return nil
	}
	return build(b, func() (*Index, error) { return NewIndex(x, ix) }, ix...)
}

// SumOuter makes sumOuter x.
func (b *Builder) SumOuter(x Term) Term {
	return build(b, func() (*SumOuter, error) { return NewSumOuter(x) }, x)
}

// ArgmaxOuter makes argmaxOuter x.
func (b *Builder) ArgmaxOuter(x Term) Term {
	return build(b, func() (*ArgmaxOuter, error) { return NewArgmaxOuter(x) }, x)
}

// IndexFn makes \[vars] -> [out].
func (b *Builder) IndexFn(vars []*Var, out ...Term) *IndexFn {
	if !b.ok(out...) {
		return nil
	}
	f, err := NewIndexFn(vars, out)
	return kept(b, f, err)
}

// Gather makes gather sh x fn.
func (b *Builder) Gather(sh Shape, x Term, fn *IndexFn) Term {
	if fn == nil {
		return b.missing()
	}
	return build(b, func() (*Gather, error) { return NewGather(sh, x, fn) }, x)
}

// Scatter makes scatter sh x fn.
func (b *Builder) Scatter(sh Shape, x Term, fn *IndexFn) Term {
	if fn == nil {
		return b.missing()
	}
	return build(b, func() (*Scatter, error) { return NewScatter(sh, x, fn) }, x)
}

// FromVector makes [elems…].
func (b *Builder) FromVector(elems ...Term) Term {
	return build(b, func() (*FromVector, error) { return NewFromVector(elems) }, elems...)
}

// Replicate makes replicate n x.
func (b *Builder) Replicate(n int, x Term) Term {
	return build(b, func() (*Replicate, error) { return NewReplicate(n, x) }, x)
}

// Transpose makes tr perm x.
func (b *Builder) Transpose(perm []int, x Term) Term {
	return build(b, func() (*Transpose, error) { return NewTranspose(perm, x) }, x)
}

// Reshape makes reshape sh x.
func (b *Builder) Reshape(sh Shape, x Term) Term {
	return build(b, func() (*Reshape, error) { return NewReshape(sh, x) }, x)
}

// Build1 makes build1 n (\v -> body).
func (b *Builder) Build1(n int, v *Var, body Term) Term {
	if v == nil {
		return b.missing()
	}
	return build(b, func() (*Build1, error) { return NewBuild1(n, v, body) }, body)
}

// Iota makes iota n.
func (b *Builder) Iota(n int) Term {
	return build(b, func() (*Iota, error) { return NewIota(n) })
}

// MatMul makes matmul x y.
func (b *Builder) MatMul(x, y Term) Term {
	return build(b, func() (*MatMul, error) { return NewMatMul(x, y) }, x, y)
}

// Share makes share id body.
func (b *Builder) Share(id int, body Term) Term {
	return build(b, func() (*Share, error) { return NewShare(id, body) }, body)
}

// Tuple makes a result tuple.
func (b *Builder) Tuple(elems ...Term) Term {
	return build(b, func() (*Tuple, error) { return NewTuple(elems) }, elems...)
}

// Rebuild is Rebuild with the sticky error.
// The walkers of ad call it on every node: t is checked apart so that the operands need no
// new slice.
func (b *Builder) Rebuild(t Term, kids []Term) Term {
	if !b.ok(t) {
		return nil
	}
	return build(b, func() (Term, error) { return Rebuild(t, kids) }, kids...)
}

// Full is the array of type t with every element v, a scalar literal replicated to t's shape
// (so its size does not grow with the shape): v converted to t's dtype (truncated for i64,
// v ≠ 0 for bool).
func (b *Builder) Full(t Type, v float64) Term {
	var c Term
	switch t.Dtype {
	case Float64, Float32:
		c = ScalarF(t.Dtype, v)
	case Int64:
		c = ScalarI(int64(v))
	case Bool:
		c = ScalarB(v != 0)
	default:
		b.SetErr(errors.Errorf("core: full: invalid dtype %v", t.Dtype))
		return nil
	}
	for k := len(t.Shape) - 1; k >= 0; k-- {
		c = b.Replicate(t.Shape[k], c)
	}
	return c
}

// Select is element-wise x where mask (bool, the shape of x and y) is true, else y. It is a
// gather from [y, x] at the mask's value, so a NaN or infinity in the branch not selected
// does not reach the result (a product with a 0/1 mask would let it through). The gather's
// index function indexes mask at every point: pass a variable or a literal (or bind the mask
// with a let first). Its index variables are fresh names from namer.
func (b *Builder) Select(namer *Namer, mask, x, y Term) Term {
	if !b.ok(mask, x, y) {
		return nil
	}
	sh := mask.Type().Shape
	if len(sh) == 0 {
		return b.Cond(mask, x, y)
	}
	vars := make([]*Var, len(sh))
	ix := make([]Term, len(sh))
	for k := range sh {
		vars[k] = namer.FreshVar("w", Scalar(Int64))
		ix[k] = vars[k]
	}
	sel := b.Cast(Int64, b.Index(mask, ix...))
	return b.Gather(sh, b.FromVector(y, x), b.IndexFn(vars, append([]Term{sel}, ix...)...))
}
