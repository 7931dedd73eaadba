package kernel

import (
	"math"

	"github.com/bulkad/bulkad/core"
	"github.com/pkg/errors"
)

// An index function is compiled once, when its op is built, into closures over an ixEnv:
// slots hold the bound index variables (and let-bound scalars), arrs the values of the free
// variables (op inputs after the first).

// ixArr is an extra input as the index function reads it: integers and booleans (0/1) in i,
// floats of both widths in f (newEnv converts booleans and float32 once per run).
type ixArr struct {
	i []int64
	f []float64
}

type ixEnv struct {
	slots []int64
	fslot []float64
	arrs  []ixArr
}

type iexpr func(*ixEnv) int64
type fexpr func(*ixEnv) float64

// IndexProgram is a compiled index function.
type IndexProgram struct {
	nvars  int
	nslots int
	nfslot int
	outs   []iexpr
	// frees are the op's extra inputs: free variables of the index function and hoisted
	// subterms that do not depend on its bound variables (e.g. an argmax array).
	Frees []core.Term
	// rewrites maps subterms of the index function to the equivalent terms compiled
	// instead (see argmaxColumn); the op's printed program applies them too.
	Rewrites map[core.Term]core.Term
}

type ixCompiler struct {
	scope   map[string]int // int slots
	fscope  map[string]int // float slots (let-bound floats)
	freeIdx map[string]int
	hoisted map[core.Term]int
	prog    *IndexProgram
}

// CompileIndexFn compiles fn; its free variables are listed in prog.frees in order of first
// appearance and must be supplied, in that order, to newEnv.
func CompileIndexFn(fn *core.IndexFn) (*IndexProgram, error) {
	p := &IndexProgram{nvars: len(fn.Vars)}
	c := &ixCompiler{scope: map[string]int{}, fscope: map[string]int{}, freeIdx: map[string]int{}, hoisted: map[core.Term]int{}, prog: p}
	for i, v := range fn.Vars {
		c.scope[v.Name] = i
	}
	p.nslots = len(fn.Vars)
	for _, o := range fn.Out {
		e, err := c.ints(o)
		if err != nil {
			return nil, err
		}
		p.outs = append(p.outs, e)
	}
	return p, nil
}

func (c *ixCompiler) free(v *core.Var) int {
	if k, ok := c.freeIdx[v.Name]; ok {
		return k
	}
	k := len(c.prog.Frees)
	c.freeIdx[v.Name] = k
	c.prog.Frees = append(c.prog.Frees, v)
	return k
}

// hoist makes t (which must not depend on the index function's bound variables) an extra
// input of the op; ok is false when t depends on them.
func (c *ixCompiler) hoist(t core.Term) (int, bool) {
	if v, isVar := t.(*core.Var); isVar {
		if _, b := c.scope[v.Name]; b {
			return 0, false
		}
		if _, b := c.fscope[v.Name]; b {
			return 0, false
		}
		return c.free(v), true
	}
	if k, ok := c.hoisted[t]; ok {
		return k, true
	}
	for _, v := range core.FreeVars(t) {
		if _, b := c.scope[v.Name]; b {
			return 0, false
		}
		if _, b := c.fscope[v.Name]; b {
			return 0, false
		}
	}
	k := len(c.prog.Frees)
	c.hoisted[t] = k
	c.prog.Frees = append(c.prog.Frees, t)
	return k, true
}

// hoistScalar reads a hoisted scalar subterm (as int or float).
func (c *ixCompiler) hoistScalar(t core.Term) (iexpr, fexpr, bool) {
	if !t.Type().IsScalar() {
		return nil, nil, false
	}
	switch t.(type) {
	case *core.Var, *core.Lit:
		return nil, nil, false
	}
	k, ok := c.hoist(t)
	if !ok {
		return nil, nil, false
	}
	if t.Type().Dtype.IsFloat() {
		return nil, func(e *ixEnv) float64 { return e.arrs[k].f[0] }, true
	}
	return func(e *ixEnv) int64 { return e.arrs[k].i[0] }, nil, true
}

