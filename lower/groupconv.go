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
// for 1000. Two formulations, chosen by the input channels per group, cg = c/groups:
//
//   - batched (cg > 1): one batched matrix product over the groups, the filters
//     [groups, og, cg·KH·KW] times the windows gathered as [groups, cg·KH·KW, b·oh·ow], then
//     Conv2d's transpose of whole rows to [b,o,oh,ow]: exactly the convolution's
//     multiply-adds, at the speed of the GEMM;
//   - element-wise (cg = 1, depthwise with any channel multiplier): one gather of the
//     windows, [KH·KW, b, o, oh, ow], times the filters broadcast to that shape by a gather,
//     summed over the outer axis with sumOuter; the gradient is one scatter into x and one
//     reduction into f. No matrix product; raise runs the forward term and both gradient
//     products as one kernel each (kernel.WindowDot), none of them materialising the
//     windows.
//
// Windows are gathered straight from x (the kernels clip padded windows at block speed).
//
// Measured with kernel.Compile, forward and gradient (ad.Grad of Σ y·y with respect to x
// and f), float32, b = 2, 3×3 windows, pad 1, best of 5 on the shared 2-core machine,
// element-wise / batched (cg, groups, image): (1, 64, 16²) 2.1 / 1.0 ms; (1, 256, 8²)
// 2.2 / 1.6; (2, 32, 16²) 3.2 / 0.88; (2, 128, 8²) 3.4 / 1.4; (4, 32, 16²) 11 / 1.6;
// (8, 16, 8²) 5.5 / 0.66; (16, 25, 4², RegNetX-400MF's last stage) 8.9 / 0.85; (8, 56, 8²)
// 19 / 2.2. The batched form also replaced a block-diagonal one (one ordinary convolution
// with the filters scattered into a bank, zero off the diagonal: groups times the work). In
// raised torchvision models (batch 2, 3×64×64, float32) the batched form for depthwise too
// measured 78 against 87 ms for MobileNetV2's step and 45 against 55 for MNASNet0.5's with
// the element-wise form materialising its windows; with the fused kernel (WindowDot) the
// element-wise form takes about 80 and 33 ms, so depthwise stays element-wise.
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
	if cg := xs[1] / groups; cg == 1 {
		return groupedConvElementwise(x, f, w, groups)
	}
	return groupedConvBatched(x, f, w, groups)
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

// groupedConvBatched is GroupedConv2d as one batched matrix product over the groups: the
// filters [groups, og, cg·KH·KW] times the windows gathered as [groups, cg·KH·KW, b·oh·ow]
// (each group's own input channels, padding read as 0), giving [groups, og, b·oh·ow] =
// [o, b, oh·ow], then Conv2d's transpose of whole rows to [b, o, oh, ow]. It does exactly the
// convolution's multiply-adds, at the speed of the GEMM. Shapes and groups are checked.
func groupedConvBatched(x, f core.Term, w Window, groups int) (core.Term, error) {
	xs, fs := x.Type().Shape, f.Type().Shape
	cg, og := xs[1]/groups, fs[0]/groups
	oh, ow := w.OutHW(xs[2], xs[3])
	k := cg * w.KH * w.KW
	dh, dw := w.dil()
	var b core.Builder
	vs, ts := indexVars(&b, 7) // [g, c', r, s, bb, i, j]
	ch := addIx(&b, affine(&b, ts[0], int64(cg), 0), ts[1])
	row := addIx(&b, affine(&b, ts[5], int64(w.StrideH), int64(-w.PadTop)), affine(&b, ts[2], int64(dh), 0))
	col := addIx(&b, affine(&b, ts[6], int64(w.StrideW), int64(-w.PadLeft)), affine(&b, ts[3], int64(dw), 0))
	cols := b.Gather(core.Shape{groups, cg, w.KH, w.KW, xs[0], oh, ow}, x, b.IndexFn(vs, ts[4], ch, row, col))
	m := b.MatMul(b.Reshape(core.Shape{groups, og, k}, f), b.Reshape(core.Shape{groups, k, xs[0] * oh * ow}, cols))
	y := b.Reshape(core.Shape{fs[0], xs[0], oh * ow}, m)
	if xs[0] > 1 {
		y = b.Transpose([]int{1, 0, 2}, y)
	}
	return result("grouped conv2d", &b, b.Reshape(core.Shape{xs[0], fs[0], oh, ow}, y))
}
