package lower

import (
	"fmt"

	"github.com/bulkad/bulkad/core"
	"github.com/pkg/errors"
)

// wrap prefixes the first error of a builder with the operation's name.
func wrap(op string, b *core.Builder) error {
	if err := b.Err(); err != nil {
		return errors.Wrapf(err, "lower: %s", op)
	}
	return nil
}

// result returns t, or the builder's first error prefixed with op.
func result(op string, b *core.Builder, t core.Term) (core.Term, error) {
	if err := wrap(op, b); err != nil {
		return nil, err
	}
	if t == nil {
		return nil, errors.Errorf("lower: %s: no result", op)
	}
	return t, nil
}

// checkTerm rejects nil and untyped operands before any work is done.
func checkTerm(op string, ts ...core.Term) error {
	for k, t := range ts {
		if t == nil {
			return errors.Errorf("lower: %s: operand %d is nil", op, k)
		}
		if !t.Type().Dtype.Valid() {
			return errors.Errorf("lower: %s: operand %d (%T) has no array type", op, k, t)
		}
	}
	return nil
}

// indexVars makes n i64 scalar binders for an index function. Their names end in a prime so
// they cannot capture variables named by adapters (which never use primes).
func indexVars(b *core.Builder, n int) ([]*core.Var, []core.Term) {
	vs := make([]*core.Var, n)
	ts := make([]core.Term, n)
	for i := range vs {
		vs[i] = b.Var(fmt.Sprintf("k%d'", i), core.Scalar(core.Int64))
		ts[i] = vs[i]
	}
	return vs, ts
}

// affine is a*v + c on i64 scalars, without the multiplications by 1 and additions of 0.
func affine(b *core.Builder, v core.Term, a, c int64) core.Term {
	t := v
	switch a {
	case 0:
		return core.ScalarI(c)
	case 1:
	default:
		t = b.Mul(core.ScalarI(a), t)
	}
	if c != 0 {
		t = b.Add(t, core.ScalarI(c))
	}
	return t
}

// addIx adds two i64 index terms.
func addIx(b *core.Builder, x, y core.Term) core.Term { return b.Add(x, y) }

// FullLike is the array of type t with every element v, built as a scalar literal replicated
// to the shape (so its size does not grow with the shape).
func FullLike(t core.Type, v float64) (core.Term, error) {
	var b core.Builder
	return result("full", &b, b.Full(t, v))
}

// BroadcastScalar replicates the rank-0 term s to shape sh.
func BroadcastScalar(s core.Term, sh core.Shape) (core.Term, error) {
	if err := checkTerm("broadcast scalar", s); err != nil {
		return nil, err
	}
	if !s.Type().IsScalar() {
		return nil, errors.Errorf("lower: broadcast scalar: operand has shape %v, want []", s.Type().Shape)
	}
	var b core.Builder
	t := s
	for i := len(sh) - 1; i >= 0; i-- {
		t = b.Replicate(sh[i], t)
	}
	return result("broadcast scalar", &b, t)
}

// moveToFront returns the permutation that brings axes (in the given order) to the front and
// keeps the other axes in order after them, after checking the axes against rank r.
func moveToFront(op string, axes []int, r int) ([]int, error) {
	seen := make([]bool, r)
	perm := make([]int, 0, r)
	for _, a := range axes {
		if a < 0 || a >= r {
			return nil, errors.Errorf("lower: %s: axis %d out of range for rank %d", op, a, r)
		}
		if seen[a] {
			return nil, errors.Errorf("lower: %s: axis %d given twice in %v", op, a, axes)
		}
		seen[a] = true
		perm = append(perm, a)
	}
	for a := 0; a < r; a++ {
		if !seen[a] {
			perm = append(perm, a)
		}
	}
	return perm, nil
}

// isIdentity reports whether perm is 0, 1, …, len-1.
func isIdentity(perm []int) bool {
	for i, p := range perm {
		if p != i {
			return false
		}
	}
	return true
}

// transposeIfNeeded applies tr perm unless perm is the identity.
func transposeIfNeeded(b *core.Builder, perm []int, x core.Term) core.Term {
	if isIdentity(perm) {
		return x
	}
	return b.Transpose(perm, x)
}

// reshapeIfNeeded applies reshape unless x already has shape sh.
func reshapeIfNeeded(b *core.Builder, sh core.Shape, x core.Term) core.Term {
	if x != nil && x.Type().Shape.Equal(sh) {
		return x
	}
	return b.Reshape(sh, x)
}

func prod(xs []int) int {
	n := 1
	for _, x := range xs {
		n *= x
	}
	return n
}

// Expand inserts a new dimension of size n at position axis (0 ≤ axis ≤ rank x) holding
// copies of x: the broadcast that undoes a reduction along axis.
func Expand(x core.Term, axis, n int) (core.Term, error) {
	if err := checkTerm("expand", x); err != nil {
		return nil, err
	}
	r := x.Type().Shape.Rank()
	if axis < 0 || axis > r {
		return nil, errors.Errorf("lower: expand: axis %d out of range for shape %v", axis, x.Type().Shape)
	}
	var b core.Builder
	t := b.Replicate(n, x)
	if axis > 0 {
		perm := make([]int, axis+1)
		for p := 0; p < axis; p++ {
			perm[p] = p + 1
		}
		perm[axis] = 0
		t = b.Transpose(perm, t)
	}
	return result("expand", &b, t)
}

// Broadcast extends x to shape sh with NumPy's rule: x's shape is aligned with the end of sh
// and each of its dimensions either equals sh's or is 1 (then repeated).
func Broadcast(x core.Term, sh core.Shape) (core.Term, error) {
	if err := checkTerm("broadcast", x); err != nil {
		return nil, err
	}
	xs := x.Type().Shape
	if xs.Equal(sh) {
		return x, nil
	}
	if len(xs) > len(sh) {
		return nil, errors.Errorf("lower: broadcast: cannot broadcast shape %v to %v", xs, sh)
	}
	off := len(sh) - len(xs)
	var b core.Builder
	if xs.Size() == 1 {
		s := reshapeIfNeeded(&b, core.Shape{}, x)
		if err := wrap("broadcast", &b); err != nil {
			return nil, err
		}
		return BroadcastScalar(s, sh)
	}
	vs, ts := indexVars(&b, len(sh))
	out := make([]core.Term, len(xs))
	for j, k := range xs {
		switch k {
		case sh[j+off]:
			out[j] = ts[j+off]
		case 1:
			out[j] = core.ScalarI(0)
		default:
			return nil, errors.Errorf("lower: broadcast: cannot broadcast shape %v to %v (dimension %d)", xs, sh, j)
		}
	}
	t := b.Gather(sh, x, b.IndexFn(vs, out...))
	return result("broadcast", &b, t)
}

// keep returns a function that records an error in b (the first one wins) and passes the
// term on: lowering code written with a Builder calls the lower functions that return
// errors through it, k(Sum(x, 1)).
func keep(b *core.Builder) func(core.Term, error) core.Term {
	return func(t core.Term, err error) core.Term {
		b.SetErr(err)
		return t
	}
}
