package coretest

import (
	"fmt"
	"math/rand"

	"github.com/bulkad/bulkad/core"
)

// Config controls RandomProgram. The zero value gives small float programs of random dtype.
type Config struct {
	// Dtype is the float dtype of the program (core.Float64 or core.Float32); the zero
	// value picks one at random.
	Dtype core.Dtype
	// MaxDepth bounds the depth of the generated term (default 6).
	MaxDepth int
	// MaxBuildNest bounds the nesting of build1 (default 3).
	MaxBuildNest int
	// MaxDim bounds every array dimension (default 4; dimensions are ≥ 1).
	MaxDim int
	// NumParams is the number of float parameters (default 3). An i64 vector parameter iv
	// and a bool scalar parameter flag are added unless Smooth is set (then only iv).
	NumParams int
	// ScalarResult makes the program's result a rank-0 float.
	ScalarResult bool
	// Smooth restricts to operations that are differentiable at the evaluated points (see
	// the package documentation).
	Smooth bool
	// TargetNodes > 0 generates a chain of lets with roughly this many distinct nodes.
	TargetNodes int
	// BuildProb > 0 makes every float array term a build1 with this probability (while the
	// nesting bound allows), so that build1 nests deeply more often (BOT tests).
	BuildProb float64
	// ReuseNames draws binder names from a small pool per type (two names per prefix and
	// type), so that binders shadow each other and share names with unrelated binders: a
	// test of capture-avoiding substitution in the transformations.
	ReuseNames bool
	// Shares adds global sharing: a term reused as both operands of a binary operation is
	// wrapped in share, and closed terms (whose free variables are parameters) are wrapped
	// in share and reused elsewhere.
	Shares bool
}

type gen struct {
	rng  *rand.Rand
	cfg  Config
	dt   core.Dtype
	next int
	// env holds the variables in scope, innermost last; hi holds, for i64 scalar
	// variables, an upper bound (exclusive) of their values when known (0 = unknown).
	env   []*core.Var
	hi    map[string]int
	nest  int
	nodes int
	ivLen int
	// shareID is the last share ID used; closed holds closed share nodes for reuse.
	shareID int
	closed  []*core.Share
	params  map[string]bool
}

// RandomProgram returns a random well-typed program (see the package documentation for
// what it covers). The same rng state and cfg give the same program.
func RandomProgram(rng *rand.Rand, cfg Config) *core.Program {
	if cfg.MaxDepth <= 0 {
		cfg.MaxDepth = 6
	}
	if cfg.MaxBuildNest <= 0 {
		cfg.MaxBuildNest = 3
	}
	if cfg.MaxDim <= 0 {
		cfg.MaxDim = 4
	}
	if cfg.NumParams <= 0 {
		cfg.NumParams = 3
	}
	g := &gen{rng: rng, cfg: cfg, dt: cfg.Dtype, hi: map[string]int{}}
	if !g.dt.IsFloat() {
		g.dt = core.Float64
		if rng.Intn(3) == 0 {
			g.dt = core.Float32
		}
	}
	var params []*core.Var
	for k := 0; k < cfg.NumParams; k++ {
		v := g.mkVar(fmt.Sprintf("p%d", k), core.Type{Shape: g.shape(rng.Intn(3)), Dtype: g.dt})
		params = append(params, v)
	}
	g.ivLen = 1 + rng.Intn(6)
	params = append(params, g.mkVar("iv", core.Type{Shape: core.Shape{g.ivLen}, Dtype: core.Int64}))
	if !cfg.Smooth {
		params = append(params, g.mkVar("flag", core.Scalar(core.Bool)))
	}
	g.env = append(g.env, params...)
	g.params = map[string]bool{}
	for _, v := range params {
		g.params[v.Name] = true
	}
	var rt core.Type
	if cfg.ScalarResult {
		rt = core.Scalar(g.dt)
	} else {
		rt = core.Type{Shape: g.shape(rng.Intn(4)), Dtype: g.dt}
	}
	var body core.Term
	if cfg.TargetNodes > 0 {
		body = g.chain(rt, cfg.TargetNodes)
	} else {
		body = g.term(rt, cfg.MaxDepth)
	}
	p, err := core.NewProgram(params, body)
	if err != nil {
		panic(fmt.Sprintf("coretest: generated an ill-typed program (generator bug): %v", err))
	}
	return p
}

