package kernel

import "github.com/bulkad/bulkad/core"

// Dispatch from a dtype to the generic loop kernels, in one place for the compiled evaluator
// (whose buffers know their dtype) and the single-op kernels (which receive flat slices and
// wrap them with bufOver). Each function reports false when the dtypes do not fit the
// operation; the switch runs once per call, not per element.

// dtype is the dtype of v's storage.
func (v *buf) dtype() core.Dtype { return v.typ.Dtype }

// bufOver wraps a flat slice as evaluator storage; nil for another value.
func bufOver(s any) *buf { return bufAt(new(buf), s) }

// bufAt sets b to wrap a flat slice as evaluator storage and returns it; nil for another
// value (bufOver without the allocation, for a caller that keeps b on its stack).
func bufAt(b *buf, s any) *buf {
	switch x := s.(type) {
	case []float64:
		*b = buf{typ: core.Type{Dtype: core.Float64}, f64: x}
	case []float32:
		*b = buf{typ: core.Type{Dtype: core.Float32}, f32: x}
	case []int64:
		*b = buf{typ: core.Type{Dtype: core.Int64}, i64: x}
	case []bool:
		*b = buf{typ: core.Type{Dtype: core.Bool}, b: x}
	default:
		return nil
	}
	return b
}

// length is the number of elements of v's storage.
func (v *buf) length() int { return len(v.f64) + len(v.f32) + len(v.i64) + len(v.b) }

// unaryBuf applies op element-wise from x to out (same dtype and length).
func unaryBuf(op core.UnOp, out, x *buf) bool {
	if out == nil || x == nil || out.dtype() != x.dtype() || out.length() != x.length() {
		return false
	}
	if !op.Accepts(out.dtype()) {
		return false
	}
	if n, work := out.length(), costOf(out.length(), unaryWeight(op)); workers(n, work) > 1 {
		ob, xb := *out, *x // the closure gets copies: captured, out and x would escape on every call
		inParallel(n, work, func(lo, hi int) {
			o, xs := ob.sub(lo, hi), xb.sub(lo, hi)
			unaryRun(op, &o, &xs)
		})
		return true
	}
	unaryRun(op, out, x)
	return true
}

// unaryRun is unaryBuf on the calling goroutine, once the operands are checked.
func unaryRun(op core.UnOp, out, x *buf) {
	switch out.dtype() {
	case core.Float64:
		unaryFloat(op, out.f64, x.f64)
	case core.Float32:
		unaryFloat(op, out.f32, x.f32)
	case core.Int64:
		unaryInt(op, out.i64, x.i64)
	case core.Bool:
		unaryBool(op, out.b, x.b)
	}
}

// binaryBuf applies op element-wise to x and y (same dtype and length) into out (bool for a
// comparison, else the operands' dtype), split across goroutines (inParallel) when large.
func binaryBuf(op core.BinOp, out, x, y *buf) bool {
	if out == nil || x == nil || y == nil || x.dtype() != y.dtype() || x.length() != out.length() || y.length() != out.length() {
		return false
	}
	if !binaryFits(op, out.dtype(), x.dtype()) {
		return false
	}
	if n, work := out.length(), costOf(out.length(), binaryWeight(op)); workers(n, work) > 1 {
		ob, xb, yb := *out, *x, *y // copies, as in unaryBuf
		inParallel(n, work, func(lo, hi int) {
			o, xs, ys := ob.sub(lo, hi), xb.sub(lo, hi), yb.sub(lo, hi)
			binaryRun(op, &o, &xs, &ys)
		})
		return true
	}
	binaryRun(op, out, x, y)
	return true
}

// binaryFits reports whether op applies to operands of dtype in with a result of dtype out.
func binaryFits(op core.BinOp, out, in core.Dtype) bool {
	if op.IsComparison() {
		return out == core.Bool && op.Accepts(in)
	}
	return out == in && op.Accepts(in)
}

