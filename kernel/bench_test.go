package kernel

import (
	"math"
	"math/rand"
	"os"
	"testing"

	"github.com/bulkad/bulkad/core"
	"github.com/bulkad/bulkad/core/coretest"

	"gorgonia.org/tensor"
)

// Benchmarks of the evaluator (Compile once, then RunInto per iteration) next to hand-written
// Go loops doing the same work: go test -run xxx -bench . ./core

const benchN = 1024 // matrices are benchN × benchN (1M elements)

func benchData(n int, seed int64) []float64 {
	rng := rand.New(rand.NewSource(seed))
	v := make([]float64, n)
	for i := range v {
		v[i] = rng.Float64()*2 - 1
	}
	return v
}

func benchDense(sh []int, seed int64) *tensor.Dense {
	return tensor.New(tensor.WithShape(sh...), tensor.WithBacking(benchData(core.Shape(sh).Size(), seed)))
}

func benchExec(b *testing.B, bl *core.Builder, params []*core.Var, body core.Term) *Exec {
	b.Helper()
	e, err := Compile(coretest.MustProgram(b, bl, params, body))
	if err != nil {
		b.Fatal(err)
	}
	return e
}

// timeLoop times body, a hand-written loop writing n float64s, once per iteration.
func timeLoop(b *testing.B, n int, body func()) {
	b.SetBytes(int64(8 * n))
	b.ResetTimer()
	for it := 0; it < b.N; it++ {
		body()
	}
}

// benchSquareIx benchmarks the gather (or scatter) of a benchN×benchN matrix x by the index
// function of (i, j) that ix builds.
func benchSquareIx(b *testing.B, scatter bool, ix func(bl *core.Builder, i, j *core.Var) []core.Term) {
	var bl core.Builder
	x := bl.Var("x", ty(core.Float64, benchN, benchN))
	i, j := bl.Var("i", core.Scalar(core.Int64)), bl.Var("j", core.Scalar(core.Int64))
	fn := bl.IndexFn([]*core.Var{i, j}, ix(&bl, i, j)...)
	sh := core.Shape{benchN, benchN}
	var body core.Term
	if scatter {
		body = bl.Scatter(sh, x, fn)
	} else {
		body = bl.Gather(sh, x, fn)
	}
	e := benchExec(b, &bl, []*core.Var{x}, body)
	runBench(b, e, []int{benchN, benchN}, benchDense([]int{benchN, benchN}, 1))
}

func runBench(b *testing.B, e *Exec, outSh []int, args ...*tensor.Dense) {
	out := tensor.New(tensor.WithShape(outSh...), tensor.Of(tensor.Float64))
	outs := []*tensor.Dense{out}
	b.SetBytes(int64(8 * core.Shape(outSh).Size()))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := e.RunInto(outs, args...); err != nil {
			b.Fatal(err)
		}
	}
}

// squareData is the operand (seed 1) and the output of the hand-written benchN×benchN loops.
func squareData() (x, out []float64) {
	return benchData(benchN*benchN, 1), make([]float64, benchN*benchN)
}

// eachIJ calls f for every (i, j) of a benchN×benchN matrix in row-major order; it inlines,
// and f with it.
func eachIJ(f func(i, j int)) {
	for i := 0; i < benchN; i++ {
		for j := 0; j < benchN; j++ {
			f(i, j)
		}
	}
}

// Gather with an affine index function: shift every row left by one (rows are contiguous).
func BenchmarkGatherShift_Eval(b *testing.B) {
	benchSquareIx(b, false, func(bl *core.Builder, i, j *core.Var) []core.Term {
		return []core.Term{i, bl.Add(j, core.ScalarI(1))}
	})
}

func BenchmarkGatherShift_Loop(b *testing.B) {
	x, out := squareData()
	timeLoop(b, len(out), func() {
		eachIJ(func(i, j int) {
			if j+1 < benchN {
				out[i*benchN+j] = x[i*benchN+j+1]
			} else {
				out[i*benchN+j] = 0
			}
		})
	})
}

// Gather with an affine index function: transposition (strided reads).
func BenchmarkGatherTranspose_Eval(b *testing.B) {
	benchSquareIx(b, false, func(_ *core.Builder, i, j *core.Var) []core.Term { return []core.Term{j, i} })
}

func BenchmarkGatherTranspose_Loop(b *testing.B) {
	x, out := squareData()
	timeLoop(b, len(out), func() { eachIJ(func(i, j int) { out[i*benchN+j] = x[j*benchN+i] }) })
}