func (g *gen) check(t core.Term, err error) core.Term {
	if err != nil {
		panic(fmt.Sprintf("coretest: generator bug: %v", err))
	}
	g.nodes++
	return t
}

func (g *gen) mkVar(name string, t core.Type) *core.Var {
	v, err := core.NewVar(name, t)
	if err != nil {
		panic(fmt.Sprintf("coretest: generator bug: %v", err))
	}
	return v
}

func (g *gen) fresh(prefix string, t core.Type) *core.Var {
	if g.cfg.ReuseNames && g.cfg.TargetNodes == 0 {
		// the name encodes the type, so a shadowed variable has the type of its shadow
		code := t.Dtype.String()
		for _, d := range t.Shape {
			code += fmt.Sprintf("x%d", d)
		}
		return g.mkVar(fmt.Sprintf("%s_%s_%d", prefix, code, g.rng.Intn(2)), t)
	}
	for {
		g.next++
		name := fmt.Sprintf("%s%d", prefix, g.next)
		if !core.IsKeyword(name) {
			return g.mkVar(name, t)
		}
	}
}

func (g *gen) dim() int { return 1 + g.rng.Intn(g.cfg.MaxDim) }

func (g *gen) shape(rank int) core.Shape {
	sh := make(core.Shape, rank)
	for i := range sh {
		sh[i] = g.dim()
	}
	return sh
}

func (g *gen) pick(n int) int { return g.rng.Intn(n) }

func (g *gen) chance(p float64) bool { return g.rng.Float64() < p }

// push adds v to the scope and returns a function that removes it.
func (g *gen) push(v *core.Var, hi int) func() {
	g.env = append(g.env, v)
	old, had := g.hi[v.Name]
	if hi > 0 {
		g.hi[v.Name] = hi
	}
	return func() {
		g.env = g.env[:len(g.env)-1]
		if had {
			g.hi[v.Name] = old
		} else {
			delete(g.hi, v.Name)
		}
	}
}

// varsOf returns the in-scope variables of type t, innermost first.
func (g *gen) varsOf(t core.Type) []*core.Var {
	var vs []*core.Var
	for k := len(g.env) - 1; k >= 0; k-- {
		if g.env[k].Type().Equal(t) {
			vs = append(vs, g.env[k])
		}
	}
	return vs
}

// chain builds let x1 = t1 in let x2 = t2 in … in final, until about target nodes exist.
// Each bound term may use the parameters and the last 8 bindings (as the layers of a model
// use the preceding few), so the free variables of every subterm stay few.
func (g *gen) chain(rt core.Type, target int) core.Term {
	type bind struct {
		v *core.Var
		t core.Term
	}
	var binds []bind
	base := append([]*core.Var{}, g.env...)
	window := func() {
		g.env = append([]*core.Var{}, base...)
		from := max(0, len(binds)-8)
		for _, b := range binds[from:] {
			g.env = append(g.env, b.v)
		}
	}
	for g.nodes < target {
		window()
		t := core.Type{Shape: g.shape(g.pick(3)), Dtype: g.dt}
		bound := g.term(t, 4+g.pick(3))
		if len(binds) > 0 {
			// keep the chain alive: every binding uses the previous one
			bound = g.check(core.NewBinary(core.OpAdd, bound, g.reduceTo(binds[len(binds)-1].v, t)))
		}
		v := g.fresh("x", t)
		binds = append(binds, bind{v, bound})
	}
	window()
	body := g.term(rt, 4)
	// Make the result depend on the last bindings: add their sums.
	for k := len(binds) - 1; k >= 0 && k >= len(binds)-8; k-- {
		body = g.check(core.NewBinary(core.OpAdd, body, g.reduceTo(binds[k].v, rt)))
	}
	g.env = base
	for k := len(binds) - 1; k >= 0; k-- {
		body = g.check(core.NewLet(binds[k].v, binds[k].t, body))
	}
	return body
}

