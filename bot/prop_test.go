package bot

import (
	"fmt"
	"math/rand"
	"testing"

	"github.com/bulkad/bulkad/core"
	"github.com/bulkad/bulkad/core/coretest"
	"gorgonia.org/tensor"
)

func tolFor(p *core.Program) float64 {
	if p.Body.Type().Dtype == core.Float32 {
		return 1e-4
	}
	return 1e-12
}

// safeEval is core.Eval with a panic turned into an error.
func safeEval(p *core.Program, args map[string]*tensor.Dense) (r *tensor.Dense, err error) {
	defer func() {
		if x := recover(); x != nil {
			err = fmt.Errorf("panic: %v", x)
		}
	}()
	return core.Eval(p, args)
}

// propStats counts what the property checks saw.
type propStats struct {
	programs, evalChecked, evalDisagree int
}

// checkVectorize runs the BOT property on one program: Vectorize succeeds, the result is in
// normal form, and it evaluates to the same value as the input. Values are compared with
// coretest.NaiveEval (an independent tree-walking evaluator) always, and with core.Eval
// whenever core.Eval agrees with NaiveEval on the input program (disagreements there are
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
	want, err := coretest.NaiveEval(p, args)
	if err != nil {
		t.Errorf("seed %d: NaiveEval(p): %v\nprogram: %v", seed, err, p)
		return nil, false
	}
	got, err := coretest.NaiveEval(q, args)
	if err != nil {
		t.Errorf("seed %d: NaiveEval(Vectorize(p)): %v\nprogram: %v\nvectorized: %v", seed, err, p, q)
		return nil, false
	}
	if d := coretest.Close(want, got, tol); d != "" {
		t.Errorf("seed %d: value changed by Vectorize: %s\nprogram: %v\nvectorized: %v\nargs: %v", seed, d, p, q, args)
		return nil, false
	}
	// core.Eval: checked on both programs; a disagreement with NaiveEval, which already
	// established that the values are equal, is an evaluator bug (counted, logged).
	ev, err1 := safeEval(p, args)
	eq, err2 := safeEval(q, args)
	if err1 == nil && err2 == nil && coretest.Close(ev, eq, tol) == "" && coretest.Close(ev, want, tol) == "" {
		st.evalChecked++
	} else {
		st.evalDisagree++
		if st.evalDisagree <= 3 {
			t.Logf("seed %d: core.Eval disagrees with NaiveEval (errors %v, %v)", seed, err1, err2)
		}
	}
	return q, true
}

// TestVectorizeProperty: 2000 random programs (seeds 0..1999; every 5th has a scalar
// result, every 7th is Smooth).
func TestVectorizeProperty(t *testing.T) {
	var st propStats
	for seed := int64(0); seed < 2000; seed++ {
		rng := rand.New(rand.NewSource(seed))
		cfg := coretest.Config{ScalarResult: seed%5 == 0, Smooth: seed%7 == 0}
		p := coretest.RandomProgram(rng, cfg)
		if _, ok := checkVectorize(t, seed, p, coretest.RandomArgs(rng, p), &st); !ok {
			return
		}
	}
	t.Logf("%d programs; compared with core.Eval on %d; core.Eval disagreed with NaiveEval (or failed) on %d",
		st.programs, st.evalChecked, st.evalDisagree)
}
