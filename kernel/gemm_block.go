package kernel

import (
	"sync"
	"unsafe"
)

// The blocked GEMM driver (BLIS's five loops around the micro-kernel). For a column block of
// nc columns of c and a panel of kc of the k products, the panel of op(b) (kc × nc) is packed
// into strips of nr columns and the block of op(a) (mc × kc) into strips of mr rows; the
// micro-kernel then computes every mr×nr tile of the block from one strip of each, adding the
// panel's products to c (jc → pc → ic → jr → ir).
//
// Several workers (goroutines) split the rows of c (each packing its own blocks of op(a)) or,
// when the rows split worse, the columns (each packing its own panels of op(b)); the operand
// they all read — op(b) or op(a) — is packed once per call, by all of them together (each
// packs a share of its strips), into a buffer they share, and a barrier separates the packing
// from its use. The shared operand is packed a group of kc panels at a time (as many as fit in
// gemmShared bytes: all of k for the bench's products, one barrier per call), into one of two
// buffers in turn, so that a worker may pack the next group while another still computes with
// the last one.
//
// The sum along k is taken panel by panel in increasing order, each panel's sum from the
// micro-kernel (p increasing) added to c: the order depends on the panels (kc) and not on the
// number of workers, the split or mc, nc, so a product gives the same bits on any number of
// threads.

// Cache sizes of the machine the blocking was chosen on (/sys/devices/system/cpu/cpu0/cache:
// L1d 32 KiB and L2 1 MiB per core, L3 32 MiB shared; AMD EPYC, Zen 4, 2 cores).
const (
	cacheL1 = 32 << 10
	cacheL2 = 1 << 20
	cacheL3 = 32 << 20
	// gemmShared is the size in bytes up to which the shared operand of a split product is
	// packed in one step (a group of kc panels; two such buffers alternate).
	gemmShared = 2 << 20
)

// blocking is the cache blocking of the GEMM: kc products per panel (k is cut into panels of
// kc and a last, shorter one), mc rows of op(a) per block, nc columns of op(b) per block.
type blocking struct{ mc, kc, nc int }

// blockingFor is the blocking of an mr×nr micro-kernel on elements of size bytes:
//   - kc: one strip of op(b) (kc × nr, reused by every strip of op(a) of the block) fills the
//     L1d, at most 256: 256 for the AVX-512 kernels (8×32 float32, 8×16 float64: 128 bytes
//     of b per p), for AVX2 (6×16, 6×8; 64 bytes, capped) and the portable 4×4;
//   - mc: the block of op(a) (mc × kc) takes half of the L2 (512 rows float32, 256 float64);
//   - nc: the panel of op(b) (kc × nc) takes an eighth of the L3 (at most 4096 columns).
//
// Measured on the bench's products (128×512×784, 784×512×128 with op(a) transposed,
// 128×784×512; one thread, GFLOP per CPU-second because the shared machine gave the process
// about 40% of a core): kc 128 to 384 within the noise of each other (f32 66–78, f64 31–38),
// kc 64 below them (f32 61–78, f64 29–33). The kc of 256 is also the one of the previous
// kernel, so that the sum along k, and with it the result, is bitwise the same.
func blockingFor(mr, nr, size int) blocking {
	kc := min(max(cacheL1/(nr*size)/16*16, 16), 256)
	mc := max(cacheL2/2/(kc*size)/mr*mr, mr)
	nc := max(min(cacheL3/8/(kc*size), 4096)/nr*nr, nr)
	return blocking{mc: mc, kc: kc, nc: nc}
}

// Workspace keeps the GEMM's packing buffers and its per-call state for reuse by later calls
// (a GEMM of the MLP packs about 1 MB; allocating it per call was half of the bytes a training
// step allocated), so that a GEMM allocates nothing once the workspace has served a call of
// its size. It is safe for concurrent use: each call takes a state of its own, and the
// workspace keeps as many as were ever in use at once. The zero value is ready; a nil
// *Workspace allocates per call.
type Workspace struct {
	mu  sync.Mutex
	f64 []*gemmCall[float64]
	f32 []*gemmCall[float32]
}

