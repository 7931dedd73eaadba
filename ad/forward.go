package ad

import (
	"github.com/bulkad/bulkad/core"
	"github.com/pkg/errors"
)

// binding is one primal let of the artifact: Var = Term, in order.
type binding struct {
	Var  *core.Var
	Term core.Term
}

// dual is the result of the forward pass on one term: its primal term (over the primal
// bindings) and, for float terms, its Delta.
type dual struct {
	p core.Term
	d *Delta
}

// forward is the forward transformation of paper 000, Figs. 14–15, done directly on the
// (BOT-normal) core term: instead of emitting monadic code and simplifying it into the form of
// Eq. (6), it produces that form at once — a list of primal let-bindings (every let of the input,
// hoisted to the top with its name, plus bindings for primal values that the Delta refers to),
// the primal result term, and the symbolic Delta of the result. Lets can be hoisted because
// cond is strict and every operation is total (§5.2) and because uniquify made every let name
// distinct. Index terms and index functions are copied, not differentiated (§6.2–6.3).
type forward struct {
	g      deltaBuilder
	b      core.Builder
	namer  *core.Namer
	binds  []binding
	memo   map[core.Term]*dual
	env    map[string]*Delta
	atoms  map[core.Term]core.Term
	refs   map[core.Term]int
	consts map[constKey]core.Term
	// letFor maps the bound term of a let to its variable, so that when the forward pass
	// needs that term's primal as a variable (a scaling factor), it binds it under the let's
	// own name (Options.Keep relies on let names and bound terms surviving).
	letFor  map[core.Term]*core.Var
	emitted map[*core.Var]bool
	// tuple, set by a JVP of a program with a tuple result, receives the duals of the
	// tuple's components (a tuple anywhere else stays an error).
	tuple *[]*dual
}

type constKey struct {
	shape string
	dt    core.Dtype
	v     float64
}

func newForward(p *core.Program, namer *core.Namer, wrt map[string]bool) *forward {
	f := &forward{
		namer:   namer,
		env:     map[string]*Delta{},
		atoms:   map[core.Term]core.Term{},
		refs:    map[core.Term]int{},
		consts:  map[constKey]core.Term{},
		letFor:  map[core.Term]*core.Var{},
		emitted: map[*core.Var]bool{},
	}
	for _, v := range p.Params {
		if !v.Type().Dtype.IsFloat() {
			continue
		}
		if wrt[v.Name] {
			f.env[v.Name] = &Delta{Kind: DInput, Type: v.Type(), Name: v.Name}
		} else {
			f.env[v.Name] = zeroDelta(v.Type())
		}
	}
	var kb [4]core.Term
	core.PostOrder(p.Body, func(t core.Term) {
		kids := core.AppendChildren(kb[:0], t)
		for k, c := range kids {
			if len(core.BoundIn(t, k)) > 0 {
				if _, isLet := t.(*core.Let); !isLet {
					continue
				}
			}
			f.refs[c]++
		}
	})
	f.memo = make(map[core.Term]*dual, len(f.refs)+1) // about one dual per node
	return f
}

// atom returns a variable or literal equal to primal term p, let-binding p if needed.
func (f *forward) atom(p core.Term) core.Term {
	switch p.(type) {
	case *core.Var, *core.Lit:
		return p
	}
	if a, ok := f.atoms[p]; ok {
		return a
	}
	v := f.namer.FreshVar("p", p.Type())
	f.binds = append(f.binds, binding{Var: v, Term: p})
	f.atoms[p] = v
	return v
}

// selfAtom is atom for the primal p of node t: if t is the bound term of a let not yet
// emitted, p is bound to that let's variable.
func (f *forward) selfAtom(t core.Term, p core.Term) core.Term {
	if v, ok := f.letFor[t]; ok && !f.emitted[v] {
		switch p.(type) {
		case *core.Var, *core.Lit:
			return p
		}
		f.binds = append(f.binds, binding{Var: v, Term: p})
		f.emitted[v] = true
		f.atoms[p] = v
		return v
	}
	return f.atom(p)
}

// constant is an array of type t filled with v, as replicates of a scalar literal.
func (f *forward) constant(t core.Type, v float64) core.Term {
	key := constKey{t.Shape.String(), t.Dtype, v}
	if c, ok := f.consts[key]; ok {
		return c
	}
	c := f.b.Full(t, v)
	f.consts[key] = c
	return c
}

func (f *forward) run(t core.Term) (*dual, error) {
	r := f.visit(t)
	if err := f.b.Err(); err != nil {
		return nil, err
	}
	if r == nil {
		return nil, errors.New("ad: forward: internal error: no result")
	}
	return r, nil
}

