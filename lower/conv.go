package lower

import (
	"math"

	"github.com/bulkad/bulkad/core"
	"github.com/pkg/errors"
)

// Window describes a 2-D sliding window over the last two dimensions of a [b,c,h,w] array.
// Output position (i, j) covers input rows i*StrideH - PadTop + r*DilationH for r < KH and
// columns j*StrideW - PadLeft + s*DilationW for s < KW. The output height is
// (h + PadTop + PadBottom - (DilationH*(KH-1)+1)) / StrideH + 1, and likewise the width.
// Zero dilations count as 1.
type Window struct {
	KH, KW                               int
	PadTop, PadBottom, PadLeft, PadRight int
	StrideH, StrideW                     int
	DilationH, DilationW                 int
}

func (w Window) dil() (int, int) {
	dh, dw := w.DilationH, w.DilationW
	if dh == 0 {
		dh = 1
	}
	if dw == 0 {
		dw = 1
	}
	return dh, dw
}

// OutHW is the output height and width for an input of height h and width w.
func (w Window) OutHW(h, wd int) (int, int) {
	dh, dw := w.dil()
	oh := (h+w.PadTop+w.PadBottom-(dh*(w.KH-1)+1))/w.StrideH + 1
	ow := (wd+w.PadLeft+w.PadRight-(dw*(w.KW-1)+1))/w.StrideW + 1
	return oh, ow
}

func (w Window) check(op string, xs core.Shape) error {
	if xs.Rank() != 4 {
		return errors.Errorf("lower: %s: operand shape %v, want [b,c,h,w]", op, xs)
	}
	dh, dw := w.dil()
	if w.KH < 1 || w.KW < 1 || w.StrideH < 1 || w.StrideW < 1 || dh < 1 || dw < 1 ||
		w.PadTop < 0 || w.PadBottom < 0 || w.PadLeft < 0 || w.PadRight < 0 {
		return errors.Errorf("lower: %s: invalid window %+v", op, w)
	}
	oh, ow := w.OutHW(xs[2], xs[3])
	if oh < 1 || ow < 1 {
		return errors.Errorf("lower: %s: window %+v does not fit shape %v", op, w, xs)
	}
	return nil
}

// checkOperand checks the operand x of a windowed operation op and returns its shape.
func (w Window) checkOperand(op string, x core.Term) (core.Shape, error) {
	if err := checkTerm(op, x); err != nil {
		return nil, err
	}
	xs := x.Type().Shape
	return xs, w.check(op, xs)
}

// windowFn is the index function \[bb, i, j, cc, r, s] -> [bb, cc, row, col] of a window.
func (w Window) windowFn(b *core.Builder) *core.IndexFn {
	dh, dw := w.dil()
	vs, ts := indexVars(b, 6)
	row := addIx(b, affine(b, ts[1], int64(w.StrideH), int64(-w.PadTop)), affine(b, ts[4], int64(dh), 0))
	col := addIx(b, affine(b, ts[2], int64(w.StrideW), int64(-w.PadLeft)), affine(b, ts[5], int64(dw), 0))
	return b.IndexFn(vs, ts[0], ts[3], row, col)
}

// Im2Col unfolds the windows of x : [b,c,h,w] into x' : [b,oh,ow,c*KH*KW] (Gorgonia's layout:
// channel, then kernel row, then kernel column). Positions in the padding read 0.
func Im2Col(x core.Term, w Window) (core.Term, error) {
	xs, err := w.checkOperand("im2col", x)
	if err != nil {
		return nil, err
	}
	oh, ow := w.OutHW(xs[2], xs[3])
	var b core.Builder
	g := b.Gather(core.Shape{xs[0], oh, ow, xs[1], w.KH, w.KW}, x, w.windowFn(&b))
	return result("im2col", &b, b.Reshape(core.Shape{xs[0], oh, ow, xs[1] * w.KH * w.KW}, g))
}

