package kernel

import "unsafe"

// Products with few rows (a batch-2 layer's transposed input gradient, cᵀ of a narrow
// product, a small batch's forward rows, a recurrent layer's step at batch 32, an MLP's
// batch of 128) use each element of op(b) for a few row strips only, so packing op(b) — a
// read and a write of all of it before the micro-kernel reads it again — costs as much as
// the multiplication. gemmSmallM packs only op(a) (at most smallMStrips·mr × kc per panel) and
// reads the full column strips of op(b) in place (mk.runB, rows ldb apart: a strip of a
// panel, kc × nr, stays in the caches for the strips of op(a) after the first); a partial
// last strip is packed with its zero padding as usual. Panels of bl.kc and the
// micro-kernel's order of products are those of gemmTiled, so the results are the same to
// the bit.
//
// Up to two row strips always, up to smallMStrips when op(b) is wider than two column strips
// (narrower products read op(a) in place on the tiled path, which is faster there:
// [100,64]·k2000 float32 93 against 78 GFLOP/s). Measured against the tiled kernel (session
// 13, one thread, hot, alternating builds; GFLOP/s float64 / float32): [32,512]·k128 38 → 53
// / 81 → 107, [64,512]·k128 44 → 50 / 89 → 104, [128,512]·k784 (the MLP's x·W) 38–40 → 44 /
// 93 → 101–103, [128,784]·k512 40–42 → 40–51 / 88–92 → 101–103.

// smallMStrips is the most row strips of op(a) gemmSmallM computes.
const smallMStrips = 16

// smallM reports whether gemmSmallM computes the m×n product: op(b) not transposed (its rows
// are contiguous), a micro-kernel that reads b in place, at least one full column strip, and
// at most two row strips, or at most smallMStrips when op(b) is wider than two column strips.
// Three or four row strips against at most two column strips go to the tiled kernel, which
// reads op(a) in place there (a narrow product) and packs op(b) once for all of them, where
// gemmSmallM packs op(a) for one or two uses: a pointwise convolution's filter gradient,
// [32, 32] by k = 8192, ran at 70 GFLOP/s float32 and 86 tiled; [24, 32] by 4096 72 and 82,
// [32, 48] by 8192 57 and 62, [32, 16] by 8192 float64 34 and 39 (kernel benchmarks, one
// thread, session 19; at two row strips and at four column strips the two are even, at one
// row strip gemmSmallM wins: [8, 32] by 8192 73 against 53).
func smallM[T floatT](mk micro[T], tb bool, m, n int) bool {
	return mk.runB != nil && !tb && n >= mk.nr && (m <= 2*mk.mr || m <= smallMStrips*mk.mr && n > 2*mk.nr)
}

// aliased4K reports whether rows of b lie a multiple of 4 KiB apart and the product is short
// (k ≤ aliasMaxK): then the micro-kernel's loads of b's rows in place and its stores of c's
// tiles share their low twelve address bits often enough for the CPU's 4K-aliasing stalls to
// cost more than packing b (float64 [128, 512]·k32 with ldb 512: 39 GFLOP/s in place, 49 tiled;
// ldb 500: 52 and 49; float32 with ldb 1024: 80 and 99; at k = 64 and 128 in place is even or
// ahead; kernel benchmarks, one thread, session 19).
func aliased4K[T floatT](ldb, k int) bool {
	return k <= aliasMaxK && ldb*int(unsafe.Sizeof(T(0)))%4096 == 0
}

// aliasMaxK is the longest product aliased4K sends to the tiled kernel.
const aliasMaxK = 32

// gemmTiledOrSmall is gemmSmallM where smallM applies (unless b's rows alias for a short
// product: aliased4K) and gemmTiled otherwise.
func gemmTiledOrSmall[T floatT](ws *Workspace, mk micro[T], bl blocking, procs int, acc, ta, tb bool, m, n, k int, a []T, lda int, b []T, ldb int, c []T, ldc int) {
	if smallM(mk, tb, m, n) && !aliased4K[T](ldb, k) {
		gemmSmallM(ws, mk, bl, procs, acc, ta, m, n, k, a, lda, b, ldb, c, ldc)
		return
	}
	gemmTiled(ws, mk, bl, procs, acc, ta, tb, m, n, k, a, lda, b, ldb, c, ldc)
}

// gemmSmallM computes c = op(a)·b (b not transposed, m ≤ smallMStrips·mr) with the column strips split
// across up to procs workers.
func gemmSmallM[T floatT](ws *Workspace, mk micro[T], bl blocking, procs int, acc, ta bool, m, n, k int, a []T, lda int, b []T, ldb int, c []T, ldc int) {
	g := take[T](ws)
	defer give(ws, g)
	g.mk, g.bl, g.ta, g.tb, g.m, g.n, g.k, g.acc = mk, bl, ta, false, m, n, k, acc
	g.a, g.lda, g.b, g.ldb, g.c, g.ldc = a, lda, b, ldb, c, ldc
	if !gemmSplits(m, n, k) {
		procs = 1
	}
	g.mode, g.workers = modeSmallM, max(1, min(procs, n/mk.nr))
	// per worker: op(a)'s panel (its strips), a packed partial strip of b and a tile
	g.growPrivate(bl.kc*smallMStrips*mk.mr + bl.kc*mk.nr + mk.mr*mk.nr)
	g.start()
}

// workSmallM is worker w of gemmSmallM: its column strips of c, panel by panel.
func (g *gemmCall[T]) workSmallM(w int) {
	mk, m, k, kc := g.mk, g.m, g.k, g.bl.kc
	mr, nr := mk.mr, mk.nr
	j0, j1 := g.part(w, g.n, nr)
	priv := g.priv[w]
	na := kc * smallMStrips * mr
	ap := priv[:na]
	bp := priv[na : na+kc*nr]
	tile := priv[na+kc*nr : na+kc*nr+mr*nr]
	for pc := 0; pc < k; pc += kc {
		kcur := min(kc, k-pc)
		packStrips(mr, g.ta, g.a, g.lda, 0, m, pc, kcur, ap)
		add := pc > 0 || g.acc
		for jr := j0; jr < j1; jr += nr {
			nj := min(nr, j1-jr)
			if nj < nr {
				packStrips(nr, true, g.b, g.ldb, jr, nj, pc, kcur, bp)
			}
			for ir := 0; ir < m; ir += mr {
				mi := min(mr, m-ir)
				as := ap[ir*kcur : ir*kcur+kcur*mr]
				ci := ir*g.ldc + jr
				switch {
				case nj < nr:
					mk.run(kcur, as, bp, tile, nr, false)
				case mi < mr:
					mk.runB(kcur, as, g.b[pc*g.ldb+jr:], g.ldb, tile, nr, false)
				default:
					mk.runB(kcur, as, g.b[pc*g.ldb+jr:], g.ldb, g.c[ci:], g.ldc, add)
					continue
				}
				tileInto(g.c[ci:], g.ldc, tile, nr, mi, nj, add)
			}
		}
	}
}
