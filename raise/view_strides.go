package raise

import "github.com/bulkad/bulkad/core"

// Strided reads composed with the steps that views look through: a gather of a view
// (composeStrides) and a reshape of one (reshapeStrides).

// reshapeStrides returns the strides of a strided read of shape old (strides st) reshaped to
// shape nw, when the reshape only splits and merges dimensions that the read steps through
// evenly (merged dimensions: each one's stride is the next one's times its extent; a split
// dimension's parts step by its stride times the parts after them); ok is false otherwise.
// Dimensions of one element are read with stride 0.
func reshapeStrides(old core.Shape, st []int, nw core.Shape) ([]int, bool) {
	if old.Size() != nw.Size() || old.Size() == 0 || len(st) != len(old) {
		return nil, false
	}
	var od, os []int // old's dimensions of more than one element, and their strides
	for i, d := range old {
		if d != 1 {
			od, os = append(od, d), append(os, st[i])
		}
	}
	out := make([]int, len(nw))
	oi, ni := 0, 0
	for oi < len(od) {
		for ni < len(nw) && nw[ni] == 1 {
			ni++ // stride 0
		}
		if ni == len(nw) {
			return nil, false
		}
		np, op, nj, oj := nw[ni], od[oi], ni+1, oi+1
		for np != op {
			if np < op {
				if nj == len(nw) {
					return nil, false
				}
				np *= nw[nj]
				nj++
			} else {
				if oj == len(od) {
					return nil, false
				}
				op *= od[oj]
				oj++
			}
		}
		for k := oi; k < oj-1; k++ {
			if os[k] != os[k+1]*od[k+1] {
				return nil, false // merged dimensions not stepped through evenly
			}
		}
		out[nj-1] = os[oj-1]
		for k := nj - 1; k > ni; k-- {
			out[k-1] = out[k] * nw[k]
		}
		oi, ni = oj, nj
	}
	return out, true
}

// composeStrides reads, through the view xv of an operand of shape xsh, the read of that
// operand at row-major position off + Σ i_e·strides[e] for 0 ≤ i_e < ext[e]: it returns the
// strides and offset of the same read in xv's base. ok is false unless every nonzero stride
// moves exactly one coordinate of the operand (one row-major digit) and every coordinate
// stays within its dimension over the whole index space, where the composition is exact.
func composeStrides(ext []int, strides []int, off int, xsh core.Shape, xv view) ([]int, int, bool) {
	r := len(xsh)
	if len(ext) != len(strides) || len(xv.strides) != r || xsh.Size() == 0 || off < 0 || off >= xsh.Size() {
		return nil, 0, false
	}
	rm := xsh.Strides()
	digits := func(p int, c []int) {
		for d := range r {
			c[d], p = p/rm[d], p%rm[d]
		}
	}
	hi := make([]int, r) // the largest coordinate reached along each dimension
	digits(off, hi)
	out := make([]int, len(strides))
	c := make([]int, r)
	for e, s := range strides {
		if s == 0 || ext[e] == 1 {
			continue
		}
		if s < 0 {
			return nil, 0, false
		}
		digits(s, c)
		dim := -1
		for d, k := range c {
			if k != 0 {
				if dim >= 0 {
					return nil, 0, false // the stride moves two coordinates
				}
				dim = d
			}
		}
		if dim < 0 {
			return nil, 0, false // beyond the operand
		}
		hi[dim] += (ext[e] - 1) * c[dim]
		out[e] = c[dim] * xv.strides[dim]
	}
	pos := xv.offset
	digits(off, c)
	for d := range r {
		if hi[d] >= xsh[d] {
			return nil, 0, false
		}
		pos += c[d] * xv.strides[d]
	}
	return out, pos, true
}
