package core

import "github.com/pkg/errors"

// ---- elaboration ----

type elaborator struct {
	scope  map[string]*Var
	shares map[*syn]Term
}

func newElaborator() *elaborator {
	return &elaborator{scope: map[string]*Var{}, shares: map[*syn]Term{}}
}

// wrapAt prefixes a constructor's error with the position of the construct.
func wrapAt(t token, err error) error {
	return errors.Wrapf(err, "core: parse: line %d:%d", t.line, t.col)
}

// flexible reports whether the dtype of s is decided by its context: a floating literal, or
// an element-wise, stacking or reshaping construct over flexible operands only. A flexible
// subtree contains no variables and no shares, so the order in which it is elaborated
// relative to its siblings does not matter.
func flexible(s *syn) bool {
	if s.flex == 0 {
		s.flex = -1
		if flexibleNode(s) {
			s.flex = 1
		}
	}
	return s.flex > 0
}

func flexibleNode(s *syn) bool {
	switch s.kind {
	case synFloat:
		return true
	case synUnary:
		return s.unop.Accepts(Float64) && flexible(s.kids[0])
	case synBinary:
		// a float operation whose result has its operands' dtype
		if f := s.binop.Facts(); f.Dtypes.Has(Float64) && !f.Compare {
			return flexible(s.kids[0]) && flexible(s.kids[1])
		}
	case synFromVector:
		for _, k := range s.kids {
			if !flexible(k) {
				return false
			}
		}
		return len(s.kids) > 0
	case synReplicate, synTr, synReshape:
		return flexible(s.kids[0])
	}
	return false
}

// bind puts variables in scope and returns a function restoring the previous scope.
func (e *elaborator) bind(vs []*Var) func() {
	type saved struct {
		old *Var
		had bool
	}
	olds := make([]saved, len(vs))
	for i, v := range vs {
		o, had := e.scope[v.Name]
		olds[i] = saved{o, had}
		e.scope[v.Name] = v
	}
	return func() {
		for i := len(vs) - 1; i >= 0; i-- {
			if olds[i].had {
				e.scope[vs[i].Name] = olds[i].old
			} else {
				delete(e.scope, vs[i].Name)
			}
		}
	}
}

func (e *elaborator) indexVars(ts []token) ([]*Var, error) {
	vs := make([]*Var, len(ts))
	for i, t := range ts {
		v, err := NewVar(t.text, Scalar(Int64))
		if err != nil {
			return nil, wrapAt(t, err)
		}
		vs[i] = v
	}
	return vs, nil
}

// pair elaborates two operands that must have one dtype, the flexible one last so that it
// takes the other's dtype.
func (e *elaborator) pair(a, b *syn, hint Dtype) (Term, Term, error) {
	if flexible(a) && !flexible(b) {
		y, x, err := e.inOrder(b, a, hint)
		return x, y, err
	}
	return e.inOrder(a, b, hint)
}

// inOrder elaborates first with hint, then second with first's dtype as its hint.
func (e *elaborator) inOrder(first, second *syn, hint Dtype) (Term, Term, error) {
	x, err := e.term(first, hint)
	if err != nil {
		return nil, nil, err
	}
	y, err := e.term(second, x.Type().Dtype)
	if err != nil {
		return nil, nil, err
	}
	return x, y, nil
}

// broadcast replicates the scalar x to shape sh.
func broadcast(x Term, sh Shape) (Term, error) {
	for i := len(sh) - 1; i >= 0; i-- {
		r, err := NewReplicate(sh[i], x)
		if err != nil {
			return nil, err
		}
		x = r
	}
	return x, nil
}

func (e *elaborator) terms(ss []*syn, hint Dtype) ([]Term, error) {
	ts := make([]Term, len(ss))
	for i, s := range ss {
		t, err := e.term(s, hint)
		if err != nil {
			return nil, err
		}
		ts[i] = t
	}
	return ts, nil
}

// binding elaborates with elab under the index variables named by names (see indexVars),
// bound in scope; it returns them and elab's result.
func binding[T any](e *elaborator, names []token, elab func() (T, error)) ([]*Var, T, error) {
	var zero T
	vs, err := e.indexVars(names)
	if err != nil {
		return nil, zero, err
	}
	restore := e.bind(vs)
	x, err := elab()
	restore()
	if err != nil {
		return nil, zero, err
	}
	return vs, x, nil
}

