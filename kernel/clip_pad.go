package kernel

import (
	"unsafe"

	"github.com/bulkad/bulkad/core"
)

// Padded 3×3 windows. Gorgonia's im2col reads an image [b, c, h, w] into [b, oh, ow, c, kh,
// kw]: a clipped gather whose rows are the 3 taps of a window row (kw), the ones that fall in
// the padding read as 0. The clipped walk pays its interval arithmetic and calls per row of 3,
// and the across plan (ow innermost) writes 9·c elements apart: ≈ 1.4 ns an element either
// way. Copied once into a zero-padded image (≈ 1.3× the image for a 3×3 window with padding 1
// on 16×16 maps: the domain has 9× the image's points), every window lies inside the padded
// image, so each point of the domain but the last two variables reads one 3×3 block, three
// rows of three contiguous elements, with no bounds to check. Col2im, the scatter, adds each
// block into a zeroed padded image in the domain's order (each element of the image receives
// its terms in the reference's order, starting from +0 as the cleared output does), then
// copies the image out of it: the same bits as the clipped walk.

// padPlan is a clipped plan run on a zero-padded copy of the addressed array.
type padPlan struct {
	lim  []int // the addressed dims
	plim []int // the padded dims: lim plus the padding before and after
	lo   []int // the padding before each dim
	st   []int // per domain variable: its step in the padded array
	base int   // the padded offset of the domain's first point
	size int   // elements of the padded array
	// rows: the domain's last variable reads contiguous rows of the padded array (the ONNX
	// importer's im2col, [c, kh, kw, b, oh, ow]: rows of ow), copied or added whole; else
	// its last two variables are a 3×3 window
	rows bool
}

// padded is p's padded plan, or nil when it does not apply: blocks of more than one element,
// a domain whose last two variables are not a 3×3 window of the padded array (rows s apart,
// taps t apart, both positive: t = 1 for an image [b, c, h, w], the channels for a
// channels-last one), a padded array more than three times the addressed one, or a
// domain of fewer points than it (a stride-2 window on a 16×16 map has 1.8× the padded
// image's points: the copy, ≈ 0.3 ns an element, still pays against ≈ 1 ns a point saved).
func (p *ClipPlan) padded(r int) *padPlan {
	n, m := len(p.dom), len(p.lim)
	window := n >= 3 && p.dom[n-1] == 3 && p.dom[n-2] == 3
	if r != 1 || n < 2 || m == 0 || !window && p.dom[n-1] < padRowMin {
		return nil
	}
	pp := &padPlan{lim: make([]int, m), plim: make([]int, m), lo: make([]int, m)}
	limSize, size := 1, 1
	for k := range m {
		lo, hi := p.c0[k], p.c0[k]
		for j, d := range p.dom {
			c := p.coef[j][k] * int64(d-1)
			lo += min(c, 0)
			hi += max(c, 0)
		}
		before, after := max(0, -lo), max(0, hi-(p.lim[k]-1))
		if before > p.lim[k] || after > p.lim[k] { // a window far outside: not a padding
			return nil
		}
		pp.lim[k], pp.lo[k] = int(p.lim[k]), int(before)
		pp.plim[k] = int(p.lim[k] + before + after)
		limSize *= pp.lim[k]
		size *= pp.plim[k]
	}
	if size > 3*limSize || p.points() < size {
		return nil
	}
	pst := core.Shape(pp.plim).Strides()
	pp.st = make([]int, n)
	for j := range n {
		for k := range m {
			pp.st[j] += int(p.coef[j][k]) * pst[k]
		}
	}
	for k := range m {
		pp.base += (int(p.c0[k]) + pp.lo[k]) * pst[k]
	}
	switch {
	case window && pp.st[n-1] > 0 && pp.st[n-2] > 0:
	case p.dom[n-1] >= padRowMin && pp.st[n-1] == 1:
		pp.rows = true
	default:
		return nil
	}
	pp.size = size
	return pp
}

// padRowMin is the shortest row of the padded path's rows mode.
const padRowMin = 8

// copyPadded copies x (the addressed array) into the interior of the padded array buf (out
// false), or the interior of buf into x (out true), a plane of the last two dims at a time,
// the planes split across goroutines when large.
func copyPadded[T elem](pp *padPlan, buf, x []T, out bool) {
	m := len(pp.lim)
	if core.Shape(pp.lim).Size() == 0 {
		return
	}
	h, w := 1, pp.lim[m-1] // rows of a plane, their length
	if m >= 2 {
		h = pp.lim[m-2]
	}
	planes := len(x) / (h * w)
	if work := costOf(len(x), wCheap); workers(planes, work) > 1 {
		inParallel(planes, work, func(lo, hi int) { copyPlanes(pp, buf, x, out, lo, hi) })
		return
	}
	copyPlanes(pp, buf, x, out, 0, planes)
}

