package core

import (
	"github.com/pkg/errors"
)

// SimplifyOption configures Simplify and SimplifyTerm.
type SimplifyOption func(*simplifyConfig)

type simplifyConfig struct {
	keep      map[string]bool
	finite    bool
	maxRounds int
}

// KeepLets protects the lets binding the given names: while their variable is used they are
// not inlined, renamed or removed (a let whose variable is no longer used is still removed).
// The raise stage binds such lets to existing Gorgonia nodes. The names should be bound once.
func KeepLets(names ...string) SimplifyOption {
	return func(c *simplifyConfig) {
		for _, n := range names {
			c.keep[n] = true
		}
	}
}

// AssumeFinite lets the simplifier assume that no value is NaN or infinite, which enables
// 0 * x → 0 and x * 0 → 0 (without it, 0 * x is kept, because 0 * Inf and 0 * NaN are NaN).
// Gradient programs multiply by literal zero arrays often; use this option there when a
// non-finite forward value makes the gradient meaningless anyway.
func AssumeFinite() SimplifyOption {
	return func(c *simplifyConfig) { c.finite = true }
}

// MaxRounds bounds the number of rewrite rounds (default 16); each round is linear in the
// size of the term.
func MaxRounds(n int) SimplifyOption {
	return func(c *simplifyConfig) {
		if n > 0 {
			c.maxRounds = n
		}
	}
}

// Simplify rewrites a program to a simpler one with the same meaning. It is checked first
// (ill-typed programs are rejected before any rewriting). Rules (each semantics-preserving,
// see simplify_rules.go for the exact conditions):
//
//   - gather: identity index function → the operand; gather of gather → one gather
//     (composed index functions); gather of replicate, of transpose; gather that is a
//     permutation → tr; gather without index outputs → replicate;
//   - index: of gather (substituting the index into the index function), of index (merged),
//     of replicate and iota (when provably in bounds), index x [] → x;
//   - tr of tr → one tr; identity tr → operand; reshape of reshape → one reshape; identity
//     reshape → operand;
//   - sumOuter (replicate n x) → x * n (x for n = 1, zeros for n = 0);
//   - x + 0, 0 + x, x - 0, x * 1, 1 * x, x / 1 → x; neg (neg x) → x; 0 * x → 0 for i64,
//     and for floats only with AssumeFinite; x + 0 → x (and 0 + x) is exact up to the sign
//     of zero: for x = -0 it keeps -0 where x + 0 is +0 (only atan2, / and recip can tell);
//   - constant folding of i64 and bool scalar arithmetic, comparisons and logic, cond with a
//     literal condition or equal branches, replicate of a scalar literal into a literal of
//     at most 4 elements;
//   - contraction: sumOuter (tr P (X * Y)) where X and Y are rank-3 broadcasts of matrices
//     (replicate, tr, or gathers that place a matrix on two of three axes) sharing the summed
//     axis → matmul A B (with tr [1,0] where needed);
//   - lets: dead lets removed; lets bound to variables, scalar literals or iota, and lets
//     whose variable is used exactly once and not inside a build1 body or an index function
//     are inlined (KeepLets excepted).
//
// Rewriting repeats to a fixed point or MaxRounds rounds; every round is linear in the number
// of distinct nodes (memoised by node identity).
func Simplify(p *Program, opts ...SimplifyOption) (*Program, error) {
	size, err := checkProgram(p)
	if err != nil {
		return nil, errors.Wrap(err, "core: simplify")
	}
	body, err := simplify(p.Body, p.Params, opts, size)
	if err != nil {
		return nil, err
	}
	q, err := NewProgram(p.Params, body)
	if err != nil {
		return nil, errors.Wrap(err, "core: simplify: internal error, result does not check")
	}
	return q, nil
}

// SimplifyTerm simplifies a term; its free variables are taken as parameters (see Simplify).
func SimplifyTerm(t Term, opts ...SimplifyOption) (Term, error) {
	if t == nil {
		return nil, errors.New("core: simplify: nil term")
	}
	params := FreeVars(t)
	size, err := checkProgram(&Program{Params: params, Body: t})
	if err != nil {
		return nil, errors.Wrap(err, "core: simplify")
	}
	return simplify(t, params, opts, size)
}

