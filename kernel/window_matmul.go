package kernel

import (
	"slices"
	"sync"
	"unsafe"

	"github.com/bulkad/bulkad/core"
	"github.com/pkg/errors"
)

// WindowMatMul is a matrix product one of whose factors is a window matrix — the im2col of a
// convolution, reshape [P, J] (gather dom x fn) with fn affine — read where its elements lie
// instead of materialised. Gorgonia's convolution multiplies that matrix by the filter (the
// forward pass) and, transposed, by the output's cotangent (the filter's gradient); each
// reads P·J elements (9·C·H·W for a 3×3 convolution: 4.7 MB float32 a layer of the zoo's
// ResNet, written by a gather and read back twice, the second time from memory).
//
// With the first q dimensions of dom forming P and the others J, the gather reads x at an
// affine function of (p, j); in a copy of x padded with zeros wherever the gather reads out
// of bounds (where it reads zeros), the element of (p, j) lies at offset U[p] + V[j]. Two
// products are computed, for a matrix M:
//
//	rows:  c[P, N] = G · M,   M [J, N] (or, Trans, stored as [N, J])
//	cols:  c[N, J] = M · G,   M [N, P] (or, Trans, stored as [P, N])
//
// both as eight rows (or columns) of G at a time against a block of M's columns held in
// vector registers, summed in order of the product's inner index with fused multiply-adds
// (winDot): per element of c, the sum runs from zero in order of j (rows) or p (cols),
// whichever goroutine computes it, so the result is the same on any number of threads. It is
// not the GEMM's order (which sums panels of kc products and adds them up): results agree
// with a materialised product to rounding, not to the bit. Without the assembly (other
// architectures, purego) the same loops run in Go with separate multiplies and adds.
type WindowMatMul struct {
	Src   []int   // x's shape
	Lo    []int   // zeros before x's elements along each dimension of the padded copy
	Pad   []int   // the padded copy's shape
	U, V  []int64 // offsets into the padded copy: G[p, j] at U[p] + V[j]
	N     int     // M's other dimension
	Cols  bool    // c = M·G (else G·M)
	Trans bool    // M stored transposed
	// Cols only (ScatterTo): c's element (n, j) is the output's element n·OutN + OutJ[j] of
	// OutLen; nil OutJ: the output is c, [N, J].
	OutN   int
	OutJ   []int64
	OutLen int
	// Rows only (ScatterRows): c's element (p, n) is the output's element OutP[p] + n·OutN of
	// OutLen; nil OutP: the output is c, [P, N].
	OutP []int64
	// Cols only (MatrixAt): M's element (n, p) is m[n·MN + MP[p]]; nil MP: M is [N, P] (or
	// with Trans [P, N]).
	MN  int
	MP  []int64
	buf *padBuf
	// ShareStaging: stages, a kernel whose padded copy of x a later kernel reads; stager,
	// the kernel whose copy this one reads
	stages bool
	stager *WindowMatMul
	// padShared: the padded buffer is shared with kernels padding another x alike
	// (SharePadding), so it holds nothing between runs
	padShared bool
}

// MatrixAt makes k (cols) read M's element (n, p) at m[strideN·n + offs[p]] (a filter stored
// [K, C, taps] read as [C, taps·K]). Every such element must lie in the N·P elements of m.
func (k *WindowMatMul) MatrixAt(strideN int, offs []int64) error {
	size := int64(k.N) * int64(len(k.U))
	if !k.Cols || len(offs) != len(k.U) || strideN < 0 {
		return errors.Errorf("kernel: windowMatMul: M [%d %d] read by %d offsets (supported: cols, one offset a row of G)", k.N, len(k.U), len(offs))
	}
	for _, o := range offs {
		if o < 0 || o+int64(k.N-1)*int64(strideN) >= size {
			return errors.Errorf("kernel: windowMatMul: M [%d %d] read at %d + n·%d, out of its bounds", k.N, len(k.U), o, strideN)
		}
	}
	k.MN, k.MP = strideN, offs
	return nil
}

