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
// is one strided copy or accumulation: no per-element closure call and no per-element
// index check. An output that depends on no variable is checked once per run.
//
// The walk records its runs as segments (clipSeg) and hands them to the mover in batches,
// so that the mover's loops are not a call per row. When the intervals of the two or three
// innermost variables do not depend on each other (a convolution's window rows and columns
// do not depend on its channel), one segment covers all their blocks: a 3×3 window over 32
// channels is one segment of 288 points. The points are visited in the domain's row-major
// order, so a scatter adds colliding writes in the reference order.

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
	// coef[j][k] is a_kj; wide is set when a step st_j could wrap (the strides are then not
	// used to prove writes disjoint)
	coef [][]int64
	wide bool
	// depth is the number of innermost variables one segment of the walk covers: 3 when
	// the outputs clipped at the two innermost levels do not depend on the third-innermost
	// variable nor those of the innermost level on the second-innermost one (the intervals
	// are the same for all the blocks of a segment), 2 when only the latter holds, else 1
	depth int
	// across and acrossAdd are the same plan walked in another order for a gather and for a
	// scatter of single elements (see acrossPlan), nil when the domain's own order is used;
	// in them, ps are the domain-side strides of the original order (a row steps ps[n-1]
	// points of the domain-side array, backwards for a reversed variable) and pos0 is the
	// domain-side position of the walk's first point
	across, acrossAdd *ClipPlan
	pos0              int
	// lead: in an across plan, the walk's first variable is the domain's first (the output
	// is contiguous blocks of it)
	lead bool
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
	c.across = c.acrossPlan(p.aff, outer, false)
	c.acrossAdd = c.acrossPlan(p.aff, outer, true)
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
	stAbs := make([]int64, n) // Σ_k |a_kj|·bst_k, to tell whether st_j can wrap
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
			// st_j may wrap; it is still exact modulo 2⁶⁴ at in-bounds points, whose offsets fit
			p.st[j] += int(c) * p.bst[k]
			s, ok := mulSat(absI64(c), int64(p.bst[k]))
			if stAbs[j] += s; !ok || stAbs[j] > clipMax {
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
	p.depth = min(n, 1)
	if n > 1 && p.free(n-1, n-2) {
		p.depth = 2
		if n > 2 && p.free(n-1, n-3) && p.free(n-2, n-3) {
			p.depth = 3
		}
	}
	return p
}

