package main

import (
	"fmt"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

// argmax4 emits func(dst *int64, a, b *float32, n int): the argmax of 2×2 pooling windows
// (a max-pool of stride 2), dst[j] = the first k of the maximum of the window (a[2j], a[2j+1],
// b[2j], b[2j+1]) for j < n rounded down to 4 (eight at a time, then four), comparing
// argmaxFewKeys' order-preserving integer keys: x + 0 (−0 as +0), its bits with the magnitude
// bits flipped when negative, and math.MinInt32 for NaN; under a strict comparison the first
// maximum wins. The caller does the rest.
func argmax4() {
	name := "argmax4F32"
	TEXT(name, NOSPLIT, "func(dst *int64, a, b *float32, n int)")
	Doc(name + " sets dst[j] to the first position k of the greatest key among a[2j], a[2j+1], b[2j], b[2j+1] (argmaxFewKeys' order) with AVX2 for j below n rounded down to a multiple of 4.")
	dst := Load(Param("dst"), GP64())
	a := Load(Param("a"), GP64())
	b := Load(Param("b"), GP64())
	n := Load(Param("n"), GP64())
	ones, mag, minI, zero := YMM(), YMM(), YMM(), YMM()
	VPCMPEQD(ones, ones, ones)
	VPSRLD(U8(1), ones, mag)   // 0x7fffffff
	VPSLLD(U8(31), ones, minI) // 0x80000000
	VXORPS(zero, zero, zero)
	idx := [4]reg.VecVirtual{zero, YMM(), YMM(), YMM()}
	VPSUBD(ones, zero, idx[1]) // 0 − (−1)
	VPADDD(idx[1], idx[1], idx[2])
	VPADDD(idx[1], idx[2], idx[3])
	// step emits the loop for windows windows at a time: 8 in YMM registers, or 4 in XMM
	// registers (the rest of a row of fewer than 8: the 7×7 maps of a CNN).
	step := func(windows int) {
		narrow := windows == 4
		vec := func() reg.VecVirtual {
			if narrow {
				return XMM()
			}
			return YMM()
		}
		as := func(r reg.VecVirtual) reg.Register {
			if narrow {
				return r.AsX()
			}
			return r
		}
		// key turns the floats v into their keys in place.
		key := func(v reg.VecVirtual) {
			t, nan := vec(), vec()
			VADDPS(as(zero), v, v)
			VCMPPS(U8(3), v, v, nan) // unordered: NaN
			VPSRAD(U8(31), v, t)
			VPAND(as(mag), t, t)
			VPXOR(t, v, v)
			VBLENDVPS(nan, as(minI), v, v)
		}
		// pair loads 2·windows floats at p and splits them into the even and the odd
		// positions, in order.
		pair := func(p reg.Register) (reg.VecVirtual, reg.VecVirtual) {
			lo, hi, ev, od := vec(), vec(), vec(), vec()
			VMOVUPS(Mem{Base: p}, lo)
			VMOVUPS(Mem{Base: p, Disp: 4 * windows}, hi)
			VSHUFPS(U8(0x88), hi, lo, ev)
			VSHUFPS(U8(0xDD), hi, lo, od)
			if !narrow { // the two 128-bit lanes' halves in order
				VPERMPD(U8(0xD8), ev, ev)
				VPERMPD(U8(0xD8), od, od)
			}
			return ev, od
		}
		label := fmt.Sprintf("%s_%d", name, windows)
		Label(label)
		CMPQ(n, U32(windows))
		JL(LabelRef(label + "_done"))
		k0, k1 := pair(a)
		k2, k3 := pair(b)
		keys := [4]reg.VecVirtual{k0, k1, k2, k3}
		for _, k := range keys {
			key(k)
		}
		best, bi := keys[0], vec()
		VXORPS(bi, bi, bi)
		for i := 1; i < 4; i++ {
			m := vec()
			VPCMPGTD(best, keys[i], m) // keys[i] > best
			VPBLENDVB(m, as(idx[i]), bi, bi)
			VPMAXSD(keys[i], best, best)
		}
		lo := YMM()
		if narrow {
			VPMOVZXDQ(bi, lo)
			VMOVDQU(lo, Mem{Base: dst})
		} else {
			hi := YMM()
			VPMOVZXDQ(bi.AsX(), lo)
			VEXTRACTI128(U8(1), bi, hi.AsX())
			VPMOVZXDQ(hi.AsX(), hi)
			VMOVDQU(lo, Mem{Base: dst})
			VMOVDQU(hi, Mem{Base: dst, Disp: 32})
		}
		ADDQ(U32(8*windows), a)
		ADDQ(U32(8*windows), b)
		ADDQ(U32(8*windows), dst)
		SUBQ(U32(windows), n)
		if narrow {
			Label(label + "_done")
			return
		}
		JMP(LabelRef(label))
		Label(label + "_done")
	}
	step(8)
	step(4) // at most once: fewer than 8 are left
	VZEROUPPER()
	RET()
}

// fill emits func(dst *T, v T, n int): dst[i] = v for i < n rounded down to whole vectors.
func fill(f32 bool) {
	typ, lanes, t := elemType(f32)
	name := "vecFill" + t
	TEXT(name, NOSPLIT, fmt.Sprintf("func(dst *%s, v %s, n int)", typ, typ))
	Doc(fmt.Sprintf("%s sets dst[i] = v with AVX2 for i below n rounded down to a multiple of %d.", name, lanes))
	dst := Load(Param("dst"), GP64())
	n := Load(Param("n"), GP64())
	v := bcastParam("v", f32)
	elemLoops(name, lanes, n, []reg.Register{dst}, func(off int, _ reg.VecVirtual) {
		VMOVUPS(v, Mem{Base: dst, Disp: off})
	})
}

// neg emits func(dst, x *T, n int): dst[i] = −x[i] (the sign bit flipped, as Go's negation
// does, NaNs and zeros included) for i < n rounded down to whole vectors.
func neg(f32 bool) {
	typ, lanes, t := elemType(f32)
	name := "vecNeg" + t
	TEXT(name, NOSPLIT, fmt.Sprintf("func(dst, x *%s, n int)", typ))
	Doc(fmt.Sprintf("%s sets dst[i] = -x[i] (the sign bit flipped) with AVX2 for i below n rounded down to a multiple of %d.", name, lanes))
	dst := Load(Param("dst"), GP64())
	x := Load(Param("x"), GP64())
	n := Load(Param("n"), GP64())
	sign := YMM()
	VPCMPEQD(sign, sign, sign)
	if f32 {
		VPSLLD(U8(31), sign, sign)
	} else {
		VPSLLQ(U8(63), sign, sign)
	}
	elemLoops(name, lanes, n, []reg.Register{dst, x}, func(off int, v reg.VecVirtual) {
		VXORPS(Mem{Base: x, Disp: off}, sign, v)
		VMOVUPS(v, Mem{Base: dst, Disp: off})
	})
}
