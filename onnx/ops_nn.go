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
	"GlobalAveragePool":  floatOp(1, func(c *ctx, n *Node, x []core.Term) (core.Term, error) { return lower.GlobalAvgPool2D(x[0]) }),
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

// window reads kernel_shape, pads, strides and dilations of a 2-D node.
func window(n *Node, kernel []int64) (lower.Window, error) {
	if ap, ok := n.Attrs["auto_pad"]; ok && ap.S != "" && ap.S != "NOTSET" {
		return lower.Window{}, errors.Errorf("auto_pad %q is not supported (export with explicit pads)", ap.S)
	}
	if len(kernel) != 2 {
		return lower.Window{}, errors.Errorf("kernel shape %v: only 2-D windows are supported", kernel)
	}
	w := lower.Window{KH: int(kernel[0]), KW: int(kernel[1]), StrideH: 1, StrideW: 1, DilationH: 1, DilationW: 1}
	if p, ok := n.attrInts("pads"); ok {
		if len(p) != 4 {
			return w, errors.Errorf("pads %v: want 4 values", p)
		}
		w.PadTop, w.PadLeft, w.PadBottom, w.PadRight = int(p[0]), int(p[1]), int(p[2]), int(p[3])
	}
	if s, ok := n.attrInts("strides"); ok && len(s) == 2 {
		w.StrideH, w.StrideW = int(s[0]), int(s[1])
	}
	if d, ok := n.attrInts("dilations"); ok && len(d) == 2 {
		w.DilationH, w.DilationW = int(d[0]), int(d[1])
	}
	if n.attrInt("ceil_mode", 0) != 0 {
		return w, errors.New("ceil_mode = 1 is not supported")
	}
	return w, nil
}

func opConv(c *ctx, n *Node, ins []value) ([]value, error) {
	xf, err := c.floatIns(ins, 2)
	if err != nil {
		return nil, err
	}
	x, f := xf[0], xf[1]
	fs := shapeOf(f)
	if len(shapeOf(x)) != 4 || len(fs) != 4 {
		return nil, errors.Errorf("input %v and weight %v: only 2-D convolutions (rank 4) are supported", shapeOf(x), fs)
	}
	k, ok := n.attrInts("kernel_shape")
	if !ok {
		k = []int64{int64(fs[2]), int64(fs[3])}
	}
	w, err := window(n, k)
	if err != nil {
		return nil, err
	}
	groups := int(n.attrInt("group", 1))
	cin := shapeOf(x)[1]
	if groups < 1 || cin%groups != 0 || fs[0]%groups != 0 || fs[1]*groups != cin {
		return nil, errors.Errorf("group %d does not divide input channels %d and output channels %d (weight %v)", groups, cin, fs[0], fs)
	}
	// one bulk operation for any number of groups (groups = 1 is lower.Conv2d)
	y, err := lower.GroupedConv2d(x, f, w, groups)
	if err != nil {
		return nil, err
	}
	if len(ins) > 2 && ins[2].t != nil {
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

func opPool(avg bool) opFn {
	return floatOp(1, func(c *ctx, n *Node, x []core.Term) (core.Term, error) {
		k, ok := n.attrInts("kernel_shape")
		if !ok {
			return nil, errors.New("kernel_shape is required")
		}
		w, err := window(n, k)
		if err != nil {
			return nil, err
		}
		if len(shapeOf(x[0])) != 4 {
			return nil, errors.Errorf("input %v: only 2-D pooling (rank 4) is supported", shapeOf(x[0]))
		}
		if !avg {
			if n.attrInt("storage_order", 0) != 0 || len(n.Outputs) > 1 && n.Outputs[1] != "" {
				return nil, errors.New("the Indices output and storage_order are not supported")
			}
			return lower.MaxPool2D(x[0], w)
		}
		padded := w.PadTop+w.PadBottom+w.PadLeft+w.PadRight > 0
		if padded && n.attrInt("count_include_pad", 0) == 0 {
			return nil, errors.New("padding with count_include_pad = 0 is not supported (the divisor would vary per window)")
		}
		return lower.AvgPool2D(x[0], w)
	})
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
