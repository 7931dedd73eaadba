package kernel

import (
	"math"
	"math/rand"
	"testing"

	"github.com/bulkad/bulkad/core"
)

// TestMaskMulSpecialValues checks MaskMul against its definition, out = z if p cmp q else
// z·0, written out here element by element, on every comparison, with q broadcast and
// elementwise, z contiguous (the branch-free row loop) and transposed (the general strided
// loop), in both float dtypes: bit for bit, over ±0, ±tiny, ±1, ±Inf and NaN in p, q and z.
func TestMaskMulSpecialValues(t *testing.T) {
	// p and z run over every pair of specials on an n×n grid; q is a special per column
	// (elementwise) or one special (broadcast).
	n, grid := specialGrid()
	p, q, z := grid(func(i, j int) int { return i }), grid(func(i, j int) int { return j }), grid(func(i, j int) int { return (i + j) % n })
	cmps := []struct {
		op core.BinOp
		f  func(a, b float64) bool
	}{
		{core.OpGt, func(a, b float64) bool { return a > b }},
		{core.OpGe, func(a, b float64) bool { return a >= b }},
		{core.OpLt, func(a, b float64) bool { return a < b }},
		{core.OpLe, func(a, b float64) bool { return a <= b }},
		{core.OpEq, func(a, b float64) bool { return a == b }},
		{core.OpNe, func(a, b float64) bool { return a != b }},
	}
	layouts := []struct {
		name   string
		st     [3][]int
		qAt    func(i, j int) float64
		zAt    func(i, j int) float64
		qSlice []float64
	}{
		{"q elementwise, z contiguous", [3][]int{{n, 1}, {n, 1}, {n, 1}}, func(i, j int) float64 { return q[i*n+j] }, func(i, j int) float64 { return z[i*n+j] }, q},
		{"q broadcast, z contiguous", [3][]int{{n, 1}, {0, 0}, {n, 1}}, func(i, j int) float64 { return q[0] }, func(i, j int) float64 { return z[i*n+j] }, q[3:]},
		{"q broadcast, z transposed", [3][]int{{n, 1}, {0, 0}, {1, n}}, func(i, j int) float64 { return q[0] }, func(i, j int) float64 { return z[j*n+i] }, q[8:]},
	}
	for _, c := range cmps {
		for _, l := range layouts {
			k := MaskMul{Cmp: c.op, Shape: []int{n, n}, St: l.st}
			qs := l.qSlice
			qAt := l.qAt
			if l.st[1][0] == 0 {
				qAt = func(int, int) float64 { return qs[0] }
			}
			out64 := make([]float64, n*n)
			if err := k.Run(out64, []any{p, qs, z}); err != nil {
				t.Fatalf("%v %s: %v", c.op, l.name, err)
			}
			out32 := make([]float32, n*n)
			if err := k.Run(out32, []any{toF32(p), toF32(qs), toF32(z)}); err != nil {
				t.Fatalf("%v %s float32: %v", c.op, l.name, err)
			}
			for i := 0; i < n; i++ {
				for j := 0; j < n; j++ {
					pv, qv, zv := p[i*n+j], qAt(i, j), l.zAt(i, j)
					want := zv * 0
					if c.f(pv, qv) {
						want = zv
					}
					if !sameFloat(out64[i*n+j], want) {
						t.Errorf("%v %s: p %v q %v z %v: got %v, want %v", c.op, l.name, pv, qv, zv, out64[i*n+j], want)
					}
					want32 := float32(zv) * 0
					if c.f(float64(float32(pv)), float64(float32(qv))) {
						want32 = float32(zv)
					}
					if !sameFloat(float64(out32[i*n+j]), float64(want32)) {
						t.Errorf("%v %s float32: p %v q %v z %v: got %v, want %v", c.op, l.name, pv, qv, zv, out32[i*n+j], want32)
					}
				}
			}
		}
	}
}

