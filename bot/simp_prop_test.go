package bot

import (
	"math/rand"
	"testing"

	"github.com/bulkad/bulkad/core"
	"github.com/bulkad/bulkad/core/coretest"
	"github.com/bulkad/bulkad/core/tensors"
	"gorgonia.org/tensor"
)

// checkSimplify checks Eval(Simplify(q)) == Eval(q) with core.Eval (the reference evaluator).
// like in checkVectorize).
func checkSimplify(t *testing.T, seed int64, what string, q *core.Program, args map[string]*tensor.Dense, st *propStats, opts ...core.SimplifyOption) (*core.Program, bool) {
	t.Helper()
	r, err := core.Simplify(q, opts...)
	if err != nil {
		t.Errorf("seed %d: Simplify(%s): %v\nprogram: %v", seed, what, err, q)
		return nil, false
	}
	tol := tolFor(q)
	want, err := tensors.Eval(q, args)
	if err != nil {
		t.Errorf("seed %d: tensors.Eval(%s): %v", seed, what, err)
		return nil, false
	}
	got, err := tensors.Eval(r, args)
	if err != nil {
		t.Errorf("seed %d: tensors.Eval(Simplify(%s)): %v\nsimplified: %v", seed, what, err, r)
		return nil, false
	}
	if d := coretest.Close(want, got, tol); d != "" {
		t.Errorf("seed %d: value changed by Simplify(%s): %s\nprogram: %v\nsimplified: %v\nargs: %v", seed, what, d, q, r, args)
		return nil, false
	}
	return r, true
}

func TestSimplifyProperty(t *testing.T) {
	var st propStats
	for seed := int64(0); seed < propPrograms; seed++ {
		rng := rand.New(rand.NewSource(seed))
		p := coretest.RandomProgram(rng, propConfig(seed))
		args := propArgs(rng, seed, p)
		if _, ok := checkSimplify(t, seed, "p", p, args, &st); !ok {
			return
		}
		q, err := Vectorize(p)
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		if _, ok := checkSimplify(t, seed, "Vectorize(p)", q, args, &st); !ok {
			return
		}
	}
}
