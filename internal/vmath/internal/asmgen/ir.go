package main

import (
	"fmt"
	"math"
	"math/big"
)

// kind is what an IR value holds: a float of the function's dtype, its bit pattern as an
// unsigned integer of the same width, or a lane mask (a bool in Go, all-ones bits in assembly).
type kind uint8

const (
	kF kind = iota
	kU
	kM
)

// opc is an IR operation. Every operation has one meaning that both back ends implement
// exactly (IEEE round to nearest even, no fusion except FMA), so that the Go function and the
// assembly return the same bits.
type opc uint8

const (
	oInput  opc = iota
	oConstF     // f (already rounded to the dtype)
	oConstU     // u
	oAdd        // a+b
	oSub        // a-b
	oMul        // a*b
	oDiv        // a/b
	oFMA        // a*b+c, rounded once
	oFNMA       // -(a*b)+c, rounded once
	oMin        // a<b ? a : b (the MINPD rule)
	oMax        // a>b ? a : b (the MAXPD rule)
	oAnd        // a&b (U)
	oOr         // a|b (U)
	oAndNot     // a&^b (U)
	oIAdd       // a+b (U, wrapping)
	oISub       // a-b (U, wrapping)
	oShl        // a<<n (U)
	oShr        // a>>n (U, logical)
	oBits       // the bits of a float (no instruction)
	oFloat      // the float of bits (no instruction)
	oLT         // a<b (M; false when unordered)
	oEQ         // a==b (M; false when unordered)
	oNotLT      // !(a<b) (M; true when unordered)
	oUnord      // a or b is NaN (M)
	oSel        // m ? a : b (F)
	oLookup     // tab[a&7] (U index → F)
)

// node is one IR operation with its operands (indices of earlier nodes).
type node struct {
	op  opc
	k   kind
	a   []int
	f   float64
	u   uint64
	n   uint
	tab []float64
}

// fn is one function of one dtype in IR form: input node 0, result out.
type fn struct {
	name   string // exported base name, e.g. "Exp"
	f32    bool
	doc    string
	nodes  []node
	out    int
	consts map[string]int
}

// V is an IR value (an index into fn.nodes).
type V int

// B builds the IR of one function.
type B struct{ *fn }

func newB(name string, f32 bool, doc string) *B {
	f := &fn{name: name, f32: f32, doc: doc, consts: map[string]int{}}
	f.nodes = append(f.nodes, node{op: oInput, k: kF})
	return &B{f}
}

// bits is the width of the dtype in bits.
func (b *B) bits() uint {
	if b.f32 {
		return 32
	}
	return 64
}

func (b *B) push(n node) V {
	for _, a := range n.a {
		if a < 0 || a >= len(b.nodes) {
			panic("asmgen: operand out of range")
		}
	}
	b.nodes = append(b.nodes, n)
	return V(len(b.nodes) - 1)
}

func (b *B) want(v V, k kind) {
	if b.nodes[v].k != k {
		panic(fmt.Sprintf("asmgen: %s: value %d is kind %d, want %d", b.name, v, b.nodes[v].k, k))
	}
}

// In is the input x.
func (b *B) In() V { return 0 }

// Out sets the result.
func (b *B) Out(v V) { b.want(v, kF); b.out = int(v) }

// C is the float constant f rounded to the dtype.
func (b *B) C(f float64) V {
	if b.f32 {
		f = float64(float32(f))
	}
	key := fmt.Sprintf("f%x", math.Float64bits(f))
	if i, ok := b.consts[key]; ok {
		return V(i)
	}
	v := b.push(node{op: oConstF, k: kF, f: f})
	b.consts[key] = int(v)
	return v
}

// CB is the constant x (high precision) rounded once to the dtype.
func (b *B) CB(x *big.Float) V {
	if b.f32 {
		f, _ := x.Float32()
		return b.C(float64(f))
	}
	f, _ := x.Float64()
	return b.C(f)
}

// U is the bit constant u (truncated to the dtype's width).
func (b *B) U(u uint64) V {
	if b.f32 {
		u &= math.MaxUint32
	}
	key := fmt.Sprintf("u%x", u)
	if i, ok := b.consts[key]; ok {
		return V(i)
	}
	v := b.push(node{op: oConstU, k: kU, u: u})
	b.consts[key] = int(v)
	return v
}

func (b *B) bin(op opc, k, out kind, x, y V) V {
	b.want(x, k)
	b.want(y, k)
	return b.push(node{op: op, k: out, a: []int{int(x), int(y)}})
}

