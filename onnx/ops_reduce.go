package onnx

import (
	"sort"

	"github.com/bulkad/bulkad/core"
	"github.com/bulkad/bulkad/lower"
	"github.com/pkg/errors"
)

// opsReduce lowers the reductions and scans.
var opsReduce = map[string]opFn{
	"ReduceSum":       opReduce("sum"),
	"ReduceMean":      opReduce("mean"),
	"ReduceMax":       opReduce("max"),
	"ReduceMin":       opReduce("min"),
	"ReduceProd":      opReduce("prod"),
	"ReduceLogSumExp": opReduce("logsumexp"),
	"ReduceL1":        opReduce("l1"),
	"ReduceL2":        opReduce("l2"),
	"ReduceSumSquare": opReduce("sumsquare"),
	"ReduceLogSum":    opReduce("logsum"),
	"CumSum":          floatFirst(opCumSum),
}

// reduceAxes reads a reduction's axes, normalised and in the order given: from input 1 at
// ReduceSum's opset 13 and the other reductions' opset 18, from the axes attribute before.
// all reports that every axis is reduced (no axes given); none that the node is the
// identity (no axes and noop_with_empty_axes, an attribute of the input form).
func reduceAxes(c *ctx, n *Node, ins []value, rank int) (ax []int, all, none bool, err error) {
	since := int64(18)
	if n.OpType == "ReduceSum" {
		since = 13
	}
	var axes []int64
	var ok bool
	if c.opset >= since {
		if _, attr := n.Attrs["axes"]; attr {
			return nil, false, false, errors.Errorf("an axes attribute: from opset %d the axes are input 1", since)
		}
		if axes, ok, err = constInts(ins, 1, "axes"); err != nil {
			return nil, false, false, err
		}
		if !ok || len(axes) == 0 {
			if n.attrInt("noop_with_empty_axes", 0) != 0 {
				return nil, false, true, nil
			}
		}
	} else {
		if len(ins) > 1 && (ins[1].t != nil || ins[1].isInt || ins[1].isF) {
			return nil, false, false, errors.Errorf("%d inputs: before opset %d the axes are an attribute and the operator takes one input", len(ins), since)
		}
		axes, ok = n.attrInts("axes")
	}
	if !ok || len(axes) == 0 {
		for i := 0; i < rank; i++ {
			ax = append(ax, i)
		}
		return ax, true, false, nil
	}
	seen := map[int]bool{}
	for _, a := range axes {
		k, err := normAxis(a, rank)
		if err != nil {
			return nil, false, false, errors.Wrapf(err, "axes %v", axes)
		}
		if seen[k] {
			return nil, false, false, errors.Errorf("axes %v name axis %d twice (rank %d)", axes, k, rank)
		}
		seen[k] = true
		ax = append(ax, k)
	}
	return ax, false, false, nil
}

func opReduce(kind string) opFn {
	return func(c *ctx, n *Node, ins []value) ([]value, error) {
		x, err := c.floatIn(ins, 0)
		if err != nil {
			return nil, err
		}
		sh := shapeOf(x)
		ax, _, none, err := reduceAxes(c, n, ins, len(sh))
		if err != nil {
			return nil, errors.Wrapf(err, "input shape %v", sh)
		}
		if none {
			return ins[:1], nil
		}
		t, err := reduce(kind, x, ax)
		if err != nil {
			return nil, errors.Wrapf(err, "%s over axes %v of shape %v", kind, ax, sh)
		}
		if n.attrInt("keepdims", 1) != 0 {
			if t, err = lower.Reshape(t, keptShape(sh, ax)); err != nil {
				return nil, err
			}
		}
		return []value{{t: t}}, nil
	}
}

// keptShape is sh with the axes ax reduced to 1 (keepdims).
func keptShape(sh core.Shape, ax []int) core.Shape {
	keep := sh.Clone()
	for _, a := range ax {
		keep[a] = 1
	}
	return keep
}

