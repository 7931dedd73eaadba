package raise

import (
	"math/rand"
	"strings"
	"testing"

	"gorgonia.org/gorgonia"

	"github.com/bulkad/bulkad/core/tensors"
	kern "github.com/bulkad/bulkad/kernel"
)

// TestRecomputedBroadcast: an element-wise operation of an array with a broadcast of a
// smaller one constant along the rows (a batch norm's x − mean), read by two fused trees, is
// computed in each of them and never written (no step writes an array of its size but the two
// trees), where a product of two arrays, or the sum with a vector repeated along the rows (a
// bias), read twice stays a step of its own; all give core.Eval's bits.
func TestRecomputedBroadcast(t *testing.T) {
	for _, tc := range []struct {
		name, src string
		big       int // steps writing an array of x's size
	}{
		{"x − mean read by two trees",
			"let d = x - gather [32,16,256] (reshape [16,1] m) (\\[i, j, k] -> [j, 0]) in (d * d * y + y, d * y - d)", 2},
		{"x · y read by two trees",
			"let d = x * y in (d * d * y + y, d * y - d)", 3},
		{"x + a bias along the rows read by two trees",
			"let d = x + gather [32,16,256] b (\\[i, j, k] -> [k]) in (d * d * y + y, d * y - d)", 3},
	} {
		for _, dt := range []string{"f64", "f32"} {
			p := parseProgram(t, strings.ReplaceAll("x : [32,16,256] %s, y : [32,16,256] %s, m : [16] %s, b : [256] %s", "%s", dt), tc.src)
			args := randArgs(rand.New(rand.NewSource(5)), p)
			want, err := tensors.EvalTuple(p, args)
			if err != nil {
				t.Fatal(err)
			}
			g := gorgonia.NewGraph()
			outs := runWith(t, g, p, bindParams(t, g, p, args), Options{Coarse: true, FreshResults: true})
			for i, o := range outs {
				if d := bitsEqual(values(t, o), want[i].Data()); d != "" {
					t.Errorf("%s %s: result %d: %s", tc.name, dt, i, d)
				}
			}
			big := 0
			for _, n := range g.AllNodes() {
				op, ok := n.Op().(*planOp)
				if !ok {
					continue
				}
				kp := op.Plan()
				for i := 0; i < kp.Steps(); i++ {
					if kp.StepTerm(i).Type().Shape.Size() == 32*16*256 {
						big++
						if _, fused := kp.StepKernel(i).(*kern.Fused); !fused && tc.big == 2 {
							t.Errorf("%s %s: step %d (%T) writes an array of x's size: %v", tc.name, dt, i, kp.StepKernel(i), kp.StepTerm(i))
						}
					}
				}
			}
			if big != tc.big {
				t.Errorf("%s %s: %d steps write arrays of x's size, want %d", tc.name, dt, big, tc.big)
			}
		}
	}
}