// copyPlanes is copyPadded for the planes [q0, q1) of x.
func copyPlanes[T elem](pp *padPlan, buf, x []T, out bool, q0, q1 int) {
	m := len(pp.lim)
	h, w, s := 1, pp.lim[m-1], 0 // rows of a plane, their length, the padded row stride
	pst := core.Shape(pp.plim).Strides()
	outer := pp.lim[:m-1]
	if m >= 2 {
		h, s, outer = pp.lim[m-2], pst[m-2], pp.lim[:m-2]
	}
	idx := make([]int64, len(outer))
	for v, q := len(outer)-1, q0; v >= 0; v-- {
		idx[v], q = int64(q%outer[v]), q/outer[v]
	}
	for src := q0 * h * w; src < q1*h*w; src += h * w {
		off := pp.lo[m-1]
		if m >= 2 {
			off += pp.lo[m-2] * s
		}
		for k, i := range idx {
			off += (int(i) + pp.lo[k]) * pst[k]
		}
		if out {
			copyRows(x[src:src+h*w], buf, off, h, s, w)
		} else {
			spreadRows(buf, off, s, x[src:src+h*w], h, w)
		}
		odometer(idx, outer)
	}
}

// spreadRows copies h rows of w elements of src (one after another) into dst, s apart from
// offset o: copyRows's inverse.
func spreadRows[T elem](dst []T, o, s int, src []T, h, w int) {
	if !moveRowsFixed(dst, o, s, src, 0, w, h, w) {
		for i := range h {
			copy(dst[o+i*s:o+i*s+w], src[i*w:(i+1)*w])
		}
	}
}

// gatherPadded is the gather of the padded plan: out[i] = xp[base + Σ i_j·st_j], the 3×3
// window of each outer point copied as three rows of three, split along the outer dims
// across goroutines when large. s is where the padded array is kept between runs.
func gatherPadded[T floatT](pp *padPlan, dom []int, out, x []T, s *Scratch) {
	buf, kept := scratchOf[T](s, pp.size)
	if kept {
		defer s.release()
	}
	copyPadded(pp, buf, x, false)
	n := len(dom)
	work := costOf(len(out), wCheap)
	outer, ost := dom[:n-2], pp.st[:n-2]
	block := 9 // a 3×3 window, or h rows of w
	h, w := dom[n-2], dom[n-1]
	if pp.rows {
		block = h * w
	}
	if d, ok := splitDim(outer, work); ok {
		inParallel(outer[d], work, func(lo, hi int) {
			part, p0, p1 := subDom(outer, d, lo, hi)
			gatherPaddedRun(pp.rows, out[p0*block:p1*block], buf, part, ost, pp.base+lo*ost[d], h, w, pp.st[n-2], pp.st[n-1])
		})
		return
	}
	gatherPaddedRun(pp.rows, out, buf, outer, ost, pp.base, h, w, pp.st[n-2], pp.st[n-1])
}

// gatherPaddedRun is gatherPadded's walk of the outer points part (their strides the last of
// ost) from base, on the calling goroutine: h rows of w (rows), or 3×3 windows, sh and sw
// apart.
func gatherPaddedRun[T floatT](rows bool, out, buf []T, part, ost []int, base, h, w, sh, sw int) {
	if rows {
		gatherRowBlocks(out, buf, part, ost[len(ost)-len(part):], base, h, sh, w)
		return
	}
	windowRows(out, buf, part, ost[len(ost)-len(part):], base, sh, sw)
}

// gatherRowBlocks copies, for each point of outer (offsets st from base in xp), h rows of w
// contiguous elements s apart, one block after another into out: a loop per block instead
// of the affine walk's call per row (the ONNX importer's im2col has rows of 16 or 32).
func gatherRowBlocks[T floatT](out, xp []T, outer, st []int, base, h, s, w int) {
	r := newRows(outer, [3][]int{st}, [3]int{base})
	last, so := r.last, r.stride(0)
	p := 0
	for ; r.ok; r.next() {
		o := r.off[0]
		for range last {
			copyRows(out[p:p+h*w], xp, o, h, s, w)
			p += h * w
			o += so
		}
	}
}