// Col2Im is the adjoint of Im2Col: it adds the columns cols : [b,oh,ow,c*KH*KW] back into an
// image of shape im : [b,c,h,w]; contributions that fall into the padding are dropped.
func Col2Im(cols core.Term, im core.Shape, w Window) (core.Term, error) {
	if err := checkTerm("col2im", cols); err != nil {
		return nil, err
	}
	if err := w.check("col2im", im); err != nil {
		return nil, err
	}
	oh, ow := w.OutHW(im[2], im[3])
	want := core.Shape{im[0], oh, ow, im[1] * w.KH * w.KW}
	if !cols.Type().Shape.Equal(want) {
		return nil, errors.Errorf("lower: col2im: columns have shape %v, want %v for image %v", cols.Type().Shape, want, im)
	}
	var b core.Builder
	c6 := b.Reshape(core.Shape{im[0], oh, ow, im[1], w.KH, w.KW}, cols)
	return result("col2im", &b, b.Scatter(im.Clone(), c6, w.windowFn(&b)))
}

// Conv2d is the 2-D convolution (cross-correlation) of x : [b,c,h,w] with filters
// f : [o,c,KH,KW]: one matrix product of the filters [o, c·KH·KW] with the windows gathered
// in the product's layout [c·KH·KW, b·oh·ow] (im2col, transposed), giving [o, b, oh·ow], and a
// transpose of the two outer dimensions to [b, o, oh, ow], which moves whole rows of oh·ow
// elements (nothing when b = 1). Gorgonia's composition (im2col as [b·oh·ow, c·KH·KW], a
// product with the transposed filters and a transpose of every element to [b,o,oh,ow]) costs
// an element-wise transpose of the output, and of its cotangent in the gradient.
func Conv2d(x, f core.Term, w Window) (core.Term, error) {
	if err := checkTerm("conv2d", x, f); err != nil {
		return nil, err
	}
	xs, fs := x.Type().Shape, f.Type().Shape
	if fs.Rank() != 4 || xs.Rank() != 4 || fs[1] != xs[1] || fs[2] != w.KH || fs[3] != w.KW {
		return nil, errors.Errorf("lower: conv2d: image %v and filters %v do not match the window %dx%d", xs, fs, w.KH, w.KW)
	}
	if _, err := w.checkOperand("conv2d", x); err != nil {
		return nil, err
	}
	oh, ow := w.OutHW(xs[2], xs[3])
	k := xs[1] * w.KH * w.KW
	var b core.Builder
	var cols core.Term
	if w.KH == 1 && w.KW == 1 && w.StrideH == 1 && w.StrideW == 1 && w.PadTop+w.PadBottom+w.PadLeft+w.PadRight == 0 {
		// a pointwise convolution: the columns are the image itself with the channels first
		// (nothing to copy when b = 1, whole rows of h·w otherwise)
		cols = b.Reshape(core.Shape{xs[1], xs[0], oh * ow}, x)
		if xs[0] > 1 {
			cols = b.Transpose([]int{1, 0, 2}, b.Reshape(core.Shape{xs[0], xs[1], oh * ow}, x))
		}
	} else {
		dh, dw := w.dil()
		vs, ts := indexVars(&b, 6) // [cc, r, s, bb, i, j]
		row := addIx(&b, affine(&b, ts[4], int64(w.StrideH), int64(-w.PadTop)), affine(&b, ts[1], int64(dh), 0))
		col := addIx(&b, affine(&b, ts[5], int64(w.StrideW), int64(-w.PadLeft)), affine(&b, ts[2], int64(dw), 0))
		cols = b.Gather(core.Shape{xs[1], w.KH, w.KW, xs[0], oh, ow}, x, b.IndexFn(vs, ts[3], ts[0], row, col))
	}
	m := b.MatMul(b.Reshape(core.Shape{fs[0], k}, f), b.Reshape(core.Shape{k, xs[0] * oh * ow}, cols))
	y := b.Reshape(core.Shape{fs[0], xs[0], oh * ow}, m)
	if xs[0] > 1 {
		y = b.Transpose([]int{1, 0, 2}, y)
	}
	return result("conv2d", &b, b.Reshape(core.Shape{xs[0], fs[0], oh, ow}, y))
}