// reduceTo turns x into a term of type rt (same dtype) by summing or indexing and
// replicating.
func (g *gen) reduceTo(x core.Term, rt core.Type) core.Term {
	for len(x.Type().Shape) > 0 {
		x = g.check(core.NewSumOuter(x))
	}
	for k := len(rt.Shape) - 1; k >= 0; k-- {
		x = g.check(core.NewReplicate(rt.Shape[k], x))
	}
	return x
}

func (g *gen) scalarF(v float64) core.Term { g.nodes++; return core.ScalarF(g.dt, v) }

// constant returns a float constant of type t (a literal array or a replicated scalar).
func (g *gen) constant(t core.Type) core.Term {
	n := t.Shape.Size()
	if n <= 6 && g.chance(0.5) {
		vals := make([]float64, n)
		for i := range vals {
			vals[i] = float64(g.rng.Intn(9)-4) / 2
		}
		return g.check(core.NewLitF(t, vals))
	}
	var x core.Term = core.ScalarF(t.Dtype, float64(g.rng.Intn(9)-4)/2)
	for k := len(t.Shape) - 1; k >= 0; k-- {
		x = g.check(core.NewReplicate(t.Shape[k], x))
	}
	return x
}

// leaf returns a variable, an indexed parameter or a constant of float type t.
func (g *gen) leaf(t core.Type) core.Term {
	if g.cfg.Shares && g.chance(0.3) {
		for k := len(g.closed) - 1; k >= 0; k-- {
			if g.closed[k].Type().Equal(t) {
				return g.closed[k]
			}
		}
	}
	if vs := g.varsOf(t); len(vs) > 0 && g.chance(0.8) {
		// Prefer inner (recent) variables, so lets are shared.
		k := g.pick(len(vs))
		if g.chance(0.5) {
			k = 0
		}
		return vs[k]
	}
	// A parameter or variable of larger rank whose inner shape is t's shape.
	var cands []*core.Var
	for _, v := range g.env {
		vt := v.Type()
		if vt.Dtype != t.Dtype || len(vt.Shape) <= len(t.Shape) {
			continue
		}
		if core.Shape(vt.Shape[len(vt.Shape)-len(t.Shape):]).Equal(t.Shape) {
			cands = append(cands, v)
		}
	}
	if len(cands) > 0 && g.chance(0.8) {
		v := cands[g.pick(len(cands))]
		vs := v.Type().Shape
		m := len(vs) - len(t.Shape)
		ix := make([]core.Term, m)
		for k := range ix {
			ix[k] = g.index(vs[k], 1)
		}
		return g.check(core.NewIndex(v, ix))
	}
	if len(t.Shape) > 0 && g.chance(0.5) {
		return g.check(core.NewReplicate(t.Shape[0], g.leaf(rowType(t))))
	}
	return g.constant(t)
}

// pos wraps a float term so that it is positive: exp (tanh t).
func (g *gen) pos(t core.Term) core.Term {
	return g.check(core.NewUnary(core.OpExp, g.check(core.NewUnary(core.OpTanh, t))))
}

func (g *gen) bounded(t core.Term) core.Term {
	return g.check(core.NewUnary(core.OpTanh, t))
}

