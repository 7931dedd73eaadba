package onnx

import (
	"math"
	"sort"

	"github.com/bulkad/bulkad/core"
	"github.com/bulkad/bulkad/lower"
	"github.com/pkg/errors"
)

// opFn lowers one node: ins are its inputs (a missing optional input is the zero value), the
// result its outputs in order (fewer when trailing optional outputs are not produced).
type opFn func(c *ctx, n *Node, ins []value) ([]value, error)

// opTable maps ONNX operator types (default domain) to their lowering.
var opTable = map[string]opFn{
	"Identity":   func(c *ctx, n *Node, ins []value) ([]value, error) { return ins[:1], nil },
	"Dropout":    opDropout,
	"Relu":       unary(func(x core.Term) (core.Term, error) { return lower.MaxBetween(x, zerosLike(x)) }),
	"Tanh":       named("tanh"),
	"Sigmoid":    named("sigmoid"),
	"Exp":        named("exp"),
	"Log":        named("ln"),
	"Sqrt":       named("sqrt"),
	"Neg":        named("neg"),
	"Abs":        named("abs"),
	"Reciprocal": named("inv"),
	"Softplus":   named("softplus"),
	"Floor":      named("floor"),
	"Ceil":       named("ceil"),
	"Sign":       named("sign"),
	"Sin":        named("sin"),
	"Cos":        named("cos"),
	"Erf":        named("erf"),
	"LeakyRelu": func(c *ctx, n *Node, ins []value) ([]value, error) {
		alpha := n.attrFloat("alpha", 0.01)
		return unary(func(x core.Term) (core.Term, error) { return reluMix(x, alpha, false) })(c, n, ins)
	},
	"Elu": func(c *ctx, n *Node, ins []value) ([]value, error) {
		alpha := n.attrFloat("alpha", 1)
		return unary(func(x core.Term) (core.Term, error) { return reluMix(x, alpha, true) })(c, n, ins)
	},
	"Add":            binaryOp(core.OpAdd),
	"Sub":            binaryOp(core.OpSub),
	"Mul":            binaryOp(core.OpMul),
	"Div":            binaryOp(core.OpDiv),
	"Max":            binaryOp(core.OpMax),
	"Min":            binaryOp(core.OpMin),
	"Pow":            opPow,
	"Greater":        binaryOp(core.OpGt),
	"Less":           binaryOp(core.OpLt),
	"GreaterOrEqual": binaryOp(core.OpGe),
	"LessOrEqual":    binaryOp(core.OpLe),
	"Equal":          binaryOp(core.OpEq),
	"Not": func(c *ctx, n *Node, ins []value) ([]value, error) {
		x, err := c.floatIn(ins, 0)
		if err != nil {
			return nil, err
		}
		var b core.Builder
		t := b.Unary(core.OpNot, x)
		return []value{{t: t}}, b.Err()
	},
	"Where":              opWhere,
	"MatMul":             opMatMul,
	"Gemm":               opGemm,
	"Softmax":            opSoftmax(false),
	"LogSoftmax":         opSoftmax(true),
	"Conv":               opConv,
	"MaxPool":            opPool(false),
	"AveragePool":        opPool(true),
	"GlobalAveragePool":  floatOp(1, func(c *ctx, n *Node, x []core.Term) (core.Term, error) { return lower.GlobalAvgPool2D(x[0]) }),
	"BatchNormalization": opBatchNorm,
	"Flatten":            opFlatten,
	"Reshape":            opReshape,
	"Transpose":          opTranspose,
	"Squeeze":            opSqueeze(false),
	"Unsqueeze":          opSqueeze(true),
	"Concat":             opConcat,
	"Split":              opSplit,
	"Slice":              opSlice,
	"Pad":                opPad,
	"Gather":             opGather,
	"Constant":           opConstant,
	"Shape":              opShape,
	"ReduceSum":          opReduce("sum"),
	"ReduceMean":         opReduce("mean"),
	"ReduceMax":          opReduce("max"),
	"ReduceMin":          opReduce("min"),
	"ReduceProd":         opReduce("prod"),
	"ReduceLogSumExp":    opReduce("logsumexp"),
	"CumSum":             opCumSum,
	"Clip":               opClip,
	"Cast":               opCast,
}

