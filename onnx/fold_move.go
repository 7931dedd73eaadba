package onnx

import (
	"math"

	"github.com/bulkad/bulkad/lower"
	"github.com/pkg/errors"
)

// Constant folding of the operators that move elements (reshape, transpose, concat, gather,
// slice, split, expand) and of the reductions; the arithmetic folds and the fold table are in
// fold.go.

// --- moving elements ---

// convInts converts sizes or indices between int and int64 (a shape's []int and ONNX's
// []int64 dims).
func convInts[To, From int | int64](s []From) []To {
	out := make([]To, len(s))
	for i, d := range s {
		out[i] = To(d)
	}
	return out
}

func withDims(v value, dims []int64) value {
	v.dims = dims
	return v
}

func foldReshape(c *ctx, n *Node, ins []value) ([]value, error) {
	want, ok, err := constInts(ins, 1, "shape")
	if err != nil || !ok {
		return nil, orMissing(err, "shape")
	}
	out, err := reshapeDims(convInts[int](ins[0].dims), want, n.attrInt("allowzero", 0) != 0)
	if err != nil {
		return nil, err
	}
	return []value{withDims(ins[0], convInts[int64](out))}, nil
}

func foldFlatten(c *ctx, n *Node, ins []value) ([]value, error) {
	out, err := flattenDims(convInts[int](ins[0].dims), n.attrInt("axis", 1))
	if err != nil {
		return nil, err
	}
	return []value{withDims(ins[0], convInts[int64](out))}, nil
}

func foldSqueeze(unsq bool) foldFunc {
	return func(c *ctx, n *Node, ins []value) ([]value, error) {
		axes, ok, err := squeezeAxes(c, n, ins)
		if err != nil {
			return nil, err
		}
		out, err := squeezeDims(convInts[int](ins[0].dims), axes, ok, unsq)
		if err != nil {
			return nil, err
		}
		return []value{withDims(ins[0], convInts[int64](out))}, nil
	}
}

func foldTranspose(c *ctx, n *Node, ins []value) ([]value, error) {
	v := ins[0]
	perm, err := transposePerm(n, len(v.dims))
	if err != nil {
		return nil, err
	}
	out := make([]int64, len(perm))
	for i, p := range perm {
		out[i] = v.dims[p]
	}
	strides := make([]int, len(v.dims))
	s := 1
	for i := len(v.dims) - 1; i >= 0; i-- {
		strides[i] = s
		s *= int(v.dims[i])
	}
	src := make([]int, 0, numel(out))
	forEach(out, func(ix []int) {
		k := 0
		for i, p := range perm {
			k += ix[i] * strides[p]
		}
		src = append(src, k)
	})
	return []value{gatherV(v, out, src)}, nil
}

// selectAxes is v with positions sel[a] along every axis a (nil: all positions).
func selectAxes(v value, sel [][]int) value {
	dims := make([]int64, len(v.dims))
	for a := range dims {
		dims[a] = v.dims[a]
		if sel[a] != nil {
			dims[a] = int64(len(sel[a]))
		}
	}
	src := make([]int, 0, numel(dims))
	forEach(dims, func(ix []int) {
		k := 0
		for a, i := range ix {
			if sel[a] != nil {
				i = sel[a][i]
			}
			k = k*int(v.dims[a]) + i
		}
		src = append(src, k)
	})
	return gatherV(v, dims, src)
}

func foldConcat(c *ctx, n *Node, ins []value) ([]value, error) {
	r := len(ins[0].dims)
	axis, err := normAxis(n.attrInt("axis", 0), r)
	if err != nil {
		return nil, err
	}
	dims := append([]int64(nil), ins[0].dims...)
	dims[axis] = 0
	kindF, kindB := ins[0].isF, ins[0].isBool
	for _, v := range ins {
		if !isConst(v) || len(v.dims) != r || v.isF != kindF || v.isBool != kindB {
			return nil, errors.New("inputs of different ranks or types")
		}
		for a := range dims {
			if a != axis && v.dims[a] != dims[a] {
				return nil, errors.Errorf("shapes %v and %v differ outside axis %d", ins[0].dims, v.dims, axis)
			}
		}
		dims[axis] += v.dims[axis]
	}
	if err := checkSize(dims, maxFold); err != nil {
		return nil, err
	}
	// stack the inputs' elements one after the other and read them in the result's order
	all := value{isInt: !kindF, isF: kindF, isBool: kindB}
	var offs []int
	for _, v := range ins {
		offs = append(offs, len(all.ints)+len(all.floats))
		all.ints = append(all.ints, v.ints...)
		all.floats = append(all.floats, v.floats...)
	}
	src := make([]int, 0, numel(dims))
	forEach(dims, func(ix []int) {
		j, p := 0, ix[axis]
		for p >= int(ins[j].dims[axis]) {
			p -= int(ins[j].dims[axis])
			j++
		}
		k := 0
		for a, i := range ix {
			if a == axis {
				i = p
			}
			k = k*int(ins[j].dims[a]) + i
		}
		src = append(src, offs[j]+k)
	})
	return []value{gatherV(all, dims, src)}, nil
}

