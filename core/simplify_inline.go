package core

import (
	"sort"
	"strconv"
	"strings"
)

// inliner removes dead lets and inlines lets bound to variables, scalar literals or iota, and
// lets whose variable occurs once (counting every path through the DAG, and counting an
// occurrence inside a build1 body or an index function as many). Lets named in KeepLets are
// only removed when dead.
//
// It is one pass with an environment of active replacements, memoised per node and per the
// replacements of the node's free variables (nodes without affected free variables are
// rewritten once), so it is linear in the number of distinct nodes for programs whose nodes
// have few free variables. Binders that would capture a free variable of a replacement are
// renamed.
type inliner struct {
	cfg       *simplifyConfig
	namer     *Namer
	cnt       map[Term]map[string]int8
	env       map[string]Term
	envFV     map[string]int
	memoPlain map[Term]Term
	memoEnv   map[string]Term
	ids       map[Term]int
}

func newInliner(cfg *simplifyConfig, namer *Namer) *inliner {
	return &inliner{cfg: cfg, namer: namer, cnt: map[Term]map[string]int8{}, env: map[string]Term{},
		envFV: map[string]int{}, memoPlain: map[Term]Term{}, memoEnv: map[string]Term{}, ids: map[Term]int{}}
}

func (in *inliner) run(t Term) Term { return in.visit(t) }

// counts returns the capped occurrence counts (1, or 2 meaning "more than once") of the free
// variables of t.
func (in *inliner) counts(t Term) map[string]int8 {
	if c, ok := in.cnt[t]; ok {
		return c
	}
	var out map[string]int8
	if v, ok := t.(*Var); ok {
		out = map[string]int8{v.Name: 1}
	} else {
		for k, child := range Children(t) {
			cc := in.counts(child)
			if len(cc) == 0 {
				continue
			}
			bound := BoundIn(t, k)
			repeated := repeatedKid(t, k)
			for name, n := range cc {
				if boundName(bound, name) {
					continue
				}
				if repeated {
					n = 2
				}
				if out == nil {
					out = map[string]int8{}
				}
				out[name] = min(2, out[name]+n)
			}
		}
	}
	in.cnt[t] = out
	return out
}

func (in *inliner) id(t Term) int {
	if k, ok := in.ids[t]; ok {
		return k
	}
	k := len(in.ids) + 1
	in.ids[t] = k
	return k
}

