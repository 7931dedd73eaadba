package kernel

import (
	"math"
	"math/rand"
	"runtime"
	"strings"
	"testing"

	"github.com/bulkad/bulkad/core"
)

// fusedRef evaluates a Fused kernel's code element by element with Go's scalar arithmetic
// and core's scalar functions: the reference the kernel's block loops must equal.
func fusedRef[T floatT](shape []int, code []FusedIns, leaves []FusedLeaf, xs [][]T) []T {
	n := core.Shape(shape).Size()
	out := make([]T, n)
	idx := make([]int, len(shape))
	for p := range n {
		q := p
		for d := len(shape) - 1; d >= 0; d-- {
			idx[d] = q % shape[d]
			q /= shape[d]
		}
		var st []T
		pop := func() T { v := st[len(st)-1]; st = st[:len(st)-1]; return v }
		for _, in := range code {
			switch in.Kind {
			case FuseLeaf:
				l := leaves[in.Leaf]
				off := l.Off
				for d, s := range l.Strides {
					off += idx[d] * s
				}
				st = append(st, xs[in.Leaf][off])
			case FuseUnary:
				st = append(st, refUnary(in.Un, pop()))
			case FuseBinary:
				b, a := pop(), pop()
				st = append(st, refBinary(in.Bin, a, b))
			case FuseCmp:
				b, a := pop(), pop()
				st = append(st, refMask[T](in.Bin, a, b))
			case FuseMaskMul:
				z, b, a := pop(), pop(), pop()
				st = append(st, refMask[T](in.Bin, a, b)*z)
			case FuseDup:
				st = append(st, st[len(st)-1])
			}
		}
		out[p] = st[0]
	}
	return out
}

func refUnary[T floatT](op core.UnOp, v T) T {
	if f, ok := any(v).(float32); ok {
		return T(op.Float32Func()(f))
	}
	return T(op.FloatFunc()(float64(v)))
}

func refBinary[T floatT](op core.BinOp, a, b T) T {
	switch op {
	case core.OpAdd:
		return a + b
	case core.OpSub:
		return a - b
	case core.OpMul:
		return a * b
	case core.OpDiv:
		return a / b
	case core.OpMax: // core's max and min: NaN wins, also against an infinity
		if a != a || b != b {
			return T(math.NaN())
		}
		return T(math.Max(float64(a), float64(b)))
	case core.OpMin:
		if a != a || b != b {
			return T(math.NaN())
		}
		return T(math.Min(float64(a), float64(b)))
	}
	panic("refBinary: " + op.String())
}

func refMask[T floatT](op core.BinOp, a, b T) T {
	var c bool
	switch op {
	case core.OpLt:
		c = a < b
	case core.OpLe:
		c = a <= b
	case core.OpGt:
		c = a > b
	case core.OpGe:
		c = a >= b
	case core.OpEq:
		c = a == b
	case core.OpNe:
		c = a != b
	}
	if c {
		return 1
	}
	return 0
}

// fusedData is n values with the edge cases mixed in: NaN, ±Inf, ±0, a subnormal.
func fusedData[T floatT](rng *rand.Rand, n int) []T {
	special := []float64{math.NaN(), math.Inf(1), math.Inf(-1), 0, math.Copysign(0, -1), 1e-310, 1, -1}
	x := make([]T, n)
	for i := range x {
		if rng.Intn(8) == 0 {
			x[i] = T(special[rng.Intn(len(special))])
		} else {
			x[i] = T(rng.NormFloat64())
		}
	}
	return x
}

// sameFloats reports the first position where got and want differ in bits (NaNs of any
// payload are equal), or -1.
func sameFloats[T floatT](got, want []T) int {
	if len(got) != len(want) {
		return 0
	}
	for i := range got {
		g, w := float64(got[i]), float64(want[i])
		if g != g && w != w {
			continue
		}
		if math.Float64bits(g) != math.Float64bits(w) {
			return i
		}
	}
	return -1
}

func leaf(off int, strides ...int) FusedLeaf { return FusedLeaf{Strides: strides, Off: off} }

func ins(k FusedKind, leaf int) FusedIns { return FusedIns{Kind: k, Leaf: leaf} }

func un(op core.UnOp) FusedIns { return FusedIns{Kind: FuseUnary, Un: op} }

