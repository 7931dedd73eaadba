package kernel

import (
	"math"

	"github.com/bulkad/bulkad/core"
	"github.com/pkg/errors"
)

// Index functions (the \[i, …] -> [e, …] of gather and scatter) are compiled here, once, by
// one compiler, for both users: the program evaluator (Exec) and the single-op kernels that
// package raise wraps. An IndexProgram holds up to three forms of the same function:
//
//   - aff: every output is c0 + dyn + Σ_j c_j·i_j with integer constants c_j, where dyn (nil
//     when static) does not depend on the index variables and is evaluated once per run. Gather
//     and scatter then run strided loops with their bounds checks hoisted per row, or prove the
//     whole domain in bounds (AffinePlan) and copy blocks without checks;
//   - outs: closures over an ixEnv for every output: i64 arithmetic (+ - * quot rem max min
//     neg abs sign), comparisons (also of floats), && || not, cond, casts, scalar lets, float
//     arithmetic under a cast, and index into arrays that do not depend on the index variables;
//   - vec: closures that compute a chunk of consecutive values of the innermost variable at
//     once (the outer variables fixed), so the call overhead is paid per chunk.
//
// What the function reads that does not depend on its variables (free variables, hoisted
// subterms such as an argmax array, scalars computed once) is supplied by a host: the op
// kernels take such arrays as extra inputs (IndexProgram.Frees, bound per run by newEnv); the
// evaluator compiles them as ordinary instructions and binds their buffers once. Index
// functions the closures do not cover run, in the evaluator, as a scope of instructions per
// point (compileIndexFn); CompileIndexFn reports them as unsupported.

// ixEnv is the state of a compiled index function while it runs.
type ixEnv struct {
	slots []int64   // the index variables, then let-bound integers and booleans (0/1)
	fslot []float64 // let-bound floats
	arrs  []*buf    // the arrays the host supplies, by position
}

type (
	iexpr func(*ixEnv) int64
	fexpr func(*ixEnv) float64
	// vexpr fills out[q] with the value at innermost index t0+q (len(out) ≤ vecChunk).
	vexpr func(e *ixEnv, t0 int64, out []int64)
)

// vecChunk is the number of innermost indices a vector closure computes per call.
const vecChunk = 256

// affine is c0 + dyn + Σ_j c[j]·i_j.
type affine struct {
	c   []int64
	c0  int64
	dyn iexpr // nil when the constant part is static
}

// eval evaluates a at the index variables in e.slots.
func (a *affine) eval(e *ixEnv) int64 {
	v := a.c0
	if a.dyn != nil {
		v += a.dyn(e)
	}
	for j, cj := range a.c {
		v += cj * e.slots[j]
	}
	return v
}

func (a *affine) isConst() bool {
	for _, v := range a.c {
		if v != 0 {
			return false
		}
	}
	return true
}

// IndexProgram is a compiled index function.
type IndexProgram struct {
	nvars  int
	nslots int
	nfslot int
	outs   []iexpr   // every output as a closure
	aff    []*affine // non-nil when every output is affine
	vec    []vexpr   // non-nil when every output has a vector closure
	// Frees are the op's extra inputs (CompileIndexFn): free variables of the index function and
	// hoisted subterms that do not depend on its bound variables (e.g. an argmax array).
	Frees []core.Term
	// Rewrites maps subterms of the index function to the equivalent terms compiled
	// instead (see argmaxColumn); the op's printed program applies them too.
	Rewrites map[core.Term]core.Term
}

// ixHost supplies what an index function reads that does not depend on its variables.
type ixHost interface {
	// hoist returns the position in ixEnv.arrs of the value of t, a term that does not
	// depend on the index variables (an array the function indexes when array is set,
	// otherwise a scalar); ok false asks the compiler to compile the scalar t itself.
	hoist(t core.Term, array bool) (k int, ok bool, err error)
}

// errUnsupportedIx marks an index function (or subterm) the closures do not cover.
type errUnsupportedIx struct{ t core.Term }

