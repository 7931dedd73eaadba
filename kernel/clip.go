package kernel

import (
	"github.com/bulkad/bulkad/core"
	"github.com/pkg/errors"
)

// Clipped affine gather and scatter. An affine index function that is not provably in
// bounds (a convolution's window over a padded image, a shift) still maps each innermost run
// of its domain to a strided run of the other array; only a sub-interval of the run is in
// bounds. A ClipPlan walks the domain as a loop nest and, at each level, narrows the range
// of that level's variable to the values for which the outputs whose last variable it is
// stay in bounds (those outputs are then fully determined):
//
//	0 ≤ b_k + c_k·t < lim_k   for t in [0, dom_j), b_k the output's value from the outer variables
//
// is an interval of t for c_k ≠ 0. What lies outside the interval is skipped as a whole
// block (a gather writes zeros there, a scatter drops it), and the innermost run inside it
// is one strided copy or accumulation: no per-element closure call and no bounds check. An
// output that depends on no variable is checked once per run. The points are visited in
// the domain's row-major order, so a scatter adds colliding writes in the reference order.

// clipMax bounds the constant and the spans of every output (|c0| ≤ clipMax and
// Σ_j |a_j|·dom_j ≤ clipMax), so that no value or partial sum the walk computes overflows.
const clipMax = 1 << 61

// clipTerm is an output k with coefficient c at one level of the walk.
type clipTerm struct {
	k int
	c int64
}

// ClipPlan is the clipped affine form of an index function over a domain (see
// IndexProgram.ClipPlan); it is not changed by the runs and may be used concurrently.
type ClipPlan struct {
	dom  []int        // the domain: the sizes of the n index variables
	lim  []int64      // the bounds of the m outputs (the addressed dims)
	c0   []int64      // the outputs' constant parts (static plans)
	st   []int        // per variable: its step of the target block offset, Σ_k a_kj·bst_k
	bst  []int        // per output: its block stride in the addressed array
	ps   []int        // per variable: its domain-side block stride (row-major over dom)
	span []int64      // per output: Σ_j |a_kj|·max(dom_j, 1), saturated above clipMax
	chk  [][]clipTerm // per level: the outputs whose last variable it is (clipped there)
	upd  [][]clipTerm // per level: the outputs that depend on it and on a later variable
	fix  []int        // the outputs that depend on no variable
	// coef[j][k] is a_kj; wide is set when a step st_j could overflow (the strides are then
	// not used to prove writes disjoint)
	coef [][]int64
	wide bool
}

// ClipPlan returns the clipped affine plan of p over the domain dom addressing the outer
// dims outer of an array (in blocks), or nil when p is not affine with static constants or
// a value could overflow. Unlike AffinePlan it does not require the domain to stay in
// bounds: the Gather and Scatter kernels run it (field IndexPlan.Clip) when AffinePlan
// refuses, as strided runs clipped to the in-bounds interval of each row.
func (p *IndexProgram) ClipPlan(dom, outer []int) *ClipPlan {
	if !p.static() || len(outer) != len(p.aff) || len(dom) != p.nvars {
		return nil
	}
	c := newClipPlan(p.aff, dom, outer)
	if c == nil || !c.fits(c.c0) {
		return nil
	}
	return c
}

// newClipPlan builds the plan of the affine outputs aff (their dynamic parts ignored: the
// evaluator supplies its constants per run) over dom addressing dims lim; nil when a size
// is negative or a span overflows.
func newClipPlan(aff []*affine, dom, lim []int) *ClipPlan {
	n, m := len(dom), len(aff)
	for _, d := range dom {
		if d < 0 {
			return nil
		}
	}
	p := &ClipPlan{
		dom: append([]int{}, dom...), lim: make([]int64, m), c0: make([]int64, m),
		st: make([]int, n), bst: core.Shape(lim).Strides(), ps: core.Shape(dom).Strides(),
		span: make([]int64, m), chk: make([][]clipTerm, n), upd: make([][]clipTerm, n),
		coef: make([][]int64, n),
	}
	if p.bst == nil {
		p.bst = []int{}
	}
	for j := range p.coef {
		p.coef[j] = make([]int64, m)
	}
	for k, a := range aff {
		if len(a.c) != n || lim[k] < 0 {
			return nil
		}
		p.lim[k], p.c0[k] = int64(lim[k]), a.c0
		last := -1
		for j, c := range a.c {
			p.coef[j][k] = c
			if c == 0 {
				continue
			}
			last = j
			if s, ok := mulSat(absI64(c), int64(max(dom[j], 1))); !ok || p.span[k]+s > clipMax {
				p.span[k] = clipMax + 1
			} else {
				p.span[k] += s
			}
			if s, ok := mulSat(absI64(c), int64(p.bst[k])); ok && s <= clipMax {
				p.st[j] += int(c) * p.bst[k]
			} else {
				p.st[j] += int(c) * p.bst[k] // wraps: still exact modulo 2⁶⁴ for in-bounds points
				p.wide = true
			}
		}
		if last < 0 {
			p.fix = append(p.fix, k)
			continue
		}
		p.chk[last] = append(p.chk[last], clipTerm{k, a.c[last]})
		for j := 0; j < last; j++ {
			if c := a.c[j]; c != 0 {
				p.upd[j] = append(p.upd[j], clipTerm{k, c})
			}
		}
	}
	return p
}