// term generates a term of type t (any dtype).
func (g *gen) term(t core.Type, depth int) core.Term {
	switch t.Dtype {
	case core.Int64:
		return g.intTerm(t, depth)
	case core.Bool:
		return g.boolTerm(t, depth)
	}
	if depth <= 0 {
		return g.leaf(t)
	}
	rank := len(t.Shape)
	if g.cfg.BuildProb > 0 && rank > 0 && g.nest < g.cfg.MaxBuildNest && g.chance(g.cfg.BuildProb) {
		return g.build(t, depth)
	}
	if g.cfg.Shares && g.chance(0.08) {
		return g.share(g.term(t, depth-1))
	}
	for {
		switch g.pick(22) {
		case 0, 1:
			return g.leaf(t)
		case 2, 3:
			return g.unary(t, depth)
		case 4, 5, 6:
			return g.binary(t, depth)
		case 7, 8:
			return g.let(t, depth)
		case 9:
			c := g.condBool(depth - 1)
			return g.check(core.NewCond(c, g.term(t, depth-1), g.term(t, depth-1)))
		case 10:
			// index into a bigger array
			n := g.dim()
			x := g.term(core.Type{Shape: append(core.Shape{n}, t.Shape...), Dtype: t.Dtype}, depth-1)
			return g.check(core.NewIndex(x, []core.Term{g.index(n, depth-1)}))
		case 11:
			n := g.dim()
			x := g.term(core.Type{Shape: append(core.Shape{n}, t.Shape...), Dtype: t.Dtype}, depth-1)
			return g.check(core.NewSumOuter(x))
		case 12:
			return g.gather(t, depth)
		case 13:
			return g.scatter(t, depth)
		case 14:
			if rank == 0 {
				continue
			}
			n := t.Shape[0]
			if n > 3 {
				continue
			}
			el := make([]core.Term, n)
			for k := range el {
				el[k] = g.term(rowType(t), depth-1)
			}
			return g.check(core.NewFromVector(el))
		case 15:
			if rank == 0 {
				continue
			}
			return g.replicateOf(t, depth-1, g.term)
		case 16:
			if rank < 2 {
				continue
			}
			m := 2 + g.pick(rank-1)
			perm := g.rng.Perm(m)
			// operand dim perm[p] = result dim p
			xs := t.Shape.Clone()
			for p := 0; p < m; p++ {
				xs[perm[p]] = t.Shape[p]
			}
			x := g.term(core.Type{Shape: xs, Dtype: t.Dtype}, depth-1)
			return g.check(core.NewTranspose(perm, x))
		case 17:
			if rank == 0 {
				continue
			}
			xs := g.factor(t.Shape.Size())
			x := g.term(core.Type{Shape: xs, Dtype: t.Dtype}, depth-1)
			return g.check(core.NewReshape(t.Shape, x))
		case 18, 19:
			if rank == 0 || g.nest >= g.cfg.MaxBuildNest {
				continue
			}
			return g.build(t, depth)
		case 20:
			// matmul; of rank ≥ 3 a batched one (the leading dimensions are the batch)
			if rank < 2 {
				continue
			}
			c := g.dim()
			xs := append(t.Shape[:rank-1].Clone(), c)
			ys := append(t.Shape[:rank-2].Clone(), c, t.Shape[rank-1])
			x := g.term(core.Type{Shape: xs, Dtype: t.Dtype}, depth-1)
			y := g.term(core.Type{Shape: ys, Dtype: t.Dtype}, depth-1)
			return g.check(core.NewMatMul(x, y))
		case 21:
			// cast from the other float dtype or from i64
			if g.chance(0.5) {
				other := core.Float32
				if t.Dtype == core.Float32 {
					other = core.Float64
				}
				saved := g.dt
				g.dt = other
				x := g.term(core.Type{Shape: t.Shape, Dtype: other}, depth-1)
				g.dt = saved
				return g.check(core.NewCast(t.Dtype, x))
			}
			x := g.intTerm(core.Type{Shape: t.Shape, Dtype: core.Int64}, depth-1)
			return g.check(core.NewCast(t.Dtype, x))
		}
	}
}

// factor returns a random shape with the given number of elements.
func (g *gen) factor(n int) core.Shape {
	var sh core.Shape
	for n > 1 && len(sh) < 3 {
		var ds []int
		for d := 1; d <= n; d++ {
			if n%d == 0 {
				ds = append(ds, d)
			}
		}
		d := ds[g.pick(len(ds))]
		if d == 1 {
			d = n
		}
		sh = append(sh, d)
		n /= d
	}
	if n > 1 {
		sh[len(sh)-1] *= n
	}
	if len(sh) == 0 {
		sh = core.Shape{1}
	}
	return sh
}