// take returns a call state from ws (or a new one when ws is nil or has none free).
func take[T floatT](ws *Workspace) *gemmCall[T] {
	if ws != nil {
		ws.mu.Lock()
		var g any
		if unsafe.Sizeof(T(0)) == 8 && len(ws.f64) > 0 {
			g, ws.f64 = ws.f64[len(ws.f64)-1], ws.f64[:len(ws.f64)-1]
		} else if unsafe.Sizeof(T(0)) == 4 && len(ws.f32) > 0 {
			g, ws.f32 = ws.f32[len(ws.f32)-1], ws.f32[:len(ws.f32)-1]
		}
		ws.mu.Unlock()
		if g, ok := g.(*gemmCall[T]); ok {
			return g
		}
	}
	g := &gemmCall[T]{}
	g.cond.L = &g.mu
	return g
}

// give returns g to ws, dropping its references to the operands.
func give[T floatT](ws *Workspace, g *gemmCall[T]) {
	g.a, g.b, g.c = nil, nil, nil
	if ws == nil {
		return
	}
	ws.mu.Lock()
	defer ws.mu.Unlock()
	switch g := any(g).(type) {
	case *gemmCall[float64]:
		ws.f64 = append(ws.f64, g)
	case *gemmCall[float32]:
		ws.f32 = append(ws.f32, g)
	}
}

// grow returns s with length n, reallocated only when its capacity is below n.
func grow[T floatT](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}

// gemmMode is what the workers of a gemmCall run.
type gemmMode int

const (
	modeRows   gemmMode = iota // tiled, rows of c split, packed op(b) shared
	modeCols                   // tiled, columns of c split, packed op(a) shared
	modeDot                    // narrow product (gemmDot), rows of c split
	modeSmallM                 // few rows (gemmSmallM), columns of c split, b read in place
)

// gemmCall is the state of one GEMM call: its operands, blocking and split, and the buffers
// (kept by a Workspace between calls).
type gemmCall[T floatT] struct {
	mk            micro[T]
	bl            blocking
	ta, tb        bool
	m, n, k       int
	a, b, c       []T
	lda, ldb, ldc int
	mode          gemmMode
	workers       int
	nt            bool   // full tiles of c stored non-temporally (ntWorth)
	acc           bool   // the first panel's products are added to c too (gemmAcc)
	shared        [2][]T // the shared operand's packing, two groups of panels in turn
	priv          [][]T  // per worker: its own packing and a scratch tile
	// barrier
	mu           sync.Mutex
	cond         sync.Cond
	arrived, gen int
	wg           sync.WaitGroup
	fns          []func() // fns[w] runs worker w ≥ 1 (made once, so that starting it allocates nothing)
}

// wait blocks until all workers have called it (a reusable barrier).
func (g *gemmCall[T]) wait() {
	if g.workers == 1 {
		return
	}
	g.mu.Lock()
	gen := g.gen
	g.arrived++
	if g.arrived == g.workers {
		g.arrived = 0
		g.gen++
		g.cond.Broadcast()
	} else {
		for gen == g.gen {
			g.cond.Wait()
		}
	}
	g.mu.Unlock()
}

// start runs work(w) for every worker, worker 0 on the calling goroutine, and returns when
// all are done.
func (g *gemmCall[T]) start() {
	for w := len(g.fns); w < g.workers; w++ {
		g.fns = append(g.fns, func() {
			defer g.wg.Done()
			g.work(w)
		})
	}
	g.arrived, g.gen = 0, 0
	for w := 1; w < g.workers; w++ {
		g.wg.Add(1)
		go g.fns[w]()
	}
	g.work(0)
	g.wg.Wait()
}

// work is worker w's part of the call.
func (g *gemmCall[T]) work(w int) {
	if g.nt {
		defer g.mk.fence() // this worker's non-temporal stores, before it reports done
	}
	switch g.mode {
	case modeRows:
		g.workRows(w)
	case modeCols:
		g.workCols(w)
	case modeDot:
		g.workDot(w)
	case modeSmallM:
		g.workSmallM(w)
	}
}

