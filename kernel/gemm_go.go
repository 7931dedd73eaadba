package kernel

import (
	"runtime"
	"sync"
)

//go:generate sh -c "cd internal/asmgen && go run . -pkg kernel -out ../../gemm_amd64.s -stubs ../../gemm_amd64_stub.go"

// Block sizes of the GEMM: a kc×nc panel of op(b) and an mc×kc block of op(a) are packed
// into strips of mr rows / nr columns, and the register-blocked micro-kernel computes one
// mr×nr tile of c from two strips (see gemmMicro: 8×16 float64 and 8×32 float32 tiles with
// AVX-512, 6×8 and 6×16 with AVX2+FMA, 4×4 portable). gemmMC is a multiple of every mr.
const (
	gemmKC = 256
	gemmMC = 96
	gemmNC = 1024
	// gemmParallel is the number of multiply-adds from which gemmGo splits the columns of c
	// across goroutines (at most GOMAXPROCS).
	gemmParallel = 1 << 21
)

// micro is a GEMM micro-kernel: run computes the mr×nr tile Σ_p as[p,:]ᵀ bs[p,:] of two packed
// strips into c (row i at c[i*ldc:]), storing it, or adding it to c when add is set.
type micro[T floatT] struct {
	mr, nr int
	run    func(kc int, as, bs, c []T, ldc int, add bool)
	// runU, when set, is run with the mr rows of a read in place (row i at a[i*lda:]).
	runU func(kc int, a []T, lda int, bs, c []T, ldc int, add bool)
	// dot, when set, computes the rows×cols tile c[i*ldc+j] = Σ_{p<kc} a[i*lda+p]·b[j*ldb+p]
	// (stored, or added with add) for rows 4 or 1 and cols 1 to 5, kc a positive multiple of
	// lanes: the kernel of narrow products (see gemmDot).
	dot   func(rows, cols, kc int, a []T, lda int, b []T, ldb int, c []T, ldc int, add bool)
	lanes int
}

// gemmGo computes c = op(a)·op(b) for row-major strided operands (leading dimensions lda,
// ldb, ldc): op(a) is m×k, stored as a[i*lda+p] (a[p*lda+i] when ta); op(b) is k×n, stored
// as b[p*ldb+j] (b[j*ldb+p] when tb). Packing, cache blocking and a register-blocked
// micro-kernel (assembly when the CPU has AVX-512F or AVX2+FMA, see gemmMicro), with no
// skipping of zero operands, so a NaN or Inf in either operand reaches c exactly where the
// naive triple loop puts it. Above gemmParallel multiply-adds, column blocks of c run on up
// to GOMAXPROCS goroutines.
func gemmGo[T floatT](ta, tb bool, m, n, k int, a []T, lda int, b []T, ldb int, c []T, ldc int) {
	gemmWith(nil, gemmMicro[T](), ta, tb, m, n, k, a, lda, b, ldb, c, ldc)
}

// Workspace keeps the GEMM's packing buffers for reuse by later calls (a GEMM of the MLP
// packs about 1 MB; allocating it per call was half of the bytes a training step allocated).
// It is safe for concurrent use: each call takes buffers of its own. The zero value is ready;
// a nil *Workspace allocates per call.
type Workspace struct{ pool sync.Pool }

// buffer returns a slice of n elements (contents undefined) from w, or a new one.
func buffer[T floatT](w *Workspace, n int) []T {
	if w != nil {
		if p, ok := w.pool.Get().(*[]T); ok && cap(*p) >= n {
			return (*p)[:n]
		}
	}
	return make([]T, n)
}

// release gives s back to w for reuse.
func release[T floatT](w *Workspace, s []T) {
	if w != nil {
		w.pool.Put(&s)
	}
}

