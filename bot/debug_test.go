package bot

import (
	"math/rand"
	"os"
	"strconv"
	"testing"

	"github.com/bulkad/bulkad/core"
	"github.com/bulkad/bulkad/core/coretest"
	"gorgonia.org/tensor"
)

func naiveTerm(x core.Term, env map[string]*tensor.Dense) (*tensor.Dense, error) {
	return coretest.NaiveEval(&core.Program{Params: core.FreeVars(x), Body: x}, env)
}

func TestDebugSeed(t *testing.T) {
	seed, _ := strconv.ParseInt(os.Getenv("SEED"), 10, 64)
	if os.Getenv("SEED") == "" {
		t.Skip()
	}
	rng := rand.New(rand.NewSource(seed))
	cfg := coretest.Config{ScalarResult: seed%5 == 0, Smooth: seed%7 == 0}
	p := coretest.RandomProgram(rng, cfg)
	args := coretest.RandomArgs(rng, p)
	t.Logf("args %v", args)
	env := args
	var walk func(x core.Term, d int)
	walk = func(x core.Term, d int) {
		if _, ok := x.(*core.Tuple); ok {
			return
		}
		for _, v := range core.FreeVars(x) {
			if env[v.Name] == nil {
				return
			}
		}
		a, err := naiveTerm(x, env)
		if err != nil {
			t.Logf("%v", err)
			return
		}
		y, err := VectorizeTerm(x)
		if err != nil {
			t.Logf("%v", err)
			return
		}
		b, err := naiveTerm(y, env)
		if err != nil {
			t.Logf("%v", err)
			return
		}
		if s := coretest.Close(a, b, 1e-4); s != "" {
			t.Logf("DIFF %s\n  %v\n  %v\n  => %v", s, x, y, a)
			for _, c := range core.Children(x) {
				walk(c, d+1)
			}
		}
	}
	walk(p.Body, 0)
}
