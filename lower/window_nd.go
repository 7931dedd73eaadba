package lower

import (
	"math"

	"github.com/bulkad/bulkad/core"
	"github.com/pkg/errors"
)

// WindowND is a sliding window over the n trailing (spatial) dimensions of an array
// [b, c, d_1, …, d_n], for convolution and pooling in any number of spatial dimensions (1-D
// sequences, 2-D images, 3-D volumes). Along spatial axis k, output position i covers the
// input positions i·Strides[k] − PadBegin[k] + r·Dilations[k] for r < Kernel[k]; positions
// outside the input are padding (they read 0, or are ignored by max-pooling).
//
// Kernel fixes n. Strides and Dilations default to 1 and the pads to 0 when nil (otherwise
// they have n entries). The output size along axis k is
//
//	floor((d_k + PadBegin[k] + PadEnd[k] − (Dilations[k]·(Kernel[k]−1) + 1)) / Strides[k]) + 1,
//
// or with Ceil the same quotient rounded up (PyTorch's and ONNX's ceil_mode), less one where
// the last window would then start beyond the input and its begin padding (PyTorch drops such
// windows; ONNX's operator set 19 states the same rule). With Ceil the last window may
// overhang the end padding: the positions beyond it are neither read nor counted.
type WindowND struct {
	Kernel, Strides, Dilations, PadBegin, PadEnd []int
	Ceil                                         bool
}

// Rank is the number of spatial dimensions.
func (w WindowND) Rank() int { return len(w.Kernel) }

// at returns the stride, dilation and pads of axis k, with their defaults.
func (w WindowND) at(k int) (stride, dil, pb, pe int) {
	stride, dil = 1, 1
	if w.Strides != nil {
		stride = w.Strides[k]
	}
	if w.Dilations != nil && w.Dilations[k] != 0 {
		dil = w.Dilations[k]
	}
	if w.PadBegin != nil {
		pb = w.PadBegin[k]
	}
	if w.PadEnd != nil {
		pe = w.PadEnd[k]
	}
	return
}

// extent is the number of input positions a window spans along axis k.
func (w WindowND) extent(k int) int {
	_, d, _, _ := w.at(k)
	return d*(w.Kernel[k]-1) + 1
}

// Out is the output's spatial shape for an input of spatial shape in (len(in) = Rank).
func (w WindowND) Out(in []int) []int {
	out := make([]int, len(in))
	for k, n := range in {
		s, _, pb, pe := w.at(k)
		span := n + pb + pe - w.extent(k)
		if span < 0 {
			out[k] = 0
			continue
		}
		o := span/s + 1
		if w.Ceil {
			o = (span+s-1)/s + 1
			if (o-1)*s >= n+pb {
				o--
			}
		}
		out[k] = o
	}
	return out
}

// overhang is, per axis, how far the last window reaches beyond the end padding (Ceil only).
func (w WindowND) overhang(in []int) []int {
	out := w.Out(in)
	o := make([]int, len(in))
	for k, n := range in {
		s, _, pb, pe := w.at(k)
		o[k] = max(0, (out[k]-1)*s+w.extent(k)-(n+pb+pe))
	}
	return o
}

// check validates the window against an operand shape xs = [b, c, d_1, …, d_n].
func (w WindowND) check(op string, xs core.Shape) error {
	n := w.Rank()
	if n < 1 || xs.Rank() != n+2 {
		return errors.Errorf("lower: %s: operand shape %v for a %d-D window %v, want [b,c] and %d spatial dimensions", op, xs, n, w.Kernel, n)
	}
	for _, l := range [][]int{w.Strides, w.Dilations, w.PadBegin, w.PadEnd} {
		if l != nil && len(l) != n {
			return errors.Errorf("lower: %s: window %+v: strides, dilations and pads need %d entries each", op, w, n)
		}
	}
	for k := 0; k < n; k++ {
		s, d, pb, pe := w.at(k)
		if w.Kernel[k] < 1 || s < 1 || d < 1 || pb < 0 || pe < 0 {
			return errors.Errorf("lower: %s: invalid window %+v (kernel, strides and dilations must be positive, pads non-negative)", op, w)
		}
	}
	out := w.Out(xs[2:])
	for k, o := range out {
		if o < 1 {
			return errors.Errorf("lower: %s: window %+v does not fit shape %v (spatial axis %d)", op, w, xs, k)
		}
	}
	// the windows, [Πk, b, c, out…], are the largest array built (and literals of their size)
	return checkBytes(op, append(append(append(core.Shape{}, w.Kernel...), xs[0], xs[1]), out...))
}

