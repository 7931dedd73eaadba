package onnx

import (
	"github.com/bulkad/bulkad/core"
	"github.com/bulkad/bulkad/lower"
	"github.com/pkg/errors"
)

// opsShape lowers the operators that move, select or compute shapes and indices. On
// constants (shape arithmetic, masks) they are evaluated at import time (fold.go) before
// these functions see them; ConstantOfShape, Range and Mod are evaluated on constants only.
var opsShape = map[string]opFn{
	"Flatten":         opFlatten,
	"Reshape":         floatFirst(opReshape),
	"Transpose":       opTranspose,
	"Squeeze":         opSqueeze(false),
	"Unsqueeze":       opSqueeze(true),
	"Concat":          opConcat,
	"Split":           opSplit,
	"Slice":           floatFirst(opSlice),
	"Pad":             floatFirst(opPad),
	"Gather":          opGather,
	"Expand":          floatFirst(opExpand),
	"Constant":        opConstant,
	"Shape":           opShape,
	"Size":            opSize,
	"ConstantOfShape": constOnly,
	"Range":           constOnly,
	"Mod":             constOnly,
	"And":             opLogic(core.OpAnd),
	"Or":              opLogic(core.OpOr),
	"Xor":             opLogic(core.OpNe),
}

// opLogic lowers And, Or and Xor (op: ≠ on booleans) of two bool arrays (masks combined:
// an attention mask with a key-padding mask), broadcast.
func opLogic(op core.BinOp) opFn {
	return func(c *ctx, n *Node, ins []value) ([]value, error) {
		if len(ins) != 2 {
			return nil, errors.Errorf("%d inputs, want 2", len(ins))
		}
		xs := make([]core.Term, 2)
		for i, v := range ins {
			if v.t == nil && !v.isBool {
				return nil, errors.Errorf("input %d is not a boolean array", i)
			}
			var err error
			if xs[i], err = c.typedTerm(v); err != nil {
				return nil, err
			}
			if xs[i].Type().Dtype != core.Bool {
				return nil, errors.Errorf("input %d is a %v array, want bool", i, xs[i].Type())
			}
		}
		a, b, err := broadcastPair(xs[0], xs[1])
		if err != nil {
			return nil, err
		}
		return one(lower.Binary(op, a, b, false))
	}
}

// constOnly is the lowering of an operator that the importer evaluates on constants only
// (fold.go): reached with an input that is not a constant, it reports that.
func constOnly(c *ctx, n *Node, ins []value) ([]value, error) {
	for i, v := range ins {
		if v.t != nil {
			return nil, errors.Errorf("input %d is a %v array computed from graph inputs or learnable parameters; %s is supported on constants only (shapes, initializers, Constant nodes and what is computed from them)", i, v.t.Type(), n.OpType)
		}
	}
	return nil, errors.Errorf("%s: the inputs could not be evaluated (a missing or unsupported input)", n.OpType)
}

func opFlatten(c *ctx, n *Node, ins []value) ([]value, error) {
	return floatOp(1, func(c *ctx, n *Node, x []core.Term) (core.Term, error) {
		out, err := flattenDims(shapeOf(x[0]), n.attrInt("axis", 1))
		if err != nil {
			return nil, err
		}
		return lower.Reshape(x[0], out)
	})(c, n, ins)
}

// flattenDims is Flatten's result shape for an input of shape sh: [Π sh[:axis], Π sh[axis:]].
func flattenDims(sh []int, axis64 int64) (core.Shape, error) {
	axis := int(axis64)
	if axis < 0 {
		axis += len(sh)
	}
	if axis < 0 || axis > len(sh) {
		return nil, errors.Errorf("axis %d out of range for shape %v", axis64, sh)
	}
	rows, cols := 1, 1
	for i, d := range sh {
		if i < axis {
			rows *= d
		} else {
			cols *= d
		}
	}
	return core.Shape{rows, cols}, nil
}

func opReshape(c *ctx, n *Node, x core.Term, ins []value) (core.Term, error) {
	want, ok, err := constInts(ins, 1, "shape")
	if err != nil || !ok {
		return nil, errors.Wrap(orMissing(err, "shape"), "reshape")
	}
	out, err := reshapeDims(shapeOf(x), want, n.attrInt("allowzero", 0) != 0)
	if err != nil {
		return nil, err
	}
	return lower.Reshape(x, out)
}

