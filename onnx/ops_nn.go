package onnx

import (
	"github.com/bulkad/bulkad/core"
	"github.com/bulkad/bulkad/lower"
	"github.com/pkg/errors"
)

// opsNN lowers the operators of neural-network layers (products, convolution, pooling,
// normalisation, softmax).
var opsNN = map[string]opFn{
	"MatMul":             opMatMul,
	"Gemm":               opGemm,
	"Softmax":            opSoftmax(false),
	"LogSoftmax":         opSoftmax(true),
	"Conv":               opConv,
	"MaxPool":            opPool(false),
	"AveragePool":        opPool(true),
	"GlobalAveragePool":  floatOp(1, opGlobalAvgPool),
	"BatchNormalization": opBatchNorm,
}

// --- products ---

// opMatMul: NumPy's matmul. Matrices and vectors are the matrix products of package lower;
// stacks of matrices (rank ≥ 3 on either side) are lower.BroadcastMatMul: batch dimensions
// broadcast, core's batched matmul over the common batch, one matrix product where an operand
// has no batch.
func opMatMul(c *ctx, n *Node, ins []value) ([]value, error) {
	return floatOp(2, func(c *ctx, n *Node, x []core.Term) (core.Term, error) {
		a, b := x[0], x[1]
		sa, sb := shapeOf(a), shapeOf(b)
		switch ra, rb := len(sa), len(sb); {
		case ra == 0 || rb == 0:
			return nil, errors.Errorf("operand shapes %v and %v: MatMul needs rank ≥ 1", sa, sb)
		case ra == 2 && rb == 2:
			return lower.MatMul(a, b, false, false)
		case ra == 1 && rb == 2:
			return lower.MatVec(b, a, true)
		case ra == 2 && rb == 1:
			return lower.MatVec(a, b, false)
		case ra == 1 && rb == 1:
			return lower.Dot(a, b)
		case ra == 3 && rb == 3 && sa[0] == sb[0]:
			return lower.BatchedMatMul(a, b, false, false)
		}
		t, err := lower.BroadcastMatMul(a, b)
		return t, errors.Wrapf(err, "MatMul of %v and %v", sa, sb)
	})(c, n, ins)
}

func opGemm(c *ctx, n *Node, ins []value) ([]value, error) {
	ab, err := c.floatIns(ins, 2)
	if err != nil {
		return nil, err
	}
	t, err := lower.MatMul(ab[0], ab[1], n.attrInt("transA", 0) != 0, n.attrInt("transB", 0) != 0)
	if err != nil {
		return nil, err
	}
	var b core.Builder
	if alpha := n.attrFloat("alpha", 1); alpha != 1 {
		s, err := lower.FullLike(t.Type(), alpha)
		if err != nil {
			return nil, err
		}
		t = b.Mul(s, t)
	}
	if len(ins) > 2 && (ins[2].t != nil || ins[2].isF) {
		cc, err := c.term(ins[2])
		if err != nil {
			return nil, err
		}
		if beta := n.attrFloat("beta", 1); beta != 1 {
			s, err := lower.FullLike(cc.Type(), beta)
			if err != nil {
				return nil, err
			}
			cc = b.Mul(s, cc)
		}
		if cc, err = lower.Broadcast(cc, shapeOf(t)); err != nil {
			return nil, err
		}
		t = b.Add(t, cc)
	}
	return []value{{t: t}}, b.Err()
}

// --- softmax ---

func opSoftmax(log bool) opFn {
	return floatOp(1, func(c *ctx, n *Node, x []core.Term) (core.Term, error) {
		sh := shapeOf(x[0])
		f := lower.Softmax
		if log {
			f = lower.LogSoftmax
		}
		if c.opset >= 13 {
			axis, err := normAxis(n.attrInt("axis", -1), len(sh))
			if err != nil {
				return nil, err
			}
			return f(x[0], axis)
		}
		// before opset 13: the input is coerced to 2-D at axis (default 1) and normalised
		// over the second dimension.
		axis, err := normAxis(n.attrInt("axis", 1), len(sh))
		if err != nil {
			return nil, err
		}
		rows := 1
		for _, d := range sh[:axis] {
			rows *= d
		}
		flat, err := lower.Reshape(x[0], core.Shape{rows, sh.Size() / rows})
		if err != nil {
			return nil, err
		}
		s, err := f(flat, 1)
		if err != nil {
			return nil, err
		}
		return lower.Reshape(s, sh)
	})
}

// --- convolution and pooling ---

