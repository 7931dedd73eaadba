package kernel

import (
	"fmt"
	"math"
	"math/rand"
	"runtime"
	"testing"

	"github.com/bulkad/bulkad/core"
	"gorgonia.org/tensor"
)

// TestMergeAffine: dimensions of one element are dropped and contiguous neighbours merged,
// and the merged walk visits the same offsets in the same order (checked point by point
// against the unmerged walk).
func TestMergeAffine(t *testing.T) {
	cases := []struct {
		dom, st         []int
		wantDom, wantSt []int
	}{
		{[]int{2, 3, 4}, []int{0, 0, 0}, []int{24}, []int{0}},
		{[]int{2, 3, 4, 5}, []int{0, 1, 0, 0}, []int{2, 3, 20}, []int{0, 1, 0}},
		{[]int{2, 3, 4}, []int{12, 4, 1}, []int{24}, []int{1}},
		{[]int{2, 1, 4}, []int{4, 99, 1}, []int{8}, []int{1}},
		{[]int{3, 4}, []int{1, 3}, []int{3, 4}, []int{1, 3}},
		{[]int{1, 1}, []int{5, 7}, []int{1}, []int{0}},
		{[]int{2, 0, 3}, []int{0, 0, 0}, []int{0}, []int{0}},
	}
	for _, c := range cases {
		t.Run(fmt.Sprint(c.dom, c.st), func(t *testing.T) {
			var bd, bs [maxMerge]int
			d, s := mergeAffine(c.dom, c.st, bd[:0], bs[:0])
			if fmt.Sprint(d, s) != fmt.Sprint(c.wantDom, c.wantSt) {
				t.Fatalf("merged %v %v, want %v %v", d, s, c.wantDom, c.wantSt)
			}
			var a, b []int
			affineWalk(c.dom, c.st, 7, func(p, off, n, st int) {
				for j := 0; j < n; j++ {
					a = append(a, p+j, off+j*st)
				}
			})
			affineWalk(d, s, 7, func(p, off, n, st int) {
				for j := 0; j < n; j++ {
					b = append(b, p+j, off+j*st)
				}
			})
			if fmt.Sprint(a) != fmt.Sprint(b) {
				t.Errorf("merged walk %v, unmerged %v", b, a)
			}
		})
	}
}

