package raise

import (
	"math/rand"
	"testing"

	"github.com/bulkad/bulkad/core"
	"gorgonia.org/tensor"
)

// Differential test: every construct and every fusion of raise against package core's
// reference evaluator, term by term (each term is its own program, so a failure names it),
// raised per operation and coarsely (one plan node), within a relative tolerance.
//
// The operands are moderate values only (standard normal draws): this test covers the
// constructs, not the edges of the element-wise operations. tests/conformance covers those:
// every element-wise operation raised per operation and coarsely, at ranks 0, 1 and n, at
// the special values (±0, subnormals, ±Inf, NaN, ties, …), bit for bit against core.Eval;
// it is what decides which of Gorgonia's native ops raise may use (see nativeUnary).
func TestAgainstCoreEval(t *testing.T) {
	params := "x : [3,4] f64, y : [4] f64, z : [4,3] f64, s : [] f64, k : [] i64, v : [6] f64, am : [3] i64, w : [3,4] f32, u : [4] f32, " +
		"b3 : [2,3,4] f64, c3 : [2,4,3] f64, d4 : [2,2,3,4] f64, f3 : [3,3,3] f64, e3 : [2,3,4] f32"
	terms := []string{
		"x * replicate 3 y",
		"replicate 3 y - x",
		"x - tr [1,0] (replicate 4 (exp (sumOuter (tr [1,0] x))))",
		"x / tr [1,0] (replicate 4 (recip (sumOuter (tr [1,0] x))))",
		"reshape [3,4] (replicate 12 s) * x",
		"x * reshape [3,4] (replicate 3 (neg y))",
		"cast f64 (argmaxOuter (tr [1,0] x))",
		"cast f64 (argmaxOuter x)",
		"sumOuter (tr [1,0] x)",
		"sumOuter x",
		"sumOuter (replicate 3 y)",
		"gather [3] (tr [1,0] x) (\\[i] -> [index am [i], i])",
		"tr [1,0] (scatter [4,3] v (\\[i] -> [rem i 4, quot i 2]))",
		"tr [1,0] (gather [4,3] x (\\[i,j] -> [j, i]))",
		"gather [2,2,2,2] x (\\[a,b,i,j] -> [i + a, 2 * j + b])",
		"scatter [3,4] (gather [2,2,2,2] x (\\[a,b,i,j] -> [i + a, 2 * j + b])) (\\[a,b,i,j] -> [i + a, 2 * j + b])",
		"gather [3,4] x (\\[i,j] -> [i - 1, j + 1])",
		"scatter [3] v (\\[i] -> [quot i 2 - 1])",
		"gather [3] y (\\[i] -> [index (argmaxOuter (tr [1,0] x)) [i]])",
		"gather [3,4] x (\\[i,j] -> [cast i64 (index (cast f64 am) [i]), j])",
		"gather [3] x (\\[i] -> [i, argmaxOuter (gather [4] (tr [1,0] x) (\\[p] -> [p, i]))])",
		"scatter [3,4] (sumOuter (tr [1,0] x)) (\\[i] -> [i, argmaxOuter (gather [4] (tr [1,0] x) (\\[p] -> [p, i]))])",
		"gather [3] y (\\[i] -> [argmaxOuter (gather [2] y (\\[p] -> [p + i]))])",
		"gather [3] x (\\[i] -> [i, argmaxOuter (gather [4] x (\\[p] -> [i, p]))])",
		"matmul x z",
		"cast f64 (argmaxOuter (reshape [4,2,2] (gather [2,2,2,2] x (\\[a,b,i,j] -> [i + a, 2 * j + b]))))",
		"cast f64 (argmaxOuter (gather [2,2,2,2] x (\\[a,b,i,j] -> [i + a, 2 * j + b])))",
		"cast f64 (argmaxOuter (tr [1,0] (replicate 2 x)))",
		"x * gather [3,4] y (\\[i,j] -> [j])",
		"gather [2,2] x (\\[i,j] -> [i + 1, 2 * j + 1]) + gather [2,2] x (\\[i,j] -> [i, j])",
		"cast f64 (gather [3,4] (iota 4) (\\[i,j] -> [j]) == replicate 3 (argmaxOuter x)) * x",
		"replicate 3 y * cast f64 (x > tr [1,0] z)",
		"cast f64 (x >= replicate 3 (replicate 4 s)) * tr [1,0] z",
		"cast f32 (w < replicate 3 u) * w",
		"tr [1,0] (matmul x z)",
		"tr [1,0] (tr [1,0] x)",
		"reshape [12] (tr [1,0] (x * reshape [3,4] (replicate 3 y)))",
		"matmul (tr [1,0] (tr [1,0] x)) z",
		"tr [2,0,1] (reshape [2,2,3] (tr [1,0] x))",
		"matmul (tr [1,0] z) (tr [1,0] x)",
		"matmul x (tr [1,0] x)",
		"cond (s > 0.0) x (neg x)",
		"cond (s < 0.0) x (neg x)",
		"index x [k]",
		"index x [2]",
		"index x [k + 5]",
		"[y, exp y]",
		"cast f64 (iota 4)",
		"build1 3 (\\i -> index x [i] * y)",
		"let a = exp x in a * a + x",
		"cast f64 (quot (iota 5) (replicate 5 k) + rem (iota 5) (replicate 5 k))",
		"cast f64 (max (iota 4) (replicate 4 k)) + cast f64 (y > replicate 4 s)",
		"cast f64 ((y > replicate 4 s) && (y < replicate 4 (s + 1.0)))",
		"tan x + sigmoid x + tanh x + log1p (abs x) + expm1 x + sqrt (abs x)",
		"floor x + ceil x + sign x + sin x * cos x",
		"pow (abs x + reshape [3,4] (replicate 12 1.0)) x",
		"max x (tr [1,0] z) + min x (neg x)",
		"atan2 x (tr [1,0] z)",
		"reshape [12] x",
		"reshape [] (reshape [1] s)",
		"tr [1,0] x",
		"cast f64 w * x",
		"w * replicate 3 u",
		"matmul (tr [1,0] w) w",
		"sumOuter (tr [1,0] w)",
		// batched matmul: flags from transposes of the last two dimensions, not of others
		"matmul b3 c3",
		"matmul b3 (tr [0,2,1] b3)",
		"matmul (tr [0,2,1] c3) (tr [0,2,1] b3)",
		"tr [0,2,1] (matmul b3 c3)",
		"matmul (tr [0,2,1] (tr [0,2,1] b3)) c3",
		"matmul d4 (tr [0,1,3,2] d4)",
		"matmul (tr [1,0,2] f3) f3",
		"matmul (tr [2,1,0] f3) (tr [0,2,1] f3)",
		"matmul (tr [0,2,1] e3) e3",
		"matmul (exp b3) c3 + tr [0,2,1] (matmul (tr [0,2,1] c3) (tr [0,2,1] b3))",
		// a scatter under a transposed batched operand: the dense batched product, not the
		// 2-D scatter-matmul
		"matmul (tr [0,2,1] (scatter [2,4,3] v (\\[i] -> [quot i 3, rem i 4, rem i 3]))) c3",
		"matmul (tr [1,0] (reshape [4,3] (scatter [2,2,3] v (\\[i] -> [quot i 3, rem i 2, rem i 3])))) z",
		// sums of products over windows (windows.go): conv-like windows with padding
		// times a broadcast filter, col2im-like and filter-gradient-like scatters
		"sumOuter (reshape [4,2,2] (gather [2,2,2,2] x (\\[a,b,i,j] -> [i + a, 2 * j + b + (-1)]) * gather [2,2,2,2] y (\\[a,b,i,j] -> [2 * a + b])))",
		"sumOuter (gather [3,4] y (\\[i,j] -> [j]) * gather [3,4] x (\\[i,j] -> [i, j + i + (-1)]))",
		"scatter [3,4] (reshape [2,2,3,4] (replicate 4 x) * gather [2,2,3,4] y (\\[a,b,i,j] -> [2 * a + b])) (\\[a,b,i,j] -> [i + a + (-1), j + b + (-1)])",
		"scatter [4] (reshape [2,2,3,4] (replicate 4 x) * gather [2,2,3,4] x (\\[a,b,i,j] -> [i + a + (-1), j + b + (-1)])) (\\[a,b,i,j] -> [2 * a + b])",
		"scatter [4] (tr [1,0] (replicate 4 y) * gather [4,4] x (\\[i,j] -> [i + (-1), j])) (\\[i,j] -> [j])",
		"sumOuter (gather [4,3] x (\\[j,i] -> [i, index (argmaxOuter (tr [1,0] x)) [i]]) * gather [4,3] y (\\[j,i] -> [j]))",
		"sumOuter (reshape [4,2,2] (gather [2,2,2,2] w (\\[a,b,i,j] -> [i + a, 2 * j + b + (-1)]) * gather [2,2,2,2] u (\\[a,b,i,j] -> [2 * a + b])))",
	}
	r := rand.New(rand.NewSource(5))
	f64s := func(n int) []float64 {
		d := make([]float64, n)
		for i := range d {
			d[i] = r.NormFloat64()
		}
		return d
	}
	f32s := func(n int) []float32 {
		d := make([]float32, n)
		for i := range d {
			d[i] = float32(r.NormFloat64())
		}
		return d
	}
	args := map[string]*tensor.Dense{
		"x":  tensor.New(tensor.WithShape(3, 4), tensor.WithBacking(f64s(12))),
		"y":  tensor.New(tensor.WithShape(4), tensor.WithBacking(f64s(4))),
		"z":  tensor.New(tensor.WithShape(4, 3), tensor.WithBacking(f64s(12))),
		"s":  tensor.New(tensor.FromScalar(0.3)),
		"k":  tensor.New(tensor.FromScalar(int64(2))),
		"v":  tensor.New(tensor.WithShape(6), tensor.WithBacking(f64s(6))),
		"am": tensor.New(tensor.WithShape(3), tensor.WithBacking([]int64{3, 0, 7})),
		"w":  tensor.New(tensor.WithShape(3, 4), tensor.WithBacking(f32s(12))),
		"u":  tensor.New(tensor.WithShape(4), tensor.WithBacking(f32s(4))),
		"b3": tensor.New(tensor.WithShape(2, 3, 4), tensor.WithBacking(f64s(24))),
		"c3": tensor.New(tensor.WithShape(2, 4, 3), tensor.WithBacking(f64s(24))),
		"d4": tensor.New(tensor.WithShape(2, 2, 3, 4), tensor.WithBacking(f64s(48))),
		"f3": tensor.New(tensor.WithShape(3, 3, 3), tensor.WithBacking(f64s(27))),
		"e3": tensor.New(tensor.WithShape(2, 3, 4), tensor.WithBacking(f32s(24))),
	}
	for _, mode := range []struct {
		name string
		opt  Options
	}{{"ops", Options{}}, {"coarse", Options{Coarse: true}}} {
		for _, src := range terms {
			t.Run(mode.name+"/"+src, func(t *testing.T) {
				p, err := core.ParseProgram("fn (" + params + ") => " + src)
				if err != nil {
					t.Fatalf("parse: %v", err)
				}
				tol := 1e-12
				if p.Body.Type().Dtype == core.Float32 {
					tol = 1e-6
				}
				raisedEqualsEvalWith(t, p, args, tol, mode.opt)
			})
		}
	}
}
