package core

// local applies one simplification rule at the root of t (whose children are simplified)
// and returns the result, or t itself when no rule applies.
func (s *simplifier) local(t Term) Term {
	switch x := t.(type) {
	case *Gather:
		return s.gatherRules(x)
	case *Index:
		return s.indexRules(x)
	case *Transpose:
		// tr P x, P the identity → x
		if isIdentityPerm(x.Perm) {
			return x.X
		}
		// tr P (tr Q y) → tr R y with R[p] = Q[P[p]] (both extended by the identity):
		// (tr P (tr Q y)) dim p = (tr Q y) dim P[p] = y dim Q[P[p]]
		if in, ok := x.X.(*Transpose); ok {
			n := max(len(x.Perm), len(in.Perm))
			P, Q := extendPerm(x.Perm, n), extendPerm(in.Perm, n)
			R := make([]int, n)
			for p := range R {
				R[p] = Q[P[p]]
			}
			return mk(NewTranspose(R, in.X))
		}
	case *Reshape:
		// reshape sh x with sh = shape x → x
		if x.Shape.Equal(x.X.Type().Shape) {
			return x.X
		}
		// reshape sh (reshape sh' y) → reshape sh y (row-major order is unchanged)
		if in, ok := x.X.(*Reshape); ok {
			return mk(NewReshape(x.Shape, in.X))
		}
	case *SumOuter:
		return s.sumRules(x)
	case *Binary:
		return s.binaryRules(x)
	case *Unary:
		// neg (neg y) → y
		if in, ok := x.X.(*Unary); ok && x.Op == OpNeg && in.Op == OpNeg {
			return in.X
		}
		if in, ok := x.X.(*Unary); ok && x.Op == OpNot && in.Op == OpNot {
			return in.X
		}
		if v, ok := scalarInt(x.X); ok {
			switch x.Op {
			case OpNeg:
				return ScalarI(-v)
			case OpAbs:
				if v < 0 {
					v = -v
				}
				return ScalarI(v)
			}
		}
		if v, ok := scalarBool(x.X); ok && x.Op == OpNot {
			return ScalarB(!v)
		}
	case *Cond:
		// cond true u v → u; cond false u v → v (cond is strict, but u and v cannot fail)
		if b, ok := scalarBool(x.C); ok {
			if b {
				return x.Then
			}
			return x.Else
		}
		// cond c u u → u
		if x.Then == x.Else {
			return x.Then
		}
	case *Replicate:
		// replicate of a scalar literal → a literal, when it has at most 4 elements
		if l, ok := x.X.(*Lit); ok && l.Type().IsScalar() && x.N <= 4 {
			return constLit(x.Type(), l)
		}
		if in, ok := x.X.(*Lit); ok && x.Type().Shape.Size() <= 4 {
			if v, ok := constValue(in); ok {
				return constOf(x.Type(), v)
			}
		}
	}
	return t
}

func constLit(t Type, l *Lit) Term {
	n := t.Shape.Size()
	switch {
	case len(l.F) > 0:
		vals := make([]float64, n)
		for i := range vals {
			vals[i] = l.F[0]
		}
		return mk(NewLitF(t, vals))
	case len(l.I) > 0:
		vals := make([]int64, n)
		for i := range vals {
			vals[i] = l.I[0]
		}
		return mk(NewLitI(t.Shape, vals))
	default:
		vals := make([]bool, n)
		for i := range vals {
			vals[i] = l.B[0]
		}
		return mk(NewLitB(t.Shape, vals))
	}
}

func isIdentityPerm(p []int) bool {
	for i, v := range p {
		if i != v {
			return false
		}
	}
	return true
}

func extendPerm(p []int, n int) []int {
	out := make([]int, n)
	copy(out, p)
	for i := len(p); i < n; i++ {
		out[i] = i
	}
	return out
}

// ---- gather ----

