package bot

import (
	"math/rand"
	"testing"

	"github.com/bulkad/bulkad/core"
	"github.com/bulkad/bulkad/core/coretest"
)

// Simplify with the options the later stages use keeps the values of vectorised random
// programs: KeepLets on every let name of the top-level spine, and AssumeFinite (finite
// arguments only, where it is exact).
func TestSimplifyOptionsProperty(t *testing.T) {
	var st propStats
	for seed := int64(0); seed < 1000; seed++ {
		rng := rand.New(rand.NewSource(seed))
		p := coretest.RandomProgram(rng, propConfig(seed))
		args := coretest.RandomArgs(rng, p)
		q, err := Vectorize(p)
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		var names []string
		chain, _ := core.LetChain(q.Body)
		for _, l := range chain {
			names = append(names, l.Var.Name)
		}
		r, ok := checkSimplify(t, seed, "Vectorize(p) with KeepLets", q, args, &st, core.KeepLets(names...))
		if !ok {
			return
		}
		if err := core.Check(r); err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		if _, ok := checkSimplify(t, seed, "Vectorize(p) with AssumeFinite", q, args, &st, core.AssumeFinite()); !ok {
			return
		}
	}
}