var smoothUn = []core.UnOp{core.OpNeg, core.OpExp, core.OpLog, core.OpSqrt, core.OpSin, core.OpCos,
	core.OpTan, core.OpTanh, core.OpSigmoid, core.OpRecip, core.OpLog1p, core.OpExpm1, core.OpErf}

var roughUn = []core.UnOp{core.OpAbs, core.OpSign, core.OpFloor, core.OpCeil}

// pickOp picks an operator from smooth or, a quarter of the time when not in Smooth mode,
// from rough.
func pickOp[O any](g *gen, smooth, rough []O) O {
	ops := smooth
	if !g.cfg.Smooth && g.chance(0.25) {
		ops = rough
	}
	return ops[g.pick(len(ops))]
}

func (g *gen) unary(t core.Type, depth int) core.Term {
	op := pickOp(g, smoothUn, roughUn)
	x := g.term(t, depth-1)
	switch op {
	case core.OpLog, core.OpSqrt, core.OpRecip, core.OpLog1p:
		x = g.pos(x)
	case core.OpExp, core.OpExpm1, core.OpTan:
		if g.cfg.Smooth || op == core.OpTan {
			x = g.bounded(x)
		}
	}
	return g.check(core.NewUnary(op, x))
}

var smoothBin = []core.BinOp{core.OpAdd, core.OpSub, core.OpMul, core.OpDiv, core.OpPow}
var roughBin = []core.BinOp{core.OpMax, core.OpMin, core.OpAtan2}

func (g *gen) binary(t core.Type, depth int) core.Term {
	op := pickOp(g, smoothBin, roughBin)
	x := g.term(t, depth-1)
	var y core.Term
	if g.chance(0.3) {
		// reuse x: sharing of a subterm without a let (or with share)
		if g.cfg.Shares && g.chance(0.5) {
			g.shareID++
			x = g.check(core.NewShare(g.shareID, x))
		}
		y = x
	} else {
		y = g.term(t, depth-1)
	}
	switch op {
	case core.OpDiv:
		y = g.pos(y)
	case core.OpPow:
		x = g.pos(x)
		y = g.bounded(y)
	}
	return g.check(core.NewBinary(op, x, y))
}

func (g *gen) let(t core.Type, depth int) core.Term {
	var bt core.Type
	switch g.pick(4) {
	case 0:
		bt = t
	case 1:
		bt = core.Scalar(g.dt)
	case 2:
		if !g.cfg.Smooth || g.chance(0.5) {
			bt = core.Scalar(core.Int64)
			break
		}
		fallthrough
	default:
		bt = core.Type{Shape: g.shape(g.pick(3)), Dtype: g.dt}
	}
	var bound core.Term
	hi := 0
	if bt.Equal(core.Scalar(core.Int64)) {
		hi = g.dim()
		bound = g.index(hi, depth-1)
	} else {
		bound = g.term(bt, depth-1)
	}
	v := g.fresh("x", bt)
	pop := g.push(v, hi)
	body := g.term(t, depth-1)
	pop()
	return g.check(core.NewLet(v, bound, body))
}

func (g *gen) build(t core.Type, depth int) core.Term { return g.buildOf(t, depth, g.term) }

// buildOf makes a build1 of type t whose body (of t's row type, with the build's index
// variable in scope) is made by elem.
func (g *gen) buildOf(t core.Type, depth int, elem func(core.Type, int) core.Term) core.Term {
	n := t.Shape[0]
	v := g.fresh("i", core.Scalar(core.Int64))
	pop := g.push(v, n)
	g.nest++
	body := elem(rowType(t), depth-1)
	g.nest--
	pop()
	return g.check(core.NewBuild1(n, v, body))
}

// rowType is the type of t's rows (t without its outer dimension).
func rowType(t core.Type) core.Type { return core.Type{Shape: t.Shape[1:], Dtype: t.Dtype} }