// foldGather: Gather along axis with indices of any rank (negative ones count from the end):
// the result has shape data[:axis] ++ indices ++ data[axis+1:].
func foldGather(c *ctx, n *Node, ins []value) ([]value, error) {
	data, idx := ins[0], ins[1]
	if idx.isF || idx.isBool {
		return nil, errors.New("indices must be integers")
	}
	axis, err := normAxis(n.attrInt("axis", 0), len(data.dims))
	if err != nil {
		return nil, err
	}
	d := data.dims[axis]
	norm := make([]int, len(idx.ints))
	for k, i := range idx.ints {
		if i < 0 {
			i += d
		}
		if i < 0 || i >= d {
			return nil, errors.Errorf("index %d out of range for axis %d of shape %v", idx.ints[k], axis, data.dims)
		}
		norm[k] = int(i)
	}
	dims := append(append(append([]int64(nil), data.dims[:axis]...), idx.dims...), data.dims[axis+1:]...)
	if err := checkSize(dims, maxFold); err != nil {
		return nil, err
	}
	outer, inner := numel(data.dims[:axis]), numel(data.dims[axis+1:])
	src := make([]int, 0, outer*len(norm)*inner)
	for o := 0; o < outer; o++ {
		for _, j := range norm {
			for i := 0; i < inner; i++ {
				src = append(src, (o*int(d)+j)*inner+i)
			}
		}
	}
	return []value{gatherV(data, dims, src)}, nil
}

func foldSlice(c *ctx, n *Node, ins []value) ([]value, error) {
	v := ins[0]
	sels, err := sliceSelections(c, n, ins, convInts[int](v.dims))
	if err != nil {
		return nil, err
	}
	sel := make([][]int, len(v.dims))
	for _, s := range sels {
		idx := make([]int, s.count)
		for k := range idx {
			idx[k] = s.start + k*s.step
		}
		if sel[s.axis] != nil { // an axis sliced twice: compose
			for k, i := range idx {
				idx[k] = sel[s.axis][i]
			}
		}
		sel[s.axis] = idx
	}
	return []value{selectAxes(v, sel)}, nil
}

func foldSplit(c *ctx, n *Node, ins []value) ([]value, error) {
	v := ins[0]
	axis, err := normAxis(n.attrInt("axis", 0), len(v.dims))
	if err != nil {
		return nil, err
	}
	sizes, err := splitSizes(c, n, ins, int(v.dims[axis]))
	if err != nil {
		return nil, err
	}
	var outs []value
	start := 0
	for _, s := range sizes {
		sel := make([][]int, len(v.dims))
		sel[axis] = make([]int, s)
		for k := range sel[axis] {
			sel[axis][k] = start + k
		}
		outs = append(outs, selectAxes(v, sel))
		start += s
	}
	return outs, nil
}

func foldExpand(c *ctx, n *Node, ins []value) ([]value, error) {
	shape, ok, err := constInts(ins, 1, "shape")
	if err != nil || !ok {
		return nil, orMissing(err, "shape")
	}
	dims, err := broadcastDims(ins[0].dims, shape)
	if err != nil {
		return nil, err
	}
	if err := checkSize(dims, maxElems); err != nil {
		return nil, err
	}
	if ins[0].isF && numel(dims) > bigFloatFill && numel(ins[0].dims) <= bigFloatFill {
		// a large float array of few distinct values: a broadcast term, not every element
		x, err := c.term(ins[0])
		if err != nil {
			return nil, err
		}
		t, err := lower.Broadcast(x, shapeOfDims(dims))
		return []value{{t: t}}, err
	}
	if err := checkSize(dims, maxFold); err != nil {
		return nil, err
	}
	return []value{gatherV(ins[0], dims, bcastSrc(ins[0].dims, dims))}, nil
}

// foldReduce: ReduceSum, ReduceProd, ReduceMin and ReduceMax of integer constants (the
// element count of a shape, for instance); float constants are left to the operator table.
func foldReduce(c *ctx, n *Node, ins []value) ([]value, error) {
	v := ins[0]
	if !v.isInt || v.isBool {
		return nil, nil // not folded
	}
	axes, ok := n.attrInts("axes")
	if (n.OpType == "ReduceSum" && c.opset >= 13) || c.opset >= 18 {
		var err error
		if axes, ok, err = constInts(ins, 1, "axes"); err != nil {
			return nil, err
		}
	}
	r := len(v.dims)
	mark := make([]bool, r)
	if !ok || len(axes) == 0 {
		if n.attrInt("noop_with_empty_axes", 0) != 0 {
			return ins[:1], nil
		}
		for i := range mark {
			mark[i] = true
		}
	}
	for _, a := range axes {
		ax, err := normAxis(a, r)
		if err != nil {
			return nil, err
		}
		mark[ax] = true
	}
	keep := n.attrInt("keepdims", 1) != 0
	var kept, full []int64
	for i, d := range v.dims {
		switch {
		case !mark[i]:
			kept, full = append(kept, d), append(full, d)
		case keep:
			full = append(full, 1)
		}
	}
	if !keep {
		full = kept
	}
	out := make([]int64, numel(kept))
	seen := make([]bool, len(out))
	k := 0
	forEach(v.dims, func(ix []int) {
		o := 0
		for i, x := range ix {
			if !mark[i] {
				o = o*int(v.dims[i]) + x
			}
		}
		x := v.ints[k]
		k++
		if !seen[o] {
			out[o], seen[o] = x, true
			return
		}
		switch n.OpType {
		case "ReduceSum":
			out[o] += x
		case "ReduceProd":
			out[o] *= x
		case "ReduceMin":
			out[o] = min(out[o], x)
		case "ReduceMax":
			out[o] = max(out[o], x)
		}
	})
	for o := range out {
		if !seen[o] { // an empty reduction: the identity
			out[o] = map[string]int64{"ReduceSum": 0, "ReduceProd": 1, "ReduceMin": math.MaxInt64, "ReduceMax": math.MinInt64}[n.OpType]
		}
	}
	return []value{intsV(full, out)}, nil
}