// oneOperand lists the constructs with a single operand (their only kid): whether the
// operand gets the context's dtype hint (it does where the operand's dtype is the result's),
// and how to make the term from the syntax node and the elaborated operand (term's keep
// discards the term on an error, so a typed nil pointer goes no further).
var oneOperand = map[synKind]struct {
	hinted    bool
	construct func(s *syn, x Term) (Term, error)
}{
	synUnary:     {true, func(s *syn, x Term) (Term, error) { return NewUnary(s.unop, x) }},
	synCast:      {false, func(s *syn, x Term) (Term, error) { return NewCast(s.dtype, x) }},
	synSumOuter:  {true, func(s *syn, x Term) (Term, error) { return NewSumOuter(x) }},
	synArgmax:    {false, func(s *syn, x Term) (Term, error) { return NewArgmaxOuter(x) }},
	synReplicate: {true, func(s *syn, x Term) (Term, error) { return NewReplicate(s.n, x) }},
	synTr:        {true, func(s *syn, x Term) (Term, error) { return NewTranspose(s.ints, x) }},
	synReshape:   {true, func(s *syn, x Term) (Term, error) { return NewReshape(Shape(s.ints), x) }},
}

// keeper returns the wrapper of a constructor result for the syntax node at at: the
// constructor's error with the position, or an error for a type too large to address.
func keeper(at token) func(t Term, err error) (Term, error) {
	return func(t Term, err error) (Term, error) {
		if err != nil {
			return nil, wrapAt(at, err)
		}
		if ty := t.Type(); tooLarge(ty.Shape) || unaddressable(ty) {
			return nil, errors.Errorf("core: parse: line %d:%d: result type %v needs %s, more than can be addressed (%s)", at.line, at.col, ty, FormatBytes(TypeBytes(ty)), FormatBytes(MaxAddressableBytes))
		}
		return t, nil
	}
}

// term elaborates s; hint is the dtype the context needs (InvalidDtype when none), used by
// floating literals.
func (e *elaborator) term(s *syn, hint Dtype) (Term, error) {
	op, ok := oneOperand[s.kind]
	if !ok {
		return e.compound(s, hint)
	}
	h := InvalidDtype
	if op.hinted {
		h = hint
	}
	x, err := e.term(s.kids[0], h)
	if err != nil {
		return nil, err
	}
	return keeper(s.at)(op.construct(s, x))
}

// compound elaborates the syntax nodes that are not in oneOperand.
func (e *elaborator) compound(s *syn, hint Dtype) (Term, error) {
	at := s.at
	switch s.kind {
	case synVar:
		v, ok := e.scope[s.name]
		if !ok {
			return nil, errors.Errorf("core: parse: line %d:%d: variable %s is not bound", at.line, at.col, s.name)
		}
		return v, nil
	case synInt:
		return ScalarI(s.ival), nil
	case synBool:
		return ScalarB(s.bval), nil
	case synFloat:
		return floatLit(s, hint)
	case synLit:
		return lit(s)
	case synLet:
		return e.letChain(s, hint)
	case synShare:
		return e.share(s)
	case synCond:
		c, err := e.term(s.kids[0], InvalidDtype)
		if err != nil {
			return nil, err
		}
		u, v, err := e.pair(s.kids[1], s.kids[2], hint)
		if err != nil {
			return nil, err
		}
		return keeper(at)(NewCond(c, u, v))
	case synBinary:
		return e.binary(s, hint)
	case synIndex:
		x, err := e.term(s.kids[0], hint)
		if err != nil {
			return nil, err
		}
		ix, err := e.terms(s.kids[1:], InvalidDtype)
		if err != nil {
			return nil, err
		}
		return keeper(at)(NewIndex(x, ix))
	case synGather, synScatter:
		return e.indexed(s, hint)
	case synFromVector:
		return e.fromVector(s, hint)
	case synBuild1, synBuild:
		return e.build(s, hint)
	case synIota:
		return keeper(at)(NewIota(s.n))
	case synMatMul:
		x, y, err := e.pair(s.kids[0], s.kids[1], hint)
		if err != nil {
			return nil, err
		}
		return keeper(at)(NewMatMul(x, y))
	case synTuple:
		ts, err := e.terms(s.kids, InvalidDtype)
		if err != nil {
			return nil, err
		}
		return keeper(at)(NewTuple(ts))
	default:
		return nil, errors.Errorf("core: parse: line %d:%d: internal error: unknown syntax node %d", at.line, at.col, s.kind)
	}
}

// floatLit is a floating literal, f32 when the context needs it, else f64.
func floatLit(s *syn, hint Dtype) (Term, error) {
	d, bits := Float64, 64
	if hint == Float32 {
		d, bits = Float32, 32
	}
	v, err := parseFloat(s.at.text, s.neg, bits)
	if err != nil {
		return nil, errors.Errorf("core: parse: line %d:%d: floating literal %s out of the %v range", s.at.line, s.at.col, signed(s.at.text, s.neg), d)
	}
	return ScalarF(d, v), nil
}

// lit is an array literal (lit T [v, …]).
func lit(s *syn) (Term, error) {
	keep := keeper(s.at)
	switch {
	case s.typ.Dtype.IsFloat():
		return keep(NewLitF(s.typ, nonNil(s.fvals)))
	case s.typ.Dtype == Int64:
		return keep(NewLitI(s.typ.Shape, nonNil(s.ivals)))
	default:
		return keep(NewLitB(s.typ.Shape, nonNil(s.bvals)))
	}
}