// replicateOf makes a term of type t as a replicate of a row made by elem.
func (g *gen) replicateOf(t core.Type, depth int, elem func(core.Type, int) core.Term) core.Term {
	return g.check(core.NewReplicate(t.Shape[0], elem(rowType(t), depth)))
}

// gather makes a term of type t as a gather from an array with a different outer shape.
func (g *gen) gather(t core.Type, depth int) core.Term {
	rank := len(t.Shape)
	n := g.pick(rank + 1) // index variables
	if n > 2 {
		n = 2
	}
	m := 1 + g.pick(2) // outputs
	rest := t.Shape[n:]
	xs := append(g.shape(m), rest...)
	x := g.term(core.Type{Shape: xs, Dtype: t.Dtype}, depth-1)
	return g.check(core.NewGather(t.Shape, x, g.indexFn(t.Shape[:n], xs[:m])))
}

func (g *gen) scatter(t core.Type, depth int) core.Term {
	rank := len(t.Shape)
	m := g.pick(rank + 1)
	if m > 2 {
		m = 2
	}
	n := 1 + g.pick(2)
	rest := t.Shape[m:]
	dom := g.shape(n)
	xs := append(dom.Clone(), rest...)
	x := g.term(core.Type{Shape: xs, Dtype: t.Dtype}, depth-1)
	return g.check(core.NewScatter(t.Shape, x, g.indexFn(dom, t.Shape[:m])))
}

// indexFn makes the index function of a gather or scatter: one index variable for each
// dimension of dom (ranging over it), one output for each dimension of cod (an index meant
// to fall mostly in it).
func (g *gen) indexFn(dom, cod core.Shape) *core.IndexFn {
	vars := make([]*core.Var, len(dom))
	var pops []func()
	for k := range vars {
		vars[k] = g.fresh(g.fnVarPrefix(k), core.Scalar(core.Int64))
		pops = append(pops, g.push(vars[k], dom[k]))
	}
	out := make([]core.Term, len(cod))
	for k := range out {
		out[k] = g.index(cod[k], 2)
	}
	for k := len(pops) - 1; k >= 0; k-- {
		pops[k]()
	}
	fn, err := core.NewIndexFn(vars, out)
	if err != nil {
		panic(fmt.Sprintf("coretest: generator bug: %v", err))
	}
	return fn
}

func (g *gen) intLit(v int) core.Term { g.nodes++; return core.ScalarI(int64(v)) }

