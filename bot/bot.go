package bot

import (
	"strconv"
	"strings"

	"github.com/bulkad/bulkad/core"
	"github.com/pkg/errors"
)

// Vectorize applies the bulk-operation transform to a program: the result has the same
// parameters and meaning, contains no build1, and is in the normal form of Theorem 5.1 (see
// CheckNormalForm). The input is checked with core.Check first; ill-typed or ill-scoped
// programs are rejected before any rewriting. Names of top-level lets are kept.
func Vectorize(p *core.Program) (*core.Program, error) {
	if err := core.Check(p); err != nil {
		return nil, errors.Wrap(err, "bot: vectorize")
	}
	body, err := vectorize(p.Body, p.Params)
	if err != nil {
		return nil, err
	}
	q, err := core.NewProgram(p.Params, body)
	if err != nil {
		return nil, errors.Wrap(err, "bot: vectorize: internal error, result does not check")
	}
	return q, nil
}

// VectorizeTerm applies the bulk-operation transform to a term whose free variables are
// taken as parameters (see Vectorize).
func VectorizeTerm(t core.Term) (core.Term, error) {
	if t == nil {
		return nil, errors.New("bot: vectorize: nil term")
	}
	params := core.FreeVars(t)
	if err := core.Check(&core.Program{Params: params, Body: t}); err != nil {
		return nil, errors.Wrap(err, "bot: vectorize")
	}
	return vectorize(t, params)
}

func vectorize(t core.Term, params []*core.Var) (out core.Term, err error) {
	defer func() {
		if r := recover(); r != nil {
			out, err = nil, errors.Errorf("bot: vectorize: internal error: %v", r)
		}
	}()
	v := newVectorizer(t, params)
	taken := make([]string, len(params))
	for k, p := range params {
		taken[k] = p.Name
	}
	// every binder name bound by one binder node only and none a parameter's; the lets of
	// the top-level spine keep their names
	u, err := core.Uniquify(t, v.namer, core.UniquifyOptions{AllBinders: true, Taken: taken, KeepSpine: true, StemNames: true})
	if err != nil {
		return nil, errors.Wrap(err, "bot: vectorize")
	}
	return v.norm(u), nil
}

// vectorizer holds the state of one transform: memo tables, fresh names, variable ranges.
type vectorizer struct {
	namer  *core.Namer
	fv     map[core.Term]map[string]bool
	normM  map[core.Term]core.Term
	idxM   map[idxKey]core.Term
	ids    map[core.Term]int
	ranges map[string][2]int64
	// nextShare is larger than every share ID of the input.
	nextShare int
	zeroI     core.Term
	oneI      core.Term
	minusOneI core.Term
}

type idxKey struct {
	x  core.Term
	ix string
}

func newVectorizer(t core.Term, params []*core.Var) *vectorizer {
	v := &vectorizer{
		namer:     core.NewNamer(t),
		fv:        map[core.Term]map[string]bool{},
		normM:     map[core.Term]core.Term{},
		idxM:      map[idxKey]core.Term{},
		ids:       map[core.Term]int{},
		ranges:    map[string][2]int64{},
		zeroI:     core.ScalarI(0),
		oneI:      core.ScalarI(1),
		minusOneI: core.ScalarI(-1),
	}
	for _, p := range params {
		v.namer.AvoidName(p.Name)
	}
	core.PostOrder(t, func(n core.Term) {
		if s, ok := n.(*core.Share); ok && s.ID >= v.nextShare {
			v.nextShare = s.ID + 1
		}
	})
	return v
}

// must records a constructor error; on error it panics with it, which vectorize turns into
// an internal error (constructor failures here are bugs of this package, never user errors,
// because the input was type-checked).
func must[T core.Term](t T, err error) core.Term {
	if err != nil {
		panic(err.Error())
	}
	return t
}

func mustFn(vars []*core.Var, out []core.Term) *core.IndexFn {
	f, err := core.NewIndexFn(vars, out)
	if err != nil {
		panic(err.Error())
	}
	return f
}

// freeVars returns the set of free variable names of t (memoised by node).
func (v *vectorizer) freeVars(t core.Term) map[string]bool {
	if s, ok := v.fv[t]; ok {
		return s
	}
	var s map[string]bool
	if x, ok := t.(*core.Var); ok {
		s = map[string]bool{x.Name: true}
	} else {
		shared := false
		for k, c := range core.Children(t) {
			cs := v.freeVars(c)
			if len(cs) == 0 {
				continue
			}
			bound := core.BoundIn(t, k)
			if s == nil && len(bound) == 0 {
				s, shared = cs, true // share the single child's set (never mutated)
				continue
			}
			if shared {
				cp := make(map[string]bool, len(s)+len(cs))
				for name := range s {
					cp[name] = true
				}
				s, shared = cp, false
			}
			for name := range cs {
				if isBound(bound, name) {
					continue
				}
				if s == nil {
					s = map[string]bool{}
				}
				s[name] = true
			}
		}
	}
	v.fv[t] = s
	return s
}

func isBound(vs []*core.Var, name string) bool {
	for _, b := range vs {
		if b.Name == name {
			return true
		}
	}
	return false
}

