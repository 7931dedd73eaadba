package kernel

import (
	"github.com/bulkad/bulkad/core"
	"math"
)

// Array kernels on flat row-major slices with strides precomputed at compile time.

// zeroRange sets n elements of v from offset off to zero.
func (v *buf) zeroRange(off, n int) {
	switch v.typ.Dtype {
	case core.Float64:
		clear(v.f64[off : off+n])
	case core.Float32:
		clear(v.f32[off : off+n])
	case core.Int64:
		clear(v.i64[off : off+n])
	case core.Bool:
		clear(v.b[off : off+n])
	}
}

// copyRange copies n elements of src from srcOff into v at off.
func (v *buf) copyRange(off int, src *buf, srcOff, n int) {
	switch v.typ.Dtype {
	case core.Float64:
		copy(v.f64[off:off+n], src.f64[srcOff:srcOff+n])
	case core.Float32:
		copy(v.f32[off:off+n], src.f32[srcOff:srcOff+n])
	case core.Int64:
		copy(v.i64[off:off+n], src.i64[srcOff:srcOff+n])
	case core.Bool:
		copy(v.b[off:off+n], src.b[srcOff:srcOff+n])
	}
}

// axisPart is a block of the outputs of a reduction along the middle axis of [pre, n, post]:
// the positions [p0, p1) along pre and [c0, c1) along post.
type axisPart struct{ p0, p1, c0, c1 int }

// alongAxisSplit calls f on the whole [pre, post] output, or, when the work (pre·n·post
// elements read) is large, on parts of it across goroutines: along pre when it splits evenly
// enough, else along post. Each output is computed by one part, in the same order as by the
// whole, so the result does not depend on the split.
func alongAxisSplit(pre, n, post int, f func(q axisPart)) {
	work := costOf(pre*n*post, wReduce)
	whole := axisPart{0, pre, 0, post}
	w := workers(max(pre, post), work)
	switch {
	case w <= 1:
		f(whole)
	case pre%w == 0 || pre >= 4*w || post < 16*w:
		inParallel(pre, work, func(lo, hi int) { f(axisPart{lo, hi, 0, post}) })
	default:
		inParallel(post, work, func(lo, hi int) { f(axisPart{0, pre, lo, hi}) })
	}
}

// sumOuterK sums x, viewed as [pre, n, post], along its middle axis into dst ([pre, post]), in
// the element type's arithmetic; large sums are split across goroutines (alongAxisSplit).
func sumOuterK[T numT](dst, x []T, pre, n, post int) {
	if workers(max(pre, post), costOf(pre*n*post, wReduce)) > 1 {
		alongAxisSplit(pre, n, post, func(q axisPart) { sumOuterPart(dst, x, n, post, q) })
		return
	}
	sumOuterPart(dst, x, n, post, axisPart{0, pre, 0, post})
}

// sumOuterPart is sumOuterK for the outputs of q.
func sumOuterPart[T numT](dst, x []T, n, post int, q axisPart) {
	if post == 1 && n > 0 {
		sumRows(dst[q.p0:q.p1], x[q.p0*n:q.p1*n], n)
		return
	}
	if post <= colSumMax {
		// each output an addition chain in a register (vectors of columns in the AVX2
		// kernels), not a call of addTo per row: a batch norm's per-channel sums of
		// [8192, 16] took 90 µs as 8192 calls of a 16-element addition
		for p := q.p0; p < q.p1; p++ {
			o := dst[p*post+q.c0 : p*post+q.c1]
			clear(o)
			colSums(o, x[p*n*post+q.c0:], post, n)
		}
		return
	}
	for p := q.p0; p < q.p1; p++ {
		o := dst[p*post+q.c0 : p*post+q.c1]
		clear(o)
		for i := range n {
			row := (p*n + i) * post
			addTo(o, x[row+q.c0:row+q.c1])
		}
	}
}

// colSumMax is the longest row sumOuter sums by columns (colSums); longer rows are added
// one after another into the output (addTo), which streams both.
const colSumMax = 256