// checkBytes refuses an array of shape sh (float64) above core's array limit (core.ArrayLimit)
// before a literal of that size is made: a corrupt window (pads of 2^40) must give an error,
// not exhaust the memory while lowering.
func checkBytes(op string, sh core.Shape) error {
	limit, err := core.ArrayLimit()
	if err != nil {
		return errors.Wrapf(err, "lower: %s", op)
	}
	if n := core.TypeBytes(core.Type{Shape: sh, Dtype: core.Float64}); limit >= 0 && n > limit {
		return errors.Errorf("lower: %s: an array of shape %v needs %s, above the array limit of %s (set %s to raise it)",
			op, sh, core.FormatBytes(n), core.FormatBytes(limit), core.ArrayLimitEnv)
	}
	return nil
}

// window2 is the 2-D Window of a 2-D WindowND over spatial shape in; the overhang of a Ceil
// window becomes extra end padding.
func (w WindowND) window2(in []int) Window {
	oh := w.overhang(in)
	s0, d0, pb0, pe0 := w.at(0)
	s1, d1, pb1, pe1 := w.at(1)
	return Window{KH: w.Kernel[0], KW: w.Kernel[1], StrideH: s0, StrideW: s1, DilationH: d0, DilationW: d1,
		PadTop: pb0, PadBottom: pe0 + oh[0], PadLeft: pb1, PadRight: pe1 + oh[1]}
}

// fits2D reports whether the 2-D Window w2 over spatial shape in gives w's output shape (it
// does unless a Ceil window's end pads are as wide as the window).
func (w WindowND) fits2D(w2 Window, in []int) bool {
	oh, ow := w2.OutHW(in[0], in[1])
	out := w.Out(in)
	return oh == out[0] && ow == out[1]
}

// as2D views a 1-D window as a 2-D one of height 1 (over spatial shape in).
func (w WindowND) as2D() WindowND {
	s, d, pb, pe := w.at(0)
	return WindowND{Kernel: []int{1, w.Kernel[0]}, Strides: []int{1, s}, Dilations: []int{1, d},
		PadBegin: []int{0, pb}, PadEnd: []int{0, pe}, Ceil: w.Ceil}
}

// via2D runs a 2-D operation f2 (x, and filters f unless nil) for a window of one or two
// spatial dimensions, one viewed as a height of 1 (a reshape each way, nothing copied); ok is
// false for other windows, and for the Ceil windows that no 2-D Window reproduces.
func via2D(op string, x, f core.Term, w WindowND, f2 func(x, f core.Term, w2 Window) (core.Term, error)) (y core.Term, ok bool, err error) {
	xs := x.Type().Shape
	switch w.Rank() {
	case 2:
		w2 := w.window2(xs[2:])
		if !w.fits2D(w2, xs[2:]) {
			return nil, false, nil
		}
		y, err := f2(x, f, w2)
		return y, true, err
	case 1:
		w1 := w.as2D()
		in := []int{1, xs[2]}
		w2 := w1.window2(in)
		if !w1.fits2D(w2, in) {
			return nil, false, nil
		}
		var b core.Builder
		x4 := unitAxis(&b, x)
		var f4 core.Term
		if f != nil {
			f4 = unitAxis(&b, f)
		}
		if err := wrap(op, &b); err != nil {
			return nil, true, err
		}
		y, err := f2(x4, f4, w2)
		if err != nil {
			return nil, true, err
		}
		ys := y.Type().Shape
		y, err = Reshape(y, core.Shape{ys[0], ys[1], ys[3]})
		return y, true, err
	}
	return nil, false, nil
}

// unitAxis reshapes [b, c, L] to [b, c, 1, L].
func unitAxis(b *core.Builder, x core.Term) core.Term {
	xs := x.Type().Shape
	return b.Reshape(core.Shape{xs[0], xs[1], 1, xs[2]}, x)
}

// ndIndex returns, for index variables ts[kOff+k] (window position r_k) and ts[iOff+k]
// (output position i_k), the input positions i_k·s_k − pb_k + r_k·d_k of every spatial axis.
func (w WindowND) ndIndex(b *core.Builder, ts []core.Term, kOff, iOff int) []core.Term {
	pos := make([]core.Term, w.Rank())
	for k := range pos {
		s, d, pb, _ := w.at(k)
		pos[k] = addIx(b, affine(b, ts[iOff+k], int64(s), int64(-pb)), affine(b, ts[kOff+k], int64(d), 0))
	}
	return pos
}

