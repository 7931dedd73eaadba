package kernel

import "github.com/bulkad/bulkad/core"

// Index functions of gather and scatter are compiled once, in one of three forms:
//
//   - affine: every output index is c0 + Σ_j c_j·i_j with integer constants c_j (c0 may also
//     contain terms that do not depend on the index variables, read once per run). The kernel
//     then runs a strided loop over the innermost variable, with the bounds checks of that
//     loop hoisted into one interval computation per row;
//   - closures over integer registers, for index functions built from i64 arithmetic
//     (+ - * quot rem max min neg abs sign), comparisons, && || not, cond, and index into
//     arrays that do not depend on the index variables;
//   - otherwise a scope of ordinary instructions run once per point (the general fallback).

// ifn computes an i64 from the index-variable registers; bfn a bool.
type (
	ifn func(r []int64) int64
	bfn func(r []int64) bool
)

// affine is c0 + dyn() + Σ_j c[j]·r[j].
type affine struct {
	c   []int64
	c0  int64
	dyn func() int64 // nil when the constant part is static
}

func (a *affine) isConst() bool {
	for _, v := range a.c {
		if v != 0 {
			return false
		}
	}
	return true
}

// idxFn is a compiled index function with n inputs and m outputs.
type idxFn struct {
	n, m int
	aff  []*affine                  // non-nil when every output is affine
	eval func(r []int64, o []int64) // always set
	// vec, when set, fills o[k][:cnt] with output k at innermost index t0 … t0+cnt-1
	// (cnt ≤ vecChunk), the outer variables taken from r.
	vec func(r []int64, t0 int64, cnt int, o [][]int64)
}

// compileIndexFn compiles fn in placement scope sc.
func (c *compiler) compileIndexFn(fn *core.IndexFn, sc *scope) (*idxFn, error) {
	n, m := len(fn.Vars), len(fn.Out)
	f := &idxFn{n: n, m: m}
	vars := map[string]int{}
	for j, v := range fn.Vars {
		vars[v.Name] = j
	}
	ic := &idxCompiler{c: c, vars: vars, n: n, affMemo: map[core.Term]*affine{}, seen: map[core.Term]int{}}
	// Affine?
	affs := make([]*affine, m)
	allAff := true
	for k, o := range fn.Out {
		a, ok, err := ic.affine(o)
		if err != nil {
			return nil, err
		}
		if !ok {
			allAff = false
			break
		}
		affs[k] = a
	}
	if allAff {
		f.aff = affs
		f.eval = func(r []int64, o []int64) {
			for k, a := range affs {
				v := a.c0
				if a.dyn != nil {
					v += a.dyn()
				}
				for j, cj := range a.c {
					v += cj * r[j]
				}
				o[k] = v
			}
		}
		return f, nil
	}
	// Closures, unless the variable-dependent part has DAG sharing (closures would unfold it).
	if !ic.shared(fn.Out) {
		fs := make([]ifn, m)
		ok := true
		for k, o := range fn.Out {
			g, good, err := ic.intFn(o)
			if err != nil {
				return nil, err
			}
			if !good {
				ok = false
				break
			}
			fs[k] = g
		}
		if ok {
			f.eval = func(r []int64, o []int64) {
				for k, g := range fs {
					o[k] = g(r)
				}
			}
			if n > 0 {
				inner := fn.Vars[n-1].Name
				vs := make([]vfn, m)
				for k, o := range fn.Out {
					v, good, err := ic.vecFn(o, inner)
					if err != nil {
						return nil, err
					}
					if !good {
						vs = nil
						break
					}
					vs[k] = v
				}
				if vs != nil {
					f.vec = func(r []int64, t0 int64, cnt int, o [][]int64) {
						for k, v := range vs {
							v(r, t0, o[k][:cnt])
						}
					}
				}
			}
			return f, nil
		}
	}
	// General fallback: a scope run per point.
	body := &scope{parent: sc, depth: sc.depth + 1}
	regs := make([]*buf, n)
	var restores []func()
	for j, v := range fn.Vars {
		regs[j] = &buf{typ: core.Scalar(core.Int64), i64: make([]int64, 1)}
		restores = append(restores, c.bind(v.Name, regs[j], body))
	}
	outs, err := c.compileAll(fn.Out)
	for j := len(restores) - 1; j >= 0; j-- {
		restores[j]()
	}
	if err != nil {
		return nil, err
	}
	f.eval = func(r []int64, o []int64) {
		for j, b := range regs {
			b.i64[0] = r[j]
		}
		body.run()
		for k, b := range outs {
			o[k] = b.i64[0]
		}
	}
	return f, nil
}

type idxCompiler struct {
	c       *compiler
	vars    map[string]int
	n       int
	affMemo map[core.Term]*affine
	seen    map[core.Term]int
}