// rangeOf returns the known value range of an i64 scalar term.
func (v *vectorizer) rangeOf(t core.Term) (int64, int64, bool) {
	return core.IntRange(t, func(name string) (int64, int64, bool) {
		r, ok := v.ranges[name]
		return r[0], r[1], ok
	})
}

// setRange records that variable name ranges over [lo, hi] (the hull with an earlier range,
// should the name be bound twice).
func (v *vectorizer) setRange(name string, lo, hi int64) {
	if r, ok := v.ranges[name]; ok {
		lo, hi = min(lo, r[0]), max(hi, r[1])
	}
	v.ranges[name] = [2]int64{lo, hi}
}

// rebuildKeep is core.Rebuild that panics on error (the children have the old types).
func rebuildKeep(t core.Term, kids []core.Term) core.Term {
	r, err := core.Rebuild(t, kids)
	if err != nil {
		panic(err.Error())
	}
	return r
}

// norm returns the normal form of t (memoised by node).
func (v *vectorizer) norm(t core.Term) core.Term {
	if r, ok := v.normM[t]; ok {
		return r
	}
	var r core.Term
	switch x := t.(type) {
	case *core.Var, *core.Lit, *core.Iota:
		r = t // already normal
	case *core.Build1:
		v.setRange(x.Var.Name, 0, int64(x.N)-1)
		body := v.norm(x.Body)
		r = v.newBuild(x.N, x.Var).push(body)
	case *core.Index:
		xs := v.norm(x.X)
		ix := make([]core.Term, len(x.Ix))
		for k, e := range x.Ix {
			ix[k] = v.norm(e)
		}
		r = v.pushI(xs, ix)
	case *core.Gather:
		for k, j := range x.Fn.Vars {
			v.setRange(j.Name, 0, int64(x.Shape[k])-1)
		}
		r = v.normKids(t)
	case *core.Scatter:
		xs := x.X.Type().Shape
		for k, j := range x.Fn.Vars {
			v.setRange(j.Name, 0, int64(xs[k])-1)
		}
		r = v.normKids(t)
	case *core.Let:
		bound := v.norm(x.Bound)
		if x.Var.Type().Equal(core.Scalar(core.Int64)) {
			if lo, hi, ok := v.rangeOf(bound); ok {
				v.setRange(x.Var.Name, lo, hi)
			}
		}
		body := v.norm(x.Body)
		r = rebuildKeep(t, []core.Term{bound, body})
	default:
		// every other construct (and a result tuple, componentwise): normalise the children;
		// only build1 and index have rules of their own (Figs. 9–11)
		r = v.normKids(t)
	}
	v.normM[t] = r
	return r
}

func (v *vectorizer) normKids(t core.Term) core.Term {
	kids := core.Children(t)
	nk := make([]core.Term, len(kids))
	for k, c := range kids {
		nk[k] = v.norm(c)
	}
	return rebuildKeep(t, nk)
}

// isTrivial reports whether t is a variable or a literal (safe to duplicate).
func isTrivial(t core.Term) bool {
	switch t.(type) {
	case *core.Var, *core.Lit:
		return true
	}
	return false
}

// ixKey identifies an index list by the identities of its terms.
func (v *vectorizer) ixKey(ix []core.Term) string {
	var b strings.Builder
	for _, e := range ix {
		id, ok := v.ids[e]
		if !ok {
			id = len(v.ids) + 1
			v.ids[e] = id
		}
		b.WriteString(strconv.Itoa(id))
		b.WriteByte(',')
	}
	return b.String()
}

// ---- small term helpers (the input is type-checked, so failures are bugs) ----

func idx(x core.Term, ix ...core.Term) core.Term  { return must(core.NewIndex(x, ix)) }
func bin(op core.BinOp, x, y core.Term) core.Term { return must(core.NewBinary(op, x, y)) }
func tr(perm []int, x core.Term) core.Term        { return must(core.NewTranspose(perm, x)) }
func rep(n int, x core.Term) core.Term            { return must(core.NewReplicate(n, x)) }
func fromVec(es ...core.Term) core.Term           { return must(core.NewFromVector(es)) }
func gather(sh core.Shape, x core.Term, vars []*core.Var, out []core.Term) core.Term {
	return must(core.NewGather(sh, x, mustFn(vars, out)))
}
func cond(c, a, b core.Term) core.Term { return must(core.NewCond(c, a, b)) }

// iAdd, iMul build integer index arithmetic, folding literals.
func iAdd(a, b core.Term) core.Term {
	if isLitI(a, 0) {
		return b
	}
	if isLitI(b, 0) {
		return a
	}
	if x, ok := litI(a); ok {
		if y, ok := litI(b); ok {
			return core.ScalarI(x + y)
		}
	}
	return bin(core.OpAdd, a, b)
}

func iMul(a core.Term, c int64) core.Term {
	if c == 1 {
		return a
	}
	if x, ok := litI(a); ok {
		return core.ScalarI(x * c)
	}
	return bin(core.OpMul, a, core.ScalarI(c))
}

func litI(t core.Term) (int64, bool) {
	if l, ok := t.(*core.Lit); ok && len(l.I) == 1 && l.Type().IsScalar() {
		return l.I[0], true
	}
	return 0, false
}

func isLitI(t core.Term, c int64) bool {
	x, ok := litI(t)
	return ok && x == c
}