// checkConvArgs checks what ConvND and ConvTransposeND (op) ask in common of the image x and
// the filters f (whose first two dimensions lead describes): the image [b, c] and the filters
// lead ++ w.Kernel, both of rank w.Rank()+2, and no ceil mode. It returns their shapes.
func checkConvArgs(op string, x, f core.Term, w WindowND, lead string) (xs, fs core.Shape, err error) {
	if err := checkTerm(op, x, f); err != nil {
		return nil, nil, err
	}
	xs, fs = x.Type().Shape, f.Type().Shape
	n := w.Rank()
	if fs.Rank() != n+2 || xs.Rank() != n+2 {
		return nil, nil, errors.Errorf("lower: %s: image %v and filters %v for a %d-D window, want [b,c] ++ %d spatial dimensions and %s ++ the kernel", op, xs, fs, n, n, lead)
	}
	if !fs[2:].Equal(core.Shape(w.Kernel)) {
		return nil, nil, errors.Errorf("lower: %s: filters %v do not match the kernel %v", op, fs, w.Kernel)
	}
	if w.Ceil {
		return nil, nil, errors.Errorf("lower: %s: ceil mode: the output size of a convolution is never rounded up (window %+v)", op, w)
	}
	return xs, fs, nil
}

// ConvND is the convolution (cross-correlation) of x : [b, c, d_1, …, d_n] with filters
// f : [o, c/groups, k_1, …, k_n] in groups (as GroupedConv2d: groups consecutive blocks of
// input and output channels), for any number n ≥ 1 of spatial dimensions; the result is
// [b, o, out_1, …, out_n] with the output sizes of w (w.Ceil is refused). Two spatial
// dimensions are GroupedConv2d itself, one is GroupedConv2d over a height of 1 (a reshape
// each way, nothing copied); three or more gather the windows and multiply them with the
// filters in one matrix product (a batched one over the groups), as Conv2d does.
func ConvND(x, f core.Term, w WindowND, groups int) (core.Term, error) {
	const op = "conv"
	xs, fs, err := checkConvArgs(op, x, f, w, "[o,c/groups]")
	if err != nil {
		return nil, err
	}
	if groups < 1 || xs[1]%groups != 0 || fs[0]%groups != 0 || fs[1]*groups != xs[1] {
		return nil, errors.Errorf("lower: %s: %d groups do not divide image %v and filters %v (want c and o divisible by the groups and filters [o, c/groups, …])", op, groups, xs, fs)
	}
	if err := w.check(op, xs); err != nil {
		return nil, err
	}
	if y, ok, err := via2D(op, x, f, w, func(x, f core.Term, w2 Window) (core.Term, error) { return GroupedConv2d(x, f, w2, groups) }); ok {
		return y, err
	}
	return convGeneric(x, f, w, groups)
}

// convGeneric is ConvND for any number of spatial dimensions: the windows gathered as
// [groups, c/groups, k_1, …, k_n, b, out_1, …, out_n] (padding reads 0), one (batched) matrix
// product with the filters [groups, o/groups, c/groups·Πk], and a transpose of whole rows
// [o, b, Πout] → [b, o, Πout]. Operands are checked.
func convGeneric(x, f core.Term, w WindowND, groups int) (core.Term, error) {
	xs, fs := x.Type().Shape, f.Type().Shape
	n := w.Rank()
	out := w.Out(xs[2:])
	cg, og := xs[1]/groups, fs[0]/groups
	oo := prod(out)
	k := cg * prod(w.Kernel)
	var b core.Builder
	// index variables [g, c', r_1..r_n, bb, i_1..i_n]
	vs, ts := indexVars(&b, 3+2*n)
	ch := addIx(&b, affine(&b, ts[0], int64(cg), 0), ts[1])
	ix := append([]core.Term{ts[2+n], ch}, w.ndIndex(&b, ts, 2, 3+n)...)
	sh := append(append(core.Shape{groups, cg}, w.Kernel...), xs[0])
	sh = append(sh, out...)
	cols := b.Gather(sh, x, b.IndexFn(vs, ix...))
	var m core.Term
	if groups == 1 {
		m = b.MatMul(b.Reshape(core.Shape{fs[0], k}, f), b.Reshape(core.Shape{k, xs[0] * oo}, cols))
	} else {
		m = b.MatMul(b.Reshape(core.Shape{groups, og, k}, f), b.Reshape(core.Shape{groups, k, xs[0] * oo}, cols))
	}
	y := b.Reshape(core.Shape{fs[0], xs[0], oo}, m)
	if xs[0] > 1 {
		y = b.Transpose([]int{1, 0, 2}, y)
	}
	return result("conv", &b, b.Reshape(append(core.Shape{xs[0], fs[0]}, out...), y))
}

