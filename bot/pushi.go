package bot

import (
	"fmt"

	"github.com/bulkad/bulkad/core"
)

// pushI returns the normal form of index x ix for a normal x and normal ix (Fig. 10),
// memoised per (x, index list).
func (v *vectorizer) pushI(x core.Term, ix []core.Term) core.Term {
	if len(ix) == 0 {
		// index t [] ~> t
		return x
	}
	key := idxKey{x, v.ixKey(ix)}
	if r, ok := v.idxM[key]; ok {
		return r
	}
	r := v.pushI1(x, ix)
	v.idxM[key] = r
	return r
}

func (v *vectorizer) pushI1(x core.Term, ix []core.Term) core.Term {
	switch a := x.(type) {
	case *core.Var, *core.Lit, *core.Scatter:
		// normal forms: index x ix, index c ix, index (scatter ..) ix
		return idx(a, ix...)

	case *core.Index:
		// index (index t ix1) ix2 ~> index t (ix1 ++ ix2)
		return v.pushI(a.X, append(append([]core.Term{}, a.Ix...), ix...))

	case *core.Let:
		// index (let x = u in t) ix ~> let x = u in index t ix
		// (x renamed first if it is free in ix; binder names are unique, so this is rare)
		for _, e := range ix {
			if v.freeVars(e)[a.Var.Name] {
				nv := v.namer.FreshVar(core.NameStem(a.Var.Name), a.Var.Type())
				body, err := core.Subst(a.Body, map[string]core.Term{a.Var.Name: nv})
				if err != nil {
					panic(err.Error())
				}
				if r, ok := v.ranges[a.Var.Name]; ok {
					v.ranges[nv.Name] = r
				}
				return must(core.NewLet(nv, a.Bound, v.pushI(body, ix)))
			}
		}
		return must(core.NewLet(a.Var, a.Bound, v.pushI(a.Body, ix)))

	case *core.Share:
		// index (share n t) ix ~> index t ix  (share is semantically transparent; the indexed
		// part of t is not what share n names, so it cannot keep the ID)
		return v.pushI(a.Body, ix)

	case *core.Cond:
		// index (cond b u v) [t1..tn] ~> let i1 = t1 .. in cond b (index u [i1..]) (index v [i1..])
		return v.withLets(ix, func(is []core.Term) core.Term {
			return cond(a.C, v.pushI(a.Then, is), v.pushI(a.Else, is))
		})

	case *core.Unary:
		// index (op t) ix ~> op (index t ix)
		// Out of bounds the left side reads 0 and the right side gives op 0; for operations
		// with op 0 ≠ 0 (exp, cos, sigmoid, log, recip, not) the result is guarded unless
		// ix is provably in bounds (see opGuard). Whether op 0 = 0 (exactly +0 for floats: float
		// neg 0 is -0, which atan2, / and recip tell apart) is the op-facts table's KeepsZero.
		if a.Op.Facts().KeepsZero.Has(a.Type().Dtype) {
			return must(core.NewUnary(a.Op, v.pushI(a.X, ix)))
		}
		return v.opGuard(a, ix, func(is []core.Term) core.Term {
			return must(core.NewUnary(a.Op, v.pushI(a.X, is)))
		})
	case *core.Cast:
		// index (cast ρ t) ix ~> cast ρ (index t ix)   (element-wise, like op; cast 0 = 0)
		return must(core.NewCast(a.To, v.pushI(a.X, ix)))
	case *core.Binary:
		// index (op t u) [t1..tn] ~> let i1 = t1 .. in op (index t [i1..]) (index u [i1..])
		// (guarded like unary operations when op 0 0 ≠ 0: /, pow, ==, <=, >=)
		f := func(is []core.Term) core.Term {
			return bin(a.Op, v.pushI(a.X, is), v.pushI(a.Y, is))
		}
		if a.Op.Facts().KeepsZero {
			return v.withLets(ix, f)
		}
		return v.opGuard(a, ix, f)

	case *core.SumOuter:
		// index (sumOuter t) ix ~> sumOuter (index (tr [1..n,0] t) ix)            (Fig. 10)
		//   ~> sumOuter (gather (m::rest) t (\[p]. p :: ix))   (tr and gather rules of Fig. 10)
		// (ix addresses dimensions 1.. of t, of the same sizes, so no bounds check is lost)
		return must(core.NewSumOuter(v.reduceGather(a.X, ix)))
	case *core.ArgmaxOuter:
		// index (argmaxOuter t) ix ~> argmaxOuter (gather (m::rest) t (\[p]. p :: ix))
		// (derived like sumOuter: argmaxOuter also reduces the outer dimension)
		return must(core.NewArgmaxOuter(v.reduceGather(a.X, ix)))

	case *core.FromVector:
		if len(ix) == 1 {
			return idx(a, ix...) // normal form index [..] [v]
		}
		// index [t1..tk] [u1..un] ~> let i2 = u2 .. in index [index t1 [i2..], …, index tk [i2..]] [u1]
		return v.withLets(ix[1:], func(is []core.Term) core.Term {
			es := make([]core.Term, len(a.Elems))
			for k, e := range a.Elems {
				es[k] = v.pushI(e, is)
			}
			return idx(fromVec(es...), ix[0])
		})

	case *core.Replicate:
		// index (replicate k t) (u::ix) ~> index t ix   (guarded unless 0 ≤ u < k is provable)
		ok := v.inBounds(ix[0], a.N)
		return v.guarded(ok, a.X, ix[1:])

	case *core.Transpose:
		// index (tr P t) ix ~> index (gather sh t (\is. P-permuted is)) ix   (Fig. 10; see pushTranspose)
		return v.pushTranspose(a, ix)

	case *core.Reshape:
		// index (reshape sh t) ix ~> index (gather sh t (\is. fromLinearIdx (shape t) (toLinearIdx sh is))) ix
		// (Fig. 10, with lets for the components; see pushReshape)
		return v.withLets(ix, func(is []core.Term) core.Term { return v.pushReshape(a, is) })

	case *core.Gather:
		// index (gather (k::sh) t (\(i::is). ix)) (u::ix') ~> index (gather sh t (\is. let i = u in ix)) ix'
		// index (gather [] t (\[]. ix)) ix' ~> index (index t ix) ix'   (Fig. 10; see pushGather)
		n := len(a.Fn.Vars)
		l := min(len(ix), n)
		return v.withLets(ix[:l], func(is []core.Term) core.Term {
			return v.pushGather(a, append(is, ix[l:]...))
		})

	case *core.Iota:
		// index (iota n) [u] ~> cond (0 ≤ u < n) u 0
		// (iota n = build1 n (\i. i), whose element at u is u; out of bounds reads 0)
		return v.withLets(ix, func(is []core.Term) core.Term {
			ok := v.inBounds(is[0], a.N)
			if ok == nil {
				return is[0]
			}
			return cond(ok, is[0], v.zeroI)
		})

	case *core.MatMul:
		if r := len(a.Type().Shape); r > 2 {
			// batched: index (matmul x y) (u::ix) ~> index (matmul (index x [u]) (index y [u])) ix
			// (u picks one batch position of both operands; out of bounds both read zeros,
			// whose product is the zero matrix the left side reads, with no 0 · Inf)
			return v.withLets(ix[:1], func(is []core.Term) core.Term {
				m := must(core.NewMatMul(v.pushI(a.X, is), v.pushI(a.Y, is)))
				return v.pushI(m, ix[1:])
			})
		}
		// index (matmul x y) [u]    ~> sumOuter (tr [1,0] (replicate b (index x [u])) * y)
		// index (matmul x y) [u, w] ~> sumOuter (index x [u] * index (tr [1,0] y) [w])
		// (row u of x y is Σ_c x[u,c] · y[c,:]). An out-of-bounds u or w gives a zero row or
		// column, but 0 · y[c,j] is NaN where y is infinite or NaN, whereas the left side
		// reads 0: guarded like exp (opGuard) unless u and w are provably in bounds.
		return v.opGuard(a, ix, func(is []core.Term) core.Term {
			xr := v.pushI(a.X, is[:1])
			if len(is) == 1 {
				b := a.Y.Type().Shape[1]
				return must(core.NewSumOuter(bin(core.OpMul, tr([]int{1, 0}, rep(b, xr)), a.Y)))
			}
			yc := v.pushI(tr([]int{1, 0}, a.Y), is[1:2])
			return must(core.NewSumOuter(bin(core.OpMul, xr, yc)))
		})
	}
	panic(fmt.Sprintf("bot: index of %T cannot be normalised", x))
}