// TestScatterReductions: affine scatters that reduce whole rows into one element (the sums
// over batch and positions of a batch norm's gradient, scatter [c,1,1] x (\[b,c,h,w] ->
// [c,0,0])) run as register accumulations over merged rows, serially and split across
// goroutines, and equal core.Eval bit for bit in float32 (values of mixed magnitudes, so a
// change of the summation order shows).
func TestScatterReductions(t *testing.T) {
	rng := rand.New(rand.NewSource(4))
	cases := []struct{ src, prog string }{
		{"[8,16,6,6]", `fn (x : [8,16,6,6] f32) => scatter [16,1,1] x (\[b, c, h, w] -> [c, 0, 0])`},
		{"[8,16,6,6]", `fn (x : [8,16,6,6] f32) => scatter [16] x (\[b, c, h, w] -> [c])`},
		{"[8,16,6,6]", `fn (x : [8,16,6,6] f32) => scatter [8] x (\[b, c, h, w] -> [b])`},
		{"[8,16,6,6]", `fn (x : [8,16,6,6] f32) => scatter [6,6] x (\[b, c, h, w] -> [h, w])`},
		{"[64,512,1,4]", `fn (x : [64,512,1,4] f32) => scatter [512,1,1] x (\[b, c, h, w] -> [c, 0, 0])`},
		{"[3,5]", `fn (x : [3,5] f32) => scatter [1] x (\[i, j] -> [0])`},
		{"[5,7,6,6]", `fn (x : [5,7,6,6] f32) => scatter [7,1,1] x (\[b, c, h, w] -> [c, 0, 0])`},
		{"[2,13,1,3]", `fn (x : [2,13,1,3] f32) => scatter [13,1] x (\[b, c, h, w] -> [12 + (-1) * c, 0])`},
		// rows of 100 (vectors transposed in registers, then the last 4 of each row), 37
		// channels: two groups of 16 rows and 5 rows one at a time
		{"[3,37,10,10]", `fn (x : [3,37,10,10] f32) => scatter [37,1,1] x (\[b, c, h, w] -> [c, 0, 0])`},
	}
	for _, c := range cases {
		t.Run(c.prog, func(t *testing.T) {
			p, err := core.ParseProgram(c.prog)
			if err != nil {
				t.Fatal(err)
			}
			xt := p.Params[0].Type()
			data := make([]float32, xt.Shape.Size())
			for i := range data {
				data[i] = float32(rng.NormFloat64() * float64(int(1)<<uint(rng.Intn(20))))
			}
			args := map[string]*tensor.Dense{"x": tensor.New(tensor.WithShape(xt.Shape...), tensor.WithBacking(data))}
			want := evalFlat(t, p.Body, args)
			sc := p.Body.(*core.Scatter)
			prog, err := CompileIndexFn(sc.Fn)
			if err != nil {
				t.Fatal(err)
			}
			nv, m := len(sc.Fn.Vars), len(sc.Fn.Out)
			k := &Scatter{Dom: xt.Shape[:nv], Dst: sc.Shape[:m], Rest: xt.Shape[nv:].Size(), IndexPlan: IndexPlan{Fn: prog}}
			if k.AffineStrides, k.AffineBase, k.Affine = prog.AffinePlan(k.Dom, k.Dst); !k.Affine {
				t.Fatal("not an in-bounds affine scatter")
			}
			defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
			for _, procs := range []int{1, 2} {
				runtime.GOMAXPROCS(procs)
				got := zeroLike(want)
				if err := k.Run(got, []any{data}); err != nil {
					t.Fatal(err)
				}
				if i, ok := sameBits(got, want); !ok {
					t.Fatalf("GOMAXPROCS %d: element %d is %v, core.Eval %v", procs, i, got.([]float32)[i], want.([]float32)[i])
				}
			}
		})
	}
}

// TestStridedBinaryMerged: the merged kernel computes every element as the definition does
// (x at Σ i_k·XS_k + XO, y likewise), for random shapes with broadcast (stride 0), contiguous
// and transposed operands; a scalar broadcast over a whole array becomes one row.
func TestStridedBinaryMerged(t *testing.T) {
	rng := rand.New(rand.NewSource(9))
	for trial := 0; trial < 300; trial++ {
		rank := 1 + rng.Intn(4)
		sh := make([]int, rank)
		for i := range sh {
			sh[i] = 1 + rng.Intn(4)
		}
		strides := func() ([]int, int) {
			switch rng.Intn(3) {
			case 0: // broadcast of one element
				return make([]int, rank), rng.Intn(3)
			case 1: // contiguous, possibly broadcast along some dims
				st := core.Shape(sh).Strides()
				for i := range st {
					if rng.Intn(3) == 0 {
						st[i] = 0
					}
				}
				return st, 0
			}
			st := make([]int, rank) // a transposed layout
			acc := 1
			for _, i := range rng.Perm(rank) {
				st[i] = acc
				acc *= sh[i]
			}
			return st, 0
		}
		xs, xo := strides()
		ys, yo := strides()
		n := core.Shape(sh).Size()
		x := make([]float64, n+3)
		y := make([]float64, n+3)
		for i := range x {
			x[i], y[i] = rng.NormFloat64(), rng.NormFloat64()
		}
		k := StridedBinary{Op: core.OpMax, Shape: sh, XS: xs, YS: ys, XO: xo, YO: yo}
		m := k.Merged()
		if len(m.Shape) > len(k.Shape) {
			t.Fatalf("merging %v gave more dimensions: %v", sh, m.Shape)
		}
		got := make([]float64, n)
		if err := m.Run(got, []any{x, y}); err != nil {
			t.Fatal(err)
		}
		p := 0
		each(sh, func(idx []int) {
			xi, yi := xo, yo
			for d, v := range idx {
				xi += v * xs[d]
				yi += v * ys[d]
			}
			if want := max(x[xi], y[yi]); got[p] != want {
				t.Fatalf("trial %d %v %v %v: element %d = %v, want %v", trial, sh, xs, ys, p, got[p], want)
			}
			p++
		})
	}
	k := StridedBinary{Op: core.OpAdd, Shape: []int{2, 3, 4}, XS: []int{12, 4, 1}, YS: []int{0, 0, 0}}
	if m := k.Merged(); len(m.Shape) != 1 || m.Shape[0] != 24 {
		t.Errorf("a scalar broadcast over a contiguous array merges to %v, want [24]", m.Shape)
	}
}

