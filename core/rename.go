package core

import (
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/pkg/errors"
)

// This file is the one home of renaming: Namer (fresh names), Subst (capture-avoiding
// substitution), FreshFor (fresh variables for binders that would capture) and Uniquify
// (distinct binder names). bot, ad and the simplifier use these; none keeps its own copy.

// Namer generates variable names that occur nowhere in the terms it was made from. One Namer
// belongs to one transformation; there is no global counter.
type Namer struct {
	used map[string]bool
	next map[string]int
	// pending are terms whose names are recorded at the first Fresh: a pass that never
	// needs a fresh name never walks them.
	pending []Term
}

// NewNamer makes a Namer that avoids every name used (free or bound) in the given terms
// (pass a program's parameters too, as terms, if some may be unused in its body). The terms
// are walked at the first Fresh, not here.
func NewNamer(terms ...Term) *Namer {
	return &Namer{used: map[string]bool{}, next: map[string]int{}, pending: append([]Term(nil), terms...)}
}

// Avoid records every name used in t.
func (n *Namer) Avoid(t Term) {
	PostOrder(t, func(x Term) {
		switch x := x.(type) {
		case *Var:
			n.used[x.Name] = true
		case *Let:
			n.avoidVars(x.Var)
		case *Build1:
			n.avoidVars(x.Var)
		case *Gather:
			n.avoidVars(fnVars(x.Fn)...)
		case *Scatter:
			n.avoidVars(fnVars(x.Fn)...)
		}
	})
}

func (n *Namer) avoidVars(vs ...*Var) {
	for _, v := range vs {
		if v != nil {
			n.used[v.Name] = true
		}
	}
}

// AvoidName records one name.
func (n *Namer) AvoidName(name string) { n.used[name] = true }

// Fresh returns a new name prefix_k (prefix must be a valid name) not used before.
func (n *Namer) Fresh(prefix string) string {
	for _, t := range n.pending {
		n.Avoid(t)
	}
	n.pending = nil
	for {
		k := n.next[prefix]
		n.next[prefix] = k + 1
		name := prefix + "_" + strconv.Itoa(k) // as fmt's "%s_%d", without its overhead
		if !n.used[name] {
			n.used[name] = true
			return name
		}
	}
}

// FreshVar returns a variable of type t with a fresh name.
func (n *Namer) FreshVar(prefix string, t Type) *Var {
	return &Var{node: node{Type{t.Shape.Clone(), t.Dtype}}, Name: n.Fresh(prefix)}
}

// Subst replaces the free occurrences of the variables named in sub by the given terms,
// renaming binders that would capture a free variable of a replacement. Subterms without
// free occurrences are returned unchanged (pointer sharing is preserved), and each distinct
// node is rewritten once per substitution scope. Replacement types must equal the variables'.
func Subst(t Term, sub map[string]Term) (Term, error) {
	s := &substituter{fv: newFVCache(), memo: map[*substScope]map[Term]Term{}}
	for name, r := range sub {
		if r == nil {
			return nil, errors.Errorf("core: subst: replacement for %s is nil", name)
		}
	}
	var names []Term
	for _, r := range sub {
		names = append(names, r)
	}
	s.namer = NewNamer(append(names, t)...)
	return s.run(t, &substScope{sub: sub})
}

type substScope struct {
	sub map[string]Term
	// replFV holds free variables of the replacements (for capture checks).
	replFV map[string]bool
}

type substituter struct {
	fv    *fvCache
	memo  map[*substScope]map[Term]Term
	namer *Namer
}

func (s *substituter) relevant(t Term, sc *substScope) bool {
	fv := s.fv.of(t)
	if len(fv) < len(sc.sub) {
		for name := range fv {
			if _, ok := sc.sub[name]; ok {
				return true
			}
		}
		return false
	}
	for name := range sc.sub {
		if _, ok := fv[name]; ok {
			return true
		}
	}
	return false
}

func (s *substituter) scopeFV(sc *substScope) map[string]bool {
	if sc.replFV == nil {
		sc.replFV = map[string]bool{}
		for _, r := range sc.sub {
			for name := range s.fv.of(r) {
				sc.replFV[name] = true
			}
		}
	}
	return sc.replFV
}