// mulSat is a·b for a, b ≥ 0, and false when it exceeds clipMax.
func mulSat(a, b int64) (int64, bool) {
	if a != 0 && b > clipMax/a {
		return 0, false
	}
	return a * b, true
}

func absI64(v int64) int64 {
	if v < 0 {
		return -v
	}
	return v
}

// fits reports whether the walk's arithmetic cannot overflow with the constants c0.
func (p *ClipPlan) fits(c0 []int64) bool {
	for k, v := range c0 {
		if v > clipMax || v < -clipMax || p.span[k] > clipMax {
			return false
		}
	}
	return true
}

// points is the number of points of the domain.
func (p *ClipPlan) points() int { return core.Shape(p.dom).Size() }

// clipRange narrows [lo, hi) to the t with 0 ≤ b + c·t < lim (c ≠ 0).
func clipRange(lo, hi, b, c, lim int64) (int64, int64) {
	switch {
	case c == 1:
		return max(lo, -b), min(hi, lim-b)
	case c == -1:
		return max(lo, b-lim+1), min(hi, b+1)
	case c > 0:
		return max(lo, ceilDiv(-b, c)), min(hi, floorDiv(lim-1-b, c)+1)
	}
	return max(lo, ceilDiv(b-lim+1, -c)), min(hi, floorDiv(b, -c)+1)
}

// clipMover moves the blocks of one clipped gather or scatter; offsets count blocks.
type clipMover interface {
	// row handles the tn points of one innermost row whose blocks start at pos in the
	// domain-side array: those with t in [lo, hi) are in bounds, at target block
	// off + t·step; the others are out of bounds (lo ≤ hi, both within [0, tn]).
	row(pos, tn, lo, hi, off, step int)
	// skip handles cnt consecutive out-of-bounds points from pos.
	skip(pos, cnt int)
}

// clipWalk walks the part of p's domain whose variable d lies in [a, b) (the whole domain
// when a = 0 and b = dom[d]; d is ignored for a rank-0 domain) with the output constants
// c0, calling m for its rows in row-major order. The caller narrows only dimensions that
// keep the part contiguous (all before d of size one) for a mover whose skip writes.
func clipWalk[M clipMover](p *ClipPlan, m M, c0 []int64, d, a, b int) {
	n, nm := len(p.dom), len(c0)
	var vb [8]int64
	var db [8]int
	val, dom := vb[:0], db[:0]
	if nm > len(vb) {
		val = make([]int64, 0, nm)
	}
	if n > len(db) {
		dom = make([]int, 0, n)
	}
	val = append(val, c0...)
	dom = append(dom, p.dom...)
	pos := 0
	if n > 0 {
		for k, c := range p.coef[d] {
			val[k] += c * int64(a)
		}
		dom[d] = b - a
		pos = a * p.ps[d]
	}
	off := 0
	for k, v := range val {
		off += int(v) * p.bst[k]
	}
	// Leading dimensions of one element: their variables are 0, so the outputs whose last
	// variable they are depend on no variable here, like the fixed ones.
	s := 0
	for s < n-1 && dom[s] == 1 {
		s++
	}
	size := core.Shape(dom[s:]).Size()
	if size == 0 {
		return
	}
	ok := true
	for _, k := range p.fix {
		ok = ok && val[k] >= 0 && val[k] < p.lim[k]
	}
	for j := range s {
		for _, t := range p.chk[j] {
			ok = ok && val[t.k] >= 0 && val[t.k] < p.lim[t.k]
		}
	}
	switch {
	case !ok:
		m.skip(pos, size)
	case n == 0:
		m.row(0, 1, 0, 1, off, 0)
	default:
		clipLevel(p, m, dom, val, s, pos, off)
	}
}