// gemmWith is gemmGo with the workspace ws (nil: allocate) and the micro-kernel mk.
func gemmWith[T floatT](ws *Workspace, mk micro[T], ta, tb bool, m, n, k int, a []T, lda int, b []T, ldb int, c []T, ldc int) {
	if m == 0 || n == 0 {
		return
	}
	if k == 0 {
		for i := 0; i < m; i++ {
			clear(c[i*ldc : i*ldc+n])
		}
		return
	}
	if mk.dot != nil && !ta && n < mk.nr && k >= 4*mk.lanes {
		gemmDot(ws, mk, tb, m, n, k, a, lda, b, ldb, c, ldc)
		return
	}
	nr := mk.nr
	workers := runtime.GOMAXPROCS(0)
	if m*n*k < gemmParallel {
		workers = 1
	}
	// Each worker packs all of the operand it does not split: split the columns of c (every
	// worker packs all of op(a)) when op(a) is the smaller one, else the rows (every worker
	// packs all of op(b)).
	byRows := m*k > k*n && m/mk.mr >= 2
	unit, extent := nr, n
	if byRows {
		unit, extent = mk.mr, m
	}
	workers = min(workers, extent/unit)
	if workers <= 1 {
		gemmCols(ws, mk, ta, tb, m, k, 0, n, a, lda, b, ldb, c, ldc)
		return
	}
	// Ranges in multiples of the tile, as even as possible.
	strips := (extent + unit - 1) / unit
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		x0 := strips * w / workers * unit
		x1 := min(strips*(w+1)/workers*unit, extent)
		if x0 >= x1 {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if !byRows {
				gemmCols(ws, mk, ta, tb, m, k, x0, x1, a, lda, b, ldb, c, ldc)
				return
			}
			ao := x0 * lda // row x0 of op(a)
			if ta {
				ao = x0
			}
			gemmCols(ws, mk, ta, tb, x1-x0, k, 0, n, a[ao:], lda, b, ldb, c[x0*ldc:], ldc)
		}()
	}
	wg.Wait()
}

// gemmCols computes the columns [j0, j1) of c = op(a)·op(b) (see gemmGo) with packing
// buffers of its own (from ws). Full tiles go straight into c; the tiles at the right and
// bottom edges go through a scratch tile.
func gemmCols[T floatT](ws *Workspace, mk micro[T], ta, tb bool, m, k, j0, j1 int, a []T, lda int, b []T, ldb int, c []T, ldc int) {
	mr, nr := mk.mr, mk.nr
	kc0 := min(k, gemmKC)
	nb, na := kc0*roundUp(min(j1-j0, gemmNC), nr), kc0*roundUp(min(m, gemmMC), mr)
	buf := buffer[T](ws, nb+na+mr*nr)
	defer release(ws, buf)
	bp, ap, tile := buf[:nb], buf[nb:nb+na], buf[nb+na:]
	for jc := j0; jc < j1; jc += gemmNC {
		nc := min(gemmNC, j1-jc)
		for pc := 0; pc < k; pc += gemmKC {
			kc := min(gemmKC, k-pc)
			add := pc > 0
			packStrips(nr, !tb, b, ldb, jc, nc, pc, kc, bp)
			for ic := 0; ic < m; ic += gemmMC {
				mc := min(gemmMC, m-ic)
				// A narrow product (one or two column strips) reads its full row strips of A
				// straight from the matrix: packing them would cost as much as using them.
				direct := mk.runU != nil && !ta && nc <= 2*nr
				if direct {
					if tail := mc % mr; tail > 0 {
						packStrips(mr, ta, a, lda, ic+mc-tail, tail, pc, kc, ap[(mc-tail)*kc:])
					}
				} else {
					packStrips(mr, ta, a, lda, ic, mc, pc, kc, ap)
				}
				for jr := 0; jr < nc; jr += nr {
					bs := bp[jr*kc : jr*kc+kc*nr]
					nj := min(nr, nc-jr)
					for ir := 0; ir < mc; ir += mr {
						as := ap[ir*kc : ir*kc+kc*mr]
						mi := min(mr, mc-ir)
						ci := (ic+ir)*ldc + jc + jr
						if direct && mi == mr {
							ar := a[(ic+ir)*lda+pc:]
							if nj == nr {
								mk.runU(kc, ar, lda, bs, c[ci:], ldc, add)
								continue
							}
							mk.runU(kc, ar, lda, bs, tile, nr, false)
						} else if mi == mr && nj == nr {
							mk.run(kc, as, bs, c[ci:], ldc, add)
							continue
						} else {
							mk.run(kc, as, bs, tile, nr, false)
						}
						for ii := 0; ii < mi; ii++ {
							row := c[ci+ii*ldc : ci+ii*ldc+nj]
							t := tile[ii*nr : ii*nr+nj]
							if !add {
								copy(row, t)
								continue
							}
							for jj := range row {
								row[jj] += t[jj]
							}
						}
					}
				}
			}
		}
	}
}