// node lowers one node and binds its outputs.
func (c *ctx) node(n *Node) error {
	if n.Domain != "" && n.Domain != "ai.onnx" {
		return errors.Errorf("operator domain %q is not supported (only the default ONNX domain)", n.Domain)
	}
	f, ok := opTable[n.OpType]
	if !ok {
		return errors.Errorf("operator %s is not supported (onnx.SupportedOps() lists the %d supported operators)", n.OpType, len(opTable))
	}
	ins := make([]value, len(n.Inputs))
	for i, name := range n.Inputs {
		if name == "" {
			continue // an omitted optional input
		}
		v, ok := c.env[name]
		if !ok {
			return errors.Errorf("input %d (%q) is not computed by an earlier node, an input or an initializer", i, name)
		}
		ins[i] = v
	}
	outs, err := f(c, n, ins)
	if err != nil {
		return err
	}
	for i, v := range outs {
		if i < len(n.Outputs) && n.Outputs[i] != "" {
			if err := c.bind(n.Outputs[i], v); err != nil {
				return err
			}
		}
	}
	return nil
}

// --- attributes and inputs ---

func (n *Node) attrInt(name string, def int64) int64 {
	if a, ok := n.Attrs[name]; ok {
		return a.I
	}
	return def
}

func (n *Node) attrFloat(name string, def float64) float64 {
	if a, ok := n.Attrs[name]; ok {
		return a.F
	}
	return def
}

func (n *Node) attrInts(name string) ([]int64, bool) {
	a, ok := n.Attrs[name]
	return a.Ints, ok
}

// floatIn is input i as a float term.
func (c *ctx) floatIn(ins []value, i int) (core.Term, error) {
	if i >= len(ins) || (ins[i].t == nil && !ins[i].isF && !ins[i].isInt) {
		return nil, errors.Errorf("input %d is missing", i)
	}
	return c.term(ins[i])
}

// constInts is input i as integer constants (shapes, axes, indices).
func constInts(ins []value, i int, what string) ([]int64, bool, error) {
	if i >= len(ins) || (ins[i].t == nil && !ins[i].isInt && !ins[i].isF) {
		return nil, false, nil
	}
	v := ins[i]
	switch {
	case v.isInt:
		return v.ints, true, nil
	case v.isF:
		out := make([]int64, len(v.floats))
		for k, f := range v.floats {
			out[k] = int64(f)
		}
		return out, true, nil
	}
	return nil, false, errors.Errorf("input %d (%s) must be a constant (an initializer, a Constant node or a shape computation); it depends on graph inputs", i, what)
}

func shapeOf(t core.Term) core.Shape { return t.Type().Shape }

// normAxis maps a possibly negative axis into [0, rank).
func normAxis(axis int64, rank int) (int, error) {
	a := int(axis)
	if a < 0 {
		a += rank
	}
	if a < 0 || a >= rank {
		return 0, errors.Errorf("axis %d out of range for rank %d", axis, rank)
	}
	return a, nil
}

// --- element-wise ---

func unary(f func(core.Term) (core.Term, error)) opFn {
	return floatOp(1, func(c *ctx, n *Node, x []core.Term) (core.Term, error) { return f(x[0]) })
}

func named(name string) opFn {
	return unary(func(x core.Term) (core.Term, error) { return lower.Unary(name, x) })
}

// floatOp lowers a node whose first k inputs are float terms and whose one output is f's.
func floatOp(k int, f func(c *ctx, n *Node, x []core.Term) (core.Term, error)) opFn {
	return func(c *ctx, n *Node, ins []value) ([]value, error) {
		xs := make([]core.Term, k)
		for i := range xs {
			t, err := c.floatIn(ins, i)
			if err != nil {
				return nil, err
			}
			xs[i] = t
		}
		t, err := f(c, n, xs)
		if err != nil {
			return nil, err
		}
		return []value{{t: t}}, nil
	}
}

func zerosLike(x core.Term) core.Term {
	z, _ := lower.FullLike(x.Type(), 0)
	return z
}

// reluMix is max(x, 0) + α·min(x, 0) (LeakyRelu), or max(x, 0) + α·(exp(min(x, 0)) − 1) (Elu).
func reluMix(x core.Term, alpha float64, elu bool) (core.Term, error) {
	var b core.Builder
	z := zerosLike(x)
	pos, err := lower.MaxBetween(x, z)
	if err != nil {
		return nil, err
	}
	neg, err := lower.MinBetween(x, z)
	if err != nil {
		return nil, err
	}
	if elu {
		if neg, err = lower.Unary("expm1", neg); err != nil {
			return nil, err
		}
	}
	a, err := lower.FullLike(x.Type(), alpha)
	if err != nil {
		return nil, err
	}
	t := b.Add(pos, b.Mul(a, neg))
	return t, b.Err()
}