// TestMaxMinSpecialValues: maxOf and minOf follow the kernels' rule on every pair of special
// values (NaN, ±Inf, ±0 — a real negative zero, math.Copysign(0, -1) — and ordinary
// numbers), in float64 and float32: NaN if either operand is NaN (also against ±Inf, where
// math.Max and math.Min return the infinity), otherwise the larger (smaller) with +0 > -0; on
// integers they are the ordinary max and min.
func TestMaxMinSpecialValues(t *testing.T) {
	negZero := math.Copysign(0, -1)
	vals := []float64{math.NaN(), math.Inf(-1), -2.5, negZero, 0, 1e-310, 3, math.Inf(1)}
	same := func(a, b float64) bool {
		return math.Float64bits(a) == math.Float64bits(b) || (math.IsNaN(a) && math.IsNaN(b))
	}
	// key orders the values with -0 below +0
	key := func(v float64) float64 {
		if v == 0 && math.Signbit(v) {
			return -1e-320
		}
		return v
	}
	rule := func(a, b float64, larger bool) float64 {
		switch {
		case math.IsNaN(a) || math.IsNaN(b):
			return math.NaN()
		case (key(a) > key(b)) == larger:
			return a
		}
		return b
	}
	for _, a := range vals {
		for _, b := range vals {
			if got, want := maxOf(a, b), rule(a, b, true); !same(got, want) {
				t.Errorf("maxOf(%v, %v) = %v, want %v", a, b, got, want)
			}
			if got, want := minOf(a, b), rule(a, b, false); !same(got, want) {
				t.Errorf("minOf(%v, %v) = %v, want %v", a, b, got, want)
			}
			a32, b32 := float64(float32(a)), float64(float32(b))
			if got, want := float64(maxOf(float32(a), float32(b))), rule(a32, b32, true); !same(got, want) {
				t.Errorf("float32 maxOf(%v, %v) = %v, want %v", a, b, got, want)
			}
			if got, want := float64(minOf(float32(a), float32(b))), rule(a32, b32, false); !same(got, want) {
				t.Errorf("float32 minOf(%v, %v) = %v, want %v", a, b, got, want)
			}
		}
	}
	if maxOf(int64(-3), 2) != 2 || minOf(int64(-3), 2) != -3 {
		t.Error("integer max/min")
	}
}

