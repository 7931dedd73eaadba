package lower

import (
	"github.com/bulkad/bulkad/core"
	"github.com/pkg/errors"
)

// GroupedConv2d is the 2-D convolution (cross-correlation) of x : [b,c,h,w] with filters
// f : [o, c/groups, KH, KW] in groups: the c input and o output channels are split into
// groups consecutive blocks of c/groups and o/groups, and output block g is the convolution
// of input block g with filter block g (PyTorch's and ONNX's Conv with group). groups = c is
// a depthwise convolution (with channel multiplier o/c). The result is [b,o,oh,ow].
//
// groups = 1 is Conv2d. Otherwise every group is computed by one bulk operation, never a
// loop over the groups, so the program and its gradient have the same size for 2 groups as
// for 1000. Two formulations are used, chosen by the input channels per group, cg = c/groups:
//
//   - element-wise (cg = 1, depthwise with any channel multiplier; or groups ≥ 32·cg): one
//     gather of the windows, [cg·KH·KW, b, o, oh, ow] (input channel and window position
//     outermost, each output channel reading its group's input channels in place), times the
//     filters broadcast to that shape by a gather, summed over the outer axis with sumOuter.
//     No matrix product; the gradient is one scatter into x (col2im) and one scatter-sum into
//     f. Its work is the number of multiply-adds, at the speed of element-wise kernels; raise
//     runs the forward term and both gradient products as one kernel each
//     (kernel.WindowDot), none of them materialising the windows.
//   - block-diagonal (otherwise): the filters are placed, by one scatter whose index function
//     repeats the group, into the dense filter bank of one ordinary convolution, zero off the
//     diagonal blocks, directly in the [c·KH·KW, o] layout of its matrix product (so neither
//     the bank nor its gradient is transposed); then one im2col and one matrix product, as in
//     Conv2d. The gradient gathers the diagonal blocks back. It does groups times the
//     multiply-adds, at the speed of the GEMM.
//
// Both pad the image first (an in-bounds scatter into the padded array), so that the window
// gather and its gradient read and write in bounds everywhere and run as strided block
// copies; a gather that reads the padding out of bounds runs element by element in the
// kernels that raise uses (MobileNetV2's training step: 0.42 s without, 0.17 s with).
//
// The rule comes from measuring both, with kernel.Compile, forward and gradient (ad.Grad of
// sum(y·r) with respect to x and f) for b = 2, c = o, 16×16, 3×3 windows, float32, on the
// shared 2-core development machine; forward + gradient in ms, element-wise / block-diagonal
// / the per-group convolutions this replaces (one Conv2d per group, concatenated):
//
//	cg = 1:  2 groups 0.22 / 0.34 / 0.50   64 groups 4.8 / 7.6 / 21     256 groups 20 / 52 / 129
//	cg = 2:  8 groups 2.2 / 1.5 / 3.8      32 groups 9.3 / 6.6 / 17     128 groups 37 / 54 / 93
//	cg = 3: 16 groups 10 / 5.5 / 12        64 groups 46 / 33 / 57
//	cg = 4: 32 groups 36 / 18 / 37         64 groups 70 / 43 / 76       128 groups 142 / 159 / 194
//	cg = 8:  8 groups 31 / 11 / 13         64 groups 231 / 112 / 139
//	cg = 16: 4 groups 69 / 11 / 13         32 groups 518 / 105 / 126
//
// and for b = 8, 32×32: 96 depthwise groups 101 / 240, cg = 2 with 16 groups 66 / 59. The
// element-wise form costs about 15 ns per multiply-add (forward and gradient together), the
// GEMM 0.1–0.4 ns per multiply-add it does, groups times as many. With many channels per
// group and few positions the per-group convolutions are still faster (each a small GEMM
// without the waste): 10.4 ms against 3.2 for RegNetX-400MF's last stage (400 channels in 25
// groups, 2×2, b = 2; element-wise 28), though a whole raised RegNetX-400MF training step
// takes the same time as with them; a batched matrix product in the core language or its
// kernels would close that gap. The general build1-over-groups formulation was not used: the
// bulk-operation transform turns a matmul whose operands both depend on the build variable
// into the same sum of products as the element-wise form.
func GroupedConv2d(x, f core.Term, w Window, groups int) (core.Term, error) {
	const op = "grouped conv2d"
	if err := checkTerm(op, x, f); err != nil {
		return nil, err
	}
	xs, fs := x.Type().Shape, f.Type().Shape
	if xs.Rank() != 4 || fs.Rank() != 4 {
		return nil, errors.Errorf("lower: %s: image %v and filters %v, want [b,c,h,w] and [o,c/groups,KH,KW]", op, xs, fs)
	}
	if groups < 1 || xs[1]%groups != 0 || fs[0]%groups != 0 || fs[1]*groups != xs[1] {
		return nil, errors.Errorf("lower: %s: %d groups do not divide image %v and filters %v (want c and o divisible by the groups and filters [o, c/groups, KH, KW])", op, groups, xs, fs)
	}
	if fs[2] != w.KH || fs[3] != w.KW {
		return nil, errors.Errorf("lower: %s: filters %v do not match the window %dx%d", op, fs, w.KH, w.KW)
	}
	if err := w.check(op, xs); err != nil {
		return nil, err
	}
	if groups == 1 {
		return Conv2d(x, f, w)
	}
	if cg := xs[1] / groups; cg == 1 || groups >= 32*cg {
		return groupedConvElementwise(x, f, w, groups)
	}
	return groupedConvBlockDiag(x, f, w, groups)
}