// reduce applies the reduction kind over the axes ax of x (the axes disappear).
func reduce(kind string, x core.Term, ax []int) (core.Term, error) {
	if len(ax) == 0 { // a scalar: reduce it as one element
		var err error
		if x, err = lower.Reshape(x, core.Shape{1}); err != nil {
			return nil, err
		}
		ax = []int{0}
	}
	var b core.Builder
	switch kind {
	case "sum":
		return lower.Sum(x, ax...)
	case "mean":
		return lower.Mean(x, ax...)
	case "max", "min":
		return reduceExtreme(x, ax, kind == "min")
	case "sumsquare":
		return lower.Sum(b.Mul(x, x), ax...)
	case "l1":
		return lower.Sum(b.Unary(core.OpAbs, x), ax...)
	case "l2":
		return l2(x, ax)
	case "logsum":
		s, err := lower.Sum(x, ax...)
		if err != nil {
			return nil, err
		}
		return b.Unary(core.OpLog, s), b.Err()
	}
	// monoid reductions, one axis at a time from the last
	mon := map[string]lower.Monoid{"prod": lower.ProdMonoid, "logsumexp": lower.LogSumExpMonoid}[kind]
	sorted := append([]int(nil), ax...)
	sort.Sort(sort.Reverse(sort.IntSlice(sorted)))
	t := x
	for _, a := range sorted {
		var err error
		if t, err = lower.Reduce(t, a, mon); err != nil {
			return nil, err
		}
	}
	return t, nil
}

// reduceExtreme is the maximum (or, with min, the minimum) of x over the axes ax whose
// derivative is split evenly among the tied elements, 1/k to each of k, as PyTorch's
// torch.amax and torch.amin (and torch.max without a dimension) do; torch.max(x, dim), which
// exports the same ReduceMax, gives it all to one index instead. It is
//
//	m + Σ where(d == 0, d, 0) / max(Σ [d == 0], 1),  d = x − m broadcast back,
//
// with m the argmax-based maximum: the value is m exactly and the derivative 1/k to each
// tied element whatever m's own derivative does (see tieSplit).
func reduceExtreme(x core.Term, ax []int, min bool) (core.Term, error) {
	t := x.Type()
	var b core.Builder
	xx := x
	if min {
		xx = b.Unary(core.OpNeg, x)
	}
	if b.Err() != nil {
		return nil, b.Err()
	}
	m, err := lower.Max(xx, ax...)
	if err != nil {
		return nil, err
	}
	if min {
		m = b.Unary(core.OpNeg, m)
	}
	namer := core.NewNamer(x, m)
	mv := namer.FreshVar("extreme", m.Type())
	dv := namer.FreshVar("tie", t)
	if b.Err() != nil {
		return nil, b.Err()
	}
	mb, err := lower.Broadcast(b.Reshape(keptShape(t.Shape, ax), mv), t.Shape)
	if err != nil {
		return nil, err
	}
	zero := b.Full(t, 0)
	tied := b.Binary(core.OpEq, dv, zero)
	sel, cnt := where(&b, tied, dv, zero), b.Cast(t.Dtype, tied)
	if b.Err() != nil {
		return nil, b.Err()
	}
	sum, err := lower.Sum(sel, ax...)
	if err != nil {
		return nil, err
	}
	count, err := lower.Sum(cnt, ax...)
	if err != nil {
		return nil, err
	}
	r := b.Add(mv, b.Div(sum, b.Binary(core.OpMax, count, b.Full(count.Type(), 1))))
	r = b.Let(mv, m, b.Let(dv, b.Sub(x, mb), r))
	return r, b.Err()
}

// l2 is √(Σ x²) over the axes ax with the derivative 0 where the sum is 0, as PyTorch's
// norm (the square root's infinite slope at 0 times a zero sum would be NaN): where(s == 0,
// 0, √where(s == 0, 1, s)); a NaN sum stays NaN.
func l2(x core.Term, ax []int) (core.Term, error) {
	var b core.Builder
	sq := b.Mul(x, x)
	if b.Err() != nil {
		return nil, b.Err()
	}
	s, err := lower.Sum(sq, ax...)
	if err != nil {
		return nil, err
	}
	st := s.Type()
	namer := core.NewNamer(s)
	sv := namer.FreshVar("sumsq", st)
	zero := b.Full(st, 0)
	r := where(&b, b.Binary(core.OpEq, sv, zero), zero, b.Unary(core.OpSqrt, where(&b, b.Binary(core.OpEq, sv, zero), b.Full(st, 1), sv)))
	return b.Let(sv, s, r), b.Err()
}