func (e errUnsupportedIx) Error() string {
	return "kernel: index function: unsupported term " + e.t.String() + " : " + e.t.Type().String()
}

func unsupportedIx(t core.Term) error { return errUnsupportedIx{t} }

// isUnsupportedIx reports whether err says that the closures do not cover a term.
func isUnsupportedIx(err error) bool {
	var u errUnsupportedIx
	return errors.As(err, &u)
}

type ixCompiler struct {
	host   ixHost
	fv     *core.FreeVarCache
	scope  map[string]int // integer slots
	fscope map[string]int // float slots (let-bound floats)
	inner  string         // the innermost variable (vector closures)
	affs   map[core.Term]*affine
	prog   *IndexProgram
}

// compileIx compiles fn with host into the affine form when every output is affine
// (closures then evaluate that form), otherwise into closures and, when they exist, vector
// closures. It returns an errUnsupportedIx error when the closures do not cover fn, or, unless
// unfold is set, when a subterm that depends on the index variables is shared (the closures
// would unfold the DAG: the evaluator then prefers its per-point scope, which computes a
// shared subterm once; the op kernels, which have no such fallback, unfold — a convolution's
// window indices share subterms, and evaluating its gather as a whole program instead made
// the convnet step 2.6× slower).
func compileIx(fn *core.IndexFn, host ixHost, fv *core.FreeVarCache, unfold bool) (*IndexProgram, error) {
	n := len(fn.Vars)
	p := &IndexProgram{nvars: n, nslots: n}
	c := &ixCompiler{host: host, fv: fv, scope: map[string]int{}, fscope: map[string]int{}, affs: map[core.Term]*affine{}, prog: p}
	for i, v := range fn.Vars {
		c.scope[v.Name] = i
	}
	affs := make([]*affine, len(fn.Out))
	for k, o := range fn.Out {
		a, err := c.affine(o)
		if err != nil {
			return nil, err
		}
		if a == nil {
			affs = nil
			break
		}
		affs[k] = a
	}
	if affs != nil {
		p.aff = affs
		for _, a := range affs {
			p.outs = append(p.outs, a.eval)
		}
		return p, nil
	}
	if !unfold && c.shared(fn.Out) {
		return nil, unsupportedIx(fn.Out[0])
	}
	for _, o := range fn.Out {
		e, err := c.ints(o)
		if err != nil {
			return nil, err
		}
		p.outs = append(p.outs, e)
	}
	if n == 0 {
		return p, nil
	}
	c.inner = fn.Vars[n-1].Name
	vs := make([]vexpr, len(fn.Out))
	for k, o := range fn.Out {
		v, err := c.vec(o)
		if err != nil || v == nil {
			return p, err
		}
		vs[k] = v
	}
	p.vec = vs
	return p, nil
}

// shared reports whether a node that depends on the index variables is reachable twice from
// the outputs.
func (c *ixCompiler) shared(outs []core.Term) bool {
	count := map[core.Term]int{}
	var walk func(t core.Term) bool
	walk = func(t core.Term) bool {
		if t == nil || !c.depends(t) {
			return false
		}
		if _, ok := t.(*core.Var); ok {
			return false
		}
		count[t]++
		if count[t] > 1 {
			return true
		}
		for _, k := range core.Children(t) {
			if walk(k) {
				return true
			}
		}
		return false
	}
	for _, o := range outs {
		if walk(o) {
			return true
		}
	}
	return false
}

// newEnvWith returns an environment for p whose hosted arrays are arrs.
func (p *IndexProgram) newEnvWith(arrs []*buf) *ixEnv {
	return &ixEnv{slots: make([]int64, p.nslots), fslot: make([]float64, p.nfslot), arrs: arrs}
}

// offset evaluates the outputs at the point held in e.slots and returns the row-major block
// offset into an array whose indexed dims are lim, or -1 when an index is out of range.
func (p *IndexProgram) offset(e *ixEnv, lim []int) int {
	off := 0
	for d, f := range p.outs {
		j := f(e)
		if j < 0 || j >= int64(lim[d]) {
			return -1
		}
		off = off*lim[d] + int(j)
	}
	return off
}