// windowND reads a node's window over the spatial shape in: kernel_shape (kernel), strides,
// dilations, and the padding from pads or auto_pad (SAME_UPPER, SAME_LOWER: the output size
// is ceil(in/stride) and the padding it needs is split evenly, the odd one at the end or at
// the beginning; VALID: none). ceil rounds the output size up (ceil_mode; pooling only).
func windowND(n *Node, kernel []int64, in []int, ceil bool) (lower.WindowND, error) {
	r := len(in)
	if len(kernel) != r {
		return lower.WindowND{}, errors.Errorf("kernel shape %v for %d spatial dimensions", kernel, r)
	}
	w := lower.WindowND{Kernel: make([]int, r), Strides: make([]int, r), Dilations: make([]int, r),
		PadBegin: make([]int, r), PadEnd: make([]int, r), Ceil: ceil}
	for k := range in {
		w.Kernel[k], w.Strides[k], w.Dilations[k] = int(kernel[k]), 1, 1
	}
	if s, ok := n.attrInts("strides"); ok {
		if len(s) != r {
			return w, errors.Errorf("strides %v for %d spatial dimensions", s, r)
		}
		for k := range s {
			w.Strides[k] = int(s[k])
		}
	}
	if d, ok := n.attrInts("dilations"); ok {
		if len(d) != r {
			return w, errors.Errorf("dilations %v for %d spatial dimensions", d, r)
		}
		for k := range d {
			w.Dilations[k] = int(d[k])
		}
	}
	for k := range in {
		if w.Kernel[k] < 1 || w.Strides[k] < 1 || w.Dilations[k] < 1 {
			return w, errors.Errorf("kernel %v, strides %v and dilations %v must be positive", kernel, w.Strides, w.Dilations)
		}
	}
	autoPad := "NOTSET"
	if a, ok := n.Attrs["auto_pad"]; ok && a.S != "" {
		autoPad = a.S
	}
	switch autoPad {
	case "NOTSET":
		if p, ok := n.attrInts("pads"); ok {
			if len(p) != 2*r {
				return w, errors.Errorf("pads %v: want %d values for %d spatial dimensions", p, 2*r, r)
			}
			for k := range in {
				w.PadBegin[k], w.PadEnd[k] = int(p[k]), int(p[r+k])
				if w.PadBegin[k] < 0 || w.PadEnd[k] < 0 {
					return w, errors.Errorf("pads %v: negative padding is not supported", p)
				}
			}
		}
	case "VALID":
	case "SAME_UPPER", "SAME_LOWER":
		for k, d := range in {
			out := (d + w.Strides[k] - 1) / w.Strides[k]
			total := max(0, (out-1)*w.Strides[k]+w.Dilations[k]*(w.Kernel[k]-1)+1-d)
			small := total / 2
			w.PadBegin[k], w.PadEnd[k] = small, total-small
			if autoPad == "SAME_LOWER" {
				w.PadBegin[k], w.PadEnd[k] = total-small, small
			}
		}
	default:
		return w, errors.Errorf("auto_pad %q: supported are NOTSET, SAME_UPPER, SAME_LOWER and VALID", autoPad)
	}
	return w, nil
}

// convOperands reads the input and the weight of a convolution or transposed convolution
// (what, in errors) over 1, 2 or 3 spatial dimensions, and its kernel_shape: the weight's
// spatial extents by default.
func (c *ctx) convOperands(n *Node, ins []value, what string) (x, f core.Term, kernel []int64, err error) {
	xf, err := c.floatIns(ins, 2)
	if err != nil {
		return nil, nil, nil, err
	}
	x, f = xf[0], xf[1]
	xs, fs := shapeOf(x), shapeOf(f)
	if len(xs) < 3 || len(xs) > 5 || len(fs) != len(xs) {
		return nil, nil, nil, errors.Errorf("input %v and weight %v: supported are 1-D, 2-D and 3-D %s (input and weight of rank 3, 4 or 5)", xs, fs, what)
	}
	kernel, ok := n.attrInts("kernel_shape")
	if !ok {
		for _, d := range fs[2:] {
			kernel = append(kernel, int64(d))
		}
	}
	return x, f, kernel, nil
}

func opConv(c *ctx, n *Node, ins []value) ([]value, error) {
	x, f, k, err := c.convOperands(n, ins, "convolutions")
	if err != nil {
		return nil, err
	}
	xs, fs := shapeOf(x), shapeOf(f)
	w, err := windowND(n, k, xs[2:], false)
	if err != nil {
		return nil, err
	}
	groups := int(n.attrInt("group", 1))
	cin := xs[1]
	if groups < 1 || cin%groups != 0 || fs[0]%groups != 0 || fs[1]*groups != cin {
		return nil, errors.Errorf("group %d does not divide input channels %d and output channels %d (weight %v)", groups, cin, fs[0], fs)
	}
	// one bulk operation for any number of groups (2-D: lower.GroupedConv2d)
	y, err := lower.ConvND(x, f, w, groups)
	if err != nil {
		return nil, err
	}
	return c.withBias(y, ins)
}

