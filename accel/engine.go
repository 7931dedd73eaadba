package accel

import (
	"sort"

	"github.com/pkg/errors"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/bulkad/bulkad/core"
	"github.com/bulkad/bulkad/kernel"
)

// Engine is a tensor engine for Gorgonia's machines that runs some forward operations of
// Gorgonia's default engine on package kernel's loops, and leaves every other one to
// gorgonia.StandardEngine (which it embeds):
//
//   - Transpose (gorgonia.Transpose, and the layout change at the end of gorgonia.Conv2d):
//     kernel's transpose instead of an iterator that computes every offset, for float64 and
//     float32 tensors in row-major order (anything else goes to StandardEngine);
//   - SoftMax and LogSoftMax along any axis: shifted by the group's own maximum, sums in
//     float64, rows split across goroutines. Gorgonia's own (tensor v0.9.24) shifts every row
//     by the first element of the first row, so a row whose values are far from it overflows
//     to NaN or underflows to 0/0 (see TestEngineSoftmaxShift); it also starts a goroutine
//     per row;
//   - comparisons of a tensor with a scalar that return 0/1 in the tensor's float type
//     (GteScalar, GtScalar, LteScalar, LtScalar with tensor.AsSameType, as Rectify's
//     x >= 0): a table lookup instead of a branch per element, which mispredicts on data of
//     mixed signs (0.45 vs 3.9 ms on the convnet's 800K activations);
//   - Add, Sub, Mul and Div of two tensors of one shape (the bias add, the ReLU's x ⊙ mask):
//     kernel.Binary, split across goroutines when large (Gorgonia's loops are serial);
//   - Exp, Log, Tanh, Neg and Sqrt (the RNN's tanh, the log-softmax gradient's exp):
//     kernel.Unary, likewise (exp, log and tanh on package vmath's vector kernels).
//
// Opt in per machine, next to UseBLAS (which speeds up the matrix products):
//
//	vm := gorgonia.NewTapeMachine(g, gorgonia.WithEngine(accel.Engine{}))
//
// The machine gives the engine to the values it allocates and binds; a value made by an
// operation of the default engine keeps that engine, so the speed-up covers the operations
// whose inputs are such values (in practice the forward pass of the models in examples/).
// Results are those of the definitions: the transpose and the comparisons are exact, the
// arithmetic is IEEE's like Gorgonia's, exp, log and tanh are core's (package vmath's, within
// 1–2 ulp; Gorgonia's math32 differs from them in the last bit at times), and the softmax is
// accurate to a few ulps. Raised
// gradients read the forward values and run their own kernels, so they agree with a run on
// Gorgonia's engine to rounding (tests/engine_test.go).
type Engine struct {
	gorgonia.StandardEngine
}

// Transpose implements tensor.Transposer: a holds its old data and the transposed shape and
// strides; Transpose moves the data into row-major order of the new shape.
func (e Engine) Transpose(a tensor.Tensor, expStrides []int) error {
	d, ok := a.(*tensor.Dense)
	if !ok || !d.IsNativelyAccessible() || !d.DataOrder().IsRowMajor() {
		return e.StandardEngine.Transpose(a, expStrides)
	}
	shape := d.Shape()
	perm, in, ok := transposePlan(shape, d.Strides())
	if !ok {
		return e.StandardEngine.Transpose(a, expStrides)
	}
	k := kernel.Transpose{Perm: perm, Shape: in}
	n := shape.TotalSize()
	switch {
	case d.Dtype() == tensor.Float64 && len(d.Float64s()) == n:
		return transposeInPlace(k, d.Float64s())
	case d.Dtype() == tensor.Float32 && len(d.Float32s()) == n:
		return transposeInPlace(k, d.Float32s())
	}
	return e.StandardEngine.Transpose(a, expStrides)
}

// transposeInPlace moves data into the transposed order through a temporary copy.
func transposeInPlace[T float32 | float64](k kernel.Transpose, data []T) error {
	tmp := make([]T, len(data))
	if err := k.Run(tmp, []any{data}); err != nil {
		return errors.Wrapf(err, "bulkad: engine: transpose of %v by %v", k.Shape, k.Perm)
	}
	copy(data, tmp)
	return nil
}

