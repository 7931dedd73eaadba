package main

import (
	"fmt"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

// transpose emits func(dst *T, ldd int, src *T, lds int): the square block of src (rows lds
// elements apart) transposed into dst (rows ldd apart), 8×8 float32 or 4×4 float64 in YMM
// registers with AVX (a copy: the bits move unchanged).
func transpose(f32 bool) {
	typ, lanes, t := elemType(f32)
	name := "transposeBlock" + t
	TEXT(name, NOSPLIT, fmt.Sprintf("func(dst *%s, ldd int, src *%s, lds int)", typ, typ))
	Pragma("noescape") // keeps no pointer: a caller's tile on its stack stays there
	Doc(fmt.Sprintf("%s writes the %d×%d block of src (rows lds elements apart) transposed into dst (rows ldd apart) with AVX.", name, lanes, lanes))
	dst := Load(Param("dst"), GP64())
	ldd := Load(Param("ldd"), GP64())
	src := Load(Param("src"), GP64())
	lds := Load(Param("lds"), GP64())
	shift := U8(3)
	if f32 {
		shift = U8(2)
	}
	SHLQ(shift, ldd)
	SHLQ(shift, lds)
	r := make([]reg.VecVirtual, lanes)
	p := GP64()
	MOVQ(src, p)
	for i := range r {
		r[i] = YMM()
		VMOVUPS(Mem{Base: p}, r[i])
		if i < lanes-1 {
			ADDQ(lds, p)
		}
	}
	out := transposeRegs(f32, r)
	for i, v := range out {
		VMOVUPS(v, Mem{Base: dst})
		if i < len(out)-1 {
			ADDQ(ldd, dst)
		}
	}
	VZEROUPPER()
	RET()
}

// addRows emits func(dst *T, ldd int, src *T, lds, rows, vecs, tail int): dst[r·ldd + j] =
// dst[r·ldd + j] + src[r·lds + j] for r < rows and j below vecs whole YMM vectors plus tail
// elements (one at a time): a block of rows added in one call (col2im's planes added a row
// of 16 at a time cost a call of the element-wise addition each, 5.6 ns; rows of 14 left 6
// elements a row to a Go loop). The same IEEE additions as Go's scalar loop.
func addRows(f32 bool) { rowsOf(f32, true) }

// copyRows emits func(dst *T, ldd int, src *T, lds, rows, vecs, tail int): dst[r·ldd + j] =
// src[r·lds + j] for r < rows and j below vecs whole YMM vectors plus tail elements (one at a
// time): a block of short rows copied in one call (a convolution's image copied into the
// interior of its zero-padded copy: rows of 16 float32s through memmove, a call each, moved
// 7 GB/s).
func copyRows(f32 bool) { rowsOf(f32, false) }

// rowsOf emits addRows (add) or copyRows.
func rowsOf(f32, add bool) {
	typ, _, t := elemType(f32)
	name, verb := "addRows"+t, "adds"
	if !add {
		name, verb = "copyRows"+t, "copies"
	}
	TEXT(name, NOSPLIT, fmt.Sprintf("func(dst *%s, ldd int, src *%s, lds, rows, vecs, tail int)", typ, typ))
	Doc(fmt.Sprintf("%s %s rows rows (lds elements apart) of vecs YMM vectors and then tail more elements of src into the rows of dst (ldd elements apart) with AVX.", name, verb))
	dst := Load(Param("dst"), GP64())
	ldd := Load(Param("ldd"), GP64())
	src := Load(Param("src"), GP64())
	lds := Load(Param("lds"), GP64())
	rows := Load(Param("rows"), GP64())
	vecs := Load(Param("vecs"), GP64())
	tail := Load(Param("tail"), GP64())
	load, vadd, loadS, addS, size := VMOVUPD, VADDPD, VMOVSD, VADDSD, 8
	shift := U8(3)
	if f32 {
		load, vadd, loadS, addS, size, shift = VMOVUPS, VADDPS, VMOVSS, VADDSS, 4, U8(2)
	}
	SHLQ(shift, ldd)
	SHLQ(shift, lds)
	d, s, c := GP64(), GP64(), GP64()
	Label(name + "_rows")
	CMPQ(rows, U32(0))
	JE(LabelRef(name + "_done"))
	MOVQ(dst, d)
	MOVQ(src, s)
	countLoop(name+"_vecs", c, vecs, []reg.Register{d, s}, 32, func() {
		v := YMM()
		if add {
			load(Mem{Base: d}, v)
			vadd(Mem{Base: s}, v, v) // dst + src
		} else {
			load(Mem{Base: s}, v)
		}
		load(v, Mem{Base: d})
	})
	countLoop(name+"_elems", c, tail, []reg.Register{d, s}, size, func() { // the row's last elements
		e := XMM()
		if add {
			loadS(Mem{Base: d}, e)
			addS(Mem{Base: s}, e, e)
		} else {
			loadS(Mem{Base: s}, e)
		}
		loadS(e, Mem{Base: d})
	})
	ADDQ(ldd, dst)
	ADDQ(lds, src)
	DECQ(rows)
	JMP(LabelRef(name + "_rows"))
	Label(name + "_done")
	VZEROUPPER()
	RET()
}

// mulAddRep emits func(dst, x, y *T, n, reps int): dst[r·n + j] = dst[r·n + j] + x[j]·y[r·n + j]
// for r < reps and j below n rounded down to whole YMM vectors, the product rounded before
// the sum (no fused multiply-add: Go's d += T(x*y)). One row of x against reps rows of y: a
// depthwise input gradient's channels, one value of δ per channel against the taps of a
// window row of the filter, added into the contiguous taps of a channels-last image row.
func mulAddRep(f32 bool) {
	typ, lanes, t := elemType(f32)
	name := "mulAddRep" + t
	TEXT(name, NOSPLIT, fmt.Sprintf("func(dst, x, y *%s, n, reps int)", typ))
	Doc(fmt.Sprintf("%s adds x[j]*y[r*n+j] (the product rounded first) into dst[r*n+j] with AVX for r below reps and j below n rounded down to a multiple of %d.", name, lanes))
	dst := Load(Param("dst"), GP64())
	x := Load(Param("x"), GP64())
	y := Load(Param("y"), GP64())
	n := Load(Param("n"), GP64())
	reps := Load(Param("reps"), GP64())
	load, mul, add := VMOVUPD, VMULPD, VADDPD
	shift := U8(3)
	if f32 {
		load, mul, add, shift = VMOVUPS, VMULPS, VADDPS, U8(2)
	}
	vecs := GP64()
	MOVQ(n, vecs)
	SHRQ(U8(map[int]uint8{4: 2, 8: 3}[lanes]), vecs) // whole vectors a row
	SHLQ(shift, n)                                   // bytes a row
	d, s, xp, c := GP64(), GP64(), GP64(), GP64()
	Label(name + "_rows")
	CMPQ(reps, U32(0))
	JE(LabelRef(name + "_done"))
	MOVQ(dst, d)
	MOVQ(y, s)
	MOVQ(x, xp)
	countLoop(name+"_vecs", c, vecs, []reg.Register{d, s, xp}, 32, func() {
		p, a := YMM(), YMM()
		load(Mem{Base: xp}, p)
		mul(Mem{Base: s}, p, p) // x·y
		load(Mem{Base: d}, a)
		add(p, a, a) // dst + x·y
		load(a, Mem{Base: d})
	})
	ADDQ(n, dst)
	ADDQ(n, y)
	DECQ(reps)
	JMP(LabelRef(name + "_rows"))
	Label(name + "_done")
	VZEROUPPER()
	RET()
}

// axpyTaps emits func(dst *T, rs int, x, w *T, n int): for the nine taps of a 3×3 window,
// window rows kh = 0, 1, 2 and in each the taps kw = 2, 1, 0,
// dst[kh·rs + kw + j] = dst[kh·rs + kw + j] + w[3·kh + kw]·x[j] for j below n (whole YMM
// vectors, then one element at a time), the product rounded before the sum: a channels-first
// depthwise input gradient's output row of δ spread over one channel's image rows. Within a
// window row the taps run from the last, so that an image element receives its terms from
// the output positions in ascending order, as the domain's walk adds them.
func axpyTaps(f32 bool) {
	typ, lanes, t := elemType(f32)
	name := "axpyTaps" + t
	TEXT(name, NOSPLIT, fmt.Sprintf("func(dst *%s, rs int, x, w *%s, n int)", typ, typ))
	Doc(fmt.Sprintf("%s adds w[3*kh+kw]*x[j] (the product rounded first) into dst[kh*rs+kw+j] for the taps kh = 0…2, kw = 2…0, and j below n, with AVX.", name))
	dst := Load(Param("dst"), GP64())
	rs := Load(Param("rs"), GP64())
	x := Load(Param("x"), GP64())
	w := Load(Param("w"), GP64())
	n := Load(Param("n"), GP64())
	load, mul, add, loadS, mulS, addS, bcast, size := VMOVUPD, VMULPD, VADDPD, VMOVSD, VMULSD, VADDSD, VBROADCASTSD, 8
	shift := U8(3)
	if f32 {
		load, mul, add, loadS, mulS, addS, bcast, size, shift = VMOVUPS, VMULPS, VADDPS, VMOVSS, VMULSS, VADDSS, VBROADCASTSS, 4, U8(2)
	}
	SHLQ(shift, rs)
	vecs, tail := GP64(), GP64()
	MOVQ(n, vecs)
	SHRQ(U8(map[int]uint8{4: 2, 8: 3}[lanes]), vecs)
	MOVQ(n, tail)
	ANDQ(U32(lanes-1), tail)
	row := GP64()
	MOVQ(dst, row)
	for kh := 0; kh < 3; kh++ {
		for kw := 2; kw >= 0; kw-- {
			lbl := fmt.Sprintf("%s_%d%d", name, kh, kw)
			s := YMM()
			bcast(Mem{Base: w, Disp: (3*kh + kw) * size}, s)
			d, xp, c := GP64(), GP64(), GP64()
			MOVQ(row, d)
			ADDQ(U32(kw*size), d)
			MOVQ(x, xp)
			countLoop(lbl+"_vecs", c, vecs, []reg.Register{d, xp}, 32, func() {
				p, a := YMM(), YMM()
				load(Mem{Base: xp}, p)
				mul(s, p, p) // w·x
				load(Mem{Base: d}, a)
				add(p, a, a)
				load(a, Mem{Base: d})
			})
			countLoop(lbl+"_elems", c, tail, []reg.Register{d, xp}, size, func() {
				e, f := XMM(), XMM()
				loadS(Mem{Base: xp}, e)
				mulS(s.AsX(), e, e)
				loadS(Mem{Base: d}, f)
				addS(e, f, f)
				loadS(f, Mem{Base: d})
			})
		}
		ADDQ(rs, row)
	}
	VZEROUPPER()
	RET()
}

// countLoop emits a loop that runs body c times, c counted down from n (a register or an
// immediate operand), advancing each of ptrs by step bytes after each pass; it falls
// through to label + "_done" when c reaches 0.
func countLoop(label string, c reg.Register, n Op, ptrs []reg.Register, step int, body func()) {
	MOVQ(n, c)
	Label(label)
	CMPQ(c, U32(0))
	JE(LabelRef(label + "_done"))
	body()
	for _, p := range ptrs {
		ADDQ(U32(step), p)
	}
	DECQ(c)
	JMP(LabelRef(label))
	Label(label + "_done")
}

// reduceTaps9 emits func(o, x, y *T, c, points, xs, ys int): for each of points points (x's
// rows xs elements apart, y's ys apart) and each channel ch < c, o[9·ch + t] = o[9·ch + t] +
// x[ch]·y[9·ch + t] for the nine taps t, the product rounded before the sum: a depthwise
// filter gradient, Σ over the points of δ spread over the taps times the windows, summed
// point after point as the Go loop does (one broadcast a channel; the taps as whole YMM
// vectors and a scalar rest).
func reduceTaps9(f32 bool) {
	typ, lanes, t := elemType(f32)
	name := "reduceTaps9" + t
	TEXT(name, NOSPLIT, fmt.Sprintf("func(o, x, y *%s, c, points, xs, ys int)", typ))
	Doc(fmt.Sprintf("%s adds x[p*xs+ch]*y[p*ys+ch*9+t] (the product rounded first) into o[ch*9+t] for every point p below points, channel ch below c and tap t below 9, in the order of the points, with AVX.", name))
	o := Load(Param("o"), GP64())
	x := Load(Param("x"), GP64())
	y := Load(Param("y"), GP64())
	c := Load(Param("c"), GP64())
	points := Load(Param("points"), GP64())
	xs := Load(Param("xs"), GP64())
	ys := Load(Param("ys"), GP64())
	load, mul, add, loadS, mulS, addS, bcast, size := VMOVUPD, VMULPD, VADDPD, VMOVSD, VMULSD, VADDSD, VBROADCASTSD, 8
	shift := U8(3)
	if f32 {
		load, mul, add, loadS, mulS, addS, bcast, size, shift = VMOVUPS, VMULPS, VADDPS, VMOVSS, VMULSS, VADDSS, VBROADCASTSS, 4, U8(2)
	}
	SHLQ(shift, xs)
	SHLQ(shift, ys)
	vecs := 9 / lanes // whole vectors of taps, then 9 − vecs·lanes scalars
	p, ch, d, xp, yp := GP64(), GP64(), GP64(), GP64(), GP64()
	countLoop(name+"_points", p, points, nil, 0, func() {
		MOVQ(o, d)
		MOVQ(x, xp)
		MOVQ(y, yp)
		countLoop(name+"_chans", ch, c, []reg.Register{xp}, size, func() {
			s := YMM()
			bcast(Mem{Base: xp}, s)
			for v := 0; v < vecs; v++ {
				q, a := YMM(), YMM()
				load(Mem{Base: yp, Disp: 32 * v}, q)
				mul(s, q, q) // x·y
				load(Mem{Base: d, Disp: 32 * v}, a)
				add(q, a, a)
				load(a, Mem{Base: d, Disp: 32 * v})
			}
			for e := vecs * lanes; e < 9; e++ {
				q, a := XMM(), XMM()
				loadS(Mem{Base: yp, Disp: e * size}, q)
				mulS(s.AsX(), q, q)
				loadS(Mem{Base: d, Disp: e * size}, a)
				addS(q, a, a)
				loadS(a, Mem{Base: d, Disp: e * size})
			}
			ADDQ(U32(9*size), d)
			ADDQ(U32(9*size), yp)
		})
		ADDQ(xs, x)
		ADDQ(ys, y)
	})
	VZEROUPPER()
	RET()
}

// transposeRegs transposes the square block in the registers r (8 YMM of float32 or 4 of
// float64, one row each) and returns the registers holding its columns.
func transposeRegs(f32 bool, r []reg.VecVirtual) []reg.VecVirtual {
	var out []reg.VecVirtual
	if f32 {
		tl := make([]reg.VecVirtual, 8)
		for i := 0; i < 8; i += 2 {
			tl[i], tl[i+1] = YMM(), YMM()
			VUNPCKLPS(r[i+1], r[i], tl[i])   // r_i0 r_{i+1}0 r_i1 r_{i+1}1 | (high lane alike)
			VUNPCKHPS(r[i+1], r[i], tl[i+1]) // r_i2 r_{i+1}2 r_i3 r_{i+1}3 | …
		}
		tt := make([]reg.VecVirtual, 8)
		for q := 0; q < 8; q += 4 {
			for h := 0; h < 2; h++ {
				lo, hi := YMM(), YMM()
				VSHUFPS(U8(0x44), tl[q+2+h], tl[q+h], lo)
				VSHUFPS(U8(0xEE), tl[q+2+h], tl[q+h], hi)
				tt[q+2*h], tt[q+2*h+1] = lo, hi
			}
		}
		out = make([]reg.VecVirtual, 8)
		for i := 0; i < 4; i++ {
			out[i], out[i+4] = YMM(), YMM()
			VPERM2F128(U8(0x20), tt[4+i], tt[i], out[i])
			VPERM2F128(U8(0x31), tt[4+i], tt[i], out[i+4])
		}
	} else {
		t0, t1, t2, t3 := YMM(), YMM(), YMM(), YMM()
		VUNPCKLPD(r[1], r[0], t0)
		VUNPCKHPD(r[1], r[0], t1)
		VUNPCKLPD(r[3], r[2], t2)
		VUNPCKHPD(r[3], r[2], t3)
		out = []reg.VecVirtual{YMM(), YMM(), YMM(), YMM()}
		VPERM2F128(U8(0x20), t2, t0, out[0])
		VPERM2F128(U8(0x20), t3, t1, out[1])
		VPERM2F128(U8(0x31), t2, t0, out[2])
		VPERM2F128(U8(0x31), t3, t1, out[3])
	}
	return out
}

// rowSums emits func(o *T, x *T, ldx int, n int): for each of 2·lanes rows of x (rows ldx
// elements apart), o[i] += x[i·ldx + j] for j < n (a multiple of lanes) in order of j, with
// AVX: each group of lanes rows is read as square blocks, transposed in registers, and its
// columns added in order to a vector of the group's sums (one lane a row), the two groups'
// chains of additions interleaved.
func rowSums(f32 bool) {
	typ, lanes, t := elemType(f32)
	name := "rowSums" + t
	TEXT(name, NOSPLIT, fmt.Sprintf("func(o *%s, x *%s, ldx int, n int)", typ, typ))
	Pragma("noescape")
	Doc(fmt.Sprintf("%s adds to o[i] the elements x[i·ldx + j], j < n (a multiple of %d) in order, for the %d rows i, with AVX (blocks transposed in registers).", name, lanes, 2*lanes))
	load, add := VMOVUPD, VADDPD
	shift := U8(3)
	if f32 {
		load, add, shift = VMOVUPS, VADDPS, U8(2)
	}
	o := Load(Param("o"), GP64())
	x := Load(Param("x"), GP64())
	ldx := Load(Param("ldx"), GP64())
	SHLQ(shift, ldx)
	n := Load(Param("n"), GP64())
	SHRQ(U8(map[bool]uint8{false: 2, true: 3}[f32]), n) // blocks
	accs := []reg.VecVirtual{YMM(), YMM()}
	for g, a := range accs {
		load(Mem{Base: o, Disp: 32 * g}, a)
	}
	ld3 := GP64()
	LEAQ(Mem{Base: ldx, Index: ldx, Scale: 2}, ld3)
	p := GP64()
	countLoop(name+"_blocks", n, n, []reg.Register{x}, 32, func() {
		for g := range accs {
			MOVQ(x, p)
			if g == 1 {
				for range lanes {
					ADDQ(ldx, p)
				}
			}
			r := make([]reg.VecVirtual, lanes)
			for i := range r {
				r[i] = YMM()
				if i < 4 {
					load(rowAt(p, ldx, ld3, i), r[i])
				} else {
					load(rowAt(p, ldx, ld3, i-4), r[i])
				}
				if i == 3 {
					LEAQ(Mem{Base: p, Index: ldx, Scale: 4}, p)
				}
			}
			for _, col := range transposeRegs(f32, r) {
				add(col, accs[g], accs[g])
			}
		}
	})
	for g, a := range accs {
		load(a, Mem{Base: o, Disp: 32 * g})
	}
	VZEROUPPER()
	RET()
}

// gatherAxpy emits func(n int, v *T, offs *int, b *T, out *T, vecs int): for each of vecs
// YMM vectors of columns j, out[j] = out[j] + Σ_{q<n} v[q]·b[offs[q] + j], each product
// rounded, the sum from +0 in the order of q, then added to out (a scatter's values against
// the rows of B they land on: kernel.ScatterMatMul's runs). Vectors go two at a time (two
// chains of additions in flight), then the odd one.
func gatherAxpy(f32 bool) {
	typ, lanes, t := elemType(f32)
	name := "gatherAxpy" + t
	TEXT(name, NOSPLIT, fmt.Sprintf("func(n int, v *%s, offs *int, b *%s, out *%s, vecs int)", typ, typ, typ))
	Pragma("noescape")
	Doc(fmt.Sprintf("%s adds to out[j] the sum over q below n of v[q]*b[offs[q]+j] (each product rounded, the sum from +0 in the order of q) for the %d·vecs columns j, with AVX.", name, lanes))
	n := Load(Param("n"), GP64())
	v := Load(Param("v"), GP64())
	offs := Load(Param("offs"), GP64())
	b := Load(Param("b"), GP64())
	out := Load(Param("out"), GP64())
	vecs := Load(Param("vecs"), GP64())
	load, mul, add, bcast, size, scale := VMOVUPD, VMULPD, VADDPD, VBROADCASTSD, 8, uint8(8)
	if f32 {
		load, mul, add, bcast, size, scale = VMOVUPS, VMULPS, VADDPS, VBROADCASTSS, 4, 4
	}
	c, q, vp, op, off := GP64(), GP64(), GP64(), GP64(), GP64()
	// w vectors of columns from b and out: their sums over q, added to out
	columns := func(label string, w int) {
		accs := make([]reg.VecVirtual, w)
		for i := range accs {
			accs[i] = YMM()
			VXORPS(accs[i], accs[i], accs[i]) // +0
		}
		MOVQ(v, vp)
		MOVQ(offs, op)
		countLoop(label, q, n, nil, 0, func() {
			MOVQ(Mem{Base: op}, off)
			bc := YMM()
			bcast(Mem{Base: vp}, bc)
			for i, a := range accs {
				x := YMM()
				mul(Mem{Base: b, Index: off, Scale: scale, Disp: 32 * i}, bc, x) // v[q]·b[…]
				add(x, a, a)                                                     // the sum + the product
			}
			ADDQ(U32(8), op)
			ADDQ(U32(size), vp)
		})
		for i, a := range accs {
			o := YMM()
			load(Mem{Base: out, Disp: 32 * i}, o)
			add(a, o, o) // out + the sum
			load(o, Mem{Base: out, Disp: 32 * i})
		}
	}
	pairs := GP64()
	MOVQ(vecs, pairs)
	SHRQ(U8(1), pairs)
	countLoop(name+"_pairs", c, pairs, []reg.Register{b, out}, 64, func() { columns(name+"_pq", 2) })
	ANDQ(U32(1), vecs)
	countLoop(name+"_odd", c, vecs, []reg.Register{b, out}, 32, func() { columns(name+"_oq", 1) })
	VZEROUPPER()
	RET()
}
