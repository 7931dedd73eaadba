package kernel

import (
	"fmt"
	"math"
	"math/rand"
	"testing"

	"github.com/bulkad/bulkad/core"
	"github.com/bulkad/bulkad/core/coretest"
	"github.com/bulkad/bulkad/core/tensors"
	"gorgonia.org/tensor"
)

// propConfig varies the generator over the seeds: both float dtypes, nested builds, global
// sharing, shadowing binder names, larger let chains.
func propConfig(seed int64) coretest.Config {
	cfg := coretest.Config{Dtype: core.Float64, Shares: seed%2 == 0, ReuseNames: seed%5 == 0}
	if seed%3 == 0 {
		cfg.Dtype = core.Float32
	}
	switch seed % 4 {
	case 1:
		cfg.BuildProb, cfg.MaxBuildNest = 0.4, 3
	case 2:
		cfg.MaxDepth, cfg.MaxDim = 8, 5
	case 3:
		cfg.TargetNodes = 40
	}
	return cfg
}

// reorders reports whether p contains an operation whose kernel may add in another order
// than core.Eval (matmul: blocked products); elsewhere the two must agree exactly.
func reorders(p *core.Program) bool {
	found := false
	core.PostOrder(p.Body, func(t core.Term) {
		if _, ok := t.(*core.MatMul); ok {
			found = true
		}
	})
	return found
}

// agree compares the kernel's result with the reference: NaN exactly where the reference
// has NaN, infinities equal, finite values bit for bit when exact, else within rel·(1+|want|).
func agree(got, want *tensor.Dense, exact bool, rel float64) error {
	if got.Dtype() != want.Dtype() || !got.Shape().Eq(want.Shape()) {
		return fmt.Errorf("got %v %v, want %v %v", got.Dtype(), got.Shape(), want.Dtype(), want.Shape())
	}
	g, err := tensors.ToLit(got)
	if err != nil {
		return err
	}
	w, err := tensors.ToLit(want)
	if err != nil {
		return err
	}
	for i, wv := range w.F {
		gv := g.F[i]
		var ok bool
		switch {
		case math.IsNaN(wv) || math.IsNaN(gv):
			ok = math.IsNaN(wv) && math.IsNaN(gv)
		case exact:
			ok = math.Float64bits(gv) == math.Float64bits(wv)
		case math.IsInf(wv, 0):
			ok = gv == wv
		default:
			ok = math.Abs(gv-wv) <= rel*(1+math.Abs(wv))
		}
		if !ok {
			return fmt.Errorf("element %d: kernel %v, reference %v (exact %v)", i, gv, wv, exact)
		}
	}
	return nil
}

// TestKernelAgreesWithReference runs 5,000 generated programs (both dtypes, nested builds,
// shares; out-of-bounds indices from the generator; a third of the argument sets with ±Inf
// and NaN elements) with the kernel evaluator and with core.Eval.
func TestKernelAgreesWithReference(t *testing.T) {
	n := int64(5000)
	if testing.Short() {
		n = 500
	}
	var exact, poisoned int
	for seed := int64(0); seed < n; seed++ {
		rng := rand.New(rand.NewSource(seed))
		cfg := propConfig(seed)
		p := coretest.RandomProgram(rng, cfg)
		args := coretest.RandomArgs(rng, p)
		if seed%3 == 1 {
			coretest.PoisonArgs(rng, p, args)
			poisoned++
		}
		want, err := tensors.Eval(p, args)
		if err != nil {
			t.Fatalf("seed %d: core.Eval: %v\n%v", seed, err, p)
		}
		got, err := Eval(p, args)
		if err != nil {
			t.Fatalf("seed %d: kernel Eval: %v\n%v", seed, err, p)
		}
		ex := !reorders(p)
		if ex {
			exact++
		}
		rel := 1e-12
		if cfg.Dtype == core.Float32 {
			rel = 1e-5
		}
		if err := agree(got, want, ex, rel); err != nil {
			t.Fatalf("seed %d: %v\nprogram: %v\nargs: %v", seed, err, p, args)
		}
	}
	t.Logf("%d programs, %d compared exactly, %d with infinities and NaNs", n, exact, poisoned)
}