// depends reports whether t mentions an index variable freely.
func (ic *idxCompiler) depends(t core.Term) bool {
	for name := range ic.c.fv.Of(t) {
		if _, ok := ic.vars[name]; ok {
			return true
		}
	}
	return false
}

// shared reports whether a variable-dependent node is reachable twice from the outputs.
func (ic *idxCompiler) shared(outs []core.Term) bool {
	count := map[core.Term]int{}
	var walk func(t core.Term) bool
	walk = func(t core.Term) bool {
		if t == nil || !ic.depends(t) {
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

// scalarI compiles a variable-independent i64 scalar term normally and returns a reader.
func (ic *idxCompiler) scalarI(t core.Term) (func() int64, error) {
	v, _, err := ic.c.compile(t)
	if err != nil {
		return nil, err
	}
	return func() int64 { return v.i64[0] }, nil
}

func (ic *idxCompiler) affine(t core.Term) (*affine, bool, error) {
	if a, ok := ic.affMemo[t]; ok {
		return a, a != nil, nil
	}
	a, ok, err := ic.affine1(t)
	if err != nil {
		return nil, false, err
	}
	if ok {
		ic.affMemo[t] = a
	} else {
		ic.affMemo[t] = nil
	}
	return a, ok, nil
}

func (ic *idxCompiler) affine1(t core.Term) (*affine, bool, error) {
	a := &affine{c: make([]int64, ic.n)}
	if l, ok := t.(*core.Lit); ok && len(l.I) == 1 {
		a.c0 = l.I[0]
		return a, true, nil
	}
	if !ic.depends(t) {
		if !t.Type().Equal(core.Scalar(core.Int64)) {
			return nil, false, nil
		}
		g, err := ic.scalarI(t)
		if err != nil {
			return nil, false, err
		}
		a.dyn = g
		return a, true, nil
	}
	switch t := t.(type) {
	case *core.Var:
		a.c[ic.vars[t.Name]] = 1
		return a, true, nil
	case *core.Share:
		return ic.affine(t.Body)
	case *core.Unary:
		if t.Op != core.OpNeg {
			return nil, false, nil
		}
		x, ok, err := ic.affine(t.X)
		if !ok || err != nil {
			return nil, false, err
		}
		return scaleAff(x, -1), true, nil
	case *core.Binary:
		if t.Op != core.OpAdd && t.Op != core.OpSub && t.Op != core.OpMul {
			return nil, false, nil
		}
		x, ok, err := ic.affine(t.X)
		if !ok || err != nil {
			return nil, false, err
		}
		y, ok, err := ic.affine(t.Y)
		if !ok || err != nil {
			return nil, false, err
		}
		switch t.Op {
		case core.OpAdd:
			return addAff(x, y, 1), true, nil
		case core.OpSub:
			return addAff(x, y, -1), true, nil
		default:
			if x.isConst() && x.dyn == nil {
				return scaleAff(y, x.c0), true, nil
			}
			if y.isConst() && y.dyn == nil {
				return scaleAff(x, y.c0), true, nil
			}
		}
	}
	return nil, false, nil
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
			a.dyn = func() int64 { return s * d() }
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
		a.dyn = func() int64 { return dx() + sign*dy() }
	case dx != nil:
		a.dyn = dx
	case dy != nil:
		if sign == 1 {
			a.dyn = dy
		} else {
			a.dyn = func() int64 { return -dy() }
		}
	}
	return a
}

// intFn compiles an i64 scalar index term into a closure; ok is false for unsupported forms.
func (ic *idxCompiler) intFn(t core.Term) (ifn, bool, error) {
	if !t.Type().Equal(core.Scalar(core.Int64)) {
		return nil, false, nil
	}
	if !ic.depends(t) {
		g, err := ic.scalarI(t)
		if err != nil {
			return nil, false, err
		}
		return func([]int64) int64 { return g() }, true, nil
	}
	switch t := t.(type) {
	case *core.Var:
		j := ic.vars[t.Name]
		return func(r []int64) int64 { return r[j] }, true, nil
	case *core.Share:
		return ic.intFn(t.Body)
	case *core.Unary:
		x, ok, err := ic.intFn(t.X)
		if !ok || err != nil {
			return nil, false, err
		}
		switch t.Op {
		case core.OpNeg:
			return func(r []int64) int64 { return -x(r) }, true, nil
		case core.OpAbs:
			return func(r []int64) int64 {
				v := x(r)
				if v < 0 {
					return -v
				}
				return v
			}, true, nil
		case core.OpSign:
			return func(r []int64) int64 {
				v := x(r)
				switch {
				case v > 0:
					return 1
				case v < 0:
					return -1
				}
				return 0
			}, true, nil
		}
	case *core.Binary:
		x, ok, err := ic.intFn(t.X)
		if !ok || err != nil {
			return nil, false, err
		}
		y, ok, err := ic.intFn(t.Y)
		if !ok || err != nil {
			return nil, false, err
		}
		switch t.Op {
		case core.OpAdd:
			return func(r []int64) int64 { return x(r) + y(r) }, true, nil
		case core.OpSub:
			return func(r []int64) int64 { return x(r) - y(r) }, true, nil
		case core.OpMul:
			return func(r []int64) int64 { return x(r) * y(r) }, true, nil
		case core.OpQuot:
			return func(r []int64) int64 { return quotI(x(r), y(r)) }, true, nil
		case core.OpRem:
			return func(r []int64) int64 { return remI(x(r), y(r)) }, true, nil
		case core.OpMax:
			return func(r []int64) int64 { return max(x(r), y(r)) }, true, nil
		case core.OpMin:
			return func(r []int64) int64 { return min(x(r), y(r)) }, true, nil
		}
	case *core.Cond:
		b, ok, err := ic.boolFn(t.C)
		if !ok || err != nil {
			return nil, false, err
		}
		x, ok, err := ic.intFn(t.Then)
		if !ok || err != nil {
			return nil, false, err
		}
		y, ok, err := ic.intFn(t.Else)
		if !ok || err != nil {
			return nil, false, err
		}
		// Strictness is unobservable here: these closures have no effects and never fail.
		return func(r []int64) int64 {
			if b(r) {
				return x(r)
			}
			return y(r)
		}, true, nil
	case *core.Index:
		if ic.depends(t.X) || len(t.Ix) != len(t.X.Type().Shape) {
			return nil, false, nil
		}
		arr, _, err := ic.c.compile(t.X)
		if err != nil {
			return nil, false, err
		}
		ks := make([]ifn, len(t.Ix))
		for k, e := range t.Ix {
			g, ok, err := ic.intFn(e)
			if !ok || err != nil {
				return nil, false, err
			}
			ks[k] = g
		}
		xs := t.X.Type().Shape
		str := xs.Strides()
		if len(ks) == 1 {
			g, hi := ks[0], int64(xs[0])
			return func(r []int64) int64 {
				v := g(r)
				if v < 0 || v >= hi {
					return 0
				}
				return arr.i64[v]
			}, true, nil
		}
		return func(r []int64) int64 {
			off := 0
			for k, g := range ks {
				v := g(r)
				if v < 0 || v >= int64(xs[k]) {
					return 0
				}
				off += int(v) * str[k]
			}
			return arr.i64[off]
		}, true, nil
	}
	return nil, false, nil
}

func (ic *idxCompiler) boolFn(t core.Term) (bfn, bool, error) {
	if !t.Type().Equal(core.Scalar(core.Bool)) {
		return nil, false, nil
	}
	if !ic.depends(t) {
		v, _, err := ic.c.compile(t)
		if err != nil {
			return nil, false, err
		}
		return func([]int64) bool { return v.b[0] }, true, nil
	}
	switch t := t.(type) {
	case *core.Share:
		return ic.boolFn(t.Body)
	case *core.Unary:
		if t.Op == core.OpNot {
			x, ok, err := ic.boolFn(t.X)
			if !ok || err != nil {
				return nil, false, err
			}
			return func(r []int64) bool { return !x(r) }, true, nil
		}
	case *core.Binary:
		if t.X.Type().Dtype == core.Bool {
			x, ok, err := ic.boolFn(t.X)
			if !ok || err != nil {
				return nil, false, err
			}
			y, ok, err := ic.boolFn(t.Y)
			if !ok || err != nil {
				return nil, false, err
			}
			switch t.Op {
			case core.OpAnd:
				return func(r []int64) bool { return x(r) && y(r) }, true, nil
			case core.OpOr:
				return func(r []int64) bool { return x(r) || y(r) }, true, nil
			case core.OpEq:
				return func(r []int64) bool { return x(r) == y(r) }, true, nil
			case core.OpNe:
				return func(r []int64) bool { return x(r) != y(r) }, true, nil
			}
			return nil, false, nil
		}
		x, ok, err := ic.intFn(t.X)
		if !ok || err != nil {
			return nil, false, err
		}
		y, ok, err := ic.intFn(t.Y)
		if !ok || err != nil {
			return nil, false, err
		}
		switch t.Op {
		case core.OpLt:
			return func(r []int64) bool { return x(r) < y(r) }, true, nil
		case core.OpLe:
			return func(r []int64) bool { return x(r) <= y(r) }, true, nil
		case core.OpGt:
			return func(r []int64) bool { return x(r) > y(r) }, true, nil
		case core.OpGe:
			return func(r []int64) bool { return x(r) >= y(r) }, true, nil
		case core.OpEq:
			return func(r []int64) bool { return x(r) == y(r) }, true, nil
		case core.OpNe:
			return func(r []int64) bool { return x(r) != y(r) }, true, nil
		}
	}
	return nil, false, nil
}