// Gather by an index array (non-affine: a compiled closure per row): rows picked by am.
func BenchmarkGatherRows_Eval(b *testing.B) {
	var bl core.Builder
	x := bl.Var("x", ty(core.Float64, benchN, benchN))
	am := bl.Var("am", ty(core.Int64, benchN))
	i := bl.Var("i", core.Scalar(core.Int64))
	e := benchExec(b, &bl, []*core.Var{x, am}, bl.Gather(core.Shape{benchN, benchN}, x, bl.IndexFn([]*core.Var{i}, bl.Index(am, i))))
	idx := make([]int64, benchN)
	for k := range idx {
		idx[k] = int64((k * 7) % benchN)
	}
	runBench(b, e, []int{benchN, benchN}, benchDense([]int{benchN, benchN}, 1), tensor.New(tensor.WithShape(benchN), tensor.WithBacking(idx)))
}

func BenchmarkGatherRows_Loop(b *testing.B) {
	x := benchData(benchN*benchN, 1)
	idx := make([]int64, benchN)
	for k := range idx {
		idx[k] = int64((k * 7) % benchN)
	}
	out := make([]float64, benchN*benchN)
	timeLoop(b, len(out), func() {
		for i := 0; i < benchN; i++ {
			r := idx[i]
			row := out[i*benchN : (i+1)*benchN]
			if r < 0 || r >= benchN {
				clear(row)
				continue
			}
			copy(row, x[int(r)*benchN:int(r+1)*benchN])
		}
	})
}

// Scatter, the paper's pattern: scatter [N/2] x (\[i] -> [quot i 2]) on 1M elements
// (non-affine index function: a compiled closure per element).
func BenchmarkScatterQuot_Eval(b *testing.B) {
	const n = benchN * benchN
	var bl core.Builder
	x := bl.Var("x", ty(core.Float64, n))
	i := bl.Var("i", core.Scalar(core.Int64))
	e := benchExec(b, &bl, []*core.Var{x}, bl.Scatter(core.Shape{n / 2}, x, bl.IndexFn([]*core.Var{i}, bl.Binary(core.OpQuot, i, core.ScalarI(2)))))
	runBench(b, e, []int{n / 2}, benchDense([]int{n}, 2))
}

func BenchmarkScatterQuot_Loop(b *testing.B) {
	const n = benchN * benchN
	x := benchData(n, 2)
	out := make([]float64, n/2)
	timeLoop(b, len(out), func() {
		clear(out)
		for i := 0; i < n; i++ {
			if k := i / 2; k < len(out) {
				out[k] += x[i]
			}
		}
	})
}

// Scatter with an affine index function: scatter-transpose (the derivative of a transpose gather).
func BenchmarkScatterTranspose_Eval(b *testing.B) {
	benchSquareIx(b, true, func(_ *core.Builder, i, j *core.Var) []core.Term { return []core.Term{j, i} })
}

func BenchmarkScatterTranspose_Loop(b *testing.B) {
	x, out := squareData()
	timeLoop(b, len(out), func() {
		clear(out)
		eachIJ(func(i, j int) { out[j*benchN+i] += x[i*benchN+j] })
	})
}

// sumOuter of a 1024×1024 matrix.
func BenchmarkSumOuter_Eval(b *testing.B) {
	var bl core.Builder
	x := bl.Var("x", ty(core.Float64, benchN, benchN))
	e := benchExec(b, &bl, []*core.Var{x}, bl.SumOuter(x))
	runBench(b, e, []int{benchN}, benchDense([]int{benchN, benchN}, 3))
}

func BenchmarkSumOuter_Loop(b *testing.B) {
	x := benchData(benchN*benchN, 3)
	out := make([]float64, benchN)
	timeLoop(b, len(out), func() {
		clear(out)
		for i := 0; i < benchN; i++ {
			row := x[i*benchN : (i+1)*benchN]
			for j, v := range row {
				out[j] += v
			}
		}
	})
}

const benchMM = 256

// matmul of two 256×256 matrices (16.7M multiply-adds).
func BenchmarkMatMul_Eval(b *testing.B) {
	var bl core.Builder
	x := bl.Var("x", ty(core.Float64, benchMM, benchMM))
	y := bl.Var("y", ty(core.Float64, benchMM, benchMM))
	e := benchExec(b, &bl, []*core.Var{x, y}, bl.MatMul(x, y))
	runBench(b, e, []int{benchMM, benchMM}, benchDense([]int{benchMM, benchMM}, 4), benchDense([]int{benchMM, benchMM}, 5))
}

func BenchmarkMatMul_Loop(b *testing.B) {
	x := benchData(benchMM*benchMM, 4)
	y := benchData(benchMM*benchMM, 5)
	out := make([]float64, benchMM*benchMM)
	timeLoop(b, len(out), func() {
		for i := 0; i < benchMM; i++ {
			for j := 0; j < benchMM; j++ {
				s := 0.0
				for k := 0; k < benchMM; k++ {
					s += x[i*benchMM+k] * y[k*benchMM+j]
				}
				out[i*benchMM+j] = s
			}
		}
	})
}

