package kernel

// tileSide is the side of the square tiles of the transposing walks (transposes, and
// element-wise operations whose operands are transposed relative to the output): a tile's
// input and output rows (16 × 16 elements, at most 32 cache lines) stay in the L1 while it is
// done, so the lines one output row reads across are read again by the next rows of the tile
// instead of being evicted by a long row.
const tileSide = 16

// tileGrid cuts a domain into the tiles of a transposing walk: tileSide consecutive indices
// along dimension a (one read in order) times all of the last dimension (in runs of
// tileSide). Units of work, the goroutines' split, are the tiles' positions: the other
// dimensions' index × the block of a.
type tileGrid struct {
	dom     []int
	ost     [maxMerge]int // the output's strides (row-major over dom)
	a       int
	others  [maxMerge]int // the dimensions other than a and the last, outermost first
	nothers int
	blocks  int // tiles along a
	units   int // blocks × the others' extents
}

// newTileGrid is the grid of dom tiled along a (not the last dimension); false for a rank
// above maxMerge (the grid keeps its strides in arrays, so that a serial walk allocates
// nothing).
func newTileGrid(dom []int, a int) (tileGrid, bool) {
	if len(dom) > maxMerge {
		return tileGrid{}, false
	}
	g := tileGrid{dom: dom, a: a}
	for d, s := len(dom)-1, 1; d >= 0; d-- {
		g.ost[d] = s
		s *= dom[d]
	}
	g.blocks = (dom[a] + tileSide - 1) / tileSide
	g.units = g.blocks
	for d := 0; d < len(dom)-1; d++ {
		if d != a {
			g.others[g.nothers] = d
			g.nothers++
			g.units *= dom[d]
		}
	}
	return g, true
}

// unit is the first index along a of unit u's tiles and the offsets of its origin through the
// strides st[0..2] from base (the output's strides are g.ost).
func (g *tileGrid) unit(u int, st [3][]int, base [3]int) (i0 int, off [3]int) {
	blk, rest := u%g.blocks, u/g.blocks
	off = base
	for i := g.nothers - 1; i >= 0; i-- {
		d := g.others[i]
		c := rest % g.dom[d]
		rest /= g.dom[d]
		for s := range st {
			if st[s] != nil {
				off[s] += c * st[s][d]
			}
		}
	}
	return blk * tileSide, off
}
