package kernel

import "github.com/bulkad/bulkad/core"

// Gather and scatter kernels. Both walk a domain of n index variables (the result's outer
// dimensions for gather, the operand's for scatter), map each point through the compiled index
// function to m indices of the other array, and move a contiguous block of `rest` elements.

// ixPlan is the static part of a gather or scatter.
type ixPlan struct {
	fn   *idxFn
	dom  []int   // domain dimensions (n)
	tgt  []int64 // bounds of the m computed indices
	tstr []int   // strides (in elements) of the m computed indices
	rest int     // elements per block
	// scratch (one Exec is not used concurrently)
	r, o   []int64
	vo     [][]int64           // m × vecChunk outputs of a row-vectorised index function
	voff   []int               // vecChunk target offsets (-1: out of bounds)
	base   []int64             // per-output constant parts, evaluated once per run
	clip   *ClipPlan           // the clipped affine path of an affine index function
	segs   *[clipBatch]clipSeg // its segment buffer (serial walks)
	okRows bool                // the clipped affine path usable this run (its arithmetic fits)
	one    [1]int              // the offset of a single point
}

func newIxPlan(fn *idxFn, dom []int, tgtShape core.Shape, m int) *ixPlan {
	full := tgtShape.Strides()
	p := &ixPlan{fn: fn, dom: append([]int{}, dom...), rest: core.Shape(tgtShape[m:]).Size()}
	for k := 0; k < m; k++ {
		p.tgt = append(p.tgt, int64(tgtShape[k]))
		p.tstr = append(p.tstr, full[k])
	}
	p.r = fn.env.slots[:len(dom)]
	if fn.aff != nil {
		p.clip = newClipPlan(fn.aff, dom, tgtShape[:m])
		p.segs = newClipSegs()
	}
	p.o = make([]int64, m)
	p.base = make([]int64, m)
	if fn.vec != nil {
		p.vo = make([][]int64, m)
		for k := range p.vo {
			p.vo[k] = make([]int64, vecChunk)
		}
		p.voff = make([]int, vecChunk)
	}
	return p
}

// affLimit bounds coefficients and constants for the in-bounds strided path (inBounds) so
// that no intermediate product can overflow; larger values use the checked paths.
const affLimit = 1 << 30

// prepare evaluates the dynamic constant parts of an affine index function for this run
// and decides whether the clipped affine path can run them.
func (p *ixPlan) prepare() {
	p.okRows = p.clip != nil
	if !p.okRows {
		return
	}
	for k, a := range p.fn.aff {
		v := a.c0
		if a.dyn != nil {
			v += a.dyn(p.fn.env)
		}
		p.base[k] = v
	}
	p.okRows = p.clip.fits(p.base)
}

func floorDiv(a, b int64) int64 { // b > 0
	q := a / b
	if (a%b != 0) && (a < 0) {
		q--
	}
	return q
}

func ceilDiv(a, b int64) int64 { return -floorDiv(-a, b) } // b > 0

// chunk computes the target offsets of the points (r[:n-1], t0+q) for q < cnt into p.voff
// (-1 when out of bounds).
func (p *ixPlan) chunk(t0 int64, cnt int) []int {
	p.fn.vec(t0, cnt, p.vo)
	offs := p.voff[:cnt]
	clear(offs)
	for k, vs := range p.vo {
		hi, st := p.tgt[k], p.tstr[k]
		for q, v := range vs[:cnt] {
			if v < 0 || v >= hi || offs[q] < 0 {
				offs[q] = -1
			} else {
				offs[q] += int(v) * st
			}
		}
	}
	return offs
}

// point computes the target offset of the current point p.r, or -1 when out of bounds.
func (p *ixPlan) point() int {
	p.fn.eval(p.o)
	off := 0
	for k, v := range p.o {
		if v < 0 || v >= p.tgt[k] {
			return -1
		}
		off += int(v) * p.tstr[k]
	}
	return off
}

// next advances the odometer p.r over dims[:upto]; it reports false after the last point.
func (p *ixPlan) next(upto int) bool {
	for k := upto - 1; k >= 0; k-- {
		p.r[k]++
		if p.r[k] < int64(p.dom[k]) {
			return true
		}
		p.r[k] = 0
	}
	return false
}

func (p *ixPlan) domSize() int {
	n := 1
	for _, d := range p.dom {
		n *= d
	}
	return n
}

// ixMover moves the blocks of one gather or scatter whose index function is not affine;
// walkPrepared calls it with the offsets of the other array, so that the traversal of the domain
// (vectorised chunks, single points) is written once for both directions.
type ixMover interface {
	// single handles len(vo) points from o with one computed index each and one-element
	// blocks: in bounds where 0 ≤ vo[q] < hi, at target offset vo[q]·st.
	single(o int, vo []int64, hi int64, st int)
	// blocks handles len(offs) consecutive points from o at target offsets offs (-1: out
	// of bounds).
	blocks(o int, offs []int)
}

