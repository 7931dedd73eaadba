package core

import (
	"maps"
	"slices"
	"sort"

	"github.com/pkg/errors"
)

// Children returns the direct subterms of t in a fixed order:
//
//	Let: Bound, Body          Build1: Body               Cond: C, Then, Else
//	Index: X, Ix...           Gather/Scatter: X, Fn.Out...
//	Binary/MatMul: X, Y       FromVector/Tuple: Elems... Share: Body
//	Unary, Cast, SumOuter, ArgmaxOuter, Replicate, Transpose, Reshape: X
//	Var, Lit, Iota: none
//
// BoundIn tells which of them are under a binder.
func Children(t Term) []Term { return appendChildren(nil, t) }

// AppendChildren appends the children of t (see Children) to dst and returns the extended
// slice: with a small array as dst (var kb [4]Term; AppendChildren(kb[:0], t)), reading the
// children of most terms allocates nothing.
func AppendChildren(dst []Term, t Term) []Term { return appendChildren(dst, t) }

// appendChildren appends t's children (see Children) to dst. It runs on every node of every
// walk: its cases are concrete types only, which the type switch matches by hash (an
// interface case would be tried on every leaf and made it 1.5× slower).
func appendChildren(dst []Term, t Term) []Term {
	switch t := t.(type) {
	case *Let:
		return append(dst, t.Bound, t.Body)
	case *Share:
		return append(dst, t.Body)
	case *Cond:
		return append(dst, t.C, t.Then, t.Else)
	case *Binary:
		return append(dst, t.X, t.Y)
	case *Index:
		return append(append(dst, t.X), t.Ix...)
	case *Gather:
		return append(append(dst, t.X), fnOut(t.Fn)...)
	case *Scatter:
		return append(append(dst, t.X), fnOut(t.Fn)...)
	case *FromVector:
		return append(dst, t.Elems...)
	case *Build1:
		return append(dst, t.Body)
	case *MatMul:
		return append(dst, t.X, t.Y)
	case *Tuple:
		return append(dst, t.Elems...)
	case *Unary:
		return append(dst, t.X)
	case *Cast:
		return append(dst, t.X)
	case *SumOuter:
		return append(dst, t.X)
	case *ArgmaxOuter:
		return append(dst, t.X)
	case *Replicate:
		return append(dst, t.X)
	case *Transpose:
		return append(dst, t.X)
	case *Reshape:
		return append(dst, t.X)
	}
	return dst
}

// fnOut and fnVars read an index function's parts, tolerating a nil one (a struct literal).
func fnOut(f *IndexFn) []Term {
	if f == nil {
		return nil
	}
	return f.Out
}

func fnVars(f *IndexFn) []*Var {
	if f == nil {
		return nil
	}
	return f.Vars
}

// BoundIn returns the variables that t binds in its k-th child (see Children), or nil.
func BoundIn(t Term, k int) []*Var {
	switch t := t.(type) {
	case *Let:
		if k == 1 && t.Var != nil {
			return []*Var{t.Var}
		}
	case *Build1:
		if k == 0 && t.Var != nil {
			return []*Var{t.Var}
		}
	case *Gather:
		if k >= 1 {
			return fnVars(t.Fn)
		}
	case *Scatter:
		if k >= 1 {
			return fnVars(t.Fn)
		}
	}
	return nil
}

// Rebuild returns a term of the same construct and parameters as t with new children (in the
// order of Children), re-checking the typing rules. It returns t itself when every child is
// unchanged (pointer-equal).
func Rebuild(t Term, kids []Term) (Term, error) {
	var kb [4]Term // the children of most terms, without an allocation
	old := appendChildren(kb[:0], t)
	if len(old) != len(kids) {
		return nil, errors.Errorf("core: rebuild %T: %d children, want %d", t, len(kids), len(old))
	}
	same := true
	for i := range old {
		if old[i] != kids[i] {
			same = false
			break
		}
	}
	if same {
		return t, nil
	}
	switch t := t.(type) {
	case *Let:
		return NewLet(t.Var, kids[0], kids[1])
	case *Share:
		return NewShare(t.ID, kids[0])
	case *Cond:
		return NewCond(kids[0], kids[1], kids[2])
	case *Unary:
		return NewUnary(t.Op, kids[0])
	case *Cast:
		return NewCast(t.To, kids[0])
	case *Binary:
		return NewBinary(t.Op, kids[0], kids[1])
	case *Index:
		return NewIndex(kids[0], kids[1:])
	case *SumOuter:
		return NewSumOuter(kids[0])
	case *ArgmaxOuter:
		return NewArgmaxOuter(kids[0])
	case *Gather:
		return rebuildIndexed(t, kids[0], fnVars(t.Fn), kids[1:])
	case *Scatter:
		return rebuildIndexed(t, kids[0], fnVars(t.Fn), kids[1:])
	case *FromVector:
		return NewFromVector(kids)
	case *Replicate:
		return NewReplicate(t.N, kids[0])
	case *Transpose:
		return NewTranspose(t.Perm, kids[0])
	case *Reshape:
		return NewReshape(t.Shape, kids[0])
	case *Build1:
		return NewBuild1(t.N, t.Var, kids[0])
	case *MatMul:
		return NewMatMul(kids[0], kids[1])
	case *Tuple:
		return NewTuple(kids)
	}
	return nil, errors.Errorf("core: rebuild: unknown term %T", t)
}

