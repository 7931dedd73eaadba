package kernel

import "slices"

// transposeLoop is the Transpose kernel for one element type: out's dimensions, merged
// where x is contiguous across them (mergeAffine: a convolution's [b, h, w, c] → [b, c, h, w]
// is the matrix transposition [b, h·w, c] → [b, c, h·w]), are copied in square tiles
// (transposeTiles) when one of them reads x contiguously and the last does not, as whole rows
// when the last reads x contiguously, and element by element otherwise; split across
// goroutines when large.
func transposeLoop[T elem](k Transpose, out []T, ins []any) error {
	x, ok := ins[0].([]T)
	if !ok || len(x) != len(out) || len(k.Perm) != len(k.Shape) {
		return typeErr("tr", out, ins)
	}
	var bi, bo, bt [maxMerge]int
	inStr, osh, str := bi[:0], bo[:0], bt[:0]
	if len(k.Perm) > maxMerge {
		inStr, osh, str = nil, nil, nil
	}
	inStr = append(inStr, k.Shape...)
	for d, s := len(k.Shape)-1, 1; d >= 0; d-- {
		inStr[d], s = s, s*k.Shape[d]
	}
	osh, str = append(osh, k.Shape...), append(str, k.Shape...)
	for p, q := range k.Perm {
		osh[p] = k.Shape[q]
		str[p] = inStr[q] // input stride of each output dimension
	}
	var bd, bs [maxMerge]int
	dom, st := mergeAffine(osh, str, bd[:0], bs[:0])
	if len(out) == 0 {
		return nil
	}
	if t, ok := newTransposeTiles(dom, st); ok {
		work := costOf(len(out), wStrided)
		if workers(t.units, work) > 1 {
			transposeTilesSplit[T](slices.Clone(dom), slices.Clone(st), out, x, work)
			return nil
		}
		transposeTileRun(&t, out, x, 0, t.units)
		return nil
	}
	gatherAffine(out, x, dom, st, 0, 1)
	return nil
}

// transposeTilesSplit is the tiled transposition over dom, st across goroutines (dom and st
// are its own: the goroutines' closure keeps them, and the caller's merged domain stays on
// its stack).
func transposeTilesSplit[T elem](dom, st []int, out, x []T, work int) {
	t, _ := newTransposeTiles(dom, st)
	inParallel(t.units, work, func(lo, hi int) { transposeTileRun(&t, out, x, lo, hi) })
}

// transposeTiles is the tiled walk of a transposition whose output dimension a (not the
// last) reads x contiguously and whose last dimension reads x sb elements apart.
type transposeTiles struct {
	tileGrid
	st       []int // the merged dims' input strides
	last, sb int   // the last dimension's extent and input stride
}

// newTransposeTiles is the tiled walk of the transposition out[i] = x[Σ i_d·st_d] over dom,
// or false when it does not pay: no dimension but the last reads x contiguously, the last
// does (whole rows are copied), or either is shorter than half a tile.
func newTransposeTiles(dom, st []int) (transposeTiles, bool) {
	n := len(dom)
	if n < 2 || st[n-1] == 1 || dom[n-1] < tileSide/2 {
		return transposeTiles{}, false
	}
	for d := n - 2; d >= 0; d-- {
		if st[d] == 1 && dom[d] >= tileSide/2 {
			g, ok := newTileGrid(dom, d)
			return transposeTiles{tileGrid: g, st: st, last: dom[n-1], sb: st[n-1]}, ok
		}
	}
	return transposeTiles{}, false
}

// transposeTileRun copies the tiles of units [lo, hi) of t.
func transposeTileRun[T elem](t *transposeTiles, out, x []T, lo, hi int) {
	oa, na, sb, nb := t.ost[t.a], t.dom[t.a], t.sb, t.last
	for u := lo; u < hi; u++ {
		i0, off := t.unit(u, [3][]int{t.st, t.ost[:]}, [3]int{})
		inOff, outOff := off[0], off[1]
		i1 := min(i0+tileSide, na)
		if transposeTileVec(out, outOff+i0*oa, oa, x, inOff+i0, sb, i1-i0, nb) {
			continue
		}
		for j0 := 0; j0 < nb; j0 += tileSide {
			j1 := min(j0+tileSide, nb)
			for i := i0; i < i1; i++ {
				o := out[outOff+i*oa+j0 : outOff+i*oa+j1]
				in := inOff + i + j0*sb
				for j := range o {
					o[j] = x[in]
					in += sb
				}
			}
		}
	}
}