// depends reports whether t mentions a variable bound in the index function.
func (c *ixCompiler) depends(t core.Term) bool {
	for name := range c.fv.Of(t) {
		if _, ok := c.scope[name]; ok {
			return true
		}
		if _, ok := c.fscope[name]; ok {
			return true
		}
	}
	return false
}

// hosted returns the host's position of the scalar t when t does not depend on the index
// variables and the host supplies it.
func (c *ixCompiler) hosted(t core.Term) (int, bool, error) {
	if _, lit := t.(*core.Lit); lit || c.depends(t) {
		return 0, false, nil
	}
	return c.host.hoist(t, false)
}

// array returns the host's position of the array t indexed by the function.
func (c *ixCompiler) array(t core.Term) (int, error) {
	if c.depends(t) {
		return 0, unsupportedIx(t)
	}
	k, ok, err := c.host.hoist(t, true)
	if err == nil && !ok {
		err = unsupportedIx(t)
	}
	return k, err
}

// readInt reads element o (a closure giving a flat offset, -1 out of bounds; nil for element
// 0) of hosted array k as an integer (booleans as 0/1).
func readInt(k int, dt core.Dtype, o iexpr) iexpr {
	if dt == core.Bool {
		return readAt(o, func(e *ixEnv, j int64) int64 { return b2i(e.arrs[k].b[j]) })
	}
	return readAt(o, func(e *ixEnv, j int64) int64 { return e.arrs[k].i64[j] })
}

// readFloat is readInt for float arrays.
func readFloat(k int, dt core.Dtype, o iexpr) fexpr {
	if dt == core.Float32 {
		return readAt(o, func(e *ixEnv, j int64) float64 { return float64(e.arrs[k].f32[j]) })
	}
	return readAt(o, func(e *ixEnv, j int64) float64 { return e.arrs[k].f64[j] })
}

// readAt reads at offset o (0 when o is nil; the zero value when o is out of bounds).
func readAt[R int64 | float64](o iexpr, at func(e *ixEnv, j int64) R) func(*ixEnv) R {
	if o == nil {
		return func(e *ixEnv) R { return at(e, 0) }
	}
	return func(e *ixEnv) R {
		if j := o(e); j >= 0 {
			return at(e, j)
		}
		return 0
	}
}

