package core

import (
	"reflect"
	"slices"
)

// Equal reports whether a and b are structurally equal: the same constructs with the same
// parameters, variable names, literal values and shares, recursively. Binder names must match
// (it is not equality up to renaming). Linear in the number of distinct node pairs visited.
func Equal(a, b Term) bool {
	return (&eqCache{m: map[[2]*node]bool{}}).eq(a, b)
}

// eqCache memoises compared pairs by node identity (see Term.base).
type eqCache struct{ m map[[2]*node]bool }

func (c *eqCache) eq(a, b Term) bool {
	if a == b {
		return true
	}
	if a == nil || b == nil {
		return false
	}
	key := [2]*node{a.base(), b.base()}
	if r, ok := c.m[key]; ok {
		return r
	}
	r := c.shallow(a, b)
	if r {
		var ba, bb [4]Term // the children of most terms, without an allocation
		ka, kb := appendChildren(ba[:0], a), appendChildren(bb[:0], b)
		if len(ka) != len(kb) {
			r = false
		} else {
			for i := range ka {
				if !c.eq(ka[i], kb[i]) {
					r = false
					break
				}
			}
		}
	}
	c.m[key] = r
	return r
}

func sameVars(a, b []*Var) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !sameVar(a[i], b[i]) || (a[i] != nil && !a[i].Type().Equal(b[i].Type())) {
			return false
		}
	}
	return true
}

// sameVar compares binder names, tolerating nil binders (struct literals).
func sameVar(a, b *Var) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Name == b.Name
}

// shallow compares everything but the children.
func (c *eqCache) shallow(a, b Term) bool {
	if reflect.TypeOf(a) != reflect.TypeOf(b) { // the same construct (as %T would print)
		return false
	}
	if _, isTuple := a.(*Tuple); !isTuple {
		if !a.Type().Equal(b.Type()) {
			return false
		}
	}
	switch a := a.(type) {
	case *Var:
		return a.Name == b.(*Var).Name
	case *Lit:
		bl := b.(*Lit)
		if len(a.F) != len(bl.F) || len(a.I) != len(bl.I) || len(a.B) != len(bl.B) {
			return false
		}
		for i := range a.F {
			if a.F[i] != bl.F[i] && !(a.F[i] != a.F[i] && bl.F[i] != bl.F[i]) {
				return false
			}
		}
		for i := range a.I {
			if a.I[i] != bl.I[i] {
				return false
			}
		}
		for i := range a.B {
			if a.B[i] != bl.B[i] {
				return false
			}
		}
		return true
	case *Let:
		return sameVar(a.Var, b.(*Let).Var)
	case *Share:
		return a.ID == b.(*Share).ID
	case *Unary:
		return a.Op == b.(*Unary).Op
	case *Cast:
		return a.To == b.(*Cast).To
	case *Binary:
		return a.Op == b.(*Binary).Op
	case *Index:
		return len(a.Ix) == len(b.(*Index).Ix)
	case *Gather:
		bg := b.(*Gather)
		return a.Shape.Equal(bg.Shape) && (a.Fn == nil) == (bg.Fn == nil) && sameVars(fnVars(a.Fn), fnVars(bg.Fn)) && len(fnOut(a.Fn)) == len(fnOut(bg.Fn))
	case *Scatter:
		bs := b.(*Scatter)
		return a.Shape.Equal(bs.Shape) && (a.Fn == nil) == (bs.Fn == nil) && sameVars(fnVars(a.Fn), fnVars(bs.Fn)) && len(fnOut(a.Fn)) == len(fnOut(bs.Fn))
	case *FromVector:
		return len(a.Elems) == len(b.(*FromVector).Elems)
	case *Replicate:
		return a.N == b.(*Replicate).N
	case *Transpose:
		return slices.Equal(a.Perm, b.(*Transpose).Perm)
	case *Reshape:
		return a.Shape.Equal(b.(*Reshape).Shape)
	case *Build1:
		bb := b.(*Build1)
		return a.N == bb.N && sameVar(a.Var, bb.Var)
	case *Iota:
		return a.N == b.(*Iota).N
	case *Tuple:
		return len(a.Elems) == len(b.(*Tuple).Elems)
	}
	return true
}

// ProgramEqual reports whether two programs have the same parameters (names and types) and
// structurally equal bodies.
func ProgramEqual(a, b *Program) bool {
	if a == nil || b == nil {
		return a == b
	}
	return sameVars(a.Params, b.Params) && Equal(a.Body, b.Body)
}