// padImage returns x : [b,c,h,w] zero-padded by w's paddings (a scatter into the larger
// array, every write in bounds) and the paddings left to apply (0, 0), or x itself and its
// paddings (top, left) when there are none. Every window of the padded image lies inside it,
// so the window gather reads in bounds everywhere and the kernels copy it as strided blocks
// (a gather that reads some positions out of bounds is run element by element); its
// gradient, a scatter, likewise, and the padding's gradient is an in-bounds gather.
func padImage(b *core.Builder, x core.Term, w Window) (core.Term, int, int) {
	if w.PadTop == 0 && w.PadBottom == 0 && w.PadLeft == 0 && w.PadRight == 0 {
		return x, 0, 0
	}
	xs := x.Type().Shape
	vs, ts := indexVars(b, 4)
	sh := core.Shape{xs[0], xs[1], xs[2] + w.PadTop + w.PadBottom, xs[3] + w.PadLeft + w.PadRight}
	return b.Scatter(sh, x, b.IndexFn(vs, ts[0], ts[1], affine(b, ts[2], 1, int64(w.PadTop)), affine(b, ts[3], 1, int64(w.PadLeft)))), 0, 0
}

// groupedConvElementwise is GroupedConv2d as sumOuter (windows · broadcast filters) over the
// input channels of a group and the window positions. Shapes and groups are checked.
func groupedConvElementwise(x, f core.Term, w Window, groups int) (core.Term, error) {
	xs, fs := x.Type().Shape, f.Type().Shape
	cg, og := xs[1]/groups, fs[0]/groups
	oh, ow := w.OutHW(xs[2], xs[3])
	dh, dw := w.dil()
	var b core.Builder
	// [c', r, s, bb, g, m, i, j]: input channel c' of the group, window position (r, s),
	// sample, group, output channel m of the group, output position (i, j).
	sh := core.Shape{cg, w.KH, w.KW, xs[0], groups, og, oh, ow}
	vs, ts := indexVars(&b, 8)
	ch := affine(&b, ts[4], int64(cg), 0)
	if cg > 1 {
		ch = addIx(&b, ch, ts[0])
	}
	xp, pt, pl := x, w.PadTop, w.PadLeft
	row := addIx(&b, affine(&b, ts[6], int64(w.StrideH), int64(-pt)), affine(&b, ts[1], int64(dh), 0))
	col := addIx(&b, affine(&b, ts[7], int64(w.StrideW), int64(-pl)), affine(&b, ts[2], int64(dw), 0))
	win := b.Gather(sh, xp, b.IndexFn(vs, ts[3], ch, row, col))
	f5 := b.Reshape(core.Shape{groups, og, cg, w.KH, w.KW}, f)
	fvs, fts := indexVars(&b, 8)
	bf := b.Gather(sh, f5, b.IndexFn(fvs, fts[4], fts[5], fts[0], fts[1], fts[2]))
	prod := b.Reshape(core.Shape{cg * w.KH * w.KW, xs[0], fs[0], oh, ow}, b.Mul(win, bf))
	return result("grouped conv2d", &b, b.SumOuter(prod))
}

// groupedConvBlockDiag is GroupedConv2d as one convolution with the block-diagonal filter
// bank. Shapes and groups are checked.
func groupedConvBlockDiag(x, f core.Term, w Window, groups int) (core.Term, error) {
	xs, fs := x.Type().Shape, f.Type().Shape
	cg, og := xs[1]/groups, fs[0]/groups
	var b core.Builder
	cols, err := Im2Col(x, w)
	if err != nil {
		return nil, err
	}
	cs := cols.Type().Shape
	// bank[g, c', r, s, g, m] = f[g, m, c', r, s], 0 off the diagonal: the filters of
	// Conv2d's matrix product (transposed), placed by a scatter whose index function repeats
	// the group (work proportional to f, not to the bank); the gradient gathers the diagonal
	// blocks back.
	f5 := b.Reshape(core.Shape{groups, og, cg, w.KH, w.KW}, f)
	vs, ts := indexVars(&b, 5)
	bank := b.Scatter(core.Shape{groups, cg, w.KH, w.KW, groups, og}, f5,
		b.IndexFn(vs, ts[0], ts[2], ts[3], ts[4], ts[0], ts[1]))
	m := b.MatMul(b.Reshape(core.Shape{cs[0] * cs[1] * cs[2], cs[3]}, cols), b.Reshape(core.Shape{cs[3], fs[0]}, bank))
	r := b.Reshape(core.Shape{cs[0], cs[1], cs[2], fs[0]}, m)
	return result("grouped conv2d", &b, b.Transpose([]int{0, 3, 1, 2}, r))
}
