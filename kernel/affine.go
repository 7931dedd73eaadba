package kernel

import (
	"slices"

	"github.com/bulkad/bulkad/core"
)

// Affine index functions (window extraction for convolution and pooling, shifts, strided
// slices, broadcasts) are recognised when they are compiled (index.go): when every output is
// an affine function of the bound variables and interval arithmetic proves it in bounds for
// the whole domain (IndexProgram.AffinePlan), a gather or scatter of the op kernels becomes a
// strided copy (or accumulation) with no per-element closure calls and no bounds checks.
// Affine functions that reach out of bounds run clipped (clip.go).

func isZero(a []int64) bool {
	for _, v := range a {
		if v != 0 {
			return false
		}
	}
	return true
}

// rows walks the innermost rows of a row-major domain, keeping the offsets of up to three
// strided operands at the start of each row. It lives on the stack (no allocation for up to
// ten dimensions):
//
//	r := newRows(dom, [3][]int{xs, ys}, [3]int{xo, yo})
//	for p := 0; r.ok; p += r.last { use(r.off[0], r.off[1]); r.next() }
type rows struct {
	dom  []int
	st   [3][]int
	off  [3]int
	last int // the innermost dimension (at least 1 on a non-empty walk)
	ok   bool
	// the second-innermost dimension, stepped inline by next: its index, length and the
	// operands' strides along it (0 for an absent operand)
	in, inN int
	inSt    [3]int
	idxBuf  [8]int
	big     []int // the outer index when the domain has more than ten dimensions
}

// newRows starts a walk over dom for operands with strides st[k] from offsets base[k]; a
// domain with no elements has no row, a rank-0 one a single row of one element.
func newRows(dom []int, st [3][]int, base [3]int) rows {
	r := rows{dom: dom, st: st, off: base, last: 1, ok: core.Shape(dom).Size() > 0}
	n := len(dom)
	if n > 0 {
		r.last = dom[n-1]
	}
	if n > 1 {
		r.inN = dom[n-2]
		for k, s := range st {
			if s != nil {
				r.inSt[k] = s[n-2]
			}
		}
	}
	return r
}

// next advances to the next row; r.ok turns false after the last. The common step (within
// the second-innermost dimension) is inlined.
func (r *rows) next() {
	if r.in+1 < r.inN {
		r.in++
		r.off[0] += r.inSt[0]
		r.off[1] += r.inSt[1]
		r.off[2] += r.inSt[2]
		return
	}
	r.carry()
}

// carry ends a run of the second-innermost dimension: it rewinds it and steps the outer ones.
func (r *rows) carry() {
	n := len(r.dom)
	if n <= 1 {
		r.ok = false
		return
	}
	for k := range r.off {
		r.off[k] -= r.inSt[k] * r.in
	}
	r.in = 0
	idx := r.idxBuf[:]
	if n-2 > len(idx) {
		if r.big == nil {
			r.big = make([]int, n-2)
		}
		idx = r.big
	}
	for d := n - 3; d >= 0; d-- {
		idx[d]++
		for k, s := range r.st {
			if s != nil {
				r.off[k] += s[d]
			}
		}
		if idx[d] < r.dom[d] {
			return
		}
		for k, s := range r.st {
			if s != nil {
				r.off[k] -= s[d] * r.dom[d]
			}
		}
		idx[d] = 0
	}
	r.ok = false
}

// stride is operand k's stride along the innermost dimension (0 for a rank-0 domain).
func (r *rows) stride(k int) int {
	if len(r.dom) == 0 {
		return 0
	}
	return r.st[k][len(r.dom)-1]
}

// affineWalk visits the domain in row-major order and calls f(p, off, count, stride) for each
// innermost row: its first position p in the domain, the affine offset off there, its length
// and the offset's stride along it.
func affineWalk(dom, st []int, base int, f func(p, off, count, stride int)) {
	r := newRows(dom, [3][]int{st}, [3]int{base})
	for p := 0; r.ok; p += r.last {
		f(p, r.off[0], r.last, r.stride(0))
		r.next()
	}
}

