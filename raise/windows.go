package raise

import (
	"github.com/bulkad/bulkad/core"
	kern "github.com/bulkad/bulkad/kernel"
)

// Sums of products over windows. A depthwise (or grouped element-wise) convolution
// (lower.GroupedConv2d) is
//
//	sumOuter (reshape [K, b, o, oh, ow] (gather sh x fX * gather sh f fF))
//
// and the derivative of that term has two more sums of products over the same domain sh:
//
//	scatter xs (reshape sh (replicate K dy) * gather sh f fF) fX    (∂x, col2im-like)
//	scatter fs (reshape sh (replicate K dy) * gather sh x fX) fF    (∂f)
//
// Planned one operation at a time, each materialises the K-fold windows or products and
// passes over them several times. windowSum and windowScatter plan each of the three as one
// kern.WindowDot instead: out[o(p)] += A[a(p)]·B[b(p)] over the points p of sh, reading the
// factors where they lie (x through its windows, clipped at the padding; the filter and the
// cotangent through their broadcasts) and writing each destination in the reference's
// order (results equal to core.Eval bit for bit).
//
// The pattern is matched structurally: a sumOuter of a product (or of a reshape of one that
// merges its leading dimensions into the summed one), or a scatter of a product whose index
// function is affine with static constants; at least one factor a gather whose index
// function is affine with static constants, the other such a gather, a strided view of a
// smaller array (replicates, transposes and reshapes, see view) or a plain array. Anything
// else, and programs raised for a Vulkan device, are planned as before.

// winOperand is one factor of a product as kern.WindowDot reads it: the term whose elements
// it reads (in), its access over the product's domain, and how the op's program rebuilds the
// factor over a variable standing for in.
type winOperand struct {
	in     core.Term
	acc    kern.WinAccess
	wrap   func(v core.Term) (core.Term, error)
	gather *core.Gather // the factor is this gather (nil: a view or a plain array)
}

// winOperand analyses a factor of shape sh (the product's domain).
func (pl *plan) winOperand(t core.Term) winOperand {
	sh := t.Type().Shape
	if g, ok := pl.peel(t).(*core.Gather); ok {
		if o, ok := winGather(pl, g); ok {
			return o
		}
	}
	if v := pl.view(t); !v.trivial {
		st := make([]int64, len(v.strides))
		for i, s := range v.strides {
			st[i] = int64(s)
		}
		return winOperand{in: v.base, wrap: v.wrap,
			acc: kern.WinAccess{Shape: []int{v.base.Type().Shape.Size()}, Coef: [][]int64{st}, C0: []int64{int64(v.offset)}}}
	}
	return winOperand{in: t, acc: identityAccess(sh, 0), wrap: func(v core.Term) (core.Term, error) { return v, nil }}
}

// identityAccess is the access of an array of shape sh at the domain variables from the
// q-th on, for a domain of q + len(sh) variables. q may be negative (affineAccess of an
// index function with more outputs than variables, such as \[i] -> [1, i] or \[i,j] ->
// [t, i, j]): the rows of the first −q dimensions are then left zero for the caller to fill.
func identityAccess(sh core.Shape, q int) kern.WinAccess {
	a := kern.WinAccess{Shape: append([]int(nil), sh...), C0: make([]int64, len(sh))}
	for d := range sh {
		row := make([]int64, q+len(sh))
		if q+d >= 0 {
			row[q+d] = 1
		}
		a.Coef = append(a.Coef, row)
	}
	return a
}

// winGather is the access of gather sh x fn with fn affine with static constants: the
// outputs of fn index x's leading dimensions, the variables after fn's index the others.
// A reshape of x is read in place (it does not move the elements).
func winGather(pl *plan, g *core.Gather) (winOperand, bool) {
	acc, ok := affineAccess(g.Fn, g.X.Type().Shape, len(g.Shape))
	if !ok {
		return winOperand{}, false
	}
	o := winOperand{in: g.X, acc: acc, gather: g,
		wrap: func(v core.Term) (core.Term, error) { return core.NewGather(g.Shape.Clone(), v, g.Fn) }}
	if rs, ok := pl.peel(g.X).(*core.Reshape); ok {
		xs := g.X.Type().Shape
		o.in = rs.X
		o.wrap = func(v core.Term) (core.Term, error) {
			r, err := core.NewReshape(xs.Clone(), v)
			if err != nil {
				return nil, err
			}
			return core.NewGather(g.Shape.Clone(), r, g.Fn)
		}
	}
	return o, true
}