// part is worker w's range [x0, x1) of extent split in multiples of unit, as even as possible.
func (g *gemmCall[T]) part(w, extent, unit int) (x0, x1 int) {
	strips := (extent + unit - 1) / unit
	return strips * w / g.workers * unit, min(strips*(w+1)/g.workers*unit, extent)
}

// gemmTiled computes c = op(a)·op(b) (see gemmGo) with the tiled micro-kernel mk, the
// blocking bl and up to procs workers.
func gemmTiled[T floatT](ws *Workspace, mk micro[T], bl blocking, procs int, acc, ta, tb bool, m, n, k int, a []T, lda int, b []T, ldb int, c []T, ldc int) {
	g := take[T](ws)
	defer give(ws, g)
	g.mk, g.bl, g.ta, g.tb, g.m, g.n, g.k, g.acc = mk, bl, ta, tb, m, n, k, acc
	g.a, g.lda, g.b, g.ldb, g.c, g.ldc = a, lda, b, ldb, c, ldc
	g.nt = !acc && ntWorth(mk, bl, m, n, k, c, ldc)
	mr, nr := mk.mr, mk.nr
	sm, sn := (m+mr-1)/mr, (n+nr-1)/nr
	if !gemmSplits(m, n, k) {
		procs = 1
	}
	// Split the rows unless the columns give the slowest worker fewer products (tiles
	// counted with their padding), or as many and there are more columns than rows: each
	// worker then keeps all the rows, and each strip of op(b) it loads into the L1 serves
	// all of them (in the MLP's 128×512×784, twice as many as with the rows split).
	wr, wc := max(1, min(procs, sm)), max(1, min(procs, sn))
	g.mode, g.workers = modeRows, wr
	costR, costC := (sm+wr-1)/wr*mr*n, (sn+wc-1)/wc*nr*m
	if procs > 1 && (costC < costR || costC == costR && n > m) {
		g.mode, g.workers = modeCols, wc
	}
	kc := bl.kc
	np := (k + kc - 1) / kc // panels
	size := int(unsafe.Sizeof(T(0)))
	var shared, private int
	if g.mode == modeRows {
		// a group: whole panels of kc × (nc rounded up to strips) of op(b)
		ncp := roundUp(min(n, bl.nc), nr)
		shared = min(max(1, gemmShared/(kc*ncp*size)), np) * kc * ncp
		private = kc*roundUp(min(m, bl.mc), mr) + mr*nr
	} else {
		// a group: whole panels of (m rounded up to strips) × kc of op(a)
		mp := roundUp(m, mr)
		shared = min(max(1, gemmShared/(kc*mp*size)), np) * kc * mp
		private = kc*min(roundUp((n+g.workers-1)/g.workers+nr, nr), roundUp(bl.nc, nr)) + mr*nr
	}
	for i := range min(g.workers, 2) {
		g.shared[i] = grow(g.shared[i], shared)
	}
	g.growPrivate(private)
	g.start()
}

// growPrivate gives each worker a private buffer of at least n elements.
func (g *gemmCall[T]) growPrivate(n int) {
	for len(g.priv) < g.workers {
		g.priv = append(g.priv, nil)
	}
	for w := range g.workers {
		g.priv[w] = grow(g.priv[w], n)
	}
}

