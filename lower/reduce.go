package lower

import (
	"github.com/bulkad/bulkad/core"
	"github.com/pkg/errors"
)

// Sum adds x's elements along the given axes (all axes when none are given); the result has
// x's other dimensions in order.
func Sum(x core.Term, axes ...int) (core.Term, error) {
	var b core.Builder
	t, axes, err := axesToFront("sum", &b, x, axes)
	if err != nil {
		return nil, err
	}
	if len(axes) > 1 {
		sh := t.Type().Shape
		t = b.Reshape(append(core.Shape{prod(sh[:len(axes)])}, sh[len(axes):]...), t)
	}
	if len(axes) > 0 {
		t = b.SumOuter(t)
	}
	return result("sum", &b, t)
}

// axesToFront checks x and the axes of a reduction (all of x's axes when none are given) and
// transposes them to the front, in the order given. op names the reduction in errors.
func axesToFront(op string, b *core.Builder, x core.Term, axes []int) (core.Term, []int, error) {
	if err := checkTerm(op, x); err != nil {
		return nil, nil, err
	}
	r := x.Type().Shape.Rank()
	if len(axes) == 0 {
		axes = make([]int, r)
		for i := range axes {
			axes[i] = i
		}
	}
	perm, err := moveToFront(op, axes, r)
	if err != nil {
		return nil, nil, err
	}
	return transposeIfNeeded(b, perm, x), axes, nil
}

// Max is the largest element along the given axes (all axes when none are given), computed as
// argmaxOuter over the axes moved to the front and a gather at the argmax.
func Max(x core.Term, axes ...int) (core.Term, error) {
	var b core.Builder
	t, axes, err := axesToFront("max", &b, x, axes)
	if err != nil || len(axes) == 0 { // a scalar is its own maximum
		return t, err
	}
	sh := t.Type().Shape
	rest := sh[len(axes):].Clone()
	t = reshapeIfNeeded(&b, append(core.Shape{prod(sh[:len(axes)])}, rest...), t)
	idx := b.ArgmaxOuter(t)
	vs, ts := indexVars(&b, len(rest))
	out := append([]core.Term{b.Index(idx, ts...)}, ts...)
	return result("max", &b, b.Gather(rest, t, b.IndexFn(vs, out...)))
}

// Mean is Sum divided by the number of elements summed.
func Mean(x core.Term, axes ...int) (core.Term, error) {
	s, err := Sum(x, axes...)
	if err != nil {
		return nil, errors.Wrap(err, "lower: mean")
	}
	n := 1
	xs := x.Type().Shape
	if len(axes) == 0 {
		n = xs.Size()
	}
	for _, a := range axes {
		n *= xs[a]
	}
	c, err := FullLike(s.Type(), float64(n))
	if err != nil {
		return nil, err
	}
	var b core.Builder
	return result("mean", &b, b.Div(s, c))
}

// reduceKeep applies a reduction along one axis and broadcasts the result back to x's shape.
func reduceKeep(x core.Term, axis int, red func(core.Term, ...int) (core.Term, error)) (core.Term, error) {
	r, err := red(x, axis)
	if err != nil {
		return nil, err
	}
	return Expand(r, axis, x.Type().Shape[axis])
}

func checkAxis(op string, x core.Term, axis int) error {
	if err := checkTerm(op, x); err != nil {
		return err
	}
	if r := x.Type().Shape.Rank(); axis < 0 || axis >= r {
		return errors.Errorf("lower: %s: axis %d out of range for shape %v", op, axis, x.Type().Shape)
	}
	if !x.Type().Dtype.IsFloat() {
		return errors.Errorf("lower: %s: operand dtype %v, want f64 or f32", op, x.Type().Dtype)
	}
	return nil
}

// shifted checks x and axis and returns x minus its maximum along axis (broadcast back), the
// stabilising shift of softmax and logsumexp, and the maximum itself. The maximum is under
// stopgrad: the results do not depend on the shift, so its derivative (an argmax, a gather and
// a scatter of a cotangent that is zero up to rounding) is left out of their gradients.
func shifted(op string, x core.Term, axis int) (z, m core.Term, err error) {
	if err := checkAxis(op, x, axis); err != nil {
		return nil, nil, err
	}
	if m, err = Max(x, axis); err != nil {
		return nil, nil, err
	}
	var sg core.Builder
	if m = sg.Unary(core.OpStopGrad, m); sg.Err() != nil {
		return nil, nil, errors.Wrapf(sg.Err(), "lower: %s", op)
	}
	mb, err := Expand(m, axis, x.Type().Shape[axis])
	if err != nil {
		return nil, nil, errors.Wrapf(err, "lower: %s", op)
	}
	var b core.Builder
	z = b.Sub(x, mb)
	return z, m, wrap(op, &b)
}