// clipLevel walks level j of the loop nest: val holds the outputs' values with the
// variables before j set (and those from j on zero), pos and off the domain-side and target
// block offsets there.
func clipLevel[M clipMover](p *ClipPlan, m M, dom []int, val []int64, j, pos, off int) {
	tn := dom[j]
	lo, hi := int64(0), int64(tn)
	for _, t := range p.chk[j] {
		lo, hi = clipRange(lo, hi, val[t.k], t.c, p.lim[t.k])
	}
	if hi <= lo {
		lo, hi = 0, 0
	}
	l, h, st := int(lo), int(hi), p.st[j]
	if j == len(dom)-1 {
		m.row(pos, tn, l, h, off, st)
		return
	}
	ps := p.ps[j]
	if l > 0 {
		m.skip(pos, l*ps)
	}
	if h < tn {
		m.skip(pos+h*ps, (tn-h)*ps)
	}
	upd := p.upd[j]
	for _, u := range upd {
		val[u.k] += u.c * lo
	}
	pos += l * ps
	off += l * st
	if j == len(dom)-2 {
		// the innermost level inline: one interval and one row per step
		in := p.chk[j+1]
		inSt, tin := p.st[j+1], dom[j+1]
		for t := l; t < h; t++ {
			a, b := int64(0), int64(tin)
			for _, c := range in {
				a, b = clipRange(a, b, val[c.k], c.c, p.lim[c.k])
			}
			if b <= a {
				a, b = 0, 0
			}
			m.row(pos, tin, int(a), int(b), off, inSt)
			for _, u := range upd {
				val[u.k] += u.c
			}
			pos += ps
			off += st
		}
	} else {
		for t := l; t < h; t++ {
			clipLevel(p, m, dom, val, j+1, pos, off)
			for _, u := range upd {
				val[u.k] += u.c
			}
			pos += ps
			off += st
		}
	}
	for _, u := range upd {
		val[u.k] -= u.c * hi
	}
}

// disjoint returns a dimension d of two or more elements along which the slices of the
// domain write disjoint blocks (when in bounds): an output whose coefficient of d exceeds
// the span of its other variables, or a step of the target offset that exceeds the span of
// the others. A scatter split along d adds every block's contributions on one goroutine,
// in the serial order.
func (p *ClipPlan) disjoint() (int, bool) {
	span := 0
	if !p.wide {
		for j, n := range p.dom {
			span += (n - 1) * abs(p.st[j])
		}
	}
	for d, n := range p.dom {
		if n < 2 {
			continue
		}
		if !p.wide && abs(p.st[d]) > span-(n-1)*abs(p.st[d]) {
			return d, true
		}
		for k, c := range p.coef[d] {
			if c != 0 && p.otherSpan(k, d) < absI64(c) {
				return d, true
			}
		}
	}
	return 0, false
}

// otherSpan is Σ_{j≠d} |a_kj|·(dom_j − 1) (below clipMax for a plan that fits).
func (p *ClipPlan) otherSpan(k, d int) int64 {
	s := int64(0)
	for j, n := range p.dom {
		if j != d && n > 1 {
			s += absI64(p.coef[j][k]) * int64(n-1)
		}
	}
	return s
}

// weight is the work weight of one moved element (see costOf).
func (p *ClipPlan) weight(r int) int {
	if n := len(p.dom); r > 1 || n > 0 && abs(p.st[n-1]) == 1 {
		return wCheap // contiguous rows or blocks
	}
	return wStrided
}

// clipGatherRun is the gather of m (its skip writing zeros) with constants c0, split along
// the first dimension of more than one element (all but the innermost) across goroutines
// when large: every output block is written once.
func clipGatherRun[M clipMover](p *ClipPlan, m M, c0 []int64, r int) {
	n := len(p.dom)
	if n > 1 {
		work := costOf(p.points()*r, p.weight(r))
		if d, ok := splitDim(p.dom[:n-1], work); ok {
			inParallel(p.dom[d], work, func(lo, hi int) { clipWalk(p, m, c0, d, lo, hi) })
			return
		}
	}
	clipWalk(p, m, c0, 0, 0, p.first())
}

// clipScatterRun is the scatter of m (out cleared by the caller) with constants c0, split
// across goroutines along a dimension whose slices write disjoint blocks (disjoint) when
// large.
func clipScatterRun[M clipMover](p *ClipPlan, m M, c0 []int64, r int) {
	if d, ok := p.disjoint(); ok {
		work := costOf(p.points()*r, p.weight(r))
		if workers(p.dom[d], work) > 1 {
			inParallel(p.dom[d], work, func(lo, hi int) { clipWalk(p, m, c0, d, lo, hi) })
			return
		}
	}
	clipWalk(p, m, c0, 0, 0, p.first())
}

// first is the size of the first dimension (0 for a rank-0 domain).
func (p *ClipPlan) first() int {
	if len(p.dom) == 0 {
		return 0
	}
	return p.dom[0]
}