// workRows is worker w of a rows split: its rows of c, the panels of op(b) packed by all.
func (g *gemmCall[T]) workRows(w int) {
	mr, nr, k := g.mk.mr, g.mk.nr, g.k
	i0, i1 := g.part(w, g.m, mr)
	kc := g.bl.kc
	mcMax := min(g.bl.mc, roundUp(g.m, mr))
	priv := g.priv[w]
	ap, tile := priv[:kc*mcMax], priv[kc*mcMax:kc*mcMax+mr*nr]
	step := 0
	for jc := 0; jc < g.n; jc += g.bl.nc {
		nc := min(g.bl.nc, g.n-jc)
		ncp := roundUp(nc, nr)
		group := max(1, len(g.shared[0])/(kc*ncp)) * kc
		for pg := 0; pg < k; pg += group {
			pe := min(k, pg+group)
			bp := g.shared[step%min(g.workers, 2)]
			step++
			g.packGroup(w, pg, pe, nr, !g.tb, g.b, g.ldb, jc, nc, ncp, bp)
			g.wait()
			for pc := pg; pc < pe; pc += kc {
				kcur := min(kc, k-pc)
				panel := bp[(pc-pg)*ncp:]
				for ic := i0; ic < i1; ic += g.bl.mc {
					mc := min(g.bl.mc, i1-ic)
					// A narrow product (one or two column strips) reads its full row strips of
					// op(a) straight from the matrix: packing them would cost as much as using
					// them (a transposed a by runT, except with non-temporal stores).
					direct := nc <= 2*nr && (g.mk.runU != nil && !g.ta || g.mk.runT != nil && g.ta && !g.nt)
					if direct {
						if tail := mc % mr; tail > 0 {
							packStrips(mr, g.ta, g.a, g.lda, ic+mc-tail, tail, pc, kcur, ap[(mc-tail)*kcur:])
						}
					} else {
						packStrips(mr, g.ta, g.a, g.lda, ic, mc, pc, kcur, ap)
					}
					g.block(ic, mc, jc, nc, pc, kcur, ap, panel, tile, direct)
				}
			}
		}
	}
}

// workCols is worker w of a columns split: its columns of c, the panels of op(a) packed by all.
func (g *gemmCall[T]) workCols(w int) {
	mr, nr, m, k := g.mk.mr, g.mk.nr, g.m, g.k
	j0, j1 := g.part(w, g.n, nr)
	kc := g.bl.kc
	mp := roundUp(m, mr)
	ncMax := (len(g.priv[w]) - mr*nr) / kc
	priv := g.priv[w]
	bp, tile := priv[:kc*ncMax], priv[kc*ncMax:kc*ncMax+mr*nr]
	group := max(1, len(g.shared[0])/(kc*mp)) * kc
	step := 0
	for pg := 0; pg < k; pg += group {
		pe := min(k, pg+group)
		ap := g.shared[step%min(g.workers, 2)]
		step++
		g.packGroup(w, pg, pe, mr, g.ta, g.a, g.lda, 0, m, mp, ap)
		g.wait()
		for jc := j0; jc < j1; jc += ncMax {
			nc := min(ncMax, j1-jc)
			for pc := pg; pc < pe; pc += kc {
				kcur := min(kc, k-pc)
				packStrips(nr, !g.tb, g.b, g.ldb, jc, nc, pc, kcur, bp)
				panel := ap[(pc-pg)*mp:]
				for ic := 0; ic < m; ic += g.bl.mc {
					g.block(ic, min(g.bl.mc, m-ic), jc, nc, pc, kcur, panel[ic*kcur:], bp, tile, false)
				}
			}
		}
	}
}

// packGroup packs worker w's share of the strips of the shared panels of the k-group
// [pg, pe): the r-wide strips (packStrips with tr and ld) of the rows [lo, lo+ext) of x, each
// panel of the group wide rows long (ext rounded up to r) at wide·kc from the one before it
// in dst. The strips of all the group's panels are split evenly over the workers.
func (g *gemmCall[T]) packGroup(w, pg, pe, r int, tr bool, x []T, ld, lo, ext, wide int, dst []T) {
	kc, k := g.bl.kc, g.k
	ns, np := wide/r, (pe-pg+kc-1)/kc
	x0, x1 := np*ns*w/g.workers, np*ns*(w+1)/g.workers
	for it := x0; it < x1; {
		// the worker's strips of one panel in one call (packStrips reads a transposed x
		// row after row across them)
		t, s := it/ns, it%ns
		e := min(x1, (t+1)*ns) // past the worker's last strip of panel t
		pc := pg + t*kc
		kcur := min(kc, k-pc)
		rows := min((e-it)*r, ext-s*r)
		packStrips(r, tr, x, ld, lo+s*r, rows, pc, kcur, dst[t*kc*wide+s*r*kcur:])
		it = e
	}
}