// reduceGather returns gather (m::rest) t (\[p]. p :: ix) for t : [m] ++ …
func (v *vectorizer) reduceGather(t core.Term, ix []core.Term) core.Term {
	ts := t.Type().Shape
	p := v.namer.FreshVar("p", core.Scalar(core.Int64))
	v.setRange(p.Name, 0, int64(ts[0])-1)
	sh := append(core.Shape{ts[0]}, ts[1+len(ix):]...)
	return gather(sh, t, []*core.Var{p}, append([]core.Term{p}, ix...))
}

// withLets binds the non-trivial components of ix to fresh variables (Fig. 10's
// let i1 = t1 in …; variables and literals are used as they are) and calls f with the
// resulting trivial index list.
func (v *vectorizer) withLets(ix []core.Term, f func([]core.Term) core.Term) core.Term {
	is := make([]core.Term, len(ix))
	type bind struct {
		x *core.Var
		e core.Term
	}
	var binds []bind
	for k, e := range ix {
		if isTrivial(e) {
			is[k] = e
			continue
		}
		nv := v.namer.FreshVar("ix", core.Scalar(core.Int64))
		if lo, hi, ok := v.rangeOf(e); ok {
			v.setRange(nv.Name, lo, hi)
		}
		is[k] = nv
		binds = append(binds, bind{nv, e})
	}
	body := f(is)
	for k := len(binds) - 1; k >= 0; k-- {
		body = must(core.NewLet(binds[k].x, binds[k].e, body))
	}
	return body
}