func (s *substituter) run(t Term, sc *substScope) (Term, error) {
	if t == nil || !s.relevant(t, sc) {
		return t, nil
	}
	m := s.memo[sc]
	if m == nil {
		m = map[Term]Term{}
		s.memo[sc] = m
	}
	if r, ok := m[t]; ok {
		return r, nil
	}
	var out Term
	var err error
	switch x := t.(type) {
	case *Var:
		r := sc.sub[x.Name]
		if !r.Type().Equal(x.Type()) {
			return nil, errors.Errorf("core: subst: %s has type %v, replacement has type %v", x.Name, x.Type(), r.Type())
		}
		out = r
	default:
		kids := Children(t)
		nk := make([]Term, len(kids))
		binders := map[int][]*Var{}
		// All children under the same binders (the outputs of an index function) share one
		// renamed scope.
		var lastBound []*Var
		var lastScope *substScope
		var lastNB []*Var
		for k, kid := range kids {
			bound := BoundIn(t, k)
			inner := sc
			if len(bound) > 0 {
				if lastBound != nil && &lastBound[0] == &bound[0] {
					inner = lastScope
					binders[k] = lastNB
				} else {
					var nb []*Var
					inner, nb, err = s.enter(sc, bound)
					if err != nil {
						return nil, err
					}
					binders[k] = nb
					lastBound, lastScope, lastNB = bound, inner, nb
				}
			}
			nk[k], err = s.run(kid, inner)
			if err != nil {
				return nil, err
			}
		}
		out, err = s.rebuildWithBinders(t, nk, binders)
		if err != nil {
			return nil, err
		}
	}
	m[t] = out
	return out, nil
}

// enter handles binders: shadowed names leave the substitution, capturing binders are renamed.
func (s *substituter) enter(sc *substScope, bound []*Var) (*substScope, []*Var, error) {
	rfv := s.scopeFV(sc)
	var nsub map[string]Term
	copyOnce := func() {
		if nsub == nil {
			nsub = make(map[string]Term, len(sc.sub)+1)
			for k, v := range sc.sub {
				nsub[k] = v
			}
		}
	}
	for _, b := range bound {
		if _, ok := sc.sub[b.Name]; ok {
			copyOnce()
			delete(nsub, b.Name)
		}
	}
	renamed := map[string]Term{}
	nb := s.namer.FreshFor(bound, func(name string) bool { return rfv[name] }, "", renamed)
	if len(renamed) > 0 {
		copyOnce()
		maps.Copy(nsub, renamed)
	}
	if nsub == nil {
		return sc, nb, nil
	}
	return &substScope{sub: nsub}, nb, nil
}

func (s *substituter) rebuildWithBinders(t Term, kids []Term, binders map[int][]*Var) (Term, error) {
	for k, nb := range binders {
		ob := BoundIn(t, k)
		for i := range nb {
			if nb[i] != ob[i] {
				return rebind(t, kids, nb)
			}
		}
	}
	return Rebuild(t, kids)
}

// rebind returns binder node t (let, build1, gather or scatter) with new children (in the
// order of Children) and the binder variables vars in place of its own.
func rebind(t Term, kids []Term, vars []*Var) (Term, error) {
	switch x := t.(type) {
	case *Let:
		return NewLet(vars[0], kids[0], kids[1])
	case *Build1:
		return NewBuild1(x.N, vars[0], kids[0])
	case *Gather, *Scatter:
		return rebuildIndexed(x, kids[0], vars, kids[1:])
	}
	return nil, errors.Errorf("core: rename: %T binds no variable", t)
}

// FreshFor returns the binder variables vs with every one whose name clashes (clash reports
// true: the name is free in terms substituted under the binder, or otherwise taken) replaced
// by a fresh variable of the same type named prefix_k (the variable's own name when prefix
// is empty); sub records each replacement by the old name, for Subst.
func (n *Namer) FreshFor(vs []*Var, clash func(name string) bool, prefix string, sub map[string]Term) []*Var {
	out := make([]*Var, len(vs))
	for k, v := range vs {
		out[k] = v
		if clash(v.Name) {
			p := prefix
			if p == "" {
				p = v.Name
			}
			nv := n.FreshVar(p, v.Type())
			sub[v.Name] = nv
			out[k] = nv
		}
	}
	return out
}