// block adds (or, for the first panel, stores) the products of panel pc (kc of them) of the
// rows [ic, ic+mc) and columns [jc, jc+nc) of c, from their packed strips: ap (op(a), or only
// its last partial strip when direct: the full strips are read from a) and bp (op(b)). Full
// tiles go straight into c; the tiles at the right and bottom edges go through tile.
func (g *gemmCall[T]) block(ic, mc, jc, nc, pc, kc int, ap, bp, tile []T, direct bool) {
	mk, c, ldc := g.mk, g.c, g.ldc
	mr, nr := mk.mr, mk.nr
	add := pc > 0 || g.acc
	for jr := 0; jr < nc; jr += nr {
		bs := bp[jr*kc : jr*kc+kc*nr]
		nj := min(nr, nc-jr)
		for ir := 0; ir < mc; ir += mr {
			as := ap[ir*kc : ir*kc+kc*mr]
			mi := min(mr, mc-ir)
			ci := (ic+ir)*ldc + jc + jr
			if direct && mi == mr && g.ta {
				ar := g.a[pc*g.lda+ic+ir:]
				if nj == nr {
					mk.runT(kc, ar, g.lda, bs, c[ci:], ldc, add)
					continue
				}
				mk.runT(kc, ar, g.lda, bs, tile, nr, false)
			} else if direct && mi == mr {
				ar := g.a[(ic+ir)*g.lda+pc:]
				if nj == nr {
					if g.nt {
						mk.runUNT(kc, ar, g.lda, bs, c[ci:], ldc, add)
					} else {
						mk.runU(kc, ar, g.lda, bs, c[ci:], ldc, add)
					}
					continue
				}
				mk.runU(kc, ar, g.lda, bs, tile, nr, false)
			} else if mi == mr && nj == nr {
				if g.nt {
					mk.runNT(kc, as, bs, c[ci:], ldc, add)
				} else {
					mk.run(kc, as, bs, c[ci:], ldc, add)
				}
				continue
			} else {
				mk.run(kc, as, bs, tile, nr, false)
			}
			tileInto(c[ci:], ldc, tile, nr, mi, nj, add)
		}
	}
}

// tileInto stores (or, with add, adds) the mi×nj corner of tile (row stride nr) into c (row
// stride ldc): an edge tile of the micro-kernel, computed into scratch.
func tileInto[T floatT](c []T, ldc int, tile []T, nr, mi, nj int, add bool) {
	for ii := 0; ii < mi; ii++ {
		row := c[ii*ldc : ii*ldc+nj]
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

// ntMin and ntMaxK: a product of at most ntMaxK terms per element into a c of at least ntMin
// bytes stores c non-temporally. Such a product is bound by its stores, and in a plan its c
// is cold: each ordinary store first reads its line from memory. (A product of more terms is
// bound by its multiply-adds; its c, stored past the caches, would be read back from memory
// by the next step.)
const (
	ntMin  = 1 << 18
	ntMaxK = 32
)

// ntWorth reports whether gemmTiled stores c's full tiles with non-temporal stores: kernels
// that have them, k ≤ ntMaxK (one panel: each tile stored once, never read back and added
// to), a c of at least ntMin bytes, and rows that start on 64-byte boundaries (c and ldc; the
// strips are whole multiples of 64 bytes wide). Float32 into a cold c, one thread: resnet18's
// layer-4 filter gradient 512×4608×8 1.68 → 0.49 ms, regnet's 400×400×8 111 → 49 µs.
func ntWorth[T floatT](mk micro[T], bl blocking, m, n, k int, c []T, ldc int) bool {
	size := int(unsafe.Sizeof(T(0)))
	return mk.runNT != nil && mk.runUNT != nil && k <= min(ntMaxK, bl.kc) && m*n*size >= ntMin &&
		ldc*size%64 == 0 && len(c) > 0 && uintptr(unsafe.Pointer(&c[0]))%64 == 0
}