// opClip is min(max(x, lo), hi) (ONNX Clip; lo above hi gives hi, as the specification
// says): x first, so at a bound x keeps its derivative, as PyTorch's clamp. From opset 11
// the bounds are inputs, each optional and of one element: a float initializer stays a
// parameter (its derivative flows: PyTorch's clamp with tensor bounds), a constant is a
// literal; before, they are the min and max attributes.
func opClip(c *ctx, n *Node, x core.Term, ins []value) (core.Term, error) {
	t := x.Type()
	var b core.Builder
	r := x
	if c.opset < 11 {
		if a, ok := n.Attrs["min"]; ok {
			r = b.Binary(core.OpMax, r, b.Full(t, a.F))
		}
		if a, ok := n.Attrs["max"]; ok {
			r = b.Binary(core.OpMin, r, b.Full(t, a.F))
		}
		return r, b.Err()
	}
	for i, op := range []core.BinOp{core.OpMax, core.OpMin} {
		if i+1 >= len(ins) || (ins[i+1].t == nil && !ins[i+1].isF && !ins[i+1].isInt) {
			continue // omitted: no bound
		}
		bound, err := c.term(ins[i+1])
		if err != nil {
			return nil, err
		}
		if bt := bound.Type(); bt.Shape.Size() != 1 || bt.Dtype != t.Dtype {
			return nil, errors.Errorf("bound %d (%s) has type %v; want one element of the input's type %v", i+1, [...]string{"min", "max"}[i], bt, t)
		}
		if r, err = lower.Binary(op, r, bound, false); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// opCast converts to the attribute to's type. Constants (shapes, axes) convert at import
// time; a term converts to the model's float type or to BOOL (x ≠ 0), the types a core
// program of this model holds.
func opCast(c *ctx, n *Node, ins []value) ([]value, error) {
	to := n.attrInt("to", 0)
	if _, err := input0(ins); err != nil {
		return nil, err
	}
	if ins[0].isInt || ins[0].isF {
		if to == dtInt64 || to == dtInt32 {
			v, _, _ := constInts(ins, 0, "input")
			return []value{{ints: v, dims: ins[0].dims, isInt: true}}, nil
		}
		return ins[:1], nil
	}
	x, err := c.floatIn(ins, 0)
	if err != nil {
		return nil, err
	}
	var want core.Dtype
	switch {
	case to == dtBool:
		want = core.Bool
	case dtypeOf(to) == c.dt:
		want = c.dt
	default:
		return nil, errors.Errorf("cast of a %v array of shape %v to %s: supported: to the model's float type (%s) and to BOOL",
			x.Type().Dtype, shapeOf(x), typeName(to), typeName(onnxTypeOf(c.dt)))
	}
	return one(lower.Convert(x, want))
}

// onnxTypes holds the ONNX element type of every core dtype, indexed by core.Dtype (never
// written).
var onnxTypes = [...]int64{core.Float32: dtFloat, core.Float64: dtDouble, core.Int64: dtInt64, core.Bool: dtBool}

// onnxTypeOf is the ONNX element type of a core dtype (0 for one without).
func onnxTypeOf(d core.Dtype) int64 {
	if int(d) < len(onnxTypes) {
		return onnxTypes[d]
	}
	return 0
}

// opWhere selects element-wise between X and Y by a boolean condition (all three broadcast).
func opWhere(c *ctx, n *Node, ins []value) ([]value, error) {
	xs, err := c.floatIns(ins, 3)
	if err != nil {
		return nil, err
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
	return one(lower.Where(m, x, y))
}

// opCumSum: the cumulative sum along a constant axis (input 1), inclusive or exclusive,
// forward or reverse (attributes exclusive and reverse).
func opCumSum(c *ctx, n *Node, x core.Term, ins []value) (core.Term, error) {
	ax, ok, err := constInts(ins, 1, "axis")
	if err != nil || !ok || len(ax) != 1 {
		return nil, errors.Wrap(orMissing(err, "axis"), "cumsum")
	}
	axis, err := normAxis(ax[0], len(shapeOf(x)))
	if err != nil {
		return nil, err
	}
	o := lower.ScanOptions{Exclusive: n.attrInt("exclusive", 0) != 0, Reverse: n.attrInt("reverse", 0) != 0}
	return lower.Scan(x, axis, lower.SumMonoid, o)
}
