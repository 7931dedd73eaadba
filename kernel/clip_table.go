package kernel

import "math"

// Clipped gathers and scatters by table. The clipped walk (clip.go) costs about 50 ns a
// segment, so a domain whose segments hold a handful of points — a convolution's windows
// over a 2×2 or 4×4 map at batch 2, [512,3,3,2,2,2] in resnet18's last layer, 8 points a
// segment — runs at 6–11 ns a point. For a small domain with short rows (tableMaxPoints
// points at most, rows of fewer than tableShortRow) the plan keeps instead each point's
// block offset in the addressed array, -1 out of bounds, computed once by the same walk:
// the kernels then read it in the domain's row-major order (a scatter adds in the
// reference's order) at about a nanosecond a point.

const (
	// tableMaxPoints bounds the domain of a table (4 bytes a point)
	tableMaxPoints = 1 << 16
	// tableShortRow: rows of fewer points than this make the walk slow
	tableShortRow = 8
)

// clipTableFor is the offset table of p (nil for nil or when a table does not apply).
func clipTableFor(p *ClipPlan) []int32 {
	if p == nil || len(p.dom) == 0 || p.dom[len(p.dom)-1] >= tableShortRow || p.points() > tableMaxPoints {
		return nil
	}
	blocks := int64(1)
	for _, l := range p.lim {
		if blocks *= max(l, 1); blocks > math.MaxInt32 {
			return nil
		}
	}
	tab := make([]int32, p.points())
	for i := range tab {
		tab[i] = -1
	}
	clipWalk(p, clipTabMover{tab}, p.c0, 0, 0, p.first(), newClipSegs())
	return tab
}

// clipTabMover records the target block offset of every point in bounds of a walk.
type clipTabMover struct{ tab []int32 }

func (m clipTabMover) rows(segs []clipSeg, g clipGeom) {
	for _, sg := range segs {
		if sg.reps < 0 || sg.hi <= sg.lo || sg.h1 <= sg.l1 {
			continue
		}
		pos := sg.pos + sg.l1*g.rowPos + sg.lo*g.pstep
		off := sg.off + sg.l1*g.rowOff + sg.lo*g.step
		for range sg.reps {
			p, o := pos, off
			for range sg.h1 - sg.l1 {
				q, s := p, o
				for range sg.hi - sg.lo {
					m.tab[q] = int32(s)
					q += g.pstep
					s += g.step
				}
				p += g.rowPos
				o += g.rowOff
			}
			pos += g.repPos
			off += g.repOff
		}
	}
}

// gatherTable is the gather by p's table tab: out[i ++ rest] = x[tab[i] ++ rest], zeros at
// -1.
func gatherTable[T elem](p *ClipPlan, tab []int32, out, x []T, r int) error {
	if err := p.check("gather", len(out), len(x), r); err != nil {
		return err
	}
	var zero T
	if r == 1 {
		out = out[:len(tab)]
		for i, t := range tab {
			if t >= 0 {
				out[i] = x[t]
			} else {
				out[i] = zero
			}
		}
		return nil
	}
	for i, t := range tab {
		d := out[i*r : i*r+r]
		if t >= 0 {
			copy(d, x[int(t)*r:int(t)*r+r])
		} else {
			clear(d)
		}
	}
	return nil
}

// scatterTable is the scatter by p's table tab: out[tab[i] ++ rest] += x[i ++ rest] in the
// order of i (out cleared first, || for booleans), dropped at -1.
func scatterTable[T elem](p *ClipPlan, tab []int32, out, x []T, r int) error {
	if err := p.check("scatter", len(x), len(out), r); err != nil {
		return err
	}
	clear(out)
	switch o := any(out).(type) {
	case []float64:
		scatterTableNum(tab, o, any(x).([]float64), r)
	case []float32:
		scatterTableNum(tab, o, any(x).([]float32), r)
	case []int64:
		scatterTableNum(tab, o, any(x).([]int64), r)
	case []bool:
		xs := any(x).([]bool)
		for i, t := range tab {
			if t >= 0 {
				for q := range r {
					o[int(t)*r+q] = o[int(t)*r+q] || xs[i*r+q]
				}
			}
		}
	}
	return nil
}

func scatterTableNum[T numT](tab []int32, out, x []T, r int) {
	if r == 1 {
		x = x[:len(tab)]
		for i, t := range tab {
			if t >= 0 {
				out[t] += x[i]
			}
		}
		return
	}
	for i, t := range tab {
		if t >= 0 {
			addTo(out[int(t)*r:int(t)*r+r], x[i*r:i*r+r])
		}
	}
}
