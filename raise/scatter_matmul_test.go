package raise

import (
	"math"
	"math/rand"
	"strings"
	"testing"

	kern "github.com/bulkad/bulkad/kernel"

	"github.com/bulkad/bulkad/core"
	"gorgonia.org/tensor"
)

// matmul (tr [1,0] S) B with S a scatter (to argmax positions, masked, transposed and
// reshaped as in a convnet's filter gradient, or affine) runs as one sparse op; its value
// against package core's evaluator (summation orders differ: 1e-12, f32 1e-5), also when B
// holds an infinity (the dense definition: 0·Inf = NaN in the rows S does not touch).
func TestScatterMatmul(t *testing.T) {
	params := poolParams + ", bm : [32,13] f64, bi : [32,5] f64, v : [3,3] f64, b4 : [4,5] f64, g32 : [2,3,2,2] f32, bm32 : [32,13] f32"
	pool := "tr [0,2,3,1] (scatter [2,3,4,4] g (F) * cast f64 (x >= y))"
	cases := []struct {
		name, src string
		fused     bool
	}{
		{"masked pool scatter, transposed and reshaped", "matmul (tr [1,0] (reshape [32,3] (" + pool + "))) bm", true},
		{"pool scatter", "matmul (tr [1,0] (reshape [32,3] (tr [0,2,3,1] (scatter [2,3,4,4] g (F))))) bm", true},
		{"infinity in B", "matmul (tr [1,0] (reshape [32,3] (" + pool + "))) bi", true},
		{"affine 2-D scatter (column varies innermost)", "matmul (tr [1,0] (scatter [4,3] v (\\[i,j] -> [i + 1, j]))) b4", true},
		{"not a scatter", "matmul (tr [1,0] (reshape [32,3] (tr [0,2,3,1] (x * y)))) bm", false},
		{"reshape splitting the last dimension", "matmul (tr [1,0] (reshape [16,6] (" + pool + "))) (reshape [16,5] (gather [16,5] b4 (\\[i,j] -> [rem i 4, j])))", false},
		{"f32", "matmul (tr [1,0] (reshape [32,3] (tr [0,2,3,1] (scatter [2,3,4,4] g32 (" + strings.ReplaceAll(poolF, "A", "(index (argmaxOuter W) [b,c,i,j])") + "))))) bm32", true},
	}
	args := poolData()
	r := rand.New(rand.NewSource(21))
	bi := randF(r, 160)
	bi[7*5+2] = math.Inf(1) // row 7: in the padding-free map, a position no argmax reaches (checked below)
	bm32 := make([]float32, 416)
	for i := range bm32 {
		bm32[i] = float32(r.NormFloat64())
	}
	g32 := make([]float32, 24)
	for i := range g32 {
		g32[i] = float32(r.NormFloat64())
	}
	args["bm"] = tensor.New(tensor.WithShape(32, 13), tensor.WithBacking(randF(r, 416))) // 13 = 8 + 4 + 1 columns
	args["bi"] = tensor.New(tensor.WithShape(32, 5), tensor.WithBacking(bi))
	args["v"] = tensor.New(tensor.WithShape(3, 3), tensor.WithBacking(randF(r, 9)))
	args["b4"] = tensor.New(tensor.WithShape(4, 5), tensor.WithBacking(randF(r, 20)))
	args["g32"] = tensor.New(tensor.WithShape(2, 3, 2, 2), tensor.WithBacking(g32))
	args["bm32"] = tensor.New(tensor.WithShape(32, 13), tensor.WithBacking(bm32))
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			src := poolSrc(c.src)
			if c.name == "f32" {
				src = strings.ReplaceAll(src, "("+poolW+")", "("+strings.ReplaceAll(poolW, " x ", " x32 ")+")")
			}
			p, err := core.ParseProgram("fn (" + params + ") => " + src)
			if err != nil {
				t.Fatalf("parse: %v", err)
			}
			tol := 1e-12
			if c.name == "f32" {
				tol = 1e-5
			}
			outs := raisedEqualsEval(t, p, args, tol)
			op, isOp := outs[0].Op().(*Op)
			_, sm := op.k.(*kern.ScatterMatMul)
			if fused := isOp && sm; fused != c.fused {
				t.Errorf("%s: sparse op used %v, want %v", p, fused, c.fused)
			}
			if c.name == "infinity in B" {
				nan := 0
				got, err := flat(outs[0].Value()) // equal to core.EvalTuple's (checked above)
				if err != nil {
					t.Fatal(err)
				}
				for _, v := range got.([]float64) {
					if v != v {
						nan++
					}
				}
				if nan == 0 {
					t.Errorf("the infinity in B does not reach the result (no NaN): the case tests nothing")
				}
			}
		})
	}
}