// nonNil is vals, or an empty slice for nil.
func nonNil[T any](vals []T) []T {
	if vals == nil {
		return []T{}
	}
	return vals
}

// share elaborates a share node once: every occurrence of the same syntax node is one term.
func (e *elaborator) share(s *syn) (Term, error) {
	if t, ok := e.shares[s]; ok {
		return t, nil
	}
	body, err := e.term(s.kids[0], InvalidDtype)
	if err != nil {
		return nil, err
	}
	t, err := keeper(s.at)(NewShare(s.n, body))
	if err != nil {
		return nil, err
	}
	e.shares[s] = t
	return t, nil
}

// binary elaborates a binary operation, broadcasting a scalar operand to the other's shape.
func (e *elaborator) binary(s *syn, hint Dtype) (Term, error) {
	h := hint
	if s.binop.IsComparison() || s.binop == OpAnd || s.binop == OpOr {
		h = InvalidDtype
	}
	x, y, err := e.pair(s.kids[0], s.kids[1], h)
	if err != nil {
		return nil, err
	}
	rx, ry := len(x.Type().Shape), len(y.Type().Shape)
	switch {
	case rx == 0 && ry > 0:
		x, err = broadcast(x, y.Type().Shape)
	case ry == 0 && rx > 0:
		y, err = broadcast(y, x.Type().Shape)
	}
	if err != nil {
		return nil, wrapAt(s.at, err)
	}
	return keeper(s.at)(NewBinary(s.binop, x, y))
}

// indexed elaborates a gather or a scatter.
func (e *elaborator) indexed(s *syn, hint Dtype) (Term, error) {
	x, err := e.term(s.kids[0], hint)
	if err != nil {
		return nil, err
	}
	vs, out, err := binding(e, s.vars, func() ([]Term, error) { return e.terms(s.kids[1:], InvalidDtype) })
	if err != nil {
		return nil, err
	}
	fn, err := NewIndexFn(vs, out)
	if err != nil {
		return nil, wrapAt(s.at, err)
	}
	if s.kind == synGather {
		return keeper(s.at)(NewGather(Shape(s.ints), x, fn))
	}
	return keeper(s.at)(NewScatter(Shape(s.ints), x, fn))
}

// fromVector elaborates [e1, …]: the elements that fix their dtype first, the flexible ones
// (bare literals) then with that dtype.
func (e *elaborator) fromVector(s *syn, hint Dtype) (Term, error) {
	ts := make([]Term, len(s.kids))
	d := hint
	first := true
	for i, k := range s.kids {
		if flexible(k) {
			continue
		}
		t, err := e.term(k, d)
		if err != nil {
			return nil, err
		}
		if first {
			d, first = t.Type().Dtype, false
		}
		ts[i] = t
	}
	for i, k := range s.kids {
		if ts[i] != nil {
			continue
		}
		t, err := e.term(k, d)
		if err != nil {
			return nil, err
		}
		ts[i] = t
	}
	return keeper(s.at)(NewFromVector(ts))
}

// build elaborates build1 and its n-dimensional sugar build (nested build1s).
func (e *elaborator) build(s *syn, hint Dtype) (Term, error) {
	vs, body, err := binding(e, s.vars, func() (Term, error) { return e.term(s.kids[0], hint) })
	if err != nil {
		return nil, err
	}
	sh := s.ints
	if s.kind == synBuild1 {
		sh = []int{s.n}
	}
	for k := len(sh) - 1; k >= 0; k-- {
		b, err := NewBuild1(sh[k], vs[k], body)
		if err != nil {
			return nil, wrapAt(s.at, err)
		}
		body = b
	}
	return body, nil
}

// letChain elaborates a chain of lets iteratively.
func (e *elaborator) letChain(s *syn, hint Dtype) (Term, error) {
	type frame struct {
		s       *syn
		v       *Var
		bound   Term
		restore func()
	}
	var frames []frame
	defer func() {
		for i := len(frames) - 1; i >= 0; i-- {
			frames[i].restore()
		}
	}()
	cur := s
	for cur.kind == synLet {
		b, err := e.term(cur.kids[0], InvalidDtype)
		if err != nil {
			return nil, err
		}
		if _, ok := b.(*Tuple); ok {
			return nil, errors.Errorf("core: parse: line %d:%d: let %s: the bound term is a tuple", cur.at.line, cur.at.col, cur.name)
		}
		v, err := NewVar(cur.name, b.Type())
		if err != nil {
			return nil, wrapAt(cur.at, err)
		}
		frames = append(frames, frame{s: cur, v: v, bound: b, restore: e.bind([]*Var{v})})
		cur = cur.kids[1]
	}
	body, err := e.term(cur, hint)
	if err != nil {
		return nil, err
	}
	for i := len(frames) - 1; i >= 0; i-- {
		f := frames[i]
		l, err := NewLet(f.v, f.bound, body)
		if err != nil {
			return nil, wrapAt(f.s.at, err)
		}
		body = l
	}
	return body, nil
}