// transposePlan recovers, from the shape and strides of a transposed view of row-major
// data, the data's own shape and the permutation that takes it to the view (kernel's
// convention: view dimension p is data dimension perm[p]). ok is false when the strides are
// not a permutation of row-major strides.
func transposePlan(shape tensor.Shape, strides []int) (perm, in []int, ok bool) {
	r := len(shape)
	if len(strides) != r {
		return nil, nil, false
	}
	order := make([]int, r) // data dimension q is view dimension order[q]
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(i, j int) bool { return strides[order[i]] > strides[order[j]] })
	in = make([]int, r)
	perm = make([]int, r)
	for q, p := range order {
		in[q] = shape[p]
		perm[p] = q
	}
	want := 1
	for q := r - 1; q >= 0; q-- {
		if in[q] > 1 && strides[order[q]] != want {
			return nil, nil, false
		}
		want *= in[q]
	}
	return perm, in, true
}

// SoftMax implements tensor.SoftMaxer (see Engine).
func (e Engine) SoftMax(x tensor.Tensor, axis int, opts ...tensor.FuncOpt) (tensor.Tensor, error) {
	return e.softmax(x, axis, false, opts)
}

// LogSoftMax implements tensor.SoftMaxer (see Engine).
func (e Engine) LogSoftMax(x tensor.Tensor, axis int, opts ...tensor.FuncOpt) (tensor.Tensor, error) {
	return e.softmax(x, axis, true, opts)
}

func (e Engine) softmax(x tensor.Tensor, axis int, log bool, opts []tensor.FuncOpt) (tensor.Tensor, error) {
	op := "SoftMax"
	if log {
		op = "LogSoftMax"
	}
	d, ok := contiguous(x)
	var out *tensor.Dense
	if ok {
		var err error
		if out, ok, err = e.output(op, d, tensor.ParseFuncOpts(opts...)); err != nil {
			return nil, err
		}
	}
	if !ok {
		if log {
			return e.StandardEngine.LogSoftMax(x, axis, opts...)
		}
		return e.StandardEngine.SoftMax(x, axis, opts...)
	}
	shape := d.Shape()
	r := shape.Dims()
	if axis < 0 {
		axis += r
	}
	if axis < 0 || axis >= r {
		return nil, errors.Errorf("bulkad: engine: %s: axis %d out of range for shape %v", op, axis, shape)
	}
	pre, post := 1, 1
	for i, s := range shape {
		if i < axis {
			pre *= s
		} else if i > axis {
			post *= s
		}
	}
	var err error
	if d.Dtype() == tensor.Float64 {
		err = kernel.Softmax(out.Float64s(), d.Float64s(), pre, shape[axis], post, log)
	} else {
		err = kernel.Softmax(out.Float32s(), d.Float32s(), pre, shape[axis], post, log)
	}
	if err != nil {
		return nil, errors.Wrapf(err, "bulkad: engine: %s of shape %v along axis %d", op, shape, axis)
	}
	return out, nil
}

// GteScalar implements tensor.Gteer for a float tensor compared with a scalar of its type,
// with a result of the same type (see Engine); other cases go to StandardEngine.
func (e Engine) GteScalar(t tensor.Tensor, s interface{}, leftTensor bool, opts ...tensor.FuncOpt) (tensor.Tensor, error) {
	return e.compareScalarOr(t, s, leftTensor, core.OpGe, opts, e.StandardEngine.GteScalar)
}

// GtScalar implements tensor.Gter (see GteScalar).
func (e Engine) GtScalar(t tensor.Tensor, s interface{}, leftTensor bool, opts ...tensor.FuncOpt) (tensor.Tensor, error) {
	return e.compareScalarOr(t, s, leftTensor, core.OpGt, opts, e.StandardEngine.GtScalar)
}

// LteScalar implements tensor.Lteer (see GteScalar).
func (e Engine) LteScalar(t tensor.Tensor, s interface{}, leftTensor bool, opts ...tensor.FuncOpt) (tensor.Tensor, error) {
	return e.compareScalarOr(t, s, leftTensor, core.OpLe, opts, e.StandardEngine.LteScalar)
}

// LtScalar implements tensor.Lter (see GteScalar).
func (e Engine) LtScalar(t tensor.Tensor, s interface{}, leftTensor bool, opts ...tensor.FuncOpt) (tensor.Tensor, error) {
	return e.compareScalarOr(t, s, leftTensor, core.OpLt, opts, e.StandardEngine.LtScalar)
}

// compareScalarOr is compareScalar's result where it applies, else fallback's
// (StandardEngine's method).
func (e Engine) compareScalarOr(t tensor.Tensor, s interface{}, leftTensor bool, op core.BinOp, opts []tensor.FuncOpt,
	fallback func(t tensor.Tensor, s interface{}, leftTensor bool, opts ...tensor.FuncOpt) (tensor.Tensor, error)) (tensor.Tensor, error) {
	if r, ok, err := e.compareScalar(t, s, leftTensor, op, opts); ok {
		return r, err
	}
	return fallback(t, s, leftTensor, opts...)
}