// sumRows sets dst[p] to the sum of row p of x (rows of n > 0), each in order from zero:
// rowSumsRows rows at a time in vector registers (each lane a row's chain: Gorgonia's Repeat
// gradient sums rows of 16, 0.27 ns an element four rows at a time), else four rows at a time,
// whose additions are independent chains (a single chain waits for each addition's latency:
// 1 ns an element for a depthwise convolution's sums of 9).
func sumRows[T numT](dst, x []T, n int) {
	p := 0
	if rows := rowSumsRows[T](); rows > 0 {
		for ; p+rows <= len(dst); p += rows {
			o := dst[p : p+rows]
			clear(o)
			if !rowSumsVec(o, x[p*n:], n, n) {
				break
			}
		}
	}
	for ; p+4 <= len(dst); p += 4 {
		r0, r1, r2, r3 := x[p*n:p*n+n], x[(p+1)*n:(p+1)*n+n], x[(p+2)*n:(p+2)*n+n], x[(p+3)*n:(p+3)*n+n]
		var a0, a1, a2, a3 T
		for i, v := range r0 {
			a0 += v
			a1 += r1[i]
			a2 += r2[i]
			a3 += r3[i]
		}
		d := dst[p : p+4 : p+4]
		d[0], d[1], d[2], d[3] = a0, a1, a2, a3
	}
	for ; p < len(dst); p++ {
		var a T
		for _, v := range x[p*n : p*n+n] {
			a += v
		}
		dst[p] = a
	}
}

// argmaxOuterK writes, for x viewed as [pre, n, post] and each (pre, post) position, the
// first index along the middle axis holding the maximum: NaN never wins against a number,
// and an all-NaN (or empty) column gives 0. Large inputs are split across goroutines
// (alongAxisSplit).
func argmaxOuterK[T numT](dst []int64, x []T, pre, n, post int) {
	if workers(max(pre, post), costOf(pre*n*post, wReduce)) > 1 {
		alongAxisSplit(pre, n, post, func(q axisPart) { argmaxOuterPart(dst, x, n, post, q) })
		return
	}
	argmaxOuterPart(dst, x, n, post, axisPart{0, pre, 0, post})
}

// argmaxOuterPart is argmaxOuterK for the outputs of q.
func argmaxOuterPart[T numT](dst []int64, x []T, n, post int, q axisPart) {
	if xs, ok := any(x).([]float32); ok {
		argmaxBestF32(dst, xs, n, post, q)
		return
	}
	for p := q.p0; p < q.p1; p++ {
		o, xb := dst[p*post+q.c0:p*post+q.c1], x[p*n*post+q.c0:(p+1)*n*post]
		clear(o)
		for i := 1; i < n; i++ {
			for j, v := range xb[i*post : i*post+len(o)] {
				b := xb[int(o[j])*post+j]
				// o[j] = i where v > b or b is NaN and v is not, without a branch (random
				// data mispredicts it every other element: 4 ns an element)
				take := b2i(v > b) | b2i(b != b)&b2i(v == v)
				o[j] ^= (o[j] ^ int64(i)) & -take
			}
		}
	}
}

// permPlan is a strided copy: dst (row-major over dims) takes src at offset Σ idx_k·str_k.
// Adjacent dimensions that are contiguous in the source are merged at compile time.
type permPlan struct {
	dims []int
	str  []int
	base int   // source offset of the first element
	idx  []int // scratch odometer
}

func newPermPlan(dims, str []int) *permPlan {
	// merge dimension k into k+1 when src is contiguous across them
	var md, ms []int
	for k := range dims {
		if dims[k] == 1 {
			continue
		}
		md = append(md, dims[k])
		ms = append(ms, str[k])
	}
	for k := len(md) - 2; k >= 0; k-- {
		if ms[k] == ms[k+1]*md[k+1] {
			md[k] *= md[k+1]
			ms[k] = ms[k+1]
			md = append(md[:k+1], md[k+2:]...)
			ms = append(ms[:k+1], ms[k+2:]...)
		}
	}
	return &permPlan{dims: md, str: ms, idx: make([]int, len(md))}
}