// simplify runs the rewrite rounds on t; size guesses its number of distinct nodes (a
// capacity hint).
func simplify(t Term, params []*Var, opts []SimplifyOption, size int) (out Term, err error) {
	cfg := &simplifyConfig{keep: map[string]bool{}, maxRounds: 16}
	for _, o := range opts {
		o(cfg)
	}
	defer func() {
		if r := recover(); r != nil {
			out, err = nil, errors.Errorf("core: simplify: internal error: %v", r)
		}
	}()
	namer := NewNamer(t)
	for _, p := range params {
		namer.AvoidName(p.Name)
	}
	free := map[string]bool{}
	for _, p := range params {
		free[p.Name] = true
	}
	for round := 0; round < cfg.maxRounds; round++ {
		s := &simplifier{cfg: cfg, namer: namer, free: free, root: t, memo: make(map[*node]Term, size)}
		u := s.rewrite(t)
		size = len(s.memo)
		if v, ok := fastInlineSized(cfg, u, free, size); ok {
			u = v
		} else {
			in := newInliner(cfg, namer)
			u = in.run(u)
		}
		if u == t || Equal(u, t) {
			break
		}
		t = u
	}
	return t, nil
}

// simplifier is one bottom-up rewrite round.
type simplifier struct {
	cfg   *simplifyConfig
	namer *Namer
	free  map[string]bool
	memo  map[*node]Term // by node identity (see Term.base)
	// the round's term; ranges of its binder variables (hull over all binders of a name)
	// and letBounds, the bound terms of its i64 scalar lets (whose ranges are computed on
	// demand), are collected from it at the first range query (nil until then)
	root      Term
	ranges    map[string][2]int64
	letBounds map[string][]Term
	inProg    map[string]bool
}

// collectRanges records the ranges of t's binder variables.
func (s *simplifier) collectRanges(t Term) {
	s.ranges = map[string][2]int64{}
	s.letBounds = map[string][]Term{}
	s.inProg = map[string]bool{}
	set := func(name string, lo, hi int64) {
		if r, ok := s.ranges[name]; ok {
			lo, hi = min(lo, r[0]), max(hi, r[1])
		}
		s.ranges[name] = [2]int64{lo, hi}
	}
	PostOrder(t, func(n Term) {
		switch x := n.(type) {
		case *Build1:
			set(x.Var.Name, 0, int64(x.N)-1)
		case *Gather:
			for k, v := range x.Fn.Vars {
				set(v.Name, 0, int64(x.Shape[k])-1)
			}
		case *Scatter:
			xs := x.X.Type().Shape
			for k, v := range x.Fn.Vars {
				set(v.Name, 0, int64(xs[k])-1)
			}
		case *Let:
			if x.Var.Type().Equal(Scalar(Int64)) {
				s.letBounds[x.Var.Name] = append(s.letBounds[x.Var.Name], x.Bound)
			}
		}
	})
}

// varRange is the range callback for IntRange.
func (s *simplifier) varRange(name string) (int64, int64, bool) {
	if s.ranges == nil {
		s.collectRanges(s.root)
	}
	if s.free[name] || s.inProg[name] {
		return 0, 0, false
	}
	r, has := s.ranges[name]
	bounds := s.letBounds[name]
	if len(bounds) > 0 {
		s.inProg[name] = true
		defer delete(s.inProg, name)
		for _, b := range bounds {
			lo, hi, ok := IntRange(b, s.varRange)
			if !ok {
				return 0, 0, false
			}
			if has {
				lo, hi = min(lo, r[0]), max(hi, r[1])
			}
			r, has = [2]int64{lo, hi}, true
		}
	}
	return r[0], r[1], has
}

func (s *simplifier) rangeOf(t Term) (int64, int64, bool) { return IntRange(t, s.varRange) }