// ShareStaging makes reader use k's padded copy of x: two products of one plan reading the
// same x through the same padding (a convolution's forward product and its filter
// gradient), k's step before reader's. k copies x into the padded buffer at each run and
// records the x slice it copied; reader, finding the record of the same slice, reads that
// copy instead of making its own and clears the record (a record is read once). Only for
// kernels of one plan, whose values do not change between its steps (a kernel.Plan's); a
// plan that runs reader before k gives reader a copy of its own (PlanBuilder.Build). It
// fails when the two do not pad x alike, or either already shares.
func (k *WindowMatMul) ShareStaging(reader *WindowMatMul) error {
	if k == reader || k.staging() || reader.staging() || k.padShared || reader.padShared || !k.padsLike(reader) {
		return errors.Errorf("kernel: windowMatMul: padded copy of x %v (padded %v) shared with x %v (padded %v) (supported: two kernels padding x alike, neither sharing yet)", k.Src, k.Pad, reader.Src, reader.Pad)
	}
	k.stages, reader.stager, reader.buf = true, k, k.buf
	return nil
}

// SharePadding makes k pad its x in other's padded buffer: two kernels of one plan, at
// different steps, padding their inputs alike (the input gradients of a network's
// convolutions of one shape), neither of which keeps a copy between runs (ShareStaging).
// One buffer instead of one each: less memory, and a buffer the caches still hold. A run
// that finds the buffer in use by the other pads into a new one. It fails when the two pad
// otherwise or either shares staging.
func (k *WindowMatMul) SharePadding(other *WindowMatMul) error {
	if k == other || k.staging() || other.staging() || !k.padsLike(other) {
		return errors.Errorf("kernel: windowMatMul: padded buffer of x %v (padded %v) shared with x %v (padded %v) (supported: two kernels padding alike, neither sharing a staged copy)", k.Src, k.Pad, other.Src, other.Pad)
	}
	k.buf, k.padShared, other.padShared = other.buf, true, true
	return nil
}

// staging reports whether k stages a copy another kernel reads, or reads one (ShareStaging).
func (k *WindowMatMul) staging() bool { return k.stages || k.stager != nil }

// padsLike reports whether k and o copy x of one shape into the same padded shape at the same
// place.
func (k *WindowMatMul) padsLike(o *WindowMatMul) bool {
	return slices.Equal(k.Src, o.Src) && slices.Equal(k.Lo, o.Lo) && slices.Equal(k.Pad, o.Pad)
}

// SharesPadding reports whether k shares its padded buffer with kernels padding another x
// alike (SharePadding).
func (k *WindowMatMul) SharesPadding() bool { return k.padShared }

// SharesStaging reports whether k reads another kernel's padded copy of x (ShareStaging).
func (k *WindowMatMul) SharesStaging() bool { return k.stager != nil }

func (k *WindowMatMul) stagingFrom() Kernel {
	if k.stager == nil {
		return nil
	}
	return k.stager
}

// unshareStaging gives k a padded copy of its own (its plan runs it before its stager).
func (k *WindowMatMul) unshareStaging() {
	k.buf, k.stager = &padBuf{}, nil
}

// bijection checks that n·strideN + offs[i] over n < count and every i writes each of the
// outLen elements of an output exactly once.
func bijection(outLen, count, strideN int, offs []int64) error {
	seen := make([]bool, outLen)
	for n := range count {
		for _, o := range offs {
			e := int64(n)*int64(strideN) + o
			if e < 0 || e >= int64(outLen) || seen[e] {
				return errors.Errorf("kernel: windowMatMul: a layout of %d rows of %d offsets (row stride %d) into %d elements writes element %d twice or out of bounds", count, len(offs), strideN, outLen, e)
			}
			seen[e] = true
		}
	}
	return nil
}

// ScatterTo makes k (cols) write c's element (n, j) to the element n·strideN + offs[j] of an
// output of outLen elements (a convolution's input gradient, c [C, b·h·w], into the image
// [b, C, h, w]). Every element of the output must be written exactly once.
func (k *WindowMatMul) ScatterTo(outLen, strideN int, offs []int64) error {
	if !k.Cols || len(offs) != len(k.V) || outLen != k.N*len(k.V) {
		return errors.Errorf("kernel: windowMatMul: scatter of c [%d %d] into %d elements by %d offsets (supported: cols, one offset a column, as many elements as c)", k.N, len(k.V), outLen, len(offs))
	}
	if err := bijection(outLen, k.N, strideN, offs); err != nil {
		return err
	}
	k.OutN, k.OutJ, k.OutLen = strideN, offs, outLen
	return nil
}