// compareScalar is t op s (leftTensor) or s op t with a result of t's float type, computed
// by kernel.CompareScalar; ok is false for the cases it leaves to StandardEngine (a bool
// result, a view, another dtype or scalar type, Incr, a reuse tensor that does not fit).
// As StandardEngine does, UseUnsafe writes into t.
func (e Engine) compareScalar(t tensor.Tensor, s interface{}, leftTensor bool, op core.BinOp, opts []tensor.FuncOpt) (r tensor.Tensor, ok bool, err error) {
	d, ok := contiguous(t)
	if !ok {
		return nil, false, nil
	}
	fo := tensor.ParseFuncOpts(opts...)
	if fo.Safe() && !fo.Same() {
		return nil, false, nil // a bool result
	}
	if !leftTensor {
		op = op.Converse()
	}
	out, ok, err := e.output(op.Word(), d, fo)
	if !ok || err != nil {
		return nil, ok, err
	}
	switch v := s.(type) {
	case float64:
		if d.Dtype() != tensor.Float64 {
			return nil, false, nil
		}
		err = kernel.CompareScalar(out.Float64s(), d.Float64s(), v, op)
	case float32:
		if d.Dtype() != tensor.Float32 {
			return nil, false, nil
		}
		err = kernel.CompareScalar(out.Float32s(), d.Float32s(), v, op)
	default:
		return nil, false, nil
	}
	if err != nil {
		return nil, true, errors.Wrapf(err, "bulkad: engine: %v of a tensor of shape %v with a scalar", op, d.Shape())
	}
	return out, true, nil
}

// Add implements tensor.Adder: a + b for two float tensors of one shape and dtype in
// row-major order, on kernel.Binary (split across goroutines when large); other cases go
// to StandardEngine.
func (e Engine) Add(a, b tensor.Tensor, opts ...tensor.FuncOpt) (tensor.Tensor, error) {
	return e.binaryOr(a, b, core.OpAdd, opts, e.StandardEngine.Add)
}

// Sub implements tensor.Suber (see Add).
func (e Engine) Sub(a, b tensor.Tensor, opts ...tensor.FuncOpt) (tensor.Tensor, error) {
	return e.binaryOr(a, b, core.OpSub, opts, e.StandardEngine.Sub)
}

// Mul implements tensor.Muler (see Add).
func (e Engine) Mul(a, b tensor.Tensor, opts ...tensor.FuncOpt) (tensor.Tensor, error) {
	return e.binaryOr(a, b, core.OpMul, opts, e.StandardEngine.Mul)
}

// Div implements tensor.Diver (see Add).
func (e Engine) Div(a, b tensor.Tensor, opts ...tensor.FuncOpt) (tensor.Tensor, error) {
	return e.binaryOr(a, b, core.OpDiv, opts, e.StandardEngine.Div)
}

// contiguous returns t as a row-major float64 or float32 Dense that owns its layout (no
// view), or false.
func contiguous(t tensor.Tensor) (*tensor.Dense, bool) {
	d, ok := t.(*tensor.Dense)
	if !ok || d.Dims() == 0 || d.RequiresIterator() || !d.IsNativelyAccessible() || !d.DataOrder().IsRowMajor() ||
		d.Dtype() != tensor.Float64 && d.Dtype() != tensor.Float32 {
		return nil, false
	}
	return d, true
}

// output is where operation op on d writes under opts: the reuse tensor, d itself
// (UseUnsafe), or a new tensor; ok is false for Incr (StandardEngine then handles the call).
// A reuse tensor of another shape or dtype, or a view, is an error.
func (e Engine) output(op string, d *tensor.Dense, fo *tensor.OpOpt) (out *tensor.Dense, ok bool, err error) {
	if fo.Incr() != nil {
		return nil, false, nil
	}
	if reuse := fo.Reuse(); reuse != nil {
		rd, ok := contiguous(reuse)
		if !ok || !rd.Shape().Eq(d.Shape()) || rd.Dtype() != d.Dtype() {
			return nil, true, errors.Errorf("bulkad: engine: %s: reuse %T of shape %v and dtype %v for a result of shape %v and dtype %v (want the same, row-major, not a view)",
				op, reuse, reuse.Shape(), reuse.Dtype(), d.Shape(), d.Dtype())
		}
		return rd, true, nil
	}
	if !fo.Safe() {
		return d, true, nil
	}
	return tensor.New(tensor.Of(d.Dtype()), tensor.WithShape(d.Shape().Clone()...), tensor.WithEngine(e)), true, nil
}