// withBias is a convolution's result y plus its optional third input, a per-channel bias
// (computed or constant), as the node's one output.
func (c *ctx) withBias(y core.Term, ins []value) ([]value, error) {
	if len(ins) > 2 && (ins[2].t != nil || ins[2].isF) {
		bias, err := c.term(ins[2])
		if err != nil {
			return nil, err
		}
		if y, err = addChannel(y, bias); err != nil {
			return nil, err
		}
	}
	return []value{{t: y}}, nil
}

// addChannel adds a per-channel vector v : [c] to y : [b,c,…].
func addChannel(y, v core.Term) (core.Term, error) {
	return channelOp(core.OpAdd, y, v)
}

// channelOp applies op between y : [b,c,…] and a per-channel vector v : [c].
func channelOp(op core.BinOp, y, v core.Term) (core.Term, error) {
	ys := shapeOf(y)
	sh := make(core.Shape, len(ys)-1)
	for i := range sh {
		sh[i] = 1
	}
	sh[0] = ys[1]
	r, err := lower.Reshape(v, sh)
	if err != nil {
		return nil, err
	}
	if r, err = lower.Broadcast(r, ys); err != nil {
		return nil, err
	}
	return lower.Binary(op, y, r, false)
}

// opPool lowers MaxPool and AveragePool over 1, 2 or 3 spatial dimensions, with ceil_mode,
// auto_pad and (average) count_include_pad; max-pooling ignores the padding, as PyTorch does.
func opPool(avg bool) opFn {
	return floatOp(1, func(c *ctx, n *Node, x []core.Term) (core.Term, error) {
		xs := shapeOf(x[0])
		if len(xs) < 3 || len(xs) > 5 {
			return nil, errors.Errorf("input %v: supported is pooling over 1, 2 or 3 spatial dimensions (input of rank 3, 4 or 5)", xs)
		}
		k, ok := n.attrInts("kernel_shape")
		if !ok {
			return nil, errors.New("kernel_shape is required")
		}
		w, err := windowND(n, k, xs[2:], n.attrInt("ceil_mode", 0) != 0)
		if err != nil {
			return nil, err
		}
		if !avg {
			if n.attrInt("storage_order", 0) != 0 || len(n.Outputs) > 1 && n.Outputs[1] != "" {
				return nil, errors.New("the Indices output and storage_order are not supported")
			}
			return lower.MaxPoolND(x[0], w)
		}
		return lower.AvgPoolND(x[0], w, n.attrInt("count_include_pad", 0) != 0)
	})
}

// opGlobalAvgPool averages [b, c, d…] over its spatial dimensions, keeping them as 1s.
func opGlobalAvgPool(c *ctx, n *Node, x []core.Term) (core.Term, error) {
	xs := shapeOf(x[0])
	if len(xs) == 4 {
		return lower.GlobalAvgPool2D(x[0])
	}
	if len(xs) < 3 {
		return nil, errors.Errorf("input %v: want [b, c] and at least one spatial dimension", xs)
	}
	m, err := lower.Mean(x[0], seqInts(2, len(xs))...)
	if err != nil {
		return nil, err
	}
	out := core.Shape{xs[0], xs[1]}
	for range xs[2:] {
		out = append(out, 1)
	}
	return lower.Reshape(m, out)
}

// seqInts is lo, lo+1, …, hi−1.
func seqInts(lo, hi int) []int {
	out := make([]int, 0, hi-lo)
	for i := lo; i < hi; i++ {
		out = append(out, i)
	}
	return out
}

func opBatchNorm(c *ctx, n *Node, ins []value) ([]value, error) {
	xs, err := c.floatIns(ins, 5)
	if err != nil {
		return nil, err
	}
	eps := n.attrFloat("epsilon", 1e-5)
	x, scale, bias, mean, variance := xs[0], xs[1], xs[2], xs[3], xs[4]
	var y core.Term
	if n.attrInt("training_mode", 0) != 0 || (c.opset < 14 && len(n.Outputs) > 1 && n.Outputs[1] != "") {
		// batch statistics (the running-statistics outputs are not produced)
		if y, err = lower.BatchNormTrain(x, eps); err != nil {
			return nil, err
		}
	} else {
		if y, err = channelOp(core.OpSub, x, mean); err != nil {
			return nil, err
		}
		var b core.Builder
		e, err := lower.FullLike(variance.Type(), eps)
		if err != nil {
			return nil, err
		}
		inv, err := lower.Unary("invSqrt", b.Add(variance, e))
		if err != nil {
			return nil, err
		}
		if err := b.Err(); err != nil {
			return nil, err
		}
		if y, err = channelOp(core.OpMul, y, inv); err != nil {
			return nil, err
		}
	}
	if y, err = channelOp(core.OpMul, y, scale); err != nil {
		return nil, err
	}
	if y, err = channelOp(core.OpAdd, y, bias); err != nil {
		return nil, err
	}
	return []value{{t: y}}, nil
}