// ScatterRows makes k (rows) write c's element (p, n) to the element offs[p] + n·strideN of
// an output of outLen elements (a convolution's output, c [b·h·w, C], into the image [b, C,
// h, w] that Gorgonia's transpose of it makes). Every element of the output must be written
// exactly once.
func (k *WindowMatMul) ScatterRows(outLen, strideN int, offs []int64) error {
	if k.Cols || len(offs) != len(k.U) || outLen != k.N*len(k.U) {
		return errors.Errorf("kernel: windowMatMul: scatter of c [%d %d] into %d elements by %d offsets (supported: rows, one offset a row, as many elements as c)", len(k.U), k.N, outLen, len(offs))
	}
	if err := bijection(outLen, k.N, strideN, offs); err != nil {
		return err
	}
	k.OutN, k.OutP, k.OutLen = strideN, offs, outLen
	return nil
}

// padBuf is the padded copy of x, kept between runs: its padding is zeroed when it is
// allocated and never written after (a run copies x into the interior only). A run that finds
// it in use by another allocates its own.
type padBuf struct {
	mu   sync.Mutex
	busy bool
	f64  []float64
	f32  []float32
	pack Scratch // M packed into blocks of vector width
	// staged: the x (first element, length) whose copy the buffer holds for a kernel sharing
	// it (DepthwiseWindows.ShareStaging), set by the forward kernel and cleared by the filter
	// gradient's when it reads it; read and written only while the buffer is held
	staged    unsafe.Pointer
	stagedLen int
}

// NewWindowMatMul returns the product of the window matrix reshape [P, J] (gather dom x fn),
// P the size of dom's first q dimensions, with a matrix of other dimension n (see
// WindowMatMul), where acc is the gather's access of x (shape acc.Shape, one coefficient per
// dimension of dom). It fails when the padded copy would be more than twice x's size plus
// 64 Ki elements, or the offsets overflow.
func NewWindowMatMul(dom []int, q int, acc WinAccess, n int, cols, trans bool) (*WindowMatMul, error) {
	r := len(acc.Shape)
	if q <= 0 || q >= len(dom) || n <= 0 || r == 0 || r > 8 || len(acc.Coef) != r || len(acc.C0) != r {
		return nil, errors.Errorf("kernel: windowMatMul: domain %v split at %d, n %d, access of %v (supported: a split inside the domain, n ≥ 1, x of rank 1 to 8)", dom, q, n, acc.Shape)
	}
	for _, d := range dom {
		if d <= 0 || d > winMax {
			return nil, errors.Errorf("kernel: windowMatMul: domain %v (supported: positive extents)", dom)
		}
	}
	k := &WindowMatMul{Src: append([]int(nil), acc.Shape...), Lo: make([]int, r), Pad: make([]int, r), N: n, Cols: cols, Trans: trans, buf: &padBuf{}}
	size, padded := 1, 1
	for d := range r {
		if len(acc.Coef[d]) != len(dom) {
			return nil, errors.Errorf("kernel: windowMatMul: access row %d has %d coefficients for a domain %v", d, len(acc.Coef[d]), dom)
		}
		lo, hi := acc.C0[d], acc.C0[d]
		for i, c := range acc.Coef[d] {
			if c < -winMax || c > winMax {
				return nil, errors.Errorf("kernel: windowMatMul: coefficient %d out of range", c)
			}
			span := c * int64(dom[i]-1)
			lo, hi = lo+min(span, 0), hi+max(span, 0)
			if lo < -winMax || hi > winMax {
				return nil, errors.Errorf("kernel: windowMatMul: access of %v out of range over %v", acc.Shape, dom)
			}
		}
		k.Lo[d] = int(max(0, -lo))
		k.Pad[d] = acc.Shape[d] + k.Lo[d] + int(max(0, hi-int64(acc.Shape[d]-1)))
		size *= acc.Shape[d]
		padded *= k.Pad[d]
		if padded > 2*size+1<<16 && padded > 1<<16 {
			return nil, errors.Errorf("kernel: windowMatMul: padding %v to %v exceeds twice its size", acc.Shape, k.Pad)
		}
	}
	st := make([]int64, r)
	for d, s := r-1, int64(1); d >= 0; d-- {
		st[d], s = s, s*int64(k.Pad[d])
	}
	// U over dom[:q] (with the constants and the padding), V over dom[q:]
	k.U = AffineOffsets(dom[:q], func(i int) int64 {
		var s int64
		for d := range r {
			s += st[d] * acc.Coef[d][i]
		}
		return s
	}, func() int64 {
		var s int64
		for d := range r {
			s += st[d] * (acc.C0[d] + int64(k.Lo[d]))
		}
		return s
	}())
	k.V = AffineOffsets(dom[q:], func(i int) int64 {
		var s int64
		for d := range r {
			s += st[d] * acc.Coef[d][q+i]
		}
		return s
	}, 0)
	return k, nil
}