// ints compiles an i64 or bool scalar term (booleans as 0/1).
func (c *ixCompiler) ints(t core.Term) (iexpr, error) {
	ty := t.Type()
	if !ty.IsScalar() || (ty.Dtype != core.Int64 && ty.Dtype != core.Bool) {
		return nil, unsupportedIx(t)
	}
	if k, ok, err := c.hosted(t); err != nil || ok {
		return readInt(k, ty.Dtype, nil), err
	}
	if a, ok := t.(*core.ArgmaxOuter); ok {
		ix, done := c.prog.Rewrites[t]
		if !done {
			ix, done = argmaxColumn(a)
		}
		if done {
			if c.prog.Rewrites == nil {
				c.prog.Rewrites = map[core.Term]core.Term{}
			}
			c.prog.Rewrites[t] = ix
			return c.ints(ix)
		}
	}
	switch t := t.(type) {
	case *core.Var:
		if s, ok := c.scope[t.Name]; ok {
			return func(e *ixEnv) int64 { return e.slots[s] }, nil
		}
	case *core.Lit:
		v := int64(0)
		if t.I != nil {
			v = t.I[0]
		} else {
			v = b2i(t.B[0])
		}
		return func(*ixEnv) int64 { return v }, nil
	case *core.Share:
		return c.ints(t.Body)
	case *core.Let:
		return c.let(t)
	case *core.Cond:
		cc, err := c.ints(t.C)
		if err != nil {
			return nil, err
		}
		a, err := c.ints(t.Then)
		if err != nil {
			return nil, err
		}
		b, err := c.ints(t.Else)
		if err != nil {
			return nil, err
		}
		// Strictness is unobservable here: these closures have no effects and never fail.
		return func(e *ixEnv) int64 {
			if cc(e) != 0 {
				return a(e)
			}
			return b(e)
		}, nil
	case *core.Unary:
		x, err := c.ints(t.X)
		if err != nil {
			return nil, err
		}
		if f := intUnary(t.Op); f != nil {
			return func(e *ixEnv) int64 { return f(x(e)) }, nil
		}
	case *core.Cast:
		if t.X.Type().Dtype.IsFloat() {
			x, err := c.floats(t.X)
			if err != nil {
				return nil, err
			}
			if t.To == core.Bool {
				return func(e *ixEnv) int64 { return b2i(x(e) != 0) }, nil
			}
			return func(e *ixEnv) int64 { return core.FloatToInt(x(e)) }, nil
		}
		x, err := c.ints(t.X)
		if err != nil {
			return nil, err
		}
		if t.To == core.Bool {
			return func(e *ixEnv) int64 { return b2i(x(e) != 0) }, nil
		}
		return x, nil
	case *core.Binary:
		if t.X.Type().Dtype.IsFloat() {
			x, y, err := both(c.floats, t.X, t.Y)
			if err != nil {
				return nil, err
			}
			if f := compare2(t.Op, x, y); f != nil {
				return f, nil
			}
			return nil, unsupportedIx(t)
		}
		x, y, err := both(c.ints, t.X, t.Y)
		if err != nil {
			return nil, err
		}
		if f := arith2(t.Op, x, y); f != nil {
			return f, nil
		}
		if f := compare2(t.Op, x, y); f != nil {
			return f, nil
		}
		if f := intBinFunc(t.Op); f != nil {
			return func(e *ixEnv) int64 { return f(x(e), y(e)) }, nil
		}
	case *core.Index:
		k, off, err := c.index(t)
		if err != nil {
			return nil, err
		}
		return readInt(k, t.Type().Dtype, off), nil
	}
	return nil, unsupportedIx(t)
}

// let compiles a let of a scalar inside an index function into a slot.
func (c *ixCompiler) let(t *core.Let) (iexpr, error) {
	bt := t.Bound.Type()
	if !bt.IsScalar() {
		return nil, unsupportedIx(t)
	}
	name := t.Var.Name
	oldI, hadI := c.scope[name]
	oldF, hadF := c.fscope[name]
	defer func() {
		delete(c.scope, name)
		delete(c.fscope, name)
		if hadI {
			c.scope[name] = oldI
		}
		if hadF {
			c.fscope[name] = oldF
		}
	}()
	// The bound is compiled in the outer scope, then the name is bound to a new int or
	// float slot for the body.
	var set func(e *ixEnv, s int)
	next, scope, other := &c.prog.nslots, c.scope, c.fscope
	if bt.Dtype.IsFloat() {
		bf, err := c.floats(t.Bound)
		if err != nil {
			return nil, err
		}
		set = func(e *ixEnv, s int) { e.fslot[s] = bf(e) }
		next, scope, other = &c.prog.nfslot, c.fscope, c.scope
	} else {
		bi, err := c.ints(t.Bound)
		if err != nil {
			return nil, err
		}
		set = func(e *ixEnv, s int) { e.slots[s] = bi(e) }
	}
	s := *next
	*next++
	delete(other, name)
	scope[name] = s
	b, err := c.ints(t.Body)
	if err != nil {
		return nil, err
	}
	return func(e *ixEnv) int64 { set(e, s); return b(e) }, nil
}

// index compiles a full index of a hosted array by integer terms: the array's position and a
// closure giving the flat offset, or -1 when out of bounds.
func (c *ixCompiler) index(t *core.Index) (int, iexpr, error) {
	xs := t.X.Type().Shape
	if len(t.Ix) != len(xs) {
		return 0, nil, unsupportedIx(t)
	}
	k, err := c.array(t.X)
	if err != nil {
		return 0, nil, err
	}
	ix := make([]iexpr, len(t.Ix))
	for i, e := range t.Ix {
		if ix[i], err = c.ints(e); err != nil {
			return 0, nil, err
		}
	}
	if len(ix) == 1 {
		g, hi := ix[0], int64(xs[0])
		return k, func(e *ixEnv) int64 {
			if j := g(e); j >= 0 && j < hi {
				return j
			}
			return -1
		}, nil
	}
	return k, func(e *ixEnv) int64 {
		off := int64(0)
		for d, f := range ix {
			j := f(e)
			if j < 0 || j >= int64(xs[d]) {
				return -1
			}
			off = off*int64(xs[d]) + j
		}
		return off
	}, nil
}

