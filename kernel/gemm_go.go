package kernel

import (
	"runtime"
	"unsafe"

	"github.com/bulkad/bulkad/core"
)

//go:generate sh -c "cd internal/asmgen && go run . -pkg kernel -out ../../gemm_amd64.s -stubs ../../gemm_amd64_stub.go"

// gemmParallel is the work from which a GEMM splits c across goroutines (at most
// GOMAXPROCS): its multiply-adds plus gemmStoreWork for each element of c (a product of few
// terms per element costs its stores: [32,6272] from k = 10 ran at 5 GFLOP/s in the zoo
// convnet's plan). Lowered from 2^21 multiply-adds in session 13, when the zoo convnet's
// step scaled 1.2× from one to two threads on the device machine's 16-core host and its
// small products were among the steps that started no goroutine; with this and the other
// splits of that session it scaled 1.5× there (alternating builds, medians). Raised to 2^21
// in session 24: the MLP's 128×512×10 (1.7 M by this count; 32 µs float64, 16 µs float32
// serial) ran 0.86–0.91× as fast split in two on this 2-vCPU VM (TestZZGemmPar: serial and
// split alternating, minima), and on that host a goroutine starts about 22 µs after its go
// statement (session 21), more than such a product's half; the convnet's [32,6272] from
// k = 10 (5.2 M) still splits.
const (
	gemmParallel  = 1 << 21
	gemmStoreWork = 16
)

// gemmSplits reports whether an m×n×k product is large enough to split across goroutines.
func gemmSplits(m, n, k int) bool { return m*n*(k+gemmStoreWork) >= gemmParallel }