func (s *simplifier) gatherRules(g *Gather) Term {
	n, m := len(g.Fn.Vars), len(g.Fn.Out)
	xs := g.X.Type().Shape
	// identity: gather sh x (\[j1..jn] -> [j1..jn]) with sh = shape x → x
	if n == m && g.Shape.Equal(xs) {
		id := true
		for k, e := range g.Fn.Out {
			if v, ok := e.(*Var); !ok || v.Name != g.Fn.Vars[k].Name {
				id = false
				break
			}
		}
		if id {
			return g.X
		}
	}
	// permutation: gather sh x (\[j0..jn-1] -> [j_σ0..j_σ(n-1)]) reading exactly the whole of
	// x's first n dimensions → tr σ⁻¹ x  (result[r] = x[s] with s[k] = r[σk]; tr P has
	// s[P[p]] = r[p], so P[σk] = k)
	if n == m && n > 1 {
		if sigma, ok := varPerm(g.Fn); ok {
			P := make([]int, n)
			for k, sk := range sigma {
				P[sk] = k
			}
			good := true
			for p := 0; p < n; p++ {
				if g.Shape[p] != xs[P[p]] {
					good = false
				}
			}
			if good {
				return mk(NewTranspose(P, g.X))
			}
		}
	}
	// no index outputs: gather (d1..dn ++ rest) x (\js -> []) → replicate d1 (… (replicate dn x))
	if m == 0 {
		var r Term = g.X
		for k := n - 1; k >= 0; k-- {
			r = mk(NewReplicate(g.Shape[k], r))
		}
		return r
	}
	switch in := g.X.(type) {
	case *Replicate:
		// gather sh (replicate k y) (\js -> e0 :: es) → gather sh y (\js -> es), reading 0
		// when e0 ∉ [0,k) (guard on the first remaining output, or no rewrite without one)
		ok := s.inBounds(g.Fn.Out[0], in.N)
		es := append([]Term{}, g.Fn.Out[1:]...)
		if ok != nil {
			if len(es) == 0 {
				return g
			}
			es[0] = mk(NewCond(ok, es[0], ScalarI(-1)))
		}
		return mk(NewGather(g.Shape, in.X, mkFn(g.Fn.Vars, es)))
	case *Transpose:
		// gather sh (tr P y) (\js -> es), len es ≥ len P → gather sh y (\js -> es') with
		// es'[P[p]] = es[p] (every component still addresses a dimension of equal size)
		if m >= len(in.Perm) {
			es := append([]Term{}, g.Fn.Out...)
			for p := range in.Perm {
				es[in.Perm[p]] = g.Fn.Out[p]
			}
			return mk(NewGather(g.Shape, in.X, mkFn(g.Fn.Vars, es)))
		}
	case *Gather:
		if r := s.gatherGather(g, in); r != nil {
			return r
		}
	}
	return g
}

// varPerm reports whether the outputs of f are its variables in some order: Out[k] =
// Vars[σ[k]].
func varPerm(f *IndexFn) ([]int, bool) {
	pos := map[string]int{}
	for k, v := range f.Vars {
		pos[v.Name] = k
	}
	sigma := make([]int, len(f.Out))
	used := make([]bool, len(f.Vars))
	for k, e := range f.Out {
		v, ok := e.(*Var)
		if !ok {
			return nil, false
		}
		j, ok := pos[v.Name]
		if !ok || used[j] {
			return nil, false
		}
		used[j] = true
		sigma[k] = j
	}
	return sigma, true
}

// gatherGather composes gather sh (gather sh2 y (\ks -> es)) (\js -> fs): the outer reads
// the inner at fs ++ r, the inner reads y at es[ks := fs] (m = n2), es[ks := fs[:n2]] ++
// fs[n2:] (m > n2), or, for m < n2, the remaining inner variables become variables of the
// outer function. Out-of-range fs read 0 from the inner gather; the composition keeps that
// with a guard on its first output.
func (s *simplifier) gatherGather(g, in *Gather) Term {
	n2, m2 := len(in.Fn.Vars), len(in.Fn.Out)
	m := len(g.Fn.Out)
	if m2 == 0 {
		return nil
	}
	// capture check: the outer variables must not clash with free variables of es, nor
	// with the inner variables that stay bound (m < n2).
	outer := map[string]bool{}
	for _, v := range g.Fn.Vars {
		outer[v.Name] = true
	}
	innerVars := map[string]bool{}
	for _, v := range in.Fn.Vars {
		innerVars[v.Name] = true
	}
	for _, e := range in.Fn.Out {
		for _, v := range FreeVars(e) {
			if outer[v.Name] && !innerVars[v.Name] {
				return nil
			}
		}
	}
	l := min(m, n2)
	sub := map[string]Term{}
	var ok Term
	for p := 0; p < l; p++ {
		sub[in.Fn.Vars[p].Name] = g.Fn.Out[p]
		ok = andT(ok, s.inBounds(g.Fn.Out[p], in.Shape[p]))
	}
	// The inner variables that stay bound (p ≥ l) must not capture a free variable of the
	// substituted outer outputs, nor clash with the outer variables: such ones are renamed.
	vars := append([]*Var{}, g.Fn.Vars...)
	vars = append(vars, s.renameKept(in.Fn.Vars[l:], g.Fn.Out[:l], outer, sub)...)
	es := make([]Term, 0, m2+m)
	for _, e := range in.Fn.Out {
		r, err := Subst(e, sub)
		if err != nil {
			panic(err.Error())
		}
		es = append(es, r)
	}
	if m > n2 {
		es = append(es, g.Fn.Out[n2:]...)
	}
	if ok != nil {
		es[0] = mk(NewCond(ok, es[0], ScalarI(-1)))
	}
	return mk(NewGather(g.Shape, in.X, mkFn(vars, es)))
}