// PostOrder calls f once for every distinct node reachable from t (by pointer identity),
// children before parents. It is linear in the number of distinct nodes.
func PostOrder(t Term, f func(Term)) {
	if t == nil {
		return
	}
	postOrderSet(t, f)
}

// postOrderSet is PostOrder for a non-nil t, returning its visited set, in which every node
// has its discovery number as id (dense: 0 to the number of nodes - 1; see nodeSet.insert).
// The caller releases the set with put.
func postOrderSet(t Term, f func(Term)) *nodeSet {
	// The children of the frames on the stack share one slice: a frame's are kids[start:end],
	// pushed after its parent's and dropped when it is popped (no slice per node). The
	// visited set and both slices are reused across walks (see nodeSet).
	seen := newNodeSet()
	seen.insert(t.base())
	kids := appendChildren(seen.kids[:0], t)
	stack := append(seen.stack[:0], walkFrame{t: t, end: len(kids)})
	high, deep := len(kids), 1
	for len(stack) > 0 {
		top := &stack[len(stack)-1]
		if top.next < top.end {
			c := kids[top.next]
			top.next++
			if c == nil {
				continue
			}
			if seen.insert(c.base()) {
				start := len(kids)
				kids = appendChildren(kids, c)
				high = max(high, len(kids))
				stack = append(stack, walkFrame{t: c, start: start, next: start, end: len(kids)})
				deep = max(deep, len(stack))
			}
			continue
		}
		f(top.t)
		kids = kids[:top.start]
		stack = stack[:len(stack)-1]
	}
	// Drop the references to terms before pooling (popped entries still hold theirs).
	clear(kids[:high])
	clear(stack[:deep])
	seen.kids, seen.stack = kids[:0], stack[:0]
	return seen
}

type walkFrame struct {
	t                Term
	start, next, end int
}

// Size is the number of distinct nodes (by pointer identity) reachable from t.
func Size(t Term) int {
	n := 0
	PostOrder(t, func(Term) { n++ })
	return n
}

// FreeVars returns the free variables of t with their types, sorted by name. It is linear in
// the number of distinct nodes times the number of free variables per node.
func FreeVars(t Term) []*Var {
	fv := newFVCache()
	m := fv.of(t)
	vs := make([]*Var, 0, len(m))
	for _, v := range m {
		vs = append(vs, v)
	}
	sort.Slice(vs, func(i, j int) bool { return vs[i].Name < vs[j].Name })
	return vs
}

// fvCache memoises free-variable sets by node.
type fvCache struct {
	m map[Term]map[string]*Var
}

func newFVCache() *fvCache { return &fvCache{m: map[Term]map[string]*Var{}} }

var emptyFV = map[string]*Var{}

func (c *fvCache) of(t Term) map[string]*Var {
	if t == nil {
		return emptyFV
	}
	if s, ok := c.m[t]; ok {
		return s
	}
	// Post-order over the nodes not yet cached: cached subterms are not entered again, so a
	// sequence of calls (one per node, as in Check and Subst) stays linear overall.
	// As in PostOrder, the frames' children share one slice: a frame's are
	// kids[start:end], available until it is popped.
	kids := appendChildren(nil, t)
	stack := []walkFrame{{t: t, end: len(kids)}}
	for len(stack) > 0 {
		top := &stack[len(stack)-1]
		if top.next < top.end {
			kid := kids[top.next]
			top.next++
			if kid != nil {
				if _, ok := c.m[kid]; !ok {
					start := len(kids)
					kids = appendChildren(kids, kid)
					stack = append(stack, walkFrame{t: kid, start: start, next: start, end: len(kids)})
				}
			}
			continue
		}
		n := top.t
		topKids := kids[top.start:top.end]
		kids = kids[:top.start]
		stack = stack[:len(stack)-1]
		if _, ok := c.m[n]; ok {
			continue
		}
		if v, ok := n.(*Var); ok {
			c.m[n] = map[string]*Var{v.Name: v}
			continue
		}
		// out starts as the first contributing child's own set when nothing of it is bound
		// (sets are read-only once cached) and is copied only when it has to change, so a
		// chain of unary nodes or lets shares one set instead of copying it per node.
		var out map[string]*Var
		shared := false
		for k, kid := range topKids {
			bound := BoundIn(n, k)
			km := c.m[kid]
			if out == nil && len(bound) == 0 && len(km) > 0 {
				out, shared = km, true
				continue
			}
			for name, v := range km {
				if boundName(bound, name) {
					continue
				}
				if shared {
					if w, ok := out[name]; ok && w == v {
						continue
					}
					out, shared = maps.Clone(out), false
				}
				if out == nil {
					out = map[string]*Var{}
				}
				out[name] = v
			}
		}
		if out == nil {
			out = emptyFV
		}
		c.m[n] = out
	}
	return c.m[t]
}

