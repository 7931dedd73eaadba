package kernel

import (
	"github.com/bulkad/bulkad/core"
	"github.com/pkg/errors"
)

// scope is a list of instructions run together: the root scope once per run, the body scope
// of a build1 once per index, the scope of a non-compiled index function once per point of
// its domain. A node is placed in the deepest scope among the binders of its free variables,
// so a subterm that does not depend on a lambda-bound variable is hoisted out of the loop.
type scope struct {
	parent *scope
	depth  int
	code   []func()
}

func (s *scope) run() {
	for _, f := range s.code {
		f()
	}
}

// binding is what a variable name refers to during compilation: the slot holding its value
// and the scope in which that value is (re)computed.
type binding struct {
	id  int
	val *buf
	sc  *scope
}

type memoEntry struct {
	ids []int
	val *buf
	sc  *scope
}

type compiler struct {
	e      *Exec
	fv     *core.FreeVarCache
	names  map[core.Term][]string
	env    map[string]*binding
	nextID int
	memo   map[core.Term][]memoEntry
	shares map[int][]memoEntry
	root   *scope
	// konst holds the instructions of closed subterms (no free variables, or only variables
	// bound to closed terms): they run once, at the end of Compile, and never again. Its
	// depth is -1, below the root scope.
	konst *scope
	// uses counts the parents of every node (with multiplicity), for element-wise fusion.
	uses map[core.Term]int
	// kernel records the buffers written by a kernel into fresh storage (not aliases).
	kernel      map[*buf]bool
	resultScope *scope
}

func compileProgram(p *core.Program) (*Exec, error) {
	e := &Exec{prog: p, root: &scope{}}
	c := &compiler{
		e: e, fv: core.NewFreeVarCache(), names: map[core.Term][]string{}, env: map[string]*binding{},
		memo: map[core.Term][]memoEntry{}, shares: map[int][]memoEntry{}, root: e.root,
		kernel: map[*buf]bool{}, konst: &scope{depth: -1}, uses: map[core.Term]int{},
	}
	core.PostOrder(p.Body, func(n core.Term) {
		for _, k := range core.Children(n) {
			c.uses[k]++
		}
	})
	for _, v := range p.Params {
		b := &buf{typ: v.Type()}
		e.params = append(e.params, b)
		c.env[v.Name] = &binding{id: c.newID(), val: b, sc: c.root}
	}
	if err := c.results(p.Body); err != nil {
		return nil, err
	}
	if err := runGuarded(c.konst); err != nil {
		return nil, err
	}
	if len(e.results) == 1 && c.kernel[e.results[0]] && c.resultScope == c.root {
		e.direct = true
		for _, pb := range e.params {
			if pb == e.results[0] {
				e.direct = false
			}
		}
	}
	return e, nil
}

func (c *compiler) newID() int { c.nextID++; return c.nextID }

// results compiles the program body: lets around a tuple, a tuple, or a single term.
func (c *compiler) results(t core.Term) error {
	if l, ok := t.(*core.Let); ok && isTuple(resultOf(l)) {
		vb, vs, err := c.compile(l.Bound)
		if err != nil {
			return err
		}
		restore := c.bind(l.Var.Name, vb, vs)
		err = c.results(l.Body)
		restore()
		return err
	}
	if tu, ok := t.(*core.Tuple); ok {
		for _, el := range tu.Elems {
			v, _, err := c.compile(el)
			if err != nil {
				return err
			}
			c.e.results = append(c.e.results, v)
			c.e.rtypes = append(c.e.rtypes, el.Type())
		}
		return nil
	}
	v, vs, err := c.compile(t)
	if err != nil {
		return err
	}
	c.resultScope = vs
	c.e.results = append(c.e.results, v)
	c.e.rtypes = append(c.e.rtypes, t.Type())
	return nil
}

// bind binds name to a value and returns the function that restores the previous binding.
func (c *compiler) bind(name string, v *buf, sc *scope) func() {
	old, had := c.env[name]
	c.env[name] = &binding{id: c.newID(), val: v, sc: sc}
	return func() {
		if had {
			c.env[name] = old
		} else {
			delete(c.env, name)
		}
	}
}

// placement returns the deepest scope among the bindings of t's free variables and the
// binding ids (the memo key together with t).
func (c *compiler) placement(t core.Term) (*scope, []int, error) {
	names, ok := c.names[t]
	if !ok {
		// any fixed order will do: the list is cached, so a node's memo keys always agree
		fv := c.fv.Of(t)
		names = make([]string, 0, len(fv))
		for n := range fv {
			names = append(names, n)
		}
		c.names[t] = names
	}
	if len(names) == 0 {
		return c.konst, nil, nil
	}
	sc := c.konst
	ids := make([]int, len(names))
	for i, n := range names {
		b := c.env[n]
		if b == nil {
			return nil, nil, errors.Errorf("core: eval: unbound variable %s", n)
		}
		ids[i] = b.id
		if b.sc.depth > sc.depth {
			sc = b.sc
		}
	}
	return sc, ids, nil
}