// free reports whether no output clipped at level j depends on variable i.
func (p *ClipPlan) free(j, i int) bool {
	for _, t := range p.chk[j] {
		if p.coef[i][t.k] != 0 {
			return false
		}
	}
	return true
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

// clipGeom is what every segment of one walk shares. A segment's points form reps
// blocks of tn2 rows of tn points (its innermost depth variables: a block is one row for
// depth 1 and 2, the rows of the second-innermost variable for depth 3); rowPos and rowOff
// are the domain-side and target block strides of the rows within a block, repPos and
// repOff those of the blocks, step the target stride along a row.
type clipGeom struct {
	tn, tn2, step  int
	pstep          int // the domain-side stride along a row: 1 but in an across plan
	rowPos, rowOff int
	repPos, repOff int
}

// clipSeg is a run of the walk, in blocks. With reps ≥ 1: reps blocks, the first at block
// pos of the domain-side array and target block off; in each, the rows i in [l1, h1) have
// their points t in [lo, hi) in bounds at target off + i·rowOff + t·step (l1 ≤ h1 within
// [0, tn2], lo ≤ hi within [0, tn]), every other point is out of bounds. With reps < 0:
// −reps consecutive points from pos, all out of bounds.
type clipSeg struct {
	pos, off, reps int
	l1, h1, lo, hi int
}

// clipBatch is the number of segments the walk hands to its mover at once (the mover's
// loop over them is not a call per row): the length of the buffer newClipSegs makes.
const clipBatch = 64

// newClipSegs is a buffer of segments for one walk. (The walk takes it from its caller:
// the mover is called through the generic dictionary, so the escape analysis cannot keep a
// buffer it is handed on the walk's stack.)
func newClipSegs() *[clipBatch]clipSeg { return new([clipBatch]clipSeg) }

// clipMover moves the blocks of a batch of segments of one clipped gather or scatter.
type clipMover interface {
	rows(segs []clipSeg, g clipGeom)
}

// clipWalker is the state of one walk (one goroutine's part of the domain). (The sizes and
// values the walk updates are not in it: the escape analysis would move them to the heap
// with the segments it hands to the mover.)
type clipWalker[M clipMover] struct {
	p    *ClipPlan
	m    M
	g    clipGeom
	n    int // segments in segs
	segs *[clipBatch]clipSeg
}

// flush hands the pending segments to the mover (not inlined: seg is, and flushes rarely).
//
//go:noinline
func (w *clipWalker[M]) flush() {
	w.m.rows(w.segs[:w.n], w.g)
	w.n = 0
}

// seg adds a segment (the buffer is never left full: inlined, the common path is a store).
func (w *clipWalker[M]) seg(s clipSeg) {
	w.segs[w.n] = s
	if w.n++; w.n == clipBatch {
		w.flush()
	}
}

// skip adds cnt out-of-bounds points from pos.
func (w *clipWalker[M]) skip(pos, cnt int) {
	if cnt > 0 {
		w.seg(clipSeg{pos: pos, reps: -cnt})
	}
}

// clipWalk walks the part of p's domain whose variable d lies in [a, b) (the whole domain
// when a = 0 and b = dom[d]; d is ignored for a rank-0 domain) with the output constants
// c0, calling m for its rows in row-major order. The caller narrows only dimensions that
// keep the part contiguous (all before d of size one) for a mover that writes out-of-bounds
// points (a gather). segs is the walk's buffer (newClipSegs).
func clipWalk[M clipMover](p *ClipPlan, m M, c0 []int64, d, a, b int, segs *[clipBatch]clipSeg) {
	n, nm := len(p.dom), len(c0)
	var vb [8]int64
	var db [8]int
	w := clipWalker[M]{p: p, m: m, segs: segs, g: clipGeom{tn: 1, tn2: 1}}
	val, dom := vb[:0], db[:0]
	if nm > len(vb) {
		val = make([]int64, 0, nm)
	}
	if n > len(db) {
		dom = make([]int, 0, n)
	}
	val = append(val, c0...)
	dom = append(dom, p.dom...)
	pos := p.pos0
	if n > 0 {
		for k, c := range p.coef[d] {
			val[k] += c * int64(a)
		}
		dom[d] = b - a
		pos = p.pos0 + a*p.ps[d]
		w.g.tn, w.g.step, w.g.pstep = dom[n-1], p.st[n-1], p.ps[n-1]
		if n > 1 {
			w.g.repPos, w.g.repOff = p.ps[n-2], p.st[n-2]
		}
		if p.depth == 3 {
			w.g.tn2 = dom[n-2]
			w.g.rowPos, w.g.rowOff = p.ps[n-2], p.st[n-2]
			w.g.repPos, w.g.repOff = p.ps[n-3], p.st[n-3]
		}
	}
	off := 0
	for k, v := range val {
		off += int(v) * p.bst[k]
	}
	// Leading dimensions of one element: their variables are 0, so the outputs whose last
	// variable they are depend on no variable here, like the fixed ones.
	s := 0
	for s < n-p.depth && dom[s] == 1 {
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
		w.skip(pos, size)
	case n == 0:
		w.seg(clipSeg{off: off, reps: 1, h1: 1, hi: 1})
	default:
		w.level(dom, val, s, pos, off)
	}
	if w.n > 0 {
		w.flush()
	}
}

// interval is the range of a level's variable (of tn values) for which the outputs
// checked there (chk) are in bounds, given their values val with the variable at 0; empty
// as [0, 0).
func (p *ClipPlan) interval(chk []clipTerm, val []int64, tn int) (int, int) {
	lo, hi := int64(0), int64(tn)
	for _, c := range chk {
		if v := val[c.k]; c.c == 1 {
			lo, hi = max(lo, -v), min(hi, p.lim[c.k]-v)
		} else {
			lo, hi = clipRange(lo, hi, v, c.c, p.lim[c.k])
		}
	}
	if hi <= lo {
		return 0, 0
	}
	return int(lo), int(hi)
}

// level walks level j of the loop nest of the part with sizes dom from the domain-side and
// target block offsets pos and off of its first point; val holds the outputs' values there.
func (w *clipWalker[M]) level(dom []int, val []int64, j, pos, off int) {
	p, n := w.p, len(dom)
	tn := dom[j]
	l, h := p.interval(p.chk[j], val, tn)
	if j == n-1 { // a rank-1 domain: one row
		w.seg(clipSeg{pos: pos, off: off, reps: 1, h1: 1, lo: l, hi: h})
		return
	}
	ps, st := p.ps[j], p.st[j]
	w.skip(pos, l*ps)
	upd := p.upd[j]
	switch {
	case j == n-3 && p.depth == 3:
		// blocks of the two innermost variables, whose intervals do not depend on this one
		if h > l {
			l1, h1 := p.interval(p.chk[n-2], val, dom[n-2])
			lo, hi := p.interval(p.chk[n-1], val, dom[n-1])
			w.seg(clipSeg{pos + l*ps, off + l*st, h - l, l1, h1, lo, hi})
		}
	case j == n-2 && p.depth == 2:
		// rows whose interval does not depend on this variable
		if h > l {
			lo, hi := p.interval(p.chk[n-1], val, dom[n-1])
			w.seg(clipSeg{pos + l*ps, off + l*st, h - l, 0, 1, lo, hi})
		}
	case j == n-2:
		// rows, each with its interval
		in, tin := p.chk[n-1], dom[n-1]
		for _, u := range upd {
			val[u.k] += u.c * int64(l)
		}
		for t := l; t < h; t++ {
			lo, hi := p.interval(in, val, tin)
			w.seg(clipSeg{pos + t*ps, off + t*st, 1, 0, 1, lo, hi})
			for _, u := range upd {
				val[u.k] += u.c
			}
		}
		for _, u := range upd {
			val[u.k] -= u.c * int64(h)
		}
	default:
		for _, u := range upd {
			val[u.k] += u.c * int64(l)
		}
		for t := l; t < h; t++ {
			w.level(dom, val, j+1, pos+t*ps, off+t*st)
			for _, u := range upd {
				val[u.k] += u.c
			}
		}
		for _, u := range upd {
			val[u.k] -= u.c * int64(h)
		}
	}
	w.skip(pos+h*ps, (tn-h)*ps)
}

// disjoint returns a dimension d of two or more elements along which the slices of the
// domain write disjoint blocks (when in bounds): an output whose coefficient of d exceeds
// the span of its other variables, or a step of the target offset that exceeds the span of
// the others. A scatter split along d adds every block's contributions on one goroutine,
// in the serial order.
func (p *ClipPlan) disjoint() (int, bool) {
	strides := !p.wide // the strides' criterion, when the span of the offsets fits
	span := int64(0)
	for j, n := range p.dom {
		s, ok := mulSat(absI64(int64(p.st[j])), int64(max(n-1, 0)))
		if span += s; !ok || span > clipMax {
			strides = false
		}
	}
	for d, n := range p.dom {
		if n < 2 {
			continue
		}
		if sd := absI64(int64(p.st[d])); strides && sd > span-sd*int64(n-1) {
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

// clipGatherRun is the gather of m (writing zeros for the out-of-bounds segments) with
// constants c0, split along the first dimension of more than one element (all but the
// innermost) across goroutines when large: every output block is written once. segs is
// the buffer of a serial walk.
func clipGatherRun[M clipMover](p *ClipPlan, m M, c0 []int64, r int, segs *[clipBatch]clipSeg) {
	n := len(p.dom)
	if n > 1 {
		work := costOf(p.points()*r, p.weight(r))
		if d, ok := splitDim(p.dom[:n-1], work); ok {
			inParallel(p.dom[d], work, func(lo, hi int) { clipWalk(p, m, c0, d, lo, hi, newClipSegs()) })
			return
		}
	}
	clipWalk(p, m, c0, 0, 0, p.first(), segs)
}

// clipScatterRun is the scatter of m (out cleared by the caller) with constants c0, split
// across goroutines along a dimension whose slices write disjoint blocks (disjoint) when
// large. segs is the buffer of a serial walk.
func clipScatterRun[M clipMover](p *ClipPlan, m M, c0 []int64, r int, segs *[clipBatch]clipSeg) {
	if d, ok := p.disjoint(); ok {
		work := costOf(p.points()*r, p.weight(r))
		if workers(p.dom[d], work) > 1 {
			inParallel(p.dom[d], work, func(lo, hi int) { clipWalk(p, m, c0, d, lo, hi, newClipSegs()) })
			return
		}
	}
	clipWalk(p, m, c0, 0, 0, p.first(), segs)
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

func (c clipGather[T]) rows(segs []clipSeg, g clipGeom) {
	for _, sg := range segs {
		if sg.reps < 0 {
			clear(c.dst[sg.pos*c.r : (sg.pos-sg.reps)*c.r])
			continue
		}
		pos, off := sg.pos, sg.off
		if c.r == 1 && g.step == 1 && sg.hi-sg.lo <= 16 {
			// short contiguous runs of single elements (a convolution's window rows): inline
			tn, lo, hi := g.tn, sg.lo, sg.hi
			for range sg.reps {
				p, o := pos, off+lo
				for i := range g.tn2 {
					row := c.dst[p : p+tn]
					if i < sg.l1 || i >= sg.h1 || hi <= lo {
						clear(row)
					} else {
						if lo > 0 {
							clear(row[:lo])
						}
						if hi < tn {
							clear(row[hi:])
						}
						d := row[lo:hi]
						for t, v := range c.src[o : o+len(d)] {
							d[t] = v
						}
					}
					p += g.rowPos
					o += g.rowOff
				}
				pos += g.repPos
				off += g.repOff
			}
			continue
		}
		for range sg.reps {
			p, o := pos, off
			for i := range g.tn2 {
				if i < sg.l1 || i >= sg.h1 {
					clear(c.dst[p*c.r : (p+g.tn)*c.r])
				} else {
					c.row(p, g.tn, sg.lo, sg.hi, o, g.step)
				}
				p += g.rowPos
				o += g.rowOff
			}
			pos += g.repPos
			off += g.repOff
		}
	}
}

// row writes the tn blocks from pos: those in [lo, hi) from target off + t·step, the
// others zero.
func (c clipGather[T]) row(pos, tn, lo, hi, off, step int) {
	r := c.r
	row := c.dst[pos*r : (pos+tn)*r]
	if lo > 0 {
		clear(row[:lo*r])
	}
	if hi < tn {
		clear(row[hi*r:])
	}
	if hi <= lo {
		return
	}
	s := (off + lo*step) * r
	switch {
	case r == 1 && step == 1 && hi-lo > 16:
		copy(row[lo:hi], c.src[s:s+hi-lo])
	case r == 1 && step == 1:
		d := row[lo:hi]
		src := c.src[s : s+len(d)]
		for t := range d {
			d[t] = src[t]
		}
	case r == 1:
		d := row[lo:hi]
		for t := range d {
			d[t] = c.src[s]
			s += step
		}
	default:
		for t := lo; t < hi; t++ {
			copy(row[t*r:(t+1)*r], c.src[s:s+r])
			s += step * r
		}
	}
}

// clipScatter: dst[f(point) ++ rest] += src[point ++ rest], dropped out of bounds.
type clipScatter[T numT] struct {
	dst, src []T
	r        int
}

func (c clipScatter[T]) rows(segs []clipSeg, g clipGeom) {
	r, step := c.r, g.step
	for _, sg := range segs {
		if sg.reps < 0 || sg.hi <= sg.lo || sg.h1 <= sg.l1 {
			continue
		}
		pos := sg.pos + sg.l1*g.rowPos
		off := sg.off + sg.l1*g.rowOff + sg.lo*step
		n := sg.hi - sg.lo
		for range sg.reps {
			p, o := pos+sg.lo, off
			for range sg.h1 - sg.l1 {
				if r == 1 {
					q := o
					for _, v := range c.src[p : p+n] {
						c.dst[q] += v
						q += step
					}
				} else {
					q := o * r
					for t := range n {
						addTo(c.dst[q:q+r], c.src[(p+t)*r:(p+t+1)*r])
						q += step * r
					}
				}
				p += g.rowPos
				o += g.rowOff
			}
			pos += g.repPos
			off += g.repOff
		}
	}
}

// clipScatterOr is clipScatter for booleans (the op kernels accumulate them with ||).
type clipScatterOr struct {
	dst, src []bool
	r        int
}

func (c clipScatterOr) rows(segs []clipSeg, g clipGeom) {
	r, step := c.r, g.step
	for _, sg := range segs {
		if sg.reps < 0 {
			continue
		}
		for q := range sg.reps {
			for i := sg.l1; i < sg.h1; i++ {
				p := sg.pos + q*g.repPos + i*g.rowPos
				o := sg.off + q*g.repOff + i*g.rowOff
				for t := sg.lo; t < sg.hi; t++ {
					dst := c.dst[(o+t*step)*r : (o+t*step+1)*r]
					for k, v := range c.src[(p+t)*r : (p+t+1)*r] {
						dst[k] = dst[k] || v
					}
				}
			}
		}
	}
}

// ---- the op kernels' entry points ----

// gatherClip is the Gather kernel's clipped path: out[i ++ rest] = x[f(i) ++ rest] over
// the plan's domain, blocks of r elements, zeros where f(i) is out of bounds.
func gatherClip[T elem](p *ClipPlan, out, x []T, r int) error {
	if err := p.check("gather", len(out), len(x), r); err != nil {
		return err
	}
	switch {
	case r == 1 && p.across != nil:
		gatherAcross(p.across, out, x)
	case r > 0:
		clipGatherRun(p, clipGather[T]{out, x, r}, p.c0, r, newClipSegs())
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
	segs := newClipSegs()
	if q := p.acrossAdd; q != nil && r == 1 {
		switch o := any(out).(type) {
		case []float64:
			clipScatterRun(q, clipScatterAcross[float64]{o, any(x).([]float64)}, q.c0, r, segs)
			return nil
		case []float32:
			clipScatterRun(q, clipScatterAcross[float32]{o, any(x).([]float32)}, q.c0, r, segs)
			return nil
		case []int64:
			clipScatterRun(q, clipScatterAcross[int64]{o, any(x).([]int64)}, q.c0, r, segs)
			return nil
		}
	}
	switch o := any(out).(type) {
	case []float64:
		clipScatterRun(p, clipScatter[float64]{o, any(x).([]float64), r}, p.c0, r, segs)
	case []float32:
		clipScatterRun(p, clipScatter[float32]{o, any(x).([]float32), r}, p.c0, r, segs)
	case []int64:
		clipScatterRun(p, clipScatter[int64]{o, any(x).([]int64), r}, p.c0, r, segs)
	case []bool:
		clipScatterRun(p, clipScatterOr{o, any(x).([]bool), r}, p.c0, r, segs)
	}
	return nil
}