func boundName(vs []*Var, name string) bool {
	for _, v := range vs {
		if v.Name == name {
			return true
		}
	}
	return false
}

// HasFree reports whether variable name occurs free in t.
func HasFree(t Term, name string) bool {
	_, ok := newFVCache().of(t)[name]
	return ok
}

// Check verifies a program: distinct parameter names, every free variable of the body is a
// parameter, every variable occurrence has its binder's type, every node was built by a
// constructor, and a Tuple appears only as the result (the body, possibly under lets).
// A program made by NewProgram (which checks it) is not walked again while its body and
// parameter list are the ones NewProgram was given (terms are immutable).
func Check(p *Program) error {
	_, err := checkProgram(p)
	return err
}

// checkProgram is Check; it also returns the number of (node, scope) pairs it visited, at
// least the number of distinct nodes of a program that checks.
func checkProgram(p *Program) (int, error) {
	if p == nil || p.Body == nil {
		return 0, errors.New("core: program: nil program or body")
	}
	if c := p.checked; c != nil && c.body == p.Body && slices.Equal(c.params, p.Params) {
		return c.size, nil // checked by NewProgram, unchanged since
	}
	// The scope table holds the parameters and, at the bottom of the chain of lets around
	// the result, every one of them (a capacity hint: growing it was most of Check's cost).
	lets := 0
	for t := p.Body; ; lets++ {
		l, ok := t.(*Let)
		if !ok {
			break
		}
		t = l.Body
	}
	env := make(map[string]scopeEntry, len(p.Params)+lets)
	for _, v := range p.Params {
		if v == nil {
			return 0, errors.New("core: program: nil parameter")
		}
		if _, dup := env[v.Name]; dup {
			return 0, errors.Errorf("core: program: parameter %s declared twice", v.Name)
		}
		if !v.Type().Dtype.Valid() {
			return 0, errors.Errorf("core: program: parameter %s has no type", v.Name)
		}
		env[v.Name] = scopeEntry{bind: v, param: true}
	}
	// Tuples only at the top.
	top := p.Body
	for {
		l, ok := top.(*Let)
		if !ok {
			break
		}
		top = l.Body
	}
	// Scoping and variable types: each variable occurrence must agree with its binder; on the
	// same walk, tuples only at the top and every other node typed.
	seen := newNodeSet()
	sc := &scopeChecker{env: env, seen: seen, undo: seen.undo[:0], top: top}
	// The lets above a result tuple have no array type; they are marked in the visited set
	// with the tag tupleLetTag (computed once: not per let, which would be quadratic in the
	// length of the chain).
	if _, ok := top.(*Tuple); ok {
		for t := p.Body; t != top; t = t.(*Let).Body {
			sc.seen.add(t.base(), tupleLetTag)
		}
	}
	sc.visit(p.Body)
	if sc.err != nil {
		clear(sc.undo) // left early, with binders on the stack
	}
	seen.undo = sc.undo[:0]
	visited := seen.n
	return visited, sc.err
}

// tupleLetTag marks the lets above a result tuple in a scopeChecker's visited set (scope
// versions, the other tags, stay below it).
const tupleLetTag = ^uint32(0)

// scopeChecker walks a term top-down with a scoped symbol table. A node is visited once per
// distinct scope it is reached in (scopes get a new version when a binder is entered), so a
// tree-shaped term (sharing through let-bound variables) is checked in linear time, and only
// compound subterms shared by pointer across different scopes are visited more than once.
type scopeChecker struct {
	// env holds the innermost binder of every name in scope; undo the entries it shadows,
	// restored when their binders are left.
	env     map[string]scopeEntry
	undo    []shadowed
	version uint32
	next    uint32
	seen    *nodeSet // (node, version) pairs visited, and the lets above a result tuple
	err     error
	// the program's result (the only place for a tuple)
	top Term
}