// gemmDot computes c = a·op(b) for a narrow product (n below one column strip of the tiled
// kernel, which would spend most of its lanes on padding columns): every element of c is a
// dot product along k, vectorised along k by mk.dot in tiles of 4 (or 1) rows × up to 5
// columns, with a's rows read in place and op(b)ᵀ's rows from b itself (tb) or from a
// transposed copy (k·n elements). The k elements past the last multiple of mk.lanes are added
// by a scalar loop. Rows are split across goroutines above gemmParallel multiply-adds.
func gemmDot[T floatT](ws *Workspace, mk micro[T], tb bool, m, n, k int, a []T, lda int, b []T, ldb int, c []T, ldc int) {
	bt, ldbt := b, ldb
	if !tb {
		bt, ldbt = buffer[T](ws, n*k), k
		defer release(ws, bt)
		for j := 0; j < n; j++ { // contiguous writes; the reads stay within b's few cache lines per p
			row := bt[j*k : j*k+k]
			for p := range row {
				row[p] = b[p*ldb+j]
			}
		}
	}
	kv := k - k%mk.lanes
	rows := func(i0, i1 int) {
		for i := i0; i < i1; {
			r := 4
			if i1-i < 4 {
				r = 1
			}
			for j := 0; j < n; j += 5 {
				w := min(5, n-j)
				mk.dot(r, w, kv, a[i*lda:], lda, bt[j*ldbt:], ldbt, c[i*ldc+j:], ldc, false)
				for p := kv; p < k; p++ {
					for ii := i; ii < i+r; ii++ {
						x := a[ii*lda+p]
						row := c[ii*ldc+j : ii*ldc+j+w]
						for jj := range row {
							row[jj] += x * bt[(j+jj)*ldbt+p]
						}
					}
				}
			}
			i += r
		}
	}
	workers := min(runtime.GOMAXPROCS(0), m/4)
	if m*n*k < gemmParallel || workers <= 1 {
		rows(0, m)
		return
	}
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		i0, i1 := m/4*w/workers*4, m/4*(w+1)/workers*4
		if w == workers-1 {
			i1 = m
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			rows(i0, i1)
		}()
	}
	wg.Wait()
}

func roundUp(x, r int) int { return (x + r - 1) / r * r }