// inBounds returns a bool term 0 ≤ u < n, or nil when that is provable.
func (s *simplifier) inBounds(u Term, n int) Term {
	lo, hi, ok := s.rangeOf(u)
	var c Term
	if !ok || lo < 0 {
		c = mk(NewBinary(OpLe, ScalarI(0), u))
	}
	if !ok || hi >= int64(n) {
		c2 := mk(NewBinary(OpLt, u, ScalarI(int64(n))))
		c = andT(c, c2)
	}
	return c
}

func andT(a, b Term) Term {
	switch {
	case a == nil:
		return b
	case b == nil:
		return a
	}
	return mk(NewBinary(OpAnd, a, b))
}

// mk panics on a constructor error (a bug of the simplifier; the caller recovers).
func mk[T Term](t T, err error) Term {
	if err != nil {
		panic(err.Error())
	}
	return t
}

func mkFn(vars []*Var, out []Term) *IndexFn {
	f, err := NewIndexFn(vars, out)
	if err != nil {
		panic(err.Error())
	}
	return f
}

// mapKids rebuilds t with f applied to each of its children (see Children), panicking on a
// Rebuild error like mk.
func mapKids(t Term, f func(Term) Term) Term {
	var kb [4]Term // the children of most terms, without an allocation
	kids := appendChildren(kb[:0], t)
	var nk []Term // allocated at the first changed child (Rebuild may keep it)
	for k, c := range kids {
		r := f(c)
		if nk == nil && r != c {
			nk = make([]Term, len(kids))
			copy(nk, kids[:k])
		}
		if nk != nil {
			nk[k] = r
		}
	}
	if nk == nil {
		return t // every child unchanged (as Rebuild would return)
	}
	r, err := Rebuild(t, nk)
	if err != nil {
		panic(err.Error())
	}
	return r
}

// rewrite simplifies t bottom-up (memoised by node).
func (s *simplifier) rewrite(t Term) Term {
	var key *node // nil for a nil term (a struct literal's missing child), not memoised
	if t != nil {
		key = t.base()
		if r, ok := s.memo[key]; ok {
			return r
		}
	}
	r := mapKids(t, s.rewrite)
	for step := 0; step < 8; step++ {
		n := s.local(r)
		if n == r {
			break
		}
		r = n
	}
	if key != nil {
		s.memo[key] = r
	}
	return r
}

// ---- constants ----

// constValue reports whether t is an array whose elements all equal one number: a literal
// with equal elements (float or i64) or a replicate of such.
func constValue(t Term) (float64, bool) {
	switch x := t.(type) {
	case *Lit:
		switch {
		case len(x.F) > 0:
			v := x.F[0]
			for _, e := range x.F {
				if e != v {
					return 0, false
				}
			}
			return v, v == v
		case len(x.I) > 0:
			v := x.I[0]
			for _, e := range x.I {
				if e != v {
					return 0, false
				}
			}
			return float64(v), true
		}
	case *Replicate:
		return constValue(x.X)
	}
	return 0, false
}

// constOf returns a constant array of type t: a scalar literal, replicated, or a small
// literal.
func constOf(t Type, v float64) Term {
	if t.Shape.Size() <= 4 {
		l, err := Fill(t, v)
		if err != nil {
			panic(err.Error())
		}
		return l
	}
	var x Term
	switch t.Dtype {
	case Int64:
		x = ScalarI(int64(v))
	case Bool:
		x = ScalarB(v != 0)
	default:
		x = ScalarF(t.Dtype, v)
	}
	for k := len(t.Shape) - 1; k >= 0; k-- {
		x = mk(NewReplicate(t.Shape[k], x))
	}
	return x
}

func isTrivialT(t Term) bool {
	switch x := t.(type) {
	case *Var:
		return true
	case *Lit:
		return x.Type().IsScalar()
	}
	return false
}

func scalarInt(t Term) (int64, bool) {
	if l, ok := t.(*Lit); ok && len(l.I) == 1 && l.Type().IsScalar() {
		return l.I[0], true
	}
	return 0, false
}

func scalarBool(t Term) (bool, bool) {
	if l, ok := t.(*Lit); ok && len(l.B) == 1 && l.Type().IsScalar() {
		return l.B[0], true
	}
	return false, false
}