// affineWeight is the cost weight (wCheap or wStrided) of an affine gather or scatter over
// dom with strides st and blocks of r elements: cheap for contiguous rows or blocks, strided
// otherwise.
func affineWeight(dom, st []int, r int) int {
	if n := len(dom); r > 1 || n > 0 && st[n-1] == 1 {
		return wCheap
	}
	return wStrided
}

// gatherAffine is out[i ++ rest] = x[Σ i_k·st_k + base ++ rest] over dom (blocks of r
// elements), split along the domain across goroutines when large: every output element is
// written once, so the parts are disjoint.
func gatherAffine[T elem](out, x []T, dom, st []int, base, r int) {
	work := costOf(len(out), affineWeight(dom, st, r))
	var bd, bs [maxMerge]int
	dom, st = mergeAffine(dom, st, bd[:0], bs[:0])
	if d, ok := splitDim(dom, work); ok {
		gatherAffineSplit(out, x, slices.Clone(dom), slices.Clone(st), d, base, r, work)
		return
	}
	gatherAffineRun(out, x, dom, st, base, r)
}

// gatherAffineSplit is gatherAffine split along dimension d across goroutines. dom and st
// are its own (the goroutines' closure keeps them): the merged domain on the caller's stack
// stays there.
func gatherAffineSplit[T elem](out, x []T, dom, st []int, d, base, r, work int) {
	inParallel(dom[d], work, func(lo, hi int) {
		part, p0, p1 := subDom(dom, d, lo, hi)
		gatherAffineRun(out[p0*r:p1*r], x, part, st[d:], base+lo*st[d], r)
	})
}

// shortRow is the longest contiguous row gatherAffineRun moves a block of rows at a time.
const shortRow = 32

// gatherAffineRun is gatherAffine on the calling goroutine.
func gatherAffineRun[T elem](out, x []T, dom, st []int, base, r int) {
	if n := len(dom); r == 1 && n >= 2 && st[n-1] == 1 && dom[n-1] <= shortRow && dom[n-2] > 1 {
		// short contiguous rows (a batch-2 convolution's [2, c, h·w] ↔ [c, 2, h·w] on 2×2
		// to 4×4 maps): a block of the second-innermost dimension per walk step, each row
		// moved without a call (a copy call per row of 4 cost 10 ns)
		h, w, s := dom[n-2], dom[n-1], st[n-2]
		rw := newRows(dom[:n-1], [3][]int{st[:n-1]}, [3]int{base})
		for p := 0; rw.ok; p += h * w {
			if !moveRowsFixed(out, p, w, x, rw.off[0], s, h, w) {
				for i := range h {
					o, src := out[p+i*w:p+(i+1)*w], x[rw.off[0]+i*s:]
					for j := range o {
						o[j] = src[j]
					}
				}
			}
			rw.next()
		}
		return
	}
	if n := len(dom); r == 1 && n >= 2 && st[n-1] == 0 && dom[n-1] > 1 {
		// each element spread over a row (a broadcast along the last axis: a batch norm's
		// per-channel values over the positions of [b, c, h·w]), in one walk of the rows
		// of the other dimensions, not a callback per output row
		w := dom[n-1]
		rw := newRows(dom[:n-1], [3][]int{st[:n-1]}, [3]int{base})
		s := rw.stride(0)
		for p := 0; rw.ok; rw.next() {
			off := rw.off[0]
			for range rw.last {
				fill(out[p:p+w:p+w], x[off])
				p += w
				off += s
			}
		}
		return
	}
	if r == 1 {
		affineWalk(dom, st, base, func(p, off, count, stride int) {
			o := out[p : p+count]
			if stride == 1 { // whole rows move (a convolution's [o, b, h·w] ↔ [b, o, h·w])
				copy(o, x[off:off+count])
				return
			}
			for j := range o {
				o[j] = x[off]
				off += stride
			}
		})
		return
	}
	affineWalk(dom, st, base, func(p, off, count, stride int) {
		for j := 0; j < count; j++ {
			copy(out[(p+j)*r:(p+j+1)*r], x[off*r:off*r+r])
			off += stride
		}
	})
}

