package kernel

import (
	"sync"

	"github.com/bulkad/bulkad/core"
	"github.com/pkg/errors"
)

// ScatterMatMul computes out[C,K] = Sᵀ · B with S [N,C] the scatter of y [dom] by an index
// function whose row part (n) and column part (c) are each affine plus at most one
// looked-up argmax term (see lookupPlan). It walks y's points, one row of B per point,
// when that costs less than materialising S and running a GEMM (scatterMatmulDense).

type ScatterMatMul struct {
	Dom      []int
	RowP     *Lookup // n: offset into the rows of B
	ColP     *Lookup // c: offset into the rows of out
	N, C, K  int
	HasTable bool       // input 2 is the looked-up argmax array
	WS       *Workspace // the dense path's GEMM packing buffers (nil: allocated per call)
	S        *Scratch   // the dense path's S, kept between runs (nil: allocated per run)
}

// Scratch is a buffer a kernel keeps between runs so that a steady state allocates nothing.
// It is safe for concurrent use: a run that finds it in use allocates its own. The zero
// value is ready.
type Scratch struct {
	mu   sync.Mutex
	busy bool
	f64  []float64
	f32  []float32
}

// scratchOf returns a cleared slice of n elements: s's buffer, then kept is true and the
// caller gives it back with s.release; or a new slice when s is nil, in use or T a named
// type.
func scratchOf[T floatT](s *Scratch, n int) (out []T, kept bool) {
	if s == nil {
		return make([]T, n), false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.busy {
		return make([]T, n), false
	}
	switch any(T(0)).(type) {
	case float64:
		s.f64 = grow(s.f64, n)
		out = any(s.f64[:n]).([]T)
	case float32:
		s.f32 = grow(s.f32, n)
		out = any(s.f32[:n]).([]T)
	default:
		return make([]T, n), false
	}
	s.busy = true
	clear(out)
	return out, true
}

// numScratch is scratchOf for every numeric T: a new slice for int64.
func numScratch[T numT](s *Scratch, n int) (out []T, kept bool) {
	switch any(T(0)).(type) {
	case float64:
		b, k := scratchOf[float64](s, n)
		return any(b).([]T), k
	case float32:
		b, k := scratchOf[float32](s, n)
		return any(b).([]T), k
	}
	return make([]T, n), false
}

// release gives s's buffer back after scratchOf.
func (s *Scratch) release() {
	s.mu.Lock()
	s.busy = false
	s.mu.Unlock()
}

// Run implements Kernel.
func (k *ScatterMatMul) Run(out any, ins []any) error {
	var lk []int64
	if want := 2 + int(b2i(k.HasTable)); len(ins) != want {
		return errors.Errorf("kernel: scatterMatmul: %d inputs, want %d", len(ins), want)
	}
	if k.HasTable {
		var ok bool
		lk, ok = ins[2].([]int64)
		if !ok || len(lk) != core.Shape(k.Dom).Size() {
			return typeErr("scatterMatmul", out, ins)
		}
		if (k.RowP.Table != nil && !lookupCheck(lk, len(k.RowP.Table))) || (k.ColP.Table != nil && !lookupCheck(lk, len(k.ColP.Table))) {
			return errors.Errorf("kernel: scatterMatmul: looked-up value out of range")
		}
	}
	if scatterMatmulTyped[float64](k, out, ins, lk) || scatterMatmulTyped[float32](k, out, ins, lk) {
		return nil
	}
	return typeErr("scatterMatmul", out, ins)
}

// scatterMatmulTyped runs k when out and the first two inputs are []T of the planned sizes.
func scatterMatmulTyped[T floatT](k *ScatterMatMul, out any, ins []any, lk []int64) bool {
	o, y, b, ok := typed3[T](out, ins[0], ins[1])
	if !ok || len(b) != k.N*k.K || len(o) != k.C*k.K || len(y) != core.Shape(k.Dom).Size() {
		return false
	}
	scatterMatmulRun(k, o, y, b, lk)
	return true
}

func scatterMatmulRun[T floatT](k *ScatterMatMul, out, y, b []T, lk []int64) {
	clear(out)
	kk := k.K
	if scatterMatmulDense(len(y), k.N, k.C, kk) || !allFinite(b) {
		// The dense definition: S materialised, every row of B enters the sum; also the
		// faster way when S is not sparse enough for the walk below (scatterMatmulDense).
		// (B is scanned for infinities and NaNs, which the walk would drop with S's zeros,
		// only when the walk is chosen: a pass over convnet-mnist's 11 MB im2col, 1.6 ms.)
		s, kept := scratchOf[T](k.S, k.N*k.C)
		if kept {
			defer k.S.release()
		}
		var dom, pst [maxMerge]int
		scatterPairs(k, k.whole(&dom, &pst), lk, func(p, row, col int) { s[row*k.C+col] += y[p] })
		if GEMM(k.WS, true, false, k.C, kk, k.N, s, k.C, b, kk, out, kk) {
			return
		}
		for row := 0; row < k.N; row++ {
			br := b[row*kk : row*kk+kk]
			for col := 0; col < k.C; col++ {
				v := s[row*k.C+col]
				o := out[col*kk : col*kk+kk]
				for j, bv := range br {
					o[j] += v * bv
				}
			}
		}
		return
	}
	// Walk the domain. The output rows a slice of the domain along d writes are its own when
	// the column part depends on d alone (a filter gradient's output channel): large walks
	// split along d, each output element still receiving its terms in the serial order.
	if d, ok := k.colDim(); ok {
		if work := costOf(len(y)*kk, wFused); workers(k.Dom[d], work) > 1 {
			inParallel(k.Dom[d], work, func(lo, hi int) { scatterMatmulWalk(k, k.part(d, lo, hi), out, y, b, lk) })
			return
		}
	}
	var dom, pst [maxMerge]int
	scatterMatmulWalk(k, k.whole(&dom, &pst), out, y, b, lk)
}

// smPart is the part of a ScatterMatMul's domain one walk covers: the domain with dimension
// d cut to [lo, hi), and the row, column and domain position of its first point.
type smPart struct {
	dom  []int
	base [3]int
	pst  []int // the row-major strides of the whole domain (positions in y and the table)
}

// first is the length of the domain's first dimension (1 for a rank-0 domain).
func (k *ScatterMatMul) first() int {
	if len(k.Dom) == 0 {
		return 1
	}
	return k.Dom[0]
}

// part is the part [lo, hi) of the domain along d.
func (k *ScatterMatMul) part(d, lo, hi int) smPart {
	return k.partIn(d, lo, hi, nil, nil)
}

// whole is the part of the whole domain, its dims and strides in dom and pst (arrays of the
// caller's, so that a serial run allocates nothing) when the rank allows.
func (k *ScatterMatMul) whole(dom, pst *[maxMerge]int) smPart {
	if len(k.Dom) > maxMerge {
		return k.part(0, 0, k.first())
	}
	return k.partIn(0, 0, k.first(), dom[:0], pst[:0])
}

// partIn is part with its dims and strides appended to dom and pst.
func (k *ScatterMatMul) partIn(d, lo, hi int, dom, pst []int) smPart {
	p := smPart{dom: append(dom, k.Dom...), pst: append(pst, k.Dom...), base: [3]int{k.RowP.Base, k.ColP.Base, 0}}
	for j, s := len(p.pst)-1, 1; j >= 0; j-- {
		p.pst[j], s = s, s*k.Dom[j]
	}
	if len(p.dom) > 0 {
		p.dom[d] = hi - lo
		p.base[0] += lo * k.RowP.St[d]
		p.base[1] += lo * k.ColP.St[d]
		p.base[2] = lo * p.pst[d]
	}
	return p
}

// colDim is the one dimension of two or more elements the column part depends on, when it
// depends on no other and on no looked-up value.
func (k *ScatterMatMul) colDim() (int, bool) {
	d := -1
	for j, st := range k.ColP.St {
		if st != 0 && k.Dom[j] > 1 {
			if d >= 0 {
				return 0, false
			}
			d = j
		}
	}
	return d, d >= 0 && k.ColP.Table == nil
}

// scatterMatmulWalk adds, for every point of part, y's element times its row of B into its
// output row (out cleared by the caller).
func scatterMatmulWalk[T floatT](k *ScatterMatMul, part smPart, out, y, b []T, lk []int64) {
	kk := k.K
	// Along the innermost dimension the output row usually stays the same (the column part
	// does not depend on it), so the products of a run are summed in registers and added to
	// the row once.
	if k.ColP.St[len(k.Dom)-1] != 0 || k.ColP.Table != nil {
		scatterPairs(k, part, lk, func(p, row, col int) {
			v := y[p]
			o := out[col*kk : col*kk+kk]
			for j, bv := range b[row*kk : row*kk+kk] {
				o[j] += v * bv
			}
		})
		return
	}
	last := k.Dom[len(k.Dom)-1]
	var ob [64]int
	offs := ob[:0]
	if last > len(ob) {
		offs = make([]int, last)
	}
	offs = offs[:last]
	rs, rt := k.RowP.St[len(k.Dom)-1], k.RowP.Table
	scatterRuns(k, part, func(p, row, col int) {
		// The row offsets of the run, then the columns of B a vector at a time
		// (gatherAxpyVec), the rest eight at a time with the sums in registers.
		for q := range offs {
			rr := row
			if rt != nil {
				rr += rt[lk[p+q]]
			}
			offs[q] = rr * kk
			row += rs
		}
		ys := y[p : p+last]
		o := out[col*kk : col*kk+kk]
		j := gatherAxpyVec(ys, offs, b, o, kk) // whole AVX2 vectors of columns, each in the same order
		for ; j+8 <= kk; j += 8 {
			var a0, a1, a2, a3, a4, a5, a6, a7 T
			for q, v := range ys {
				bq := b[offs[q]+j : offs[q]+j+8 : offs[q]+j+8]
				a0 += v * bq[0]
				a1 += v * bq[1]
				a2 += v * bq[2]
				a3 += v * bq[3]
				a4 += v * bq[4]
				a5 += v * bq[5]
				a6 += v * bq[6]
				a7 += v * bq[7]
			}
			o[j] += a0
			o[j+1] += a1
			o[j+2] += a2
			o[j+3] += a3
			o[j+4] += a4
			o[j+5] += a5
			o[j+6] += a6
			o[j+7] += a7
		}
		for ; j < kk; j++ {
			var a T
			for q, v := range ys {
				a += v * b[offs[q]+j]
			}
			o[j] += a
		}
	})
}

// scatterRuns calls f(p, row, col) at the start p of every run of the innermost domain
// dimension of part (row-major order) with the affine parts of its row and column (no
// looked-up terms); p is the position in the whole domain.
func scatterRuns(k *ScatterMatMul, part smPart, f func(p, row, col int)) {
	r := newRows(part.dom, [3][]int{k.RowP.St, k.ColP.St, part.pst}, part.base)
	for r.ok {
		f(r.off[2], r.off[0], r.off[1])
		r.next()
	}
}

// scatterPairs calls f(p, row, col) for every domain point p in row-major order with the
// row and column the scatter sends it to.
func scatterPairs(k *ScatterMatMul, part smPart, lk []int64, f func(p, row, col int)) {
	nd := len(k.Dom)
	last := part.dom[nd-1]
	rs, cs := k.RowP.St[nd-1], k.ColP.St[nd-1]
	rt, ct := k.RowP.Table, k.ColP.Table
	scatterRuns(k, part, func(p, row, col int) {
		for q := p; q < p+last; q++ {
			r, c := row, col
			if rt != nil {
				r += rt[lk[q]]
			}
			if ct != nil {
				c += ct[lk[q]]
			}
			f(q, r, c)
			row += rs
			col += cs
		}
	})
}

// scatterMatmulDense reports whether materialising S (n×c) and running a GEMM is expected to
// be faster than walking y's points (one multiply-add per point and column of B, kk of
// them). The walk costs about 0.2 ns a multiply-add and 5 ns a point; the dense way about
// 8 ns an element of S (allocation, scatter) and 0.017 ns a multiply-add (float32, one
// thread, fitted on the zoo's convnet-mnist: its filter gradients after a 2×2 max-pooling,
// S a quarter full, [64,288] from 9800 rows took 18 ms walked and 10.5 ms dense, [128,576]
// 13.4 and 7.1 ms, while [32,9] from 39200 rows took 2 ms walked and 7.7 ms dense).
func scatterMatmulDense(points, n, c, kk int) bool {
	walk := float64(points) * (0.2*float64(kk) + 5)
	dense := float64(n) * float64(c) * (8 + 0.017*float64(kk))
	return dense < walk
}
