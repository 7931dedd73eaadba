package onnx

import (
	"math"
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
	"CumSum":          floatFirst(opCumSum),
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

func opClip(c *ctx, n *Node, x core.Term, ins []value) (core.Term, error) {
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
	return lower.Clamp(x, lo, hi)
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
