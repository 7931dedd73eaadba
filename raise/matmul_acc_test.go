package raise

import (
	"math/rand"
	"strings"
	"testing"

	"github.com/bulkad/bulkad/core"
	kern "github.com/bulkad/bulkad/kernel"
)

// TestMatMulAcc: a coarse plan computes a sum with a matrix product as an accumulating
// MatMul step (matmulAcc) — the products of a chain Σ_t a_tᵀ·d_t added one after another
// into one array, the product on either side of the sum, x an input (copied) or a temporary
// (overwritten) — and agrees with core.Eval, at a shape whose products add their tiles in
// place (one panel) and at one that goes through scratch (k beyond a panel); a product read
// twice and a broadcast x stay separate steps.
func TestMatMulAcc(t *testing.T) {
	for _, tc := range []struct {
		name, params, src string
		accs              int // accumulating steps
		adds              int // Binary additions left
	}{
		{"chain", "a : [32,48] %s, b : [32,48] %s, c : [32,48] %s, d : [32,40] %s, e : [32,40] %s, f : [32,40] %s",
			"matmul (tr [1,0] a) d + matmul (tr [1,0] b) e + matmul (tr [1,0] c) f", 2, 0},
		{"input first", "x : [48,40] %s, a : [48,32] %s, d : [32,40] %s", "x + matmul a d", 1, 0},
		{"product first", "x : [48,40] %s, a : [48,32] %s, d : [40,32] %s", "matmul a (tr [1,0] d) + x", 1, 0},
		{"long k", "x : [20,30] %s, a : [20,700] %s, d : [700,30] %s", "x * x + matmul a d", 1, 0},
		{"product read twice", "x : [48,40] %s, a : [48,32] %s, d : [32,40] %s", "let p = matmul a d in (x + p) * p", 0, 1},
		{"broadcast x", "v : [40] %s, a : [48,32] %s, d : [32,40] %s", "replicate 48 v + matmul a d", 0, -1},
	} {
		for _, dt := range []string{"f64", "f32"} {
			p := parseProgram(t, strings.ReplaceAll(tc.params, "%s", dt), tc.src)
			args := randArgs(rand.New(rand.NewSource(11)), p)
			got, want, plans := coarseRun(t, p, args)
			tol := 1e-13
			if dt == "f32" {
				tol = 1e-5
			}
			// the plan's GEMM and core.Eval's loop sum the products in different orders
			// (kernel.TestMatMulAcc checks the accumulation's bits against the product and
			// an addition)
			if d := compareScaled(got, want, tol); d != "" {
				t.Errorf("%s %s: %s", tc.name, dt, d)
			}
			accs, adds := 0, 0
			for _, kp := range plans {
				for i := 0; i < kp.Steps(); i++ {
					switch k := kp.StepKernel(i).(type) {
					case kern.MatMul:
						if k.Acc {
							accs++
						}
					case kern.Binary:
						if k.Op == core.OpAdd {
							adds++
						}
					}
				}
			}
			if accs != tc.accs || tc.adds >= 0 && adds != tc.adds {
				t.Errorf("%s %s: %d accumulating products and %d additions, want %d and %d", tc.name, dt, accs, adds, tc.accs, tc.adds)
			}
		}
	}
}
