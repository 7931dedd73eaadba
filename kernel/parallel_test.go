package kernel

import (
	"fmt"
	"math"
	"math/rand"
	"reflect"
	"runtime"
	"testing"

	"github.com/bulkad/bulkad/core"
	"gorgonia.org/tensor"
)

// Benchmarks of the single-op kernels (the ones package raise wraps as Gorgonia ops) on 1M
// float64 elements; run with -cpu 1,2 to see the split across goroutines.

const opBenchN = benchN * benchN

// benchOp times k.Run(out, ins) per iteration.
func benchOp(b *testing.B, k Kernel, out any, ins ...any) {
	b.Helper()
	if err := k.Run(out, ins); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(8 * SliceLen(out)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := k.Run(out, ins); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkOpUnaryExp(b *testing.B) {
	benchOp(b, Unary{Op: core.OpExp}, make([]float64, opBenchN), benchData(opBenchN, 1))
}

func BenchmarkOpBinaryMul(b *testing.B) {
	benchOp(b, Binary{Op: core.OpMul}, make([]float64, opBenchN), benchData(opBenchN, 1), benchData(opBenchN, 2))
}

// x (1024×1024) times a row broadcast along the rows.
func BenchmarkOpStridedBinary(b *testing.B) {
	k := StridedBinary{Op: core.OpMul, Shape: []int{benchN, benchN}, XS: []int{benchN, 1}, YS: []int{0, 1}}
	benchOp(b, k, make([]float64, opBenchN), benchData(opBenchN, 1), benchData(benchN, 2))
}

// z · (x > 0) with the 0 broadcast: the derivative of relu.
func BenchmarkOpMaskMul(b *testing.B) {
	k := MaskMul{Cmp: core.OpGt, Shape: []int{benchN, benchN}, St: [3][]int{{benchN, 1}, {0, 0}, {benchN, 1}}}
	benchOp(b, k, make([]float64, opBenchN), benchData(opBenchN, 1), []float64{0}, benchData(opBenchN, 2))
}

func BenchmarkOpCast(b *testing.B) {
	benchOp(b, Cast{}, make([]float32, opBenchN), benchData(opBenchN, 1))
}

// The affine gather kernel: a transposition of a 1024×1024 matrix.
func BenchmarkOpGatherTranspose(b *testing.B) {
	benchOp(b, transposeGather(b, benchN, benchN, 1), make([]float64, opBenchN), benchData(opBenchN, 1))
}

// transposeGather is the Gather kernel (affine plan) of out[i, j, :] = x[j, i, :] for x of
// shape [m, n, rest].
func transposeGather(tb testing.TB, m, n, rest int) *Gather {
	var bl core.Builder
	i, j := bl.Var("i", core.Scalar(core.Int64)), bl.Var("j", core.Scalar(core.Int64))
	prog, err := CompileIndexFn(bl.IndexFn([]*core.Var{i, j}, j, i))
	if err != nil {
		tb.Fatal(err)
	}
	k := &Gather{Dom: []int{n, m}, Src: []int{m, n}, Rest: rest, IndexPlan: IndexPlan{Fn: prog}}
	k.AffineStrides, k.AffineBase, k.Affine = prog.AffinePlan(k.Dom, k.Src)
	if !k.Affine {
		tb.Fatal("transposition: no affine plan")
	}
	return k
}

// sumOuter of a 1024×1024 matrix through the op kernel (pre = 1: split along post).
func BenchmarkOpSumOuter(b *testing.B) {
	benchOp(b, SumOuter{}, make([]float64, benchN), benchData(opBenchN, 1))
}

// Sums and argmaxes along the middle axis of [32, 1024, 32].
func BenchmarkOpAxisSum(b *testing.B) {
	benchOp(b, Axis{Pre: 32, N: benchN, Post: 32}, make([]float64, 32*32), benchData(opBenchN, 1))
}

func BenchmarkOpAxisArgmax(b *testing.B) {
	benchOp(b, Axis{Argmax: true, Pre: 32, N: benchN, Post: 32}, make([]int64, 32*32), benchData(opBenchN, 1))
}

// ---- split runs against serial runs ----

// checkSplit runs f (which returns a fresh output slice) with GOMAXPROCS 1 (serial: inParallel
// and the kernels' guards run everything on the calling goroutine), then with GOMAXPROCS 2
// and 3 (even and uneven splits: the inputs are above the thresholds, TestSplitSizes), and
// requires those runs to give the serial result bit for bit.
func checkSplit(t *testing.T, name string, f func() any) any {
	t.Helper()
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	want := f()
	for _, procs := range []int{2, 3} {
		runtime.GOMAXPROCS(procs)
		got := f()
		if i, ok := sameBits(got, want); !ok {
			t.Fatalf("%s: GOMAXPROCS %d: element %d differs from the serial run", name, procs, i)
		}
	}
	return want
}

// sameBits compares two slices of one element type bit for bit (NaN payloads included); it
// returns the first differing index.
func sameBits(a, b any) (int, bool) {
	switch a := a.(type) {
	case []float64:
		return firstDiff(a, b.([]float64), func(v float64) uint64 { return math.Float64bits(v) })
	case []float32:
		return firstDiff(a, b.([]float32), func(v float32) uint32 { return math.Float32bits(v) })
	case []int64:
		return firstDiff(a, b.([]int64), func(v int64) int64 { return v })
	case []bool:
		return firstDiff(a, b.([]bool), func(v bool) bool { return v })
	}
	return -1, false
}

func firstDiff[T any, K comparable](a, b []T, key func(T) K) (int, bool) {
	if len(a) != len(b) {
		return -1, false
	}
	for i := range a {
		if key(a[i]) != key(b[i]) {
			return i, false
		}
	}
	return 0, true
}

// runOp runs k into a fresh output like out (a slice) and returns it.
func runOp(t *testing.T, k Kernel, out any, ins ...any) func() any {
	return func() any {
		o := reflect.MakeSlice(reflect.TypeOf(out), SliceLen(out), SliceLen(out)).Interface()
		if err := k.Run(o, ins); err != nil {
			t.Fatal(err)
		}
		return o
	}
}

// splitData is n values in [-2, 2) with ties (multiples of 1/8) and a few NaNs and infinities.
func splitData(n int, seed int64) []float64 {
	rng := rand.New(rand.NewSource(seed))
	v := make([]float64, n)
	for i := range v {
		v[i] = float64(rng.Intn(32)-16) / 8
		switch rng.Intn(1000) {
		case 0:
			v[i] = math.NaN()
		case 1:
			v[i] = math.Inf(1)
		case 2:
			v[i] = math.Inf(-1)
		}
	}
	return v
}

// mapped is f of each element of x.
func mapped[S, D any](x []S, f func(S) D) []D {
	o := make([]D, len(x))
	for i, v := range x {
		o[i] = f(v)
	}
	return o
}

// toF32 is x rounded to float32.
func toF32(x []float64) []float32 { return mapped(x, func(v float64) float32 { return float32(v) }) }

// toI64 is x·8 as integers (core.FloatToInt).
func toI64(x []float64) []int64 {
	return mapped(x, func(v float64) int64 { return core.FloatToInt(v * 8) })
}

// An odd length above what the cheapest kernels split (costOf(n, wCheap) >= parallelMin), so
// the parts are uneven.
const splitN = parallelMin*8/wCheap + 12345

func TestElementwiseParallel(t *testing.T) {
	x, y := splitData(splitN, 1), splitData(splitN, 2)
	x32, y32 := toF32(x), toF32(y)
	xi, yi := toI64(x), toI64(y)
	got := checkSplit(t, "unary exp f64", runOp(t, Unary{Op: core.OpExp}, x, x)).([]float64)
	for i, v := range x {
		if w := core.OpExp.FloatFunc()(v); math.Float64bits(got[i]) != math.Float64bits(w) && !(w != w && got[i] != got[i]) {
			t.Fatalf("exp: element %d = %v, want %v", i, got[i], w)
		}
	}
	checkSplit(t, "unary tanh f32", runOp(t, Unary{Op: core.OpTanh}, x32, x32))
	checkSplit(t, "unary sign i64", runOp(t, Unary{Op: core.OpSign}, xi, xi))
	sum := checkSplit(t, "binary add f64", runOp(t, Binary{Op: core.OpAdd}, x, x, y)).([]float64)
	for i := range x {
		if w := x[i] + y[i]; math.Float64bits(sum[i]) != math.Float64bits(w) && !(w != w && sum[i] != sum[i]) {
			t.Fatalf("add: element %d = %v, want %v", i, sum[i], w)
		}
	}
	checkSplit(t, "binary div f32", runOp(t, Binary{Op: core.OpDiv}, x32, x32, y32))
	checkSplit(t, "binary quot i64", runOp(t, Binary{Op: core.OpQuot}, xi, xi, yi))
	checkSplit(t, "binary lt f32", runOp(t, Binary{Op: core.OpLt}, make([]bool, splitN), x32, y32))
	// cyclic operands: a short period (tiled), and periods that the split boundaries cut
	const p = 100003
	long := splitData(7*p, 3) // the split boundaries cut periods
	checkSplit(t, "binary cyclic y", runOp(t, Binary{Op: core.OpSub}, long, long, splitData(p, 4)))
	checkSplit(t, "binary cyclic x", runOp(t, Binary{Op: core.OpPow}, long, splitData(p, 4), long))
	cyc := checkSplit(t, "binary cyclic tiled", runOp(t, Binary{Op: core.OpMul}, long, long, splitData(7, 5))).([]float64)
	short := splitData(7, 5)
	for i, v := range long {
		if w := v * short[i%7]; math.Float64bits(cyc[i]) != math.Float64bits(w) && !(w != w && cyc[i] != cyc[i]) {
			t.Fatalf("cyclic mul: element %d = %v, want %v", i, cyc[i], w)
		}
	}
	checkSplit(t, "cast f64→f32", runOp(t, Cast{}, x32, x))
	checkSplit(t, "cast f64→i64", runOp(t, Cast{}, xi, x))
	bs := make([]bool, splitN)
	for i := range bs {
		bs[i] = x[i] > 0
	}
	checkSplit(t, "cast bool→f64", runOp(t, Cast{}, x, bs))
}

func TestStridedParallel(t *testing.T) {
	const a, b = 917, 613
	x, y := splitData(a*b+3, 6), splitData(b, 7)
	// a leading dimension of one element, a broadcast row and an offset
	rows := StridedBinary{Op: core.OpMul, Shape: []int{1, a, b}, XS: []int{0, b, 1}, YS: []int{0, 0, 1}, XO: 3}
	got := checkSplit(t, "strided rows", runOp(t, rows, make([]float64, a*b), x, y)).([]float64)
	for i := range a {
		for j := range b {
			w := x[3+i*b+j] * y[j]
			if g := got[i*b+j]; math.Float64bits(g) != math.Float64bits(w) && !(w != w && g != g) {
				t.Fatalf("strided rows (%d, %d) = %v, want %v", i, j, g, w)
			}
		}
	}
	// a transposed read (the per-element loop) and a comparison into bools
	tr := StridedBinary{Op: core.OpMax, Shape: []int{b, a}, XS: []int{1, b}, YS: []int{1, 0}}
	checkSplit(t, "strided transposed", runOp(t, tr, make([]float64, a*b), x, y))
	cmp := StridedBinary{Op: core.OpGe, Shape: []int{a, b}, XS: []int{b, 1}, YS: []int{0, 1}}
	checkSplit(t, "strided compare", runOp(t, cmp, make([]bool, a*b), toF32(x), toF32(y)))
	// rank 1: the split cuts the only row
	one := StridedBinary{Op: core.OpSub, Shape: []int{splitN}, XS: []int{1}, YS: []int{0}}
	checkSplit(t, "strided rank 1", runOp(t, one, make([]int64, splitN), toI64(splitData(splitN, 8)), []int64{5}))

	z := splitData(a*b+5, 9)
	mm := MaskMul{Cmp: core.OpGt, Shape: []int{a, b}, St: [3][]int{{b, 1}, {0, 0}, {1, a}}, Off: [3]int{0, 0, 5}}
	got = checkSplit(t, "maskMul", runOp(t, mm, make([]float64, a*b), x, []float64{0}, z)).([]float64)
	for i := range a {
		for j := range b {
			w := z[5+i+j*a] * 0
			if x[i*b+j] > 0 {
				w = z[5+i+j*a]
			}
			if g := got[i*b+j]; math.Float64bits(g) != math.Float64bits(w) && !(w != w && g != g) {
				t.Fatalf("maskMul (%d, %d) = %v, want %v", i, j, g, w)
			}
		}
	}
	mm32 := MaskMul{Cmp: core.OpLe, Shape: []int{1, a * b}, St: [3][]int{{0, 1}, {0, 1}, {0, 1}}}
	checkSplit(t, "maskMul f32", runOp(t, mm32, make([]float32, a*b), toI64(x), toI64(z), toF32(z)))
}

func TestGatherParallel(t *testing.T) {
	const a, b = 917, 613
	x := splitData(a*b*3, 10)
	for _, rest := range []int{1, 3} {
		k := transposeGather(t, a, b, rest)
		got := checkSplit(t, "gather transpose", runOp(t, k, make([]float64, a*b*rest), x[:a*b*rest])).([]float64)
		for i := range b {
			for j := range a {
				for r := range rest {
					w, g := x[(j*b+i)*rest+r], got[(i*a+j)*rest+r]
					if math.Float64bits(g) != math.Float64bits(w) {
						t.Fatalf("gather transpose rest %d: (%d, %d, %d) = %v, want %v", rest, i, j, r, g, w)
					}
				}
			}
		}
	}
	// the compiled evaluator: a shift (affine rows with out-of-bounds ends) and a
	// transposition (the in-bounds strided copy)
	for name, ix := range map[string]func(bl *core.Builder, i, j *core.Var) []core.Term{
		"shift":     func(bl *core.Builder, i, j *core.Var) []core.Term { return []core.Term{i, bl.Sub(j, core.ScalarI(2))} },
		"transpose": func(bl *core.Builder, i, j *core.Var) []core.Term { return []core.Term{j, i} },
	} {
		var bl core.Builder
		xv := bl.Var("x", ty(core.Float64, a, a))
		i, j := bl.Var("i", core.Scalar(core.Int64)), bl.Var("j", core.Scalar(core.Int64))
		p := mustProg(t, &bl, []*core.Var{xv}, bl.Gather(core.Shape{a, a}, xv, bl.IndexFn([]*core.Var{i, j}, ix(&bl, i, j)...)))
		checkSplit(t, "eval gather "+name, runExec(t, p, []int{a, a}, fd(core.Float64, []int{a, a}, x[:a*a]...)))
	}
}

// runExec compiles p and returns a run of it into a fresh float64 output of shape outSh.
func runExec(t *testing.T, p *core.Program, outSh []int, args ...*tensor.Dense) func() any {
	e, err := Compile(p)
	if err != nil {
		t.Fatal(err)
	}
	return func() any {
		out := tensor.New(tensor.WithShape(outSh...), tensor.Of(tensor.Float64))
		if err := e.RunInto([]*tensor.Dense{out}, args...); err != nil {
			t.Fatal(err)
		}
		return out.Data()
	}
}

func TestFusedParallel(t *testing.T) {
	var bl core.Builder
	x := bl.Var("x", ty(core.Float64, splitN))
	y := bl.Var("y", ty(core.Float64, splitN))
	half := bl.Replicate(splitN, core.ScalarF(core.Float64, 0.5))
	body := bl.Sub(bl.Add(bl.Mul(bl.Unary(core.OpExp, x), y), bl.Mul(x, half)), y)
	p := mustProg(t, &bl, []*core.Var{x, y}, body)
	xs, ys := splitData(splitN, 11), splitData(splitN, 12)
	got := checkSplit(t, "fused", runExec(t, p, []int{splitN}, fd(core.Float64, []int{splitN}, xs...), fd(core.Float64, []int{splitN}, ys...))).([]float64)
	for i := range xs {
		w := core.OpExp.FloatFunc()(xs[i])*ys[i] + xs[i]*0.5 - ys[i]
		if math.Float64bits(got[i]) != math.Float64bits(w) && !(w != w && got[i] != got[i]) {
			t.Fatalf("fused: element %d = %v, want %v", i, got[i], w)
		}
	}
}

func TestReductionsParallel(t *testing.T) {
	for _, sh := range [][3]int{{1, 1400, 613}, {6, 300, 613}, {3, 400, 613}, {1500, 400, 1}, {5, 120000, 1}} {
		pre, n, post := sh[0], sh[1], sh[2]
		x := splitData(pre*n*post, 13)
		name := fmt.Sprintf("%v", sh)
		prev := runtime.GOMAXPROCS(2)
		w := workers(max(pre, post), costOf(pre*n*post, wReduce))
		runtime.GOMAXPROCS(prev)
		if w < 2 {
			t.Fatalf("sum %s: one goroutine at GOMAXPROCS 2: the test needs an input that splits", name)
		}
		got := checkSplit(t, "sum "+name, runOp(t, Axis{Pre: pre, N: n, Post: post}, make([]float64, pre*post), x)).([]float64)
		for p := range pre {
			for c := range post {
				w := 0.0
				for i := range n {
					w += x[(p*n+i)*post+c]
				}
				if g := got[p*post+c]; math.Float64bits(g) != math.Float64bits(w) && !(w != w && g != g) {
					t.Fatalf("sum %s: (%d, %d) = %v, want %v", name, p, c, g, w)
				}
			}
		}
		checkSplit(t, "sum f32 "+name, runOp(t, Axis{Pre: pre, N: n, Post: post}, make([]float32, pre*post), toF32(x)))
		checkSplit(t, "sum i64 "+name, runOp(t, Axis{Pre: pre, N: n, Post: post}, make([]int64, pre*post), toI64(x)))
		am := checkSplit(t, "argmax "+name, runOp(t, Axis{Argmax: true, Pre: pre, N: n, Post: post}, make([]int64, pre*post), x)).([]int64)
		for p := range pre {
			for c := range post {
				best := 0
				for i := 1; i < n; i++ {
					v, b := x[(p*n+i)*post+c], x[(p*n+best)*post+c]
					if v > b || (b != b && v == v) {
						best = i
					}
				}
				if am[p*post+c] != int64(best) {
					t.Fatalf("argmax %s: (%d, %d) = %d, want %d", name, p, c, am[p*post+c], best)
				}
			}
		}
		if pre == 1 {
			checkSplit(t, "sumOuter "+name, runOp(t, SumOuter{}, make([]float64, post), x))
		}
	}
}

// affineScatter is the Scatter kernel (affine plan) of the index function ix over domain dom
// into the outer dims dst, blocks of rest elements.
func affineScatter(tb testing.TB, dom, dst []int, rest int, ix func(bl *core.Builder, v []*core.Var) []core.Term) *Scatter {
	var bl core.Builder
	vs := make([]*core.Var, len(dom))
	for i := range vs {
		vs[i] = bl.Var(fmt.Sprintf("i%d", i), core.Scalar(core.Int64))
	}
	prog, err := CompileIndexFn(bl.IndexFn(vs, ix(&bl, vs)...))
	if err != nil {
		tb.Fatal(err)
	}
	k := &Scatter{Dom: dom, Dst: dst, Rest: rest, IndexPlan: IndexPlan{Fn: prog}}
	k.AffineStrides, k.AffineBase, k.Affine = prog.AffinePlan(k.Dom, k.Dst)
	if !k.Affine {
		tb.Fatal("no affine plan")
	}
	return k
}

// The affine scatter kernel: the transpose of a 1024×1024 matrix (injective).
func BenchmarkOpScatterTranspose(b *testing.B) {
	k := affineScatter(b, []int{benchN, benchN}, []int{benchN, benchN}, 1, func(_ *core.Builder, v []*core.Var) []core.Term { return []core.Term{v[1], v[0]} })
	benchOp(b, k, make([]float64, opBenchN), benchData(opBenchN, 1))
}

func TestScatterParallel(t *testing.T) {
	const a, b, c = 917, 613, 5
	x := splitData(a*b*c, 14)
	// a transposition: injective, disjoint slices along the second variable
	tr := affineScatter(t, []int{a, b}, []int{b, a}, 1, func(_ *core.Builder, v []*core.Var) []core.Term { return []core.Term{v[1], v[0]} })
	got := checkSplit(t, "scatter transpose", runOp(t, tr, make([]float64, a*b), x[:a*b])).([]float64)
	for i := range a {
		for j := range b {
			if g, w := got[j*a+i], x[i*b+j]; math.Float64bits(g) != math.Float64bits(w) {
				t.Fatalf("scatter transpose (%d, %d) = %v, want %v", i, j, g, w)
			}
		}
	}
	// sliding windows (i, j, k) → (i, j+k): colliding writes within a slice along i, which
	// must be added in the serial order
	win := affineScatter(t, []int{a / 4, b, c}, []int{a / 4, b + c - 1}, 4, func(bl *core.Builder, v []*core.Var) []core.Term {
		return []core.Term{v[0], bl.Add(v[1], v[2])}
	})
	got = checkSplit(t, "scatter windows", runOp(t, win, make([]float64, a/4*(b+c-1)*4), x[:a/4*b*c*4])).([]float64)
	want := make([]float64, len(got))
	for i := range a / 4 {
		for j := range b {
			for k := range c {
				for r := range 4 {
					want[(i*(b+c-1)+j+k)*4+r] += x[((i*b+j)*c+k)*4+r]
				}
			}
		}
	}
	if i, ok := sameBits(got, want); !ok {
		t.Fatalf("scatter windows: element %d = %v, want %v", i, got[i], want[i])
	}
}

// TestSplitSizes: the inputs of the split tests are above the thresholds, so that with two
// or more CPUs they take the parallel path (the weights of the kernels they run), and a
// small input stays on the calling goroutine.
func TestSplitSizes(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	for _, w := range []int{wFused, wCheap, wDiv, wStrided, wHeavy, wReduce} {
		if n := workers(splitN, costOf(splitN, w)); n < 2 && w >= wCheap {
			t.Errorf("weight %d: %d elements run on %d goroutines", w, splitN, n)
		}
	}
	if n := workers(1000, costOf(1000, wReduce)); n != 1 {
		t.Errorf("1000 elements run on %d goroutines", n)
	}
}