// NameStem returns name less a trailing _k (k decimal digits): the prefix for a fresh name
// in place of name, so that a_3 is renamed a_0 (or the next free a_k), not a_3_0.
func NameStem(name string) string {
	if i := strings.LastIndexByte(name, '_'); i > 0 {
		if _, err := strconv.Atoi(name[i+1:]); err == nil {
			return name[:i]
		}
	}
	return name
}

// UniquifyOptions says which binders Uniquify renames and how.
type UniquifyOptions struct {
	// AllBinders renames the variables of build1, gather and scatter too; otherwise only
	// let names are made distinct (the other binders only shadow).
	AllBinders bool
	// Taken are names no renamed binder may keep (a program's parameters, reserved names).
	Taken []string
	// KeepSpine lets the lets of the top-level spine (the term and the bodies of its lets,
	// see LetChain) claim their names before any other binder: they keep them unless the
	// name is taken or an earlier spine let has it.
	KeepSpine bool
	// LetBoundFirst visits a let's bound before the let claims its name (the bound is
	// outside its scope), so lets inside the bound claim first; otherwise binders claim in
	// pre-order.
	LetBoundFirst bool
	// StemNames makes a replacement's name from NameStem of the old one (a_3 → a_0, the
	// first free a_k); otherwise from the whole old name (a_3 → a_3_0).
	StemNames bool
}

// Uniquify renames binders so that no two binder nodes it renames (lets; every binder with
// AllBinders) bind the same name and none binds a taken name; occurrences follow their
// binder, respecting shadowing. Fresh names come from namer, which must avoid every name of
// t and of o.Taken (NewNamer(t) and AvoidName). A
// binder node reached twice under the same renaming of its free variables is rewritten once
// (pointer sharing is kept); binders claim their names in pre-order (see LetBoundFirst),
// children in the order of Children, and the first to claim a name keeps it. With nothing
// to rename it returns t.
func Uniquify(t Term, namer *Namer, o UniquifyOptions) (Term, error) {
	if t == nil {
		return nil, errors.New("core: uniquify: nil term")
	}
	if bindersUnique(t, o) {
		return t, nil // what the rewrite returns then, without memoising every node
	}
	return uniquifyAll(t, namer, o)
}

// uniquifyAll is Uniquify without the check for the case with nothing to rename.
func uniquifyAll(t Term, namer *Namer, o UniquifyOptions) (Term, error) {
	u := &uniquifier{o: o, namer: namer, claimed: map[string]uniqOwner{}, memo: map[uniqOwner]Term{}, fv: newFVCache()}
	for _, name := range o.Taken {
		u.claimed[name] = uniqOwner{}
	}
	if o.KeepSpine {
		chain, _ := LetChain(t)
		for _, l := range chain {
			if _, dup := u.claimed[l.Var.Name]; !dup {
				u.claimed[l.Var.Name] = uniqOwner{t: l}
			}
		}
	}
	return u.visit(t, nil)
}

// bindersUnique reports whether Uniquify has nothing to rename: every binder node it renames
// binds names no other such node and no taken name has. (Then every binder is reached under
// the empty renaming, claims its own names, and nothing is rebuilt.)
func bindersUnique(t Term, o UniquifyOptions) bool {
	owner := make(map[string]Term, len(o.Taken))
	for _, name := range o.Taken {
		owner[name] = nil
	}
	unique := true
	PostOrder(t, func(n Term) {
		if !unique {
			return
		}
		for _, v := range uniqBinders(n, o) {
			if w, ok := owner[v.Name]; ok && w != n {
				unique = false
			}
			owner[v.Name] = n
		}
	})
	return unique
}

// uniqBinders returns the variables of t that Uniquify makes distinct.
func uniqBinders(t Term, o UniquifyOptions) []*Var {
	if l, ok := t.(*Let); ok {
		return []*Var{l.Var}
	}
	if !o.AllBinders {
		return nil
	}
	switch x := t.(type) {
	case *Build1:
		return []*Var{x.Var}
	case *Gather:
		return fnVars(x.Fn)
	case *Scatter:
		return fnVars(x.Fn)
	}
	return nil
}

// uniqEnv maps old variable names to their replacements in a scope.
type uniqEnv map[string]*Var

