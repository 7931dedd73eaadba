package lower

import (
	"github.com/bulkad/bulkad/core"
	"github.com/pkg/errors"
)

// Reshape reinterprets x's row-major elements with shape sh.
func Reshape(x core.Term, sh core.Shape) (core.Term, error) {
	if err := checkTerm("reshape", x); err != nil {
		return nil, err
	}
	var b core.Builder
	return result("reshape", &b, reshapeIfNeeded(&b, sh, x))
}

// Transpose permutes all of x's dimensions: result dimension i is x's dimension perm[i].
func Transpose(x core.Term, perm []int) (core.Term, error) {
	if err := checkTerm("transpose", x); err != nil {
		return nil, err
	}
	if len(perm) != x.Type().Shape.Rank() {
		return nil, errors.Errorf("lower: transpose: permutation %v for shape %v", perm, x.Type().Shape)
	}
	var b core.Builder
	return result("transpose", &b, transposeIfNeeded(&b, perm, x))
}

// Slice selects n positions start, start+step, … along axis. With keepDim false (n must be
// 1) the axis disappears, as with an integer index.
func Slice(x core.Term, axis, start, step, n int, keepDim bool) (core.Term, error) {
	if err := checkTerm("slice", x); err != nil {
		return nil, err
	}
	xs := x.Type().Shape
	if axis < 0 || axis >= xs.Rank() {
		return nil, errors.Errorf("lower: slice: axis %d out of range for shape %v", axis, xs)
	}
	if step < 1 || n < 0 || start < 0 || (n > 0 && start+(n-1)*step >= xs[axis]) {
		return nil, errors.Errorf("lower: slice: %d positions from %d in steps of %d out of range for axis %d of shape %v", n, start, step, axis, xs)
	}
	if !keepDim && n != 1 {
		return nil, errors.Errorf("lower: slice: dropping axis %d needs exactly one position, got %d", axis, n)
	}
	var b core.Builder
	var t core.Term
	if !keepDim {
		// index the axis away: move it to the front and index there.
		perm, _ := moveToFront("slice", []int{axis}, xs.Rank())
		t = b.Index(transposeIfNeeded(&b, perm, x), core.ScalarI(int64(start)))
		return result("slice", &b, t)
	}
	vs, ts := indexVars(&b, axis+1)
	out := append([]core.Term{}, ts...)
	out[axis] = affine(&b, ts[axis], int64(step), int64(start))
	sh := xs.Clone()
	sh[axis] = n
	t = b.Gather(sh, x, b.IndexFn(vs, out...))
	return result("slice", &b, t)
}

// Concat joins arrays of one dtype along axis; their other dimensions must agree. Booleans
// are joined as 0/1 integers and cast back.
func Concat(axis int, xs ...core.Term) (core.Term, error) {
	if len(xs) == 0 {
		return nil, errors.New("lower: concat: no operands")
	}
	if err := checkTerm("concat", xs...); err != nil {
		return nil, err
	}
	s0 := xs[0].Type().Shape
	if axis < 0 || axis >= s0.Rank() {
		return nil, errors.Errorf("lower: concat: axis %d out of range for shape %v", axis, s0)
	}
	total := 0
	for _, x := range xs {
		s := x.Type().Shape
		if s.Rank() != s0.Rank() {
			return nil, errors.Errorf("lower: concat: shapes %v and %v have different ranks", s0, s)
		}
		for d := range s {
			if d != axis && s[d] != s0[d] {
				return nil, errors.Errorf("lower: concat: shapes %v and %v differ outside axis %d", s0, s, axis)
			}
		}
		total += s[axis]
	}
	if len(xs) == 1 {
		return xs[0], nil
	}
	if xs[0].Type().Dtype == core.Bool {
		// booleans do not add: concatenate them as 0/1 integers
		var b core.Builder
		ints := make([]core.Term, len(xs))
		for i, x := range xs {
			ints[i] = b.Cast(core.Int64, x)
		}
		if err := wrap("concat", &b); err != nil {
			return nil, err
		}
		t, err := Concat(axis, ints...)
		if err != nil {
			return nil, err
		}
		return result("concat", &b, b.Cast(core.Bool, t))
	}
	out := s0.Clone()
	out[axis] = total
	// Each operand is gathered into the full result shape at its offset; a gather reads 0
	// outside its operand, so the sum of the gathers is the concatenation.
	var b core.Builder
	var acc core.Term
	off := 0
	for _, x := range xs {
		vs, ts := indexVars(&b, axis+1)
		ix := append([]core.Term{}, ts...)
		ix[axis] = affine(&b, ts[axis], 1, int64(-off))
		g := b.Gather(out, x, b.IndexFn(vs, ix...))
		if acc == nil {
			acc = g
		} else {
			acc = b.Add(acc, g)
		}
		off += x.Type().Shape[axis]
	}
	return result("concat", &b, acc)
}

// Repeat repeats every element of x n times along axis (NumPy's repeat): result position j
// along axis holds x's position j/n. A scalar x becomes a vector of n copies.
func Repeat(x core.Term, axis, n int) (core.Term, error) {
	if err := checkTerm("repeat", x); err != nil {
		return nil, err
	}
	if n < 0 {
		return nil, errors.Errorf("lower: repeat: negative count %d", n)
	}
	xs := x.Type().Shape
	var b core.Builder
	if xs.Rank() == 0 {
		return result("repeat", &b, b.Replicate(n, x))
	}
	if axis < 0 || axis >= xs.Rank() {
		return nil, errors.Errorf("lower: repeat: axis %d out of range for shape %v", axis, xs)
	}
	if n == 1 {
		return x, nil
	}
	sh := xs.Clone()
	sh[axis] *= n
	vs, ts := indexVars(&b, axis+1)
	ix := append([]core.Term{}, ts...)
	if xs[axis] == 1 {
		ix[axis] = core.ScalarI(0)
	} else {
		ix[axis] = b.Binary(core.OpQuot, ts[axis], core.ScalarI(int64(n)))
	}
	return result("repeat", &b, b.Gather(sh, x, b.IndexFn(vs, ix...)))
}

// Take selects positions idx[0], idx[1], … of x along axis (idx : [n] i64): the result has
// x's shape with that axis of length n. Out-of-range indices read 0.
func Take(x, idx core.Term, axis int) (core.Term, error) {
	if err := checkAxisIndices("take", x, idx, axis, true); err != nil {
		return nil, err
	}
	xs, is := x.Type().Shape, idx.Type().Shape
	var b core.Builder
	vs, ts := indexVars(&b, axis+1)
	ix := append([]core.Term{}, ts...)
	ix[axis] = b.Index(idx, ts[axis])
	sh := xs.Clone()
	sh[axis] = is[0]
	return result("take", &b, b.Gather(sh, x, b.IndexFn(vs, ix...)))
}