// ---- index ----

func (s *simplifier) indexRules(x *Index) Term {
	if len(x.Ix) == 0 {
		return x.X // index t [] → t
	}
	switch a := x.X.(type) {
	case *Index:
		// index (index t ix1) ix2 → index t (ix1 ++ ix2)
		return mk(NewIndex(a.X, append(append([]Term{}, a.Ix...), x.Ix...)))
	case *Iota:
		// index (iota n) [u] → u when 0 ≤ u < n is provable
		if s.inBounds(x.Ix[0], a.N) == nil {
			return x.Ix[0]
		}
	case *Replicate:
		// index (replicate k t) (u::ix) → index t ix when 0 ≤ u < k is provable
		if s.inBounds(x.Ix[0], a.N) == nil {
			return mk(NewIndex(a.X, x.Ix[1:]))
		}
	case *Lit:
		// index of a literal at literal indices → the literal subarray (small literals)
		if x.Type().Shape.Size() <= 16 {
			ix := make([]int64, len(x.Ix))
			for k, e := range x.Ix {
				v, ok := scalarInt(e)
				if !ok {
					return x
				}
				ix[k] = v
			}
			return litSlice(a, ix, x.Type())
		}
	case *Gather:
		return s.indexGather(x, a)
	}
	return x
}

// litSlice returns the subarray of l at the (prefix) index ix, or zeros out of bounds.
func litSlice(l *Lit, ix []int64, t Type) Term {
	sh := l.Type().Shape
	st := sh.Strides()
	off := 0
	in := true
	for k, e := range ix {
		if e < 0 || e >= int64(sh[k]) {
			in = false
			break
		}
		off += int(e) * st[k]
	}
	n := t.Shape.Size()
	if !in {
		return constOf(t, 0)
	}
	switch {
	case l.F != nil:
		return mk(NewLitF(t, l.F[off:off+n]))
	case l.I != nil:
		return mk(NewLitI(t.Shape, l.I[off:off+n]))
	default:
		return mk(NewLitB(t.Shape, l.B[off:off+n]))
	}
}

// indexGather: index (gather sh y (\js -> es)) ix → index y (es[js := ix] ++ ix[n:]) when
// len ix ≥ n, or gather sh[l:] y (\js[l:] -> es[js[:l] := ix]) otherwise; the gather's
// domain check on ix is kept by a guard on the first output unless provable. Non-trivial
// components used more than once are bound by lets first.
func (s *simplifier) indexGather(x *Index, a *Gather) Term {
	n := len(a.Fn.Vars)
	l := min(len(x.Ix), n)
	if len(a.Fn.Out) == 0 {
		return x
	}
	// bind non-trivial components to fresh lets
	type bind struct {
		v *Var
		e Term
	}
	var binds []bind
	ix := append([]Term{}, x.Ix...)
	for p := 0; p < l; p++ {
		if !isTrivialT(ix[p]) {
			v := s.namer.FreshVar("ix", Scalar(Int64))
			binds = append(binds, bind{v, ix[p]})
			ix[p] = v
		}
	}
	sub := map[string]Term{}
	var ok Term
	// the variables that stay bound (partial index) must not capture a free variable of ix
	kept := s.renameKept(a.Fn.Vars[l:], ix[:l], nil, sub)
	for p := 0; p < l; p++ {
		sub[a.Fn.Vars[p].Name] = ix[p]
		if len(binds) == 0 {
			ok = andT(ok, s.inBounds(ix[p], a.Shape[p]))
		} else {
			ok = andT(ok, s.inBoundsNoRange(ix[p], x.Ix[p], a.Shape[p]))
		}
	}
	es := make([]Term, len(a.Fn.Out))
	for k, e := range a.Fn.Out {
		r, err := Subst(e, sub)
		if err != nil {
			panic(err.Error())
		}
		es[k] = r
	}
	if ok != nil {
		es[0] = mk(NewCond(ok, es[0], ScalarI(-1)))
	}
	var r Term
	if len(x.Ix) >= n {
		r = mk(NewIndex(a.X, append(es, x.Ix[n:]...)))
	} else {
		r = mk(NewGather(a.Shape[l:], a.X, mkFn(kept, es)))
	}
	for k := len(binds) - 1; k >= 0; k-- {
		r = mk(NewLet(binds[k].v, binds[k].e, r))
	}
	return r
}