// Element-wise chain on 1M elements: exp(x) * y + x * x - y.
func BenchmarkElementwise_Eval(b *testing.B) {
	benchElementwise(b, func(bl *core.Builder, x, y core.Term) core.Term {
		return bl.Sub(bl.Add(bl.Mul(bl.Unary(core.OpExp, x), y), bl.Mul(x, x)), y)
	})
}

func BenchmarkElementwise_Loop(b *testing.B) {
	x, y, out := elementwiseData()
	timeLoop(b, len(out), func() {
		for i := range out {
			out[i] = math.Exp(x[i])*y[i] + x[i]*x[i] - y[i]
		}
	})
}

// Cheap element-wise chain (memory bound): (x + y) * x - y * 0.5.
func BenchmarkElementwiseCheap_Eval(b *testing.B) {
	benchElementwise(b, func(bl *core.Builder, x, y core.Term) core.Term {
		half := bl.Replicate(benchN*benchN, core.ScalarF(core.Float64, 0.5))
		return bl.Sub(bl.Mul(bl.Add(x, y), x), bl.Mul(y, half))
	})
}

func BenchmarkElementwiseCheap_Loop(b *testing.B) {
	x, y, out := elementwiseData()
	timeLoop(b, len(out), func() {
		for i := range out {
			out[i] = (x[i]+y[i])*x[i] - y[i]*0.5
		}
	})
}

// benchElementwise times the compiled program body(x, y) on two vectors of benchN²
// elements (the data of elementwiseData).
func benchElementwise(b *testing.B, body func(bl *core.Builder, x, y core.Term) core.Term) {
	const n = benchN * benchN
	var bl core.Builder
	x := bl.Var("x", ty(core.Float64, n))
	y := bl.Var("y", ty(core.Float64, n))
	e := benchExec(b, &bl, []*core.Var{x, y}, body(&bl, x, y))
	runBench(b, e, []int{n}, benchDense([]int{n}, 6), benchDense([]int{n}, 7))
}

// elementwiseData is the operands and the output of the hand-written element-wise loops.
func elementwiseData() (x, y, out []float64) {
	const n = benchN * benchN
	return benchData(n, 6), benchData(n, 7), make([]float64, n)
}

func BenchmarkTranspose_Eval(b *testing.B) {
	var bl core.Builder
	x := bl.Var("x", ty(core.Float64, benchN, benchN))
	e := benchExec(b, &bl, []*core.Var{x}, bl.Transpose([]int{1, 0}, x))
	runBench(b, e, []int{benchN, benchN}, benchDense([]int{benchN, benchN}, 1))
}

func BenchmarkTranspose_Loop(b *testing.B) { BenchmarkGatherTranspose_Loop(b) }

// TestBenchRatios runs every Eval/Loop benchmark pair alternately (rounds × both, keeping the
// fastest of each) and prints the ratios; the machine is shared, so alternating is fairer than
// two separate runs. Skipped unless BENCH_RATIOS is set:
//
//	BENCH_RATIOS=1 go test -run TestBenchRatios -v ./core
func TestBenchRatios(t *testing.T) {
	if os.Getenv("BENCH_RATIOS") == "" {
		t.Skip("set BENCH_RATIOS=1")
	}
	pairs := []struct {
		name       string
		eval, loop func(*testing.B)
	}{
		{"GatherShift (affine)", BenchmarkGatherShift_Eval, BenchmarkGatherShift_Loop},
		{"GatherTranspose (affine, in bounds)", BenchmarkGatherTranspose_Eval, BenchmarkGatherTranspose_Loop},
		{"GatherRows (index array)", BenchmarkGatherRows_Eval, BenchmarkGatherRows_Loop},
		{"ScatterQuot (quot i 2)", BenchmarkScatterQuot_Eval, BenchmarkScatterQuot_Loop},
		{"ScatterTranspose (affine)", BenchmarkScatterTranspose_Eval, BenchmarkScatterTranspose_Loop},
		{"SumOuter", BenchmarkSumOuter_Eval, BenchmarkSumOuter_Loop},
		{"MatMul 256", BenchmarkMatMul_Eval, BenchmarkMatMul_Loop},
		{"Elementwise (exp chain)", BenchmarkElementwise_Eval, BenchmarkElementwise_Loop},
		{"ElementwiseCheap", BenchmarkElementwiseCheap_Eval, BenchmarkElementwiseCheap_Loop},
		{"Transpose", BenchmarkTranspose_Eval, BenchmarkTranspose_Loop},
	}
	const rounds = 5
	for _, p := range pairs {
		be, bl := math.Inf(1), math.Inf(1)
		for r := 0; r < rounds; r++ {
			be = math.Min(be, float64(testing.Benchmark(p.eval).NsPerOp()))
			bl = math.Min(bl, float64(testing.Benchmark(p.loop).NsPerOp()))
		}
		t.Logf("%-36s eval %9.3f ms  loop %9.3f ms  ratio %.2f", p.name, be/1e6, bl/1e6, be/bl)
	}
}