// windows gathers the windows of x : [b,c,h,w] as [KH*KW, b, c, oh, ow] (window position
// outermost); padding reads 0.
func windows(b *core.Builder, x core.Term, w Window) core.Term {
	xs := x.Type().Shape
	oh, ow := w.OutHW(xs[2], xs[3])
	dh, dw := w.dil()
	vs, ts := indexVars(b, 6) // [r, s, bb, cc, i, j]
	row := addIx(b, affine(b, ts[4], int64(w.StrideH), int64(-w.PadTop)), affine(b, ts[0], int64(dh), 0))
	col := addIx(b, affine(b, ts[5], int64(w.StrideW), int64(-w.PadLeft)), affine(b, ts[1], int64(dw), 0))
	g := b.Gather(core.Shape{w.KH, w.KW, xs[0], xs[1], oh, ow}, x, b.IndexFn(vs, ts[2], ts[3], row, col))
	return b.Reshape(core.Shape{w.KH * w.KW, xs[0], xs[1], oh, ow}, g)
}

// padPenalty is the literal [KH*KW, 1, 1, oh, ow] (replicated over b and c by the caller)
// holding 0 where the window position is inside the image and -max where it is in the padding.
func padPenalty(w Window, h, wd int, d core.Dtype) (core.Term, bool, error) {
	oh, ow := w.OutHW(h, wd)
	dh, dw := w.dil()
	neg := -math.MaxFloat64
	if d == core.Float32 {
		neg = -math.MaxFloat32
	}
	vals := make([]float64, 0, w.KH*w.KW*oh*ow)
	padded := false
	for r := 0; r < w.KH; r++ {
		for s := 0; s < w.KW; s++ {
			for i := 0; i < oh; i++ {
				for j := 0; j < ow; j++ {
					row := i*w.StrideH - w.PadTop + r*dh
					col := j*w.StrideW - w.PadLeft + s*dw
					v := 0.0
					if row < 0 || row >= h || col < 0 || col >= wd {
						v = neg
						padded = true
					}
					vals = append(vals, v)
				}
			}
		}
	}
	l, err := core.NewLitF(core.Type{Shape: core.Shape{w.KH * w.KW, oh, ow}, Dtype: d}, vals)
	return l, padded, err
}

// MaxPool2D is the maximum over each window of x : [b,c,h,w], giving [b,c,oh,ow]. Positions
// in the padding are ignored (as in Gorgonia); a window entirely in the padding gives the most
// negative finite value of the dtype. The value is the element of x at the window's first
// maximum (NaN never wins against a number), so a window without padding whose elements are
// all -Inf (all NaN) gives -Inf (NaN), where Gorgonia gives the most negative finite value.
func MaxPool2D(x core.Term, w Window) (core.Term, error) {
	xs, err := w.checkOperand("max-pool", x)
	if err != nil {
		return nil, err
	}
	var b core.Builder
	g := windows(&b, x, w)
	pen, padded, err := padPenalty(w, xs[2], xs[3], x.Type().Dtype)
	b.SetErr(err)
	if padded {
		// [KH*KW, oh, ow] → [KH*KW, b, c, oh, ow]: replicate over c and b, then move them inward.
		p := b.Transpose([]int{2, 0, 1}, b.Replicate(xs[0], b.Replicate(xs[1], pen)))
		g = b.Add(g, p)
	}
	// The maximum is the element of x at the argmax of its window: a gather of x whose index
	// function looks the window position up in the argmax array. Its derivative scatters the
	// cotangent straight to the argmax positions (as Gorgonia's max-pool gradient does).
	am := b.ArgmaxOuter(g)
	dh, dw := w.dil()
	kw := core.ScalarI(int64(w.KW))
	vs, ts := indexVars(&b, 4) // [bb, cc, i, j]
	a := b.Index(am, ts...)
	row := addIx(&b, affine(&b, ts[2], int64(w.StrideH), int64(-w.PadTop)), affine(&b, b.Binary(core.OpQuot, a, kw), int64(dh), 0))
	col := addIx(&b, affine(&b, ts[3], int64(w.StrideW), int64(-w.PadLeft)), affine(&b, b.Binary(core.OpRem, a, kw), int64(dw), 0))
	oh, ow := w.OutHW(xs[2], xs[3])
	out := core.Shape{xs[0], xs[1], oh, ow}
	m := b.Gather(out, x, b.IndexFn(vs, ts[0], ts[1], row, col))
	if padded {
		// A window position in the padding (chosen only when no position inside the image is
		// larger) reads 0 from x; its penalty -max is added back, so the value is exactly
		// the window maximum of the penalised windows.
		vs2, ts2 := indexVars(&b, 4)
		a2 := b.Index(am, ts2...)
		m = b.Add(m, b.Gather(out, pen, b.IndexFn(vs2, a2, ts2[2], ts2[3])))
	}
	return result("max-pool", &b, m)
}

