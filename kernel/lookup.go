package kernel

import "github.com/bulkad/bulkad/core"

// LookupPlan returns the affine block strides and base offset of fn over domain dom
// addressing the outer dims outer, and the table of the looked-up offsets, when fn has that
// form and is provably in bounds.
//
// arrRange gives the number of values the looked-up array can take ([0, K)), or 0 when it
// is not known to be an argmax.
func LookupPlan(fn *core.IndexFn, prog *IndexProgram, dom, outer []int, arrRange func(core.Term) int) (*Lookup, bool) {
	return lookupPlan(fn, prog, dom, outer, arrRange, false)
}

// LookupClipPlan is LookupPlan for a function that may reach out of bounds, such as a padded
// max-pool window's argmax (the analysis cannot tell that the argmax never picks padding):
// when it is not provably in bounds, the plan's Dims check every output per point (a gather
// writes zeros and a scatter drops what falls outside, as the reference does). It needs each
// output to depend on at most one domain variable.
func LookupClipPlan(fn *core.IndexFn, prog *IndexProgram, dom, outer []int, arrRange func(core.Term) int) (*Lookup, bool) {
	return lookupPlan(fn, prog, dom, outer, arrRange, true)
}

func lookupPlan(fn *core.IndexFn, prog *IndexProgram, dom, outer []int, arrRange func(core.Term) int, clip bool) (*Lookup, bool) {
	if len(prog.Frees) == 0 {
		return nil, false
	}
	// Several extra inputs are allowed when they are the same array (repeated occurrences
	// of one argmax that are not shared in the term DAG); the kernel reads the first.
	arr := prog.Frees[0]
	for _, f := range prog.Frees[1:] {
		if !core.Equal(f, arr) {
			return nil, false
		}
	}
	at := arr.Type()
	k := arrRange(arr)
	if k < 1 || at.Dtype != core.Int64 || !core.Shape(dom).Equal(at.Shape) {
		return nil, false
	}
	for _, d := range dom {
		if d == 0 {
			return nil, false
		}
	}
	n := len(fn.Vars)
	ls := &lookupSplit{vars: make(map[string]int, n), n: n, arr: arr, frees: prog.Frees, prog: prog}
	for i, v := range fn.Vars {
		ls.vars[v.Name] = i
	}
	ost := core.Shape(outer).Strides()
	l := &Lookup{St: make([]int, n), Table: make([]int, k), Injective: true}
	dimOf := make([]int, n) // the one output each variable appears in (-1: none yet)
	for v := range dimOf {
		dimOf[v] = -1
	}
	dims := make([]LookupDim, len(fn.Out))
	inBounds := true
	for d, o := range fn.Out {
		coef, c, res, ok := ls.split(o)
		if !ok {
			return nil, false
		}
		dims[d] = LookupDim{Var: -1, Const: c, Res: make([]int64, k), Lim: int64(outer[d]), Stride: ost[d]}
		lo, hi := c, c
		for v, a := range coef {
			m := a * int64(dom[v]-1)
			if m < 0 {
				lo += m
			} else {
				hi += m
			}
		}
		var rlo, rhi int64
		for a := 0; a < k; a++ {
			var s int64
			for _, r := range res {
				v, ok := ls.eval(r.t, int64(a))
				if !ok {
					return nil, false
				}
				s += r.mult * v
			}
			if a == 0 || s < rlo {
				rlo = s
			}
			if a == 0 || s > rhi {
				rhi = s
			}
			l.Table[a] += int(s) * ost[d]
			dims[d].Res[a] = s
		}
		if lo+rlo < 0 || hi+rhi >= int64(outer[d]) {
			if !clip {
				return nil, false
			}
			inBounds = false
		}
		l.Base += int(c) * ost[d]
		vars := 0
		for v, a := range coef {
			l.St[v] += int(a) * ost[d]
			if a == 0 {
				continue
			}
			vars++
			if dimOf[v] >= 0 || rhi-rlo >= abs64(a) {
				l.Injective = false
			}
			dimOf[v] = d
			dims[d].Var, dims[d].Coef = v, a
		}
		if vars > 1 {
			l.Injective = false
			if clip {
				return nil, false // a clipped output is one variable's
			}
		}
	}
	if !inBounds {
		l.Dims = dims
	}
	for v, d := range dimOf {
		if d < 0 && dom[v] > 1 {
			l.Injective = false
		}
	}
	return l, true
}

