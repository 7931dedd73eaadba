package core

// fastInline is a linear-time version of the inliner (see inliner) for the common case of a
// term whose let variables have names bound nowhere else (no other let, lambda variable or
// parameter has the name), whose lambda variables are not named like a parameter, and whose
// lets are not inside a lambda (build1 body or index
// function). Under those conditions no replacement can be captured and a let variable occurs
// only inside its own body, so:
//   - occurrence counts come from one pass over the DAG that counts paths from the root
//     (capped at 2; an occurrence in a build1 body or index function counts as 2), and
//   - the rewrite of a node does not depend on its context, so it is memoised by pointer.
//
// A let whose variable is indexed directly (index x [..]) is inlined only when its bound term
// may stand in an index position of the normal form of Theorem 5.1, so simplification keeps a
// BOT-normal program BOT-normal.
//
// A let node reached by several paths counts its variable's uses once per path, so such a let
// is inlined less often than by the general inliner — never wrongly. It reports false when the
// conditions do not hold; the caller then runs the general inliner.
func fastInline(cfg *simplifyConfig, t Term, free map[string]bool) (Term, bool) {
	return fastInlineSized(cfg, t, free, 0)
}

// fastInlineSized is fastInline with a guess of the number of distinct nodes of t (a
// capacity hint; 0 for none).
func fastInlineSized(cfg *simplifyConfig, t Term, free map[string]bool, size int) (Term, bool) {
	return fastInlineWith(cfg, t, free, size, true)
}

// fastInlineWith is fastInlineSized; skip enables the shortcut for terms where no let goes
// (tests compare it with the full rewrite).
func fastInlineWith(cfg *simplifyConfig, t Term, free map[string]bool, size int, skip bool) (Term, bool) {
	if t == nil {
		return nil, true
	}
	lets := map[string]*Let{}
	lambda := map[string]bool{}
	ok := true
	order := make([]Term, 0, size) // post-order: children before parents
	// The walk's visited set numbers the nodes densely (ids.id): the tables below are slices.
	ids := postOrderSet(t, func(n Term) {
		order = append(order, n)
		switch x := n.(type) {
		case *Let:
			if other, dup := lets[x.Var.Name]; dup && other != x {
				ok = false
			}
			lets[x.Var.Name] = x
		case *Build1:
			lambda[x.Var.Name] = true
		case *Gather:
			for _, v := range x.Fn.Vars {
				lambda[v.Name] = true
			}
		case *Scatter:
			for _, v := range x.Fn.Vars {
				lambda[v.Name] = true
			}
		}
	})
	if !ok {
		return nil, false
	}
	for name := range lets {
		if lambda[name] || free[name] {
			return nil, false
		}
	}
	// A lambda variable named like a free variable could capture it when a replacement that
	// mentions the free variable is inlined under the lambda.
	for name := range lambda {
		if free[name] {
			return nil, false
		}
	}
	// Path counts from the root, capped at 2; edges into a lambda body count double. A let
	// under a lambda makes the fast path inapplicable.
	paths := make([]pathInfo, len(order)) // by node id
	paths[ids.id(t.base())] = pathInfo{pc: 1}
	var kb []Term
	for i := len(order) - 1; i >= 0; i-- {
		n := order[i]
		in := paths[ids.id(n.base())]
		if _, isLet := n.(*Let); isLet && in.underLambda {
			return nil, false
		}
		kb = appendChildren(kb[:0], n)
		for k, kid := range kb {
			if kid == nil {
				continue
			}
			rep := repeatedKid(n, k)
			add := in.pc
			if rep && add > 0 {
				add = 2
			}
			out := &paths[ids.id(kid.base())]
			out.pc = min(2, out.pc+add)
			if rep || in.underLambda {
				out.underLambda = true
			}
		}
	}
	count := make(map[string]int8, len(lets))
	indexed := map[string]bool{}
	for _, n := range order {
		switch x := n.(type) {
		case *Var:
			if _, isLetVar := lets[x.Name]; isLetVar {
				count[x.Name] = min(2, count[x.Name]+paths[ids.id(n.base())].pc)
			}
		case *Index:
			if v, isVar := x.X.(*Var); isVar {
				indexed[v.Name] = true
			}
		}
	}
	// When no let is dead or inlined, the rewrite below returns every node itself (by
	// induction: the bound terms stay as they are, so the conditions read here are the ones
	// it would read): skip it, and its memo.
	if skip && !removesLet(cfg, lets, count, indexed) {
		return t, true
	}
	f := &fastInliner{cfg: cfg, count: count, indexed: indexed, env: map[string]Term{}, ids: ids, memo: make([]Term, len(order))}
	return f.visit(t), true
}

// removesLet reports whether fastInliner.visit would drop or inline one of the lets (the
// conditions of its Let case, with each let's own bound term).
func removesLet(cfg *simplifyConfig, lets map[string]*Let, count map[string]int8, indexed map[string]bool) bool {
	for name, l := range lets {
		n := count[name]
		if n == 0 {
			return true
		}
		if !cfg.keep[name] && (n == 1 || inlinable(l.Bound)) && (!indexed[name] || indexable(l.Bound)) {
			return true
		}
	}
	return false
}

// pathInfo is what fastInline knows of a node: its path count from the root (capped at 2)
// and whether it is under a lambda.
type pathInfo struct {
	pc          int8
	underLambda bool
}

type fastInliner struct {
	cfg     *simplifyConfig
	count   map[string]int8
	indexed map[string]bool // let variables indexed directly (index x [..])
	env     map[string]Term
	ids     *nodeSet // the nodes of the term, numbered (see nodeSet.id)
	memo    []Term   // by node id; nil: not visited yet (visit returns non-nil terms)
}

func (f *fastInliner) visit(t Term) Term {
	if t == nil {
		return nil // a struct literal's missing child stays missing
	}
	id := f.ids.id(t.base())
	if r := f.memo[id]; r != nil {
		return r
	}
	var r Term
	switch x := t.(type) {
	case *Var:
		r = x
		if rep, ok := f.env[x.Name]; ok {
			r = rep
		}
	case *Let:
		bound := f.visit(x.Bound)
		n := f.count[x.Var.Name]
		switch {
		case n == 0:
			r = f.visit(x.Body) // dead let
		case !f.cfg.keep[x.Var.Name] && (n == 1 || inlinable(bound)) && (!f.indexed[x.Var.Name] || indexable(bound)):
			f.env[x.Var.Name] = bound
			r = f.visit(x.Body)
		default:
			body := f.visit(x.Body)
			r = x
			if bound != x.Bound || body != x.Body {
				r = mk(NewLet(x.Var, bound, body))
			}
		}
	default:
		r = mapKids(t, f.visit)
	}
	f.memo[id] = r
	return r
}

// indexable reports whether index t [..] is one of the normal forms of Theorem 5.1 (paper
// 000): t a variable, a literal, a fromVector or a scatter. Inlining a let into an index
// position keeps the program BOT-normal only for such bound terms.
func indexable(t Term) bool {
	switch t.(type) {
	case *Var, *Lit, *FromVector, *Scatter:
		return true
	}
	return false
}