// permCopy runs the strided copy p, split along its first dimension across goroutines when
// large (each part writes its own rows of dst).
func permCopy[T any](p *permPlan, dst, src []T) {
	w := wStrided
	if r := len(p.dims); r > 0 && p.str[r-1] == 1 {
		w = wCheap // contiguous rows
	}
	work := costOf(len(dst), w)
	if len(p.dims) == 0 || workers(p.dims[0], work) <= 1 {
		permCopyRun(p, dst, src)
		return
	}
	inParallel(p.dims[0], work, func(lo, hi int) {
		dims, p0, p1 := subDom(p.dims, 0, lo, hi)
		q := &permPlan{dims: dims, str: p.str, base: p.base + lo*p.str[0], idx: make([]int, len(dims))}
		permCopyRun(q, dst[p0:p1], src)
	})
}

// permCopyRun is permCopy on the calling goroutine.
func permCopyRun[T any](p *permPlan, dst, src []T) {
	r := len(p.dims)
	if r == 0 {
		if len(dst) > 0 {
			dst[0] = src[p.base]
		}
		return
	}
	if len(dst) == 0 {
		return
	}
	if r >= 2 && p.str[r-2] == 1 && p.str[r-1] != 1 {
		permCopyTiled(p, dst, src)
		return
	}
	last := p.dims[r-1]
	ls := p.str[r-1]
	idx := p.idx
	clear(idx)
	off := p.base
	for o := 0; o < len(dst); o += last {
		row := dst[o : o+last]
		if ls == 1 {
			copy(row, src[off:off+last])
		} else {
			s := off
			for j := range row {
				row[j] = src[s]
				s += ls
			}
		}
		off = advance(idx[:r-1], p.dims, p.str, off)
	}
}

// advance steps the multi-index idx over the leading dims (the last of idx fastest) and
// returns off moved along the strides str.
func advance(idx, dims, str []int, off int) int {
	for k := len(idx) - 1; k >= 0; k-- {
		idx[k]++
		off += str[k]
		if idx[k] < dims[k] {
			return off
		}
		off -= idx[k] * str[k]
		idx[k] = 0
	}
	return off
}

// permCopyTiled handles a plan whose last two dimensions are a transposition (the source is
// contiguous along the second-to-last dimension): each A×B slab is copied in 32×32 tiles so
// that both the reads and the writes stay within a few cache lines.
func permCopyTiled[T any](p *permPlan, dst, src []T) {
	const tile = 32
	r := len(p.dims)
	a, b := p.dims[r-2], p.dims[r-1]
	sb := p.str[r-1]
	idx := p.idx
	clear(idx)
	off := p.base
	for o := 0; o < len(dst); o += a * b {
		slab := dst[o : o+a*b]
		for i0 := 0; i0 < a; i0 += tile {
			i1 := min(i0+tile, a)
			for j0 := 0; j0 < b; j0 += tile {
				j1 := min(j0+tile, b)
				for i := i0; i < i1; i++ {
					row := slab[i*b+j0 : i*b+j1]
					s := off + i + j0*sb
					for j := range row {
						row[j] = src[s]
						s += sb
					}
				}
			}
		}
		off = advance(idx[:r-2], p.dims, p.str, off)
	}
}

// argmaxBestF32 is argmaxOuterPart for float32 with the running maximum kept in a stack
// buffer beside the index (no load at the index found so far) and both updated without a
// branch: a 3×3 max-pool's windows at batch 2, [9, 32768], the stem of resnet18 and
// densenet121 in each of their two plans.
func argmaxBestF32(dst []int64, x []float32, n, post int, q axisPart) {
	var buf [256]float32
	for p := q.p0; p < q.p1; p++ {
		xb := x[p*n*post : (p+1)*n*post]
		for c0 := q.c0; c0 < q.c1; c0 += len(buf) {
			c1 := min(c0+len(buf), q.c1)
			o, best := dst[p*post+c0:p*post+c1], buf[:c1-c0]
			copy(best, xb[c0:c1])
			clear(o)
			for i := 1; i < n; i++ {
				row := xb[i*post+c0 : i*post+c1]
				row = row[:len(best)]
				for j, v := range row {
					b := best[j]
					take := uint32(b2i(v > b) | b2i(b != b)&b2i(v == v))
					m := -take
					best[j] = math.Float32frombits(math.Float32bits(b)&^m | math.Float32bits(v)&m)
					o[j] ^= (o[j] ^ int64(i)) & -int64(take)
				}
			}
		}
	}
}