func bin(op core.BinOp) FusedIns { return FusedIns{Kind: FuseBinary, Bin: op} }

type fusedCase struct {
	name   string
	shape  []int
	leaves []FusedLeaf
	code   []FusedIns
	kinds  []leafKind // how NewFused reads each leaf (after merging)
}

func fusedCases() []fusedCase {
	L := func(i int) FusedIns { return ins(FuseLeaf, i) }
	return []fusedCase{
		{"contiguous odd", []int{3, 5, 7}, []FusedLeaf{leaf(0, 35, 7, 1), leaf(2, 35, 7, 1), leaf(0, 35, 7, 1)},
			[]FusedIns{L(0), L(1), bin(core.OpMul), L(2), un(core.OpNeg), bin(core.OpSub)}, []leafKind{leafDirect, leafDirect, leafDirect}},
		{"short rows: repeated row, scalar, rows of a wider array", []int{64, 24},
			[]FusedLeaf{leaf(0, 24, 1), leaf(3, 0, 1), leaf(5, 0, 0), leaf(1, 48, 1)},
			[]FusedIns{L(0), L(1), bin(core.OpSub), L(2), bin(core.OpMul), L(3), bin(core.OpAdd), un(core.OpRecip)},
			[]leafKind{leafDirect, leafInvariant, leafScalar, leafPeriodic}}, // the wider array's rows kept once a run
		{"long rows in parts, a scalar a row", []int{3, 2000},
			[]FusedLeaf{leaf(7, 4000, 1), leaf(0, 1, 0), leaf(0, 2000, 1)},
			[]FusedIns{L(0), L(1), bin(core.OpDiv), L(2), bin(core.OpMax), L(1), bin(core.OpMin)},
			[]leafKind{leafRow, leafScalar, leafDirect}},
		{"rows of 300, channels first broadcast", []int{4, 5, 300},
			[]FusedLeaf{leaf(0, 1500, 300, 1), leaf(0, 0, 1, 0), leaf(4, 0, 1, 0)},
			[]FusedIns{L(1), L(0), bin(core.OpSub), L(2), bin(core.OpMul), un(core.OpExp)},
			[]leafKind{leafDirect, leafPeriodic, leafPeriodic}}, // rows grouped three to a block, the channels' rows kept once a run (a block may start at any of the five)
		{"rows of a wider array, too many to keep", []int{300, 300},
			[]FusedLeaf{leaf(0, 300, 1), leaf(7, 600, 1)},
			[]FusedIns{L(0), L(1), bin(core.OpAdd), un(core.OpNeg)},
			[]leafKind{leafDirect, leafFill}},
		{"rows of 1500, channels first broadcast", []int{2, 3, 1500},
			[]FusedLeaf{leaf(0, 9000, 3000, 1), leaf(0, 0, 1, 0), leaf(2, 0, 1, 0)},
			[]FusedIns{L(1), L(0), bin(core.OpSub), L(2), bin(core.OpMul), un(core.OpExp)},
			[]leafKind{leafRow, leafScalar, leafScalar}}, // parts of a row, the channel a scalar
		{"relu mask, broadcast zero", []int{40, 33},
			[]FusedLeaf{leaf(0, 33, 1), leaf(0, 0, 0), leaf(0, 33, 1), leaf(1, 0, 1)},
			[]FusedIns{L(0), L(1), L(2), {Kind: FuseMaskMul, Bin: core.OpGe}, L(3), bin(core.OpMul)},
			[]leafKind{leafDirect, leafScalar, leafDirect, leafInvariant}},
		{"masks of every comparison", []int{9, 700},
			[]FusedLeaf{leaf(0, 700, 1), leaf(0, 0, 0), leaf(3, 700, 1)},
			[]FusedIns{L(0), L(1), L(2), {Kind: FuseMaskMul, Bin: core.OpGt}, L(2), L(0), L(0), {Kind: FuseMaskMul, Bin: core.OpLe},
				L(2), L(0), L(2), {Kind: FuseMaskMul, Bin: core.OpEq}, L(0), L(2), {Kind: FuseCmp, Bin: core.OpNe},
				bin(core.OpAdd), bin(core.OpAdd), bin(core.OpAdd), L(0), L(1), {Kind: FuseCmp, Bin: core.OpLt}, bin(core.OpSub)},
			[]leafKind{leafDirect, leafScalar, leafDirect}},
		{"scalars left of comparisons", []int{30, 40},
			[]FusedLeaf{leaf(0, 40, 1), leaf(3, 0, 0), leaf(1, 40, 1)},
			[]FusedIns{L(1), L(0), {Kind: FuseCmp, Bin: core.OpGe}, L(1), L(0), {Kind: FuseCmp, Bin: core.OpLt}, bin(core.OpAdd),
				L(1), L(0), L(2), {Kind: FuseMaskMul, Bin: core.OpGe}, bin(core.OpAdd), L(1), L(0), L(2), {Kind: FuseMaskMul, Bin: core.OpEq}, bin(core.OpAdd),
				L(1), L(0), {Kind: FuseCmp, Bin: core.OpNe}, bin(core.OpAdd), L(0), L(1), {Kind: FuseCmp, Bin: core.OpLe}, bin(core.OpSub)},
			[]leafKind{leafDirect, leafScalar, leafDirect}},
		{"a subterm read twice", []int{50, 64}, []FusedLeaf{leaf(0, 64, 1), leaf(0, 0, 1), leaf(0, 0, 0)},
			[]FusedIns{L(0), L(1), bin(core.OpMul), {Kind: FuseDup}, bin(core.OpAdd), L(2), {Kind: FuseDup}, bin(core.OpMul), bin(core.OpSub), L(0), {Kind: FuseDup}, bin(core.OpDiv), bin(core.OpMul)},
			[]leafKind{leafDirect, leafInvariant, leafScalar}},
		{"reversed rows", []int{6, 40}, []FusedLeaf{leaf(200, -40, 1), leaf(0, 40, 1)},
			[]FusedIns{L(0), L(1), bin(core.OpSub), un(core.OpNeg)}, []leafKind{leafPeriodic, leafDirect}},
		{"scalars only", []int{10, 40}, []FusedLeaf{leaf(0, 0, 0), leaf(1, 0, 0)},
			[]FusedIns{L(0), L(1), bin(core.OpAdd), un(core.OpTanh)}, []leafKind{leafScalar, leafScalar}},
		{"rank 0", nil, []FusedLeaf{leaf(2), leaf(0)},
			[]FusedIns{L(0), L(1), bin(core.OpMul), un(core.OpNeg)}, []leafKind{leafScalar, leafScalar}},
	}
}