func abs64(a int64) int64 {
	if a < 0 {
		return -a
	}
	return a
}

// lookupSplit splits index terms into an affine part and looked-up parts.
type lookupSplit struct {
	vars  map[string]int
	n     int
	arr   core.Term   // the looked-up array: a hoisted term or a free variable
	frees []core.Term // all extra inputs (each equal to arr)
	prog  *IndexProgram
}

// A resTerm is mult times a term of the looked-up value only.
type resTerm struct {
	mult int64
	t    core.Term
}

// isLookup reports whether t (or the term the index compiler rewrote it to) is
// index arr [k0, …, kn-1] with the bound variables in order.
func (ls *lookupSplit) isLookup(t core.Term) bool {
	if r, ok := ls.prog.Rewrites[t]; ok {
		t = r
	}
	ix, ok := t.(*core.Index)
	if !ok || len(ix.Ix) != ls.n {
		return false
	}
	if av, isVar := ls.arr.(*core.Var); isVar {
		if xv, ok := ix.X.(*core.Var); !ok || xv.Name != av.Name {
			return false
		}
	} else {
		found := false
		for _, f := range ls.frees {
			found = found || ix.X == f
		}
		if !found {
			return false
		}
	}
	for i, e := range ix.Ix {
		v, ok := e.(*core.Var)
		if !ok {
			return false
		}
		if k, bound := ls.vars[v.Name]; !bound || k != i {
			return false
		}
	}
	return true
}

// eval evaluates a term of the looked-up value a only (literals, the lookup, i64 arithmetic).
func (ls *lookupSplit) eval(t core.Term, a int64) (int64, bool) {
	if ls.isLookup(t) {
		return a, true
	}
	if t.Type().Dtype != core.Int64 || !t.Type().IsScalar() {
		return 0, false
	}
	switch u := t.(type) {
	case *core.Lit:
		if u.I == nil {
			return 0, false
		}
		return u.I[0], true
	case *core.Share:
		return ls.eval(u.Body, a)
	case *core.Unary:
		if u.Op != core.OpNeg {
			return 0, false
		}
		x, ok := ls.eval(u.X, a)
		return -x, ok
	case *core.Binary:
		f := intBinFunc(u.Op)
		if f == nil || u.X.Type().Dtype != core.Int64 {
			return 0, false
		}
		x, ok1 := ls.eval(u.X, a)
		y, ok2 := ls.eval(u.Y, a)
		if !ok1 || !ok2 {
			return 0, false
		}
		return f(x, y), true
	}
	return 0, false
}

// split writes t as c + Σ coef[v]·var_v + Σ mult·r(a).
func (ls *lookupSplit) split(t core.Term) (coef []int64, c int64, res []resTerm, ok bool) {
	if coef, c, res, ok = ls.structural(t); ok {
		return coef, c, res, true
	}
	if _, ok := ls.eval(t, 0); ok {
		return make([]int64, ls.n), 0, []resTerm{{1, t}}, true
	}
	return nil, 0, nil, false
}