// windowsND gathers the windows of x : [b, c, d…] as [Πk, b, c, out…] (window position
// outermost, row-major over the kernel); positions outside x read 0.
func windowsND(b *core.Builder, x core.Term, w WindowND) core.Term {
	xs := x.Type().Shape
	n := w.Rank()
	out := w.Out(xs[2:])
	vs, ts := indexVars(b, 2+2*n) // [r_1..r_n, bb, cc, i_1..i_n]
	ix := append([]core.Term{ts[n], ts[n+1]}, w.ndIndex(b, ts, 0, n+2)...)
	sh := append(append(append(core.Shape{}, w.Kernel...), xs[0], xs[1]), out...)
	g := b.Gather(sh, x, b.IndexFn(vs, ix...))
	return b.Reshape(append(core.Shape{prod(w.Kernel), xs[0], xs[1]}, out...), g)
}

// forEachTap calls f for every window position (flat index r, row-major over the kernel) and
// output position (flat index o) with whether the input position it reads is inside the
// input (inside) and inside the input or its pads (padded).
func (w WindowND) forEachTap(in []int, f func(r, o int, inside, padded bool)) {
	n := w.Rank()
	out := w.Out(in)
	kk, oo := prod(w.Kernel), prod(out)
	rk, ok := make([]int, n), make([]int, n)
	for r := 0; r < kk; r++ {
		unflat(r, w.Kernel, rk)
		for o := 0; o < oo; o++ {
			unflat(o, out, ok)
			inside, padded := true, true
			for k := 0; k < n; k++ {
				s, d, pb, pe := w.at(k)
				p := ok[k]*s - pb + rk[k]*d
				inside = inside && p >= 0 && p < in[k]
				padded = padded && p >= -pb && p < in[k]+pe
			}
			f(r, o, inside, padded)
		}
	}
}

// unflat writes the row-major multi-index of flat index i in shape sh to ix.
func unflat(i int, sh []int, ix []int) {
	for k := len(sh) - 1; k >= 0; k-- {
		ix[k] = i % sh[k]
		i /= sh[k]
	}
}

// poolVia2D checks the operands of the pooling op and computes it through pool2D when the
// windows have one or two spatial dimensions that Window can describe; done reports that y
// and err are the answer.
func poolVia2D(op string, x core.Term, w WindowND, pool2D func(core.Term, Window) (core.Term, error)) (y core.Term, done bool, err error) {
	if err := checkTerm(op, x); err != nil {
		return nil, true, err
	}
	if err := w.check(op, x.Type().Shape); err != nil {
		return nil, true, err
	}
	return via2D(op, x, nil, w, func(x, _ core.Term, w2 Window) (core.Term, error) { return pool2D(x, w2) })
}

// MaxPoolND is the maximum over each window of x : [b, c, d_1, …, d_n], giving
// [b, c, out_1, …, out_n]; positions outside the input (padding, the overhang of a Ceil
// window) are ignored, and the value is the element of x at the window's first maximum
// (row-major over the kernel), as in MaxPool2D, which two spatial dimensions use (one uses it
// over a height of 1).
func MaxPoolND(x core.Term, w WindowND) (core.Term, error) {
	if y, done, err := poolVia2D("max-pool", x, w, MaxPool2D); done {
		return y, err
	}
	return maxPoolGeneric(x, w)
}