// TestFused checks every leaf kind, block shape and instruction against the element-wise
// reference, bit for bit, in both float types, on data with NaNs, infinities, signed zeros
// and subnormals.
func TestFused(t *testing.T) {
	for _, c := range fusedCases() {
		t.Run(c.name, func(t *testing.T) {
			runFusedCase[float64](t, c)
			runFusedCase[float32](t, c)
		})
	}
}

func runFusedCase[T floatT](t *testing.T, c fusedCase) {
	t.Helper()
	k, err := NewFused(c.shape, c.code, c.leaves)
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range c.kinds {
		if k.kinds[i] != want {
			t.Fatalf("%s: leaf %d read as kind %d, want %d", k, i, k.kinds[i], want)
		}
	}
	rng := rand.New(rand.NewSource(int64(len(c.code))))
	xs := make([][]T, len(c.leaves))
	in := make([]any, len(c.leaves))
	for i := range xs {
		xs[i] = fusedData[T](rng, k.reach(i)+1)
		in[i] = xs[i]
	}
	want := fusedRef(c.shape, c.code, c.leaves, xs)
	for run := 0; run < 2; run++ { // the second run reuses the kernel's state
		got := make([]T, len(want))
		if err := k.Run(got, in); err != nil {
			t.Fatal(err)
		}
		if i := sameFloats(got, want); i >= 0 {
			t.Fatalf("%T run %d: element %d = %v, want %v (%s)", got, run, i, got[i], want[i], k)
		}
	}
}

