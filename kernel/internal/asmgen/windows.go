package main

import (
	"fmt"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

// winDot emits func(steps int, tab *int64, x *T, idx *[8]int64, v *T, ldv int, o *T, ldo int):
// for i below 8, the nvec vectors o[i·ldo : i·ldo + nvec·lanes] = Σ_t x[tab[t] + idx[i]] ·
// v[t·ldv : t·ldv + nvec·lanes], the sum over t in order from zero with fused multiply-adds
// (a window matrix's rows or columns times a matrix's rows: kernel.WindowMatMul). AVX-512F
// (ZMM) or AVX2 and FMA (YMM, one vector: eight accumulators of the sixteen registers).
func winDot(f32, avx512 bool, nvec int) {
	typ, lanes, t := elemType(f32)
	size := 8
	if f32 {
		size = 4
	}
	isa, vec, vecBytes := "Y", YMM, 32
	if avx512 {
		isa, vec, vecBytes, lanes = "Z", ZMM, 64, 2*lanes
	}
	name := fmt.Sprintf("winDot%s%s%d", t, isa, nvec)
	TEXT(name, NOSPLIT, fmt.Sprintf("func(steps int, tab *int64, x *%s, idx *[8]int64, v *%s, ldv int, o *%s, ldo int)", typ, typ, typ))
	Doc(fmt.Sprintf("%s stores into the 8 rows of o (ldo elements apart) the %d-element sums over t < steps of x[tab[t]+idx[i]]·v[t·ldv …], in order of t with FMA.", name, nvec*lanes))
	Pragma("noescape") // keeps no pointer: the callers' index arrays and tiles stay on their stacks
	bcast, load, store, fma, fmaB, xor := VBROADCASTSD, VMOVUPD, VMOVUPD, VFMADD231PD, VFMADD231PD_BCST, VXORPD
	scale := uint8(8)
	if f32 {
		bcast, load, store, fma, fmaB, xor, scale = VBROADCASTSS, VMOVUPS, VMOVUPS, VFMADD231PS, VFMADD231PS_BCST, VXORPS, 4
	}
	x := Load(Param("x"), GP64())
	ip := Load(Param("idx"), GP64())
	rows := make([]reg.Register, 8)
	for i := range rows {
		rows[i] = GP64()
		MOVQ(Mem{Base: ip, Disp: 8 * i}, rows[i])
		LEAQ(Mem{Base: x, Index: rows[i], Scale: scale}, rows[i]) // &x[idx[i]]
	}
	steps := Load(Param("steps"), GP64())
	tab := Load(Param("tab"), GP64())
	v := Load(Param("v"), GP64())
	ldv := Load(Param("ldv"), GP64())
	SHLQ(U8(map[int]uint8{4: 2, 8: 3}[size]), ldv)
	acc := make([][]reg.VecVirtual, 8)
	for i := range acc {
		for j := 0; j < nvec; j++ {
			a := vec()
			xor(a, a, a)
			acc[i] = append(acc[i], a)
		}
	}
	off := GP64()
	countLoop(name+"_steps", steps, steps, nil, 0, func() {
		MOVQ(Mem{Base: tab}, off)
		vs := make([]reg.VecVirtual, nvec)
		for j := range vs {
			vs[j] = vec()
			load(Mem{Base: v, Disp: j * vecBytes}, vs[j])
		}
		for i := range acc {
			src := Mem{Base: rows[i], Index: off, Scale: scale}
			if avx512 { // the broadcast folded into the FMA
				for j := range vs {
					fmaB(src, vs[j], acc[i][j])
				}
				continue
			}
			b := vec()
			bcast(src, b)
			for j := range vs {
				fma(vs[j], b, acc[i][j])
			}
		}
		ADDQ(U32(8), tab)
		ADDQ(ldv, v)
	})
	o := Load(Param("o"), GP64())
	ldo := Load(Param("ldo"), GP64())
	SHLQ(U8(map[int]uint8{4: 2, 8: 3}[size]), ldo)
	for i := range acc {
		for j := range acc[i] {
			store(acc[i][j], Mem{Base: o, Disp: j * vecBytes})
		}
		ADDQ(ldo, o)
	}
	VZEROUPPER()
	RET()
}

// dwISA is what the depthwise generators need of an element type and an instruction set:
// the Go type, the lanes of a vector, the name suffix, the vectors, and the instructions.
type dwISA struct {
	typ, suffix     string
	lanes, vecBytes int
	vec             func() reg.VecVirtual
	load, mul, add  func(...Op)
	xor             func(...Op)
	shift           U8
	scale           uint8
}

// dwISAOf is the dwISA of float32 or float64 with AVX-512 (ZMM, suffix "Z") or AVX2 (YMM, "Y").
func dwISAOf(f32, avx512 bool) dwISA {
	typ, lanes, t := elemType(f32)
	d := dwISA{typ: typ, lanes: lanes, suffix: t + "Y", vecBytes: 32, vec: YMM,
		load: VMOVUPD, mul: VMULPD, add: VADDPD, xor: VXORPD, shift: U8(3), scale: 8}
	if avx512 {
		d.lanes, d.suffix, d.vecBytes, d.vec = 2*lanes, t+"Z", 64, ZMM
	}
	if f32 {
		d.load, d.mul, d.add, d.xor, d.shift, d.scale = VMOVUPS, VMULPS, VADDPS, VXORPS, U8(2), 4
	}
	return d
}

// dwForward emits func(points int, utab *int64, x *T, vt *int64, taps int, f *T, ldf int, o
// *T, ldo int): for each point p, the vector o[p·ldo …] = Σ_t x[utab[p] + vt[t] …]·f[t·ldf …],
// each product rounded, then added in order of t from +0 (a depthwise convolution's
// forward sums with its channels as lanes: kernel.DepthwiseWindows).
func dwForward(f32, avx512 bool) {
	is := dwISAOf(f32, avx512)
	typ, lanes, vec := is.typ, is.lanes, is.vec
	name := "dwForward" + is.suffix
	TEXT(name, NOSPLIT, fmt.Sprintf("func(points int, utab *int64, x *%s, vt *int64, taps int, f *%s, ldf int, o *%s, ldo int)", typ, typ, typ))
	Pragma("noescape")
	Doc(fmt.Sprintf("%s stores into o[p·ldo …] the %d-lane sums over t < taps of x[utab[p]+vt[t] …]·f[t·ldf …] for p < points, each product rounded, added in order of t from +0; four points at a time (four independent chains of additions).", name, lanes))
	load, mul, add, xor, shift, scale := is.load, is.mul, is.add, is.xor, is.shift, is.scale
	// registers: the parameters used in the loops only are reloaded from the frame where
	// needed (twelve general registers are live at most)
	utab := Load(Param("utab"), GP64())
	ldf := Load(Param("ldf"), GP64())
	SHLQ(shift, ldf)
	o := Load(Param("o"), GP64())
	tc, vp, fp, off, cnt := GP64(), GP64(), GP64(), GP64(), GP64()
	bases := []reg.Register{GP64(), GP64(), GP64(), GP64()}
	taps := func(label string, body func()) {
		Load(Param("vt"), vp)
		Load(Param("f"), fp)
		Load(Param("taps"), tc)
		Label(label)
		CMPQ(tc, U32(0))
		JE(LabelRef(label + "_done"))
		MOVQ(Mem{Base: vp}, off)
		body()
		ADDQ(U32(8), vp)
		ADDQ(ldf, fp)
		DECQ(tc)
		JMP(LabelRef(label))
		Label(label + "_done")
	}
	Load(Param("points"), cnt)
	SHRQ(U8(2), cnt)
	Label(name + "_groups")
	CMPQ(cnt, U32(0))
	JE(LabelRef(name + "_groups_done"))
	accs := make([]reg.VecVirtual, 4)
	Load(Param("x"), off)
	for i, b := range bases {
		MOVQ(Mem{Base: utab, Disp: 8 * i}, b)
		LEAQ(Mem{Base: off, Index: b, Scale: scale}, b)
		accs[i] = vec()
		xor(accs[i], accs[i], accs[i])
	}
	taps(name+"_gtaps", func() {
		fv := vec()
		load(Mem{Base: fp}, fv)
		for i, b := range bases {
			xv := vec()
			mul(Mem{Base: b, Index: off, Scale: scale}, fv, xv)
			add(xv, accs[i], accs[i])
		}
	})
	Load(Param("ldo"), off)
	SHLQ(shift, off)
	for i := range accs {
		load(accs[i], Mem{Base: o})
		ADDQ(off, o)
	}
	ADDQ(U32(32), utab)
	DECQ(cnt)
	JMP(LabelRef(name + "_groups"))
	Label(name + "_groups_done")
	// the last points % 4 one at a time
	Load(Param("points"), cnt)
	ANDQ(U32(3), cnt)
	base := bases[0]
	Label(name + "_points")
	CMPQ(cnt, U32(0))
	JE(LabelRef(name + "_points_done"))
	Load(Param("x"), off)
	MOVQ(Mem{Base: utab}, base)
	LEAQ(Mem{Base: off, Index: base, Scale: scale}, base)
	acc := vec()
	xor(acc, acc, acc)
	taps(name+"_taps", func() {
		xv := vec()
		load(Mem{Base: base, Index: off, Scale: scale}, xv)
		mul(Mem{Base: fp}, xv, xv)
		add(xv, acc, acc)
	})
	load(acc, Mem{Base: o})
	Load(Param("ldo"), off)
	SHLQ(shift, off)
	ADDQ(off, o)
	ADDQ(U32(8), utab)
	DECQ(cnt)
	JMP(LabelRef(name + "_points"))
	Label(name + "_points_done")
	VZEROUPPER()
	RET()
}

// dwFilter emits func(points int, utab *int64, x *T, vt *int64, taps int, d *T, ldd int, acc
// *T): for each point p in order and each tap t, acc[t·lanes …] += d[p·ldd …]·x[utab[p] +
// vt[t] …], the product rounded first (a depthwise convolution's filter gradient with its
// channels as lanes: kernel.DepthwiseWindows).
func dwFilter(f32, avx512 bool) {
	is := dwISAOf(f32, avx512)
	typ, lanes, vec, vecBytes := is.typ, is.lanes, is.vec, is.vecBytes
	name := "dwFilter" + is.suffix
	TEXT(name, NOSPLIT, fmt.Sprintf("func(points int, utab *int64, x *%s, vt *int64, taps int, d *%s, ldd int, acc *%s)", typ, typ, typ))
	Pragma("noescape")
	Doc(fmt.Sprintf("%s adds d[p·ldd …]·x[utab[p]+vt[t] …] (%d lanes, the product rounded first) into acc[t·%d …] for p < points in order and t < taps.", name, lanes, lanes))
	load, mul, add, shift, scale := is.load, is.mul, is.add, is.shift, is.scale
	points := Load(Param("points"), GP64())
	utab := Load(Param("utab"), GP64())
	x := Load(Param("x"), GP64())
	vt := Load(Param("vt"), GP64())
	taps := Load(Param("taps"), GP64())
	d := Load(Param("d"), GP64())
	ldd := Load(Param("ldd"), GP64())
	SHLQ(shift, ldd)
	acc := Load(Param("acc"), GP64())
	base, tc, vp, ap, off := GP64(), GP64(), GP64(), GP64(), GP64()
	countLoop(name+"_points", points, points, nil, 0, func() {
		MOVQ(Mem{Base: utab}, base)
		LEAQ(Mem{Base: x, Index: base, Scale: scale}, base)
		dv := vec()
		load(Mem{Base: d}, dv)
		MOVQ(vt, vp)
		MOVQ(acc, ap)
		countLoop(name+"_taps", tc, taps, []reg.Register{vp, ap}, 0, func() {
			MOVQ(Mem{Base: vp}, off)
			xv, a := vec(), vec()
			mul(Mem{Base: base, Index: off, Scale: scale}, dv, xv)
			load(Mem{Base: ap}, a)
			add(xv, a, a)
			load(a, Mem{Base: ap})
			ADDQ(U32(8), vp)
			ADDQ(U32(vecBytes), ap)
		})
		ADDQ(ldd, d)
		ADDQ(U32(8), utab)
	})
	VZEROUPPER()
	RET()
}

// dwFilter9 emits dwFilter for nine taps with the nine sums in registers (a 3×3 filter):
// func(points int, utab *int64, x *T, vt *[9]int64, d *T, ldd int, acc *T), acc read
// before the points and written after.
func dwFilter9(f32, avx512 bool) {
	is := dwISAOf(f32, avx512)
	typ, lanes, vec, vecBytes := is.typ, is.lanes, is.vec, is.vecBytes
	name := "dwFilter9" + is.suffix
	TEXT(name, NOSPLIT, fmt.Sprintf("func(points int, utab *int64, x *%s, vt *[9]int64, d *%s, ldd int, acc *%s)", typ, typ, typ))
	Pragma("noescape")
	Doc(fmt.Sprintf("%s adds d[p·ldd …]·x[utab[p]+vt[t] …] (%d lanes, the product rounded first) into acc[t·%d …] for p < points in order and the nine taps t, the sums held in registers.", name, lanes, lanes))
	load, mul, add, shift, scale := is.load, is.mul, is.add, is.shift, is.scale
	acc := Load(Param("acc"), GP64())
	sums := make([]reg.VecVirtual, 9)
	for i := range sums {
		sums[i] = vec()
		load(Mem{Base: acc, Disp: i * vecBytes}, sums[i])
	}
	points := Load(Param("points"), GP64())
	utab := Load(Param("utab"), GP64())
	x := Load(Param("x"), GP64())
	vt := Load(Param("vt"), GP64())
	d := Load(Param("d"), GP64())
	ldd := Load(Param("ldd"), GP64())
	SHLQ(shift, ldd)
	base, off := GP64(), GP64()
	countLoop(name+"_points", points, points, nil, 0, func() {
		MOVQ(Mem{Base: utab}, base)
		LEAQ(Mem{Base: x, Index: base, Scale: scale}, base)
		dv := vec()
		load(Mem{Base: d}, dv)
		for i := range sums {
			MOVQ(Mem{Base: vt, Disp: 8 * i}, off)
			xv := vec()
			mul(Mem{Base: base, Index: off, Scale: scale}, dv, xv)
			add(xv, sums[i], sums[i])
		}
		ADDQ(ldd, d)
		ADDQ(U32(8), utab)
	})
	for i := range sums {
		load(sums[i], Mem{Base: acc, Disp: i * vecBytes})
	}
	VZEROUPPER()
	RET()
}

// dwInput emits func(points int, utab *int64, y *T, vt *int64, taps int, d *T, ldd int, f *T,
// ldf int): for each point p in order and each tap t in order, y[utab[p] + vt[t] …] +=
// d[p·ldd …]·f[t·ldf …], the product rounded first (a depthwise convolution's input gradient
// with its channels as lanes, scattered into a staged image: kernel.DepthwiseWindows).
func dwInput(f32, avx512 bool) {
	is := dwISAOf(f32, avx512)
	typ, lanes, vec := is.typ, is.lanes, is.vec
	name := "dwInput" + is.suffix
	TEXT(name, NOSPLIT, fmt.Sprintf("func(points int, utab *int64, y *%s, vt *int64, taps int, d *%s, ldd int, f *%s, ldf int)", typ, typ, typ))
	Pragma("noescape")
	Doc(fmt.Sprintf("%s adds d[p·ldd …]·f[t·ldf …] (%d lanes, the product rounded first) into y[utab[p]+vt[t] …] for p < points and t < taps, in order.", name, lanes))
	load, mul, add, shift, scale := is.load, is.mul, is.add, is.shift, is.scale
	points := Load(Param("points"), GP64())
	utab := Load(Param("utab"), GP64())
	d := Load(Param("d"), GP64())
	ldd := Load(Param("ldd"), GP64())
	SHLQ(shift, ldd)
	ldf := Load(Param("ldf"), GP64())
	SHLQ(shift, ldf)
	base, tc, vp, fp, off := GP64(), GP64(), GP64(), GP64(), GP64()
	countLoop(name+"_points", points, points, nil, 0, func() {
		Load(Param("y"), off)
		MOVQ(Mem{Base: utab}, base)
		LEAQ(Mem{Base: off, Index: base, Scale: scale}, base)
		dv := vec()
		load(Mem{Base: d}, dv)
		Load(Param("vt"), vp)
		Load(Param("f"), fp)
		Load(Param("taps"), off)
		countLoop(name+"_taps", tc, off, []reg.Register{vp}, 8, func() {
			MOVQ(Mem{Base: vp}, off)
			pv, a := vec(), vec()
			mul(Mem{Base: fp}, dv, pv)
			load(Mem{Base: base, Index: off, Scale: scale}, a)
			add(pv, a, a)
			load(a, Mem{Base: base, Index: off, Scale: scale})
			ADDQ(ldf, fp)
		})
		ADDQ(ldd, d)
		ADDQ(U32(8), utab)
	})
	VZEROUPPER()
	RET()
}
