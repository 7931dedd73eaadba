package bot

import (
	"fmt"
	"math/rand"
	"testing"

	"github.com/bulkad/bulkad/core"
	"github.com/bulkad/bulkad/core/coretest"
	"github.com/bulkad/bulkad/core/tensors"
	"github.com/bulkad/bulkad/kernel"
	"gorgonia.org/tensor"
)

func tolFor(p *core.Program) float64 {
	if p.Body.Type().Dtype == core.Float32 {
		return 1e-4
	}
	return 1e-12
}

// safeEval is kernel.Eval with a panic turned into an error.
func safeEval(p *core.Program, args map[string]*tensor.Dense) (r *tensor.Dense, err error) {
	defer func() {
		if x := recover(); x != nil {
			err = fmt.Errorf("panic: %v", x)
		}
	}()
	return kernel.Eval(p, args)
}

// propStats counts what the property checks saw.
type propStats struct {
	programs, evalChecked, evalDisagree int
}

// checkVectorize runs the BOT property on one program: Vectorize succeeds, the result is in
// normal form, and it evaluates to the same value as the input. Values are compared with
// core.Eval (the reference evaluator) always, and with kernel.Eval
// whenever kernel.Eval agrees with core.Eval on the input program (disagreements there are
// evaluator bugs, counted and reported in the log, not BOT failures).
func checkVectorize(t *testing.T, seed int64, p *core.Program, args map[string]*tensor.Dense, st *propStats) (*core.Program, bool) {
	t.Helper()
	st.programs++
	q, err := Vectorize(p)
	if err != nil {
		t.Errorf("seed %d: Vectorize: %v\nprogram: %v", seed, err, p)
		return nil, false
	}
	if err := CheckNormalForm(q.Body); err != nil {
		t.Errorf("seed %d: %v\nprogram: %v\nvectorized: %v", seed, err, p, q)
		return nil, false
	}
	tol := tolFor(p)
	want, err := tensors.Eval(p, args)
	if err != nil {
		t.Errorf("seed %d: tensors.Eval(p): %v\nprogram: %v", seed, err, p)
		return nil, false
	}
	got, err := tensors.Eval(q, args)
	if err != nil {
		t.Errorf("seed %d: tensors.Eval(Vectorize(p)): %v\nprogram: %v\nvectorized: %v", seed, err, p, q)
		return nil, false
	}
	if d := coretest.Close(want, got, tol); d != "" {
		t.Errorf("seed %d: value changed by Vectorize: %s\nprogram: %v\nvectorized: %v\nargs: %v", seed, d, p, q, args)
		return nil, false
	}
	// kernel.Eval: checked on both programs; a disagreement with core.Eval, which already
	// established that the values are equal, is an evaluator bug (counted, logged).
	ev, err1 := safeEval(p, args)
	eq, err2 := safeEval(q, args)
	if err1 == nil && err2 == nil && coretest.Close(ev, eq, tol) == "" && coretest.Close(ev, want, tol) == "" {
		st.evalChecked++
	} else {
		st.evalDisagree++
		if st.evalDisagree <= 3 {
			t.Logf("seed %d: kernel.Eval disagrees with core.Eval (errors %v, %v)", seed, err1, err2)
		}
	}
	return q, true
}

// propConfig is the generator configuration of the property tests for a seed: every 5th
// program has a scalar result, every 7th is Smooth, the odd seeds favour build1 (nested
// up to 3 deep, 4 for every 4th seed) and use share, and every third reuses binder names.
func propConfig(seed int64) coretest.Config {
	cfg := coretest.Config{ScalarResult: seed%5 == 0, Smooth: seed%7 == 0}
	if seed%2 == 1 {
		cfg.BuildProb = 0.5
		cfg.Shares = true
	}
	if seed%4 == 3 {
		cfg.MaxBuildNest = 4
	}
	// every third program reuses binder names (shadowing: capture-avoidance)
	cfg.ReuseNames = seed%3 == 2
	return cfg
}

// propPrograms is the number of programs of the property tests.
const propPrograms = 5000

// TestVectorizeProperty: propPrograms random programs (seeds 0.., configured by propConfig).
func TestVectorizeProperty(t *testing.T) {
	var st propStats
	for seed := int64(0); seed < propPrograms; seed++ {
		rng := rand.New(rand.NewSource(seed))
		p := coretest.RandomProgram(rng, propConfig(seed))
		if _, ok := checkVectorize(t, seed, p, propArgs(rng, seed, p), &st); !ok {
			return
		}
	}
	t.Logf("%d programs; compared with kernel.Eval on %d; kernel.Eval disagreed with core.Eval (or failed) on %d",
		st.programs, st.evalChecked, st.evalDisagree)
}

// propArgs draws the arguments of a property-test program; for every 4th seed (seeds 1, 5,
// …) about a tenth of the float elements are +Inf, -Inf or NaN, so rewrites that are exact
// only on finite values are caught.
func propArgs(rng *rand.Rand, seed int64, p *core.Program) map[string]*tensor.Dense {
	args := coretest.RandomArgs(rng, p)
	if seed%4 == 1 {
		coretest.PoisonArgs(rng, p, args)
	}
	return args
}