// uniqOwner identifies one rewrite of a node: the node and its renamed free variables (the
// replacements' names, which are fresh, so they tell one renaming from another). The zero
// value owns the taken names.
type uniqOwner struct {
	t   Term
	key string
}

type uniquifier struct {
	o       UniquifyOptions
	namer   *Namer
	claimed map[string]uniqOwner
	memo    map[uniqOwner]Term
	fv      *fvCache
}

// owner is the identity of t under env: env restricted to t's free variables.
func (u *uniquifier) owner(t Term, env uniqEnv) uniqOwner {
	if len(env) == 0 {
		return uniqOwner{t: t}
	}
	var names []string
	for name := range u.fv.of(t) {
		if _, ok := env[name]; ok {
			names = append(names, name)
		}
	}
	if len(names) == 0 {
		return uniqOwner{t: t}
	}
	sort.Strings(names)
	var b strings.Builder
	for _, name := range names {
		b.WriteString(name)
		b.WriteByte('=')
		b.WriteString(env[name].Name)
		b.WriteByte(' ')
	}
	return uniqOwner{t: t, key: b.String()}
}

// visit returns t with its binders renamed, under env (the renamings in scope).
func (u *uniquifier) visit(t Term, env uniqEnv) (Term, error) {
	if x, ok := t.(*Var); ok {
		if nv, ok := env[x.Name]; ok {
			return nv, nil
		}
		return t, nil
	}
	id := u.owner(t, env)
	if r, ok := u.memo[id]; ok {
		return r, nil
	}
	var kb [4]Term
	kids := AppendChildren(kb[:0], t)
	nk := make([]Term, len(kids))
	first := 0
	if _, ok := t.(*Let); ok && u.o.LetBoundFirst {
		r, err := u.visit(kids[0], env) // outside the let's scope
		if err != nil {
			return nil, err
		}
		nk[0], first = r, 1
	}
	vars, renamed := u.claim(t, id)
	for k := first; k < len(kids); k++ {
		inner := env
		if bound := BoundIn(t, k); len(bound) > 0 {
			inner = env.enter(bound, renamed)
		}
		r, err := u.visit(kids[k], inner)
		if err != nil {
			return nil, err
		}
		nk[k] = r
	}
	same := true
	for k := range kids {
		same = same && nk[k] == kids[k]
	}
	var out Term
	var err error
	switch {
	case len(renamed) > 0:
		out, err = rebind(t, nk, vars)
	case same:
		out = t
	default:
		out, err = Rebuild(t, nk)
	}
	if err != nil {
		return nil, errors.Wrapf(err, "core: uniquify %T", t)
	}
	u.memo[id] = out
	return out, nil
}

// claim lets node t (rewrite id) claim the names of its binders: the first to claim a name
// keeps it, a binder whose name another rewrite claimed gets a fresh one. It returns the
// binder variables after renaming and the renamings (nil when none).
func (u *uniquifier) claim(t Term, id uniqOwner) ([]*Var, uniqEnv) {
	vars := uniqBinders(t, u.o)
	var renamed uniqEnv
	for k, b := range vars {
		if w, taken := u.claimed[b.Name]; !taken {
			u.claimed[b.Name] = id
			continue
		} else if w == id {
			continue
		}
		prefix := b.Name
		if u.o.StemNames {
			prefix = NameStem(prefix)
		}
		nb := u.namer.FreshVar(prefix, b.Type())
		u.claimed[nb.Name] = id
		if renamed == nil {
			renamed, vars = uniqEnv{}, slices.Clone(vars)
		}
		renamed[b.Name] = nb
		vars[k] = nb
	}
	return vars, renamed
}

// enter returns the renamings under binder variables bound: theirs (from renamed) in place
// of any outer renaming of the same names, which they shadow. env itself is never modified.
func (env uniqEnv) enter(bound []*Var, renamed uniqEnv) uniqEnv {
	hit := len(renamed) > 0
	for _, v := range bound {
		if _, ok := env[v.Name]; ok {
			hit = true
		}
	}
	if !hit {
		return env
	}
	m := make(uniqEnv, len(env)+len(renamed))
	for k, v := range env {
		m[k] = v
	}
	for _, v := range bound {
		delete(m, v.Name)
		if nv, ok := renamed[v.Name]; ok {
			m[v.Name] = nv
		}
	}
	return m
}