// copyRows copies h rows of w elements, s apart from offset o of xp, into dst.
func copyRows[T elem](dst, xp []T, o, h, s, w int) {
	if !moveRowsFixed(dst, 0, w, xp, o, s, h, w) {
		for i := range h {
			copy(dst[i*w:(i+1)*w], xp[o+i*s:o+i*s+w])
		}
	}
}

// moveRowsFixed copies h rows of w elements from src (offset so, rows ss apart) to dst
// (offset do, rows ds apart) in 16-byte pieces held in registers when w is 4, 8, 16 or 32
// float32s or 2, 4, 8 or 16 float64s (a copy call, or the memmove Go emits for a larger array
// assignment, costs more than a 64-byte row), and reports whether it did.
func moveRowsFixed[T elem](dst []T, do, ds int, src []T, so, ss, h, w int) bool {
	var dp, sp unsafe.Pointer
	var bytes int
	switch d := any(dst).(type) {
	case []float32:
		x := any(src).([]float32)
		if w != 4 && w != 8 && w != 16 && w != 32 || h == 0 {
			return false
		}
		_, _ = d[do+(h-1)*ds+w-1], x[so+(h-1)*ss+w-1] // the last row in bounds
		dp, sp, bytes = unsafe.Pointer(&d[do]), unsafe.Pointer(&x[so]), 4
	case []float64:
		x := any(src).([]float64)
		if w != 2 && w != 4 && w != 8 && w != 16 || h == 0 {
			return false
		}
		_, _ = d[do+(h-1)*ds+w-1], x[so+(h-1)*ss+w-1]
		dp, sp, bytes = unsafe.Pointer(&d[do]), unsafe.Pointer(&x[so]), 8
	default:
		return false
	}
	if do < 0 || so < 0 || ds < 0 || ss < 0 {
		return false
	}
	n := w * bytes / 16 // 16-byte pieces a row: 1, 2, 4 or 8
	for i := range h {
		dr, sr := unsafe.Add(dp, i*ds*bytes), unsafe.Add(sp, i*ss*bytes)
		if n == 1 {
			*(*[2]uint64)(dr) = *(*[2]uint64)(sr)
			continue
		}
		for j := 0; j < n; j += 2 {
			a := *(*[2]uint64)(unsafe.Add(sr, j*16))
			b := *(*[2]uint64)(unsafe.Add(sr, j*16+16))
			*(*[2]uint64)(unsafe.Add(dr, j*16)) = a
			*(*[2]uint64)(unsafe.Add(dr, j*16+16)) = b
		}
	}
	return true
}

// addRows adds h rows of w elements of src into xp, s apart from offset o, each element in
// order (xp is the padded scratch, src the kernel's input: they do not overlap).
func addRows[T floatT](xp, src []T, o, h, s, w int) {
	if addRowsVec(xp, src, o, h, s, w) {
		return
	}
	for i := range h {
		d := xp[o+i*s : o+i*s+w]
		for j, v := range src[i*w : (i+1)*w] {
			d[j] += v
		}
	}
}

// windowRows writes, for each point of outer (block offsets st from base), the 3×3 window
// of xp at that offset with rows s apart and taps t apart, nine elements after another.
func windowRows[T floatT](out, xp []T, outer, st []int, base, s, t int) {
	r := newRows(outer, [3][]int{st}, [3]int{base})
	last, so := r.last, r.stride(0)
	p := 0
	for r.ok {
		o := r.off[0]
		if t == 1 { // rows of three contiguous elements
			for range last {
				d := out[p : p+9 : p+9]
				r0, r1, r2 := xp[o:o+3:o+3], xp[o+s:o+s+3:o+s+3], xp[o+2*s:o+2*s+3:o+2*s+3]
				d[0], d[1], d[2] = r0[0], r0[1], r0[2]
				d[3], d[4], d[5] = r1[0], r1[1], r1[2]
				d[6], d[7], d[8] = r2[0], r2[1], r2[2]
				p += 9
				o += so
			}
		} else {
			w := 2*t + 1
			for range last {
				d := out[p : p+9 : p+9]
				r0, r1, r2 := xp[o:o+w:o+w], xp[o+s:o+s+w:o+s+w], xp[o+2*s:o+2*s+w:o+2*s+w]
				d[0], d[1], d[2] = r0[0], r0[t], r0[2*t]
				d[3], d[4], d[5] = r1[0], r1[t], r1[2*t]
				d[6], d[7], d[8] = r2[0], r2[t], r2[2*t]
				p += 9
				o += so
			}
		}
		r.next()
	}
}