// AffineOffsets lists c0 + Σ_i step(i)·p_i over the points p of dom in row-major order.
func AffineOffsets(dom []int, step func(i int) int64, c0 int64) []int64 {
	n := core.Shape(dom).Size()
	out := make([]int64, 0, n)
	steps := make([]int64, len(dom))
	for i := range dom {
		steps[i] = step(i)
	}
	idx := make([]int, len(dom))
	off := c0
	for range n {
		out = append(out, off)
		for i := len(dom) - 1; i >= 0; i-- {
			idx[i]++
			off += steps[i]
			if idx[i] < dom[i] {
				break
			}
			off -= steps[i] * int64(dom[i])
			idx[i] = 0
		}
	}
	return out
}

// Run implements Kernel: ins are x and M (flat slices of one float dtype).
func (k *WindowMatMul) Run(out any, ins []any) error {
	return floatPair("windowMatMul", out, ins, func(o, x, m []float64) error { return windowMatMul(k, o, x, m) },
		func(o, x, m []float32) error { return windowMatMul(k, o, x, m) })
}

func windowMatMul[T floatT](k *WindowMatMul, out, x, m []T) error {
	p, j, n := len(k.U), len(k.V), k.N
	steps, other := j, p // rows: c [P, N], M [J, N]
	if k.Cols {
		steps, other = p, j // cols: c [N, J], M [N, P]
	}
	if len(x) != core.Shape(k.Src).Size() || len(m) != n*steps || len(out) != n*other || (k.OutJ != nil || k.OutP != nil) && len(out) != k.OutLen {
		return errors.Errorf("kernel: windowMatMul: x of %d elements (shape %v), matrix of %d, output of %d for a window matrix [%d %d] and n %d", len(x), k.Src, len(m), len(out), p, j, n)
	}
	xp, kept := padOf[T](k.buf, k.Pad)
	if kept {
		defer k.buf.release()
	}
	id := unsafe.Pointer(unsafe.SliceData(x))
	if !(k.stager != nil && kept && k.buf.staged == id && k.buf.stagedLen == len(x)) {
		padInto(xp, x, k.Src, k.Lo, k.Pad)
	}
	switch {
	case k.stager != nil && kept:
		k.buf.staged, k.buf.stagedLen = nil, 0
	case k.stages && kept:
		k.buf.staged, k.buf.stagedLen = id, len(x)
	}
	if k.Cols && k.OutJ != nil && !allFinite(m) {
		scatterExact(k, out, xp, m)
		return nil
	}
	w := winDotWidth[T](n)
	if w == 0 {
		w = 8
	}
	// M's blocks of w columns: in place when it is stored [steps, n] with n a multiple of w,
	// else packed
	mp, ldm := m, n
	if k.MP != nil {
		var mkept bool
		mp, mkept = scratchOf[T](&k.buf.pack, roundUp(n, w)*steps)
		if mkept {
			defer k.buf.pack.release()
		}
		packAt(mp, m, k.MN, k.MP, n, w)
		ldm = w
	} else if trans := k.Cols != k.Trans; trans || n%w != 0 {
		var mkept bool
		mp, mkept = scratchOf[T](&k.buf.pack, roundUp(n, w)*steps)
		if mkept {
			defer k.buf.pack.release()
		}
		packBlocks(mp, m, steps, n, w, trans)
		ldm = w
	}
	if k.Cols {
		blocks := (j + 7) / 8
		work := costOf(p*j*roundUp(n, w), wFused)
		if workers(blocks, work) > 1 {
			inParallel(blocks, work, func(lo, hi int) { winMatCols(k, out, xp, mp, ldm, w, lo, hi) })
		} else {
			winMatCols(k, out, xp, mp, ldm, w, 0, blocks)
		}
		return nil
	}
	blocks := (p + 7) / 8
	work := costOf(p*j*roundUp(n, w), wFused)
	if workers(blocks, work) > 1 {
		inParallel(blocks, work, func(lo, hi int) { winMatRows(k, out, xp, mp, ldm, w, lo, hi) })
	} else {
		winMatRows(k, out, xp, mp, ldm, w, 0, blocks)
	}
	return nil
}