// renameKept returns the index-function variables vs that stay bound after a substitution
// of terms into the function's outputs: a variable whose name is free in one of terms or is
// in avoid is replaced by a fresh one (recorded in sub), so that it captures nothing.
func (s *simplifier) renameKept(vs []*Var, terms []Term, avoid map[string]bool, sub map[string]Term) []*Var {
	var free map[string]bool
	return s.namer.FreshFor(vs, func(name string) bool {
		if free == nil {
			free = map[string]bool{}
			for _, t := range terms {
				for _, fv := range FreeVars(t) {
					free[fv.Name] = true
				}
			}
		}
		return free[name] || avoid[name]
	}, "j", sub)
}

// inBoundsNoRange tests v (a fresh variable bound to e) against n, using e's range.
func (s *simplifier) inBoundsNoRange(v, e Term, n int) Term {
	lo, hi, ok := s.rangeOf(e)
	var c Term
	if !ok || lo < 0 {
		c = mk(NewBinary(OpLe, ScalarI(0), v))
	}
	if !ok || hi >= int64(n) {
		c = andT(c, mk(NewBinary(OpLt, v, ScalarI(int64(n)))))
	}
	return c
}

// ---- sums and contraction ----

func (s *simplifier) sumRules(x *SumOuter) Term {
	if r, ok := x.X.(*Replicate); ok {
		switch {
		case r.N == 1:
			return r.X // sumOuter (replicate 1 y) → y
		case r.N == 0:
			return constOf(x.Type(), 0) // an empty sum is 0
		}
		// sumOuter (replicate n y) → y * n
		return mk(NewBinary(OpMul, r.X, constOf(x.Type(), float64(r.N))))
	}
	if v, ok := constValue(x.X); ok && x.X.Type().Dtype != Bool {
		// sumOuter of a constant array c of outer size n → n·c
		return constOf(x.Type(), v*float64(x.X.Type().Shape[0]))
	}
	if r := contract(x); r != nil {
		return r
	}
	return x
}

// bcast describes a rank-3 term z with z[a0,a1,a2] = M[a_ax0, a_ax1] for a matrix M.
type bcast struct {
	m  Term
	ax [2]int
}

// asBroadcast recognises rank-3 broadcasts of matrices: replicate k M (axes 1,2);
// tr Q u for a broadcast u; gather [d0,d1,d2] M (\[a0,a1,a2] -> [a_p, a_q]) whose domain on
// those axes is M's shape (no out-of-bounds reads).
func asBroadcast(t Term) (bcast, bool) {
	if len(t.Type().Shape) != 3 {
		return bcast{}, false
	}
	switch x := t.(type) {
	case *Replicate:
		if len(x.X.Type().Shape) == 2 {
			return bcast{x.X, [2]int{1, 2}}, true
		}
	case *Transpose:
		u, ok := asBroadcast(x.X)
		if !ok {
			return bcast{}, false
		}
		Q := extendPerm(x.Perm, 3)
		inv := make([]int, 3)
		for p, q := range Q {
			inv[q] = p
		}
		return bcast{u.m, [2]int{inv[u.ax[0]], inv[u.ax[1]]}}, true
	case *Gather:
		if len(x.Fn.Vars) != 3 || len(x.Fn.Out) != 2 || len(x.X.Type().Shape) != 2 {
			return bcast{}, false
		}
		var ax [2]int
		for k, e := range x.Fn.Out {
			v, ok := e.(*Var)
			if !ok {
				return bcast{}, false
			}
			found := -1
			for j, fv := range x.Fn.Vars {
				if fv.Name == v.Name {
					found = j
				}
			}
			if found < 0 || x.Shape[found] != x.X.Type().Shape[k] {
				return bcast{}, false
			}
			ax[k] = found
		}
		if ax[0] == ax[1] {
			return bcast{}, false
		}
		return bcast{x.X, ax}, true
	}
	return bcast{}, false
}