// TestStridedPairs: short rows (fewer than pairRowMax elements) of + − · max min (these two
// over NaNs with payloads and signed zeros as well) with each operand contiguous along the
// row or broadcast over it run two dimensions at a time
// (stridedPairsRun) and give the definition's result bit for bit, for random shapes of rank
// 2–4 whose outer dimensions are contiguous, broadcast or transposed; through Run as well.
func TestStridedPairs(t *testing.T) {
	rng := rand.New(rand.NewSource(17))
	ops := []struct {
		op core.BinOp
		f  func(a, b float64) float64
	}{{core.OpAdd, func(a, b float64) float64 { return a + b }}, {core.OpSub, func(a, b float64) float64 { return a - b }},
		{core.OpMul, func(a, b float64) float64 { return a * b }}, {core.OpMax, func(a, b float64) float64 { return max(a, b) }},
		{core.OpMin, func(a, b float64) float64 { return min(a, b) }}}
	paired := 0
	for trial := 0; trial < 300; trial++ {
		rank := 2 + rng.Intn(3)
		sh := make([]int, rank)
		for i := range sh {
			sh[i] = 1 + rng.Intn(5)
		}
		sh[rank-1] = 1 + rng.Intn(pairRowMax-1)
		sh[rank-2] = 2 + rng.Intn(4)
		strides := func(inner int) ([]int, int) {
			st := make([]int, rank)
			acc := 1
			st[rank-1] = inner
			if inner == 1 {
				acc = sh[rank-1]
			}
			for _, i := range rng.Perm(rank - 1) {
				if rng.Intn(4) > 0 {
					st[i] = acc
					acc *= sh[i]
				}
			}
			return st, rng.Intn(3)
		}
		ix := rng.Intn(3)
		xs, xo := strides(min(ix, 1))
		ys, yo := strides(1 - min(ix, 1)*rng.Intn(2))
		c := ops[rng.Intn(len(ops))]
		n := core.Shape(sh).Size()
		x, y := make([]float64, 4*n+3), make([]float64, 4*n+3)
		sp := specials[float64]()
		for i := range x {
			x[i], y[i] = math.Ldexp(rng.NormFloat64(), rng.Intn(41)-20), math.Ldexp(rng.NormFloat64(), rng.Intn(41)-20)
			if c.op == core.OpMax || c.op == core.OpMin { // NaN payloads and signed zeros
				if rng.Intn(4) == 0 {
					x[i] = sp[rng.Intn(len(sp))]
				}
				if rng.Intn(4) == 0 {
					y[i] = sp[rng.Intn(len(sp))]
				}
			}
		}
		k := StridedBinary{Op: c.op, Shape: sh, XS: xs, YS: ys, XO: xo, YO: yo}
		want := make([]float64, 0, n)
		each(sh, func(idx []int) {
			xi, yi := xo, yo
			for d, v := range idx {
				xi += v * xs[d]
				yi += v * ys[d]
			}
			want = append(want, c.f(x[xi], y[yi]))
		})
		got := make([]float64, n)
		if stridedPairsRun(k, got, x, y) {
			paired++
		}
		viaRun := make([]float64, n)
		if err := k.Run(viaRun, []any{x, y}); err != nil {
			t.Fatal(err)
		}
		for i := range want {
			if math.Float64bits(viaRun[i]) != math.Float64bits(want[i]) || stridedPairsRun(k, got, x, y) && math.Float64bits(got[i]) != math.Float64bits(want[i]) {
				t.Fatalf("trial %d %v %v %v %v: element %d = %v (pairs %v), want %v", trial, c.op, sh, xs, ys, i, viaRun[i], got[i], want[i])
			}
		}
	}
	if paired < 150 {
		t.Fatalf("only %d of 300 cases ran two dimensions at a time: the test does not cover the path", paired)
	}
}

// TestRowScalars: rows against one element per row (a batch norm's per-channel scale or
// shift; rows of 4 to 128, either operand the scalar one, + − ·, float32 and float64, rows
// contiguous or further apart, in place) give the definition's result bit for bit through
// Run, and the rows of 16 to 128 run a block at a time (stridedPairsRun).
func TestRowScalars(t *testing.T) {
	rng := rand.New(rand.NewSource(23))
	for _, last := range []int{4, 8, 9, 12, 16, 24, 32, 40, 64, 100, 128} {
		for _, op := range []core.BinOp{core.OpAdd, core.OpSub, core.OpMul} {
			for _, left := range []bool{false, true} {
				for _, gap := range []int{0, 3} {
					checkRowScalars[float64](t, rng, op, last, left, gap)
					checkRowScalars[float32](t, rng, op, last, left, gap)
				}
			}
		}
	}
	// in place: the output is the row operand
	x := make([]float32, 6*16)
	for i := range x {
		x[i] = float32(rng.NormFloat64())
	}
	s := []float32{1, 2, 3, 4, 5, 6}
	want := make([]float32, len(x))
	for i := range x {
		want[i] = x[i] * s[i/16]
	}
	k := StridedBinary{Op: core.OpMul, Shape: []int{6, 16}, XS: []int{16, 1}, YS: []int{1, 0}}
	if err := k.Run(x, []any{x, s}); err != nil {
		t.Fatal(err)
	}
	if i, ok := sameBits(x, want); !ok {
		t.Fatalf("in place: element %d = %v, want %v", i, x[i], want[i])
	}
}