// index generates an i64 scalar meant as an index into a dimension of size n: mostly in
// [0, n), sometimes out of bounds; affine and non-affine forms.
func (g *gen) index(n int, depth int) core.Term {
	var ivars []*core.Var
	for _, v := range g.env {
		if v.Type().Equal(core.Scalar(core.Int64)) {
			ivars = append(ivars, v)
		}
	}
	choice := g.pick(12)
	if depth <= 0 && choice > 6 {
		choice = g.pick(7)
	}
	switch choice {
	case 0:
		if g.chance(0.1) {
			return g.intLit(n) // out of bounds
		}
		return g.intLit(g.pick(n))
	case 1, 2, 3:
		if len(ivars) == 0 {
			return g.intLit(g.pick(n))
		}
		// prefer the innermost index variables
		v := ivars[len(ivars)-1-g.pick(min(len(ivars), 2))]
		if hi := g.hi[v.Name]; hi > 0 && hi <= n {
			return v
		}
		return g.check(core.NewBinary(core.OpRem, v, g.intLit(n)))
	case 4:
		if len(ivars) == 0 {
			return g.intLit(0)
		}
		v := ivars[g.pick(len(ivars))]
		// affine: v + c or 2*v - c, possibly out of bounds
		a := g.check(core.NewBinary(core.OpMul, g.intLit(1+g.pick(2)), v))
		return g.check(core.NewBinary(core.OpSub, a, g.intLit(g.pick(2))))
	case 5:
		if len(ivars) == 0 {
			return g.intLit(n - 1)
		}
		v := ivars[g.pick(len(ivars))]
		return g.check(core.NewBinary(core.OpQuot, v, g.intLit(1+g.pick(3))))
	case 6:
		// index into the i64 array parameter
		return g.check(core.NewIndex(g.ivParam(), []core.Term{g.index(g.ivLen, depth-1)}))
	case 7:
		// cond on an index comparison
		a := g.index(n, depth-1)
		b := g.index(n, depth-1)
		c := g.check(core.NewBinary(core.OpLt, a, g.intLit(g.pick(n+1))))
		return g.check(core.NewCond(c, a, b))
	case 8:
		// argmaxOuter (of floats unless Smooth)
		if g.cfg.Smooth {
			x := g.intTerm(core.Type{Shape: core.Shape{n}, Dtype: core.Int64}, depth-1)
			return g.check(core.NewArgmaxOuter(x))
		}
		x := g.term(core.Type{Shape: core.Shape{n}, Dtype: g.dt}, depth-1)
		return g.check(core.NewArgmaxOuter(x))
	case 9:
		// rem of a sum of two indices
		s := g.check(core.NewBinary(core.OpAdd, g.index(n, depth-1), g.index(n+2, depth-1)))
		return g.check(core.NewBinary(core.OpRem, s, g.intLit(n)))
	case 10:
		// index into an i64 array term
		m := g.dim()
		x := g.intTerm(core.Type{Shape: core.Shape{m}, Dtype: core.Int64}, depth-1)
		e := g.check(core.NewIndex(x, []core.Term{g.index(m, depth-1)}))
		return g.check(core.NewBinary(core.OpRem, e, g.intLit(n)))
	default:
		if g.cfg.Smooth {
			return g.index(n, depth-1)
		}
		// cast of a float: discrete, may be anything
		x := g.term(core.Scalar(g.dt), depth-1)
		c := g.check(core.NewCast(core.Int64, x))
		return g.check(core.NewBinary(core.OpRem, c, g.intLit(n)))
	}
}

func (g *gen) ivParam() core.Term {
	for _, v := range g.env {
		if v.Name == "iv" {
			return v
		}
	}
	panic("coretest: generator bug: no iv parameter")
}

// intTerm generates an i64 term of type t.
func (g *gen) intTerm(t core.Type, depth int) core.Term {
	if len(t.Shape) == 0 {
		return g.index(1+g.pick(6), depth)
	}
	if vs := g.varsOf(t); len(vs) > 0 && g.chance(0.3) {
		return vs[0]
	}
	if depth <= 0 {
		if len(t.Shape) == 1 {
			return g.check(core.NewIota(t.Shape[0]))
		}
		return g.replicateOf(t, 0, g.intTerm)
	}
	switch g.pick(6) {
	case 0:
		if len(t.Shape) == 1 {
			return g.check(core.NewIota(t.Shape[0]))
		}
		return g.replicateOf(t, depth-1, g.intTerm)
	case 1:
		if len(t.Shape) == 1 && t.Shape[0] <= g.ivLen+1 {
			// gather from the i64 parameter
			j := g.fresh("j", core.Scalar(core.Int64))
			pop := g.push(j, t.Shape[0])
			e := g.index(g.ivLen, 1)
			pop()
			fn, err := core.NewIndexFn([]*core.Var{j}, []core.Term{e})
			if err != nil {
				panic(err)
			}
			return g.check(core.NewGather(t.Shape, g.ivParam(), fn))
		}
		return g.replicateOf(t, depth-1, g.intTerm)
	case 2:
		if depth <= 0 || g.nest >= g.cfg.MaxBuildNest {
			return g.replicateOf(t, depth-1, g.intTerm)
		}
		return g.buildOf(t, depth, g.intTerm)
	case 3:
		ops := []core.BinOp{core.OpAdd, core.OpSub, core.OpMul, core.OpMax, core.OpMin, core.OpQuot, core.OpRem}
		op := ops[g.pick(len(ops))]
		return g.check(core.NewBinary(op, g.intTerm(t, depth-1), g.intTerm(t, depth-1)))
	case 4:
		if g.cfg.Smooth {
			return g.check(core.NewUnary(core.OpNeg, g.intTerm(t, depth-1)))
		}
		x := g.term(core.Type{Shape: t.Shape, Dtype: g.dt}, depth-1)
		return g.check(core.NewCast(core.Int64, x))
	default:
		n := g.dim()
		if g.cfg.Smooth {
			x := g.intTerm(core.Type{Shape: append(core.Shape{n}, t.Shape...), Dtype: core.Int64}, depth-1)
			return g.check(core.NewArgmaxOuter(x))
		}
		x := g.term(core.Type{Shape: append(core.Shape{n}, t.Shape...), Dtype: g.dt}, depth-1)
		return g.check(core.NewArgmaxOuter(x))
	}
}