// relevant lists the free variables of t that have an active replacement, sorted.
func (in *inliner) relevant(t Term) []string {
	var names []string
	if len(in.env) == 0 {
		return nil
	}
	for name := range in.counts(t) {
		if _, ok := in.env[name]; ok {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	return names
}

func (in *inliner) visit(t Term) Term {
	rel := in.relevant(t)
	if len(rel) == 0 {
		if r, ok := in.memoPlain[t]; ok {
			return r
		}
		r := in.process(t)
		in.memoPlain[t] = r
		return r
	}
	var b strings.Builder
	b.WriteString(strconv.Itoa(in.id(t)))
	for _, name := range rel {
		b.WriteByte('|')
		b.WriteString(name)
		b.WriteByte('=')
		b.WriteString(strconv.Itoa(in.id(in.env[name])))
	}
	key := b.String()
	if r, ok := in.memoEnv[key]; ok {
		return r
	}
	r := in.process(t)
	in.memoEnv[key] = r
	return r
}

type savedEnv struct {
	name string
	old  Term
	had  bool
}

func (in *inliner) set(name string, r Term) savedEnv {
	old, had := in.env[name]
	if had {
		for fv := range in.counts(old) {
			in.envFV[fv]--
		}
	}
	in.env[name] = r
	for fv := range in.counts(r) {
		in.envFV[fv]++
	}
	return savedEnv{name, old, had}
}

func (in *inliner) unset(name string) savedEnv {
	old, had := in.env[name]
	if had {
		for fv := range in.counts(old) {
			in.envFV[fv]--
		}
		delete(in.env, name)
	}
	return savedEnv{name, old, had}
}

func (in *inliner) restore(saved []savedEnv) {
	for k := len(saved) - 1; k >= 0; k-- {
		s := saved[k]
		if cur, ok := in.env[s.name]; ok {
			for fv := range in.counts(cur) {
				in.envFV[fv]--
			}
			delete(in.env, s.name)
		}
		if s.had {
			in.env[s.name] = s.old
			for fv := range in.counts(s.old) {
				in.envFV[fv]++
			}
		}
	}
}

// under visits the children under binders bs: shadowed replacements are suspended, and a
// binder whose name is free in an active replacement that reaches the children is renamed.
// It returns the new binders and children.
func (in *inliner) under(bs []*Var, kids []Term) ([]*Var, []Term) {
	var saved []savedEnv
	for _, b := range bs {
		if _, ok := in.env[b.Name]; ok {
			saved = append(saved, in.unset(b.Name))
		}
	}
	nb := append([]*Var{}, bs...)
	needs := false
	for _, k := range kids {
		if len(in.relevant(k)) > 0 {
			needs = true
			break
		}
	}
	if needs {
		for i, b := range bs {
			if in.envFV[b.Name] > 0 {
				fresh := in.namer.FreshVar(b.Name, b.Type())
				saved = append(saved, in.set(b.Name, fresh))
				nb[i] = fresh
			}
		}
	}
	out := make([]Term, len(kids))
	for i, k := range kids {
		out[i] = in.visit(k)
	}
	in.restore(saved)
	return nb, out
}

func (in *inliner) process(t Term) Term {
	switch x := t.(type) {
	case *Var:
		if r, ok := in.env[x.Name]; ok {
			return r
		}
		return x
	case *Let:
		bound := in.visit(x.Bound)
		n := in.counts(x.Body)[x.Var.Name]
		if n == 0 {
			return in.visit(x.Body) // dead let
		}
		if !in.cfg.keep[x.Var.Name] && (n == 1 || inlinable(bound)) {
			saved := []savedEnv{in.set(x.Var.Name, bound)}
			body := in.visit(x.Body)
			in.restore(saved)
			return body
		}
		nb, kids := in.under([]*Var{x.Var}, []Term{x.Body})
		if nb[0] == x.Var && bound == x.Bound && kids[0] == x.Body {
			return x
		}
		return mk(NewLet(nb[0], bound, kids[0]))
	case *Build1:
		nb, kids := in.under([]*Var{x.Var}, []Term{x.Body})
		if nb[0] == x.Var && kids[0] == x.Body {
			return x
		}
		return mk(NewBuild1(x.N, nb[0], kids[0]))
	case *Gather, *Scatter:
		kids := Children(x) // the array, then the index function's outputs
		fn := fnVars(indexFn(x))
		arr := in.visit(kids[0])
		nb, outs := in.under(fn, kids[1:])
		if arr == kids[0] && sameTerms(outs, kids[1:]) && sameVarPtrs(nb, fn) {
			return x
		}
		return mk(rebuildIndexed(x, arr, nb, outs))
	}
	return mapKids(t, in.visit)
}

// repeatedKid reports whether child k of t (see Children) is evaluated once for every point of
// an index space: the body of a build1, an output of a gather's or scatter's index function.
func repeatedKid(t Term, k int) bool {
	switch t.(type) {
	case *Build1:
		return true
	case *Gather, *Scatter:
		return k >= 1
	}
	return false
}

// inlinable reports whether a let bound to t may be inlined however often its variable is
// used: variables, scalar literals and iota cost nothing to duplicate.
func inlinable(t Term) bool {
	switch x := t.(type) {
	case *Var, *Iota:
		return true
	case *Lit:
		return x.Type().IsScalar()
	}
	return false
}

func sameTerms(a, b []Term) bool {
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func sameVarPtrs(a, b []*Var) bool {
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