// scatterExact is k's scatter (ScatterTo) term by term, leaving out the terms whose window
// element lies in the padding. The scatter it stands for has no such terms: a padded
// element is a position of the cotangent that does not exist, whose product with the
// filter the scatter never adds. With a finite filter the product is ±0 and leaving it in
// changes nothing; with an infinity or a NaN it would be NaN, so a filter that holds one
// comes here.
func scatterExact[T floatT](k *WindowMatMul, out, xp, m []T) {
	r := len(k.Pad)
	inside := func(off int64) bool {
		for d := r - 1; d >= 0; d-- {
			i := int(off % int64(k.Pad[d]))
			off /= int64(k.Pad[d])
			if i < k.Lo[d] || i >= k.Lo[d]+k.Src[d] {
				return false
			}
		}
		return true
	}
	for n := range k.N {
		for jc, vj := range k.V {
			var s T
			for p, up := range k.U {
				if off := up + vj; inside(off) {
					var mv T
					switch {
					case k.MP != nil:
						mv = m[int64(n*k.MN)+k.MP[p]]
					case k.Trans:
						mv = m[p*k.N+n]
					default:
						mv = m[n*len(k.U)+p]
					}
					s += T(mv * xp[off])
				}
			}
			out[int64(n*k.OutN)+k.OutJ[jc]] = s
		}
	}
}

// packBlocks copies the steps × n matrix m (stored [steps, n], or [n, steps] when trans)
// into blocks of w columns, each [steps, w] (zeros past n), one after another.
func packBlocks[T floatT](dst, m []T, steps, n, w int, trans bool) {
	for b0 := 0; b0 < n; b0 += w {
		blk := dst[b0*steps : b0*steps+steps*w]
		cw := min(w, n-b0)
		for t := range steps {
			row := blk[t*w : t*w+w]
			if trans {
				for l := range cw {
					row[l] = m[(b0+l)*steps+t]
				}
			} else {
				copy(row[:cw], m[t*n+b0:t*n+b0+cw])
			}
		}
	}
}

// mBlock is the block of M's columns from b0 on: packed (ldm = w, blocks of steps × w one
// after another) or in place (ldm = n).
func mBlock[T floatT](mp []T, ldm, w, b0, steps int) []T {
	if ldm == w {
		return mp[b0*steps : b0*steps+steps*w]
	}
	return mp[b0:]
}

// packAt copies M (its element (n, t) at m[sn·n + offs[t]]) into blocks of w of its n
// columns, each [steps, w] (zeros past n), one after another.
func packAt[T floatT](dst, m []T, sn int, offs []int64, n, w int) {
	steps := len(offs)
	for b0 := 0; b0 < n; b0 += w {
		blk := dst[b0*steps : b0*steps+steps*w]
		for l := range min(w, n-b0) {
			col := m[(b0+l)*sn:]
			for t, o := range offs {
				blk[t*w+l] = col[o]
			}
		}
	}
}

// blockOffsets fills idx with the offsets tab[from …] of a block of eight rows or columns
// (the last repeated past the end of tab) and returns how many are real.
func blockOffsets(idx *[8]int64, tab []int64, from int) int {
	n := min(8, len(tab)-from)
	for i := range idx {
		idx[i] = tab[from+min(i, n-1)]
	}
	return n
}