func lookup(es []memoEntry, ids []int) (memoEntry, bool) {
	for _, m := range es {
		if len(m.ids) != len(ids) {
			continue
		}
		same := true
		for i := range ids {
			if m.ids[i] != ids[i] {
				same = false
				break
			}
		}
		if same {
			return m, true
		}
	}
	return memoEntry{}, false
}

// compile returns the slot holding t's value and the scope in which it is computed. Each
// distinct node is compiled once per binding of its free variables.
func (c *compiler) compile(t core.Term) (*buf, *scope, error) {
	if t == nil {
		return nil, nil, errors.New("core: eval: nil term")
	}
	sc, ids, err := c.placement(t)
	if err != nil {
		return nil, nil, err
	}
	if m, ok := lookup(c.memo[t], ids); ok {
		return m.val, m.sc, nil
	}
	sh, isShare := t.(*core.Share)
	if isShare {
		if m, ok := lookup(c.shares[sh.ID], ids); ok {
			c.memo[t] = append(c.memo[t], m)
			return m.val, m.sc, nil
		}
	}
	v, vs, err := c.build(t, sc)
	if err != nil {
		return nil, nil, err
	}
	m := memoEntry{ids: ids, val: v, sc: vs}
	c.memo[t] = append(c.memo[t], m)
	if isShare {
		c.shares[sh.ID] = append(c.shares[sh.ID], m)
	}
	return v, vs, nil
}

// emit appends an instruction for term t to scope sc.
func (c *compiler) emit(sc *scope, t core.Term, k func()) {
	e := c.e
	sc.code = append(sc.code, func() {
		if e.hook != nil {
			e.hook(t)
		}
		k()
	})
}

func (c *compiler) compileAll(ts []core.Term) ([]*buf, error) {
	out := make([]*buf, len(ts))
	for i, t := range ts {
		v, _, err := c.compile(t)
		if err != nil {
			return nil, err
		}
		out[i] = v
	}
	return out, nil
}

// fresh allocates the output slot of a kernel.
func (c *compiler) fresh(t core.Type) *buf {
	v := newBuf(t)
	c.kernel[v] = true
	return v
}

func (c *compiler) build(t core.Term, sc *scope) (*buf, *scope, error) {
	switch t := t.(type) {
	case *core.Var:
		b := c.env[t.Name]
		if b == nil {
			return nil, nil, errors.Errorf("core: eval: unbound variable %s", t.Name)
		}
		return b.val, b.sc, nil
	case *core.Lit:
		v, err := litBuf(t)
		if err != nil {
			return nil, nil, err
		}
		return v, c.konst, nil
	case *core.Iota:
		v := newBuf(t.Type())
		for i := range v.i64 {
			v.i64[i] = int64(i)
		}
		return v, c.konst, nil
	case *core.Let:
		vb, vs, err := c.compile(t.Bound)
		if err != nil {
			return nil, nil, err
		}
		restore := c.bind(t.Var.Name, vb, vs)
		defer restore()
		return c.compile(t.Body)
	case *core.Share:
		return c.compile(t.Body)
	case *core.Reshape:
		return c.compile(t.X)
	case *core.Tuple:
		return nil, nil, errors.New("core: eval: a tuple appears below the top level")
	case *core.Cond:
		xs, err := c.compileAll([]core.Term{t.C, t.Then, t.Else})
		if err != nil {
			return nil, nil, err
		}
		cb, tb, eb := xs[0], xs[1], xs[2]
		out := &buf{typ: t.Type()}
		c.emit(sc, t, func() {
			if cb.b[0] {
				out.aliasOf(tb)
			} else {
				out.aliasOf(eb)
			}
		})
		return out, sc, nil
	case *core.Unary:
		if fusible(t) {
			return c.buildFused(t, sc)
		}
		op := t.Op
		return c.kernelOp(t, sc, []core.Term{t.X}, func(out *buf, xs []*buf) func() {
			return func() { unaryBuf(op, out, xs[0]) }
		})
	case *core.Cast:
		if fusible(t) {
			return c.buildFused(t, sc)
		}
		to, from := t.To, t.X.Type().Dtype
		return c.kernelOp(t, sc, []core.Term{t.X}, func(out *buf, xs []*buf) func() {
			return func() { castKernel(to, from, out, xs[0]) }
		})
	case *core.Binary:
		if fusible(t) {
			return c.buildFused(t, sc)
		}
		op := t.Op
		return c.kernelOp(t, sc, []core.Term{t.X, t.Y}, func(out *buf, xs []*buf) func() {
			return func() { binaryBuf(op, out, xs[0], xs[1]) }
		})
	case *core.Index:
		return c.buildIndex(t, sc)
	case *core.SumOuter:
		xs := t.X.Type().Shape
		outer, inner := xs[0], core.Shape(xs[1:]).Size()
		return c.kernelOp(t, sc, []core.Term{t.X}, func(out *buf, xs []*buf) func() {
			return func() { sumOuterBuf(out, xs[0], 1, outer, inner) }
		})
	case *core.ArgmaxOuter:
		xs := t.X.Type().Shape
		outer, inner := xs[0], core.Shape(xs[1:]).Size()
		return c.kernelOp(t, sc, []core.Term{t.X}, func(out *buf, xs []*buf) func() {
			return func() { argmaxOuterBuf(out, xs[0], 1, outer, inner) }
		})
	case *core.Gather:
		return c.buildMove(t, t.X, t.Fn, sc)
	case *core.Scatter:
		return c.buildMove(t, t.X, t.Fn, sc)
	case *core.FromVector:
		sz := t.Elems[0].Type().Shape.Size()
		return c.kernelOp(t, sc, t.Elems, func(out *buf, xs []*buf) func() {
			return func() {
				for k, x := range xs {
					out.copyAt(k*sz, x)
				}
			}
		})
	case *core.Replicate:
		n, sz := t.N, t.X.Type().Shape.Size()
		return c.kernelOp(t, sc, []core.Term{t.X}, func(out *buf, xs []*buf) func() {
			return func() {
				for k := 0; k < n; k++ {
					out.copyAt(k*sz, xs[0])
				}
			}
		})
	case *core.Transpose:
		xs := t.X.Type().Shape
		xstr := xs.Strides()
		str := make([]int, len(xs))
		for p := range xs {
			if p < len(t.Perm) {
				str[p] = xstr[t.Perm[p]]
			} else {
				str[p] = xstr[p]
			}
		}
		plan := newPermPlan(t.Type().Shape, str)
		return c.kernelOp(t, sc, []core.Term{t.X}, func(out *buf, xs []*buf) func() {
			return func() { permCopyBuf(plan, out, xs[0]) }
		})
	case *core.Build1:
		return c.buildBuild1(t, sc)
	case *core.MatMul:
		return c.compileMatMul(t, sc)
	}
	return nil, nil, errors.Errorf("core: eval: unknown term %T", t)
}

