package core

import (
	"fmt"
	"hash/maphash"
	"maps"
	"math"
	"reflect"
	"slices"
	"strings"
)

// CSE returns p with its equal closed subterms made one term. Two terms are equal when they
// are Equal once the variables of their index binders (gather, scatter, build1) are renamed
// by position (the j-th variable of a binder nested d deep is ix__<d>_<j>), literal elements
// equal to the bit: of such terms, the first one a post-order walk of the body meets stands
// for the others, and their parents are rebuilt on it. A closed term refers to no variable
// but p's parameters and the top-level lets of its body (whose names CSE requires to be
// distinct, as coarse raising does); a term under a binder that refers to a variable bound
// there is never shared with a term elsewhere, so that no consumer that memoises terms by
// identity sees one term in two scopes. The result computes exactly what p computes (its
// index variables renamed). CSE returns p itself when nothing is shared, when a top-level
// name is bound again below, or when a top-level name or a let below the top level starts
// with ix__.
//
// The lowering of one model's nodes and its gradient each build their own copies of what
// they share (an imported convolution's im2col gather, once with the forward's index
// variables and once with the gradient's, the stem max-pool's argmax), which a planner
// memoising terms by identity would compute once each.
func CSE(p *Program) (*Program, error) {
	if p == nil || p.Body == nil {
		return p, nil
	}
	top := map[string]bool{}
	for _, v := range p.Params {
		top[v.Name] = true
	}
	chain, _ := LetChain(p.Body)
	for _, l := range chain {
		if top[l.Var.Name] {
			return p, nil // a name bound twice: scopes would matter
		}
		top[l.Var.Name] = true
	}
	c := &cse{top: top, chain: map[*node]bool{}, free: map[*node][]string{}, memo: map[cseKey]Term{},
		vars: map[string]*Var{}, buckets: map[uint64][]Term{}, class: map[*node]int{}, lets: map[string]int{}, seed: maphash.MakeSeed()}
	for _, l := range chain {
		c.chain[l.base()] = true
	}
	for name := range top {
		if strings.HasPrefix(name, csePrefix) {
			return p, nil
		}
	}
	c.freeOf(p.Body)
	if c.unsafe {
		return p, nil
	}
	body, err := c.walk(p.Body, nil, 0)
	if err != nil {
		return nil, err
	}
	if body == p.Body {
		return p, nil
	}
	return NewProgram(p.Params, body)
}

// csePrefix starts the canonical names of index variables.
const csePrefix = "ix__"

// cse is the state of one CSE pass.
type cse struct {
	top     map[string]bool    // parameters and top-level let names
	chain   map[*node]bool     // the top-level lets
	unsafe  bool               // a binder hides a top-level name, or a let below the top looks canonical
	free    map[*node][]string // per original term: its free names other than the top-level ones
	memo    map[cseKey]Term    // per original term and renaming of its free names: its result
	vars    map[string]*Var    // canonical variables by name and type
	buckets map[uint64][]Term  // the first term of each class, by hash
	class   map[*node]int      // the class of each walked term
	reps    []Term             // each class's first term
	lets    map[string]int     // per top-level let: the class of its bound term
	eq      eqCache            // shallow comparison
	seed    maphash.Seed
}

// cseKey is an original term with the renaming of its free variables in force.
type cseKey struct {
	n   *node
	env string
}

// freeOf returns t's free names other than the top-level ones (nil when closed), noting
// binders that hide a top-level name and names that start with csePrefix.
func (c *cse) freeOf(t Term) []string {
	if t == nil {
		return nil
	}
	if f, ok := c.free[t.base()]; ok {
		return f
	}
	var kb [4]Term
	var free []string
	for i, k := range appendChildren(kb[:0], t) {
		bound := BoundIn(t, i)
		_, isLet := t.(*Let)
		for _, b := range bound {
			// index variables are renamed (a program CSE made before has canonical names
			// already); a let below the top level keeps its name, which must not hide a
			// top-level one nor look like a canonical one
			if b != nil && isLet && !c.chain[t.base()] && (c.top[b.Name] || strings.HasPrefix(b.Name, csePrefix)) {
				c.unsafe = true
			}
			if b != nil && !isLet && c.top[b.Name] {
				c.unsafe = true
			}
		}
		for _, v := range c.freeOf(k) {
			if !slices.ContainsFunc(bound, func(b *Var) bool { return b != nil && b.Name == v }) && !slices.Contains(free, v) {
				free = append(free, v)
			}
		}
	}
	if v, ok := t.(*Var); ok && !c.top[v.Name] {
		free = append(free, v.Name)
	}
	c.free[t.base()] = free
	return free
}

// walk returns t with its index variables renamed (env: the renaming of the variables bound
// around t, depth: how many index binders enclose t) and its closed subterms shared.
func (c *cse) walk(t Term, env map[string]string, depth int) (Term, error) {
	if t == nil {
		return nil, nil
	}
	free := c.freeOf(t)
	key := cseKey{n: t.base(), env: envKey(free, env)}
	if out, ok := c.memo[key]; ok {
		return out, nil
	}
	out, err := c.rename(t, env, depth)
	if err != nil {
		return nil, err
	}
	out = c.share(out, len(free) == 0)
	c.memo[key] = out
	return out, nil
}

