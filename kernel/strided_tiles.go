package kernel

import "github.com/bulkad/bulkad/core"

// Element-wise operations whose operands are transposed relative to the output: the batch
// norm of a Gorgonia-built convnet squares tr [0,2,1] of a [b, c, h·w] activation into
// [b, h·w, c], so along the output's rows (c) both operands are read h·w elements apart, and
// stridedLoop called a function per element across rows (3.4 ns an element). Such an
// operation runs in the square tiles of a tileGrid instead, along a dimension a that reads
// every operand contiguously (or broadcast), each tile walked with a innermost (the operands
// read in order, the output written tileSide lines apart, all of them in the L1), the
// operation chosen once per tile.

// stridedTilesFor is the tile grid of k, or false when it does not apply: fewer than two
// dimensions, every operand read in order (or broadcast) along the last dimension, or no
// other dimension of at least half a tile that reads both in order or broadcast (and not
// both broadcast).
func stridedTilesFor(k StridedBinary) (tileGrid, bool) {
	n := len(k.Shape)
	if n < 2 || rowsContiguous(k.XS[n-1], k.YS[n-1]) || k.Shape[n-1] < tileSide/2 {
		return tileGrid{}, false
	}
	for d := n - 2; d >= 0; d-- {
		if k.Shape[d] >= tileSide/2 && rowsContiguous(k.XS[d], k.YS[d]) && (k.XS[d] == 1 || k.YS[d] == 1) {
			return newTileGrid(k.Shape, d)
		}
	}
	return tileGrid{}, false
}

// stridedTiles runs k in tiles when stridedTilesFor applies (split across goroutines when
// large) and reports whether it did.
func stridedTiles[T numT](k StridedBinary, out, x, y []T, f func(a, b T) T) bool {
	g, ok := stridedTilesFor(k)
	if !ok {
		return false
	}
	work := costOf(len(out), max(wStrided, binaryWeight(k.Op)))
	if workers(g.units, work) > 1 {
		stridedTilesSplit(k, g, out, x, y, f, work)
		return true
	}
	stridedTilesRun(k, &g, out, x, y, f, 0, g.units)
	return true
}

// stridedTilesSplit is stridedTiles across goroutines (g is its own copy: the goroutines'
// closure keeps it, and the serial path's grid stays on the stack).
func stridedTilesSplit[T numT](k StridedBinary, g tileGrid, out, x, y []T, f func(a, b T) T, work int) {
	inParallel(g.units, work, func(lo, hi int) { stridedTilesRun(k, &g, out, x, y, f, lo, hi) })
}

// stridedTilesRun computes the tiles of units [lo, hi).
func stridedTilesRun[T numT](k StridedBinary, g *tileGrid, out, x, y []T, f func(a, b T) T, lo, hi int) {
	n, a := len(k.Shape), g.a
	na, nl := k.Shape[a], k.Shape[n-1]
	oa, xa, ya := g.ost[a], k.XS[a], k.YS[a]
	xl, yl := k.XS[n-1], k.YS[n-1]
	for u := lo; u < hi; u++ {
		i0, off := g.unit(u, [3][]int{k.XS, k.YS, g.ost[:]}, [3]int{k.XO, k.YO, 0})
		ni := min(tileSide, na-i0)
		xo, yo, oo := off[0]+i0*xa, off[1]+i0*ya, off[2]+i0*oa
		for j0 := 0; j0 < nl; j0 += tileSide {
			nj := min(tileSide, nl-j0)
			tileArith(k.Op, f, out, oo+j0, oa, x, xo+j0*xl, xa, xl, y, yo+j0*yl, ya, yl, ni, nj)
		}
	}
}

// tileArith is out[oo + i·oa + j] = x[xo + i·xa + j·xl] op y[yo + i·ya + j·yl] for i < ni,
// j < nj, i innermost; + − · ÷ written out, any other operation through f.
func tileArith[T numT](op core.BinOp, f func(a, b T) T, out []T, oo, oa int, x []T, xo, xa, xl int, y []T, yo, ya, yl, ni, nj int) {
	for j := 0; j < nj; j++ {
		o, xi, yi := oo+j, xo+j*xl, yo+j*yl
		switch op {
		case core.OpAdd:
			for range ni {
				out[o] = x[xi] + y[yi]
				o, xi, yi = o+oa, xi+xa, yi+ya
			}
		case core.OpSub:
			for range ni {
				out[o] = x[xi] - y[yi]
				o, xi, yi = o+oa, xi+xa, yi+ya
			}
		case core.OpMul:
			for range ni {
				out[o] = x[xi] * y[yi]
				o, xi, yi = o+oa, xi+xa, yi+ya
			}
		default:
			for range ni {
				out[o] = f(x[xi], y[yi])
				o, xi, yi = o+oa, xi+xa, yi+ya
			}
		}
	}
}