// TestFusedSplits checks that a Fused kernel split across goroutines computes the same
// elements as on one (and as the reference).
func TestFusedSplits(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	L := func(i int) FusedIns { return ins(FuseLeaf, i) }
	for _, c := range []fusedCase{
		{"short rows", []int{8192, 40}, []FusedLeaf{leaf(0, 40, 1), leaf(0, 0, 1), leaf(1, 80, 1)},
			[]FusedIns{L(0), L(1), bin(core.OpMul), L(2), bin(core.OpDiv), un(core.OpSigmoid)}, nil},
		{"long rows", []int{3, 100003}, []FusedLeaf{leaf(0, 100003, 1), leaf(0, 1, 0)},
			[]FusedIns{L(0), L(1), bin(core.OpSub), un(core.OpExp)}, nil},
	} {
		rng := rand.New(rand.NewSource(7))
		k, err := NewFused(c.shape, c.code, c.leaves)
		if err != nil {
			t.Fatal(err)
		}
		xs := make([][]float32, len(c.leaves))
		in := make([]any, len(c.leaves))
		for i := range xs {
			xs[i] = fusedData[float32](rng, k.reach(i)+1)
			in[i] = xs[i]
		}
		want := fusedRef(c.shape, c.code, c.leaves, xs)
		for _, procs := range []int{1, 2, 3} {
			runtime.GOMAXPROCS(procs)
			if w := workers(k.blocks(), costOf(len(want), k.weight)); procs > 1 && w != procs {
				t.Fatalf("%s: %d goroutines at GOMAXPROCS %d: the case does not split", c.name, w, procs)
			}
			got := make([]float32, len(want))
			if err := k.Run(got, in); err != nil {
				t.Fatal(err)
			}
			if i := sameFloats(got, want); i >= 0 {
				t.Fatalf("%s at %d goroutines: element %d = %v, want %v", c.name, procs, i, got[i], want[i])
			}
		}
	}
}

// TestFusedErrors checks that malformed code, leaves and inputs are errors naming the fault.
func TestFusedErrors(t *testing.T) {
	L := func(i int) FusedIns { return ins(FuseLeaf, i) }
	sh := []int{4, 8}
	row := leaf(0, 8, 1)
	add := []FusedIns{L(0), L(0), bin(core.OpAdd)}
	many := make([]FusedLeaf, FusedMaxLeaves+1)
	for i := range many {
		many[i] = row
	}
	for _, c := range []struct {
		name   string
		leaves []FusedLeaf
		code   []FusedIns
		want   string
	}{
		{"no leaves", nil, add, "0 leaves"},
		{"too many leaves", many, add, "17 leaves"},
		{"strides", []FusedLeaf{leaf(0, 1)}, add, "1 strides"},
		{"missing leaf", []FusedLeaf{row}, []FusedIns{L(0), L(1), bin(core.OpAdd)}, "reads leaf 1"},
		{"comparison", []FusedLeaf{row}, []FusedIns{L(0), L(0), bin(core.OpLt)}, "outside a mask"},
		{"not a comparison", []FusedLeaf{row}, []FusedIns{L(0), L(0), {Kind: FuseCmp, Bin: core.OpAdd}}, "not a comparison"},
		{"underflow", []FusedLeaf{row}, []FusedIns{L(0), bin(core.OpAdd)}, "needs 2 operands"},
		{"two results", []FusedLeaf{row}, []FusedIns{L(0), L(0), L(0), bin(core.OpAdd)}, "leaves 2 operands"},
		{"no operation", []FusedLeaf{row}, []FusedIns{L(0)}, "code of 1"},
		{"unknown kind", []FusedLeaf{row}, []FusedIns{L(0), {Kind: 9}}, "unknown kind"},
		{"dup of nothing", []FusedLeaf{row}, []FusedIns{{Kind: FuseDup}, bin(core.OpAdd)}, "needs 1 operands"},
		{"dup left over", []FusedLeaf{row}, []FusedIns{L(0), {Kind: FuseDup}, {Kind: FuseDup}, bin(core.OpAdd)}, "leaves 2 operands"},
		{"transposed", []FusedLeaf{row, leaf(0, 1, 4)}, []FusedIns{L(0), L(1), bin(core.OpAdd)}, "across the rows"},
		{"broadcast along short rows", []FusedLeaf{row, leaf(0, 1, 0)}, []FusedIns{L(0), L(1), bin(core.OpAdd)}, "across the rows"},
	} {
		_, err := NewFused(sh, c.code, c.leaves)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one containing %q", c.name, err, c.want)
		}
	}
	rev, err := NewFused(sh, add, []FusedLeaf{leaf(2, -8, 1)}) // rows reversed, starting too low
	if err != nil {
		t.Fatal(err)
	}
	if err := rev.Run(make([]float64, 32), []any{make([]float64, 32)}); err == nil || !strings.Contains(err.Error(), "reads elements -22 to 9") {
		t.Errorf("reversed rows below the input: error %v", err)
	}
	k, err := NewFused(sh, add, []FusedLeaf{row})
	if err != nil {
		t.Fatal(err)
	}
	x := make([]float64, 32)
	for _, c := range []struct {
		name string
		out  any
		ins  []any
		want string
	}{
		{"inputs", make([]float64, 32), []any{x, x}, "2 inputs"},
		{"dtype", make([]float64, 32), []any{make([]float32, 32)}, "fused"},
		{"ints", make([]int64, 32), []any{make([]int64, 32)}, "fused"},
		{"output", make([]float64, 31), []any{x}, "31 elements"},
		{"short input", make([]float64, 32), []any{x[:31]}, "reads elements 0 to 31 of 31"},
	} {
		err := k.Run(c.out, c.ins)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one containing %q", c.name, err, c.want)
		}
	}
}