// micro is a GEMM micro-kernel: run computes the mr×nr tile Σ_p as[p,:]ᵀ bs[p,:] of two packed
// strips into c (row i at c[i*ldc:]), storing it, or adding it to c when add is set.
type micro[T floatT] struct {
	mr, nr int
	run    func(kc int, as, bs, c []T, ldc int, add bool)
	// runU, when set, is run with the mr rows of a read in place (row i at a[i*lda:]).
	runU func(kc int, a []T, lda int, bs, c []T, ldc int, add bool)
	// runT, when set, is run with the mr rows of op(a) = aᵀ read in place (step p's mr values
	// at a[p*lda:], contiguous).
	runT func(kc int, a []T, lda int, bs, c []T, ldc int, add bool)
	// runB, when set, is run with the nr columns of b read in place (row p at b[p*ldb:]).
	runB func(kc int, as, b []T, ldb int, c []T, ldc int, add bool)
	// runNT and runUNT, when set, are run and runU with non-temporal stores into c (whose
	// rows must start on 64-byte boundaries; they run the ordinary kernel otherwise), and
	// fence orders those stores before the ones after it.
	runNT  func(kc int, as, bs, c []T, ldc int, add bool)
	runUNT func(kc int, a []T, lda int, bs, c []T, ldc int, add bool)
	fence  func()
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

// gemmWith is gemmGo with the workspace ws (nil: allocate) and the micro-kernel mk.
func gemmWith[T floatT](ws *Workspace, mk micro[T], ta, tb bool, m, n, k int, a []T, lda int, b []T, ldb int, c []T, ldc int) {
	gemmWithBlocking(ws, mk, blockingFor(mk.mr, mk.nr, int(unsafe.Sizeof(T(0)))), runtime.GOMAXPROCS(0), ta, tb, m, n, k, a, lda, b, ldb, c, ldc)
}

// gemmWithBlocking is gemmWith with the blocking bl (of the tiled kernel) and up to procs
// goroutines.
func gemmWithBlocking[T floatT](ws *Workspace, mk micro[T], bl blocking, procs int, ta, tb bool, m, n, k int, a []T, lda int, b []T, ldb int, c []T, ldc int) {
	switch gemmPathOf(mk, ta, tb, m, n, k) {
	case pathEmpty:
	case pathZeroK:
		for i := 0; i < m; i++ {
			clear(c[i*ldc : i*ldc+n])
		}
	case pathSmallK:
		gemmSmallK(ta, m, n, k, a, lda, b, ldb, c, ldc)
	case pathDot:
		gemmDot(ws, mk, procs, tb, m, n, k, a, lda, b, ldb, c, ldc)
	case pathSwappedDot:
		gemmSwapped(ws, mk, bl, procs, true, ta, tb, m, n, k, a, lda, b, ldb, c, ldc)
	case pathSwapped:
		gemmSwapped(ws, mk, bl, procs, false, ta, tb, m, n, k, a, lda, b, ldb, c, ldc)
	default:
		gemmTiledOrSmall(ws, mk, bl, procs, false, ta, tb, m, n, k, a, lda, b, ldb, c, ldc)
	}
}

// gemmPath is the way gemmWithBlocking computes a product (gemmPathOf).
type gemmPath int

const (
	pathEmpty      gemmPath = iota // c has no elements
	pathZeroK                      // k = 0: c is cleared
	pathSmallK                     // gemmSmallK
	pathDot                        // gemmDot
	pathSwappedDot                 // gemmSwapped by the dot-product tiles
	pathSwapped                    // gemmSwapped by the tiled kernel
	pathTiled                      // gemmTiledOrSmall: the tiled kernel or gemmSmallM
)

// gemmPathOf is the path of an m×n×k product with the micro-kernel mk.
func gemmPathOf[T floatT](mk micro[T], ta, tb bool, m, n, k int) gemmPath {
	switch {
	case m == 0 || n == 0:
		return pathEmpty
	case k == 0:
		return pathZeroK
	case k <= smallK && !tb && n >= smallKRow || fewRowsStream(m, n, k, tb):
		return pathSmallK
	case mk.dot != nil && !ta && n < mk.nr && k >= 4*mk.lanes:
		return pathDot
	}
	if swap, dot := fewRowsSwaps(mk, tb, m, n, k); swap && dot {
		return pathSwappedDot
	} else if swap || narrowSwaps(mk, m, n, k) {
		return pathSwapped
	}
	return pathTiled
}

// smallK and smallKRow: products of at most smallK terms per element with rows of op(b) of at
// least smallKRow elements run as scaled rows (gemmSmallK) instead of through the tiled kernel.
const (
	smallK    = 4
	smallKRow = 64
	// smallKPiece: gemmSmallK's rows are computed in pieces of this many elements
	smallKPiece = 512
)

// fewRowsStream reports whether the product c = op(a)·b of at most fewRows rows (b not
// transposed, rows of at least fewRowsRow, k beyond smallK) runs as gemmSmallK too: a batch-2
// classifier's input gradient δ·W reads W (1000×1280 float32, 5 MB) once, row after row,
// where gemmSmallM read it in strips of 32 columns, 5 KB apart, and its micro-kernel's
// eight rows held two.
//
// Measured (TestZZColdC's shapes, float32, one thread; hot, then after a 64 MB sweep of the
// caches): 2×1280 by k 1000 196 / 236–289 µs against 214–296 / 666–745 with gemmSmallM,
// 2×512 by 1000 88 / 115–125 against 77–80 / 390–394, 4×512 by 512 88–94 / 95–102 against
// 39–89 / 206–221. Rows shorter than fewRowsRow lose to the call per row of b: 2×64 by 2048
// 53 / 61 against 22–25 / 57–64.
func fewRowsStream(m, n, k int, tb bool) bool {
	return m <= fewRows && !tb && n >= fewRowsRow && k > smallK
}

// fewRows is the most rows fewRowsStream takes, fewRowsRow the shortest row of b.
const (
	fewRows    = 4
	fewRowsRow = 256
)

// gemmSmallK computes c = op(a)·b (b not transposed, k ≤ smallK: a batch-2 classifier's weight
// gradient, xᵀ·δ of two rows; or m ≤ fewRows, its input gradient) a piece of columns at a
// time: in each piece, row i of c is b's row 0 times a_i0, plus b's row p times a_ip for
// p = 1 … k−1, each product rounded and the sums in order of p, along the row with the vector
// loops (scalarArith, axpyUnit), the rows of c interleaved so that b is read once, a row's
// piece after another. The tiled kernel's packing and tiles cost 2.5× the store of c at k = 2
// (1000×1280 float32: 0.59 ms against 0.2); pieces are split across goroutines when large.
func gemmSmallK[T floatT](ta bool, m, n, k int, a []T, lda int, b []T, ldb int, c []T, ldc int) {
	aAt := func(i, p int) T {
		if ta {
			return a[p*lda+i]
		}
		return a[i*lda+p]
	}
	if m <= fewRows {
		// the rows interleaved, in pieces of columns that keep them in the L1
		piece := max(smallKPiece, cacheL1/2/(m*int(unsafe.Sizeof(T(0))))/64*64)
		pieces := func(lo, hi int) {
			for j0 := lo * piece; j0 < min(hi*piece, n); j0 += piece {
				j1 := min(j0+piece, n)
				for i := range m {
					scalarArith(core.OpMul, c[i*ldc+j0:i*ldc+j1], b[j0:j1], aAt(i, 0), false)
				}
				for p := 1; p < k; p++ {
					bp := b[p*ldb+j0 : p*ldb+j1]
					for i := range m {
						axpyUnit(c[i*ldc+j0:i*ldc+j1], bp, aAt(i, p))
					}
				}
			}
		}
		np := (n + piece - 1) / piece
		if work := costOf(m*n, wCheap) * k; workers(np, work) > 1 {
			inParallel(np, work, pieces)
			return
		}
		pieces(0, np)
		return
	}
	rows := func(lo, hi int) {
		for i := lo; i < hi; i++ {
			// in pieces that stay in the L1 between the k passes
			for j0 := 0; j0 < n; j0 += smallKPiece {
				j1 := min(j0+smallKPiece, n)
				row := c[i*ldc+j0 : i*ldc+j1]
				scalarArith(core.OpMul, row, b[j0:j1], aAt(i, 0), false)
				for p := 1; p < k; p++ {
					axpyUnit(row, b[p*ldb+j0:p*ldb+j1], aAt(i, p))
				}
			}
		}
	}
	work := costOf(m*n, wCheap) * k
	if workers(m, work) > 1 {
		inParallel(m, work, rows)
		return
	}
	rows(0, m)
}

// narrowSwaps reports whether a product too narrow for the tiled kernel's column strips
// (n below nr: the micro-kernel would compute nr columns of which n are kept) is better
// computed transposed, cᵀ = op(b)ᵀ·op(a)ᵀ, whose rows strips of mr fit n with less padding.
// (A layer-4 convolution's input gradient at batch 2 is 4608×8: 4× the work untransposed.)
func narrowSwaps[T floatT](mk micro[T], m, n, k int) bool {
	return n < mk.nr && roundUp(n, mk.mr) < mk.nr && m > n && k >= mk.mr
}

// fewRowsSwaps reports whether a product with few rows (m ≤ 2·nr) and b transposed is
// better computed transposed, cᵀ = b·op(a)ᵀ, and whether by the dot-product tiles. The tiled
// kernel would pack op(b) — a transposed read of all of b for at most two row strips, which
// is most of the cost (a batch-2 classifier's x·Wᵀ, W of 1000×1280: 1.8 ms), and gemmSmallM
// reads only an untransposed b in place. Transposed, b's rows are read where they lie: by the
// tiled kernel when m is a whole number of its column strips (cᵀ's columns), else by the dot
// tiles when k is long enough to hide their horizontal sums. Measured (BenchmarkGemmFewRows,
// float32, one thread, n from 1000 to 2304, k from 128 to 1280): the tiled kernel 5–66
// GFLOP/s for m ≤ 32 and 57–80 for m = 48–64; transposed and tiled 77–107 for m = 32 and 64;
// the dot tiles 47–102 (59–102 at k ≥ 256) for every m.
func fewRowsSwaps[T floatT](mk micro[T], tb bool, m, n, k int) (swap, dot bool) {
	if !tb || m > 2*mk.nr || n < mk.nr {
		return false, false
	}
	if m%mk.nr == 0 {
		return k >= fewRowsSwapK[T]() && 2*k > m, false
	}
	if mk.dot != nil && (k >= 8*mk.lanes || m <= 8 && k >= 4*mk.lanes) {
		return true, true
	}
	return false, false
}

// fewRowsSwapK is the shortest k from which fewRowsSwaps computes a product with whole column
// strips of rows transposed, and then only for k above m/2: below, packing op(b) (n·k
// elements) costs the tiled kernel less than untransposing c (m·n) costs the swap. A dense
// layer's input gradient δ·Wᵀ at 10 classes, [32, 6272] by k = 10, took 141 µs transposed and
// 72 untransposed (float32); at [32, 2048] float32 the swap wins from k = 32 (k = 24: 176
// against 152 µs, k = 32 on [32, 1000]: 23 against 33), float64 from k = 48 (k = 32: 161
// against 115, k = 48: 139 against 160); an attention head's scores, [64, 64]·k32 float32,
// 4.8 µs transposed and 3.6 untransposed, [64, 2048]·k40 119 and 132 (kernel benchmarks, one
// thread, session 19).
func fewRowsSwapK[T floatT]() int {
	if unsafe.Sizeof(T(0)) == 4 {
		return 32
	}
	return 40
}

// gemmSwapped computes c = op(a)·op(b) as cᵀ = op(b)ᵀ·op(a)ᵀ (m×n, n narrow, or m narrow
// for dot) into a workspace buffer of n×m elements by the tiled kernel (or, with dot, by the
// dot-product tiles, op(b)ᵀ = b untransposed), then transposes it into c.
func gemmSwapped[T floatT](ws *Workspace, mk micro[T], bl blocking, procs int, dot, ta, tb bool, m, n, k int, a []T, lda int, b []T, ldb int, c []T, ldc int) {
	t := take[T](ws) // only its buffer: cᵀ
	defer give(ws, t)
	t.shared[0] = grow(t.shared[0], n*m)
	ct := t.shared[0]
	if dot {
		gemmDot(ws, mk, procs, !ta, n, m, k, b, ldb, a, lda, ct, m)
	} else {
		gemmTiledOrSmall(ws, mk, bl, procs, false, !tb, !ta, n, m, k, b, ldb, a, lda, ct, m)
	}
	if work := costOf(m*n, wStrided); procs > 1 && workers(m, work) > 1 {
		inParallel(m, work, func(lo, hi int) { untranspose(c, ldc, ct, m, n, lo, hi) })
		return
	}
	untranspose(c, ldc, ct, m, n, 0, m)
}

// untranspose writes rows lo … hi−1 of the m×n c (row stride ldc) from its transpose ct.
func untranspose[T floatT](c []T, ldc int, ct []T, m, n, lo, hi int) {
	if transposeTileVec(c, lo*ldc, ldc, ct, lo, m, hi-lo, n) {
		return // in register blocks (a few-row filter gradient's 32×1152 c: 4× the product)
	}
	for i := lo; i < hi; i++ {
		row := c[i*ldc : i*ldc+n : i*ldc+n]
		for j := range row {
			row[j] = ct[j*m+i]
		}
	}
}

// gemmDot computes c = a·op(b) for a narrow product (n below one column strip of the tiled
// kernel, which would spend most of its lanes on padding columns): every element of c is a
// dot product along k, vectorised along k by mk.dot in tiles of 4 (or 1) rows × up to 5
// columns, with a's rows read in place and op(b)ᵀ's rows from b itself (tb) or from a
// transposed copy (k·n elements). The k elements past the last multiple of mk.lanes are added
// by a scalar loop. Rows are split across up to procs goroutines above gemmParallel
// multiply-adds.
func gemmDot[T floatT](ws *Workspace, mk micro[T], procs int, tb bool, m, n, k int, a []T, lda int, b []T, ldb int, c []T, ldc int) {
	g := take[T](ws)
	defer give(ws, g)
	g.mk, g.tb, g.m, g.n, g.k = mk, tb, m, n, k
	g.a, g.lda, g.b, g.ldb, g.c, g.ldc = a, lda, b, ldb, c, ldc
	if !tb {
		g.shared[0] = grow(g.shared[0], n*k)
		bt := g.shared[0]
		for j := 0; j < n; j++ { // contiguous writes; the reads stay within b's few cache lines per p
			row := bt[j*k : j*k+k]
			for p := range row {
				row[p] = b[p*ldb+j]
			}
		}
	}
	g.mode, g.workers = modeDot, max(1, min(procs, m/4))
	if !gemmSplits(m, n, k) {
		g.workers = 1
	}
	g.start()
}

// workDot is worker w of gemmDot: its rows of c (in multiples of 4; the last worker takes the
// remainder).
func (g *gemmCall[T]) workDot(w int) {
	mk, m, n, k, a, lda, c, ldc := g.mk, g.m, g.n, g.k, g.a, g.lda, g.c, g.ldc
	bt, ldbt := g.b, g.ldb
	if !g.tb {
		bt, ldbt = g.shared[0], k
	}
	i0, i1 := m/4*w/g.workers*4, m/4*(w+1)/g.workers*4
	if w == g.workers-1 {
		i1 = m
	}
	kv := k - k%mk.lanes
	for i := i0; i < i1; {
		r := 4
		if i1-i < 4 {
			r = 1
		}
		for j := 0; j < n; j += 5 {
			nj := min(5, n-j)
			mk.dot(r, nj, kv, a[i*lda:], lda, bt[j*ldbt:], ldbt, c[i*ldc+j:], ldc, false)
			for p := kv; p < k; p++ {
				for ii := i; ii < i+r; ii++ {
					x := a[ii*lda+p]
					row := c[ii*ldc+j : ii*ldc+j+nj]
					for jj := range row {
						row[jj] += x * bt[(j+jj)*ldbt+p]
					}
				}
			}
		}
		i += r
	}
}

func roundUp(x, r int) int { return (x + r - 1) / r * r }

// packStrips copies the block of rows [r0, r0+nrows) × columns [pc, pc+kc) of a matrix x
// into strips of w rows, each stored p-major (dst[s*kc + p*w + r] for the strip starting at
// row s); the last strip is padded with zeros, whose products only reach the tile's discarded
// entries. Element (r, p) is x[r*ld+p], or x[p*ld+r] when tr. op(a) is packed as rows of
// a's block (tr = ta), op(b) as rows of op(b)ᵀ (tr = !tb).
func packStrips[T floatT](w int, tr bool, x []T, ld, r0, nrows, pc, kc int, dst []T) {
	if tr {
		packRuns(w, x, ld, r0, nrows, pc, kc, dst)
		return
	}
	for s := 0; s < nrows; s += w {
		d := dst[s*kc : s*kc+kc*w]
		nv := min(w, nrows-s)
		if nv < w {
			clear(d)
		}
		// Each row of the strip is contiguous in x: a transposition of the strip's nv rows of
		// kc elements, in AVX blocks where there are (transposeTileVec), else four rows at a
		// time, so that each p writes four neighbouring elements (2× faster than one row at
		// a time).
		if transposeTileVec(d, 0, w, x, (r0+s)*ld+pc, ld, kc, nv) {
			continue
		}
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

// packRuns is packStrips with tr: element (r, p) at x[p*ld+r], so each p is a contiguous run
// of the block's rows. The runs are copied p by p across all the strips, reading x row after
// row (strip by strip, each p read one or two cache lines of another row of x).
func packRuns[T floatT](w int, x []T, ld, r0, nrows, pc, kc int, dst []T) {
	full := nrows / w * w
	for p := 0; p < kc; p++ {
		o := (pc+p)*ld + r0
		run := x[o : o+nrows]
		if w == 8 { // a row strip of the AVX-512 kernels: no call per run
			for s := 0; s < full; s += 8 {
				src, dp := run[s:s+8:s+8], dst[s*kc+p*8:s*kc+p*8+8:s*kc+p*8+8]
				dp[0], dp[1], dp[2], dp[3], dp[4], dp[5], dp[6], dp[7] = src[0], src[1], src[2], src[3], src[4], src[5], src[6], src[7]
			}
			continue
		}
		for s := 0; s < full; s += w {
			copy(dst[s*kc+p*w:s*kc+p*w+w], run[s:s+w])
		}
	}
	if nv := nrows - full; nv > 0 { // the last strip, padded with zeros
		d := dst[full*kc : full*kc+kc*w]
		clear(d)
		for p := 0; p < kc; p++ {
			o := (pc+p)*ld + r0 + full
			copy(d[p*w:p*w+nv], x[o:o+nv])
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
	if !HasGEMM() {
		return false
	}
	// A named float type runs as its underlying type (same size, same representation).
	if unsafe.Sizeof(T(0)) == 4 {
		gemmWith(ws, gemmMicro[float32](), ta, tb, m, n, k, as[float32](a), lda, as[float32](b), ldb, as[float32](c), ldc)
	} else {
		gemmWith(ws, gemmMicro[float64](), ta, tb, m, n, k, as[float64](a), lda, as[float64](b), ldb, as[float64](c), ldc)
	}
	return true
}

// as is s viewed as a slice of U, a float type of the size of T.
func as[U, T floatT](s []T) []U {
	return unsafe.Slice((*U)(unsafe.Pointer(unsafe.SliceData(s))), len(s))
}