// condBool generates a scalar bool for a cond.
func (g *gen) condBool(depth int) core.Term {
	return g.boolTerm(core.Scalar(core.Bool), depth)
}

func (g *gen) boolTerm(t core.Type, depth int) core.Term {
	if !t.IsScalar() {
		// element-wise comparison of i64 arrays
		return g.check(core.NewBinary(core.OpLe, g.intTerm(core.Type{Shape: t.Shape, Dtype: core.Int64}, depth-1),
			g.intTerm(core.Type{Shape: t.Shape, Dtype: core.Int64}, depth-1)))
	}
	choice := g.pick(7)
	if depth <= 0 {
		choice = g.pick(3)
	}
	switch choice {
	case 0:
		if v := g.varsOf(t); len(v) > 0 {
			return v[0]
		}
		g.nodes++
		return core.ScalarB(g.chance(0.5))
	case 1, 2:
		n := 1 + g.pick(5)
		ops := []core.BinOp{core.OpLt, core.OpLe, core.OpGt, core.OpGe, core.OpEq, core.OpNe}
		return g.check(core.NewBinary(ops[g.pick(len(ops))], g.index(n, depth-1), g.intLit(g.pick(n))))
	case 3:
		if depth <= 0 {
			return g.check(core.NewBinary(core.OpGe, g.index(3, 0), g.intLit(1)))
		}
		ops := []core.BinOp{core.OpAnd, core.OpOr, core.OpEq}
		return g.check(core.NewBinary(ops[g.pick(len(ops))], g.boolTerm(t, depth-1), g.boolTerm(t, depth-1)))
	case 4:
		return g.check(core.NewUnary(core.OpNot, g.boolTerm(t, depth-1)))
	case 5:
		if g.cfg.Smooth {
			return g.check(core.NewBinary(core.OpNe, g.index(4, depth-1), g.intLit(2)))
		}
		// float comparison (discontinuous, so not in Smooth mode)
		return g.check(core.NewBinary(core.OpLt, g.term(core.Scalar(g.dt), depth-1), g.scalarF(0)))
	default:
		// index into a bool array built from a comparison
		n := g.dim()
		arr := g.boolTerm(core.Type{Shape: core.Shape{n}, Dtype: core.Bool}, depth-1)
		return g.check(core.NewIndex(arr, []core.Term{g.index(n, depth-1)}))
	}
}

// share wraps t in a share with a new ID; closed terms are remembered for reuse by leaf.
func (g *gen) share(t core.Term) core.Term {
	g.shareID++
	sh, err := core.NewShare(g.shareID, t)
	if err != nil {
		panic(fmt.Sprintf("coretest: generator bug: %v", err))
	}
	g.nodes++
	closed := true
	for _, v := range core.FreeVars(t) {
		if !g.params[v.Name] {
			closed = false
			break
		}
	}
	if closed {
		g.closed = append(g.closed, sh)
	}
	return sh
}

// fnVarPrefix is the name prefix of the k-th variable of an index function (distinct per
// position when names are reused, so the variables of one function never clash).
func (g *gen) fnVarPrefix(k int) string {
	if g.cfg.ReuseNames {
		return fmt.Sprintf("j%d", k)
	}
	return "j"
}