// inBounds returns a bool term testing 0 ≤ u < n, or nil if that is provable.
func (v *vectorizer) inBounds(u core.Term, n int) core.Term {
	lo, hi, ok := v.rangeOf(u)
	var c core.Term
	if !ok || lo < 0 {
		c = bin(core.OpLe, v.zeroI, u)
	}
	if !ok || hi >= int64(n) {
		c2 := bin(core.OpLt, u, core.ScalarI(int64(n)))
		if c == nil {
			c = c2
		} else {
			c = bin(core.OpAnd, c, c2)
		}
	}
	return c
}

func and(a, b core.Term) core.Term {
	switch {
	case a == nil:
		return b
	case b == nil:
		return a
	}
	return bin(core.OpAnd, a, b)
}

// guarded returns index t ix, but 0 when ok (if not nil) is false: the first index
// component e becomes cond ok e (-1), which reads 0 out of bounds; with no component left,
// the result is index [t] [cond ok 0 (-1)].
func (v *vectorizer) guarded(ok core.Term, t core.Term, ix []core.Term) core.Term {
	if ok == nil {
		return v.pushI(t, ix)
	}
	if len(ix) > 0 {
		p := append([]core.Term{cond(ok, ix[0], v.minusOneI)}, ix[1:]...)
		return v.pushI(t, p)
	}
	return idx(fromVec(t), cond(ok, v.zeroI, v.minusOneI))
}

// pushTranspose: index (tr P t) ix ~> index (gather sh t (\is. P-permuted is)) ix (Fig. 10),
// followed by the gather rules: with n = len ix ≥ m = len P this is index t ix' where
// ix'[P[p]] = ix[p]; otherwise a gather over the remaining m-n permuted dimensions. Every
// component still addresses a dimension of t of the same size, so no bounds check is lost.
func (v *vectorizer) pushTranspose(a *core.Transpose, ix []core.Term) core.Term {
	m, n := len(a.Perm), len(ix)
	if n >= m {
		t := make([]core.Term, n)
		for p := 0; p < m; p++ {
			t[a.Perm[p]] = ix[p]
		}
		copy(t[m:], ix[m:])
		return v.pushI(a.X, t)
	}
	tsh := a.Type().Shape
	js := make([]*core.Var, m-n)
	w := make([]core.Term, m)
	for p := 0; p < m; p++ {
		if p < n {
			w[a.Perm[p]] = ix[p]
			continue
		}
		j := v.namer.FreshVar("j", core.Scalar(core.Int64))
		v.setRange(j.Name, 0, int64(tsh[p])-1)
		js[p-n] = j
		w[a.Perm[p]] = j
	}
	return gather(tsh[n:], a.X, js, w)
}

