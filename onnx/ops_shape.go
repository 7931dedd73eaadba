package onnx

import (
	"github.com/bulkad/bulkad/core"
	"github.com/bulkad/bulkad/lower"
	"github.com/pkg/errors"
)

// opsShape lowers the operators that move, select or compute shapes and indices.
var opsShape = map[string]opFn{
	"Flatten":   opFlatten,
	"Reshape":   floatFirst(opReshape),
	"Transpose": opTranspose,
	"Squeeze":   opSqueeze(false),
	"Unsqueeze": opSqueeze(true),
	"Concat":    opConcat,
	"Split":     opSplit,
	"Slice":     floatFirst(opSlice),
	"Pad":       floatFirst(opPad),
	"Gather":    opGather,
	"Constant":  opConstant,
	"Shape":     opShape,
}

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

func opReshape(c *ctx, n *Node, x core.Term, ins []value) (core.Term, error) {
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
	return lower.Reshape(x, out)
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
		return one(lower.Reshape(x, out))
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
	xs, err := c.floatIns(ins, len(ins))
	if err != nil {
		return nil, err
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

func opSlice(c *ctx, n *Node, x core.Term, ins []value) (core.Term, error) {
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
	return x, nil
}

// opPad: constant mode with zeros, as concatenations of zero blocks.
func opPad(c *ctx, n *Node, x core.Term, ins []value) (core.Term, error) {
	if m, ok := n.Attrs["mode"]; ok && m.S != "constant" {
		return nil, errors.Errorf("mode %q: only constant padding is supported", m.S)
	}
	pads, ok := n.attrInts("pads")
	if c.opset >= 11 {
		var err error
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
			var err error
			if x, err = lower.Concat(ax, parts...); err != nil {
				return nil, err
			}
		}
	}
	return x, nil
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
	x, sh, axis, err := c.floatAlong(n, ins)
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
		return one(lower.Slice(x, axis, int(idx[0]), 1, 1, false))
	}
	if len(ins[1].dims) != 1 {
		return nil, errors.Errorf("indices of shape %v: only scalar and 1-D indices are supported", ins[1].dims)
	}
	lit, err := core.NewLitI(core.Shape{len(idx)}, idx)
	if err != nil {
		return nil, err
	}
	return one(lower.Take(x, lit, axis))
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