// walkPrepared runs m over every point of p's domain in row-major order, once p.prepare
// has run (generic in M so that the mover is not boxed: no allocation per run).
func walkPrepared[M ixMover](p *ixPlan, m M) {
	clear(p.r)
	R := p.rest
	total := p.domSize()
	if total == 0 || R == 0 {
		return
	}
	n := len(p.dom)
	if p.fn.vec != nil && n > 0 {
		tn := p.dom[n-1]
		o := 0
		for {
			for t0 := 0; t0 < tn; t0 += vecChunk {
				cnt := min(vecChunk, tn-t0)
				if len(p.vo) == 1 && R == 1 {
					// one computed index, one element per point: no offset pass
					p.fn.vec(int64(t0), cnt, p.vo)
					m.single(o, p.vo[0][:cnt], p.tgt[0], p.tstr[0])
				} else {
					m.blocks(o, p.chunk(int64(t0), cnt))
				}
				o += cnt * R
			}
			if !p.next(n - 1) {
				return
			}
		}
	}
	for o := 0; o < total*R; o += R {
		p.one[0] = p.point()
		m.blocks(o, p.one[:])
		p.next(n)
	}
}

// gatherer: dst[point ++ rest] = src[f(point) ++ rest], zeros out of bounds.
type gatherer[T any] struct {
	dst, src []T
	R        int
}

func (g gatherer[T]) single(o int, vo []int64, hi int64, st int) {
	var zero T
	seg, src := g.dst[o:o+len(vo)], g.src
	for q, v := range vo {
		if v >= 0 && v < hi {
			seg[q] = src[int(v)*st]
		} else {
			seg[q] = zero
		}
	}
}

func (g gatherer[T]) blocks(o int, offs []int) {
	R := g.R
	for _, off := range offs {
		switch {
		case off < 0:
			clear(g.dst[o : o+R])
		case R == 1:
			g.dst[o] = g.src[off]
		default:
			copy(g.dst[o:o+R], g.src[off:off+R])
		}
		o += R
	}
}

// gatherK: dst[point ++ rest] = src[f(point) ++ rest], zeros out of bounds. An affine
// index function runs on the clipped affine path (split across goroutines when large).
func gatherK[T any](p *ixPlan, dst, src []T) {
	p.prepare()
	if p.okRows {
		if p.rest > 0 {
			clipGatherRun(p.clip, clipGather[T]{dst, src, p.rest}, p.base, p.rest, p.segs)
		}
		return
	}
	walkPrepared(p, gatherer[T]{dst, src, p.rest})
}

// scatterer: dst[f(point) ++ rest] += src[point ++ rest]; out-of-range writes are dropped.
type scatterer[T numT] struct {
	dst, src []T
	R        int
}

func (s scatterer[T]) single(o int, vo []int64, hi int64, st int) {
	dst, src := s.dst, s.src[o:o+len(vo)]
	for q, v := range vo {
		if v >= 0 && v < hi {
			dst[int(v)*st] += src[q]
		}
	}
}

func (s scatterer[T]) blocks(o int, offs []int) {
	for _, off := range offs {
		switch {
		case off < 0:
		case s.R == 1:
			s.dst[off] += s.src[o]
		default:
			addTo(s.dst[off:off+s.R], s.src[o:o+s.R])
		}
		o += s.R
	}
}

// addTo adds src to dst element-wise.
func addTo[T numT](dst, src []T) {
	if done := simdBinary(core.OpAdd, dst[:len(src)], dst, src); done > 0 {
		dst, src = dst[done:], src[done:]
	}
	for i, v := range src {
		dst[i] += v
	}
}

// scatterK: dst[f(point) ++ rest] += src[point ++ rest]; out-of-range writes are dropped.
// An affine index function runs on the clipped affine path (split across goroutines along a
// dimension whose slices write disjoint blocks, when large).
func scatterK[T numT](p *ixPlan, dst, src []T) {
	clear(dst)
	p.prepare()
	if p.okRows {
		if p.rest > 0 {
			clipScatterRun(p.clip, clipScatter[T]{dst, src, p.rest}, p.base, p.rest, p.segs)
		}
		return
	}
	walkPrepared(p, scatterer[T]{dst, src, p.rest})
}

// buildMove compiles a gather or a scatter t of x through the index function fn.
func (c *compiler) buildMove(t core.Term, x core.Term, fn *core.IndexFn, sc *scope) (*buf, *scope, error) {
	xb, _, err := c.compile(x)
	if err != nil {
		return nil, nil, err
	}
	f, err := c.compileIndexFn(fn, sc)
	if err != nil {
		return nil, nil, err
	}
	out := c.fresh(t.Type())
	n, m := len(fn.Vars), len(fn.Out)
	sh, xs := t.Type().Shape, x.Type().Shape
	if _, ok := t.(*core.Scatter); ok {
		p := newIxPlan(f, xs[:n], sh, m)
		c.emit(sc, t, func() { scatterBuf(p, out, xb) })
		return out, sc, nil
	}
	if plan := inBoundsPlan(f, sh, xs, n, m); plan != nil {
		c.emit(sc, t, func() { permCopyBuf(plan, out, xb) })
		return out, sc, nil
	}
	p := newIxPlan(f, sh[:n], xs, m)
	c.emit(sc, t, func() { gatherBuf(p, out, xb) })
	return out, sc, nil
}

// inBoundsPlan turns a gather whose index function is affine with static coefficients and
// constants, and provably in bounds on the whole domain, into a strided copy (which merges
// contiguous dimensions and tiles transpositions). It returns nil otherwise.
func inBoundsPlan(fn *idxFn, sh, xs core.Shape, n, m int) *permPlan {
	if fn.prog == nil || sh.Size() == 0 {
		return nil
	}
	xstr := xs.Strides()
	str, base, ok := fn.prog.inBounds(sh[:n], xstr[:m], xs[:m])
	if !ok {
		return nil
	}
	p := newPermPlan(sh, append(str, xstr[m:]...))
	p.base = base
	return p
}