// affineAccess is the access of an array of shape xs by an index function fn (affine with
// static constants) over a domain of rank variables: fn's outputs address xs's leading
// dimensions, the variables after fn's the remaining ones, in order.
func affineAccess(fn *core.IndexFn, xs core.Shape, rank int) (kern.WinAccess, bool) {
	prog, err := kern.CompileIndexFn(fn)
	if err != nil || len(prog.Frees) > 0 {
		return kern.WinAccess{}, false
	}
	coef, c0, ok := prog.AffineForm()
	n, m := len(fn.Vars), len(fn.Out)
	if !ok || len(coef) != m || m > len(xs) || rank != n+len(xs)-m {
		return kern.WinAccess{}, false
	}
	acc := identityAccess(xs, n-m) // the rows of the dimensions fn does not index
	for k := range m {
		row := make([]int64, rank)
		copy(row, coef[k])
		acc.Coef[k], acc.C0[k] = row, c0[k]
	}
	return acc, true
}

// winProduct returns the factors of a product x * y of floats when one of them is an affine
// gather.
func (pl *plan) winProduct(t core.Term) (*core.Binary, winOperand, winOperand, bool) {
	prod, ok := pl.peel(t).(*core.Binary)
	if !ok || prod.Op != core.OpMul || !prod.Type().Dtype.IsFloat() || pl.vk != nil {
		return nil, winOperand{}, winOperand{}, false
	}
	a, b := pl.winOperand(prod.X), pl.winOperand(prod.Y)
	if a.gather == nil && b.gather == nil {
		return nil, winOperand{}, winOperand{}, false
	}
	return prod, a, b, true
}

// winFns are the index functions the op's program keeps from the factors.
func winFns(ops ...winOperand) []*core.IndexFn {
	var fns []*core.IndexFn
	for _, o := range ops {
		if o.gather != nil {
			fns = append(fns, o.gather.Fn)
		}
	}
	return fns
}

// winRebuild rebuilds the product over the parameters standing for the factors' inputs.
func winRebuild(prod *core.Binary, a, b winOperand, vs []*core.Var) (core.Term, error) {
	x, err := a.wrap(vs[0])
	if err != nil {
		return nil, err
	}
	y, err := b.wrap(vs[1])
	if err != nil {
		return nil, err
	}
	return core.NewBinary(prod.Op, x, y)
}

// windowSum plans sumOuter (x * y), or sumOuter (reshape [K, …] (x * y)) where the reshape
// merges the product's leading dimensions into the summed one, as one kern.WindowDot (see
// the comment above); ok is false when t is not of that form.
func (pl *plan) windowSum(t *core.SumOuter) (r ref, ok bool, err error) {
	x := pl.peel(t.X)
	var reshape core.Shape
	if rs, isReshape := x.(*core.Reshape); isReshape {
		reshape, x = rs.Shape, rs.X
	}
	prod, a, b, ok := pl.winProduct(x)
	if !ok {
		return ref{}, false, nil
	}
	sh := prod.Type().Shape
	summed := t.X.Type().Shape[0]
	q := 0
	for q <= len(sh) && sh[:q].Size() < summed {
		q++
	}
	if q > len(sh) || sh[:q].Size() != summed || sh[q:].Size() != t.Type().Shape.Size() {
		return ref{}, false, nil
	}
	k, err := kern.NewWindowDot(sh, identityAccess(sh[q:], q), a.acc, b.acc)
	if err != nil {
		return ref{}, false, nil
	}
	r, err = pl.customAvoid(t, "windowDot", []core.Term{a.in, b.in}, winFns(a, b), func(vs []*core.Var) (core.Term, []*core.Var, error) {
		p, err := winRebuild(prod, a, b, vs)
		if err == nil && reshape != nil {
			p, err = core.NewReshape(reshape.Clone(), p)
		}
		if err != nil {
			return nil, nil, err
		}
		s, err := core.NewSumOuter(p)
		return s, vs, err
	}, k)
	return r, true, err
}

// windowScatter plans scatter sh (x * y) f with f affine with static constants as one
// kern.WindowDot (see the comment above); ok is false when t is not of that form.
func (pl *plan) windowScatter(t *core.Scatter) (r ref, ok bool, err error) {
	prod, a, b, ok := pl.winProduct(t.X)
	if !ok {
		return ref{}, false, nil
	}
	dom := prod.Type().Shape
	out, ok := affineAccess(t.Fn, t.Shape, len(dom))
	if !ok {
		return ref{}, false, nil
	}
	k, err := kern.NewWindowDot(dom, out, a.acc, b.acc)
	if err != nil {
		return ref{}, false, nil
	}
	r, err = pl.customAvoid(t, "windowDot", []core.Term{a.in, b.in}, winFns(a, b), func(vs []*core.Var) (core.Term, []*core.Var, error) {
		p, err := winRebuild(prod, a, b, vs)
		if err != nil {
			return nil, nil, err
		}
		s, err := core.NewScatter(t.Shape.Clone(), p, t.Fn)
		return s, vs, err
	}, k)
	return r, true, err
}