// both compiles two operands with f.
func both[R any](f func(core.Term) (R, error), a, b core.Term) (R, R, error) {
	x, err := f(a)
	if err != nil {
		return x, x, err
	}
	y, err := f(b)
	return x, y, err
}

// arith2 is x op y for + - * as one closure (the operation inline: index functions run once
// per element), or nil for another operation.
func arith2[R int64 | float64](op core.BinOp, x, y func(*ixEnv) R) func(*ixEnv) R {
	switch op {
	case core.OpAdd:
		return func(e *ixEnv) R { return x(e) + y(e) }
	case core.OpSub:
		return func(e *ixEnv) R { return x(e) - y(e) }
	case core.OpMul:
		return func(e *ixEnv) R { return x(e) * y(e) }
	}
	return nil
}

// compare2 is the comparison x op y as 0/1, or nil for another operation (NaN compares
// unequal to everything).
func compare2[R int64 | float64](op core.BinOp, x, y func(*ixEnv) R) iexpr {
	switch op {
	case core.OpLt:
		return func(e *ixEnv) int64 { return b2i(x(e) < y(e)) }
	case core.OpLe:
		return func(e *ixEnv) int64 { return b2i(x(e) <= y(e)) }
	case core.OpGt:
		return func(e *ixEnv) int64 { return b2i(x(e) > y(e)) }
	case core.OpGe:
		return func(e *ixEnv) int64 { return b2i(x(e) >= y(e)) }
	case core.OpEq:
		return func(e *ixEnv) int64 { return b2i(x(e) == y(e)) }
	case core.OpNe:
		return func(e *ixEnv) int64 { return b2i(x(e) != y(e)) }
	}
	return nil
}

// floats compiles a float scalar term used inside an index function (in float64; a float32
// term's operations are exact or rounded the same way for the casts and comparisons that
// consume them: floor, ceil, abs, neg and the arithmetic of small integers).
func (c *ixCompiler) floats(t core.Term) (fexpr, error) {
	ty := t.Type()
	if !ty.IsScalar() {
		return nil, unsupportedIx(t)
	}
	if !ty.Dtype.IsFloat() {
		x, err := c.ints(t)
		if err != nil {
			return nil, err
		}
		return func(e *ixEnv) float64 { return float64(x(e)) }, nil
	}
	if k, ok, err := c.hosted(t); err != nil || ok {
		return readFloat(k, ty.Dtype, nil), err
	}
	switch t := t.(type) {
	case *core.Var:
		if s, ok := c.fscope[t.Name]; ok {
			return func(e *ixEnv) float64 { return e.fslot[s] }, nil
		}
	case *core.Lit:
		v := t.F[0]
		return func(*ixEnv) float64 { return v }, nil
	case *core.Share:
		return c.floats(t.Body)
	case *core.Cast:
		return c.floats(t.X)
	case *core.Index:
		k, off, err := c.index(t)
		if err != nil {
			return nil, err
		}
		return readFloat(k, t.Type().Dtype, off), nil
	case *core.Unary:
		x, err := c.floats(t.X)
		if err != nil {
			return nil, err
		}
		switch t.Op {
		case core.OpNeg:
			return func(e *ixEnv) float64 { return -x(e) }, nil
		case core.OpFloor:
			return func(e *ixEnv) float64 { return math.Floor(x(e)) }, nil
		case core.OpCeil:
			return func(e *ixEnv) float64 { return math.Ceil(x(e)) }, nil
		case core.OpAbs:
			return func(e *ixEnv) float64 { return math.Abs(x(e)) }, nil
		}
	case *core.Binary:
		x, y, err := both(c.floats, t.X, t.Y)
		if err != nil {
			return nil, err
		}
		if f := arith2(t.Op, x, y); f != nil {
			return f, nil
		}
		if t.Op == core.OpDiv {
			return func(e *ixEnv) float64 { return x(e) / y(e) }, nil
		}
	}
	return nil, unsupportedIx(t)
}