// TestFusedSum checks NewFusedSum against the element-wise reference summed column by column
// from +0 in row order, bit for bit, both dtypes: short rows (blocks of rows), long rows (parts
// of one), several summed and kept dimensions, nothing summed; and that kept dimensions a leaf
// does not read as one, or one kept element (a total sum), are errors.
func TestFusedSum(t *testing.T) {
	L := func(i int) FusedIns { return ins(FuseLeaf, i) }
	sq := []FusedIns{L(0), L(1), bin(core.OpSub), {Kind: FuseDup}, bin(core.OpMul)}
	prod := []FusedIns{L(0), L(1), bin(core.OpMul)}
	for _, c := range []struct {
		name   string
		shape  []int
		split  int
		leaves []FusedLeaf
		code   []FusedIns
	}{
		{"channels last, squares", []int{300, 24}, 1, []FusedLeaf{leaf(0, 24, 1), leaf(0, 0, 1)}, sq},
		{"products, unit axis", []int{300, 24, 1}, 1, []FusedLeaf{leaf(0, 24, 1, 0), leaf(5, 24, 1, 1)}, prod},
		{"long rows", []int{5, 2100}, 1, []FusedLeaf{leaf(0, 2100, 1), leaf(3, 2100, 1)}, prod},
		{"two summed, two kept", []int{3, 4, 5, 8}, 2, []FusedLeaf{leaf(0, 160, 40, 8, 1), leaf(0, 0, 0, 8, 1)}, prod},
		{"nothing summed", []int{6, 7}, 0, []FusedLeaf{leaf(0, 7, 1), leaf(1, 7, 1)}, sq},
	} {
		runFusedSum[float64](t, c.name, c.shape, c.split, c.leaves, c.code)
		runFusedSum[float32](t, c.name, c.shape, c.split, c.leaves, c.code)
	}
	if _, err := NewFusedSum([]int{4, 5, 300}, prod, []FusedLeaf{leaf(0, 1500, 300, 1), leaf(0, 0, 1, 0)}, 1); err == nil || !strings.Contains(err.Error(), "not read as one") {
		t.Errorf("kept dimensions read apart: error %v", err)
	}
	if _, err := NewFusedSum([]int{70, 1}, sq, []FusedLeaf{leaf(0, 1, 0), leaf(2, 0, 0)}, 1); err == nil || !strings.Contains(err.Error(), "not read as one") {
		t.Errorf("one kept element: error %v", err)
	}
	if _, err := NewFusedSum([]int{4, 5}, prod, []FusedLeaf{leaf(0, 5, 1), leaf(0, 5, 1)}, 3); err == nil {
		t.Errorf("split 3 of a rank-2 shape: no error")
	}
}