// packStrips copies the block of rows [r0, r0+nrows) × columns [pc, pc+kc) of a matrix x
// into strips of w rows, each stored p-major (dst[s*kc + p*w + r] for the strip starting at
// row s); the last strip is padded with zeros, whose products only reach the tile's discarded
// entries. Element (r, p) is x[r*ld+p], or x[p*ld+r] when tr. op(a) is packed as rows of
// a's block (tr = ta), op(b) as rows of op(b)ᵀ (tr = !tb).
func packStrips[T floatT](w int, tr bool, x []T, ld, r0, nrows, pc, kc int, dst []T) {
	for s := 0; s < nrows; s += w {
		d := dst[s*kc : s*kc+kc*w]
		nv := min(w, nrows-s)
		if nv < w {
			clear(d)
		}
		if tr { // element (r, p) at x[p*ld+r]: each p is a contiguous run of the strip's rows
			for p := 0; p < kc; p++ {
				o := (pc+p)*ld + r0 + s
				copy(d[p*w:p*w+nv], x[o:o+nv])
			}
			continue
		}
		// Each row of the strip is contiguous in x: four rows at a time, so that each p
		// writes four neighbouring elements (2× faster than one row at a time).
		r := 0
		for ; r+4 <= nv; r += 4 {
			o := (r0+s+r)*ld + pc
			a0, a1, a2, a3 := x[o:o+kc], x[o+ld:o+ld+kc], x[o+2*ld:o+2*ld+kc], x[o+3*ld:o+3*ld+kc]
			for p := range a0 {
				dp := d[p*w+r : p*w+r+4 : p*w+r+4]
				dp[0], dp[1], dp[2], dp[3] = a0[p], a1[p], a2[p], a3[p]
			}
		}
		for ; r < nv; r++ {
			row := x[(r0+s+r)*ld+pc : (r0+s+r)*ld+pc+kc]
			for p, v := range row {
				d[p*w+r] = v
			}
		}
	}
}

// microGo is the portable micro-kernel: the 4×4 tile Σ_p as[p,:]ᵀ bs[p,:] of two packed
// strips, in registers, stored into (or added to) c.
func microGo[T floatT](kc int, as, bs, c []T, ldc int, add bool) {
	var c00, c01, c02, c03, c10, c11, c12, c13, c20, c21, c22, c23, c30, c31, c32, c33 T
	as, bs = as[:kc*4], bs[:kc*4]
	for p := 0; p < kc; p++ {
		a := as[p*4 : p*4+4 : p*4+4]
		b := bs[p*4 : p*4+4 : p*4+4]
		a0, a1, a2, a3 := a[0], a[1], a[2], a[3]
		b0, b1, b2, b3 := b[0], b[1], b[2], b[3]
		c00 += a0 * b0
		c01 += a0 * b1
		c02 += a0 * b2
		c03 += a0 * b3
		c10 += a1 * b0
		c11 += a1 * b1
		c12 += a1 * b2
		c13 += a1 * b3
		c20 += a2 * b0
		c21 += a2 * b1
		c22 += a2 * b2
		c23 += a2 * b3
		c30 += a3 * b0
		c31 += a3 * b1
		c32 += a3 * b2
		c33 += a3 * b3
	}
	for i, r := range [4][4]T{{c00, c01, c02, c03}, {c10, c11, c12, c13}, {c20, c21, c22, c23}, {c30, c31, c32, c33}} {
		row := c[i*ldc : i*ldc+4]
		if add {
			for j := range row {
				row[j] += r[j]
			}
		} else {
			copy(row, r[:])
		}
	}
}

// microPortable is the portable micro-kernel of gemmGo.
func microPortable[T floatT]() micro[T] { return micro[T]{mr: 4, nr: 4, run: microGo[T]} }

// HasGEMM reports whether GEMM runs here (the CPU has AVX-512F or AVX2+FMA and the build is
// not -tags purego).
func HasGEMM() bool { return gemmMicro[float64]().nr != 4 }

// GEMM computes c = op(a)·op(b) with bulkad's assembly GEMM (packing buffers from ws, which
// may be nil) for row-major strided operands (see gemmGo; op(a) is m×k, op(b) is k×n, c is
// m×n with leading dimension ldc) and reports true, or does nothing and reports false when
// the CPU lacks AVX2+FMA or the build has
// -tags purego (the portable micro-kernel is slower than gonum's GEMM). The operands must
// hold their matrices (callers check the sizes).
func GEMM[T ~float32 | ~float64](ws *Workspace, ta, tb bool, m, n, k int, a []T, lda int, b []T, ldb int, c []T, ldc int) bool {
	mk := gemmMicro[T]()
	if mk.nr == 4 {
		return false
	}
	gemmWith(ws, mk, ta, tb, m, n, k, a, lda, b, ldb, c, ldc)
	return true
}