func checkRowScalars[T float32 | float64](t *testing.T, rng *rand.Rand, op core.BinOp, last int, left bool, gap int) {
	t.Helper()
	rows := 2 + rng.Intn(9)
	v := make([]T, rows*(last+gap)+1)
	s := make([]T, 2*rows+1)
	for i := range v {
		v[i] = T(math.Ldexp(rng.NormFloat64(), rng.Intn(41)-20))
	}
	for i := range s {
		s[i] = T(math.Ldexp(rng.NormFloat64(), rng.Intn(41)-20))
	}
	v[1], s[1] = T(math.Copysign(0, -1)), T(math.Inf(1))
	f := func(a, b T) T {
		switch op {
		case core.OpAdd:
			return a + b
		case core.OpSub:
			return a - b
		}
		return a * b
	}
	// row i of v from 1 + i·(last+gap), its scalar s[2i]
	vs, ss := []int{last + gap, 1}, []int{2, 0}
	k := StridedBinary{Op: op, Shape: []int{rows, last}, XS: vs, YS: ss, XO: 1}
	x, y := v, s
	if left {
		k.XS, k.YS, k.XO, k.YO = ss, vs, 0, 1
		x, y = s, v
	}
	want := make([]T, rows*last)
	for i := range rows {
		for j := range last {
			a, b := v[1+i*(last+gap)+j], s[2*i]
			if left {
				a, b = b, a
			}
			want[i*last+j] = f(a, b)
		}
	}
	got := make([]T, len(want))
	if err := k.Run(got, []any{x, y}); err != nil {
		t.Fatal(err)
	}
	if i, ok := sameBits(got, want); !ok {
		t.Fatalf("%v rows of %d (left %v, gap %d): element %d = %v, want %v", op, last, left, gap, i, got[i], want[i])
	}
	if last >= pairRowMax && last <= rowScalarMax && !stridedPairsRun(k, got, x, y) {
		t.Fatalf("%v rows of %d: not run a block at a time", op, last)
	}
}

// TestSumAroundRows: kern.SumAround over [pre, n, post] with rows (post) long enough for the
// register transpositions (rowSums) equals the sums taken element by element in order, bit
// for bit, float64 and float32, with whole groups of rows, a partial one and short tails.
func TestSumAroundRows(t *testing.T) {
	testSumAroundRows[float64](t)
	testSumAroundRows[float32](t)
}

func testSumAroundRows[T floatT](t *testing.T) {
	rng := rand.New(rand.NewSource(6))
	for _, sh := range [][3]int{{2, 16, 36}, {3, 37, 100}, {1, 8, 8}, {2, 19, 17}} {
		pre, n, post := sh[0], sh[1], sh[2]
		x := make([]T, pre*n*post)
		for i := range x {
			x[i] = T(rng.NormFloat64() * float64(int(1)<<uint(rng.Intn(20))))
		}
		want := make([]T, n)
		for b := range pre {
			for c := range n {
				for _, v := range x[(b*n+c)*post : (b*n+c+1)*post] {
					want[c] += v
				}
			}
		}
		got := make([]T, n)
		if err := (SumAround{Pre: pre, N: n, Post: post}).Run(got, []any{x}); err != nil {
			t.Fatal(err)
		}
		for c := range want {
			if math.Float64bits(float64(got[c])) != math.Float64bits(float64(want[c])) {
				t.Fatalf("%v: channel %d = %v, want %v", sh, c, got[c], want[c])
			}
		}
	}
}