// scopeEntry is a binder in scope (its type is bind's; a pointer keeps the table small).
type scopeEntry struct {
	bind  *Var
	param bool
}

// shadowed is an env entry hidden by an inner binder of the same name (had: there was one).
type shadowed struct {
	name string
	prev scopeEntry
	had  bool
}

func (c *scopeChecker) visit(t Term) {
	if c.err != nil || t == nil {
		return
	}
	if !c.seen.add(t.base(), c.version) {
		return
	}
	_, tuple := t.(*Tuple)
	if tuple && t != c.top {
		c.err = errors.New("core: program: a tuple appears below the top level")
		return
	}
	if v, ok := t.(*Var); ok {
		c.use(v)
	} else {
		c.kids(t)
	}
	// After the children (so that a tuple below is reported as such, not as its parent's
	// missing type): every node but a tuple and the lets above it has an array type.
	if c.err == nil && !tuple && !t.Type().Dtype.Valid() && !c.seen.has(t.base(), tupleLetTag) {
		c.err = errors.Errorf("core: program: node %T has no type (build terms with the core constructors)", t)
	}
}

// use checks an occurrence of v against its binder.
func (c *scopeChecker) use(v *Var) {
	top, ok := c.env[v.Name]
	if !ok {
		c.err = errors.Errorf("core: program: free variable %s (%v) is not a parameter", v.Name, v.Type())
		return
	}
	if typ := top.bind.Type(); !typ.Equal(v.Type()) {
		if top.param {
			c.err = errors.Errorf("core: program: parameter %s has type %v but is used with type %v", v.Name, typ, v.Type())
		} else {
			c.err = errors.Errorf("core: program: variable %s bound with type %v is used with type %v", v.Name, typ, v.Type())
		}
	}
}

// kids visits t's children, each in the scope of the binders over it.
func (c *scopeChecker) kids(t Term) {
	var kb [4]Term // the children of most terms, without an allocation
	for k, kid := range appendChildren(kb[:0], t) {
		bound := BoundIn(t, k)
		if len(bound) == 0 {
			c.visit(kid)
			continue
		}
		for _, b := range bound {
			prev, had := c.env[b.Name]
			c.undo = append(c.undo, shadowed{name: b.Name, prev: prev, had: had})
			c.env[b.Name] = scopeEntry{bind: b}
		}
		saved := c.version
		if c.next == tupleLetTag-1 {
			c.err = errors.New("core: program: too many binder scopes to check")
			return
		}
		c.next++
		c.version = c.next
		c.visit(kid)
		c.version = saved
		for range bound {
			u := c.undo[len(c.undo)-1]
			c.undo[len(c.undo)-1] = shadowed{} // the buffer is pooled: keep no names
			c.undo = c.undo[:len(c.undo)-1]
			if u.had {
				c.env[u.name] = u.prev
			} else {
				delete(c.env, u.name)
			}
		}
	}
}

// FreeVarCache memoises the free variables of terms by node, so that asking for the free
// variables of every node of a program costs time linear in the program.
type FreeVarCache struct{ c *fvCache }

// NewFreeVarCache returns an empty cache.
func NewFreeVarCache() *FreeVarCache { return &FreeVarCache{c: newFVCache()} }

// Of returns the free variables of t by name. The map is shared with the cache: do not modify it.
func (c *FreeVarCache) Of(t Term) map[string]*Var { return c.c.of(t) }

// LetChain returns the lets around a program body, outermost first, and the term below them
// (the result: a tuple or one array). It iterates, so a chain of any length costs no stack.
func LetChain(body Term) (lets []*Let, result Term) {
	for {
		l, ok := body.(*Let)
		if !ok {
			return lets, body
		}
		lets = append(lets, l)
		body = l.Body
	}
}

func isTuple(t Term) bool { _, ok := t.(*Tuple); return ok }

// Results returns the components of a result term: a tuple's elements, or the term itself.
func Results(result Term) []Term {
	if tu, ok := result.(*Tuple); ok {
		return tu.Elems
	}
	return []Term{result}
}

// rebuildIndexed makes a gather or scatter of the same kind and shape as t (one of the two)
// with array x and the index function \vars -> outs.
func rebuildIndexed(t, x Term, vars []*Var, outs []Term) (Term, error) {
	fn, err := NewIndexFn(vars, outs)
	if err != nil {
		return nil, err
	}
	if g, ok := t.(*Gather); ok {
		return NewGather(g.Shape, x, fn)
	}
	return NewScatter(t.(*Scatter).Shape, x, fn)
}

// indexFn is the index function of a gather or scatter.
func indexFn(t Term) *IndexFn {
	if g, ok := t.(*Gather); ok {
		return g.Fn
	}
	return t.(*Scatter).Fn
}