// Softmax is exp(x) / Σ exp(x) along axis, computed stably (x minus its maximum first).
func Softmax(x core.Term, axis int) (core.Term, error) {
	return normalisedExp("softmax", x, axis, kindSoftmax)
}

// LogSoftmax is x - log Σ exp(x) along axis, computed stably.
func LogSoftmax(x core.Term, axis int) (core.Term, error) {
	return normalisedExp("log-softmax", x, axis, kindLogSoftmax)
}

// LogSumExp is log Σ exp(x) along axis (the axis disappears), computed stably.
func LogSumExp(x core.Term, axis int) (core.Term, error) {
	return normalisedExp("logsumexp", x, axis, kindLogSumExp)
}

// expKind selects what normalisedExp computes.
type expKind int

const (
	kindSoftmax    expKind = iota // exp z / Σ exp z
	kindLogSoftmax                // z - log Σ exp z
	kindLogSumExp                 // log Σ exp z + max x (the axis disappears)
)

// normalisedExp is the common part of Softmax, LogSoftmax and LogSumExp: with z = x - max x
// along axis (the stabilising shift), it sums exp z along axis and combines the sum as kind
// says. op names the operation in errors.
func normalisedExp(op string, x core.Term, axis int, kind expKind) (core.Term, error) {
	z, m, err := shifted(op, x, axis)
	if err != nil {
		return nil, err
	}
	var b core.Builder
	kp := keep(&b)
	e := b.Unary(core.OpExp, z)
	var t core.Term
	switch kind {
	case kindLogSumExp:
		t = b.Add(b.Unary(core.OpLog, kp(Sum(e, axis))), m)
	case kindLogSoftmax:
		t = b.Sub(z, b.Unary(core.OpLog, kp(reduceKeep(e, axis, Sum))))
	default:
		t = b.Div(e, kp(reduceKeep(e, axis, Sum)))
	}
	return result(op, &b, t)
}

// Sparsemax is the Euclidean projection of x onto the probability simplex along axis (Martins
// and Astudillo, 2016): max(z - τ, 0) with z = x - max x and τ chosen so that the result sums
// to 1. The support is found without sorting: element i is in it when
// 1 + k_i z_i > Σ_{j: z_j ≥ z_i} z_j, where k_i = #{j: z_j ≥ z_i} (pairwise comparisons, n² per row).
func Sparsemax(x core.Term, axis int) (core.Term, error) {
	if err := checkAxis("sparsemax", x, axis); err != nil {
		return nil, err
	}
	xs := x.Type().Shape
	r := xs.Rank()
	// move axis last and flatten the others: [rows, n]
	perm := make([]int, 0, r)
	for a := 0; a < r; a++ {
		if a != axis {
			perm = append(perm, a)
		}
	}
	perm = append(perm, axis)
	var b core.Builder
	xt := transposeIfNeeded(&b, perm, x)
	n := xs[axis]
	rows := xs.Size() / n
	x2 := reshapeIfNeeded(&b, core.Shape{rows, n}, xt)
	if err := wrap("sparsemax", &b); err != nil {
		return nil, err
	}
	z, _, err := shifted("sparsemax", x2, 1)
	if err != nil {
		return nil, err
	}
	d := x.Type().Dtype
	kp := keep(&b)
	full := func(sh core.Shape, v float64) core.Term { return b.Full(core.Type{Shape: sh, Dtype: d}, v) }
	vs, ts := indexVars(&b, 3) // [row, i, j]
	zi := b.Gather(core.Shape{rows, n, n}, z, b.IndexFn(vs, ts[0], ts[1]))
	zj := b.Gather(core.Shape{rows, n, n}, z, b.IndexFn(vs, ts[0], ts[2]))
	ge := b.Cast(d, b.Binary(core.OpGe, zj, zi))
	k := kp(Sum(ge, 2))
	s := kp(Sum(b.Mul(ge, zj), 2))
	in := b.Cast(d, b.Binary(core.OpGt, b.Add(full(core.Shape{rows, n}, 1), b.Mul(k, z)), s))
	kk := kp(Sum(in, 1))
	cs := kp(Sum(b.Mul(in, z), 1))
	tau := b.Div(b.Sub(cs, full(core.Shape{rows}, 1)), kk)
	out := b.Binary(core.OpMax, b.Sub(z, kp(Expand(tau, 1, n))), full(core.Shape{rows, n}, 0))
	if err := wrap("sparsemax", &b); err != nil {
		return nil, err
	}
	out = reshapeIfNeeded(&b, xt.Type().Shape, out)
	inv := make([]int, r)
	for i, p := range perm {
		inv[p] = i
	}
	return result("sparsemax", &b, transposeIfNeeded(&b, inv, out))
}
