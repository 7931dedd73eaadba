package bot

import (
	"math/rand"
	"testing"

	"github.com/bulkad/bulkad/core/coretest"
)

// FuzzVectorize drives the program generator with a fuzzed seed and configuration:
// Eval(p) == Eval(Vectorize(p)), Vectorize(p) in normal form, and
// Eval(Simplify(q)) == Eval(q) for q = p and q = Vectorize(p). A quarter of the runs have
// infinite and NaN arguments.
//
//	go test -run xxx -fuzz FuzzVectorize -fuzztime 60s ./bot
//
// Without -fuzz, the seed corpus below runs as a plain test.
func FuzzVectorize(f *testing.F) {
	for seed := int64(0); seed < 16; seed++ {
		f.Add(seed, uint8(seed))
	}
	f.Add(int64(-7), uint8(0xff))
	f.Fuzz(func(t *testing.T, seed int64, flags uint8) {
		rng := rand.New(rand.NewSource(seed))
		cfg := coretest.Config{
			ScalarResult: flags&1 != 0,
			Smooth:       flags&2 != 0,
			MaxDepth:     4 + int(flags>>2&3),   // 4..7
			MaxBuildNest: 2 + int(flags>>4&3),   // 2..5
			MaxDim:       2 + int(flags>>6&1)*2, // 2 or 4
		}
		if seed%3 != 0 {
			cfg.BuildProb = 0.4
			cfg.Shares = true
		}
		cfg.ReuseNames = seed%5 == 4
		p := coretest.RandomProgram(rng, cfg)
		args := coretest.RandomArgs(rng, p)
		if seed%4 == 3 {
			coretest.PoisonArgs(rng, p, args) // infinities and NaNs
		}
		var st propStats
		q, ok := checkVectorize(t, seed, p, args, &st)
		if !ok {
			t.Logf("flags %#x", flags)
			return
		}
		if _, ok := checkSimplify(t, seed, "p", p, args, &st); !ok {
			t.Logf("flags %#x", flags)
			return
		}
		if _, ok := checkSimplify(t, seed, "Vectorize(p)", q, args, &st); !ok {
			t.Logf("flags %#x", flags)
		}
	})
}