// scatterAffine is out[Σ i_k·st_k + base ++ rest] += x[i ++ rest] over dom (blocks of r
// elements; out is cleared first). When one dimension's stride exceeds the span of all the
// others (disjointDim), the slices along it write disjoint parts of out, and a large scatter
// is split along that dimension across goroutines: every output element still receives its
// contributions from one goroutine, in the serial order.
func scatterAffine[T elem](out, x []T, dom, st []int, base, r int, add func(a, b T) T) {
	var zero T
	for i := range out {
		out[i] = zero
	}
	work := costOf(len(x), affineWeight(dom, st, r))
	var bd, bs [maxMerge]int
	dom, st = mergeAffine(dom, st, bd[:0], bs[:0])
	if scatterReduceSplit(out, x, dom, st, base, r, costOf(len(x), wCheap)) {
		return
	}
	if d, ok := disjointDim(dom, st); ok && workers(dom[d], work) > 1 {
		// the domain with d moved to the front, and the block strides of x along it
		pdom := append([]int{dom[d]}, dom[:d]...)
		pdom = append(pdom, dom[d+1:]...)
		xall := core.Shape(dom).Strides()
		pst := append([]int{st[d]}, st[:d]...)
		pst = append(pst, st[d+1:]...)
		xst := append([]int{xall[d]}, xall[:d]...)
		xst = append(xst, xall[d+1:]...)
		inParallel(dom[d], work, func(lo, hi int) {
			part := append([]int{hi - lo}, pdom[1:]...)
			scatterRows(out, x, part, pst, xst, base+lo*pst[0], lo*xst[0], r, add)
		})
		return
	}
	scatterAffineRun(out, x, dom, st, base, r, add)
}

// disjointDim is a dimension d of two or more elements whose stride exceeds the span of
// offsets of all the other dimensions: the slices of the domain along d have disjoint
// images.
func disjointDim(dom, st []int) (int, bool) {
	span := 0
	for k, n := range dom {
		span += (n - 1) * abs(st[k])
	}
	for d, n := range dom {
		if n > 1 && abs(st[d]) > span-(n-1)*abs(st[d]) {
			return d, true
		}
	}
	return 0, false
}

func abs(v int) int {
	if v < 0 {
		return -v
	}
	return v
}

// maxMerge is the largest rank mergeAffine handles (in arrays on the caller's stack).
const maxMerge = 12

// mergeAffine drops the dimensions of one element from an affine walk over dom (offset
// strides st) and merges each dimension into the next where the offset is contiguous across
// them (st[k] = st[k+1]·dom[k+1]): the walk visits the same positions in the same order, in
// fewer and longer rows. The domain's own row-major position is contiguous across any two
// dimensions. It uses d and s (empty, with capacity maxMerge) and returns dom, st unchanged
// for a higher rank.
func mergeAffine(dom, st, d, s []int) ([]int, []int) {
	if len(dom) > maxMerge {
		return dom, st
	}
	for k, n := range dom {
		if n == 1 {
			continue
		}
		if m := len(d); m > 0 && s[m-1] == st[k]*n {
			d[m-1] *= n
			s[m-1] = st[k]
			continue
		}
		d, s = append(d, n), append(s, st[k])
	}
	if len(d) == 0 && core.Shape(dom).Size() == 1 && len(dom) > 0 {
		d, s = append(d, 1), append(s, 0)
	}
	return d, s
}

// scatterRows is the scatter of scatterAffine over dom with the block strides ost of out and
// xst of x, from block offsets ob and xb (out is not cleared).
func scatterRows[T elem](out, x []T, dom, ost, xst []int, ob, xb, r int, add func(a, b T) T) {
	w := newRows(dom, [3][]int{ost, xst}, [3]int{ob, xb})
	so, sx := w.stride(0), w.stride(1)
	if r == 1 {
		for ; w.ok; w.next() {
			addStrided(out, w.off[0], so, x, w.off[1], sx, w.last, add)
		}
		return
	}
	for ; w.ok; w.next() {
		o, xo := w.off[0], w.off[1]
		for range w.last {
			addBlock(out[o*r:o*r+r], x[xo*r:xo*r+r], add)
			o += so
			xo += sx
		}
	}
}

