package kernel

import "github.com/bulkad/bulkad/core"

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
	inStr := core.Shape(k.Shape).Strides()
	osh := make([]int, len(k.Perm))
	str := make([]int, len(k.Perm)) // input stride of each output dimension
	for p, q := range k.Perm {
		osh[p] = k.Shape[q]
		str[p] = inStr[q]
	}
	var bd, bs [maxMerge]int
	dom, st := mergeAffine(osh, str, bd[:0], bs[:0])
	if len(out) == 0 {
		return nil
	}
	if t, ok := newTransposeTiles(dom, st); ok {
		work := costOf(len(out), wStrided)
		if workers(t.units, work) > 1 {
			inParallel(t.units, work, func(lo, hi int) { transposeTileRun(t, out, x, lo, hi) })
			return nil
		}
		transposeTileRun(t, out, x, 0, t.units)
		return nil
	}
	gatherAffine(out, x, dom, st, 0, 1)
	return nil
}

// transposeTileSide is the side of the square tiles of transposeTiles: a tile's input and
// output rows (16 × 16 elements, at most 32 cache lines) stay in the L1 while it is copied.
const transposeTileSide = 16

// transposeTiles is the tiled walk of a transposition whose output dimension a (not the
// last) reads x contiguously and whose last dimension reads x st[last] elements apart: a
// tile is transposeTileSide consecutive indices along a times all of the last dimension
// (in runs of transposeTileSide), so the lines of x one output row reads are read again by
// the next rows of the tile instead of being evicted by a long row. Units of work (the
// goroutines' split) are the tiles' positions: the other dimensions' index × the block of a.
type transposeTiles struct {
	dom, st  []int // merged output shape and input strides
	ost      []int // output strides
	a        int   // the dimension that reads x contiguously
	others   []int // the dimensions other than a and the last, outermost first
	blocks   int   // tiles along a
	units    int   // blocks × the product of the others' extents
	last, sb int   // the last dimension's extent and input stride
}

// newTransposeTiles is the tiled walk of the transposition out[i] = x[Σ i_d·st_d] over dom,
// or false when it does not pay: no dimension but the last reads x contiguously, the last
// does (whole rows are copied), or either is shorter than half a tile.
func newTransposeTiles(dom, st []int) (transposeTiles, bool) {
	n := len(dom)
	if n < 2 || st[n-1] == 1 || dom[n-1] < transposeTileSide/2 {
		return transposeTiles{}, false
	}
	a := -1
	for d := n - 2; d >= 0; d-- {
		if st[d] == 1 && dom[d] >= transposeTileSide/2 {
			a = d
			break
		}
	}
	if a < 0 {
		return transposeTiles{}, false
	}
	t := transposeTiles{dom: dom, st: st, ost: core.Shape(dom).Strides(), a: a, last: dom[n-1], sb: st[n-1]}
	t.blocks = (dom[a] + transposeTileSide - 1) / transposeTileSide
	t.units = t.blocks
	for d := 0; d < n-1; d++ {
		if d != a {
			t.others = append(t.others, d)
			t.units *= dom[d]
		}
	}
	return t, true
}

// transposeTileRun copies the tiles of units [lo, hi) of t.
func transposeTileRun[T elem](t transposeTiles, out, x []T, lo, hi int) {
	oa, na, sb, nb := t.ost[t.a], t.dom[t.a], t.sb, t.last
	for u := lo; u < hi; u++ {
		blk, rest := u%t.blocks, u/t.blocks
		inOff, outOff := 0, 0
		for k := len(t.others) - 1; k >= 0; k-- {
			d := t.others[k]
			i := rest % t.dom[d]
			rest /= t.dom[d]
			inOff += i * t.st[d]
			outOff += i * t.ost[d]
		}
		i0 := blk * transposeTileSide
		i1 := min(i0+transposeTileSide, na)
		for j0 := 0; j0 < nb; j0 += transposeTileSide {
			j1 := min(j0+transposeTileSide, nb)
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
