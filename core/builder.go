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

func keep[T Term](b *Builder, t T, err error) Term {
	if err != nil {
		b.SetErr(err)
		return nil
	}
	return t
}

// Var makes a variable (see NewVar).
func (b *Builder) Var(name string, t Type) *Var {
	if b.err != nil {
		return nil
	}
	v, err := NewVar(name, t)
	if err != nil {
		b.SetErr(err)
		return nil
	}
	return v
}

// Let makes let v = bound in body.
func (b *Builder) Let(v *Var, bound, body Term) Term {
	if v == nil || !b.ok(bound, body) {
		b.ok(nil)
		return nil
	}
	t, err := NewLet(v, bound, body)
	return keep(b, t, err)
}

// Cond makes cond c u v.
func (b *Builder) Cond(c, u, v Term) Term {
	if !b.ok(c, u, v) {
		return nil
	}
	t, err := NewCond(c, u, v)
	return keep(b, t, err)
}

// Unary makes op x.
func (b *Builder) Unary(op UnOp, x Term) Term {
	if !b.ok(x) {
		return nil
	}
	t, err := NewUnary(op, x)
	return keep(b, t, err)
}

// Cast makes cast to x.
func (b *Builder) Cast(to Dtype, x Term) Term {
	if !b.ok(x) {
		return nil
	}
	t, err := NewCast(to, x)
	return keep(b, t, err)
}

// Binary makes x op y.
func (b *Builder) Binary(op BinOp, x, y Term) Term {
	if !b.ok(x, y) {
		return nil
	}
	t, err := NewBinary(op, x, y)
	return keep(b, t, err)
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
	if !b.ok(x) || !b.ok(ix...) {
		return nil
	}
	t, err := NewIndex(x, ix)
	return keep(b, t, err)
}

// SumOuter makes sumOuter x.
func (b *Builder) SumOuter(x Term) Term {
	if !b.ok(x) {
		return nil
	}
	t, err := NewSumOuter(x)
	return keep(b, t, err)
}

// ArgmaxOuter makes argmaxOuter x.
func (b *Builder) ArgmaxOuter(x Term) Term {
	if !b.ok(x) {
		return nil
	}
	t, err := NewArgmaxOuter(x)
	return keep(b, t, err)
}

// IndexFn makes \[vars] -> [out].
func (b *Builder) IndexFn(vars []*Var, out ...Term) *IndexFn {
	if !b.ok(out...) {
		return nil
	}
	f, err := NewIndexFn(vars, out)
	if err != nil {
		b.SetErr(err)
		return nil
	}
	return f
}

// Gather makes gather sh x fn.
func (b *Builder) Gather(sh Shape, x Term, fn *IndexFn) Term {
	if !b.ok(x) || fn == nil {
		b.ok(nil)
		return nil
	}
	t, err := NewGather(sh, x, fn)
	return keep(b, t, err)
}

// Scatter makes scatter sh x fn.
func (b *Builder) Scatter(sh Shape, x Term, fn *IndexFn) Term {
	if !b.ok(x) || fn == nil {
		b.ok(nil)
		return nil
	}
	t, err := NewScatter(sh, x, fn)
	return keep(b, t, err)
}

// FromVector makes [elems…].
func (b *Builder) FromVector(elems ...Term) Term {
	if !b.ok(elems...) {
		return nil
	}
	t, err := NewFromVector(elems)
	return keep(b, t, err)
}

// Replicate makes replicate n x.
func (b *Builder) Replicate(n int, x Term) Term {
	if !b.ok(x) {
		return nil
	}
	t, err := NewReplicate(n, x)
	return keep(b, t, err)
}

// Transpose makes tr perm x.
func (b *Builder) Transpose(perm []int, x Term) Term {
	if !b.ok(x) {
		return nil
	}
	t, err := NewTranspose(perm, x)
	return keep(b, t, err)
}

// Reshape makes reshape sh x.
func (b *Builder) Reshape(sh Shape, x Term) Term {
	if !b.ok(x) {
		return nil
	}
	t, err := NewReshape(sh, x)
	return keep(b, t, err)
}

// Build1 makes build1 n (\v -> body).
func (b *Builder) Build1(n int, v *Var, body Term) Term {
	if v == nil || !b.ok(body) {
		b.ok(nil)
		return nil
	}
	t, err := NewBuild1(n, v, body)
	return keep(b, t, err)
}

// Iota makes iota n.
func (b *Builder) Iota(n int) Term {
	if b.err != nil {
		return nil
	}
	t, err := NewIota(n)
	return keep(b, t, err)
}

// MatMul makes matmul x y.
func (b *Builder) MatMul(x, y Term) Term {
	if !b.ok(x, y) {
		return nil
	}
	t, err := NewMatMul(x, y)
	return keep(b, t, err)
}

// Share makes share id body.
func (b *Builder) Share(id int, body Term) Term {
	if !b.ok(body) {
		return nil
	}
	t, err := NewShare(id, body)
	return keep(b, t, err)
}

// Tuple makes a result tuple.
func (b *Builder) Tuple(elems ...Term) Term {
	if !b.ok(elems...) {
		return nil
	}
	t, err := NewTuple(elems)
	return keep(b, t, err)
}

// Rebuild is Rebuild with the sticky error.
func (b *Builder) Rebuild(t Term, kids []Term) Term {
	if !b.ok(t) || !b.ok(kids...) {
		return nil
	}
	r, err := Rebuild(t, kids)
	return keep(b, r, err)
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