// binaryRun is binaryBuf on the calling goroutine, once binaryFits holds.
func binaryRun(op core.BinOp, out, x, y *buf) {
	if op.IsComparison() {
		switch x.dtype() {
		case core.Float64:
			compare(op, out.b, x.f64, y.f64)
		case core.Float32:
			compare(op, out.b, x.f32, y.f32)
		case core.Int64:
			compare(op, out.b, x.i64, y.i64)
		case core.Bool:
			binaryBool(op, out.b, x.b, y.b)
		}
		return
	}
	switch x.dtype() {
	case core.Float64:
		binaryFloat(op, out.f64, x.f64, y.f64)
	case core.Float32:
		binaryFloat(op, out.f32, x.f32, y.f32)
	case core.Int64:
		binaryInt(op, out.i64, x.i64, y.i64)
	case core.Bool:
		binaryBool(op, out.b, x.b, y.b)
	}
}

// permCopyBuf copies x into out through a permutation plan (any dtype).
func permCopyBuf(p *permPlan, out, x *buf) {
	switch out.dtype() {
	case core.Float64:
		permCopy(p, out.f64, x.f64)
	case core.Float32:
		permCopy(p, out.f32, x.f32)
	case core.Int64:
		permCopy(p, out.i64, x.i64)
	case core.Bool:
		permCopy(p, out.b, x.b)
	}
}

// floatsOf returns v's float storage as []T (T the element type of v's dtype).
func floatsOf[T floatT](v *buf) []T {
	if s, ok := any(v.f64).([]T); ok {
		return s
	}
	return any(v.f32).([]T)
}

// gatherBuf runs a planned gather of x into out (any dtype).
func gatherBuf(p *ixPlan, out, x *buf) {
	switch out.dtype() {
	case core.Float64:
		gatherK(p, out.f64, x.f64)
	case core.Float32:
		gatherK(p, out.f32, x.f32)
	case core.Int64:
		gatherK(p, out.i64, x.i64)
	case core.Bool:
		gatherK(p, out.b, x.b)
	}
}

// scatterBuf runs a planned scatter of x into out (numeric dtypes).
func scatterBuf(p *ixPlan, out, x *buf) {
	switch out.dtype() {
	case core.Float64:
		scatterK(p, out.f64, x.f64)
	case core.Float32:
		scatterK(p, out.f32, x.f32)
	case core.Int64:
		scatterK(p, out.i64, x.i64)
	}
}

// sumOuterBuf sums x ([pre, n, post]) along its middle axis into out ([pre, post]); false for
// bool or mismatched storage.
func sumOuterBuf(out, x *buf, pre, n, post int) bool {
	if out == nil || x == nil || out.dtype() != x.dtype() || out.length() != pre*post || x.length() != pre*n*post {
		return false
	}
	switch out.dtype() {
	case core.Float64:
		sumOuterK(out.f64, x.f64, pre, n, post)
	case core.Float32:
		sumOuterK(out.f32, x.f32, pre, n, post)
	case core.Int64:
		sumOuterK(out.i64, x.i64, pre, n, post)
	default:
		return false
	}
	return true
}

// argmaxOuterBuf writes the argmax of x ([pre, n, post]) along its middle axis into out (i64,
// [pre, post]); false for bool or mismatched storage.
func argmaxOuterBuf(out, x *buf, pre, n, post int) bool {
	if out == nil || x == nil || out.dtype() != core.Int64 || out.length() != pre*post || x.length() != pre*n*post {
		return false
	}
	switch x.dtype() {
	case core.Float64:
		argmaxOuterK(out.i64, x.f64, pre, n, post)
	case core.Float32:
		argmaxOuterK(out.i64, x.f32, pre, n, post)
	case core.Int64:
		argmaxOuterK(out.i64, x.i64, pre, n, post)
	default:
		return false
	}
	return true
}

// typed3 asserts a, b and c to []T.
func typed3[T any](a, b, c any) ([]T, []T, []T, bool) {
	x, y, ok := typed2[T](a, b)
	z, ok3 := c.([]T)
	return x, y, z, ok && ok3
}

// typed2 asserts a and b to []T.
func typed2[T any](a, b any) ([]T, []T, bool) {
	x, ok1 := a.([]T)
	y, ok2 := b.([]T)
	return x, y, ok1 && ok2
}