// scatterAffineRun is scatterAffine's serial walk (out already cleared).
func scatterAffineRun[T elem](out, x []T, dom, st []int, base, r int, add func(a, b T) T) {
	if n := len(dom); r == 1 && n >= 2 && st[n-1] == 0 && st[n-2] != 0 && dom[n-2] >= 4 && reduceRows(out, x, dom, st, base) {
		return
	}
	if n := len(dom); r == 1 && n >= 2 && st[n-1] == 1 && st[n-2] == 0 && dom[n-1] <= colSumMax && reduceCols(out, x, dom, st, base) {
		return
	}
	cols := r <= colSumMax && isNum[T]()
	affineWalk(dom, st, base, func(p, off, count, stride int) {
		if r == 1 {
			addStrided(out, off, stride, x, p, 1, count, add)
			return
		}
		if stride == 0 && cols {
			// blocks reduced into one (a batch norm's per-channel sums of [b·h·w] rows
			// of c channels, one call of addBlock per row of c before)
			addCols(out[off*r:off*r+r], x[p*r:(p+count)*r], r, count)
			return
		}
		for j := 0; j < count; j++ {
			addBlock(out[off*r:off*r+r], x[(p+j)*r:(p+j+1)*r], add)
			off += stride
		}
	})
}

// scatterReduceSplit runs a scatter whose rows reduce into one element each (rows of the
// targets' dimension: reduceRows) or into one row (reduceCols) with the row kernels, and
// reports whether it did: when large (work weighted as a memory-bound loop, the row kernels'
// speed) across goroutines, each on a range of targets (rows of the dimension before the
// last, or columns of the last). Every target still receives its terms in the domain's
// order. (The generic split walked such scatters element by element, four times slower than
// one goroutine with the row kernels.)
func scatterReduceSplit[T elem](out, x []T, dom, st []int, base, r, work int) bool {
	n := len(dom)
	if r != 1 || n < 2 || !isNum[T]() {
		return false
	}
	var targets int
	var cols bool
	switch {
	case st[n-1] == 0 && st[n-2] != 0 && dom[n-2] >= 4:
		targets = dom[n-2]
	case st[n-1] == 1 && st[n-2] == 0 && dom[n-1] <= colSumMax:
		targets, cols = dom[n-1], true
	default:
		return false
	}
	if workers(targets, work) <= 1 {
		scatterAffineRun(out, x, dom, st, base, r, addOf[T]()) // the row kernels, serially
		return true
	}
	pd, ps := slices.Clone(dom), slices.Clone(st) // the goroutines' own (see gatherAffineSplit)
	inParallel(targets, work, func(lo, hi int) { reduceRange(out, x, pd, ps, base, lo, hi, cols) })
	return true
}

// reduceRange is the serial reduceRows (cols false: the rows of targets lo … hi−1 of the
// dimension before the last) or reduceCols (cols true: columns lo … hi−1 of the last) on one
// range of targets.
func reduceRange[T elem](out, x []T, dom, st []int, base, lo, hi int, cols bool) {
	switch o := any(out).(type) {
	case []float64:
		reduceRangeNum(o, any(x).([]float64), dom, st, base, lo, hi, cols)
	case []float32:
		reduceRangeNum(o, any(x).([]float32), dom, st, base, lo, hi, cols)
	case []int64:
		reduceRangeNum(o, any(x).([]int64), dom, st, base, lo, hi, cols)
	}
}