// ---- affine form ----

// affine returns t as an affine function of the index variables, or nil.
func (c *ixCompiler) affine(t core.Term) (*affine, error) {
	if a, ok := c.affs[t]; ok {
		return a, nil
	}
	a, err := c.affine1(t)
	if err != nil {
		return nil, err
	}
	c.affs[t] = a
	return a, nil
}

func (c *ixCompiler) affine1(t core.Term) (*affine, error) {
	if !t.Type().Equal(core.Scalar(core.Int64)) {
		return nil, nil
	}
	a := &affine{c: make([]int64, c.prog.nvars)}
	if l, ok := t.(*core.Lit); ok {
		a.c0 = l.I[0]
		return a, nil
	}
	if !c.depends(t) {
		g, err := c.ints(t)
		if err != nil {
			return nil, err
		}
		a.dyn = g
		return a, nil
	}
	switch t := t.(type) {
	case *core.Var:
		s, ok := c.scope[t.Name]
		if !ok || s >= c.prog.nvars {
			return nil, nil // a let-bound slot
		}
		a.c[s] = 1
		return a, nil
	case *core.Share:
		return c.affine(t.Body)
	case *core.Unary:
		if t.Op != core.OpNeg {
			return nil, nil
		}
		x, err := c.affine(t.X)
		if x == nil || err != nil {
			return nil, err
		}
		return scaleAff(x, -1), nil
	case *core.Binary:
		if t.Op != core.OpAdd && t.Op != core.OpSub && t.Op != core.OpMul {
			return nil, nil
		}
		x, err := c.affine(t.X)
		if x == nil || err != nil {
			return nil, err
		}
		y, err := c.affine(t.Y)
		switch {
		case y == nil || err != nil:
			return nil, err
		case t.Op == core.OpAdd:
			return addAff(x, y, 1), nil
		case t.Op == core.OpSub:
			return addAff(x, y, -1), nil
		}
		if x.isConst() && x.dyn == nil {
			return scaleAff(y, x.c0), nil
		}
		if y.isConst() && y.dyn == nil {
			return scaleAff(x, y.c0), nil
		}
	}
	return nil, nil
}

func scaleAff(x *affine, s int64) *affine {
	a := &affine{c: make([]int64, len(x.c)), c0: x.c0 * s}
	for j, v := range x.c {
		a.c[j] = v * s
	}
	if d := x.dyn; d != nil {
		if s == 1 {
			a.dyn = d
		} else {
			a.dyn = func(e *ixEnv) int64 { return s * d(e) }
		}
	}
	return a
}

func addAff(x, y *affine, sign int64) *affine {
	a := &affine{c: make([]int64, len(x.c)), c0: x.c0 + sign*y.c0}
	for j := range a.c {
		a.c[j] = x.c[j] + sign*y.c[j]
	}
	dx, dy := x.dyn, y.dyn
	switch {
	case dx != nil && dy != nil:
		a.dyn = func(e *ixEnv) int64 { return dx(e) + sign*dy(e) }
	case dx != nil:
		a.dyn = dx
	case dy != nil && sign == 1:
		a.dyn = dy
	case dy != nil:
		a.dyn = func(e *ixEnv) int64 { return -dy(e) }
	}
	return a
}

// static reports whether p is affine with static constants (no part read at run time).
func (p *IndexProgram) static() bool {
	if p.aff == nil {
		return false
	}
	for _, a := range p.aff {
		if a.dyn != nil {
			return false
		}
	}
	return true
}

