package raise

import (
	"math/rand"
	"strings"
	"testing"

	"github.com/bulkad/bulkad/core"
	"github.com/bulkad/bulkad/core/tensors"
	kern "github.com/bulkad/bulkad/kernel"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Batched matmuls raise to one MatMul kernel each, with the batch count and with transposes
// of the last two dimensions as flags (no transpose node); a transpose of other dimensions
// stays a transpose, and a scatter under a batched operand is not taken for the 2-D
// scatter-matmul. Values against core.Eval.
func TestBatchedMatMulRaise(t *testing.T) {
	params := "fn (b3 : [2,3,4] f64, c3 : [2,4,3] f64, d4 : [2,2,3,4] f64, f3 : [3,3,3] f64, v : [6] f64) => "
	type want struct {
		kind   string
		batch  int
		ta, tb bool
	}
	cases := []struct {
		name, body string
		want       want
		transposes bool // a transpose node is expected (not a flag)
	}{
		{"plain", "matmul b3 c3", want{"matmul", 2, false, false}, false},
		{"both flags", "matmul (tr [0,2,1] c3) (tr [0,2,1] b3)", want{"matmul", 2, true, true}, false},
		{"transposed result", "tr [0,2,1] (matmul b3 c3)", want{"matmul", 2, true, true}, false},
		{"double transpose", "matmul (tr [0,2,1] (tr [0,2,1] b3)) c3", want{"matmul", 2, false, false}, false},
		{"rank 4", "matmul d4 (tr [0,1,3,2] d4)", want{"matmul", 4, false, true}, false},
		{"batch transpose", "matmul (tr [1,0,2] f3) f3", want{"matmul", 3, false, false}, true},
		{"scatter operand", "matmul (tr [0,2,1] (scatter [2,4,3] v (\\[i] -> [quot i 3, rem i 4, rem i 3]))) c3",
			want{"matmul", 2, true, false}, false},
	}
	r := rand.New(rand.NewSource(12))
	args := map[string]*tensor.Dense{
		"b3": randDense(r, "f64", 2, 3, 4), "c3": randDense(r, "f64", 2, 4, 3), "d4": randDense(r, "f64", 2, 2, 3, 4),
		"f3": randDense(r, "f64", 3, 3, 3), "v": randDense(r, "f64", 6),
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, err := core.ParseProgram(params + c.body)
			if err != nil {
				t.Fatal(err)
			}
			g := gorgonia.NewGraph()
			bind := bindParams(t, g, p, args)
			outs := run(t, g, p, bind)
			want, err := tensors.Eval(p, args)
			if err != nil {
				t.Fatal(err)
			}
			if d := compareScaled(values(t, outs[0]), want.Data(), 1e-12); d != "" {
				t.Errorf("%s: %s", p, d)
			}
			op, ok := outs[0].Op().(*Op)
			if !ok || op.Kind() != c.want.kind {
				t.Fatalf("result op %v (%T), want a %s", outs[0].Op(), outs[0].Op(), c.want.kind)
			}
			k, ok := op.k.(kern.MatMul)
			if !ok {
				t.Fatalf("kernel %T, want kern.MatMul", op.k)
			}
			if k.Batch != c.want.batch || k.TransA != c.want.ta || k.TransB != c.want.tb {
				t.Errorf("kernel batch %d transA %v transB %v, want %d %v %v", k.Batch, k.TransA, k.TransB, c.want.batch, c.want.ta, c.want.tb)
			}
			tr := false
			for _, n := range g.AllNodes() {
				if n.Op() != nil && (strings.Contains(n.Op().String(), "ᵀ") || strings.HasPrefix(n.Op().String(), "bulkad: tr")) {
					tr = true
				}
			}
			if tr != c.transposes {
				t.Errorf("transpose node present: %v, want %v", tr, c.transposes)
			}
		})
	}
}
