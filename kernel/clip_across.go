package kernel

import "slices"

// Gathers walked across. A gather may write its points in any order: each is written
// once. Gorgonia's im2col, [b, oh, ow, c, kh, kw] over an image [b, c, h, w], has output
// rows of kw (3) elements, contiguous in the image, while the image's long contiguous runs
// (along w) are along ow, three levels out: walked in the domain's order, every segment is
// a row of 3 and the gather costs ≈ 2.5 ns an element. An across plan walks such a gather
// with that variable innermost instead: each row reads a run of the image and writes every
// ps-th element of a block of the output small enough to stay in cache (the block of the
// variable's own level in the domain's order). The output is cleared first (block by block
// where it can be, see gatherAcross) and the walk writes only the points in bounds.
//
// A scatter (col2im, the gradient of an im2col) may be walked across too when every
// destination still receives its points in the domain's row-major order, so that the sums
// round as core.Eval's do: acrossOrder decides that, and which variables the walk then runs
// backwards (col2im's kw, since its ow now runs inside it).

const (
	// acrossShort: a domain whose rows have fewer points than this is worth walking across
	acrossShort = 8
	// acrossBlock bounds the output block (in elements) the rows of an across walk write
	// into, so that it stays in the L2 cache
	acrossBlock = 1 << 14
	// acrossStep: the across variable reads every acrossStep-th element of the gathered
	// array at most (a window's column at stride 2)
	acrossStep = 2
)

// acrossPlan returns p walked with another variable innermost (see the comment above), or
// nil when p's own rows are long enough or no variable reads contiguous runs of at least
// acrossShort points within an output block of at most acrossBlock elements. aff and lim
// are the outputs and bounds p was built from. For a scatter (add), the walk must also
// bring every destination its points in the domain's row-major order (acrossOrder); nil
// when it cannot.
func (p *ClipPlan) acrossPlan(aff []*affine, lim []int, add bool) *ClipPlan {
	n := len(p.dom)
	if n < 2 || p.dom[n-1] >= acrossShort || p.wide {
		return nil
	}
	v := -1
	for j := range n - 1 {
		if st := abs(p.st[j]); st >= 1 && st <= acrossStep && p.dom[j] >= acrossShort && p.ps[j]*p.dom[j] <= acrossBlock && (v < 0 || p.dom[j] > p.dom[v]) {
			v = j
		}
	}
	if v < 0 {
		return nil
	}
	// The walk's variables, outermost first: those before v, then those that share an
	// output with v (the window's column: they decide v's interval), then the others, v
	// last; v's interval then does not depend on the two or three variables inside the
	// partners, so that one segment covers their rows (newClipPlan's depth).
	partner := make([]bool, n)
	for _, a := range aff {
		if a.c[v] != 0 {
			for j, c := range a.c {
				partner[j] = partner[j] || c != 0 && j != v
			}
		}
	}
	order := make([]int, 0, n)
	for _, want := range []func(j int) bool{
		func(j int) bool { return j < v && !partner[j] },
		func(j int) bool { return partner[j] },
		func(j int) bool { return j > v && !partner[j] },
	} {
		for j := range n {
			if want(j) {
				order = append(order, j)
			}
		}
	}
	order = append(order, v)
	rev := make([]bool, n) // per variable of p: walked backwards
	if add {
		var ok bool
		if rev, ok = acrossOrder(aff, order); !ok {
			return nil
		}
	}
	dom := make([]int, n)
	for l, j := range order {
		dom[l] = p.dom[j]
	}
	paff := make([]*affine, len(aff))
	for k, a := range aff {
		q := &affine{c: make([]int64, n), c0: a.c0}
		for l, j := range order {
			q.c[l] = a.c[j]
			if rev[j] { // i_j = dom_j − 1 − t
				q.c[l] = -a.c[j]
				q.c0 += a.c[j] * int64(p.dom[j]-1)
			}
		}
		paff[k] = q
	}
	q := newClipPlan(paff, dom, lim)
	if q == nil || !q.fits(q.c0) {
		return nil
	}
	q.lead = order[0] == 0 && !rev[0]
	for l, j := range order {
		q.ps[l] = p.ps[j]
		if rev[j] {
			q.ps[l] = -p.ps[j]
			q.pos0 += (p.dom[j] - 1) * p.ps[j]
		}
	}
	return q
}