func (f *forward) visit(t core.Term) *dual {
	if f.b.Err() != nil {
		return nil
	}
	if r, ok := f.memo[t]; ok {
		return r
	}
	r := f.visit1(t)
	if r == nil {
		if f.b.Err() == nil {
			f.b.SetErr(errors.Errorf("ad: forward: cannot differentiate %T", t))
		}
		return nil
	}
	// A primal value used by several parents is bound once.
	if f.refs[t] > 1 {
		if _, isLet := t.(*core.Let); !isLet {
			r = &dual{p: f.selfAtom(t, r.p), d: r.d}
		}
	}
	f.memo[t] = r
	return r
}

func isFloat(t core.Term) bool { return t.Type().Dtype.IsFloat() }

// rebuildPrimal rebuilds t from the primal terms of its children (children under binders are
// copied unchanged); for terms whose result is not float, this is the whole transformation.
func (f *forward) rebuildPrimal(t core.Term) []core.Term {
	return freeChildren(t, func(c core.Term) core.Term {
		if r := f.visit(c); r != nil {
			return r.p
		}
		return nil
	})
}

// freeChildren maps g over the children of t that bind no variable of t (the others are
// kept as they are); nil as soon as g returns nil.
func freeChildren(t core.Term, g func(core.Term) core.Term) []core.Term {
	var kb [4]core.Term // the children of most terms, without an allocation
	kids := core.AppendChildren(kb[:0], t)
	nk := make([]core.Term, len(kids))
	for k, c := range kids {
		if len(core.BoundIn(t, k)) > 0 {
			nk[k] = c
			continue
		}
		if nk[k] = g(c); nk[k] == nil {
			return nil
		}
	}
	return nk
}

func (f *forward) primalOnly(t core.Term) *dual {
	nk := f.rebuildPrimal(t)
	if nk == nil {
		return nil
	}
	p := f.b.Rebuild(t, nk)
	if p == nil {
		return nil
	}
	r := &dual{p: p}
	if isFloat(t) {
		r.d = zeroDelta(t.Type())
	}
	return r
}

// visit1 dispatches on the construct: binding and structural terms here, float operations
// in floatOp.
func (f *forward) visit1(t core.Term) *dual {
	switch t := t.(type) {
	case *core.Var:
		return f.variable(t)
	case *core.Lit, *core.Iota:
		return f.primalOnly(t)
	case *core.Let:
		return f.let(t)
	case *core.Share:
		return f.visit(t.Body)
	case *core.Build1:
		if isFloat(t) {
			f.b.SetErr(errors.Errorf("ad: forward: build1 of type %v remains; differentiate the output of the BOT (do not set SkipBOT for programs with float build1)", t.Type()))
			return nil
		}
		return f.primalOnly(t)
	case *core.Tuple:
		return f.tupleResult(t)
	default:
		return f.floatOp(t)
	}
}

// floatOp is the forward rule of an operation: the primal only for a non-float result.
func (f *forward) floatOp(t core.Term) *dual {
	if !isFloat(t) {
		return f.primalOnly(t)
	}
	switch t := t.(type) {
	case *core.Cond:
		return f.cond(t)
	case *core.Unary:
		return f.unary(t)
	case *core.Cast:
		return f.cast(t)
	case *core.Binary:
		return f.binary(t)
	case *core.FromVector:
		return f.fromVector(t)
	case *core.Replicate, *core.Transpose, *core.Reshape, *core.Gather, *core.Scatter, *core.Index, *core.SumOuter:
		return f.structural(t)
	case *core.MatMul:
		return f.matMul(t)
	}
	return nil
}

func (f *forward) variable(t *core.Var) *dual {
	r := &dual{p: t}
	if isFloat(t) {
		d, ok := f.env[t.Name]
		if !ok {
			f.b.SetErr(errors.Errorf("ad: forward: float variable %s is not bound by a parameter or a let", t.Name))
			return nil
		}
		r.d = d
	}
	return r
}

func (f *forward) let(t *core.Let) *dual {
	if _, ok := f.letFor[t.Bound]; !ok {
		f.letFor[t.Bound] = t.Var
	}
	u := f.visit(t.Bound)
	if u == nil {
		return nil
	}
	if !f.emitted[t.Var] {
		f.binds = append(f.binds, binding{Var: t.Var, Term: u.p})
		f.emitted[t.Var] = true
		if _, ok := f.atoms[u.p]; !ok {
			f.atoms[u.p] = t.Var
		}
	}
	if isFloat(t.Var) {
		f.env[t.Var.Name] = u.d
	}
	return f.visit(t.Body)
}

