package raise

import (
	"math/rand"
	"testing"

	"github.com/bulkad/bulkad/core"
	"gorgonia.org/tensor"
)

// TestWindowDotFewerVarsThanOutputs: a factor gathered by an index function with fewer
// variables than outputs (one time step of a recurrence, \[i,j] -> [t, i, c + j], which the
// gradient of lower.Recurrent contains) is read in place, and raised sums and scatters of
// products with it equal core.Eval (identityAccess once indexed a row at −1 and panicked).
func TestWindowDotFewerVarsThanOutputs(t *testing.T) {
	params := "x : [3,2,8] f64, y : [2,4] f64"
	for _, src := range []string{
		"scatter [3,2,8] (y * gather [2,4] x (\\[i,j] -> [1, i, 4 + j])) (\\[i,j] -> [2, i, j])",
		"sumOuter (y * gather [2,4] x (\\[i,j] -> [2, i, j + 3]))",
	} {
		p, err := core.ParseProgram("fn (" + params + ") => " + src)
		if err != nil {
			t.Fatalf("parse %s: %v", src, err)
		}
		r := rand.New(rand.NewSource(2))
		args := map[string]*tensor.Dense{"x": randDense(r, "f64", 3, 2, 8), "y": randDense(r, "f64", 2, 4)}
		for _, opt := range []Options{{}, {Coarse: true}} {
			raisedEqualsEvalWith(t, p, args, 0, opt)
		}
	}
}