// maxPoolGeneric is MaxPoolND for any number of spatial dimensions, written as MaxPool2D is:
// windows penalised by −max outside the input, their argmax, and a gather of x at the argmax
// (so the derivative scatters the cotangent to the argmax positions). Operands are checked.
func maxPoolGeneric(x core.Term, w WindowND) (core.Term, error) {
	xs := x.Type().Shape
	n := w.Rank()
	in := []int(xs[2:])
	out := w.Out(in)
	kk, oo := prod(w.Kernel), prod(out)
	neg := -math.MaxFloat64
	if x.Type().Dtype == core.Float32 {
		neg = -math.MaxFloat32
	}
	pen := make([]float64, kk*oo)
	padded := false
	w.forEachTap(in, func(r, o int, inside, _ bool) {
		if !inside {
			pen[r*oo+o] = neg
			padded = true
		}
	})
	var b core.Builder
	g := windowsND(&b, x, w)
	var penT core.Term
	if padded {
		l, err := core.NewLitF(core.Type{Shape: append(core.Shape{kk}, out...), Dtype: x.Type().Dtype}, pen)
		if err != nil {
			return nil, errors.Wrap(err, "lower: max-pool")
		}
		penT = l
		// [Πk, out…] → [b, c, Πk, out…] → [Πk, b, c, out…]
		perm := append([]int{2, 0, 1}, seq(3, 3+n)...)
		g = b.Add(g, b.Transpose(perm, b.Replicate(xs[0], b.Replicate(xs[1], l))))
	}
	am := b.ArgmaxOuter(g) // [b, c, out…]
	vs, ts := indexVars(&b, 2+n)
	a := b.Index(am, ts...)
	ix := []core.Term{ts[0], ts[1]}
	stride := kk
	for k := 0; k < n; k++ {
		s, d, pb, _ := w.at(k)
		stride /= w.Kernel[k]
		r := a
		if stride > 1 {
			r = b.Binary(core.OpQuot, r, core.ScalarI(int64(stride)))
		}
		if k > 0 {
			r = b.Binary(core.OpRem, r, core.ScalarI(int64(w.Kernel[k])))
		}
		ix = append(ix, addIx(&b, affine(&b, ts[2+k], int64(s), int64(-pb)), affine(&b, r, int64(d), 0)))
	}
	osh := append(core.Shape{xs[0], xs[1]}, out...)
	m := b.Gather(osh, x, b.IndexFn(vs, ix...))
	if padded {
		// a window position outside x (chosen only when nothing inside is larger) read 0:
		// add its penalty back, as MaxPool2D does
		vs2, ts2 := indexVars(&b, 2+n)
		m = b.Add(m, b.Gather(osh, penT, b.IndexFn(vs2, append([]core.Term{b.Index(am, ts2...)}, ts2[2:]...)...)))
	}
	return result("max-pool", &b, m)
}

// seq is lo, lo+1, …, hi−1.
func seq(lo, hi int) []int {
	out := make([]int, 0, hi-lo)
	for i := lo; i < hi; i++ {
		out = append(out, i)
	}
	return out
}

// SumPoolND is the sum over each window of x : [b, c, d_1, …, d_n] (positions outside x
// count as 0), giving [b, c, out_1, …, out_n].
func SumPoolND(x core.Term, w WindowND) (core.Term, error) {
	if y, done, err := poolVia2D("sum-pool", x, w, SumPool2D); done {
		return y, err
	}
	var b core.Builder
	return result("sum-pool", &b, b.SumOuter(windowsND(&b, x, w)))
}

// AvgPoolND is the mean over each window of x : [b, c, d_1, …, d_n]: the window's sum
// (SumPoolND) divided by the number of its positions inside the input and its pads
// (countPad, ONNX's count_include_pad = 1) or inside the input only (count_include_pad = 0;
// PyTorch's count_include_pad=False). The positions of a Ceil window's overhang are not
// counted either way (as in PyTorch). A window with no position counted (possible only with
// pads at least as wide as the window) divides by 1.
func AvgPoolND(x core.Term, w WindowND, countPad bool) (core.Term, error) {
	s, err := SumPoolND(x, w)
	if err != nil {
		return nil, errors.Wrap(err, "lower: avg-pool")
	}
	xs := x.Type().Shape
	in := []int(xs[2:])
	out := w.Out(in)
	div := make([]float64, prod(out))
	w.forEachTap(in, func(r, o int, inside, padded bool) {
		if inside || countPad && padded {
			div[o]++
		}
	})
	same := true
	for i := range div {
		div[i] = math.Max(div[i], 1)
		same = same && div[i] == div[0]
	}
	var d core.Term
	if same {
		if d, err = FullLike(s.Type(), div[0]); err != nil {
			return nil, err
		}
	} else {
		l, err := core.NewLitF(core.Type{Shape: append(core.Shape{1, 1}, out...), Dtype: x.Type().Dtype}, div)
		if err != nil {
			return nil, errors.Wrap(err, "lower: avg-pool")
		}
		if d, err = Broadcast(l, s.Type().Shape); err != nil {
			return nil, err
		}
	}
	var b core.Builder
	return result("avg-pool", &b, b.Div(s, d))
}

