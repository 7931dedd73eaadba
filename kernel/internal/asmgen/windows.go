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
