// Command asmgen writes kernel's GEMM micro-kernels (gemm_amd64.s) with avo. It is a separate
// module so that building bulkad needs neither avo nor this generator: run
// `go generate ./kernel/` (which runs `go run .` here) after changing it and commit the .s file.
package main

import (
	"fmt"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

func main() {
	ConstraintExpr("amd64,!purego")
	micro("microF64FMA", 8, false)
	micro("microF32FMA", 4, true)
	Generate()
}

// micro emits func(kc int, a, b, c *T): the 4×(2·lanes) tile Σ_p a[p,0:4]ᵀ b[p,0:2·lanes]
// of two packed strips (a strip p-major with 4 values per p, b with 2·lanes = 8 (float64)
// or 16 (float32) per p), accumulated in eight YMM registers with FMA and stored row-major
// into c. size is the byte size of one element.
func micro(name string, size int, f32 bool) {
	TEXT(name, NOSPLIT, "func(kc int, a, b, c *"+map[bool]string{false: "float64", true: "float32"}[f32]+")")
	Doc(fmt.Sprintf("%s computes one 4×%d tile of packed strips with AVX2 and FMA.", name, 64/size))
	kc := Load(Param("kc"), GP64())
	a := Load(Param("a"), GP64())
	b := Load(Param("b"), GP64())
	c := Load(Param("c"), GP64())
	xor, bcast, load, fma, store := VXORPD, VBROADCASTSD, VMOVUPD, VFMADD231PD, VMOVUPD
	if f32 {
		xor, bcast, load, fma, store = VXORPS, VBROADCASTSS, VMOVUPS, VFMADD231PS, VMOVUPS
	}
	var acc [4][2]reg.VecVirtual
	for i := range acc {
		for j := range acc[i] {
			acc[i][j] = YMM()
			xor(acc[i][j], acc[i][j], acc[i][j])
		}
	}
	Label(name + "_loop")
	TESTQ(kc, kc)
	JE(LabelRef(name + "_done"))
	b0, b1 := YMM(), YMM()
	load(Mem{Base: b}, b0)
	load(Mem{Base: b, Disp: 32}, b1)
	for i := range acc {
		ai := YMM()
		bcast(Mem{Base: a, Disp: i * size}, ai)
		fma(b0, ai, acc[i][0])
		fma(b1, ai, acc[i][1])
	}
	ADDQ(U32(4*size), a)
	ADDQ(U32(64), b)
	DECQ(kc)
	JMP(LabelRef(name + "_loop"))
	Label(name + "_done")
	for i := range acc {
		for j := range acc[i] {
			store(acc[i][j], Mem{Base: c, Disp: i*64 + j*32})
		}
	}
	VZEROUPPER()
	RET()
}
