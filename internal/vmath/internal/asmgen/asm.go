package main

import (
	"fmt"
	"math"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

// asmGen emits one function's IR as an AVX2+FMA loop over whole vectors, or (z) an AVX-512F
// loop: 64-byte vectors, compares into opmask registers, blends under them.
type asmGen struct {
	f     *fn
	f32   bool
	z     bool        // AVX-512F
	vb    int         // vector bytes: 32, or 64 with z
	data  Mem         // the function's constants, a vector (vb bytes) each
	cOff  map[int]int // constant node → offset in data
	val   []Op        // node → its operand (a register, or memory for constants)
	root  []int       // node → the node whose register it shares (Bits/Float are free)
	last  []int       // root node → index of its last use
	lut   map[int][2]reg.VecVirtual
	nData int
}

// i returns the instructions of the dtype: (pd, ps).
func (g *asmGen) pick(pd, ps func(...Op)) func(...Op) {
	if g.f32 {
		return ps
	}
	return pd
}

func emitAsm(f *fn, z bool) {
	g := &asmGen{f: f, f32: f.f32, z: z, vb: 32, cOff: map[int]int{}, lut: map[int][2]reg.VecVirtual{}}
	if z {
		g.vb = 64
	}
	name := asmName(f, z)
	n := namesOf(f.f32)
	// constants
	g.data = GLOBL(name+"Data", RODATA|NOPTR)
	for i, nd := range f.nodes {
		switch nd.op {
		case oConstF, oConstU:
			g.cOff[i] = g.emitData(g.constBits(nd))
		case oLookup:
			tab := nd.tab
			if f.f32 {
				off := g.nData
				for k, v := range tab {
					DATA(off+4*k, U32(math.Float32bits(float32(v))))
				}
				for k := len(tab); k < g.vb/4; k++ {
					DATA(off+4*k, U32(0))
				}
				g.nData += g.vb
				g.cOff[i] = off
			} else {
				off := g.nData
				for k, v := range tab {
					DATA(off+8*k, U64(math.Float64bits(v)))
				}
				g.nData += 64
				g.cOff[i] = off
			}
		}
	}
	// liveness (through the free reinterpretations)
	g.root = make([]int, len(f.nodes))
	g.last = make([]int, len(f.nodes))
	for i, nd := range f.nodes {
		g.root[i] = i
		if nd.op == oBits || nd.op == oFloat {
			g.root[i] = g.root[nd.a[0]]
		}
		for _, a := range nd.a {
			g.last[g.root[a]] = i
		}
	}
	g.last[g.root[f.out]] = len(f.nodes)

	lanes := g.vb / 8
	if f.f32 {
		lanes = g.vb / 4
	}
	isa := "AVX2 and FMA"
	if z {
		isa = "AVX-512F"
	}
	TEXT(name, NOSPLIT, fmt.Sprintf("func(dst, x *%s, n int)", n.t))
	Doc(fmt.Sprintf("%s sets dst[i] = %s%s(x[i]) for i < n (n a multiple of %d) with %s.", name, f.name, n.suffix, lanes, isa))
	dst := Load(Param("dst"), GP64())
	x := Load(Param("x"), GP64())
	cnt := Load(Param("n"), GP64())
	loop, one, done := name+"_loop", name+"_one", name+"_done"
	// The main loop computes unroll() vectors at a time, their instructions interleaved, so
	// that the long dependent chains of the polynomials overlap (one vector an iteration
	// kept the out-of-order window full of one chain); the second loop does the vectors left
	// one at a time. Every lane runs the same operations.
	un := g.unroll()
	Label(loop)
	CMPQ(cnt, U32(un*lanes))
	JL(LabelRef(one))
	g.body(dst, x, un)
	ADDQ(U32(g.vb*un), x)
	ADDQ(U32(g.vb*un), dst)
	SUBQ(U32(un*lanes), cnt)
	JMP(LabelRef(loop))
	Label(one)
	CMPQ(cnt, U32(lanes))
	JL(LabelRef(done))
	g.body(dst, x, 1)
	ADDQ(U32(g.vb), x)
	ADDQ(U32(g.vb), dst)
	SUBQ(U32(lanes), cnt)
	JMP(LabelRef(one))
	Label(done)
	VZEROUPPER()
	RET()
}

// unroll is the number of vectors the main loop computes at once: the most whose registers
// fit in Y0–Y15 (avo's allocator also hands out Y16–Y31, which only AVX-512 encodes, and
// VBLENDV and VPAND have no such encoding; TestAVX2Registers checks the generated file).
// BenchmarkVmath, one thread, 65,536 elements, alternating builds: exp64 1.68–1.77 →
// 1.18–1.31 ns an element, tanh64 2.41–2.83 → 1.80–1.95, sigmoid64 2.82–3.00 → 1.89–1.99,
// tanh32 0.93–1.11 → 0.66–0.70 (one vector an iteration before).
func (g *asmGen) unroll() int {
	if g.z {
		return g.unrollZ()
	}
	switch g.f.name {
	case "Exp", "Tanh":
		return 3
	case "Erf":
		if !g.f32 {
			return 1
		}
	}
	return 2
}

// unrollZ is unroll for the AVX-512 loops: their 32 registers hold more vectors in flight
// (opmask registers, seven, bound the ones with long-lived compares).
func (g *asmGen) unrollZ() int {
	switch g.f.name {
	case "Log", "Erf":
		return 2
	}
	return 4
}

// body emits un vectors' computation, instruction by instruction interleaved: vector u
// reads x at vb·u bytes and writes dst there.
func (g *asmGen) body(dst, x reg.Register, un int) {
	f := g.f
	vals := make([][]Op, un)
	luts := make([]map[int][2]reg.VecVirtual, un)
	for u := range vals {
		vals[u] = make([]Op, len(f.nodes))
		luts[u] = map[int][2]reg.VecVirtual{}
		in := g.vec()
		g.pick(wrap(VMOVUPD), wrap(VMOVUPS))(Mem{Base: x, Disp: g.vb * u}, in)
		vals[u][0] = in
	}
	for i := 1; i < len(f.nodes); i++ {
		for u := range vals {
			g.val, g.lut = vals[u], luts[u]
			g.node(i)
		}
	}
	for u := range vals {
		g.val = vals[u]
		g.pick(wrap(VMOVUPD), wrap(VMOVUPS))(g.reg(f.out), Mem{Base: dst, Disp: g.vb * u})
	}
}

// wrap adapts an avo constructor to func(...Op).
func wrap[F any](f F) func(...Op) {
	switch f := any(f).(type) {
	case func(Op, Op):
		return func(o ...Op) { f(o[0], o[1]) }
	case func(Op, Op, Op):
		return func(o ...Op) { f(o[0], o[1], o[2]) }
	case func(Op, Op, Op, Op):
		return func(o ...Op) { f(o[0], o[1], o[2], o[3]) }
	case func(...Op):
		return f
	}
	panic(fmt.Sprintf("asmgen: cannot wrap %T", f))
}

func (g *asmGen) constBits(nd node) uint64 {
	if nd.op == oConstU {
		return nd.u
	}
	if g.f32 {
		return uint64(math.Float32bits(float32(nd.f)))
	}
	return math.Float64bits(nd.f)
}

// emitData writes a vector (vb bytes) of the constant c in every lane and returns its offset.
func (g *asmGen) emitData(c uint64) int {
	off := g.nData
	for k := 0; k < g.vb/8; k++ {
		if g.f32 {
			DATA(off+8*k, U64(c|c<<32))
		} else {
			DATA(off+8*k, U64(c))
		}
	}
	g.nData += g.vb
	return off
}

// vec is a new vector register of the loop's width.
func (g *asmGen) vec() reg.VecVirtual {
	if g.z {
		return ZMM()
	}
	return YMM()
}

func (g *asmGen) isConst(i int) bool {
	op := g.f.nodes[g.root[i]].op
	return op == oConstF || op == oConstU
}

// op is node i's operand: a register, or the memory of a constant.
func (g *asmGen) op(i int) Op {
	if g.isConst(i) {
		return g.data.Offset(g.cOff[g.root[i]])
	}
	return g.val[i]
}

// reg is node i in a register (constants are loaded).
func (g *asmGen) reg(i int) reg.VecVirtual {
	if g.isConst(i) {
		r := g.vec()
		VMOVUPS(g.op(i), r)
		return r
	}
	return g.val[i].(reg.VecVirtual)
}

// dead reports whether node a's register may be overwritten by node i.
func (g *asmGen) dead(a, i int) bool { return !g.isConst(a) && g.last[g.root[a]] == i }

func (g *asmGen) node(i int) {
	nd := g.f.nodes[i]
	a := nd.a
	switch nd.op {
	case oConstF, oConstU:
		return
	case oBits, oFloat:
		g.val[i] = g.val[a[0]]
		return
	case oFMA:
		g.fma(i, a[0], a[1], a[2], false)
		return
	case oFNMA:
		g.fma(i, a[0], a[1], a[2], true)
		return
	case oLookup:
		g.lookup(i, a[0])
		return
	case oSel:
		d := g.vec()
		if g.z {
			// VBLENDM true (may be memory), false, mask, dst
			g.pick(wrap(VBLENDMPD), wrap(VBLENDMPS))(g.op(a[1]), g.reg(a[2]), g.val[a[0]], d)
		} else {
			// VBLENDV mask, true (may be memory), false, dst
			g.pick(wrap(VBLENDVPD), wrap(VBLENDVPS))(g.reg(a[0]), g.op(a[1]), g.reg(a[2]), d)
		}
		g.val[i] = d
		return
	case oShl, oShr:
		d := g.vec()
		ins := map[bool]map[opc]func(...Op){
			false: {oShl: wrap(VPSLLQ), oShr: wrap(VPSRLQ)},
			true:  {oShl: wrap(VPSLLD), oShr: wrap(VPSRLD)},
		}[g.f32][nd.op]
		ins(U8(nd.n), g.reg(a[0]), d)
		g.val[i] = d
		return
	}
	type bin struct {
		pd, ps  func(...Op)
		commute bool
	}
	// the compare predicates: LT_OQ, EQ_OQ, NLT_UQ, UNORD_Q
	preds := map[opc]uint8{oLT: 0x11, oEQ: 0x00, oNotLT: 0x15, oUnord: 0x03}
	cmp := func(pred uint8) bin {
		return bin{func(o ...Op) { VCMPPD(U8(pred), o[0], o[1], o[2]) }, func(o ...Op) { VCMPPS(U8(pred), o[0], o[1], o[2]) }, false}
	}
	ops := map[opc]bin{
		oAdd:    {wrap(VADDPD), wrap(VADDPS), true},
		oSub:    {wrap(VSUBPD), wrap(VSUBPS), false},
		oMul:    {wrap(VMULPD), wrap(VMULPS), true},
		oDiv:    {wrap(VDIVPD), wrap(VDIVPS), false},
		oMin:    {wrap(VMINPD), wrap(VMINPS), false},
		oMax:    {wrap(VMAXPD), wrap(VMAXPS), false},
		oAnd:    {wrap(VPAND), wrap(VPAND), true},
		oOr:     {wrap(VPOR), wrap(VPOR), true},
		oIAdd:   {wrap(VPADDQ), wrap(VPADDD), true},
		oISub:   {wrap(VPSUBQ), wrap(VPSUBD), false},
		oLT:     cmp(preds[oLT]),
		oEQ:     cmp(preds[oEQ]),
		oNotLT:  cmp(preds[oNotLT]),
		oUnord:  cmp(preds[oUnord]),
		oAndNot: {},
	}
	if g.z {
		switch nd.op {
		case oLT, oEQ, oNotLT, oUnord:
			// a compare into an opmask register: VCMP pred, src2 (may be memory), src1, k
			k := K()
			g.val[i] = k
			g.pick(func(o ...Op) { VCMPPD(o...) }, func(o ...Op) { VCMPPS(o...) })(U8(preds[nd.op]), g.op(a[1]), g.reg(a[0]), k)
			return
		case oAnd: // VPAND and VPOR have no EVEX form
			ops[oAnd] = bin{wrap(VPANDQ), wrap(VPANDQ), true}
		case oOr:
			ops[oOr] = bin{wrap(VPORQ), wrap(VPORQ), true}
		}
	}
	d := g.vec()
	g.val[i] = d
	if nd.op == oAndNot {
		// VPANDN src2, src1, dst = ^src1 & src2: a &^ b = ^b & a
		if g.z {
			VPANDNQ(g.op(a[0]), g.reg(a[1]), d)
		} else {
			VPANDN(g.op(a[0]), g.reg(a[1]), d)
		}
		return
	}
	o, ok := ops[nd.op]
	if !ok {
		panic("asmgen: unknown op")
	}
	ins := g.pick(o.pd, o.ps)
	x, y := a[0], a[1]
	if o.commute && g.isConst(x) && !g.isConst(y) {
		x, y = y, x
	}
	// avo order: src2 (may be memory), src1, dst computes src1 OP src2
	ins(g.op(y), g.reg(x), d)
}

// fma emits node i = x*y+z (or -(x*y)+z), overwriting a dead operand's register where it can.
func (g *asmGen) fma(i, x, y, z int, neg bool) {
	f231 := g.pick(wrap(VFMADD231PD), wrap(VFMADD231PS)) // d = s2*s3 + d
	f213 := g.pick(wrap(VFMADD213PD), wrap(VFMADD213PS)) // d = s2*d + s3
	if neg {
		f231 = g.pick(wrap(VFNMADD231PD), wrap(VFNMADD231PS)) // d = -(s2*s3) + d
		f213 = g.pick(wrap(VFNMADD213PD), wrap(VFNMADD213PS)) // d = -(s2*d) + s3
	}
	if g.isConst(x) && !g.isConst(y) {
		x, y = y, x
	}
	switch {
	case g.dead(z, i):
		d := g.val[z].(reg.VecVirtual)
		f231(g.op(y), g.reg(x), d)
		g.val[i] = d
	case g.isConst(z) && g.dead(x, i) && !g.isConst(y):
		d := g.val[x].(reg.VecVirtual)
		f213(g.op(z), g.reg(y), d)
		g.val[i] = d
	case g.isConst(z) && g.dead(y, i) && !g.isConst(x):
		d := g.val[y].(reg.VecVirtual)
		f213(g.op(z), g.reg(x), d)
		g.val[i] = d
	default:
		d := g.vec()
		if g.isConst(z) {
			VMOVUPS(g.op(z), d)
		} else {
			VMOVUPS(g.val[z], d)
		}
		f231(g.op(y), g.reg(x), d)
		g.val[i] = d
	}
}

// lookup emits node i = tab[idx]: one VPERMPS for float32; for float64 the index k becomes
// the pair (2k, 2k+1) of 32-bit indices, two VPERMPS read the two halves of the table and a
// blend on bit 2 of k picks one.
func (g *asmGen) lookup(i, idx int) {
	tab := g.data.Offset(g.cOff[i])
	d := g.vec()
	g.val[i] = d
	if g.f32 {
		VPERMPS(tab, g.reg(idx), d)
		return
	}
	if g.z {
		VPERMPD(tab, g.reg(idx), d) // the low three bits of each 64-bit index
		return
	}
	pm, ok := g.lut[idx]
	if !ok {
		k := g.reg(idx)
		pair, hi, mask := YMM(), YMM(), YMM()
		VPSLLQ(U8(1), k, pair)
		VPSLLQ(U8(33), k, hi)
		VPADDQ(hi, pair, pair)
		VPADDQ(g.data.Offset(g.emitDataLate(1<<32)), pair, pair)
		VPSLLQ(U8(61), k, mask)
		pm = [2]reg.VecVirtual{pair, mask}
		g.lut[idx] = pm
	}
	lo, hi := YMM(), YMM()
	VPERMPS(tab, pm[0], lo)
	VPERMPS(tab.Offset(32), pm[0], hi)
	VBLENDVPD(pm[1], hi, lo, d)
}

// emitDataLate adds a constant while the function's text is being written (DATA attaches
// to the global declared by GLOBL, which stays the active data section).
func (g *asmGen) emitDataLate(c uint64) int { return g.emitData(c) }