// winMatRows computes the row blocks [lo, hi) (eight rows each) of c = G·M, M's blocks
// ldm apart (see mBlock).
func winMatRows[T floatT](k *WindowMatMul, out, xp, mp []T, ldm, w, lo, hi int) {
	if k.OutP != nil {
		winMatRowsTo(k, out, xp, mp, ldm, w, lo, hi)
		return
	}
	j, n := len(k.V), k.N
	var idx [8]int64
	var tile [8 * 32]T
	for b := lo; b < hi; b++ {
		p0 := 8 * b
		rows := blockOffsets(&idx, k.U, p0)
		for b0 := 0; b0 < n; b0 += w {
			blk := mBlock(mp, ldm, w, b0, j)
			cw := min(w, n-b0)
			if rows == 8 && cw == w {
				winDot(j, k.V, xp, &idx, blk, ldm, out[p0*n+b0:], n, w)
				continue
			}
			winDot(j, k.V, xp, &idx, blk, ldm, tile[:], w, w)
			for i := range rows {
				copy(out[(p0+i)*n+b0:(p0+i)*n+b0+cw], tile[i*w:i*w+cw])
			}
		}
	}
}

// winMatRowsTo is winMatRows writing c's rows through OutP (ScatterRows): each tile of eight
// points goes to the output transposed, a row of the tile's points a channel (the AVX block
// transpositions where the points are consecutive in the output), else element by element.
func winMatRowsTo[T floatT](k *WindowMatMul, out, xp, mp []T, ldm, w, lo, hi int) {
	j, n := len(k.V), k.N
	var idx [8]int64
	var tile [8 * 32]T
	for b := lo; b < hi; b++ {
		p0 := 8 * b
		rows := blockOffsets(&idx, k.U, p0)
		offs := k.OutP[p0 : p0+rows]
		whole := rows == 8 && contiguousN(offs)
		for b0 := 0; b0 < n; b0 += w {
			cw := min(w, n-b0)
			winDot(j, k.V, xp, &idx, mBlock(mp, ldm, w, b0, j), ldm, tile[:], w, w)
			if whole && transposeTileVec(out, b0*k.OutN+int(offs[0]), k.OutN, tile[:8*w], 0, w, cw, 8) {
				continue
			}
			for l := range cw {
				base := int64((b0 + l) * k.OutN)
				for i, o := range offs {
					out[base+o] = tile[i*w+l]
				}
			}
		}
	}
}

// contiguousN reports whether offs are consecutive.
func contiguousN(offs []int64) bool {
	for i := 1; i < len(offs); i++ {
		if offs[i] != offs[0]+int64(i) {
			return false
		}
	}
	return true
}

// winMatCols computes the column blocks [lo, hi) (eight columns each) of c = M·G, M's
// blocks ldm apart (see mBlock).
func winMatCols[T floatT](k *WindowMatMul, out, xp, mp []T, ldm, w, lo, hi int) {
	p, j, n := len(k.U), len(k.V), k.N
	var idx [8]int64
	var tile [8 * 32]T
	for b := lo; b < hi; b++ {
		j0 := 8 * b
		cols := blockOffsets(&idx, k.V, j0)
		for b0 := 0; b0 < n; b0 += w {
			winDot(p, k.U, xp, &idx, mBlock(mp, ldm, w, b0, p), ldm, tile[:], w, w)
			if k.OutJ != nil {
				offs := k.OutJ[j0 : j0+cols]
				if cols == 8 && contiguous8(offs) { // eight contiguous elements a row
					ls := min(w, n-b0)
					if !transposeTileVec(out, b0*k.OutN+int(offs[0]), k.OutN, tile[:8*w], 0, w, ls, 8) {
						tileColumns(out, tile[:8*w], int64(k.OutN), offs[0], w, ls, b0)
					}
					continue
				}
				for l := range min(w, n-b0) {
					base := int64((b0 + l) * k.OutN)
					for i, o := range offs {
						out[base+o] = tile[i*w+l]
					}
				}
				continue
			}
			for l := range min(w, n-b0) {
				row := out[(b0+l)*j+j0:]
				for i := range cols {
					row[i] = tile[i*w+l]
				}
			}
		}
	}
}