func reduceRangeNum[T numT](out, x []T, dom, st []int, base, lo, hi int, cols bool) {
	n := len(dom)
	h, w := dom[n-2], dom[n-1]
	block := func(o, p int) { // one block of h rows of w from x[p], its targets from out[o]
		if cols {
			colSums(out[o+lo:o+hi], x[p+lo:], w, h)
			return
		}
		s := st[n-2]
		j := lo
		for ; j+4 <= hi; j += 4 { // four rows at a time: independent addition chains
			q := p + j*w
			x0, x1, x2, x3 := x[q:q+w], x[q+w:q+2*w], x[q+2*w:q+3*w], x[q+3*w:q+4*w]
			t := o + j*s
			a0, a1, a2, a3 := out[t], out[t+s], out[t+2*s], out[t+3*s]
			for i, v := range x0 {
				a0 += v
				a1 += x1[i]
				a2 += x2[i]
				a3 += x3[i]
			}
			out[t], out[t+s], out[t+2*s], out[t+3*s] = a0, a1, a2, a3
		}
		for ; j < hi; j++ {
			a := out[o+j*s]
			for _, v := range x[p+j*w : p+(j+1)*w] {
				a += v
			}
			out[o+j*s] = a
		}
	}
	if n == 2 {
		block(base, 0)
		return
	}
	rw := newRows(dom[:n-2], [3][]int{st[:n-2]}, [3]int{base})
	for p := 0; rw.ok; rw.next() {
		o := rw.off[0]
		for range rw.last {
			block(o, p)
			p += h * w
			o += rw.stride(0)
		}
	}
}

// reduceRows is the serial scatter of rows that each reduce into one element (stride 0
// innermost) of targets distinct along the next dimension (a batch norm's per-channel sum of
// [b, c, h·w]: rows of h·w into out[c]), for the numeric dtypes (false for another): four
// rows at a time, each its own addition chain (one chain waits ≈ 3 cycles an element on the
// addition before it). Every target still receives its terms in the domain's order.
func reduceRows[T elem](out, x []T, dom, st []int, base int) bool {
	switch o := any(out).(type) {
	case []float64:
		reduceRows4(o, any(x).([]float64), dom, st, base)
	case []float32:
		reduceRows4(o, any(x).([]float32), dom, st, base)
	case []int64:
		reduceRows4(o, any(x).([]int64), dom, st, base)
	default:
		return false
	}
	return true
}

func reduceRows4[T numT](out, x []T, dom, st []int, base int) {
	n := len(dom)
	w, m := dom[n-1], dom[n-2]
	r := newRows(dom[:n-1], [3][]int{st[:n-1]}, [3]int{base})
	s := r.stride(0)
	rows := rowSumsRows[T]()
	lanes := rows / 2
	for p := 0; r.ok; r.next() {
		o := r.off[0]
		j := 0
		if rows > 0 && w >= 2*lanes {
			// rows of vectors, transposed in registers (rowSumsVec), each row still summed in
			// order; the last elements of each row after them
			var acc [16]T
			nb := w - w%lanes
			for ; j+rows <= m; j += rows {
				for i := range rows {
					acc[i] = out[o+i*s]
				}
				if !rowSumsVec(acc[:rows], x[p:], w, nb) {
					break
				}
				for i := range rows {
					a := acc[i]
					for _, v := range x[p+i*w+nb : p+i*w+w] {
						a += v
					}
					out[o+i*s] = a
				}
				p += rows * w
				o += rows * s
			}
		}
		for ; j+4 <= m; j += 4 {
			x0, x1, x2, x3 := x[p:p+w], x[p+w:p+2*w], x[p+2*w:p+3*w], x[p+3*w:p+4*w]
			a0, a1, a2, a3 := out[o], out[o+s], out[o+2*s], out[o+3*s]
			for i, v := range x0 {
				a0 += v
				a1 += x1[i]
				a2 += x2[i]
				a3 += x3[i]
			}
			out[o], out[o+s], out[o+2*s], out[o+3*s] = a0, a1, a2, a3
			p += 4 * w
			o += 4 * s
		}
		for ; j < m; j++ {
			a := out[o]
			for _, v := range x[p : p+w] {
				a += v
			}
			out[o] = a
			p += w
			o += s
		}
	}
}

// isNum reports whether T is a numeric element type (not bool).
func isNum[T elem]() bool {
	_, b := any(*new(T)).(bool)
	return !b
}

