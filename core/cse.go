package core

import (
	"hash/maphash"
	"math"
	"reflect"
	"slices"
)

// CSE returns p with its structurally equal closed subterms made one term: of the terms Equal
// to each other (literal elements equal to the bit), the first one a post-order walk of the
// body meets stands for the others, and their parents are rebuilt on it. A closed term
// refers to no variable but p's parameters and the top-level lets of its body (whose names
// CSE requires to be distinct, as coarse raising does; it returns p unchanged otherwise): a
// term under a binder that refers to the bound variable keeps its own identity, so that no
// consumer that memoises terms by identity sees one term in two scopes. The result computes
// exactly what p computes; the lowering of one model's nodes and its gradient each build
// their own copies of what they share (an imported convolution's im2col gather, the stem
// max-pool's argmax), which a planner memoising by identity computes once each.
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
	c := &cse{top: top, chain: map[*node]bool{}, info: map[*node]*cseInfo{}, buckets: map[uint64][]Term{}, seed: maphash.MakeSeed()}
	for _, l := range chain {
		c.chain[l.base()] = true
	}
	body, err := c.walk(p.Body)
	if err != nil {
		return nil, err
	}
	if body == p.Body || c.shadowed {
		return p, nil // nothing shared, or a binder below hides a top-level name
	}
	return NewProgram(p.Params, body)
}

// cse is the state of one CSE pass.
type cse struct {
	top      map[string]bool    // parameters and top-level let names
	chain    map[*node]bool     // the top-level lets
	shadowed bool               // a binder other than a top-level let binds a top-level name
	info     map[*node]*cseInfo // per original term
	buckets  map[uint64][]Term  // candidates (rebuilt closed terms) by shallow hash
	eq       eqCache            // shallow comparison
	seed     maphash.Seed
}

// cseInfo is what the walk found for one term: its rebuilt form and its free variables
// (names other than the top-level ones; nil when closed).
type cseInfo struct {
	out  Term
	free []string
}

func (c *cse) walk(t Term) (Term, error) {
	if t == nil {
		return nil, nil
	}
	if in, ok := c.info[t.base()]; ok {
		return in.out, nil
	}
	var kb [4]Term
	kids := appendChildren(kb[:0], t)
	var nk []Term
	var free []string
	for i, k := range kids {
		o, err := c.walk(k)
		if err != nil {
			return nil, err
		}
		if o != k && nk == nil {
			nk = slices.Clone(kids)
		}
		if nk != nil {
			nk[i] = o
		}
		bound := BoundIn(t, i)
		if !c.chain[t.base()] {
			for _, b := range bound {
				if b != nil && c.top[b.Name] {
					c.shadowed = true
				}
			}
		}
		for _, v := range c.info[k.base()].free {
			if !slices.ContainsFunc(bound, func(b *Var) bool { return b != nil && b.Name == v }) && !slices.Contains(free, v) {
				free = append(free, v)
			}
		}
	}
	if v, ok := t.(*Var); ok && !c.top[v.Name] {
		free = append(free, v.Name)
	}
	out := t
	if nk != nil {
		var err error
		if out, err = Rebuild(t, nk); err != nil {
			return nil, err
		}
	}
	if len(free) == 0 {
		out = c.share(out)
	}
	c.info[t.base()] = &cseInfo{out: out, free: free}
	return out, nil
}

// share returns the first closed term met that is equal to t (t itself when none): t's
// children are already the shared ones, so a shallow comparison decides.
func (c *cse) share(t Term) Term {
	h := c.hash(t)
	for _, u := range c.buckets[h] {
		if c.same(t, u) {
			return u
		}
	}
	c.buckets[h] = append(c.buckets[h], t)
	return t
}

// same reports whether t and u are equal given shared children: the same construct and
// parameters (literal elements equal to the bit) and identical children.
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
		if a[i] != b[i] {
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

// hash is a hash of t's construct, type and children's identities (and a variable's name,
// a literal's first elements), equal for terms same may find equal.
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
		writeInt(&h, int(reflect.ValueOf(k).Pointer()))
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