// broadcastPair brings x and y to their NumPy broadcast shape.
func broadcastPair(x, y core.Term) (core.Term, core.Term, error) {
	xs, ys := shapeOf(x), shapeOf(y)
	if xs.Equal(ys) {
		return x, y, nil
	}
	r := len(xs)
	if len(ys) > r {
		r = len(ys)
	}
	out := make(core.Shape, r)
	for i := 0; i < r; i++ {
		a, b := 1, 1
		if j := i - (r - len(xs)); j >= 0 {
			a = xs[j]
		}
		if j := i - (r - len(ys)); j >= 0 {
			b = ys[j]
		}
		switch {
		case a == b || b == 1:
			out[i] = a
		case a == 1:
			out[i] = b
		default:
			return nil, nil, errors.Errorf("shapes %v and %v do not broadcast", xs, ys)
		}
	}
	var err error
	if !xs.Equal(out) {
		if x, err = lower.Broadcast(x, out); err != nil {
			return nil, nil, err
		}
	}
	if !ys.Equal(out) {
		if y, err = lower.Broadcast(y, out); err != nil {
			return nil, nil, err
		}
	}
	return x, y, nil
}

func binaryOp(op core.BinOp) opFn {
	return floatOp(2, func(c *ctx, n *Node, x []core.Term) (core.Term, error) {
		a, b, err := broadcastPair(x[0], x[1])
		if err != nil {
			return nil, err
		}
		return lower.Binary(op, a, b, false)
	})
}

// opPow: a constant exponent (a Constant node, not an initializer, which stays learnable) of
// 1, 2, 3, 0.5 or −1 becomes the exact function (a negative base raised to 2 is fine; core's
// pow is exp(y·ln x)); other exponents use pow.
func opPow(c *ctx, n *Node, ins []value) ([]value, error) {
	x, err := c.floatIn(ins, 0)
	if err != nil {
		return nil, err
	}
	if len(ins) > 1 && ins[1].t == nil { // a constant, not a (learnable) initializer
		ef, ok := c.constFloats(ins[1])
		if ok && len(ef) == 1 {
			name := map[float64]string{2: "square", 3: "cube", 0.5: "sqrt", -1: "inv"}[ef[0]]
			if ef[0] == 1 {
				return []value{{t: x}}, nil
			}
			if name != "" {
				t, err := lower.Unary(name, x)
				return []value{{t: t}}, err
			}
		}
	}
	return binaryOp(core.OpPow)(c, n, ins)
}

func opDropout(c *ctx, n *Node, ins []value) ([]value, error) {
	if len(ins) > 2 && ins[2].isInt && len(ins[2].ints) == 1 && ins[2].ints[0] != 0 {
		return nil, errors.New("training_mode = true: dropout draws random masks; export the model in eval mode")
	}
	if len(n.Outputs) > 1 && n.Outputs[1] != "" {
		return nil, errors.New("the mask output is not supported")
	}
	return ins[:1], nil
}

// --- products ---

func opMatMul(c *ctx, n *Node, ins []value) ([]value, error) {
	return floatOp(2, func(c *ctx, n *Node, x []core.Term) (core.Term, error) {
		a, b := x[0], x[1]
		ra, rb := len(shapeOf(a)), len(shapeOf(b))
		switch {
		case ra == 2 && rb == 2:
			return lower.MatMul(a, b, false, false)
		case ra == 1 && rb == 2:
			return lower.MatVec(b, a, true)
		case ra == 2 && rb == 1:
			return lower.MatVec(a, b, false)
		case ra == 1 && rb == 1:
			return lower.Dot(a, b)
		case ra == 3 && rb == 3:
			return lower.BatchedMatMul(a, b, false, false)
		case ra == 3 && rb == 2: // [n,i,k]·[k,j]: one matrix product of the flattened batch
			sa := shapeOf(a)
			f, err := lower.Reshape(a, core.Shape{sa[0] * sa[1], sa[2]})
			if err != nil {
				return nil, err
			}
			p, err := lower.MatMul(f, b, false, false)
			if err != nil {
				return nil, err
			}
			return lower.Reshape(p, core.Shape{sa[0], sa[1], shapeOf(b)[1]})
		}
		return nil, errors.Errorf("operand ranks %d and %d; supported: 1 to 3 (3 with 3 or 2)", ra, rb)
	})(c, n, ins)
}

