package raise

import (
	"sort"

	"github.com/bulkad/bulkad/core"
	kern "github.com/bulkad/bulkad/kernel"
)

// concatPart is one term of a concatenating sum: a gather placing x at offset off along the
// axis of the result.
type concatPart struct {
	g    *core.Gather
	off  int
	size int
}

// concatSum plans a sum of gathers that places each operand at its own offset along one axis
// of the result (lower.Concat's form: each gather reads 0 outside its operand, and their
// ranges tile the axis) as one kern.ConcatAxis: every element copied once, plus 0 as the sum
// adds it, instead of one gather of the whole result per operand and an addition per operand
// after the first (quadratic in densenet121's dense blocks, which concatenate up to 32 maps).
// The op's program is the sum itself, left-nested, over the gathers' operands.
func (pl *plan) concatSum(t *core.Binary) (ref, bool, error) {
	dt := t.Type().Dtype
	if t.Op != core.OpAdd || !(dt.IsFloat() || dt == core.Int64) {
		return ref{}, false, nil
	}
	var leaves []core.Term
	if !pl.addLeaves(t, &leaves) || len(leaves) < 2 {
		return ref{}, false, nil
	}
	sh := t.Type().Shape
	axis := -1
	parts := make([]concatPart, len(leaves))
	for i, l := range leaves {
		g, ok := l.(*core.Gather)
		if !ok {
			return ref{}, false, nil
		}
		a, off, ok := placement(g, sh)
		if !ok || axis >= 0 && a != axis {
			return ref{}, false, nil
		}
		axis = a
		parts[i] = concatPart{g: g, off: off, size: g.X.Type().Shape[a]}
	}
	if !tiles(parts, sh[axis]) {
		return ref{}, false, nil
	}
	k := kern.ConcatAxis{Outer: sh[:axis].Size(), Inner: sh[axis+1:].Size(), AddZero: dt.IsFloat()}
	ins := make([]core.Term, len(parts))
	fns := make([]*core.IndexFn, len(parts))
	for i, p := range parts {
		k.Sizes, k.Offs = append(k.Sizes, p.size), append(k.Offs, p.off)
		ins[i], fns[i] = p.g.X, p.g.Fn
	}
	r, err := pl.customAvoid(t, "concat", ins, fns, func(vs []*core.Var) (core.Term, []*core.Var, error) {
		var sum core.Term
		for i, p := range parts {
			g, err := core.NewGather(sh, vs[i], p.g.Fn)
			if err != nil {
				return nil, nil, err
			}
			if sum == nil {
				sum = g
				continue
			}
			if sum, err = core.NewBinary(core.OpAdd, sum, g); err != nil {
				return nil, nil, err
			}
		}
		return sum, vs, nil
	}, k)
	return r, true, err
}

// addLeaves appends the operands of the tree of additions t (seen through lazily planned
// lets and shares) to leaves, left to right, and reports false when one is not a gather or
// there are more than maxConcat. Each right operand is looked at before the left subtree is
// walked, so a chain of other additions fails at its first node.
func (pl *plan) addLeaves(t core.Term, leaves *[]core.Term) bool {
	switch u := pl.peel(t).(type) {
	case *core.Gather:
		*leaves = append(*leaves, u)
		return len(*leaves) <= maxConcat
	case *core.Binary:
		if u.Op != core.OpAdd {
			return false
		}
		switch y := pl.peel(u.Y).(type) {
		case *core.Gather:
		case *core.Binary:
			if y.Op != core.OpAdd {
				return false
			}
		default:
			return false
		}
		return pl.addLeaves(u.X, leaves) && pl.addLeaves(u.Y, leaves)
	}
	return false
}

// maxConcat bounds the operands of a sum planned as a concatenation (and the work of looking
// for one: each addition of a longer chain that is not one would walk it again).
const maxConcat = 1024

// placement reports whether gather g (of shape sh) copies its operand x into sh at an offset
// along one axis: an index function with as many variables as outputs, the identity plus a
// constant −off on that axis, x's shape equal to sh except along it. The axis is the one where
// x is smaller or the offset is not 0 (none: g is not a placement).
func placement(g *core.Gather, sh core.Shape) (axis, off int, ok bool) {
	prog, err := kern.CompileIndexFn(g.Fn)
	if err != nil || len(prog.Frees) > 0 {
		return 0, 0, false
	}
	coef, c0, ok := prog.AffineForm()
	n := len(g.Fn.Vars)
	xs := g.X.Type().Shape
	if !ok || len(coef) != n || len(xs) != len(sh) {
		return 0, 0, false
	}
	axis = -1
	for k := range n {
		for j := range n {
			want := int64(0)
			if j == k {
				want = 1
			}
			if coef[k][j] != want {
				return 0, 0, false
			}
		}
		if c0[k] != 0 || xs[k] != sh[k] {
			if axis >= 0 || c0[k] > 0 || int(-c0[k])+xs[k] > sh[k] {
				return 0, 0, false
			}
			axis, off = k, int(-c0[k])
		}
	}
	for k := n; k < len(sh); k++ {
		if xs[k] != sh[k] {
			return 0, 0, false
		}
	}
	return axis, off, axis >= 0
}

// tiles reports whether the parts' ranges cover [0, n) once each.
func tiles(parts []concatPart, n int) bool {
	ps := append([]concatPart(nil), parts...)
	sort.Slice(ps, func(a, b int) bool {
		return ps[a].off < ps[b].off || ps[a].off == ps[b].off && ps[a].size < ps[b].size
	})
	next := 0
	for _, p := range ps {
		if p.off != next {
			return false
		}
		next += p.size
	}
	return next == n
}
