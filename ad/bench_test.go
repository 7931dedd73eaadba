package ad

import (
	"fmt"
	"math/rand"
	"testing"
	"time"

	"github.com/bulkad/bulkad/core"
	"github.com/bulkad/bulkad/kernel"
	"gorgonia.org/tensor"
)

// randomDense draws a tensor of type ty: floats in [-1, 1], ints in [0, hi).
func randomDense(rng *rand.Rand, ty core.Type, hi int) *tensor.Dense {
	v := newValue(ty)
	for k := range v.f {
		v.f[k] = rng.Float64()*2 - 1
	}
	for k := range v.i {
		v.i[k] = int64(rng.Intn(hi))
	}
	v.round()
	return v.toDense()
}

type cheapCase struct {
	name string
	src  string
	hi   int // bound of random integer arguments
}

func mlpSrc(dt string) string {
	return fmt.Sprintf(`fn (x : [128,64] %[1]s, w1 : [64,128] %[1]s, b1 : [128] %[1]s, w2 : [128,64] %[1]s, b2 : [64] %[1]s, w3 : [64,10] %[1]s, b3 : [10] %[1]s) =>
  let h1 = tanh (matmul x w1 + replicate 128 b1) in
  let h2 = tanh (matmul h1 w2 + replicate 128 b2) in
  let o = matmul h2 w3 + replicate 128 b3 in
  sumOuter (sumOuter (o * o))`, dt)
}

var cheapCases = []cheapCase{
	{"dot", `fn (x : [100000] f64, y : [100000] f64) => sumOuter (x * y)`, 1},
	{"mlp-f64", mlpSrc("f64"), 1},
	{"mlp-f32", mlpSrc("f32"), 1},
	{"gather", `fn (table : [500,32] f64, ids : [4096] i64) =>
  let e = gather [4096,32] table (\[i] -> [index ids [i]]) in
  sumOuter (sumOuter (e * e))`, 500},
}

// BenchmarkCheapGradient alternates the primal program and the gradient artifact (value and
// gradient) on the same random inputs, both compiled once, and reports their times and the
// ratio gradient/primal (target ≤ 3).
func BenchmarkCheapGradient(b *testing.B) {
	for _, c := range cheapCases {
		b.Run(c.name, func(b *testing.B) {
			p, err := core.ParseProgram(c.src)
			if err != nil {
				b.Fatal(err)
			}
			rng := rand.New(rand.NewSource(1))
			args := map[string]*tensor.Dense{}
			for _, v := range p.Params {
				args[v.Name] = randomDense(rng, v.Type(), c.hi)
			}
			prim, err := kernel.Compile(p)
			if err != nil {
				b.Fatal(err)
			}
			a, err := Grad(p)
			if err != nil {
				b.Fatal(err)
			}
			grad, err := kernel.Compile(a.Program())
			if err != nil {
				b.Fatal(err)
			}
			if _, err := grad.Run(args); err != nil {
				b.Fatal(err)
			}
			if _, err := prim.Run(args); err != nil {
				b.Fatal(err)
			}
			var tp, tg time.Duration
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				t0 := time.Now()
				if _, err := prim.Run(args); err != nil {
					b.Fatal(err)
				}
				t1 := time.Now()
				if _, err := grad.Run(args); err != nil {
					b.Fatal(err)
				}
				t2 := time.Now()
				tp += t1.Sub(t0)
				tg += t2.Sub(t1)
			}
			b.ReportMetric(float64(tp.Nanoseconds())/float64(b.N), "primal-ns")
			b.ReportMetric(float64(tg.Nanoseconds())/float64(b.N), "grad-ns")
			b.ReportMetric(float64(tg)/float64(tp), "ratio")
		})
	}
}

// TestCheapCasesGradients checks the benchmark programs' gradients (small FD spot checks on
// the smaller ones, and that every artifact runs).
func TestCheapCasesGradients(t *testing.T) {
	for _, c := range cheapCases {
		p := parse(t, c.src)
		if _, err := Grad(p); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
	}
	small := parse(t, `fn (x : [4,3] f64, w1 : [3,5] f64, b1 : [5] f64, w2 : [5,2] f64) =>
  let h1 = tanh (matmul x w1 + replicate 4 b1) in
  let o = matmul h1 w2 in
  sumOuter (sumOuter (o * o))`)
	rng := rand.New(rand.NewSource(2))
	checkGradient(t, "small mlp", small, randomArgs(rng, small, -1, 1, 0), checkOpts{})
	g := parse(t, `fn (table : [5,3] f64, ids : [7] i64) =>
  let e = gather [7,3] table (\[i] -> [index ids [i]]) in
  sumOuter (sumOuter (e * e))`)
	args := randomArgs(rng, g, -1, 1, 0)
	args["ids"].i = []int64{0, 1, 1, 4, 4, 4, 2}
	checkGradient(t, "embedding", g, args, checkOpts{})
}