func (ls *lookupSplit) structural(t core.Term) (coef []int64, c int64, res []resTerm, ok bool) {
	switch u := t.(type) {
	case *core.Var:
		k, bound := ls.vars[u.Name]
		if !bound {
			return nil, 0, nil, false
		}
		coef = make([]int64, ls.n)
		coef[k] = 1
		return coef, 0, nil, true
	case *core.Lit:
		if u.I == nil {
			return nil, 0, nil, false
		}
		return make([]int64, ls.n), u.I[0], nil, true
	case *core.Share:
		return ls.split(u.Body)
	case *core.Unary:
		if u.Op != core.OpNeg {
			return nil, 0, nil, false
		}
		a, ac, ar, ok := ls.split(u.X)
		if !ok {
			return nil, 0, nil, false
		}
		return scaleSplit(a, ac, ar, -1)
	case *core.Binary:
		if u.Op != core.OpAdd && u.Op != core.OpSub && u.Op != core.OpMul {
			return nil, 0, nil, false
		}
		a, ac, ar, ok1 := ls.split(u.X)
		b, bc, br, ok2 := ls.split(u.Y)
		if !ok1 || !ok2 {
			return nil, 0, nil, false
		}
		switch u.Op {
		case core.OpAdd, core.OpSub:
			if u.Op == core.OpSub {
				b, bc, br, _ = scaleSplit(b, bc, br, -1)
			}
			for i := range a {
				a[i] += b[i]
			}
			return a, ac + bc, append(ar, br...), true
		default: // OpMul by a constant
			if isZero(a) && len(ar) == 0 {
				return scaleSplit(b, bc, br, ac)
			}
			if isZero(b) && len(br) == 0 {
				return scaleSplit(a, ac, ar, bc)
			}
		}
	}
	return nil, 0, nil, false
}

func scaleSplit(coef []int64, c int64, res []resTerm, s int64) ([]int64, int64, []resTerm, bool) {
	for i := range coef {
		coef[i] *= s
	}
	out := make([]resTerm, len(res))
	for i, r := range res {
		out[i] = resTerm{r.mult * s, r.t}
	}
	return coef, c * s, out, true
}

// lookupCheck reports whether every looked-up value indexes the table.
func lookupCheck(lk []int64, n int) bool {
	for _, v := range lk {
		if uint64(v) >= uint64(n) {
			return false
		}
	}
	return true
}

func gatherLookup[T elem](out, x []T, lk []int64, table []int, dom, st []int, base, r int) {
	// every output block is written once: large gathers split along the domain
	work := costOf(len(out), wStrided)
	if d, ok := splitDim(dom, work); ok {
		inParallel(dom[d], work, func(lo, hi int) {
			part, p0, p1 := subDom(dom, d, lo, hi)
			gatherLookupRun(out[p0*r:p1*r], x, lk[p0:p1], table, part, st[d:], base+lo*st[d], r)
		})
		return
	}
	gatherLookupRun(out, x, lk, table, dom, st, base, r)
}

// gatherLookupRun is gatherLookup on the calling goroutine.
func gatherLookupRun[T elem](out, x []T, lk []int64, table []int, dom, st []int, base, r int) {
	affineWalk(dom, st, base, func(p, off, count, stride int) {
		if r == 1 {
			o := out[p : p+count]
			l := lk[p : p+count]
			for j := range o {
				o[j] = x[off+table[l[j]]]
				off += stride
			}
			return
		}
		for j := 0; j < count; j++ {
			s := (off + table[lk[p+j]]) * r
			copy(out[(p+j)*r:(p+j+1)*r], x[s:s+r])
			off += stride
		}
	})
}

func scatterLookup[T elem](out, x []T, lk []int64, table []int, dom, st []int, base, r int, add func(a, b T) T) {
	clear(out)
	if r == 1 {
		switch o := any(out).(type) {
		case []float64:
			scatterLookup1(o, any(x).([]float64), lk, table, dom, st, base)
			return
		case []float32:
			scatterLookup1(o, any(x).([]float32), lk, table, dom, st, base)
			return
		}
	}
	affineWalk(dom, st, base, func(p, off, count, stride int) {
		for j := 0; j < count; j++ {
			d := (off + table[lk[p+j]]) * r
			dst := out[d : d+r]
			for i, v := range x[(p+j)*r : (p+j+1)*r] {
				dst[i] = add(dst[i], v)
			}
			off += stride
		}
	})
}

// scatterLookup1 is scatterLookup for one element per block, with the addition inlined.
func scatterLookup1[T ~float64 | ~float32](out, x []T, lk []int64, table []int, dom, st []int, base int) {
	affineWalk(dom, st, base, func(p, off, count, stride int) {
		xs, ls := x[p:p+count], lk[p:p+count]
		for j, v := range xs {
			out[off+table[ls[j]]] += v
			off += stride
		}
	})
}