// rename is walk's rebuilding of t, before sharing.
func (c *cse) rename(t Term, env map[string]string, depth int) (Term, error) {
	if v, ok := t.(*Var); ok {
		name, ok := env[v.Name]
		if !ok {
			return t, nil
		}
		key := name + " " + v.Type().String()
		if nv, ok := c.vars[key]; ok {
			return nv, nil
		}
		nv, err := NewVar(name, v.Type())
		if err != nil {
			return nil, err
		}
		c.vars[key] = nv
		return nv, nil
	}
	var binders []*Var
	switch x := t.(type) {
	case *Gather:
		binders = fnVars(x.Fn)
	case *Scatter:
		binders = fnVars(x.Fn)
	case *Build1:
		binders = []*Var{x.Var}
	}
	var inner map[string]string // the renaming under t's index binder
	var renamed []*Var
	for j, b := range binders {
		if inner == nil {
			inner = maps.Clone(env)
			if inner == nil {
				inner = map[string]string{}
			}
		}
		name := fmt.Sprintf("%s%d_%d", csePrefix, depth, j)
		inner[b.Name] = name
		nv, err := c.rename(b, inner, depth+1)
		if err != nil {
			return nil, err
		}
		renamed = append(renamed, nv.(*Var))
	}
	var kb [4]Term
	kids := appendChildren(kb[:0], t)
	nk := make([]Term, len(kids))
	changed := false
	for i, k := range kids {
		ce, cd := env, depth
		if bound := BoundIn(t, i); len(bound) > 0 {
			if inner != nil {
				ce, cd = inner, depth+1
			} else { // a let below the top level: its name hides an outer index variable
				for _, b := range bound {
					if _, ok := ce[b.Name]; ok {
						ce = maps.Clone(ce)
						delete(ce, b.Name)
					}
				}
			}
		}
		o, err := c.walk(k, ce, cd)
		if err != nil {
			return nil, err
		}
		if l, isLet := t.(*Let); isLet && i == 0 && c.chain[t.base()] {
			c.lets[l.Var.Name] = c.class[o.base()] // its uses are of its bound term's class
		}
		nk[i] = o
		changed = changed || o != k
	}
	if renamed != nil {
		return rebind(t, nk, renamed)
	}
	if !changed {
		return t, nil
	}
	return Rebuild(t, nk)
}

// envKey is the renaming env restricted to the names free, in a fixed order.
func envKey(free []string, env map[string]string) string {
	if len(free) == 0 || len(env) == 0 {
		return ""
	}
	var b strings.Builder
	for _, v := range free {
		if n, ok := env[v]; ok {
			b.WriteString(v)
			b.WriteByte('=')
			b.WriteString(n)
			b.WriteByte(';')
		}
	}
	return b.String()
}

// share puts t (with its children already walked) in its class of equal terms and returns
// the class's first term when t is closed, t itself otherwise: open terms are matched (their
// classes make their parents comparable) but never replaced.
func (c *cse) share(t Term, closed bool) Term {
	if v, isVar := t.(*Var); isVar {
		if id, isLet := c.lets[v.Name]; isLet {
			// a use of a top-level let is of its bound term's class, so that a term reading
			// the let and one computing its bound inline are found equal (a gradient's
			// primal lets recompute a batch norm's statistics the forward computes inline),
			// but stays the use: the let's value is read, never its term planned again
			c.class[t.base()] = id
			return t
		}
	}
	id, ok := c.class[t.base()]
	if !ok {
		id = -1
		h := c.hash(t)
		for _, u := range c.buckets[h] {
			if c.same(t, u) {
				id = c.class[u.base()]
				break
			}
		}
		if id < 0 {
			id = len(c.reps)
			c.reps = append(c.reps, t)
			c.buckets[h] = append(c.buckets[h], t)
		}
		c.class[t.base()] = id
	}
	if closed {
		return c.reps[id]
	}
	return t
}

// same reports whether t and u are equal given walked children: the same construct and
// parameters (literal elements equal to the bit) and children of the same classes.
func (c *cse) same(t, u Term) bool {
	if t == u {
		return true
	}
	var ka, kb [4]Term
	a, b := appendChildren(ka[:0], t), appendChildren(kb[:0], u)
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if c.class[a[i].base()] != c.class[b[i].base()] {
			return false
		}
	}
	if lt, ok := t.(*Lit); ok {
		lu := u.(*Lit)
		if !lt.Type().Equal(lu.Type()) || len(lt.F) != len(lu.F) || !slices.Equal(lt.I, lu.I) || !slices.Equal(lt.B, lu.B) {
			return false
		}
		for i, v := range lt.F {
			if math.Float64bits(v) != math.Float64bits(lu.F[i]) {
				return false
			}
		}
		return true
	}
	return c.eq.shallow(t, u)
}

// hash is a hash of t's construct, type and children's classes (and a variable's name, a
// literal's first elements), equal for terms same may find equal.
func (c *cse) hash(t Term) uint64 {
	var h maphash.Hash
	h.SetSeed(c.seed)
	h.WriteString(reflect.TypeOf(t).String())
	if _, isTuple := t.(*Tuple); !isTuple {
		ty := t.Type()
		h.WriteByte(byte(ty.Dtype))
		for _, d := range ty.Shape {
			writeInt(&h, d)
		}
	}
	var kb [4]Term
	for _, k := range appendChildren(kb[:0], t) {
		writeInt(&h, c.class[k.base()])
	}
	switch t := t.(type) {
	case *Var:
		h.WriteString(t.Name)
	case *Lit:
		for i := 0; i < min(len(t.F), 4); i++ {
			writeInt(&h, int(math.Float64bits(t.F[i])))
		}
		for i := 0; i < min(len(t.I), 4); i++ {
			writeInt(&h, int(t.I[i]))
		}
	}
	return h.Sum64()
}

func writeInt(h *maphash.Hash, v int) {
	var b [8]byte
	for i := range b {
		b[i] = byte(v >> (8 * i))
	}
	h.Write(b[:])
}