// SumPool2D is the sum over each window of x : [b,c,h,w] (padding counts as 0).
func SumPool2D(x core.Term, w Window) (core.Term, error) {
	if _, err := w.checkOperand("sum-pool", x); err != nil {
		return nil, err
	}
	var b core.Builder
	return result("sum-pool", &b, b.SumOuter(windows(&b, x, w)))
}

// AvgPool2D is the mean over each window of x : [b,c,h,w], dividing by KH*KW (padding counts
// as 0). Gorgonia v0.9.18's AveragePool2D divides by the input width instead; its adapter
// translation uses SumPool2D to reproduce that.
func AvgPool2D(x core.Term, w Window) (core.Term, error) {
	s, err := SumPool2D(x, w)
	if err != nil {
		return nil, err
	}
	c, err := FullLike(s.Type(), float64(w.KH*w.KW))
	if err != nil {
		return nil, err
	}
	var b core.Builder
	return result("avg-pool", &b, b.Div(s, c))
}

// GlobalAvgPool2D averages x : [b,c,h,w] over h and w, giving [b,c,1,1].
func GlobalAvgPool2D(x core.Term) (core.Term, error) {
	if err := checkTerm("global average pool", x); err != nil {
		return nil, err
	}
	xs := x.Type().Shape
	if xs.Rank() != 4 {
		return nil, errors.Errorf("lower: global average pool: operand shape %v, want [b,c,h,w]", xs)
	}
	m, err := Mean(x, 2, 3)
	if err != nil {
		return nil, err
	}
	return Reshape(m, core.Shape{xs[0], xs[1], 1, 1})
}

// Upsample2D repeats every element of x : [b,c,h,w] scale×scale times, giving
// [b,c,h*scale,w*scale].
func Upsample2D(x core.Term, scale int) (core.Term, error) {
	if err := checkTerm("upsample", x); err != nil {
		return nil, err
	}
	xs := x.Type().Shape
	if xs.Rank() != 4 || scale < 1 {
		return nil, errors.Errorf("lower: upsample: operand shape %v and scale %d, want [b,c,h,w] and scale ≥ 1", xs, scale)
	}
	if scale == 1 {
		return x, nil
	}
	var b core.Builder
	vs, ts := indexVars(&b, 4)
	s := core.ScalarI(int64(scale))
	fn := b.IndexFn(vs, ts[0], ts[1], b.Binary(core.OpQuot, ts[2], s), b.Binary(core.OpQuot, ts[3], s))
	return result("upsample", &b, b.Gather(core.Shape{xs[0], xs[1], xs[2] * scale, xs[3] * scale}, x, fn))
}