// Lookup is the looked-up fast path of a gather or scatter (see lookupPlan): block
// offset = base + Σ st[v]·k_v + table[A[k]].
type Lookup struct {
	St    []int
	Base  int
	Table []int
	// injective: distinct domain points address distinct positions (every variable appears
	// in one output only, alone, with a coefficient larger than the spread of that output's
	// looked-up part), so a scatter never adds two contributions to one position.
	Injective bool
	// Dims, set only by LookupClipPlan for a function not provably in bounds, are its outputs
	// one by one, each checked per point (St, Base and Table are then not used).
	Dims []LookupDim
}

// LookupDim is one output of a clipped lookup: position Const + Coef·k_Var (no variable when
// Var < 0) + Res[A[k]], in bounds when within [0, Lim), Stride elements (in blocks) apart.
type LookupDim struct {
	Var         int
	Coef, Const int64
	Res         []int64
	Lim         int64
	Stride      int
}

// lookupClipWalk calls f(p, off) for every point p of the domain dom (row-major) whose
// outputs are all in bounds, with the block offset off they address (lk: the looked-up
// values, one per point).
func lookupClipWalk(dims []LookupDim, dom []int, lk []int64, f func(p, off int)) {
	lookupClipRange(dims, dom, lk, 0, len(lk), f)
}

// lookupClipRange is lookupClipWalk over the points [p0, p1) of the domain.
func lookupClipRange(dims []LookupDim, dom []int, lk []int64, p0, p1 int, f func(p, off int)) {
	idx := make([]int, len(dom))
	for v, q := len(dom)-1, p0; v >= 0 && dom[v] > 0; v-- {
		idx[v], q = q%dom[v], q/dom[v]
	}
	for p := p0; p < p1; p++ {
		a := lk[p]
		off, in := 0, true
		for i := range dims {
			d := &dims[i]
			pos := d.Const + d.Res[a]
			if d.Var >= 0 {
				pos += d.Coef * int64(idx[d.Var])
			}
			if pos < 0 || pos >= d.Lim {
				in = false
				break
			}
			off += int(pos) * d.Stride
		}
		if in {
			f(p, off)
		}
		for v := len(idx) - 1; v >= 0; v-- {
			if idx[v]++; idx[v] < dom[v] {
				break
			}
			idx[v] = 0
		}
	}
}

// gatherLookupClip is gatherLookup for a clipped lookup: points out of bounds read zeros.
// Every output block is written once: large gathers split the points across goroutines.
func gatherLookupClip[T elem](out, x []T, lk []int64, dom []int, ld []LookupDim, r int) {
	run := func(p0, p1 int) {
		clear(out[p0*r : p1*r])
		lookupClipRange(ld, dom, lk, p0, p1, func(p, off int) {
			copy(out[p*r:(p+1)*r], x[off*r:(off+1)*r])
		})
	}
	if work := costOf(len(out), wStrided); workers(len(lk), work) > 1 {
		inParallel(len(lk), work, run)
		return
	}
	run(0, len(lk))
}

// scatterLookupClip is scatterLookup for a clipped lookup: points out of bounds are dropped.
func scatterLookupClip[T elem](out, x []T, lk []int64, dom []int, ld []LookupDim, r int, add func(a, b T) T) {
	clear(out)
	lookupClipWalk(ld, dom, lk, func(p, off int) {
		dst := out[off*r : (off+1)*r]
		for i, v := range x[p*r : (p+1)*r] {
			dst[i] = add(dst[i], v)
		}
	})
}

// indices returns the looked-up array (the op's second input) when the fast path applies to
// a domain of shape dom: every value within the table.
func (l *Lookup) indices(dom []int, ins []any) ([]int64, bool) {
	if l == nil || len(ins) < 2 {
		return nil, false
	}
	lk, ok := ins[1].([]int64)
	if !ok || len(lk) != core.Shape(dom).Size() || !lookupCheck(lk, len(l.Table)) {
		return nil, false
	}
	return lk, true
}
