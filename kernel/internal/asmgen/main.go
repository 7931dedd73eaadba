// Command asmgen writes kernel's GEMM micro-kernels (gemm_amd64.s) with avo. It is a separate
// module so that building bulkad needs neither avo nor this generator: run
// `go generate ./kernel/` (which runs `go run .` here) after changing it and commit the .s file.
package main

import (
	"fmt"
	"strings"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

func main() {
	ConstraintExpr("amd64,!purego")
	// AVX2+FMA: 6 rows × 2 YMM (12 accumulators of the 16 registers).
	micro(kernel{name: "microF64AVX2", rows: 6, f32: false, avx512: false})
	micro(kernel{name: "microF32AVX2", rows: 6, f32: true, avx512: false})
	// AVX-512F: 8 rows × 2 ZMM (16 accumulators of the 32 registers).
	micro(kernel{name: "microF64AVX512", rows: 8, f32: false, avx512: true})
	micro(kernel{name: "microF32AVX512", rows: 8, f32: true, avx512: true})
	// The same with a read straight from the matrix (rows lda elements apart), for products
	// whose A block is used by only one or two column strips (narrow n), where packing A
	// costs as much as the multiplication.
	micro(kernel{name: "microF64AVX512U", rows: 8, f32: false, avx512: true, unpacked: true})
	micro(kernel{name: "microF32AVX512U", rows: 8, f32: true, avx512: true, unpacked: true})
	// And with a transposed matrix read in place (op(a) = aᵀ: the 8 values of a step p
	// contiguous, steps lda elements apart), for the same narrow products with a transposed.
	micro(kernel{name: "microF64AVX512T", rows: 8, f32: false, avx512: true, stridedA: true})
	micro(kernel{name: "microF32AVX512T", rows: 8, f32: true, avx512: true, stridedA: true})
	// And with b read in place (rows ldb elements apart, two vectors of each), for products
	// whose B strips are used by only one or two row strips (small m), where packing B costs
	// as much as the multiplication.
	micro(kernel{name: "microF64AVX512B", rows: 8, f32: false, avx512: true, unpackedB: true})
	micro(kernel{name: "microF32AVX512B", rows: 8, f32: true, avx512: true, unpackedB: true})
	// The packed and the A-in-place kernels with non-temporal stores (c 64-byte aligned), for
	// products of a few terms into a c larger than the L2: each store would otherwise read
	// its line from memory first (a batch-2 layer-4 filter gradient writes 9.4 MB of c).
	micro(kernel{name: "microF64AVX512NT", rows: 8, f32: false, avx512: true, nt: true})
	micro(kernel{name: "microF32AVX512NT", rows: 8, f32: true, avx512: true, nt: true})
	micro(kernel{name: "microF64AVX512UNT", rows: 8, f32: false, avx512: true, unpacked: true, nt: true})
	micro(kernel{name: "microF32AVX512UNT", rows: 8, f32: true, avx512: true, unpacked: true, nt: true})
	storeFence()
	// AVX-512F dot-product tiles for narrow products (n below one column strip): every element
	// of c is a dot product along k, vectorised along k, so no lane is spent on padding
	// columns; 4 or 1 rows × 1 to 5 columns.
	for _, f32 := range []bool{false, true} {
		for _, rows := range []int{4, 1} {
			for cols := 1; cols <= 5; cols++ {
				dot(dotKernel{rows: rows, cols: cols, f32: f32})
			}
		}
	}
	// AVX2 element-wise loops (+ − · ÷ of two slices, and of a slice and a scalar on either
	// side): the same IEEE operations as Go's scalar code on amd64 (no fusion), so the
	// results are equal to the bit.
	for _, f32 := range []bool{false, true} {
		for _, op := range []string{"add", "sub", "mul", "div"} {
			elemVV(op, f32)
		}
		for _, op := range []string{"add", "sub", "rsub", "mul", "div", "rdiv"} {
			elemVS(op, f32)
		}
		neg(f32)
		fill(f32)
		if f32 {
			argmax4()
		}
		boolTo(f32)
		for _, cmp := range []string{"gt", "ge", "lt", "le"} {
			maskVS(cmp, f32)
		}
		for _, op := range []string{"max", "min"} {
			minMax(op, false, f32)
			minMax(op, true, f32)
		}
		for _, cmp := range []string{"lt", "le", "gt", "ge", "eq", "ne"} {
			cmpVS(cmp, f32)
		}
		axpy(f32)
		for k := 1; k <= 8; k++ {
			colSum(k, f32)
		}
		transpose(f32)
		rowSums(f32)
		addRows(f32)
		copyRows(f32)
		mulAddRep(f32)
		axpyTaps(f32)
		gatherAxpy(f32)
		reduceTaps9(f32)
		winDot(f32, true, 1)
		winDot(f32, true, 2)
		winDot(f32, false, 1)
		for _, avx512 := range []bool{true, false} {
			dwForward(f32, avx512)
			dwFilter(f32, avx512)
			dwFilter9(f32, avx512)
			dwInput(f32, avx512)
		}
	}
	Generate()
}

// kernel describes one micro-kernel: a rows × (2 vectors) tile of c.
type kernel struct {
	name      string
	rows      int
	f32       bool
	avx512    bool
	unpacked  bool // a is the matrix itself (8 rows, lda elements apart), not a packed strip
	unpackedB bool // b is the matrix itself (rows ldb elements apart), not a packed strip
	stridedA  bool // a is a transposed matrix itself: a step's rows contiguous, steps lda apart
	nt        bool // non-temporal stores into c (64-byte aligned rows)
}

// storeFence emits func storeFence(): an SFENCE, ordering the non-temporal stores before it
// with every store after it.
func storeFence() {
	TEXT("storeFence", NOSPLIT, "func()")
	Doc("storeFence orders the non-temporal stores before it (SFENCE).")
	SFENCE()
	RET()
}

// micro emits func(kc int, a, b, c *T, ldc int, add bool): the tile Σ_p a[p,0:rows]ᵀ b[p,0:w]
// of two packed strips (a p-major with rows values per p, b with w = 2 vectors per p), stored
// into c (row i at c + i·ldc elements) or, with add, added to it. Accumulators stay in
// registers for the whole k loop; a is broadcast one element at a time.
func micro(k kernel) {
	typ, size, lanes := "float64", 8, 4
	if k.f32 {
		typ, size, lanes = "float32", 4, 8
	}
	vecBytes := 32
	if k.avx512 {
		lanes *= 2
		vecBytes = 64
	}
	w := 2 * lanes
	sig := fmt.Sprintf("func(kc int, a, b, c *%s, ldc int, add bool)", typ)
	if k.unpacked || k.stridedA {
		sig = fmt.Sprintf("func(kc int, a *%s, lda int, b, c *%s, ldc int, add bool)", typ, typ)
	}
	if k.unpackedB {
		sig = fmt.Sprintf("func(kc int, a, b *%s, ldb int, c *%s, ldc int, add bool)", typ, typ)
	}
	TEXT(k.name, NOSPLIT, sig)
	isa := "AVX2 and FMA"
	if k.avx512 {
		isa = "AVX-512F"
	}
	what := "packed strips"
	if k.unpacked {
		what = "rows of a (lda apart) and a packed strip of b"
	}
	if k.unpackedB {
		what = "a packed strip of a and rows of b (ldb apart)"
	}
	if k.stridedA {
		what = "a strip of a read in place (steps lda apart) and a packed strip of b"
	}
	if k.nt {
		what += ", non-temporal stores (c and ldc·size multiples of 64 bytes)"
	}
	Doc(fmt.Sprintf("%s computes one %d×%d tile of %s with %s into c (row stride ldc), adding to c when add is set.", k.name, k.rows, w, what, isa))
	kc := Load(Param("kc"), GP64())
	a := Load(Param("a"), GP64())
	// Unpacked: rows 0–3 at a + {0,1,2,3}·lda, rows 4–7 at a4 = a + 4·lda likewise (lda in bytes).
	var lda, lda3, a4 reg.Register
	if k.stridedA {
		lda = Load(Param("lda"), GP64())
		SHLQ(U8(map[bool]uint8{false: 3, true: 2}[k.f32]), lda)
	}
	if k.unpacked {
		lda = Load(Param("lda"), GP64())
		SHLQ(U8(map[bool]uint8{false: 3, true: 2}[k.f32]), lda)
		lda3 = GP64()
		LEAQ(Mem{Base: lda, Index: lda, Scale: 2}, lda3)
		a4 = GP64()
		LEAQ(Mem{Base: a, Index: lda, Scale: 4}, a4)
	}
	rowAddr := func(i int) Mem {
		if !k.unpacked {
			return Mem{Base: a, Disp: i * size}
		}
		base := a
		if i >= 4 {
			base, i = a4, i-4
		}
		return rowAt(base, lda, lda3, i)
	}
	b := Load(Param("b"), GP64())
	var ldb, ahead reg.Register
	if k.unpackedB {
		ldb, ahead = bRows(k.f32)
	}
	c := Load(Param("c"), GP64())
	ldc := Load(Param("ldc"), GP64())
	add := Load(Param("add"), GP8())
	vec := func() reg.VecVirtual {
		if k.avx512 {
			return ZMM()
		}
		return YMM()
	}
	xor, bcast, load, fma, store, vadd := VXORPD, VBROADCASTSD, VMOVUPD, VFMADD231PD, VMOVUPD, VADDPD
	if k.f32 {
		xor, bcast, load, fma, store, vadd = VXORPS, VBROADCASTSS, VMOVUPS, VFMADD231PS, VMOVUPS, VADDPS
	}
	if k.nt {
		nt := VMOVNTPD
		if k.f32 {
			nt = VMOVNTPS
		}
		store = func(ops ...Op) { nt(ops[0], ops[1]) }
	}
	acc := make([][2]reg.VecVirtual, k.rows)
	for i := range acc {
		for j := range acc[i] {
			acc[i][j] = vec()
			xor(acc[i][j], acc[i][j], acc[i][j])
		}
	}
	prefetchTile(k, c, ldc, w*size)
	Label(k.name + "_loop")
	TESTQ(kc, kc)
	JE(LabelRef(k.name + "_done"))
	b0, b1 := vec(), vec()
	if k.unpackedB {
		PREFETCHT0(Mem{Base: b, Index: ahead, Scale: 1})
		PREFETCHT0(Mem{Base: b, Index: ahead, Scale: 1, Disp: vecBytes})
	}
	load(Mem{Base: b}, b0)
	load(Mem{Base: b, Disp: vecBytes}, b1)
	for i := range acc {
		ai := vec()
		bcast(rowAddr(i), ai)
		fma(b0, ai, acc[i][0])
		fma(b1, ai, acc[i][1])
	}
	if k.unpacked {
		ADDQ(U32(size), a)
		ADDQ(U32(size), a4)
	} else if k.stridedA {
		ADDQ(lda, a)
	} else {
		ADDQ(U32(k.rows*size), a)
	}
	if k.unpackedB {
		ADDQ(ldb, b)
	} else {
		ADDQ(U32(2*vecBytes), b)
	}
	DECQ(kc)
	JMP(LabelRef(k.name + "_loop"))
	Label(k.name + "_done")
	SHLQ(U8(map[bool]uint8{false: 3, true: 2}[k.f32]), ldc) // elements → bytes
	TESTB(add, add)
	JE(LabelRef(k.name + "_store"))
	row := GP64()
	MOVQ(c, row)
	for i := range acc {
		for j := range acc[i] {
			vadd(Mem{Base: row, Disp: j * vecBytes}, acc[i][j], acc[i][j])
		}
		ADDQ(ldc, row)
	}
	Label(k.name + "_store")
	for i := range acc {
		for j := range acc[i] {
			store(acc[i][j], Mem{Base: c, Disp: j * vecBytes})
		}
		ADDQ(ldc, c)
	}
	VZEROUPPER()
	RET()
}

// prefetchTile emits the prefetch of a micro-kernel's tile of c (k.rows rows of n bytes, ldc
// elements apart), which it stores (or adds to) after the k loop: a c not written since the
// step before, in memory, otherwise stalls the stores at the end on each line's read (the
// transformer's cold 256×512×128 float64 product spent 0.3 ms more in the micro-kernel than
// with c in the caches); the loop hides the reads. The non-temporal kernels store past the
// caches and prefetch nothing.
func prefetchTile(k kernel, c, ldc reg.Register, n int) {
	if k.nt {
		return
	}
	pc, ldcB := GP64(), GP64()
	MOVQ(ldc, ldcB)
	SHLQ(U8(map[bool]uint8{false: 3, true: 2}[k.f32]), ldcB) // elements → bytes
	MOVQ(c, pc)
	for i := 0; i < k.rows; i++ {
		for _, d := range tileLines(n) {
			PREFETCHT0(Mem{Base: pc, Disp: d})
		}
		if i < k.rows-1 {
			ADDQ(ldcB, pc)
		}
	}
}

// tileLines are the offsets of a tile row of n bytes (n ≥ 64) that touch every cache line it
// spans wherever it starts: every 64 bytes and its last byte.
func tileLines(n int) []int {
	var ds []int
	for d := 0; d < n; d += 64 {
		ds = append(ds, d)
	}
	return append(ds, n-1)
}

// bRows loads ldb (elements → bytes) for a micro-kernel that reads b in place, and the
// distance of the row eight ahead, which the kernel prefetches into the L1: rows of b lie ldb
// apart, and a cold b read in place from memory runs 10–15% faster so (BenchmarkGemmCold,
// session 19).
func bRows(f32 bool) (ldb, ahead reg.Register) {
	ldb = Load(Param("ldb"), GP64())
	SHLQ(U8(map[bool]uint8{false: 3, true: 2}[f32]), ldb)
	ahead = GP64()
	MOVQ(ldb, ahead)
	SHLQ(U8(3), ahead)
	return ldb, ahead
}

// dotKernel describes one dot-product tile: rows × cols elements of c, each Σ_p a[i,p]·b[j,p].
type dotKernel struct {
	rows, cols int
	f32        bool
}

// dotName is the name of the dot-product kernel of the given shape and dtype.
func dotName(k dotKernel) string {
	t := "F64"
	if k.f32 {
		t = "F32"
	}
	return fmt.Sprintf("dot%s%dx%d", t, k.rows, k.cols)
}

// dot emits func(kc int, a *T, lda int, b *T, ldb int, c *T, ldc int, add bool): c[i*ldc+j]
// = Σ_{p<kc} a[i*lda+p]·b[j*ldb+p] for i < rows, j < cols (added to c with add). kc is a
// positive multiple of the vector length (8 float64, 16 float32); each accumulator is one
// vector of partial sums along k, reduced to a scalar at the end.
func dot(k dotKernel) {
	typ, size, lanes := "float64", 8, 8
	if k.f32 {
		typ, size, lanes = "float32", 4, 16
	}
	name := dotName(k)
	TEXT(name, NOSPLIT, fmt.Sprintf("func(kc int, a *%s, lda int, b *%s, ldb int, c *%s, ldc int, add bool)", typ, typ, typ))
	Doc(fmt.Sprintf("%s computes the %d×%d tile c[i*ldc+j] = Σ_{p<kc} a[i*lda+p]·b[j*ldb+p] with AVX-512F, DQ and VL (kc a positive multiple of %d), adding to c when add is set.", name, k.rows, k.cols, lanes))
	shift := U8(map[bool]uint8{false: 3, true: 2}[k.f32])
	kc := Load(Param("kc"), GP64())
	a := Load(Param("a"), GP64())
	lda := Load(Param("lda"), GP64())
	SHLQ(shift, lda)
	b := Load(Param("b"), GP64())
	ldb := Load(Param("ldb"), GP64())
	SHLQ(shift, ldb)
	lda3, ldb3 := GP64(), GP64()
	LEAQ(Mem{Base: lda, Index: lda, Scale: 2}, lda3)
	LEAQ(Mem{Base: ldb, Index: ldb, Scale: 2}, ldb3)
	// rows of a at a + i·lda, rows of b at b + j·ldb (i < 4, j < 5)
	at := rowAt
	xor, load, fma := VXORPD, VMOVUPD, VFMADD231PD
	if k.f32 {
		xor, load, fma = VXORPS, VMOVUPS, VFMADD231PS
	}
	acc := make([][]reg.VecVirtual, k.rows)
	for i := range acc {
		acc[i] = make([]reg.VecVirtual, k.cols)
		for j := range acc[i] {
			acc[i][j] = ZMM()
			xor(acc[i][j], acc[i][j], acc[i][j])
		}
	}
	Label(name + "_loop")
	av := make([]reg.VecVirtual, k.rows)
	for i := range av {
		av[i] = ZMM()
		load(at(a, lda, lda3, i), av[i])
	}
	for j := 0; j < k.cols; j++ {
		bj := ZMM()
		load(at(b, ldb, ldb3, j), bj)
		for i := range av {
			fma(av[i], bj, acc[i][j])
		}
	}
	ADDQ(U32(64), a)
	ADDQ(U32(64), b)
	SUBQ(U32(lanes), kc)
	JNE(LabelRef(name + "_loop"))
	// Reduce each accumulator to a scalar and store it (or add it) into c.
	c := Load(Param("c"), GP64())
	ldc := Load(Param("ldc"), GP64())
	SHLQ(shift, ldc)
	add := Load(Param("add"), GP8())
	ext256, ext128, vadd, sadd, smov := VEXTRACTF64X4, VEXTRACTF64X2, VADDPD, VADDSD, VMOVSD
	if k.f32 {
		ext256, ext128, vadd, sadd, smov = VEXTRACTF32X8, VEXTRACTF32X4, VADDPS, VADDSS, VMOVSS
	}
	for i := range acc {
		for j := range acc[i] {
			z := acc[i][j]
			y, x, t := YMM(), XMM(), XMM()
			out := Mem{Base: c, Disp: j * size}
			// halve the vector until one lane is left
			ext256(U8(1), z, y)
			vadd(y, z.AsY(), y)
			ext128(U8(1), y, x)
			vadd(x, y.AsX(), x)
			if k.f32 {
				VMOVHLPS(x, x, t)
				VADDPS(t, x, x)
				VMOVSHDUP(x, t)
			} else {
				VUNPCKHPD(x, x, t)
			}
			sadd(t, x, x)
			skip := fmt.Sprintf("%s_set_%d_%d", name, i, j)
			TESTB(add, add)
			JE(LabelRef(skip))
			sadd(out, x, x)
			Label(skip)
			smov(x, out)
		}
		ADDQ(ldc, c)
	}
	VZEROUPPER()
	RET()
}

// rowAt addresses row i (at most 4) of a matrix at base with rows ld bytes apart (ld3 = 3·ld).
func rowAt(base, ld, ld3 reg.Register, i int) Mem {
	switch i {
	case 0:
		return Mem{Base: base}
	case 1:
		return Mem{Base: base, Index: ld, Scale: 1}
	case 2:
		return Mem{Base: base, Index: ld, Scale: 2}
	case 3:
		return Mem{Base: base, Index: ld3, Scale: 1}
	}
	return Mem{Base: base, Index: ld, Scale: 4}
}

// elemName is the name of an element-wise loop: vec<Op><VV|VS><F32|F64>.
func elemName(op string, scalar, f32 bool) string {
	form, t := "VV", "F64"
	if scalar {
		form = "VS"
	}
	if f32 {
		t = "F32"
	}
	return "vec" + strings.ToUpper(op[:1]) + op[1:] + form + t
}

// elemInstr is the AVX packed instruction of op (rsub and rdiv are sub and div with the
// operands swapped).
func elemInstr(op string, f32 bool) func(...Op) {
	switch op {
	case "add":
		return map[bool]func(...Op){false: VADDPD, true: VADDPS}[f32]
	case "sub", "rsub":
		return map[bool]func(...Op){false: VSUBPD, true: VSUBPS}[f32]
	case "mul":
		return map[bool]func(...Op){false: VMULPD, true: VMULPS}[f32]
	}
	return map[bool]func(...Op){false: VDIVPD, true: VDIVPS}[f32]
}

// elemVV emits func(dst, x, y *T, n int): dst[i] = x[i] op y[i] for i < n rounded down to
// whole vectors (4 vectors a step, then one); the caller does the rest.
func elemVV(op string, f32 bool) {
	typ, lanes, load, store := "float64", 4, VMOVUPD, VMOVUPD
	if f32 {
		typ, lanes, load, store = "float32", 8, VMOVUPS, VMOVUPS
	}
	name := elemName(op, false, f32)
	TEXT(name, NOSPLIT, fmt.Sprintf("func(dst, x, y *%s, n int)", typ))
	Doc(fmt.Sprintf("%s sets dst[i] = x[i] %s y[i] with AVX2 for i below n rounded down to a multiple of %d.", name, map[string]string{"add": "+", "sub": "-", "mul": "*", "div": "/"}[op], lanes))
	dst := Load(Param("dst"), GP64())
	x := Load(Param("x"), GP64())
	y := Load(Param("y"), GP64())
	n := Load(Param("n"), GP64())
	ins := elemInstr(op, f32)
	elemLoops(name, lanes, n, []reg.Register{dst, x, y}, func(off int, v reg.VecVirtual) {
		load(Mem{Base: x, Disp: off}, v)
		ins(Mem{Base: y, Disp: off}, v, v)
		store(v, Mem{Base: dst, Disp: off})
	})
}

// elemVS emits func(dst, x *T, s T, n int): dst[i] = x[i] op s (rsub: s − x[i], rdiv:
// s / x[i]) for i < n rounded down to whole vectors.
func elemVS(op string, f32 bool) {
	typ, lanes, _ := elemType(f32)
	load, store := VMOVUPD, VMOVUPD
	if f32 {
		load, store = VMOVUPS, VMOVUPS
	}
	name := elemName(op, true, f32)
	TEXT(name, NOSPLIT, fmt.Sprintf("func(dst, x *%s, s %s, n int)", typ, typ))
	sym := map[string]string{"add": "x[i] + s", "sub": "x[i] - s", "rsub": "s - x[i]", "mul": "x[i] * s", "div": "x[i] / s", "rdiv": "s / x[i]"}[op]
	Doc(fmt.Sprintf("%s sets dst[i] = %s with AVX2 for i below n rounded down to a multiple of %d.", name, sym, lanes))
	dst := Load(Param("dst"), GP64())
	x := Load(Param("x"), GP64())
	n := Load(Param("n"), GP64())
	sv := bcastParam("s", f32)
	ins := elemInstr(op, f32)
	swapped := op == "rsub" || op == "rdiv"
	elemLoops(name, lanes, n, []reg.Register{dst, x}, func(off int, v reg.VecVirtual) {
		if swapped {
			ins(Mem{Base: x, Disp: off}, sv, v)
		} else {
			load(Mem{Base: x, Disp: off}, v)
			ins(sv, v, v)
		}
		store(v, Mem{Base: dst, Disp: off})
	})
}

// elemLoops emits the loops of an element-wise kernel over n elements (lanes a vector):
// body(off, v) computes the vector at byte offset off from the pointers ptrs, which advance
// by 4 vectors a step, then by one; the last n mod lanes elements are left.
func elemLoops(name string, lanes int, n reg.Register, ptrs []reg.Register, body func(off int, v reg.VecVirtual)) {
	Label(name + "_four")
	CMPQ(n, U32(4*lanes))
	JL(LabelRef(name + "_one"))
	for u := 0; u < 4; u++ {
		body(32*u, YMM())
	}
	for _, p := range ptrs {
		ADDQ(U32(4*32), p)
	}
	SUBQ(U32(4*lanes), n)
	JMP(LabelRef(name + "_four"))
	Label(name + "_one")
	CMPQ(n, U32(lanes))
	JL(LabelRef(name + "_done"))
	body(0, YMM())
	for _, p := range ptrs {
		ADDQ(U32(32), p)
	}
	SUBQ(U32(lanes), n)
	JMP(LabelRef(name + "_one"))
	Label(name + "_done")
	VZEROUPPER()
	RET()
}

// boolTo emits func(dst *T, src *bool, n int): dst[i] = 1 if src[i] else 0 (Go's bools are the
// bytes 0 and 1: zero-extended to 32-bit integers and converted) for i < n rounded down to
// whole vectors; the caller does the rest.
func boolTo(f32 bool) {
	typ, lanes, t := elemType(f32)
	name := "vecBool" + t
	TEXT(name, NOSPLIT, fmt.Sprintf("func(dst *%s, src *bool, n int)", typ))
	Doc(fmt.Sprintf("%s sets dst[i] = 1 where src[i] and 0 elsewhere with AVX2 for i below n rounded down to a multiple of %d.", name, lanes))
	dst := Load(Param("dst"), GP64())
	src := Load(Param("src"), GP64())
	n := Load(Param("n"), GP64())
	Label(name + "_loop")
	CMPQ(n, U32(lanes))
	JL(LabelRef(name + "_done"))
	if f32 {
		v := YMM()
		VPMOVZXBD(Mem{Base: src}, v)
		VCVTDQ2PS(v, v)
		VMOVUPS(v, Mem{Base: dst})
	} else {
		x, v := XMM(), YMM()
		VPMOVZXBD(Mem{Base: src}, x)
		VCVTDQ2PD(x, v)
		VMOVUPD(v, Mem{Base: dst})
	}
	loopEnd(name, n, lanes, []reg.Register{src, dst}, []int{lanes, 32})
}

// maskVS emits func(dst, p, z *T, q T, n int): dst[i] = z[i] · (1 if p[i] cmp q else 0)
// (the derivative of a ReLU), comparing with the ordered predicates (false for a NaN, as Go's
// comparisons), the 0 or 1 made by a mask of the constant 1 and multiplied as Go's scalar
// loop does (so a NaN or an infinite z times 0 is NaN), for i < n rounded down to whole
// vectors.
func maskVS(cmp string, f32 bool) {
	typ, lanes, t := elemType(f32)
	name := "vecMask" + strings.ToUpper(cmp[:1]) + cmp[1:] + t
	TEXT(name, NOSPLIT, fmt.Sprintf("func(dst, p, z *%s, q %s, n int)", typ, typ))
	Doc(fmt.Sprintf("%s sets dst[i] = z[i] * (1 if p[i] %s q else 0) with AVX2 for i below n rounded down to a multiple of %d.", name, map[string]string{"gt": ">", "ge": ">=", "lt": "<", "le": "<="}[cmp], lanes))
	dst := Load(Param("dst"), GP64())
	p := Load(Param("p"), GP64())
	z := Load(Param("z"), GP64())
	n := Load(Param("n"), GP64())
	pred := map[string]uint8{"gt": 0x1e, "ge": 0x1d, "lt": 0x11, "le": 0x12}[cmp]
	qv := bcastParam("q", f32)
	one := bcastConst(map[bool]uint64{false: 0x3ff0000000000000, true: 0x3f800000}[f32], f32)
	cmpI, and, mul, load, store := VCMPPD, VANDPD, VMULPD, VMOVUPD, VMOVUPD
	if f32 {
		cmpI, and, mul, load, store = VCMPPS, VANDPS, VMULPS, VMOVUPS, VMOVUPS
	}
	Label(name + "_loop")
	CMPQ(n, U32(lanes))
	JL(LabelRef(name + "_done"))
	m, zv := YMM(), YMM()
	load(Mem{Base: p}, m)
	cmpI(U8(pred), qv, m, m) // m = p cmp q
	and(one, m, m)
	load(Mem{Base: z}, zv)
	mul(m, zv, zv)
	store(zv, Mem{Base: dst})
	loopEnd(name, n, lanes, []reg.Register{dst, p, z}, []int{32, 32, 32})
}

// minMax emits the element-wise max or min of two slices (func(dst, x, y *T, n int)) or of a
// slice and a scalar (func(dst, x *T, s T, n int)) with Go's rules (a NaN wins, +0 > −0), by
// the instruction sequence Go's compiler emits for its built-in min on amd64 — min(a, b) is
// m = MIN(a, b) (the second operand when unordered or equal), MIN(m, a) | m; max(a, b) is
// −min(−a, −b) with the negations as sign flips — packed, so that the results, NaN payloads
// included, are those of the scalar loops.
func minMax(op string, scalar, f32 bool) {
	typ, lanes, t := elemType(f32)
	form := "VV"
	sig := fmt.Sprintf("func(dst, x, y *%s, n int)", typ)
	if scalar {
		form = "VS"
		sig = fmt.Sprintf("func(dst, x *%s, s %s, n int)", typ, typ)
	}
	name := "vec" + strings.ToUpper(op[:1]) + op[1:] + form + t
	TEXT(name, NOSPLIT, sig)
	other := "y[i]"
	if scalar {
		other = "s"
	}
	Doc(fmt.Sprintf("%s sets dst[i] = %s(x[i], %s) (Go's built-in) with AVX2 for i below n rounded down to a multiple of %d.", name, op, other, lanes))
	dst := Load(Param("dst"), GP64())
	x := Load(Param("x"), GP64())
	var y reg.Register
	var sv reg.VecVirtual
	if scalar {
		sv = bcastParam("s", f32)
	} else {
		y = Load(Param("y"), GP64())
	}
	n := Load(Param("n"), GP64())
	load, mn, or, xor := VMOVUPD, VMINPD, VORPD, VXORPD
	if f32 {
		load, mn, or, xor = VMOVUPS, VMINPS, VORPS, VXORPS
	}
	var sign reg.VecVirtual
	if op == "max" {
		sign = bcastConst(map[bool]uint64{false: 0x8000000000000000, true: 0x80000000}[f32], f32)
		if scalar {
			xor(sign, sv, sv) // −s, once
		}
	}
	ptrs := []reg.Register{dst, x}
	if !scalar {
		ptrs = append(ptrs, y)
	}
	Label(name + "_loop")
	CMPQ(n, U32(lanes))
	JL(LabelRef(name + "_done"))
	a, b, m, m2 := YMM(), YMM(), YMM(), YMM()
	load(Mem{Base: x}, a)
	if scalar {
		b = sv
	} else {
		load(Mem{Base: y}, b)
	}
	if op == "max" {
		xor(sign, a, a)
		if !scalar {
			xor(sign, b, b)
		}
	}
	mn(b, a, m)  // m = MIN(a, b)
	mn(a, m, m2) // m2 = MIN(m, a)
	or(m, m2, m2)
	if op == "max" {
		xor(sign, m2, m2)
	}
	VMOVUPS(m2, Mem{Base: dst})
	loopEnd(name, n, lanes, ptrs, []int{32, 32, 32}[:len(ptrs)])
}

// cmpVS emits func(dst *bool, x *T, s T, n int): dst[i] = x[i] cmp s with Go's comparison
// rules (only != is true for a NaN) for i < n rounded down to whole vectors: the packed
// compare's sign bits (VMOVMSK) spread to one byte each, 0 or 1, by PDEP (BMI2).
func cmpVS(cmp string, f32 bool) {
	typ, lanes, t := elemType(f32)
	name := "vecCmp" + strings.ToUpper(cmp[:1]) + cmp[1:] + "VS" + t
	TEXT(name, NOSPLIT, fmt.Sprintf("func(dst *bool, x *%s, s %s, n int)", typ, typ))
	Doc(fmt.Sprintf("%s sets dst[i] = x[i] %s s with AVX2 and BMI2 for i below n rounded down to a multiple of %d.", name, map[string]string{"lt": "<", "le": "<=", "gt": ">", "ge": ">=", "eq": "==", "ne": "!="}[cmp], lanes))
	dst := Load(Param("dst"), GP64())
	x := Load(Param("x"), GP64())
	sv := bcastParam("s", f32)
	n := Load(Param("n"), GP64())
	// ordered, quiet predicates (false for a NaN) except != (unordered: true for a NaN)
	pred := map[string]uint8{"lt": 0x11, "le": 0x12, "gt": 0x1e, "ge": 0x1d, "eq": 0x00, "ne": 0x04}[cmp]
	spread := GP64()
	MOVQ(U64(0x0101010101010101), spread)
	Label(name + "_loop")
	CMPQ(n, U32(lanes))
	JL(LabelRef(name + "_done"))
	m := YMM()
	bits := GP64()
	if f32 {
		VMOVUPS(Mem{Base: x}, m)
		VCMPPS(U8(pred), sv, m, m)
		VMOVMSKPS(m, bits.As32())
	} else {
		VMOVUPD(Mem{Base: x}, m)
		VCMPPD(U8(pred), sv, m, m)
		VMOVMSKPD(m, bits.As32())
	}
	PDEPQ(spread, bits, bits)
	if f32 {
		MOVQ(bits, Mem{Base: dst})
	} else {
		MOVL(bits.As32(), Mem{Base: dst})
	}
	loopEnd(name, n, lanes, []reg.Register{dst, x}, []int{lanes, 32})
}

// elemType is the Go type of a dtype's elements, the lanes of a YMM vector of them and the
// suffix of the kernels' names.
func elemType(f32 bool) (typ string, lanes int, suffix string) {
	if f32 {
		return "float32", 8, "F32"
	}
	return "float64", 4, "F64"
}

// bcastParam broadcasts the scalar parameter name into a new YMM register.
func bcastParam(name string, f32 bool) reg.VecVirtual {
	v := YMM()
	if f32 {
		VBROADCASTSS(Load(Param(name), XMM()), v)
	} else {
		VBROADCASTSD(Load(Param(name), XMM()), v)
	}
	return v
}

// bcastConst broadcasts the float32 or float64 with the bit pattern bits into a new YMM
// register.
func bcastConst(bits uint64, f32 bool) reg.VecVirtual {
	v, x := YMM(), XMM()
	if f32 {
		tmp := GP32()
		MOVL(U32(uint32(bits)), tmp)
		MOVD(tmp, x)
		VBROADCASTSS(x, v)
	} else {
		tmp := GP64()
		MOVQ(U64(bits), tmp)
		MOVQ(tmp, x)
		VBROADCASTSD(x, v)
	}
	return v
}

// loopEnd closes the loop at name_loop: each pointer advances by its step in bytes, n by
// lanes, and name_done returns.
func loopEnd(name string, n reg.Register, lanes int, ptrs []reg.Register, steps []int) {
	for i, r := range ptrs {
		ADDQ(U32(steps[i]), r)
	}
	SUBQ(U32(lanes), n)
	JMP(LabelRef(name + "_loop"))
	Label(name + "_done")
	VZEROUPPER()
	RET()
}

// axpy emits func(dst, x *T, s T, n int): dst[i] = dst[i] + x[i]·s, the product rounded
// before the sum (no fused multiply-add: Go's scalar d += x*s on amd64), for i < n rounded
// down to whole vectors.
func axpy(f32 bool) {
	typ, lanes, t := elemType(f32)
	name := "vecAxpy" + t
	TEXT(name, NOSPLIT, fmt.Sprintf("func(dst, x *%s, s %s, n int)", typ, typ))
	Doc(fmt.Sprintf("%s sets dst[i] = dst[i] + x[i]*s (the product rounded first) with AVX2 for i below n rounded down to a multiple of %d.", name, lanes))
	dst := Load(Param("dst"), GP64())
	x := Load(Param("x"), GP64())
	sv := bcastParam("s", f32)
	n := Load(Param("n"), GP64())
	load, mul, add := VMOVUPD, VMULPD, VADDPD
	if f32 {
		load, mul, add = VMOVUPS, VMULPS, VADDPS
	}
	Label(name + "_loop")
	CMPQ(n, U32(lanes))
	JL(LabelRef(name + "_done"))
	p, d := YMM(), YMM()
	load(Mem{Base: x}, p)
	mul(sv, p, p) // x·s
	load(Mem{Base: dst}, d)
	add(p, d, d) // dst + x·s
	VMOVUPS(d, Mem{Base: dst})
	loopEnd(name, n, lanes, []reg.Register{dst, x}, []int{32, 32})
}

// colSum emits func(dst, x *T, ldx, rows int): dst[j] = dst[j] + x[j] + x[ldx+j] + … +
// x[(rows-1)·ldx+j] for the k vectors of columns j from dst (k ≤ 4 YMM of 8 float32 or 4
// float64), each column one addition chain in the order of the rows: the same sums, to the
// bit, as Go's scalar loop over the rows (a batch norm's per-channel sums of a [rows, c]
// matrix with a few channels, 30 ns a row as one call of the element-wise addition per row).
func colSum(k int, f32 bool) {
	typ, _, t := elemType(f32)
	name := fmt.Sprintf("colSum%d%s", k, t)
	TEXT(name, NOSPLIT, fmt.Sprintf("func(dst, x *%s, ldx, rows int)", typ))
	Doc(fmt.Sprintf("%s adds the sum of the rows (ldx elements apart, rows of them) of the first %d YMM vectors of columns of x into dst with AVX2, each column summed in the order of the rows.", name, k))
	dst := Load(Param("dst"), GP64())
	x := Load(Param("x"), GP64())
	ld := Load(Param("ldx"), GP64())
	n := Load(Param("rows"), GP64())
	load, add := VMOVUPD, VADDPD
	size := 8
	if f32 {
		load, add, size = VMOVUPS, VADDPS, 4
	}
	SHLQ(U8(map[int]uint8{4: 2, 8: 3}[size]), ld) // bytes between rows
	acc := make([]reg.VecVirtual, k)
	for i := range acc {
		acc[i] = YMM()
		load(Mem{Base: dst, Disp: 32 * i}, acc[i])
	}
	Label(name + "_loop")
	CMPQ(n, U32(0))
	JE(LabelRef(name + "_done"))
	for i := range acc {
		add(Mem{Base: x, Disp: 32 * i}, acc[i], acc[i])
	}
	ADDQ(ld, x)
	DECQ(n)
	JMP(LabelRef(name + "_loop"))
	Label(name + "_done")
	for i := range acc {
		load(acc[i], Mem{Base: dst, Disp: 32 * i})
	}
	VZEROUPPER()
	RET()
}