func opGemm(c *ctx, n *Node, ins []value) ([]value, error) {
	a, err := c.floatIn(ins, 0)
	if err != nil {
		return nil, err
	}
	bm, err := c.floatIn(ins, 1)
	if err != nil {
		return nil, err
	}
	t, err := lower.MatMul(a, bm, n.attrInt("transA", 0) != 0, n.attrInt("transB", 0) != 0)
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
	x, err := c.floatIn(ins, 0)
	if err != nil {
		return nil, err
	}
	f, err := c.floatIn(ins, 1)
	if err != nil {
		return nil, err
	}
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
	var y core.Term
	if groups == 1 {
		if y, err = lower.Conv2d(x, f, w); err != nil {
			return nil, err
		}
	} else {
		gi, go1 := cin/groups, fs[0]/groups
		parts := make([]core.Term, groups)
		for g := 0; g < groups; g++ {
			xg, err := lower.Slice(x, 1, g*gi, 1, gi, true)
			if err != nil {
				return nil, err
			}
			fg, err := lower.Slice(f, 0, g*go1, 1, go1, true)
			if err != nil {
				return nil, err
			}
			if parts[g], err = lower.Conv2d(xg, fg, w); err != nil {
				return nil, err
			}
		}
		if y, err = lower.Concat(1, parts...); err != nil {
			return nil, err
		}
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
	var xs [5]core.Term
	for i := range xs {
		t, err := c.floatIn(ins, i)
		if err != nil {
			return nil, err
		}
		xs[i] = t
	}
	eps := n.attrFloat("epsilon", 1e-5)
	x, scale, bias, mean, variance := xs[0], xs[1], xs[2], xs[3], xs[4]
	var y core.Term
	var err error
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

// --- shapes ---

func opFlatten(c *ctx, n *Node, ins []value) ([]value, error) {
	return floatOp(1, func(c *ctx, n *Node, x []core.Term) (core.Term, error) {
		sh := shapeOf(x[0])
		axis := int(n.attrInt("axis", 1))
		if axis < 0 {
			axis += len(sh)
		}
		if axis < 0 || axis > len(sh) {
			return nil, errors.Errorf("axis %d out of range for rank %d", axis, len(sh))
		}
		rows := 1
		for _, d := range sh[:axis] {
			rows *= d
		}
		return lower.Reshape(x[0], core.Shape{rows, sh.Size() / rows})
	})(c, n, ins)
}

func opReshape(c *ctx, n *Node, ins []value) ([]value, error) {
	x, err := c.floatIn(ins, 0)
	if err != nil {
		return nil, err
	}
	want, ok, err := constInts(ins, 1, "shape")
	if err != nil || !ok {
		return nil, errors.Wrap(orMissing(err, "shape"), "reshape")
	}
	sh := shapeOf(x)
	out := make(core.Shape, len(want))
	infer := -1
	known := 1
	for i, d := range want {
		switch {
		case d == 0 && n.attrInt("allowzero", 0) == 0:
			if i >= len(sh) {
				return nil, errors.Errorf("shape %v copies dimension %d of an input of rank %d", want, i, len(sh))
			}
			out[i] = sh[i]
		case d == -1:
			if infer >= 0 {
				return nil, errors.Errorf("shape %v has two -1", want)
			}
			infer = i
			continue
		case d < 0:
			return nil, errors.Errorf("shape %v has a negative dimension", want)
		default:
			out[i] = int(d)
		}
		known *= out[i]
	}
	if infer >= 0 {
		if known == 0 || sh.Size()%known != 0 {
			return nil, errors.Errorf("cannot infer -1 in %v for %d elements", want, sh.Size())
		}
		out[infer] = sh.Size() / known
	}
	t, err := lower.Reshape(x, out)
	return []value{{t: t}}, err
}

func orMissing(err error, what string) error {
	if err != nil {
		return err
	}
	return errors.Errorf("the %s input is missing", what)
}

func opTranspose(c *ctx, n *Node, ins []value) ([]value, error) {
	return floatOp(1, func(c *ctx, n *Node, x []core.Term) (core.Term, error) {
		r := len(shapeOf(x[0]))
		perm := make([]int, r)
		p, ok := n.attrInts("perm")
		for i := range perm {
			perm[i] = r - 1 - i
			if ok {
				if len(p) != r {
					return nil, errors.Errorf("perm %v for rank %d", p, r)
				}
				perm[i] = int(p[i])
			}
		}
		return lower.Transpose(x[0], perm)
	})(c, n, ins)
}

// opSqueeze lowers Squeeze (remove unit axes) and Unsqueeze (insert unit axes) as reshapes;
// axes come from the attribute before opset 13 and from the second input from 13 on.
func opSqueeze(unsq bool) opFn {
	return func(c *ctx, n *Node, ins []value) ([]value, error) {
		axes, ok := n.attrInts("axes")
		if c.opset >= 13 {
			var err error
			if axes, ok, err = constInts(ins, 1, "axes"); err != nil {
				return nil, err
			}
		}
		if ins[0].isInt && unsq && ok { // shape arithmetic on constants
			return []value{{ints: ins[0].ints, dims: unsqueezeDims(ins[0].dims, axes), isInt: true}}, nil
		}
		x, err := c.floatIn(ins, 0)
		if err != nil {
			return nil, err
		}
		sh := shapeOf(x)
		var out core.Shape
		if unsq {
			if !ok {
				return nil, errors.New("axes are required")
			}
			r := len(sh) + len(axes)
			mark := map[int]bool{}
			for _, a := range axes {
				ax, err := normAxis(a, r)
				if err != nil {
					return nil, err
				}
				mark[ax] = true
			}
			k := 0
			for i := 0; i < r; i++ {
				if mark[i] {
					out = append(out, 1)
				} else {
					out = append(out, sh[k])
					k++
				}
			}
		} else {
			drop := map[int]bool{}
			for _, a := range axes {
				ax, err := normAxis(a, len(sh))
				if err != nil {
					return nil, err
				}
				if sh[ax] != 1 {
					return nil, errors.Errorf("axis %d of %v is not 1", ax, sh)
				}
				drop[ax] = true
			}
			for i, d := range sh {
				if (!ok && d != 1) || (ok && !drop[i]) {
					out = append(out, d)
				}
			}
		}
		t, err := lower.Reshape(x, out)
		return []value{{t: t}}, err
	}
}

func unsqueezeDims(dims, axes []int64) []int64 {
	out := append([]int64(nil), dims...)
	for range axes {
		out = append([]int64{1}, out...)
	}
	return out
}

func opConcat(c *ctx, n *Node, ins []value) ([]value, error) {
	if len(ins) == 0 {
		return nil, errors.New("no inputs")
	}
	allInt := true
	for _, v := range ins {
		allInt = allInt && v.isInt
	}
	if allInt { // shape arithmetic: 1-D integer constants
		var out []int64
		for _, v := range ins {
			out = append(out, v.ints...)
		}
		return []value{{ints: out, dims: []int64{int64(len(out))}, isInt: true}}, nil
	}
	xs := make([]core.Term, len(ins))
	for i := range ins {
		t, err := c.floatIn(ins, i)
		if err != nil {
			return nil, err
		}
		xs[i] = t
	}
	axis, err := normAxis(n.attrInt("axis", 0), len(shapeOf(xs[0])))
	if err != nil {
		return nil, err
	}
	t, err := lower.Concat(axis, xs...)
	return []value{{t: t}}, err
}

func opSplit(c *ctx, n *Node, ins []value) ([]value, error) {
	x, err := c.floatIn(ins, 0)
	if err != nil {
		return nil, err
	}
	sh := shapeOf(x)
	axis, err := normAxis(n.attrInt("axis", 0), len(sh))
	if err != nil {
		return nil, err
	}
	sizes, ok := n.attrInts("split")
	if c.opset >= 13 {
		if sizes, ok, err = constInts(ins, 1, "split"); err != nil {
			return nil, err
		}
	}
	k := len(n.Outputs)
	if !ok {
		if k == 0 || sh[axis]%k != 0 {
			return nil, errors.Errorf("%d outputs do not split dimension %d of %v evenly", k, axis, sh)
		}
		sizes = make([]int64, k)
		for i := range sizes {
			sizes[i] = int64(sh[axis] / k)
		}
	}
	var outs []value
	start := 0
	for _, s := range sizes {
		if s < 0 || start+int(s) > sh[axis] {
			return nil, errors.Errorf("split sizes %v exceed dimension %d of %v", sizes, axis, sh)
		}
		t, err := lower.Slice(x, axis, start, 1, int(s), true)
		if err != nil {
			return nil, err
		}
		outs = append(outs, value{t: t})
		start += int(s)
	}
	return outs, nil
}

func opSlice(c *ctx, n *Node, ins []value) ([]value, error) {
	x, err := c.floatIn(ins, 0)
	if err != nil {
		return nil, err
	}
	sh := shapeOf(x)
	get := func(i int, attr string) ([]int64, bool, error) {
		if c.opset < 10 {
			v, ok := n.attrInts(attr)
			return v, ok, nil
		}
		return constInts(ins, i, attr)
	}
	starts, ok1, err := get(1, "starts")
	if err != nil {
		return nil, err
	}
	ends, ok2, err := get(2, "ends")
	if err != nil {
		return nil, err
	}
	if !ok1 || !ok2 || len(starts) != len(ends) {
		return nil, errors.New("starts and ends are required and of equal length")
	}
	axes, ok, err := get(3, "axes")
	if err != nil {
		return nil, err
	}
	if !ok {
		axes = make([]int64, len(starts))
		for i := range axes {
			axes[i] = int64(i)
		}
	}
	steps, ok, err := get(4, "steps")
	if err != nil {
		return nil, err
	}
	for i := range starts {
		step := int64(1)
		if ok {
			step = steps[i]
		}
		if step == 0 {
			return nil, errors.New("step 0")
		}
		ax, err := normAxis(axes[i], len(sh))
		if err != nil {
			return nil, err
		}
		d := int64(sh[ax])
		// the specification's clamping: [0, d] for a positive step, [−1, d−1] for a negative one
		lo, hi := int64(0), d
		if step < 0 {
			lo, hi = -1, d-1
		}
		clamp := func(v int64) int64 {
			if v < 0 {
				v += d
			}
			if v < lo {
				return lo
			}
			if v > hi {
				return hi
			}
			return v
		}
		s, e := clamp(starts[i]), clamp(ends[i])
		var cnt int
		if step > 0 {
			cnt = int((e - s + step - 1) / step)
		} else {
			cnt = int((s - e - step - 1) / -step)
		}
		if cnt <= 0 {
			return nil, errors.Errorf("slice [%d:%d:%d] of axis %d (size %d) is empty", starts[i], ends[i], step, ax, d)
		}
		if step > 0 {
			if x, err = lower.Slice(x, ax, int(s), int(step), cnt, true); err != nil {
				return nil, err
			}
			continue
		}
		// positions s, s+step, …: the positive slice from the last of them, reversed
		first := s + int64(cnt-1)*step
		if x, err = lower.Slice(x, ax, int(first), int(-step), cnt, true); err != nil {
			return nil, err
		}
		if x, err = lower.Reverse(x, ax); err != nil {
			return nil, err
		}
	}
	return []value{{t: x}}, nil
}

// opPad: constant mode with zeros, as concatenations of zero blocks.
func opPad(c *ctx, n *Node, ins []value) ([]value, error) {
	x, err := c.floatIn(ins, 0)
	if err != nil {
		return nil, err
	}
	if m, ok := n.Attrs["mode"]; ok && m.S != "constant" {
		return nil, errors.Errorf("mode %q: only constant padding is supported", m.S)
	}
	pads, ok := n.attrInts("pads")
	if c.opset >= 11 {
		if pads, ok, err = constInts(ins, 1, "pads"); err != nil {
			return nil, err
		}
		if len(ins) > 2 && (ins[2].isF || ins[2].isInt || ins[2].t != nil) {
			cv, okc, err := constInts(ins, 2, "constant_value")
			if err != nil || !okc || (ins[2].isF && ins[2].floats[0] != 0) || (ins[2].isInt && cv[0] != 0) {
				return nil, errors.New("only a zero constant_value is supported")
			}
		}
	}
	sh := shapeOf(x)
	if !ok || len(pads) != 2*len(sh) {
		return nil, errors.Errorf("pads %v for rank %d", pads, len(sh))
	}
	for ax := range sh {
		before, after := int(pads[ax]), int(pads[ax+len(sh)])
		if before < 0 || after < 0 {
			return nil, errors.New("negative pads are not supported")
		}
		parts := []core.Term{}
		block := func(k int) (core.Term, error) {
			bs := append(core.Shape(nil), shapeOf(x)...)
			bs[ax] = k
			return lower.FullLike(core.Type{Shape: bs, Dtype: x.Type().Dtype}, 0)
		}
		if before > 0 {
			z, err := block(before)
			if err != nil {
				return nil, err
			}
			parts = append(parts, z)
		}
		parts = append(parts, x)
		if after > 0 {
			z, err := block(after)
			if err != nil {
				return nil, err
			}
			parts = append(parts, z)
		}
		if len(parts) > 1 {
			if x, err = lower.Concat(ax, parts...); err != nil {
				return nil, err
			}
		}
	}
	return []value{{t: x}}, nil
}

func opGather(c *ctx, n *Node, ins []value) ([]value, error) {
	idx, ok, err := constInts(ins, 1, "indices")
	if err != nil || !ok {
		return nil, orMissing(err, "indices")
	}
	if ins[0].isInt { // shape arithmetic
		var out []int64
		for _, i := range idx {
			if i < 0 {
				i += int64(len(ins[0].ints))
			}
			if i < 0 || int(i) >= len(ins[0].ints) {
				return nil, errors.Errorf("index %d out of range", i)
			}
			out = append(out, ins[0].ints[i])
		}
		return []value{{ints: out, dims: ins[1].dims, isInt: true}}, nil
	}
	x, err := c.floatIn(ins, 0)
	if err != nil {
		return nil, err
	}
	sh := shapeOf(x)
	axis, err := normAxis(n.attrInt("axis", 0), len(sh))
	if err != nil {
		return nil, err
	}
	for k, i := range idx {
		if i < 0 {
			idx[k] = i + int64(sh[axis])
		}
		if idx[k] < 0 || int(idx[k]) >= sh[axis] {
			return nil, errors.Errorf("index %d out of range for dimension %d of %v", i, axis, sh)
		}
	}
	if len(ins[1].dims) == 0 { // a scalar index removes the axis
		t, err := lower.Slice(x, axis, int(idx[0]), 1, 1, false)
		return []value{{t: t}}, err
	}
	if len(ins[1].dims) != 1 {
		return nil, errors.Errorf("indices of shape %v: only scalar and 1-D indices are supported", ins[1].dims)
	}
	lit, err := core.NewLitI(core.Shape{len(idx)}, idx)
	if err != nil {
		return nil, err
	}
	t, err := lower.Take(x, lit, axis)
	return []value{{t: t}}, err
}

func opConstant(c *ctx, n *Node, ins []value) ([]value, error) {
	for name, a := range n.Attrs {
		switch name {
		case "value":
			if a.T == nil {
				return nil, errors.New("value attribute without a tensor")
			}
			switch a.T.DataType {
			case dtFloat, dtDouble:
				return []value{{floats: a.T.Floats, dims: a.T.Dims, isF: true}}, nil
			case dtInt32, dtInt64, dtBool:
				return []value{{ints: a.T.Ints, dims: a.T.Dims, isInt: true}}, nil
			}
			return nil, errors.Errorf("tensor of data type %d", a.T.DataType)
		case "value_float":
			return []value{{floats: []float64{a.F}, isF: true}}, nil
		case "value_floats":
			return []value{{floats: a.Floats, dims: []int64{int64(len(a.Floats))}, isF: true}}, nil
		case "value_int":
			return []value{{ints: []int64{a.I}, isInt: true}}, nil
		case "value_ints":
			return []value{{ints: a.Ints, dims: []int64{int64(len(a.Ints))}, isInt: true}}, nil
		}
	}
	return nil, errors.New("no supported value attribute (value, value_float(s), value_int(s))")
}

func opShape(c *ctx, n *Node, ins []value) ([]value, error) {
	var dims []int64
	switch {
	case ins[0].t != nil:
		for _, d := range shapeOf(ins[0].t) {
			dims = append(dims, int64(d))
		}
	case ins[0].isF || ins[0].isInt:
		dims = ins[0].dims
	default:
		return nil, errors.New("input 0 is missing")
	}
	return []value{{ints: dims, dims: []int64{int64(len(dims))}, isInt: true}}, nil
}

func opReduce(kind string) opFn {
	return func(c *ctx, n *Node, ins []value) ([]value, error) {
		x, err := c.floatIn(ins, 0)
		if err != nil {
			return nil, err
		}
		sh := shapeOf(x)
		axes, ok := n.attrInts("axes")
		if kind == "sum" && c.opset >= 13 {
			if axes, ok, err = constInts(ins, 1, "axes"); err != nil {
				return nil, err
			}
		}
		var ax []int
		mark := map[int]bool{}
		if ok && len(axes) > 0 {
			for _, a := range axes {
				k, err := normAxis(a, len(sh))
				if err != nil {
					return nil, err
				}
				ax = append(ax, k)
				mark[k] = true
			}
		} else {
			if n.attrInt("noop_with_empty_axes", 0) != 0 {
				return ins[:1], nil
			}
			for i := range sh {
				ax = append(ax, i)
				mark[i] = true
			}
		}
		var t core.Term
		switch kind {
		case "sum":
			t, err = lower.Sum(x, ax...)
		case "mean":
			t, err = lower.Mean(x, ax...)
		case "max":
			t, err = lower.Max(x, ax...)
		default: // monoid reductions, one axis at a time from the last
			mon := map[string]lower.Monoid{"min": lower.MinMonoid, "prod": lower.ProdMonoid, "logsumexp": lower.LogSumExpMonoid}[kind]
			t = x
			sorted := append([]int(nil), ax...)
			sort.Sort(sort.Reverse(sort.IntSlice(sorted)))
			for _, a := range sorted {
				if t, err = lower.Reduce(t, a, mon); err != nil {
					break
				}
			}
		}
		if err != nil {
			return nil, err
		}
		if n.attrInt("keepdims", 1) != 0 {
			keep := make(core.Shape, len(sh))
			for i, d := range sh {
				keep[i] = d
				if mark[i] {
					keep[i] = 1
				}
			}
			if t, err = lower.Reshape(t, keep); err != nil {
				return nil, err
			}
		}
		return []value{{t: t}}, nil
	}
}

func opClip(c *ctx, n *Node, ins []value) ([]value, error) {
	x, err := c.floatIn(ins, 0)
	if err != nil {
		return nil, err
	}
	lo, hi := math.Inf(-1), math.Inf(1)
	if c.opset < 11 {
		lo, hi = n.attrFloat("min", lo), n.attrFloat("max", hi)
	} else {
		for i, p := range []*float64{&lo, &hi} {
			v := value{}
			if i+1 < len(ins) {
				v = ins[i+1]
			}
			if v.t == nil && !v.isF && !v.isInt {
				continue // omitted: no bound
			}
			f, ok := c.constFloats(v)
			if !ok || len(f) != 1 {
				return nil, errors.New("min and max must be scalar constants or initializers")
			}
			*p = f[0]
		}
	}
	t, err := lower.Clamp(x, lo, hi)
	return []value{{t: t}}, err
}

func opCast(c *ctx, n *Node, ins []value) ([]value, error) {
	to := n.attrInt("to", 0)
	if ins[0].isInt || ins[0].isF {
		if to == dtInt64 || to == dtInt32 {
			v, _, _ := constInts(ins, 0, "input")
			return []value{{ints: v, dims: ins[0].dims, isInt: true}}, nil
		}
		return ins[:1], nil
	}
	if dtypeOf(to) != c.dt {
		return nil, errors.Errorf("cast of a float array to type %d: only casts to the model's float type are supported", to)
	}
	return ins[:1], nil
}

// opWhere selects element-wise between X and Y by a boolean condition (all three broadcast).
func opWhere(c *ctx, n *Node, ins []value) ([]value, error) {
	var xs [3]core.Term
	for i := range xs {
		t, err := c.floatIn(ins, i)
		if err != nil {
			return nil, err
		}
		xs[i] = t
	}
	if xs[0].Type().Dtype != core.Bool {
		return nil, errors.Errorf("condition has type %v, want bool", xs[0].Type())
	}
	x, y, err := broadcastPair(xs[1], xs[2])
	if err != nil {
		return nil, err
	}
	m, x, err := broadcastPair(xs[0], x)
	if err != nil {
		return nil, err
	}
	if _, y, err = broadcastPair(m, y); err != nil {
		return nil, err
	}
	t, err := lower.Where(m, x, y)
	return []value{{t: t}}, err
}

// opCumSum: the cumulative sum along a constant axis (input 1), inclusive or exclusive,
// forward or reverse (attributes exclusive and reverse).
func opCumSum(c *ctx, n *Node, ins []value) ([]value, error) {
	x, err := c.floatIn(ins, 0)
	if err != nil {
		return nil, err
	}
	ax, ok, err := constInts(ins, 1, "axis")
	if err != nil || !ok || len(ax) != 1 {
		return nil, errors.Wrap(orMissing(err, "axis"), "cumsum")
	}
	axis, err := normAxis(ax[0], len(shapeOf(x)))
	if err != nil {
		return nil, err
	}
	o := lower.ScanOptions{Exclusive: n.attrInt("exclusive", 0) != 0, Reverse: n.attrInt("reverse", 0) != 0}
	t, err := lower.Scan(x, axis, lower.SumMonoid, o)
	return []value{{t: t}}, err
}