// check reports an error unless out and x have the plan's sizes for blocks of r elements
// (what is the gather's or scatter's domain side, the other its addressed side).
func (p *ClipPlan) check(op string, domSide, other, r int) error {
	want := core.Shape(p.dom).Size() * r
	lim := 1
	for _, v := range p.lim {
		lim *= int(v)
	}
	if domSide != want || other != lim*r {
		return errors.Errorf("kernel: %s: clipped plan over domain %v addressing %v (blocks of %d): got %d and %d elements, want %d and %d",
			op, p.dom, p.lim, r, domSide, other, want, lim*r)
	}
	return nil
}

// ---- movers ----

// clipGather: dst[point ++ rest] = src[f(point) ++ rest], zeros out of bounds.
type clipGather[T any] struct {
	dst, src []T
	r        int
}

func (g clipGather[T]) row(pos, tn, lo, hi, off, step int) {
	r := g.r
	if r == 1 {
		row := g.dst[pos : pos+tn]
		clear(row[:lo])
		clear(row[hi:])
		s := off + lo*step
		switch {
		case hi <= lo:
		case step == 1 && hi-lo > 16:
			copy(row[lo:hi], g.src[s:s+hi-lo])
		case step == 1:
			for t, v := range g.src[s : s+hi-lo] {
				row[lo+t] = v
			}
		default:
			seg := row[lo:hi]
			for t := range seg {
				seg[t] = g.src[s]
				s += step
			}
		}
		return
	}
	row := g.dst[pos*r : (pos+tn)*r]
	clear(row[:lo*r])
	clear(row[hi*r:])
	s := (off + lo*step) * r
	for t := lo; t < hi; t++ {
		copy(row[t*r:(t+1)*r], g.src[s:s+r])
		s += step * r
	}
}

func (g clipGather[T]) skip(pos, cnt int) { clear(g.dst[pos*g.r : (pos+cnt)*g.r]) }

// clipScatter: dst[f(point) ++ rest] += src[point ++ rest], dropped out of bounds.
type clipScatter[T numT] struct {
	dst, src []T
	r        int
}

func (s clipScatter[T]) row(pos, _, lo, hi, off, step int) {
	r := s.r
	if r == 1 {
		d := off + lo*step
		for _, v := range s.src[pos+lo : pos+hi] {
			s.dst[d] += v
			d += step
		}
		return
	}
	d := (off + lo*step) * r
	for t := lo; t < hi; t++ {
		addTo(s.dst[d:d+r], s.src[(pos+t)*r:(pos+t+1)*r])
		d += step * r
	}
}

func (clipScatter[T]) skip(int, int) {}

// clipScatterOr is clipScatter for booleans (the op kernels accumulate them with ||).
type clipScatterOr struct {
	dst, src []bool
	r        int
}

func (s clipScatterOr) row(pos, _, lo, hi, off, step int) {
	r := s.r
	d := (off + lo*step) * r
	for t := lo; t < hi; t++ {
		dst := s.dst[d : d+r]
		for i, v := range s.src[(pos+t)*r : (pos+t+1)*r] {
			dst[i] = dst[i] || v
		}
		d += step * r
	}
}

func (clipScatterOr) skip(int, int) {}

// ---- the op kernels' entry points ----

// gatherClip is the Gather kernel's clipped path: out[i ++ rest] = x[f(i) ++ rest] over
// the plan's domain, blocks of r elements, zeros where f(i) is out of bounds.
func gatherClip[T elem](p *ClipPlan, out, x []T, r int) error {
	if err := p.check("gather", len(out), len(x), r); err != nil {
		return err
	}
	if r > 0 {
		clipGatherRun(p, clipGather[T]{out, x, r}, p.c0, r)
	}
	return nil
}

// scatterClip is the Scatter kernel's clipped path: out[f(i) ++ rest] += x[i ++ rest]
// (out cleared first, || for booleans), out-of-bounds writes dropped.
func scatterClip[T elem](p *ClipPlan, out, x []T, r int) error {
	if err := p.check("scatter", len(x), len(out), r); err != nil {
		return err
	}
	clear(out)
	if r == 0 {
		return nil
	}
	switch o := any(out).(type) {
	case []float64:
		clipScatterRun(p, clipScatter[float64]{o, any(x).([]float64), r}, p.c0, r)
	case []float32:
		clipScatterRun(p, clipScatter[float32]{o, any(x).([]float32), r}, p.c0, r)
	case []int64:
		clipScatterRun(p, clipScatter[int64]{o, any(x).([]int64), r}, p.c0, r)
	case []bool:
		clipScatterRun(p, clipScatterOr{o, any(x).([]bool), r}, p.c0, r)
	}
	return nil
}