// contract rewrites sumOuter (tr P (X * Y)) (P optional) for rank-3 broadcasts X, Y of
// matrices into one matmul: with summed axis c = P[0] and result axes r0 = P[1], r1 = P[2],
// if X places its matrix on {r0, c} and Y on {c, r1} (or the other way round), then
// result[i,j] = Σ_c A[i,c] B[c,j] = matmul A B, where A and B are the matrices, transposed
// when their axes come in the other order.
func contract(x *SumOuter) Term {
	z := x.X
	if len(z.Type().Shape) != 3 || !z.Type().Dtype.IsFloat() {
		return nil
	}
	P := []int{0, 1, 2}
	if t, ok := z.(*Transpose); ok {
		P = extendPerm(t.Perm, 3)
		z = t.X
	}
	mul, ok := z.(*Binary)
	if !ok || mul.Op != OpMul {
		return nil
	}
	bx, ok1 := asBroadcast(mul.X)
	by, ok2 := asBroadcast(mul.Y)
	if !ok1 || !ok2 {
		return nil
	}
	c, r0, r1 := P[0], P[1], P[2]
	other := func(b bcast) int {
		switch c {
		case b.ax[0]:
			return b.ax[1]
		case b.ax[1]:
			return b.ax[0]
		}
		return -1
	}
	ox, oy := other(bx), other(by)
	if ox < 0 || oy < 0 {
		return nil
	}
	var A, B bcast
	switch {
	case ox == r0 && oy == r1:
		A, B = bx, by
	case ox == r1 && oy == r0:
		A, B = by, bx
	default:
		return nil
	}
	am := A.m
	if A.ax != [2]int{r0, c} {
		am = mk(NewTranspose([]int{1, 0}, am))
	}
	bm := B.m
	if B.ax != [2]int{c, r1} {
		bm = mk(NewTranspose([]int{1, 0}, bm))
	}
	return mk(NewMatMul(am, bm))
}

// ---- arithmetic ----

func (s *simplifier) binaryRules(x *Binary) Term {
	// integer and bool constant folding
	if a, ok := scalarInt(x.X); ok {
		if b, ok := scalarInt(x.Y); ok {
			return foldInt(x.Op, a, b)
		}
	}
	if a, ok := scalarBool(x.X); ok {
		if b, ok := scalarBool(x.Y); ok {
			if f := x.Op.Facts().Bool; f != nil {
				return ScalarB(f(a, b))
			}
		}
	}
	if x.Type().Dtype == Bool && (x.Op == OpAnd || x.Op == OpOr) {
		// true && y → y, false && y → false, false || y → y, true || y → true (scalars)
		for _, pr := range [2][2]Term{{x.X, x.Y}, {x.Y, x.X}} {
			if b, ok := scalarBool(pr[0]); ok {
				if b == (x.Op == OpAnd) {
					return pr[1]
				}
				return ScalarB(b)
			}
		}
	}
	if !x.Type().Dtype.IsNumeric() || x.Op.IsComparison() {
		return x
	}
	cx, okx := constValue(x.X)
	cy, oky := constValue(x.Y)
	switch x.Op {
	case OpAdd:
		if oky && cy == 0 {
			return x.X // x + 0 → x
		}
		if okx && cx == 0 {
			return x.Y // 0 + y → y
		}
	case OpSub:
		if oky && cy == 0 {
			return x.X // x - 0 → x
		}
	case OpMul:
		if oky && cy == 1 {
			return x.X // x * 1 → x
		}
		if okx && cx == 1 {
			return x.Y // 1 * y → y
		}
		if s.cfg.finite || x.Type().Dtype == Int64 {
			// 0 * y → 0 (integers always; floats only with AssumeFinite, since 0 * Inf = NaN)
			if okx && cx == 0 {
				return x.X
			}
			if oky && cy == 0 {
				return x.Y
			}
		}
	case OpDiv:
		if oky && cy == 1 {
			return x.X // x / 1 → x
		}
	}
	return x
}

// foldInt evaluates an i64 scalar operation on literals (the evaluator's semantics: the
// op-facts table's Int and IntCmp).
func foldInt(op BinOp, a, b int64) Term {
	f := op.Facts()
	if f.Int != nil {
		return ScalarI(f.Int(a, b))
	}
	if f.IntCmp != nil {
		return ScalarB(f.IntCmp(a, b))
	}
	return nil
}
