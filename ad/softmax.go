package ad

import "github.com/bulkad/bulkad/core"

// Closed-form derivatives of the normalised exponentials (softmax and log-softmax along one
// axis), as lower writes them: with e = exp z and S the sum of e along axis a broadcast back,
//
//	softmax     y = e / S      dy = y ⊙ (dz − S[y ⊙ dz])
//	log-softmax y = z − log S  dy = dz − S[exp(y) ⊙ dz]
//
// where S[v] is the group sum of v along a, broadcast back. The generic rules of / and log
// give the same tangent through e and S, so they need e and S as primal values: a gradient
// program recomputes exp z (and the maximum that shifts z) although the forward pass already
// has y — a Gorgonia node whose value the raised gradient reads. The closed forms read only
// y, and they are ordinary terms of y, so a second differentiation (y being a let of z)
// gives the exact second derivative.
//
// Why the group sum commutes: S[e ⊙ dz] / S[e] = S[e ⊙ dz / S[e]] = S[y ⊙ dz], because S[e]
// is constant on each group. groupSum checks that the denominator is such a group sum of the
// very numerator; anything else takes the generic rules.

// groupSum is the group sum of one term along one axis, broadcast back to its shape, as
// the operations tr p2 (replicate n (sumOuter (tr p1 e))) (either transpose may be absent).
type groupSum struct {
	p1, p2 []int // nil: no transpose
	n      int
	sumTy  core.Type // the type of sumOuter (tr p1 e)
	repTy  core.Type // the type of replicate n (…)
	innTy  core.Type // the type of tr p1 e (e's type without p1)
}

// peelGroupSum reads s as tr p2 (replicate n (sumOuter (tr p1 inner))) (either transpose may
// be absent); ok is false for any other form. Whether it is a group sum of inner is
// matchGroupSum's to check.
func peelGroupSum(s core.Term) (g *groupSum, inner core.Term, ok bool) {
	g = &groupSum{}
	if t, ok := s.(*core.Transpose); ok {
		g.p2, s = t.Perm, t.X
	}
	rep, ok := s.(*core.Replicate)
	if !ok {
		return nil, nil, false
	}
	sum, ok := rep.X.(*core.SumOuter)
	if !ok {
		return nil, nil, false
	}
	g.n, g.repTy, g.sumTy, g.innTy = rep.N, rep.Type(), sum.Type(), sum.X.Type()
	inner = sum.X
	if t, ok := inner.(*core.Transpose); ok {
		g.p1, inner = t.Perm, t.X
	}
	return g, inner, true
}

// matchGroupSum reports whether s is a group sum of e along one axis, broadcast back.
func matchGroupSum(s, e core.Term) (*groupSum, bool) {
	g, inner, ok := peelGroupSum(s)
	if !ok {
		return nil, false
	}
	if inner != e && !core.Equal(inner, e) {
		return nil, false
	}
	r := e.Type().Shape.Rank()
	if r == 0 || len(g.p1) > r || len(g.p2) > r {
		return nil, false
	}
	// Dimension p of the replicated sum is e's dimension P1[p] (dimension 0 the summed one);
	// dimension p of the result is the replicated sum's P2[p]: it is e indexed like e iff
	// P1[P2[p]] = p for every p, and the replicated axis has e's length along the summed one.
	full := func(perm []int, p int) int {
		if p < len(perm) {
			return perm[p]
		}
		return p
	}
	for p := 0; p < r; p++ {
		if full(g.p1, full(g.p2, p)) != p {
			return nil, false
		}
	}
	if g.n != e.Type().Shape[full(g.p1, 0)] {
		return nil, false
	}
	return g, true
}

// primal builds the group sum of the primal term x.
func (gs *groupSum) primal(b *core.Builder, x core.Term) core.Term {
	if gs.p1 != nil {
		x = b.Transpose(gs.p1, x)
	}
	x = b.Replicate(gs.n, b.SumOuter(x))
	if gs.p2 != nil {
		x = b.Transpose(gs.p2, x)
	}
	return x
}

// delta builds the group sum of the tangent d (of type ty, e's type).
func (gs *groupSum) delta(d *Delta, ty core.Type) *Delta {
	if gs.p1 != nil {
		d = &Delta{Kind: DTranspose, Type: gs.innTy, Perm: gs.p1, A: d}
	}
	d = &Delta{Kind: DSumOuter, Type: gs.sumTy, A: d}
	d = &Delta{Kind: DReplicate, Type: gs.repTy, N: gs.n, A: d}
	if gs.p2 != nil {
		d = &Delta{Kind: DTranspose, Type: ty, Perm: gs.p2, A: d}
	}
	return d
}

// normalisedExp differentiates t with the closed forms above when t is a softmax
// (exp z / S[exp z]) or a log-softmax (z − log S[exp z]); ok is false for any other term,
// which then takes the generic rules.
func (f *forward) normalisedExp(t *core.Binary) (r *dual, ok bool) {
	var e core.Term // exp z
	var sum core.Term
	switch t.Op {
	case core.OpDiv:
		e, sum = t.X, t.Y
	case core.OpSub:
		lg, isLog := t.Y.(*core.Unary)
		if !isLog || lg.Op != core.OpLog {
			return nil, false
		}
		sum = lg.X
		if _, inner, isSum := peelGroupSum(sum); isSum {
			e = inner
		}
	default:
		return nil, false
	}
	ex, isExp := e.(*core.Unary)
	if !isExp || ex.Op != core.OpExp {
		return nil, false
	}
	if t.Op == core.OpSub && t.X != ex.X && !core.Equal(t.X, ex.X) {
		return nil, false
	}
	gs, isSum := matchGroupSum(sum, e)
	if !isSum {
		return nil, false
	}
	z := f.visit(ex.X)
	if z == nil {
		return nil, true
	}
	if z.d.IsZero() {
		return nil, false
	}
	g, b := &f.g, &f.b
	ty := t.Type()
	dz := g.share(z.d)
	if t.Op == core.OpDiv {
		ep := f.atom(b.Unary(core.OpExp, f.atom(z.p)))
		y := f.selfAtom(t, b.Div(ep, gs.primal(b, ep)))
		d := g.scale(y, g.add(dz, g.neg(gs.delta(g.share(g.scale(y, dz)), ty))))
		return &dual{p: y, d: g.share(d)}, true
	}
	za := f.atom(z.p)
	ep := f.atom(b.Unary(core.OpExp, za))
	y := f.selfAtom(t, b.Sub(za, b.Unary(core.OpLog, gs.primal(b, ep))))
	s := f.atom(b.Unary(core.OpExp, y))
	d := g.add(dz, g.neg(gs.delta(g.share(g.scale(s, dz)), ty)))
	return &dual{p: y, d: g.share(d)}, true
}