// addCols is colSums for the numeric element types (nothing for bool, which isNum excludes).
func addCols[T elem](dst, x []T, ldx, rows int) {
	switch d := any(dst).(type) {
	case []float64:
		colSums(d, any(x).([]float64), ldx, rows)
	case []float32:
		colSums(d, any(x).([]float32), ldx, rows)
	case []int64:
		colSums(d, any(x).([]int64), ldx, rows)
	}
}

// reduceCols is the serial scatter of blocks of rows that each reduce into one row of out
// (stride 0 along the rows, contiguous along the row: a batch norm's per-channel sums of
// channels-last rows [b·h·w, c] into out[c]), for the numeric dtypes (false for another):
// the rows of a block summed by columns (colSums), every target receiving its terms in the
// domain's order.
func reduceCols[T elem](out, x []T, dom, st []int, base int) bool {
	switch o := any(out).(type) {
	case []float64:
		reduceColsNum(o, any(x).([]float64), dom, st, base)
	case []float32:
		reduceColsNum(o, any(x).([]float32), dom, st, base)
	case []int64:
		reduceColsNum(o, any(x).([]int64), dom, st, base)
	default:
		return false
	}
	return true
}

func reduceColsNum[T numT](out, x []T, dom, st []int, base int) {
	n := len(dom)
	h, w := dom[n-2], dom[n-1]
	if n == 2 {
		colSums(out[base:base+w], x, w, h)
		return
	}
	r := newRows(dom[:n-2], [3][]int{st[:n-2]}, [3]int{base})
	for p := 0; r.ok; r.next() {
		o := r.off[0]
		for range r.last {
			colSums(out[o:o+w], x[p:], w, h)
			p += h * w
			o += r.stride(0)
		}
	}
}

// addBlock adds the block src into dst element by element (dst[i] = add(dst[i], src[i]), in
// order): for the float and integer dtypes with + written out, not a call of add per element
// (a depthwise filter's gradient reduces 8192 rows of 288 elements into one: 3× faster).
func addBlock[T elem](dst, src []T, add func(a, b T) T) {
	if len(dst) < 8 { // a short block: the dtype switch would cost more than the calls
		for i, v := range src {
			dst[i] = add(dst[i], v)
		}
		return
	}
	switch d := any(dst).(type) {
	case []float64:
		addTo(d, any(src).([]float64))
	case []float32:
		addTo(d, any(src).([]float32))
	case []int64:
		addTo(d, any(src).([]int64))
	default:
		for i, v := range src {
			dst[i] = add(dst[i], v)
		}
	}
}

// addStrided adds the n elements of x from xo (stride sx) into out from off (stride so), in
// order: a row reduced into one element (so = 0) accumulates in a register. For the numeric
// dtypes + is written out, not a call of add per element (the per-channel sums of a batch
// norm's gradient).
func addStrided[T elem](out []T, off, so int, x []T, xo, sx, n int, add func(a, b T) T) {
	switch d := any(out).(type) {
	case []float64:
		addStridedNum(d, off, so, any(x).([]float64), xo, sx, n)
	case []float32:
		addStridedNum(d, off, so, any(x).([]float32), xo, sx, n)
	case []int64:
		addStridedNum(d, off, so, any(x).([]int64), xo, sx, n)
	default:
		for range n {
			out[off] = add(out[off], x[xo])
			off += so
			xo += sx
		}
	}
}

func addStridedNum[T numT](out []T, off, so int, x []T, xo, sx, n int) {
	if so == 0 {
		acc := out[off]
		for range n {
			acc += x[xo]
			xo += sx
		}
		out[off] = acc
		return
	}
	for range n {
		out[off] += x[xo]
		off += so
		xo += sx
	}
}

// fill sets every element of o to v, four stores a step.
func fill[T elem](o []T, v T) {
	j := 0
	for ; j+4 <= len(o); j += 4 {
		q := o[j : j+4 : j+4]
		q[0], q[1], q[2], q[3] = v, v, v, v
	}
	for ; j < len(o); j++ {
		o[j] = v
	}
}