// inBounds returns, for a static affine p over domain dom addressing an array whose indexed
// dims have the element strides str and sizes lim, the element stride of every index
// variable and the base offset, when every point of the (non-empty) domain is in bounds and
// no coefficient is large enough to overflow.
func (p *IndexProgram) inBounds(dom []int, str, lim []int) (strides []int, base int, ok bool) {
	if !p.static() || core.Shape(dom).Size() == 0 {
		return nil, 0, false
	}
	strides = make([]int, len(dom))
	for k, a := range p.aff {
		if a.c0 > affLimit || a.c0 < -affLimit {
			return nil, 0, false
		}
		lo, hi := a.c0, a.c0
		for j, cj := range a.c {
			if cj > affLimit || cj < -affLimit || dom[j] > affLimit {
				return nil, 0, false
			}
			if span := cj * int64(dom[j]-1); span > 0 {
				hi += span
			} else {
				lo += span
			}
			strides[j] += int(cj) * str[k]
		}
		if lo < 0 || hi >= int64(lim[k]) {
			return nil, 0, false
		}
		base += int(a.c0) * str[k]
	}
	return strides, base, true
}

// ---- integer semantics shared by the closures and the vector closures ----

func b2i(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// intUnary is the i64/bool semantics of a unary operation (booleans as 0/1), or nil.
func intUnary(op core.UnOp) func(int64) int64 {
	if op == core.OpNot {
		return func(v int64) int64 { return 1 - v }
	}
	return op.IntFunc()
}

// intBinFunc is the i64/bool semantics of a binary operation (core's integer arithmetic;
// comparisons, && and || on 0/1), or nil.
func intBinFunc(op core.BinOp) func(a, b int64) int64 {
	if f := op.IntFunc(); f != nil {
		return f
	}
	switch op {
	case core.OpLt:
		return func(a, b int64) int64 { return b2i(a < b) }
	case core.OpLe:
		return func(a, b int64) int64 { return b2i(a <= b) }
	case core.OpGt:
		return func(a, b int64) int64 { return b2i(a > b) }
	case core.OpGe:
		return func(a, b int64) int64 { return b2i(a >= b) }
	case core.OpEq:
		return func(a, b int64) int64 { return b2i(a == b) }
	case core.OpNe:
		return func(a, b int64) int64 { return b2i(a != b) }
	case core.OpAnd:
		return func(a, b int64) int64 { return a & b }
	case core.OpOr:
		return func(a, b int64) int64 { return a | b }
	}
	return nil
}

// argmaxColumn rewrites argmaxOuter (gather [n] a (\[p] -> [e1, …, p, …, ek])) — the argmax
// along one axis d of a (p at position d), at a position chosen by index terms that may
// depend on the enclosing index function's variables — as
// index (argmaxOuter (tr perm a)) [e1, …, ek] with perm moving axis d to the front; that
// argmax array does not depend on them and is computed once. Out-of-bounds positions give 0
// either way.
func argmaxColumn(t *core.ArgmaxOuter) (core.Term, bool) {
	g, ok := t.X.(*core.Gather)
	if !ok || len(g.Fn.Vars) != 1 || len(g.Shape) != 1 {
		return nil, false
	}
	a := g.X
	ash := a.Type().Shape
	p := g.Fn.Vars[0]
	if len(g.Fn.Out) != len(ash) || len(ash) == 0 {
		return nil, false
	}
	axis := -1
	var rest []core.Term
	for d, o := range g.Fn.Out {
		if v, ok := o.(*core.Var); ok && v.Name == p.Name && axis < 0 {
			axis = d
			continue
		}
		if core.HasFree(o, p.Name) {
			return nil, false
		}
		rest = append(rest, o)
	}
	if axis < 0 || g.Shape[0] != ash[axis] {
		return nil, false
	}
	x := a
	if axis != 0 {
		perm := []int{axis}
		for d := range ash {
			if d != axis {
				perm = append(perm, d)
			}
		}
		var err error
		if x, err = core.NewTranspose(perm, a); err != nil {
			return nil, false
		}
	}
	am, err := core.NewArgmaxOuter(x)
	if err != nil {
		return nil, false
	}
	ix, err := core.NewIndex(am, rest)
	if err != nil {
		return nil, false
	}
	return ix, true
}