// scatterPadded is the scatter of the padded plan: each 3×3 block of x (or h rows of w) added
// into the zeroed padded array in the domain's order, whose interior is then out. When the
// slices of the domain along its first dimension of more than one element write disjoint
// parts of the padded array (a batch's images), a large scatter is split along it: each
// element still receives its terms in the serial order.
func scatterPadded[T floatT](pp *padPlan, dom []int, out, x []T, s *Scratch) {
	buf, kept := scratchOf[T](s, pp.size)
	if kept {
		defer s.release()
	}
	n := len(dom)
	outer := dom[:n-2]
	block := len(x) / max(1, core.Shape(outer).Size())
	work := costOf(len(x), wCheap)
	if d, ok := splitDim(outer, work); ok && pp.disjoint(dom, d) {
		inParallel(outer[d], work, func(lo, hi int) {
			part, p0, p1 := subDom(outer, d, lo, hi)
			scatterPaddedRun(pp, dom, part, pp.st[d:n-2], pp.base+lo*pp.st[d], buf, x[p0*block:p1*block])
		})
	} else {
		scatterPaddedRun(pp, dom, outer, pp.st[:n-2], pp.base, buf, x)
	}
	copyPadded(pp, buf, out, true)
}

// disjoint reports whether the slices of dom along d reach disjoint parts of the padded
// array: d's step exceeds the span of the offsets of all the other variables.
func (pp *padPlan) disjoint(dom []int, d int) bool {
	span := 0
	for j, n := range dom {
		if j != d {
			span += abs(pp.st[j]) * (n - 1)
		}
	}
	return abs(pp.st[d]) > span
}

// scatterPaddedRun adds the blocks of x, one per point of outer (offsets st from base in the
// padded array buf), into buf in order on the calling goroutine; dom is the whole domain
// (its last two variables the block's).
func scatterPaddedRun[T floatT](pp *padPlan, dom, outer, st []int, base int, buf, x []T) {
	n := len(dom)
	r := newRows(outer, [3][]int{st}, [3]int{base})
	last, so := r.last, r.stride(0)
	if pp.rows {
		h, s, w := dom[n-2], pp.st[n-2], dom[n-1]
		p := 0
		for ; r.ok; r.next() {
			o := r.off[0]
			for range last {
				addRows(buf, x[p:p+h*w], o, h, s, w)
				p += h * w
				o += so
			}
		}
		return
	}
	rs, t := pp.st[n-2], pp.st[n-1]
	w := 2*t + 1
	p := 0
	for r.ok {
		o := r.off[0]
		for range last {
			// written out here and in scatterProduct: a call per window (too large to
			// inline) cost 70% more
			v := x[p : p+9 : p+9]
			r0, r1, r2 := buf[o:o+w:o+w], buf[o+rs:o+rs+w:o+rs+w], buf[o+2*rs:o+2*rs+w:o+2*rs+w]
			r0[0] += v[0]
			r0[t] += v[1]
			r0[2*t] += v[2]
			r1[0] += v[3]
			r1[t] += v[4]
			r1[2*t] += v[5]
			r2[0] += v[6]
			r2[t] += v[7]
			r2[2*t] += v[8]
			p += 9
			o += so
		}
		r.next()
	}
}

// padRun runs the gather (or scatter) of p on its padded plan pp when out and x are float
// slices of the plan's sizes, and reports whether it did.
func padRun[T elem](p *ClipPlan, pp *padPlan, s *Scratch, dom []int, out, x []T, scatter bool) bool {
	domSide, other := len(out), len(x)
	if scatter {
		domSide, other = other, domSide
	}
	if p.check("pad", domSide, other, 1) != nil {
		return false // the clipped path reports the error
	}
	switch o := any(out).(type) {
	case []float64:
		padRunF(pp, s, dom, o, any(x).([]float64), scatter)
	case []float32:
		padRunF(pp, s, dom, o, any(x).([]float32), scatter)
	default:
		return false
	}
	return true
}

func padRunF[T floatT](pp *padPlan, s *Scratch, dom []int, out, x []T, scatter bool) {
	if scatter {
		scatterPadded(pp, dom, out, x, s)
		return
	}
	gatherPadded(pp, dom, out, x, s)
}