// TestFusedRowSum: the sums of a tree along its last dimension (rows grouped in blocks; the
// leading dimensions merged, the last kept apart even where the leaves run on through it)
// equal each row of the reference tree added in order from +0, bit for bit, float32 and
// float64: rows of 16 (Gorgonia's Repeat gradient), of 24 and 3 with leaves broadcast across
// rows, of 2, and rows too long or too short are refused.
func TestFusedRowSum(t *testing.T) {
	L := func(i int) FusedIns { return ins(FuseLeaf, i) }
	prod := []FusedIns{L(0), L(1), bin(core.OpMul)}
	sq := []FusedIns{L(0), L(1), bin(core.OpSub), {Kind: FuseDup}, bin(core.OpMul)}
	for _, c := range []struct {
		name   string
		shape  []int
		leaves []FusedLeaf
		code   []FusedIns
	}{
		{"rows of 16, contiguous", []int{32, 4, 16, 16}, []FusedLeaf{leaf(0, 1024, 256, 16, 1), leaf(3, 1024, 256, 16, 1)}, prod},
		{"rows of 24, a repeated row", []int{70, 24}, []FusedLeaf{leaf(0, 24, 1), leaf(2, 0, 1)}, sq},
		{"rows of 3, a scalar", []int{500, 3}, []FusedLeaf{leaf(0, 3, 1), leaf(1, 0, 0)}, prod},
		{"rows of 2 after a unit axis", []int{9, 1, 2}, []FusedLeaf{leaf(0, 2, 2, 1), leaf(0, 2, 2, 1)}, sq},
	} {
		runFusedRowSum[float64](t, c.name, c.shape, c.leaves, c.code)
		runFusedRowSum[float32](t, c.name, c.shape, c.leaves, c.code)
	}
	for _, sh := range [][]int{{4, 1024}, {5, 1}, {}} {
		lv := []FusedLeaf{{Strides: core.Shape(sh).Strides()}, {Strides: core.Shape(sh).Strides()}}
		if FusedRowSumReadable(sh, lv) {
			t.Errorf("rows of %v: readable", sh)
		}
		if _, err := NewFusedRowSum(sh, prod, lv); err == nil {
			t.Errorf("rows of %v: no error", sh)
		}
	}
}

func runFusedRowSum[T floatT](t *testing.T, name string, shape []int, leaves []FusedLeaf, code []FusedIns) {
	t.Helper()
	if !FusedRowSumReadable(shape, leaves) {
		t.Fatalf("%s: not readable", name)
	}
	k, err := NewFusedRowSum(shape, code, leaves)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	last := shape[len(shape)-1]
	checkFusedSum(t, name, k, shape, leaves, code, func(tree []T) []T {
		want := make([]T, len(tree)/last)
		for i, v := range tree {
			want[i/last] += v
		}
		return want
	})
}

func runFusedSum[T floatT](t *testing.T, name string, shape []int, split int, leaves []FusedLeaf, code []FusedIns) {
	t.Helper()
	k, err := NewFusedSum(shape, code, leaves, split)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	n := core.Shape(shape[split:]).Size()
	checkFusedSum(t, name, k, shape, leaves, code, func(tree []T) []T {
		want := make([]T, n)
		for i, v := range tree {
			want[i%n] += v
		}
		return want
	})
}

// checkFusedSum runs the summing kernel k twice on random leaves (its output starting from 7
// each time: the kernel starts from +0) and compares it bit for bit with sum of the reference
// tree (each output one chain in the reference's order).
func checkFusedSum[T floatT](t *testing.T, name string, k *Fused, shape []int, leaves []FusedLeaf, code []FusedIns, sum func(tree []T) []T) {
	t.Helper()
	rng := rand.New(rand.NewSource(int64(len(shape))))
	xs := make([][]T, len(leaves))
	in := make([]any, len(leaves))
	for i := range xs {
		xs[i] = fusedData[T](rng, k.reach(i)+1)
		in[i] = xs[i]
	}
	want := sum(fusedRef(shape, code, leaves, xs))
	for run := 0; run < 2; run++ {
		got := make([]T, len(want))
		for i := range got {
			got[i] = 7
		}
		if err := k.Run(got, in); err != nil {
			t.Fatal(err)
		}
		if i := sameFloats(got, want); i >= 0 {
			t.Fatalf("%s %T: element %d = %v, want %v (%s)", name, got, i, got[i], want[i], k)
		}
	}
}
