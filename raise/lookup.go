package raise

import (
	"github.com/bulkad/bulkad/core"
	kern "github.com/bulkad/bulkad/kernel"
)

// Affine index functions with one looked-up term (the index function of a max-pool written
// as a gather at the argmax of each window, and of its derivative, a scatter to the argmax):
// every output is an affine function of the bound variables plus a function of the single
// value a = A[k0, …, kn-1], where A is an argmax array (the op's only extra input) indexed
// by exactly the bound variables, in order. Since an argmax along a dimension of size K lies
// in [0, K), the looked-up part of the flat offset is a table over a, and interval arithmetic
// proves the whole index function in bounds at build time; the gather or scatter then runs as
// a strided walk that adds table[A[p]] to the affine offset, without per-element closures.

// argmaxRange is the number of values of an argmax array t (an argmaxOuter term, possibly
// behind variables of top-level lets and shares), or 0.
func (pl *plan) argmaxRange(t core.Term) int {
	if a, ok := pl.resolve(t, true).(*core.ArgmaxOuter); ok {
		return a.X.Type().Shape[0]
	}
	return 0
}

// maskedScatter plans m * s (either operand order), where s is a scatter (possibly under a
// transpose, which is folded into its index function) whose index function has an injective
// lookup plan and m holds only 0 and 1 (a cast of a bool array), as
//
//	scatter sh (x * gather (shape of x) m f) f
//
// so that the mask is read at the scattered positions only and the scatter's result is
// never materialised and multiplied in a second pass (the max-pool gradient of a ReLU
// network: the cotangent routed to the argmax positions, times the ReLU mask). Because no
// two domain points meet at one position and m is 0 or 1, the value is exactly the same:
// at a written position both sides are m·(0 + x) = 0 + x·m (±0 alike), elsewhere m·0 = 0.
func (pl *plan) maskedScatter(t *core.Binary) (ref, bool, error) {
	ns, ok := pl.maskedScatterTerm(t)
	if !ok {
		return ref{}, false, nil
	}
	r, err := pl.term(ns)
	return r, true, err
}

// maskedScatterTerm is the rewritten term of maskedScatter.
func (pl *plan) maskedScatterTerm(t *core.Binary) (*core.Scatter, bool) {
	if t.Op != core.OpMul || !t.Type().Dtype.IsFloat() {
		return nil, false
	}
	for side := 0; side < 2; side++ {
		sx, m := t.X, t.Y
		if side == 1 {
			sx, m = t.Y, t.X
		}
		s, ok := pl.scatterOperand(sx)
		if !ok || !pl.isMask01(m, 0) {
			continue
		}
		n, xs := len(s.Fn.Vars), s.X.Type().Shape
		prog, err := kern.CompileIndexFn(s.Fn)
		if err != nil {
			continue
		}
		if lp, ok := kern.LookupPlan(s.Fn, prog, xs[:n], s.Shape[:len(s.Fn.Out)], pl.argmaxRange); !ok || !lp.Injective {
			continue
		}
		g, err := core.NewGather(xs.Clone(), m, s.Fn)
		if err != nil {
			continue
		}
		var prod core.Term
		if side == 0 {
			prod, err = core.NewBinary(core.OpMul, s.X, g)
		} else {
			prod, err = core.NewBinary(core.OpMul, g, s.X)
		}
		if err != nil {
			continue
		}
		ns, err := core.NewScatter(s.Shape.Clone(), prod, s.Fn)
		if err != nil {
			continue
		}
		return ns, true
	}
	return nil, false
}

// scatterOperand returns t as a scatter, folding a transpose of a scatter into its index
// function.
func (pl *plan) scatterOperand(t core.Term) (*core.Scatter, bool) {
	t, ok := pl.foldTranspose(pl.peel(t))
	if !ok {
		return nil, false
	}
	s, ok := t.(*core.Scatter)
	return s, ok
}

// foldTranspose returns t, or for a transpose the term transposeOf rewrites it to (false when
// it cannot).
func (pl *plan) foldTranspose(t core.Term) (core.Term, bool) {
	if tr, ok := t.(*core.Transpose); ok {
		return pl.transposeOf(tr)
	}
	return t, true
}

// isMask01 reports whether every element of t is 0 or 1: a cast of a bool array to a float
// type, seen through variables of top-level lets, shares, transposes, replicates and
// reshapes.
func (pl *plan) isMask01(t core.Term, depth int) bool {
	if depth > 64 {
		return false
	}
	switch u := t.(type) {
	case *core.Var:
		if b, ok := pl.lazy[u.Name]; ok {
			return pl.isMask01(b, depth+1)
		}
		if b, ok := pl.defs[u.Name]; ok {
			return pl.isMask01(b, depth+1)
		}
	case *core.Share:
		return pl.isMask01(u.Body, depth+1)
	case *core.Cast:
		return u.To.IsFloat() && u.X.Type().Dtype == core.Bool
	case *core.Transpose:
		return pl.isMask01(u.X, depth+1)
	case *core.Replicate:
		return pl.isMask01(u.X, depth+1)
	case *core.Reshape:
		return pl.isMask01(u.X, depth+1)
	}
	return false
}