func (f *forward) tupleResult(t *core.Tuple) *dual {
	if f.tuple == nil || *f.tuple != nil {
		f.b.SetErr(errors.New("ad: forward: a tuple result cannot be differentiated; differentiate each component"))
		return nil
	}
	ds := make([]*dual, len(t.Elems))
	ps := make([]core.Term, len(t.Elems))
	for k, e := range t.Elems {
		if ds[k] = f.visit(e); ds[k] == nil {
			return nil
		}
		ps[k] = ds[k].p
	}
	*f.tuple = ds
	return &dual{p: f.b.Tuple(ps...)}
}

func (f *forward) cond(t *core.Cond) *dual {
	c := f.visit(t.C)
	u := f.visit(t.Then)
	v := f.visit(t.Else)
	if c == nil || u == nil || v == nil {
		return nil
	}
	ca := f.atom(c.p)
	r := &dual{p: f.b.Cond(ca, u.p, v.p)}
	if u.d.IsZero() && v.d.IsZero() {
		r.d = zeroDelta(t.Type())
	} else {
		r.d = f.g.share(&Delta{Kind: DSelect, Type: t.Type(), Cond: ca, A: u.d, B: v.d})
	}
	return r
}

func (f *forward) cast(t *core.Cast) *dual {
	x := f.visit(t.X)
	if x == nil {
		return nil
	}
	r := &dual{p: f.b.Cast(t.To, x.p)}
	switch {
	case !isFloat(t.X):
		r.d = zeroDelta(t.Type())
	case t.X.Type().Dtype == t.To:
		r.d = x.d
	default:
		r.d = f.g.share(f.g.unary(DCast, t.Type(), x.d))
	}
	return r
}

func (f *forward) fromVector(t *core.FromVector) *dual {
	ps := make([]core.Term, len(t.Elems))
	ds := make([]*Delta, len(t.Elems))
	allZero := true
	for k, e := range t.Elems {
		r := f.visit(e)
		if r == nil {
			return nil
		}
		ps[k], ds[k] = r.p, r.d
		if !r.d.IsZero() {
			allZero = false
		}
	}
	r := &dual{p: f.b.FromVector(ps...), d: zeroDelta(t.Type())}
	if !allZero {
		r.d = f.g.share(&Delta{Kind: DFromVector, Type: t.Type(), Elems: ds})
	}
	return r
}

// structural is the rule of the linear structural operations: the same operation on the
// tangent (for index, at the primal indices).
func (f *forward) structural(t core.Term) *dual {
	b := &f.b
	var kb [4]core.Term
	x := f.visit(core.AppendChildren(kb[:0], t)[0])
	if x == nil {
		return nil
	}
	var p core.Term
	d := Delta{Type: t.Type(), A: x.d}
	switch t := t.(type) {
	case *core.Replicate:
		p, d.Kind, d.N = b.Replicate(t.N, x.p), DReplicate, t.N
	case *core.Transpose:
		p, d.Kind, d.Perm = b.Transpose(t.Perm, x.p), DTranspose, t.Perm
	case *core.Reshape:
		p, d.Kind, d.Shape = b.Reshape(t.Shape, x.p), DReshape, t.Shape
	case *core.Gather:
		p, d.Kind, d.Shape, d.Fn = b.Gather(t.Shape, x.p, t.Fn), DGather, t.Shape, t.Fn
	case *core.Scatter:
		p, d.Kind, d.Shape, d.Fn = b.Scatter(t.Shape, x.p, t.Fn), DScatter, t.Shape, t.Fn
	case *core.SumOuter:
		p, d.Kind = b.SumOuter(x.p), DSumOuter
	case *core.Index:
		d.Kind, d.Ix = DIndex, make([]core.Term, len(t.Ix))
		for k, e := range t.Ix {
			r := f.visit(e)
			if r == nil {
				return nil
			}
			d.Ix[k] = f.atom(r.p)
		}
		p = b.Index(x.p, d.Ix...)
	}
	r := &dual{p: p, d: zeroDelta(t.Type())}
	if !x.d.IsZero() {
		r.d = f.g.share(&d)
	}
	return r
}

func (f *forward) matMul(t *core.MatMul) *dual {
	x := f.visit(t.X)
	y := f.visit(t.Y)
	if x == nil || y == nil {
		return nil
	}
	var dl, dr *Delta
	xp, yp := x.p, y.p
	if !x.d.IsZero() {
		yp = f.atom(y.p)
		dl = &Delta{Kind: DMatMulL, Type: t.Type(), A: x.d, Other: yp}
	} else {
		dl = zeroDelta(t.Type())
	}
	if !y.d.IsZero() {
		xp = f.atom(x.p)
		dr = &Delta{Kind: DMatMulR, Type: t.Type(), A: y.d, Other: xp}
	} else {
		dr = zeroDelta(t.Type())
	}
	return &dual{p: f.b.MatMul(xp, yp), d: f.g.share(f.g.add(dl, dr))}
}