// reshapeDims is Reshape's result shape for an input of shape sh and the shape input want
// (0 copies the input's dimension unless allowzero, −1 is inferred).
func reshapeDims(sh []int, want []int64, allowzero bool) (core.Shape, error) {
	size := 1
	for _, d := range sh {
		size *= d
	}
	out := make(core.Shape, len(want))
	infer := -1
	known := 1
	for i, d := range want {
		switch {
		case d == 0 && !allowzero:
			if i >= len(sh) {
				return nil, errors.Errorf("shape %v copies dimension %d of an input of shape %v", want, i, sh)
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
		if known == 0 || size%known != 0 {
			return nil, errors.Errorf("cannot infer -1 in %v for an input of shape %v", want, sh)
		}
		out[infer] = size / known
	}
	if out.Size() != size {
		return nil, errors.Errorf("shape %v (%d elements) for an input of shape %v (%d elements)", want, out.Size(), sh, size)
	}
	return out, nil
}

func orMissing(err error, what string) error {
	if err != nil {
		return err
	}
	return errors.Errorf("the %s input is missing", what)
}

func opTranspose(c *ctx, n *Node, ins []value) ([]value, error) {
	return floatOp(1, func(c *ctx, n *Node, x []core.Term) (core.Term, error) {
		perm, err := transposePerm(n, len(shapeOf(x[0])))
		if err != nil {
			return nil, err
		}
		return lower.Transpose(x[0], perm)
	})(c, n, ins)
}

// transposePerm is Transpose's permutation for rank r (reversal by default).
func transposePerm(n *Node, r int) ([]int, error) {
	perm := make([]int, r)
	p, ok := n.attrInts("perm")
	if ok && len(p) != r {
		return nil, errors.Errorf("perm %v for rank %d", p, r)
	}
	seen := make([]bool, r)
	for i := range perm {
		perm[i] = r - 1 - i
		if ok {
			if p[i] < 0 || int(p[i]) >= r || seen[p[i]] {
				return nil, errors.Errorf("perm %v is not a permutation of rank %d", p, r)
			}
			perm[i] = int(p[i])
			seen[p[i]] = true
		}
	}
	return perm, nil
}

// opSqueeze lowers Squeeze (remove unit axes) and Unsqueeze (insert unit axes) as reshapes;
// axes come from the attribute before opset 13 and from the second input from 13 on.
func opSqueeze(unsq bool) opFn {
	return func(c *ctx, n *Node, ins []value) ([]value, error) {
		axes, ok, err := squeezeAxes(c, n, ins)
		if err != nil {
			return nil, err
		}
		x, err := c.floatIn(ins, 0)
		if err != nil {
			return nil, err
		}
		out, err := squeezeDims(shapeOf(x), axes, ok, unsq)
		if err != nil {
			return nil, err
		}
		return one(lower.Reshape(x, out))
	}
}

// squeezeAxes reads (Un)Squeeze's axes: the attribute before opset 13, the second input from 13.
func squeezeAxes(c *ctx, n *Node, ins []value) ([]int64, bool, error) {
	if c.opset >= 13 {
		return constInts(ins, 1, "axes")
	}
	axes, ok := n.attrInts("axes")
	return axes, ok, nil
}

// squeezeDims is the result shape of Squeeze (unsq false: without the unit axes given, or all
// of them when none are given) or Unsqueeze (with unit axes inserted at the given positions
// of the result) of an input of shape sh.
func squeezeDims(sh []int, axes []int64, ok, unsq bool) (core.Shape, error) {
	out := core.Shape{}
	if unsq {
		if !ok {
			return nil, errors.New("axes are required")
		}
		r := len(sh) + len(axes)
		mark := make([]bool, r)
		for _, a := range axes {
			ax, err := normAxis(a, r)
			if err != nil {
				return nil, err
			}
			if mark[ax] {
				return nil, errors.Errorf("axis %d given twice in %v", ax, axes)
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
		return out, nil
	}
	drop := make([]bool, len(sh))
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
	return out, nil
}

func opConcat(c *ctx, n *Node, ins []value) ([]value, error) {
	if len(ins) == 0 {
		return nil, errors.New("no inputs")
	}
	// float unless an input is an integer or boolean term (then every input keeps its type)
	conv := c.term
	for _, v := range ins {
		if v.t != nil && !v.t.Type().Dtype.IsFloat() || v.isBool {
			conv = c.typedTerm
		}
	}
	xs := make([]core.Term, len(ins))
	for i, v := range ins {
		if v.t == nil && !v.isInt && !v.isF {
			return nil, errors.Errorf("input %d is missing", i)
		}
		var err error
		if xs[i], err = conv(v); err != nil {
			return nil, err
		}
	}
	axis, err := normAxis(n.attrInt("axis", 0), len(shapeOf(xs[0])))
	if err != nil {
		return nil, err
	}
	return one(lower.Concat(axis, xs...))
}

func opSplit(c *ctx, n *Node, ins []value) ([]value, error) {
	x, sh, axis, err := c.floatAlong(n, ins)
	if err != nil {
		return nil, err
	}
	sizes, err := splitSizes(c, n, ins, sh[axis])
	if err != nil {
		return nil, errors.Wrapf(err, "split of %v along axis %d", sh, axis)
	}
	var outs []value
	start := 0
	for _, s := range sizes {
		if s == 0 {
			return nil, errors.Errorf("split sizes %v of %v along axis %d: empty parts are not supported", sizes, sh, axis)
		}
		t, err := lower.Slice(x, axis, start, 1, s, true)
		if err != nil {
			return nil, err
		}
		outs = append(outs, value{t: t})
		start += s
	}
	return outs, nil
}

// splitSizes is the sizes of Split's parts of a dimension d: the split attribute (before
// opset 13) or input (from 13); without it, num_outputs parts (the attribute of opset 18;
// before, the number of outputs) of ⌈d / num_outputs⌉, the last one smaller when d is not a
// multiple (opset 18; before 18 the parts must be equal).
func splitSizes(c *ctx, n *Node, ins []value, d int) ([]int, error) {
	sizes, ok := n.attrInts("split")
	if c.opset >= 13 {
		var err error
		if sizes, ok, err = constInts(ins, 1, "split"); err != nil {
			return nil, err
		}
	}
	if ok {
		out := make([]int, len(sizes))
		sum := 0
		for i, s := range sizes {
			if s < 0 {
				return nil, errors.Errorf("negative split size in %v", sizes)
			}
			out[i] = int(s)
			sum += int(s)
		}
		if sum != d {
			return nil, errors.Errorf("split sizes %v do not add up to %d", sizes, d)
		}
		return out, nil
	}
	k := len(n.Outputs)
	if c.opset >= 18 {
		a, has := n.Attrs["num_outputs"]
		if !has {
			return nil, errors.New("opset 18: either the split input or the num_outputs attribute is required")
		}
		if int(a.I) != k {
			return nil, errors.Errorf("num_outputs %d for %d outputs", a.I, k)
		}
	}
	if k == 0 {
		return nil, errors.New("no outputs")
	}
	part := (d + k - 1) / k
	if d%k != 0 && c.opset < 18 {
		return nil, errors.Errorf("%d outputs do not split %d evenly (uneven parts need opset 18's num_outputs or a split input)", k, d)
	}
	out := make([]int, k)
	for i := range out {
		out[i] = max(0, min(part, d-i*part))
	}
	if out[k-1] == 0 {
		return nil, errors.Errorf("%d parts of %d leave the last part empty", k, d)
	}
	return out, nil
}

// sliceSel is one axis of a Slice: count positions start, start+step, … (step may be
// negative).
type sliceSel struct {
	axis, start, step, count int
}

// sliceSelections reads Slice's starts, ends, axes and steps (attributes before opset 10,
// inputs from 10) and clamps them to the input shape sh as the specification says.
func sliceSelections(c *ctx, n *Node, ins []value, sh []int) ([]sliceSel, error) {
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
		return nil, errors.Errorf("starts %v and ends %v are required and of equal length", starts, ends)
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
	steps, okSteps, err := get(4, "steps")
	if err != nil {
		return nil, err
	}
	if len(axes) != len(starts) || (okSteps && len(steps) != len(starts)) {
		return nil, errors.Errorf("starts %v, ends %v, axes %v and steps %v differ in length", starts, ends, axes, steps)
	}
	var out []sliceSel
	for i := range starts {
		step := int64(1)
		if okSteps {
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
			return min(max(v, lo), hi)
		}
		s, e := clamp(starts[i]), clamp(ends[i])
		var cnt int64
		if step > 0 {
			cnt = (e - s + step - 1) / step
		} else {
			cnt = (s - e - step - 1) / -step
		}
		out = append(out, sliceSel{axis: ax, start: int(s), step: int(step), count: int(max(cnt, 0))})
	}
	return out, nil
}

func opSlice(c *ctx, n *Node, x core.Term, ins []value) (core.Term, error) {
	sels, err := sliceSelections(c, n, ins, shapeOf(x))
	if err != nil {
		return nil, err
	}
	for _, s := range sels {
		if s.count == 0 {
			return nil, errors.Errorf("slice from %d in steps of %d of axis %d of %v is empty (empty arrays are supported for constants only)", s.start, s.step, s.axis, shapeOf(x))
		}
		if s.step > 0 {
			if x, err = lower.Slice(x, s.axis, s.start, s.step, s.count, true); err != nil {
				return nil, err
			}
			continue
		}
		// positions s, s+step, …: the positive slice from the last of them, reversed
		first := s.start + (s.count-1)*s.step
		if x, err = lower.Slice(x, s.axis, first, -s.step, s.count, true); err != nil {
			return nil, err
		}
		if x, err = lower.Reverse(x, s.axis); err != nil {
			return nil, err
		}
	}
	return x, nil
}

// opPad: constant (with any value), reflect and edge padding, and negative pads (cropping).
// Before opset 11 pads and value are attributes; from 11 they are inputs (pads, an optional
// constant_value and, from 18, optional axes).
func opPad(c *ctx, n *Node, x core.Term, ins []value) (core.Term, error) {
	mode := "constant"
	if m, ok := n.Attrs["mode"]; ok && m.S != "" {
		mode = m.S
	}
	modes := map[string]lower.PadMode{"constant": lower.PadConstant, "reflect": lower.PadReflect, "edge": lower.PadEdge}
	pm, ok := modes[mode]
	if !ok {
		return nil, errors.Errorf("mode %q: supported are constant, reflect and edge", mode)
	}
	sh := shapeOf(x)
	r := len(sh)
	var pads []int64
	val := 0.0
	if c.opset < 11 {
		if pads, ok = n.attrInts("pads"); !ok {
			return nil, errors.New("the pads attribute is required")
		}
		val = n.attrFloat("value", 0)
	} else {
		var err error
		if pads, ok, err = constInts(ins, 1, "pads"); err != nil || !ok {
			return nil, orMissing(err, "pads")
		}
		if len(ins) > 2 && (ins[2].t != nil || ins[2].isF || ins[2].isInt) {
			// a constant, or an initializer's value at import time (as Clip's bounds)
			f, ok := c.constFloats(ins[2])
			if !ok {
				return nil, errors.Errorf("input 2 (constant_value) is a %v array computed at run time; it must be a constant or an initializer", ins[2].t.Type())
			}
			if len(f) != 1 {
				return nil, errors.Errorf("constant_value has %d elements, want 1", len(f))
			}
			val = f[0]
		}
		if len(ins) > 3 && (ins[3].t != nil || ins[3].isInt) {
			axes, _, err := constInts(ins, 3, "axes")
			if err != nil {
				return nil, err
			}
			if len(pads) != 2*len(axes) {
				return nil, errors.Errorf("pads %v for axes %v", pads, axes)
			}
			full := make([]int64, 2*r)
			for i, a := range axes {
				ax, err := normAxis(a, r)
				if err != nil {
					return nil, err
				}
				full[ax], full[ax+r] = pads[i], pads[i+len(axes)]
			}
			pads = full
		}
	}
	if len(pads) != 2*r {
		return nil, errors.Errorf("pads %v for an input of shape %v (want %d values)", pads, sh, 2*r)
	}
	before, after := make([]int, r), make([]int, r)
	for i := range before {
		before[i], after[i] = int(pads[i]), int(pads[i+r])
		if max(pads[i], -pads[i], pads[i+r], -pads[i+r])+int64(sh[i]) > maxElems {
			return nil, errors.Errorf("pads %v for an input of shape %v: a padded dimension above %d", pads, sh, maxElems)
		}
	}
	return lower.Pad(x, before, after, pm, val)
}

// opGather: Gather along axis with indices of any rank (the result has shape
// data[:axis] ++ indices ++ data[axis+1:]). Constant indices are checked and made
// non-negative at import time; indices that are a graph input (token ids) count from the end
// when negative and read 0 outside [−d, d). The gradient with respect to the data (an
// embedding table) is a scatter-add.
func opGather(c *ctx, n *Node, ins []value) ([]value, error) {
	if len(ins) < 2 || (ins[1].t == nil && !ins[1].isInt) || ins[1].isBool {
		if len(ins) >= 2 && (ins[1].isF || ins[1].isBool) {
			return nil, errors.New("indices must be integers")
		}
		return nil, errors.New("the indices input is missing")
	}
	if ins[0].t == nil && !ins[0].isInt && !ins[0].isF {
		return nil, errors.New("the data input is missing")
	}
	x, err := c.typedTerm(ins[0])
	if err != nil {
		return nil, err
	}
	sh := shapeOf(x)
	axis, err := normAxis(n.attrInt("axis", 0), len(sh))
	if err != nil {
		return nil, err
	}
	if ins[1].t != nil { // indices computed at run time
		idx := ins[1].t
		if idx.Type().Dtype != core.Int64 {
			return nil, errors.Errorf("indices of type %v, want integers", idx.Type())
		}
		return one(lower.GatherAxis(x, idx, axis))
	}
	idx := append([]int64(nil), ins[1].ints...)
	for k, i := range idx {
		if i < 0 {
			idx[k] = i + int64(sh[axis])
		}
		if idx[k] < 0 || int(idx[k]) >= sh[axis] {
			return nil, errors.Errorf("index %d out of range for axis %d of %v", i, axis, sh)
		}
	}
	switch len(ins[1].dims) {
	case 0: // a scalar index removes the axis
		return one(lower.Slice(x, axis, int(idx[0]), 1, 1, false))
	case 1:
		lit, err := core.NewLitI(core.Shape{len(idx)}, idx)
		if err != nil {
			return nil, err
		}
		return one(lower.Take(x, lit, axis))
	}
	lit, err := core.NewLitI(shapeOfDims(ins[1].dims), idx)
	if err != nil {
		return nil, err
	}
	return one(lower.GatherAxis(x, lit, axis))
}

// opExpand broadcasts x to the NumPy broadcast of its shape and the shape input.
func opExpand(c *ctx, n *Node, x core.Term, ins []value) (core.Term, error) {
	want, ok, err := constInts(ins, 1, "shape")
	if err != nil || !ok {
		return nil, orMissing(err, "shape")
	}
	dims, err := broadcastDims(convInts[int64](shapeOf(x)), want)
	if err != nil {
		return nil, errors.Wrapf(err, "expand of %v to %v", shapeOf(x), want)
	}
	return lower.Broadcast(x, shapeOfDims(dims))
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
				return []value{{ints: a.T.Ints, dims: a.T.Dims, isInt: true, isBool: a.T.DataType == dtBool}}, nil
			}
			return nil, errors.Errorf("tensor of data type %d; supported: float, double, int32, int64, bool", a.T.DataType)
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

// staticDims is the shape of the term or constant input 0 (static: known at import time).
func staticDims(ins []value) ([]int64, error) {
	if len(ins) == 0 {
		return nil, errors.New("input 0 is missing")
	}
	switch v := ins[0]; {
	case v.t != nil:
		return convInts[int64](shapeOf(v.t)), nil
	case v.isF || v.isInt:
		return v.dims, nil
	}
	return nil, errors.New("input 0 is missing")
}

// opShape: the input's shape, a constant (from opset 15, the part from start to end).
func opShape(c *ctx, n *Node, ins []value) ([]value, error) {
	dims, err := staticDims(ins)
	if err != nil {
		return nil, err
	}
	r := int64(len(dims))
	lo, hi := n.attrInt("start", 0), n.attrInt("end", r)
	if lo < 0 {
		lo += r
	}
	if hi < 0 {
		hi += r
	}
	lo, hi = min(max(lo, 0), r), min(max(hi, 0), r)
	out := append([]int64{}, dims[lo:max(lo, hi)]...)
	return []value{intsV([]int64{int64(len(out))}, out)}, nil
}

// opSize: the input's number of elements, a constant scalar.
func opSize(c *ctx, n *Node, ins []value) ([]value, error) {
	dims, err := staticDims(ins)
	if err != nil {
		return nil, err
	}
	return []value{intsV(nil, []int64{int64(numel(dims))})}, nil
}
