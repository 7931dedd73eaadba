package lower

import (
	"github.com/bulkad/bulkad/core"
	"github.com/pkg/errors"
)

// GatherAxis selects positions of x along axis by an i64 array of indices of any shape (ONNX's
// Gather, NumPy's take with an axis): for x : [d0 … dr−1] and idx : [e0 … eq−1] the result has
// shape [d0 … daxis−1, e0 … eq−1, daxis+1 … dr−1] and holds
// x[i0 … iaxis−1, idx[j0 … jq−1], iaxis+1 …]. A negative index counts from the end (−1 is
// the last position); one outside [−d, d) reads 0. The derivative with respect to x adds the
// gradients of repeated indices (a scatter-add), as an embedding table's gradient does.
func GatherAxis(x, idx core.Term, axis int) (core.Term, error) {
	if err := checkAxisIndices("gather axis", x, idx, axis, false); err != nil {
		return nil, err
	}
	xs, is := x.Type().Shape, idx.Type().Shape
	sh := append(append(xs[:axis].Clone(), is...), xs[axis+1:]...)
	var b core.Builder
	vs, ts := indexVars(&b, axis+is.Rank())
	j := b.Index(idx, ts[axis:]...)
	if !nonNegative(idx) {
		// j + d·[j < 0]: negative indices wrap once; others outside the axis stay outside
		neg := b.Cast(core.Int64, b.Binary(core.OpLt, j, core.ScalarI(0)))
		j = b.Add(j, b.Mul(core.ScalarI(int64(xs[axis])), neg))
	}
	ix := append(append([]core.Term{}, ts[:axis]...), j)
	return result("gather axis", &b, b.Gather(sh, x, b.IndexFn(vs, ix...)))
}

// checkAxisIndices checks the operands of op, which selects positions of x along axis by the
// i64 indices idx (a vector when vector is set).
func checkAxisIndices(op string, x, idx core.Term, axis int, vector bool) error {
	if err := checkTerm(op, x, idx); err != nil {
		return err
	}
	if xs := x.Type().Shape; axis < 0 || axis >= xs.Rank() {
		return errors.Errorf("lower: %s: axis %d out of range for shape %v", op, axis, xs)
	}
	it := idx.Type()
	switch {
	case vector && (it.Shape.Rank() != 1 || it.Dtype != core.Int64):
		return errors.Errorf("lower: %s: indices %v, want a vector of i64", op, it)
	case it.Dtype != core.Int64:
		return errors.Errorf("lower: %s: indices %v, want i64", op, it)
	}
	return nil
}

// nonNegative reports whether idx is a literal without negative entries.
func nonNegative(idx core.Term) bool {
	l, ok := idx.(*core.Lit)
	if !ok {
		return false
	}
	for _, v := range l.I {
		if v < 0 {
			return false
		}
	}
	return true
}
