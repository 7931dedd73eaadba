package kernel

// Gathers walked across. A gather may write its points in any order: each is written
// once. Gorgonia's im2col, [b, oh, ow, c, kh, kw] over an image [b, c, h, w], has output
// rows of kw (3) elements, contiguous in the image, while the image's long contiguous runs
// (along w) are along ow, three levels out: walked in the domain's order, every segment is
// a row of 3 and the gather costs ≈ 2.5 ns an element. An across plan walks such a gather
// with that variable innermost instead: each row reads a run of the image and writes every
// ps-th element of a block of the output small enough to stay in cache (the block of the
// variable's own level in the domain's order). The output is cleared first and the walk
// writes only the points in bounds.

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
// are the outputs and bounds p was built from.
func (p *ClipPlan) acrossPlan(aff []*affine, lim []int) *ClipPlan {
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
	dom := make([]int, n)
	for l, j := range order {
		dom[l] = p.dom[j]
	}
	paff := make([]*affine, len(aff))
	for k, a := range aff {
		c := make([]int64, n)
		for l, j := range order {
			c[l] = a.c[j]
		}
		paff[k] = &affine{c: c, c0: a.c0}
	}
	q := newClipPlan(paff, dom, lim)
	if q == nil || !q.fits(p.c0) {
		return nil
	}
	for l, j := range order {
		q.ps[l] = p.ps[j]
	}
	return q
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