func unsupportedIx(t core.Term) error {
	return errors.Errorf("kernel: index function: unsupported term %v : %v", t, t.Type())
}

// ints compiles an i64 or bool scalar term (bools as 0/1).
func (c *ixCompiler) ints(t core.Term) (iexpr, error) {
	ty := t.Type()
	if !ty.IsScalar() || (ty.Dtype != core.Int64 && ty.Dtype != core.Bool) {
		return nil, unsupportedIx(t)
	}
	switch t.(type) {
	case *core.Var, *core.Lit, *core.Share, *core.Let, *core.Cond, *core.Unary, *core.Cast, *core.Binary, *core.Index:
	default:
		if f, _, ok := c.hoistScalar(t); ok {
			return f, nil
		}
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
		k := c.free(t)
		return func(e *ixEnv) int64 { return e.arrs[k].i[0] }, nil
	case *core.Lit:
		var v int64
		if t.I != nil {
			v = t.I[0]
		} else {
			v = b2i(t.B[0])
		}
		return func(*ixEnv) int64 { return v }, nil
	case *core.Share:
		return c.ints(t.Body)
	case *core.Let:
		return c.let(t, func() (iexpr, error) { return c.ints(t.Body) })
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
		return func(e *ixEnv) int64 {
			x, y := a(e), b(e)
			if cc(e) != 0 {
				return x
			}
			return y
		}, nil
	case *core.Unary:
		x, err := c.ints(t.X)
		if err != nil {
			return nil, err
		}
		switch t.Op {
		case core.OpNeg:
			return func(e *ixEnv) int64 { return -x(e) }, nil
		case core.OpAbs:
			return func(e *ixEnv) int64 {
				v := x(e)
				if v < 0 {
					return -v
				}
				return v
			}, nil
		case core.OpSign:
			return func(e *ixEnv) int64 {
				v := x(e)
				switch {
				case v > 0:
					return 1
				case v < 0:
					return -1
				}
				return 0
			}, nil
		case core.OpNot:
			return func(e *ixEnv) int64 { return 1 - x(e) }, nil
		}
		return nil, unsupportedIx(t)
	case *core.Cast:
		from := t.X.Type().Dtype
		if from.IsFloat() {
			x, err := c.floats(t.X)
			if err != nil {
				return nil, err
			}
			if t.To == core.Bool {
				return func(e *ixEnv) int64 { return b2i(x(e) != 0) }, nil
			}
			return func(e *ixEnv) int64 { return truncInt(x(e)) }, nil
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
			return c.floatCompare(t)
		}
		x, err := c.ints(t.X)
		if err != nil {
			return nil, err
		}
		y, err := c.ints(t.Y)
		if err != nil {
			return nil, err
		}
		f := intBinFunc(t.Op)
		if f == nil {
			return nil, unsupportedIx(t)
		}
		switch t.Op {
		case core.OpAdd:
			return func(e *ixEnv) int64 { return x(e) + y(e) }, nil
		case core.OpSub:
			return func(e *ixEnv) int64 { return x(e) - y(e) }, nil
		case core.OpMul:
			return func(e *ixEnv) int64 { return x(e) * y(e) }, nil
		}
		return func(e *ixEnv) int64 { return f(x(e), y(e)) }, nil
	case *core.Index:
		off, err := c.index(t)
		if err != nil {
			return nil, err
		}
		k, _ := c.hoist(t.X)
		return func(e *ixEnv) int64 {
			o := off(e)
			if o < 0 {
				return 0
			}
			return e.arrs[k].i[o]
		}, nil
	}
	return nil, unsupportedIx(t)
}