// binaryOr is binary's result where it applies, else fallback's (StandardEngine's method).
func (e Engine) binaryOr(a, b tensor.Tensor, op core.BinOp, opts []tensor.FuncOpt, fallback func(a, b tensor.Tensor, opts ...tensor.FuncOpt) (tensor.Tensor, error)) (tensor.Tensor, error) {
	if r, ok, err := e.binary(a, b, op, opts); ok {
		return r, err
	}
	return fallback(a, b, opts...)
}

// binary is a op b element-wise for two contiguous float tensors of one shape and dtype
// (ok false otherwise).
func (e Engine) binary(a, b tensor.Tensor, op core.BinOp, opts []tensor.FuncOpt) (r tensor.Tensor, ok bool, err error) {
	x, okx := contiguous(a)
	y, oky := contiguous(b)
	if !okx || !oky || x.Dtype() != y.Dtype() || !x.Shape().Eq(y.Shape()) || x.Shape().TotalSize() != y.Shape().TotalSize() {
		return nil, false, nil
	}
	out, ok, err := e.output(op.Word(), x, tensor.ParseFuncOpts(opts...))
	if !ok || err != nil {
		return nil, ok, err
	}
	var ins []any
	var dst any
	if x.Dtype() == tensor.Float64 {
		dst, ins = out.Float64s(), []any{x.Float64s(), y.Float64s()}
	} else {
		dst, ins = out.Float32s(), []any{x.Float32s(), y.Float32s()}
	}
	if err := (kernel.Binary{Op: op}).Run(dst, ins); err != nil {
		return nil, true, errors.Wrapf(err, "bulkad: engine: %v of two tensors of shape %v", op, x.Shape())
	}
	return out, true, nil
}

// Exp implements tensor.Exper: exp of a float tensor on kernel.Unary (core's exp: package
// vmath's, within 1 ulp in float32; split across goroutines when large); other cases go to
// StandardEngine.
func (e Engine) Exp(a tensor.Tensor, opts ...tensor.FuncOpt) (tensor.Tensor, error) {
	return e.unaryOr(a, core.OpExp, opts, e.StandardEngine.Exp)
}

// Log implements tensor.Loger (see Exp).
func (e Engine) Log(a tensor.Tensor, opts ...tensor.FuncOpt) (tensor.Tensor, error) {
	return e.unaryOr(a, core.OpLog, opts, e.StandardEngine.Log)
}

// Tanh implements tensor.Tanher (see Exp).
func (e Engine) Tanh(a tensor.Tensor, opts ...tensor.FuncOpt) (tensor.Tensor, error) {
	return e.unaryOr(a, core.OpTanh, opts, e.StandardEngine.Tanh)
}

// Neg implements tensor.Neger (see Exp).
func (e Engine) Neg(a tensor.Tensor, opts ...tensor.FuncOpt) (tensor.Tensor, error) {
	return e.unaryOr(a, core.OpNeg, opts, e.StandardEngine.Neg)
}

// Sqrt implements tensor.Sqrter (see Exp).
func (e Engine) Sqrt(a tensor.Tensor, opts ...tensor.FuncOpt) (tensor.Tensor, error) {
	return e.unaryOr(a, core.OpSqrt, opts, e.StandardEngine.Sqrt)
}

// unaryOr is unary's result where it applies, else fallback's (StandardEngine's method).
func (e Engine) unaryOr(a tensor.Tensor, op core.UnOp, opts []tensor.FuncOpt, fallback func(tensor.Tensor, ...tensor.FuncOpt) (tensor.Tensor, error)) (tensor.Tensor, error) {
	if r, ok, err := e.unary(a, op, opts); ok {
		return r, err
	}
	return fallback(a, opts...)
}

// unary is op applied element-wise to a contiguous float tensor (ok false otherwise). Exp,
// log and tanh are package vmath's vector kernels (core's definitions; float32 computed in
// float32), several times faster than Gorgonia's math and math32 loops.
func (e Engine) unary(a tensor.Tensor, op core.UnOp, opts []tensor.FuncOpt) (r tensor.Tensor, ok bool, err error) {
	x, ok := contiguous(a)
	if !ok {
		return nil, false, nil
	}
	out, ok, err := e.output(op.String(), x, tensor.ParseFuncOpts(opts...))
	if !ok || err != nil {
		return nil, ok, err
	}
	var dst, in any
	if x.Dtype() == tensor.Float64 {
		dst, in = out.Float64s(), x.Float64s()
	} else {
		dst, in = out.Float32s(), x.Float32s()
	}
	if err := (kernel.Unary{Op: op}).Run(dst, []any{in}); err != nil {
		return nil, true, errors.Wrapf(err, "bulkad: engine: %v of a tensor of shape %v", op, x.Shape())
	}
	return out, true, nil
}