func (b *B) Add(x, y V) V    { return b.bin(oAdd, kF, kF, x, y) }
func (b *B) Sub(x, y V) V    { return b.bin(oSub, kF, kF, x, y) }
func (b *B) Mul(x, y V) V    { return b.bin(oMul, kF, kF, x, y) }
func (b *B) Div(x, y V) V    { return b.bin(oDiv, kF, kF, x, y) }
func (b *B) Min(x, y V) V    { return b.bin(oMin, kF, kF, x, y) }
func (b *B) Max(x, y V) V    { return b.bin(oMax, kF, kF, x, y) }
func (b *B) And(x, y V) V    { return b.bin(oAnd, kU, kU, x, y) }
func (b *B) Or(x, y V) V     { return b.bin(oOr, kU, kU, x, y) }
func (b *B) AndNot(x, y V) V { return b.bin(oAndNot, kU, kU, x, y) }
func (b *B) IAdd(x, y V) V   { return b.bin(oIAdd, kU, kU, x, y) }
func (b *B) ISub(x, y V) V   { return b.bin(oISub, kU, kU, x, y) }
func (b *B) LT(x, y V) V     { return b.bin(oLT, kF, kM, x, y) }
func (b *B) EQ(x, y V) V     { return b.bin(oEQ, kF, kM, x, y) }
func (b *B) NotLT(x, y V) V  { return b.bin(oNotLT, kF, kM, x, y) }
func (b *B) Unord(x, y V) V  { return b.bin(oUnord, kF, kM, x, y) }

// FMA is x*y+z rounded once.
func (b *B) FMA(x, y, z V) V {
	b.want(x, kF)
	b.want(y, kF)
	b.want(z, kF)
	return b.push(node{op: oFMA, k: kF, a: []int{int(x), int(y), int(z)}})
}

// FNMA is -(x*y)+z rounded once.
func (b *B) FNMA(x, y, z V) V {
	b.want(x, kF)
	b.want(y, kF)
	b.want(z, kF)
	return b.push(node{op: oFNMA, k: kF, a: []int{int(x), int(y), int(z)}})
}

// DivAdd is n/(m+c) with the denominator kept to twice the precision (TwoSum) and the
// quotient corrected once by its exact residual: n/(m+c) with about one rounding.
func (b *B) DivAdd(n, m, c V) V {
	s := b.Add(m, c)
	bb := b.Sub(s, m)
	aa := b.Sub(s, bb)
	lo := b.Add(b.Sub(m, aa), b.Sub(c, bb))
	q := b.Div(n, s)
	rr := b.FNMA(q, s, n)
	rr = b.FNMA(q, lo, rr)
	return b.Add(q, b.Div(rr, s))
}

func (b *B) Shl(x V, n uint) V {
	b.want(x, kU)
	return b.push(node{op: oShl, k: kU, a: []int{int(x)}, n: n})
}

func (b *B) Shr(x V, n uint) V {
	b.want(x, kU)
	return b.push(node{op: oShr, k: kU, a: []int{int(x)}, n: n})
}

// Bits reinterprets a float as its bits.
func (b *B) Bits(x V) V {
	b.want(x, kF)
	return b.push(node{op: oBits, k: kU, a: []int{int(x)}})
}

// Float reinterprets bits as a float.
func (b *B) Float(x V) V {
	b.want(x, kU)
	return b.push(node{op: oFloat, k: kF, a: []int{int(x)}})
}

// Sel is m ? x : y.
func (b *B) Sel(m, x, y V) V {
	b.want(m, kM)
	b.want(x, kF)
	b.want(y, kF)
	return b.push(node{op: oSel, k: kF, a: []int{int(m), int(x), int(y)}})
}

// Lookup is tab[idx] for idx in 0..7 (idx must already be masked to 0..7); tab has at most 8
// entries, rounded to the dtype.
func (b *B) Lookup(idx V, tab []float64) V {
	b.want(idx, kU)
	if len(tab) > 8 {
		panic("asmgen: lookup table longer than 8")
	}
	t := make([]float64, 8)
	for i, v := range tab {
		if b.f32 {
			v = float64(float32(v))
		}
		t[i] = v
	}
	return b.push(node{op: oLookup, k: kF, a: []int{int(idx)}, tab: t})
}

// Horner is c[0] + t*(c[1] + t*(c[2] + ...)) with one FMA a step.
func (b *B) Horner(t V, c []V) V {
	p := c[len(c)-1]
	for i := len(c) - 2; i >= 0; i-- {
		p = b.FMA(p, t, c[i])
	}
	return p
}

// signMask is the sign bit of the dtype.
func (b *B) signMask() V { return b.U(1 << (b.bits() - 1)) }

// Abs is |x| (clearing the sign bit).
func (b *B) Abs(x V) V { return b.Float(b.AndNot(b.Bits(x), b.signMask())) }

// CopySignOf sets the sign of r (which is non-negative) to that of x.
func (b *B) CopySignOf(r, x V) V {
	return b.Float(b.Or(b.Bits(r), b.And(b.Bits(x), b.signMask())))
}

// KeepNaN returns x where x is NaN, r elsewhere (the math package returns a NaN input itself).
func (b *B) KeepNaN(x, r V) V { return b.Sel(b.Unord(x, x), x, r) }