func (c *ixCompiler) let(t *core.Let, body func() (iexpr, error)) (iexpr, error) {
	bt := t.Bound.Type()
	if !bt.IsScalar() {
		return nil, unsupportedIx(t)
	}
	name := t.Var.Name
	oldI, hadI := c.scope[name]
	oldF, hadF := c.fscope[name]
	restore := func() {
		delete(c.scope, name)
		delete(c.fscope, name)
		if hadI {
			c.scope[name] = oldI
		}
		if hadF {
			c.fscope[name] = oldF
		}
	}
	if bt.Dtype.IsFloat() {
		bf, err := c.floats(t.Bound)
		if err != nil {
			return nil, err
		}
		s := c.prog.nfslot
		c.prog.nfslot++
		delete(c.scope, name)
		c.fscope[name] = s
		b, err := body()
		restore()
		if err != nil {
			return nil, err
		}
		return func(e *ixEnv) int64 { e.fslot[s] = bf(e); return b(e) }, nil
	}
	bi, err := c.ints(t.Bound)
	if err != nil {
		return nil, err
	}
	s := c.prog.nslots
	c.prog.nslots++
	delete(c.fscope, name)
	c.scope[name] = s
	b, err := body()
	restore()
	if err != nil {
		return nil, err
	}
	return func(e *ixEnv) int64 { e.slots[s] = bi(e); return b(e) }, nil
}

// index compiles a full index of a free array variable by i64 terms (out of bounds gives 0).
func (c *ixCompiler) index(t *core.Index) (iexpr, error) {
	if len(t.Ix) != len(t.X.Type().Shape) {
		return nil, unsupportedIx(t)
	}
	if _, ok := c.hoist(t.X); !ok {
		return nil, unsupportedIx(t)
	}
	ix := make([]iexpr, len(t.Ix))
	for i, e := range t.Ix {
		var err error
		if ix[i], err = c.ints(e); err != nil {
			return nil, err
		}
	}
	sh := t.X.Type().Shape
	// offset returns the flat offset or -1 when out of bounds.
	return func(e *ixEnv) int64 {
		off := int64(0)
		for d, f := range ix {
			j := f(e)
			if j < 0 || j >= int64(sh[d]) {
				return -1
			}
			off = off*int64(sh[d]) + j
		}
		return off
	}, nil
}

func (c *ixCompiler) floatCompare(t *core.Binary) (iexpr, error) {
	x, err := c.floats(t.X)
	if err != nil {
		return nil, err
	}
	y, err := c.floats(t.Y)
	if err != nil {
		return nil, err
	}
	switch t.Op {
	case core.OpLt:
		return func(e *ixEnv) int64 { return b2i(x(e) < y(e)) }, nil
	case core.OpLe:
		return func(e *ixEnv) int64 { return b2i(x(e) <= y(e)) }, nil
	case core.OpGt:
		return func(e *ixEnv) int64 { return b2i(x(e) > y(e)) }, nil
	case core.OpGe:
		return func(e *ixEnv) int64 { return b2i(x(e) >= y(e)) }, nil
	case core.OpEq:
		return func(e *ixEnv) int64 { return b2i(x(e) == y(e)) }, nil
	case core.OpNe:
		return func(e *ixEnv) int64 { return b2i(x(e) != y(e)) }, nil
	}
	return nil, unsupportedIx(t)
}