// kernelOp compiles the operands of t and emits the instruction mk builds (once, at compile
// time) for them and a fresh output buffer of t's type.
func (c *compiler) kernelOp(t core.Term, sc *scope, operands []core.Term, mk func(out *buf, xs []*buf) func()) (*buf, *scope, error) {
	xs, err := c.compileAll(operands)
	if err != nil {
		return nil, nil, err
	}
	out := c.fresh(t.Type())
	c.emit(sc, t, mk(out, xs))
	return out, sc, nil
}

func (c *compiler) buildBuild1(t *core.Build1, sc *scope) (*buf, *scope, error) {
	iv := &buf{typ: core.Scalar(core.Int64), i64: make([]int64, 1)}
	body := &scope{parent: sc, depth: sc.depth + 1}
	restore := c.bind(t.Var.Name, iv, body)
	bb, _, err := c.compile(t.Body)
	restore()
	if err != nil {
		return nil, nil, err
	}
	out := c.fresh(t.Type())
	n, sz := t.N, t.Body.Type().Shape.Size()
	c.emit(sc, t, func() {
		for i := 0; i < n; i++ {
			iv.i64[0] = int64(i)
			body.run()
			out.copyAt(i*sz, bb)
		}
	})
	return out, sc, nil
}

func (c *compiler) buildIndex(t *core.Index, sc *scope) (*buf, *scope, error) {
	x, _, err := c.compile(t.X)
	if err != nil {
		return nil, nil, err
	}
	ix, err := c.compileAll(t.Ix)
	if err != nil {
		return nil, nil, err
	}
	out := c.fresh(t.Type())
	xs := t.X.Type().Shape
	str := xs.Strides()
	m := len(t.Ix)
	block := core.Shape(xs[m:]).Size()
	c.emit(sc, t, func() {
		off := 0
		for k := 0; k < m; k++ {
			v := ix[k].i64[0]
			if v < 0 || v >= int64(xs[k]) {
				out.zeroRange(0, block)
				return
			}
			off += int(v) * str[k]
		}
		out.copyRange(0, x, off, block)
	})
	return out, sc, nil
}

// runGuarded runs a scope, turning a panic (an evaluator bug) into an error.
func runGuarded(s *scope) (err error) {
	defer func() {
		if x := recover(); x != nil {
			err = errors.Errorf("core: eval: internal error (please report): %v", x)
		}
	}()
	s.run()
	return nil
}