// ConvTransposeND is the transposed convolution of x : [b, c, d_1, …, d_n] with filters
// f : [c, o/groups, k_1, …, k_n] in groups (PyTorch's ConvTranspose and ONNX's
// ConvTranspose): every input position i scatters x[·, ch, i] · f[ch, m, r] to output position
// i·s − PadBegin + r·dil of output channel (group of ch)·o/groups + m, and the result, of
// spatial size
//
//	s·(d − 1) + outPad + dil·(k − 1) + 1 − PadBegin − PadEnd
//
// per axis, holds the sums (contributions that fall into the cropped pads are dropped). It is
// the adjoint of ConvND with respect to its image. One (batched, over the groups) matrix
// product of the transposed filters [groups, o/groups·Πk, c/groups] with the image
// [groups, c/groups, b·Πd] and one scatter of its columns; outPad (nil for none) must be
// smaller than the stride or the dilation on each axis; w.Ceil is refused.
func ConvTransposeND(x, f core.Term, w WindowND, groups int, outPad []int) (core.Term, error) {
	const op = "conv transpose"
	xs, fs, err := checkConvArgs(op, x, f, w, "[c,o/groups]")
	if err != nil {
		return nil, err
	}
	n := w.Rank()
	if groups < 1 || xs[1]%groups != 0 || fs[0] != xs[1] {
		return nil, errors.Errorf("lower: %s: %d groups do not divide image %v and filters %v (want filters [c, o/groups, …] with c divisible by the groups)", op, groups, xs, fs)
	}
	if outPad != nil && len(outPad) != n {
		return nil, errors.Errorf("lower: %s: output padding %v for a %d-D window", op, outPad, n)
	}
	out := make([]int, n)
	for k := 0; k < n; k++ {
		s, d, pb, pe := w.at(k)
		op0 := 0
		if outPad != nil {
			op0 = outPad[k]
		}
		if w.Kernel[k] < 1 || s < 1 || d < 1 || pb < 0 || pe < 0 || op0 < 0 || (op0 >= s && op0 >= d) {
			return nil, errors.Errorf("lower: %s: invalid window %+v with output padding %v (kernel, strides and dilations positive, pads non-negative, output padding below the stride or the dilation)", op, w, outPad)
		}
		out[k] = s*(xs[2+k]-1) + op0 + d*(w.Kernel[k]-1) + 1 - pb - pe
		if out[k] < 1 {
			return nil, errors.Errorf("lower: %s: the pads of window %+v leave no output for image %v", op, w, xs)
		}
	}
	if err := checkBytes(op, append(append(core.Shape{fs[1]}, w.Kernel...), xs...)); err != nil {
		return nil, err
	}
	if err := checkBytes(op, append(core.Shape{xs[0], groups * fs[1]}, out...)); err != nil {
		return nil, err
	}
	cg, og := xs[1]/groups, fs[1]
	kk, ii := prod(w.Kernel), prod([]int(xs[2:]))
	var b core.Builder
	// the image with its channels first: [c, b·Πd] (whole rows moved when b > 1)
	img := b.Reshape(core.Shape{xs[1], xs[0] * ii}, x)
	if xs[0] > 1 {
		img = b.Reshape(core.Shape{xs[1], xs[0] * ii}, b.Transpose([]int{1, 0, 2}, b.Reshape(core.Shape{xs[0], xs[1], ii}, x)))
	}
	var cols core.Term
	if groups == 1 {
		cols = b.MatMul(b.Transpose([]int{1, 0}, b.Reshape(core.Shape{xs[1], og * kk}, f)), img)
	} else {
		cols = b.MatMul(b.Transpose([]int{0, 2, 1}, b.Reshape(core.Shape{groups, cg, og * kk}, f)), b.Reshape(core.Shape{groups, cg, xs[0] * ii}, img))
	}
	// cols as [groups, og, k_1..k_n, b, d_1..d_n], scattered to [b, o, out…]
	sh := append(append(core.Shape{groups, og}, w.Kernel...), xs[0])
	sh = append(sh, xs[2:]...)
	vs, ts := indexVars(&b, 3+2*n) // [g, m, r_1..r_n, bb, i_1..i_n]
	ch := addIx(&b, affine(&b, ts[0], int64(og), 0), ts[1])
	ix := append([]core.Term{ts[2+n], ch}, w.ndIndex(&b, ts, 2, 3+n)...)
	y := b.Scatter(append(core.Shape{xs[0], groups * og}, out...), b.Reshape(sh, cols), b.IndexFn(vs, ix...))
	return result(op, &b, y)
}