// acrossOrder decides whether a scatter walked in the variable order order (some variables
// backwards) adds the points that write one destination in the domain's row-major order,
// and which variables then run backwards. It accepts index functions whose outputs depend
// on one or two variables each, no variable in two outputs (a window's rows and columns,
// channels, batches). Two points p ≠ q write the same destination exactly when every
// output agrees: a variable alone in an output is then equal in both; the two variables i,
// j of an output with coefficients a_i, a_j both differ or neither does, with opposite
// signs of the difference when a_i·a_j > 0 (the same when < 0); a variable in no output
// differs freely. These groups differ independently, so both orders agree on every
// colliding pair exactly when they order the groups by their first variable alike and,
// within a group, the variable the walk meets first runs forwards if it is the one the
// domain's order meets first, else in the direction that keeps the sign of the difference.
func acrossOrder(aff []*affine, order []int) (rev []bool, ok bool) {
	n := len(order)
	group := make([]int, n) // per variable: its group (-1: never differs between colliding points)
	for j := range group {
		group[j] = j
	}
	inOutput := make([]bool, n)
	sameSign := make([]bool, n) // per group of two: the differences have the same sign
	for _, a := range aff {
		var vs []int
		for j, c := range a.c {
			if c != 0 {
				if inOutput[j] {
					return nil, false
				}
				inOutput[j] = true
				vs = append(vs, j)
			}
		}
		switch len(vs) {
		case 0:
		case 1:
			group[vs[0]] = -1
		case 2:
			i, j := vs[0], vs[1]
			group[j] = i
			sameSign[i] = a.c[i]*a.c[j] < 0
		default:
			return nil, false
		}
	}
	// the groups in the domain's order of their first variables, and in the walk's
	var byDomain, byWalk []int
	lead := map[int]int{} // group → its first variable in the walk
	for j := range n {
		if g := group[j]; g >= 0 && !slices.Contains(byDomain, g) {
			byDomain = append(byDomain, g)
		}
	}
	for _, j := range order {
		if g := group[j]; g >= 0 && !slices.Contains(byWalk, g) {
			byWalk = append(byWalk, g)
			lead[g] = j
		}
	}
	for i := range byDomain {
		if byDomain[i] != byWalk[i] {
			return nil, false
		}
	}
	rev = make([]bool, n)
	for _, g := range byDomain {
		// g is the group's first variable in the domain's order
		if w := lead[g]; w != g && !sameSign[g] {
			rev[w] = true
		}
	}
	return rev, true
}

// gatherAcross runs the across plan q of a gather of single elements from x into out. The
// mover writes only the points in bounds, so out is cleared first: block by block of the
// domain's first variable when the walk's first variable is that one (each block is then
// contiguous in out and small enough to stay in cache until the walk fills it, instead of a
// clearing pass over the whole output followed by a second pass that reads it back), else
// all at once. The blocks are split across goroutines when the work is large.
func gatherAcross[T any](q *ClipPlan, out, x []T) {
	if !q.lead {
		// the walk may split along any dimension: its mover writes no zeros
		clear(out)
		clipGatherRun(q, clipGatherAcross[T]{out, x}, q.c0, 1, newClipSegs())
		return
	}
	blk := q.ps[0]
	inParallel(q.dom[0], costOf(q.points(), q.weight(1)), func(lo, hi int) {
		segs := newClipSegs()
		for t := lo; t < hi; t++ {
			clear(out[t*blk : (t+1)*blk])
			clipWalk(q, clipGatherAcross[T]{out, x}, q.c0, 0, t, t+1, segs)
		}
	})
}

// clipGatherAcross is the mover of an across plan (single elements): dst[point] =
// src[f(point)] for the points in bounds, along rows that step pstep points of dst; the
// points out of bounds are left as they are (the caller cleared dst).
type clipGatherAcross[T any] struct {
	dst, src []T
}

func (c clipGatherAcross[T]) rows(segs []clipSeg, g clipGeom) {
	ps, step := g.pstep, g.step
	for _, sg := range segs {
		if sg.reps < 0 || sg.hi <= sg.lo || sg.h1 <= sg.l1 {
			continue
		}
		n := sg.hi - sg.lo
		pos := sg.pos + sg.l1*g.rowPos + sg.lo*ps
		off := sg.off + sg.l1*g.rowOff + sg.lo*step
		for range sg.reps {
			p, o := pos, off
			for range sg.h1 - sg.l1 {
				if step == 1 {
					q := p
					for _, v := range c.src[o : o+n] {
						c.dst[q] = v
						q += ps
					}
				} else {
					q, s := p, o
					for range n {
						c.dst[q] = c.src[s]
						q += ps
						s += step
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

// clipScatterAcross is the mover of an across plan for a scatter of single elements:
// dst[f(point)] += src[point] for the points in bounds, along rows that step pstep points of
// src (dst cleared by the caller).
type clipScatterAcross[T numT] struct {
	dst, src []T
}

func (c clipScatterAcross[T]) rows(segs []clipSeg, g clipGeom) {
	ps, step := g.pstep, g.step
	for _, sg := range segs {
		if sg.reps < 0 || sg.hi <= sg.lo || sg.h1 <= sg.l1 {
			continue
		}
		n := sg.hi - sg.lo
		pos := sg.pos + sg.l1*g.rowPos + sg.lo*ps
		off := sg.off + sg.l1*g.rowOff + sg.lo*step
		for range sg.reps {
			p, o := pos, off
			for range sg.h1 - sg.l1 {
				if step == 1 {
					q := p
					d := c.dst[o : o+n]
					for t := range d {
						d[t] += c.src[q]
						q += ps
					}
				} else {
					q, s := p, o
					for range n {
						c.dst[s] += c.src[q]
						q += ps
						s += step
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