func (f *forward) unary(t *core.Unary) *dual {
	g := &f.g
	b := &f.b
	x := f.visit(t.X)
	if x == nil {
		return nil
	}
	ty := t.Type()
	if x.d.IsZero() {
		return &dual{p: b.Unary(t.Op, x.p), d: zeroDelta(ty)}
	}
	rule := t.Op.Facts().Deriv
	if rule.Kind != core.DerivRule {
		// The derivative does not read the operand: it is not bound to a variable.
		p := b.Unary(t.Op, x.p)
		if p == nil {
			return nil
		}
		switch rule.Kind {
		case core.DerivZero:
			return &dual{p: p, d: zeroDelta(ty)}
		case core.DerivLinear:
			return &dual{p: p, d: g.share(f.linear(ty, rule.Coef, x.d))}
		}
		b.SetErr(errors.Errorf("ad: forward: no derivative for %v", t.Op))
		return nil
	}
	e := &derivEnv{f: f, t: t, ty: ty, x: f.atom(x.p)}
	if e.p = b.Unary(t.Op, e.x); e.p == nil {
		return nil
	}
	factor := rule.Factor(e)
	return &dual{p: e.p, d: g.share(g.scale(factor, x.d))}
}

// linear is c·d: d for c = 1, neg d for c = -1.
func (f *forward) linear(ty core.Type, c float64, d *Delta) *Delta {
	switch c {
	case 1:
		return d
	case -1:
		return f.g.neg(d)
	}
	return f.g.scale(f.constant(ty, c), d)
}

func (f *forward) binary(t *core.Binary) *dual {
	if r, ok := f.normalisedExp(t); ok {
		return r
	}
	g := &f.g
	b := &f.b
	x := f.visit(t.X)
	y := f.visit(t.Y)
	if x == nil || y == nil {
		return nil
	}
	ty := t.Type()
	if x.d.IsZero() && y.d.IsZero() {
		return &dual{p: b.Binary(t.Op, x.p, y.p), d: zeroDelta(ty)}
	}
	rule := t.Op.Facts().Deriv
	switch rule.Kind {
	case core.DerivLinear:
		p := b.Binary(t.Op, x.p, y.p)
		return &dual{p: p, d: g.share(g.add(f.linear(ty, rule.Coef[0], x.d), f.linear(ty, rule.Coef[1], y.d)))}
	case core.DerivRule:
	default:
		b.SetErr(errors.Errorf("ad: forward: no derivative for %v", t.Op.Word()))
		return nil
	}
	e := &derivEnv{f: f, t: t, ty: ty, x: f.atom(x.p), y: f.atom(y.p)}
	if e.p = b.Binary(t.Op, e.x, e.y); e.p == nil {
		return nil
	}
	// factors for dx and dy; nil means no contribution
	fx, fy := rule.Factors(e, !x.d.IsZero(), !y.d.IsZero())
	dx, dy := zeroDelta(ty), zeroDelta(ty)
	if fx != nil {
		dx = g.scale(fx, x.d)
	}
	if fy != nil {
		dy = g.scale(fy, y.d)
	}
	return &dual{p: e.p, d: g.share(g.add(dx, dy))}
}

// derivEnv is the core.DerivEnv of one unary or binary node t: its operands as atoms, its
// primal p (bound to a variable on the first call of Result).
type derivEnv struct {
	f        *forward
	t        core.Term
	ty       core.Type
	x, y, p  core.Term
	resultOK bool
}

// Builder is the forward pass's builder.
func (e *derivEnv) Builder() core.TermBuilder { return &e.f.b }

// X is the first operand's primal as an atom.
func (e *derivEnv) X() core.Term { return e.x }

// Y is the second operand's primal as an atom (nil for a unary node).
func (e *derivEnv) Y() core.Term { return e.y }

// Const is the constant of the node's type (shared between uses).
func (e *derivEnv) Const(v float64) core.Term { return e.f.constant(e.ty, v) }

// Atom binds t to a variable among the primal bindings.
func (e *derivEnv) Atom(t core.Term) core.Term { return e.f.atom(t) }

// Select is Builder.Select with the forward pass's namer.
func (e *derivEnv) Select(mask, a, b core.Term) core.Term {
	return e.f.b.Select(e.f.namer, mask, a, b)
}

// Result binds the node's primal to a variable (its let's own, if it is a let's bound term)
// and returns it; the node's dual then holds the variable.
func (e *derivEnv) Result() core.Term {
	if !e.resultOK {
		e.p = e.f.selfAtom(e.t, e.p)
		e.resultOK = true
	}
	return e.p
}