// pushReshape: index (reshape sh t) is ~> index (gather sh t (\js. fromLinearIdx (shape t)
// (toLinearIdx sh js))) is (Fig. 10), then the gather rules. The linearisation maps an
// out-of-bounds multi-index to a valid position, so a guard is added unless every component
// is provably in bounds. is is trivial (variables and literals).
func (v *vectorizer) pushReshape(a *core.Reshape, is []core.Term) core.Term {
	sh := a.Shape
	xs := a.X.Type().Shape
	l := len(is)
	var ok core.Term
	for p, u := range is {
		ok = and(ok, v.inBounds(u, sh[p]))
	}
	st := sh.Strides()
	all := append([]core.Term{}, is...)
	var js []*core.Var
	for p := l; p < len(sh); p++ {
		j := v.namer.FreshVar("j", core.Scalar(core.Int64))
		v.setRange(j.Name, 0, int64(sh[p])-1)
		js = append(js, j)
		all = append(all, j)
	}
	var lin core.Term = v.zeroI
	for p, u := range all {
		if sh[p] == 1 {
			continue
		}
		lin = iAdd(lin, iMul(u, int64(st[p])))
	}
	var bindLin *core.Var
	if l == len(sh) && len(xs) > 1 && !isTrivial(lin) {
		bindLin = v.namer.FreshVar("lin", core.Scalar(core.Int64))
		if lo, hi, ok := v.rangeOf(lin); ok {
			v.setRange(bindLin.Name, lo, hi)
		}
	}
	linUse := lin
	if bindLin != nil {
		linUse = bindLin
	}
	coords := fromLinear(linUse, xs)
	var r core.Term
	if l == len(sh) {
		r = v.guarded(ok, a.X, coords)
	} else {
		if ok != nil && len(coords) > 0 {
			coords[0] = cond(ok, coords[0], v.minusOneI)
			ok = nil
		}
		r = gather(sh[l:], a.X, js, coords)
		if ok != nil {
			r = idx(fromVec(r), cond(ok, v.zeroI, v.minusOneI))
		}
	}
	if bindLin != nil {
		r = must(core.NewLet(bindLin, lin, r))
	}
	return r
}

// fromLinear returns the multi-index of linear position lin in shape xs:
// [quot lin s0, rem (quot lin s1) d1, …] with s the row-major strides.
func fromLinear(lin core.Term, xs core.Shape) []core.Term {
	st := xs.Strides()
	out := make([]core.Term, len(xs))
	for q := range xs {
		if xs[q] == 1 {
			out[q] = core.ScalarI(0)
			continue
		}
		e := lin
		if st[q] != 1 {
			e = bin(core.OpQuot, e, core.ScalarI(int64(st[q])))
		}
		if q > 0 {
			e = bin(core.OpRem, e, core.ScalarI(int64(xs[q])))
		}
		out[q] = e
	}
	return out
}

// pushGather: index (gather (k::sh) t (\(i::is). ix)) (u::ix') ~> index (gather sh t (\is. let i = u in ix)) ix'
// and index (gather [] t (\[]. ix)) ix' ~> index (index t ix) ix' (Fig. 10), applied for all
// given components at once. The substituted components are trivial, so let i = u is a
// substitution. The gather's domain check on u is lost, hence a guard unless provable.
func (v *vectorizer) pushGather(a *core.Gather, ix []core.Term) core.Term {
	n := len(a.Fn.Vars)
	l := min(len(ix), n)
	sub := map[string]core.Term{}
	var ok core.Term
	for p := 0; p < l; p++ {
		sub[a.Fn.Vars[p].Name] = ix[p]
		ok = and(ok, v.inBounds(ix[p], a.Shape[p]))
	}
	es := make([]core.Term, len(a.Fn.Out))
	for k, e := range a.Fn.Out {
		r, err := core.Subst(e, sub)
		if err != nil {
			panic(err.Error())
		}
		es[k] = r
	}
	if len(ix) >= n {
		return v.guarded(ok, a.X, append(es, ix[n:]...))
	}
	if ok != nil && len(es) > 0 {
		es[0] = cond(ok, es[0], v.minusOneI)
		ok = nil
	}
	r := gather(a.Shape[l:], a.X, a.Fn.Vars[l:], es)
	if ok != nil {
		r = idx(fromVec(r), cond(ok, v.zeroI, v.minusOneI))
	}
	return r
}

// opGuard pushes index into an element-wise operation f whose value at 0 is not 0: when
// the components of ix are not provably within the shape of x, the result becomes
// index [f is] [cond ok 0 (-1)] (0 when some component is out of bounds, as index x ix).
func (v *vectorizer) opGuard(x core.Term, ix []core.Term, f func([]core.Term) core.Term) core.Term {
	sh := x.Type().Shape
	return v.withLets(ix, func(is []core.Term) core.Term {
		var ok core.Term
		for p, u := range is {
			ok = and(ok, v.inBounds(u, sh[p]))
		}
		r := f(is)
		if ok == nil {
			return r
		}
		return idx(fromVec(r), cond(ok, v.zeroI, v.minusOneI))
	})
}