// contiguous8 reports whether the eight offsets are o, o+1, …, o+7.
func contiguous8(offs []int64) bool {
	_ = offs[7]
	for i := 1; i < 8; i++ {
		if offs[i] != offs[0]+int64(i) {
			return false
		}
	}
	return true
}

// tileColumns stores the columns l < ls of the 8 × w tile (rows w apart) as rows of eight
// contiguous elements of out: column l at out[(b0+l)·sn + o0 …].
func tileColumns[T floatT](out, tile []T, sn, o0 int64, w, ls, b0 int) {
	_ = tile[7*w+ls-1]
	for l := range ls {
		at := int64(b0+l)*sn + o0
		d := out[at : at+8 : at+8]
		d[0], d[1], d[2], d[3] = tile[l], tile[w+l], tile[2*w+l], tile[3*w+l]
		d[4], d[5], d[6], d[7] = tile[4*w+l], tile[5*w+l], tile[6*w+l], tile[7*w+l]
	}
}

// winDot stores into the 8 rows of o (ldo apart) the w-element sums over t < steps of
// x[tab[t]+idx[i]]·v[t·ldv …] in order of t: the assembly where there is one for w, else Go.
func winDot[T floatT](steps int, tab []int64, x []T, idx *[8]int64, v []T, ldv int, o []T, ldo, w int) {
	if winDotVec(steps, tab, x, idx, v, ldv, o, ldo, w) {
		return
	}
	for i := range 8 {
		row := o[i*ldo : i*ldo+w]
		clear(row)
		for t := range steps {
			s := x[tab[t]+idx[i]]
			vt := v[t*ldv : t*ldv+w]
			for l := range row {
				row[l] += s * vt[l]
			}
		}
	}
}

// padOf returns the padded copy's buffer of shape pad: b's (kept is true, the caller
// releases it), or a new zeroed one when b is in use.
func padOf[T floatT](b *padBuf, pad []int) (out []T, kept bool) {
	n := core.Shape(pad).Size()
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.busy {
		return make([]T, n), false
	}
	switch any(T(0)).(type) {
	case float64:
		if len(b.f64) != n {
			b.f64 = make([]float64, n)
		}
		out = any(b.f64).([]T)
	case float32:
		if len(b.f32) != n {
			b.f32 = make([]float32, n)
		}
		out = any(b.f32).([]T)
	default:
		return make([]T, n), false
	}
	b.busy = true
	return out, true
}

// release marks b free.
func (b *padBuf) release() {
	b.mu.Lock()
	b.busy = false
	b.mu.Unlock()
}

// padInto copies x (shape src) into the interior of xp (shape pad, src's elements from lo
// on along each dimension); the rest of xp is left as it is (zero). Each plane of x (its
// last two dimensions) is copied in one call of the AVX row copy, its offset in xp kept up to
// date incrementally (a convolution's rows are a few tens of elements: a memmove a row and
// recomputing the row's offset from its index moved 7 GB/s).
func padInto[T floatT](xp, x []T, src, lo, pad []int) {
	r := len(src)
	last := src[r-1]
	if r == 1 || last == 0 {
		copy(xp[lo[0]:lo[0]+len(x)], x)
		return
	}
	var st, idx [8]int
	off := 0
	for d, s := r-1, 1; d >= 0; d-- {
		st[d] = s
		off += lo[d] * s
		s *= pad[d]
	}
	h, ld := src[r-2], st[r-2]
	plane := h * last
	if plane == 0 {
		return
	}
	for p := range len(x) / plane {
		xs := x[p*plane : p*plane+plane]
		if !copyRowsVec(xp, xs, off, h, ld, last) {
			for i := range h {
				copy(xp[off+i*ld:off+i*ld+last], xs[i*last:i*last+last])
			}
		}
		if r == 2 {
			return
		}
		d := r - 3
		off += st[d]
		for idx[d]++; idx[d] == src[d] && d > 0; idx[d]++ {
			off -= st[d] * src[d]
			idx[d] = 0
			d--
			off += st[d]
		}
	}
}