// BenchmarkOpMaskMulStrided is z · (x ≥ 0) with x and z read channels-first from a
// channels-last float64 batch (32 images 28×28×32): ReLU on Gorgonia's convolution output.
func BenchmarkOpMaskMulStrided(b *testing.B) {
	n := 32 * 28 * 28 * 32
	st := []int{25088, 1, 896, 32}
	k := MaskMul{Cmp: core.OpGe, Shape: []int{32, 32, 28, 28}, St: [3][]int{st, {0, 0, 0, 0}, st}}
	x := benchData(n, 1)
	benchOp(b, k, make([]float64, n), x, []float64{0}, x)
}

// specialGrid returns n, the number of special values (±0, ±tiny, ±1, ±Inf, NaN and 2.5), and
// grid, which fills an n×n matrix with special pick(i, j) at (i, j).
func specialGrid() (int, func(pick func(i, j int) int) []float64) {
	specials := []float64{0, math.Copysign(0, -1), 5e-324, -5e-324, 1, -1, math.Inf(1), math.Inf(-1), math.NaN(), 2.5}
	n := len(specials)
	return n, func(pick func(i, j int) int) []float64 {
		m := make([]float64, n*n)
		for i := 0; i < n; i++ {
			for j := 0; j < n; j++ {
				m[i*n+j] = specials[pick(i, j)]
			}
		}
		return m
	}
}

// TestMaskMulMerged: the merged kernel gives the definition's result, out = z if p ≥ q else
// z·0 with each operand at Σ i_k·St_k + Off, for random shapes with broadcast (stride 0),
// contiguous and transposed operands; a contiguous mask with q broadcast becomes one row,
// and a kernel with an operand without strides is left as it is.
func TestMaskMulMerged(t *testing.T) {
	rng := rand.New(rand.NewSource(13))
	for trial := 0; trial < 300; trial++ {
		rank := 1 + rng.Intn(4)
		sh := make([]int, rank)
		for i := range sh {
			sh[i] = 1 + rng.Intn(4)
		}
		strides := func() []int {
			switch rng.Intn(3) {
			case 0:
				return make([]int, rank)
			case 1:
				st := core.Shape(sh).Strides()
				for i := range st {
					if rng.Intn(3) == 0 {
						st[i] = 0
					}
				}
				return st
			}
			st := make([]int, rank)
			acc := 1
			for _, i := range rng.Perm(rank) {
				st[i] = acc
				acc *= sh[i]
			}
			return st
		}
		k := MaskMul{Cmp: core.OpGe, Shape: sh, St: [3][]int{strides(), strides(), strides()}, Off: [3]int{rng.Intn(3), rng.Intn(3), rng.Intn(3)}}
		m := k.Merged()
		if len(m.Shape) > len(k.Shape) {
			t.Fatalf("merging %v gave more dimensions: %v", sh, m.Shape)
		}
		n := core.Shape(sh).Size()
		p, q, z := make([]float64, n+3), make([]float64, n+3), make([]float64, n+3)
		for i := range p {
			p[i], q[i], z[i] = rng.NormFloat64(), rng.NormFloat64(), rng.NormFloat64()
		}
		got := make([]float64, n)
		if err := m.Run(got, []any{p, q, z}); err != nil {
			t.Fatal(err)
		}
		at := 0
		each(sh, func(idx []int) {
			var o [3]int
			for a := range o {
				o[a] = k.Off[a]
				for d, v := range idx {
					o[a] += v * k.St[a][d]
				}
			}
			want := z[o[2]] * 0
			if p[o[0]] >= q[o[1]] {
				want = z[o[2]]
			}
			if math.Float64bits(got[at]) != math.Float64bits(want) {
				t.Fatalf("trial %d %v %v: element %d = %v, want %v", trial, sh, k.St, at, got[at], want)
			}
			at++
		})
	}
	k := MaskMul{Cmp: core.OpGt, Shape: []int{2, 3, 4}, St: [3][]int{{12, 4, 1}, {0, 0, 0}, {12, 4, 1}}}
	if m := k.Merged(); len(m.Shape) != 1 || m.Shape[0] != 24 {
		t.Errorf("a contiguous mask with q broadcast merges to %v, want [24]", m.Shape)
	}
	k.St[1] = nil
	if m := k.Merged(); len(m.Shape) != 3 {
		t.Errorf("a kernel with an operand without strides was merged to %v", m.Shape)
	}
}