// BatchNormTrain normalises x : [b,c,…] per channel c with the batch statistics (training
// mode): mean μ and biased variance σ² over the batch and spatial positions, then
// x·α + β with α = 1/√(σ²+ε) and β = -μ·α (Gorgonia's formulation; scale and shift are
// separate operations).
func BatchNormTrain(x core.Term, eps float64) (core.Term, error) {
	if err := checkTerm("batch norm", x); err != nil {
		return nil, err
	}
	xs := x.Type().Shape
	if xs.Rank() < 2 || !x.Type().Dtype.IsFloat() {
		return nil, errors.Errorf("lower: batch norm: operand %v, want float [b,c,…]", x.Type())
	}
	bs, c := xs[0], xs[1]
	sp := xs[2:].Size()
	n := float64(bs * sp)
	d := x.Type().Dtype
	var b core.Builder
	x3 := reshapeIfNeeded(&b, core.Shape{bs, c, sp}, x)
	if err := wrap("batch norm", &b); err != nil {
		return nil, err
	}
	k := keep(&b)
	bc := func(v core.Term) core.Term {
		return k(Broadcast(b.Reshape(core.Shape{c, 1}, v), core.Shape{bs, c, sp}))
	} // [c] → [bs,c,sp]
	lit := func(v float64) core.Term { return b.Full(core.Type{Shape: core.Shape{c}, Dtype: d}, v) }
	mean := b.Div(k(Sum(x3, 0, 2)), lit(n))
	cen := b.Sub(x3, bc(mean))
	if err := wrap("batch norm", &b); err != nil {
		return nil, err
	}
	sq := k(Sum(b.Mul(cen, cen), 0, 2))
	alpha := b.Unary(core.OpRecip, b.Unary(core.OpSqrt, b.Add(b.Div(sq, lit(n)), lit(eps))))
	beta := b.Unary(core.OpNeg, b.Mul(mean, alpha))
	y := b.Add(b.Mul(x3, bc(alpha)), bc(beta))
	return result("batch norm", &b, reshapeIfNeeded(&b, xs, y))
}

// GroupNorm normalises x : [b,c,…] over each group of c/groups consecutive channels and all
// spatial positions of one sample: x·r - μ·r with r = 1/√(max(σ²,0)+ε), μ and σ² (biased) the
// group's mean and variance (Gorgonia's formulation; scale and shift are separate operations).
func GroupNorm(x core.Term, groups int, eps float64) (core.Term, error) {
	if err := checkTerm("group norm", x); err != nil {
		return nil, err
	}
	xs := x.Type().Shape
	if xs.Rank() < 2 || !x.Type().Dtype.IsFloat() || groups < 1 || xs[1]%groups != 0 {
		return nil, errors.Errorf("lower: group norm: operand %v with %d groups, want float [b,c,…] with c divisible by the groups", x.Type(), groups)
	}
	rows := xs[0] * groups
	n := xs.Size() / rows
	d := x.Type().Dtype
	var b core.Builder
	k := keep(&b)
	full := func(v float64) core.Term { return b.Full(core.Type{Shape: core.Shape{rows}, Dtype: d}, v) }
	x2 := b.Reshape(core.Shape{rows, n}, x)
	mean := b.Div(k(Sum(x2, 1)), full(float64(n)))
	cen := b.Sub(x2, k(Expand(mean, 1, n)))
	v := b.Div(k(Sum(b.Mul(cen, cen), 1)), full(float64(n)))
	r := b.Unary(core.OpRecip, b.Unary(core.OpSqrt, b.Add(b.Binary(core.OpMax, v, full(0)), full(eps))))
	y := b.Add(b.Mul(k(Expand(r, 1, n)), x2), k(Expand(b.Mul(b.Unary(core.OpNeg, r), mean), 1, n)))
	return result("group norm", &b, reshapeIfNeeded(&b, xs, y))
}