// floats compiles a float scalar term used inside an index function.
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
	switch t.(type) {
	case *core.Var, *core.Lit, *core.Share, *core.Cast, *core.Index, *core.Unary, *core.Binary:
	default:
		if _, f, ok := c.hoistScalar(t); ok {
			return f, nil
		}
	}
	switch t := t.(type) {
	case *core.Var:
		if s, ok := c.fscope[t.Name]; ok {
			return func(e *ixEnv) float64 { return e.fslot[s] }, nil
		}
		k := c.free(t)
		return func(e *ixEnv) float64 { return e.arrs[k].f[0] }, nil
	case *core.Lit:
		v := t.F[0]
		return func(*ixEnv) float64 { return v }, nil
	case *core.Share:
		return c.floats(t.Body)
	case *core.Cast:
		return c.floats(t.X)
	case *core.Index:
		off, err := c.index(t)
		if err != nil {
			return nil, err
		}
		k, _ := c.hoist(t.X)
		return func(e *ixEnv) float64 {
			o := off(e)
			if o < 0 {
				return 0
			}
			return e.arrs[k].f[o]
		}, nil
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
		x, err := c.floats(t.X)
		if err != nil {
			return nil, err
		}
		y, err := c.floats(t.Y)
		if err != nil {
			return nil, err
		}
		switch t.Op {
		case core.OpAdd:
			return func(e *ixEnv) float64 { return x(e) + y(e) }, nil
		case core.OpSub:
			return func(e *ixEnv) float64 { return x(e) - y(e) }, nil
		case core.OpMul:
			return func(e *ixEnv) float64 { return x(e) * y(e) }, nil
		case core.OpDiv:
			return func(e *ixEnv) float64 { return x(e) / y(e) }, nil
		}
	}
	return nil, unsupportedIx(t)
}

// newEnv binds the free arrays (flat slices in prog.frees order) into a fresh environment.
func (p *IndexProgram) newEnv(arrs []any) (*ixEnv, error) {
	if len(arrs) != len(p.Frees) {
		return nil, errors.Errorf("kernel: index function: %d free arrays supplied, want %d", len(arrs), len(p.Frees))
	}
	e := &ixEnv{slots: make([]int64, p.nslots), fslot: make([]float64, p.nfslot), arrs: make([]ixArr, len(arrs))}
	for k, a := range arrs {
		switch s := a.(type) {
		case []int64:
			e.arrs[k].i = s
		case []bool:
			e.arrs[k].i = make([]int64, len(s))
			for j, v := range s {
				e.arrs[k].i[j] = b2i(v)
			}
		case []float64:
			e.arrs[k].f = s
		case []float32:
			e.arrs[k].f = make([]float64, len(s))
			for j, v := range s {
				e.arrs[k].f[j] = float64(v)
			}
		default:
			return nil, errors.Errorf("kernel: index function: free array %d has unsupported element type %T", k, a)
		}
		if n := p.Frees[k].Type().Shape.Size(); SliceLen(a) != n {
			return nil, errors.Errorf("kernel: index function: extra input %d has %d elements, want %d", k, SliceLen(a), n)
		}
	}
	return e, nil
}

func b2i(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// truncInt converts toward zero; NaN and out-of-range values give 0 (core's cast rule).
func truncInt(f float64) int64 {
	if f != f || f >= 9.223372036854775807e18 || f < -9.223372036854775808e18 {
		return 0
	}
	return int64(f)
}

// intBinFunc is the i64/bool semantics of a binary operation (comparisons give 0/1).
func intBinFunc(op core.BinOp) func(a, b int64) int64 {
	switch op {
	case core.OpAdd:
		return func(a, b int64) int64 { return a + b }
	case core.OpSub:
		return func(a, b int64) int64 { return a - b }
	case core.OpMul:
		return func(a, b int64) int64 { return a * b }
	case core.OpQuot:
		return func(a, b int64) int64 {
			if b == 0 {
				return 0
			}
			if b == -1 {
				return -a
			}
			return a / b
		}
	case core.OpRem:
		return func(a, b int64) int64 {
			if b == 0 || b == -1 {
				return 0
			}
			return a % b
		}
	case core.OpMax:
		return func(a, b int64) int64 {
			if a >= b {
				return a
			}
			return b
		}
	case core.OpMin:
		return func(a, b int64) int64 {
			if a <= b {
				return a
			}
			return b
		}
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

// SliceLen returns the length of a flat slice of any element type (-1 for another value).
func SliceLen(a any) int {
	switch s := a.(type) {
	case []float64:
		return len(s)
	case []float32:
		return len(s)
	case []int64:
		return len(s)
	case []bool:
		return len(s)
	}
	return -1
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
