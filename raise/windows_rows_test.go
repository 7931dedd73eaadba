package raise

import (
	"math/rand"
	"testing"

	"github.com/bulkad/bulkad/core"
	"gorgonia.org/tensor"
)

// TestWindowDotFewerVars: a factor gathered by an index function with more outputs than
// variables (\[i] -> [1, i], a row of x: the derivative of a where or of an index) inside a
// sum of products or a scatter of one. Planning it indexed a row at −1 and panicked (an
// ONNX ReduceL2's gradient hit it); it is fused and equals core.Eval.
func TestWindowDotFewerVars(t *testing.T) {
	params := "x : [2,3] f64, y : [3] f64, z : [2,3] f64"
	for _, src := range []string{
		"sumOuter (gather [3] x (\\[i] -> [1, i]) * y)",
		"scatter [2,3] (y * gather [3] x (\\[i] -> [1, i])) (\\[i] -> [0, i])",
		"scatter [2,3] (gather [3] z (\\[i] -> [0, i]) * gather [3] x (\\[i] -> [1, 2 - i])) (\\[i] -> [1, i])",
	} {
		p, err := core.ParseProgram("fn (" + params + ") => " + src)
		if err != nil {
			t.Fatalf("parse %s: %v", src, err)
		}
		r := rand.New(rand.NewSource(5))
		args := map[string]*tensor.Dense{
			"x": randDense(r, "f64", 2, 3), "y": randDense(r, "f64", 3), "z": randDense(r, "f64", 2, 3),
		}
		for _, opt := range []Options{{}, {Coarse: true}} {
			raisedEqualsEvalWith(t, p, args, 0, opt)
		}
	}
}
