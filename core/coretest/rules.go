package coretest

import (
	"math/rand"
	"testing"

	"github.com/bulkad/bulkad/core"
	"github.com/bulkad/bulkad/core/tensors"
	"gorgonia.org/tensor"
)

// RuleEnv types the free variables of the hand-written rule tests (the simplifier's and the
// BOT's): vectors a, b, iv, bv of length 4, matrices m (2×3), mt (3×2), q (3×4), qt (4×3),
// ms (2×3, f32), 3-tensors t3 (2×3×4) and t3b (2×4×3), 4-tensors t4 (2×2×3×4) and t4b
// (2×2×4×3), scalars x, y (f64), k, j (i64), c (bool). It returns a fresh map.
func RuleEnv() map[string]core.Type {
	f64 := func(sh ...int) core.Type { return core.Type{Shape: core.Shape(sh), Dtype: core.Float64} }
	return map[string]core.Type{
		"a": f64(4), "b": f64(4), "m": f64(2, 3), "mt": f64(3, 2), "q": f64(3, 4), "qt": f64(4, 3),
		"t3": f64(2, 3, 4), "t3b": f64(2, 4, 3), "t4": f64(2, 2, 3, 4), "t4b": f64(2, 2, 4, 3),
		"x": f64(), "y": f64(),
		"ms": {Shape: core.Shape{2, 3}, Dtype: core.Float32},
		"k":  core.Scalar(core.Int64), "j": core.Scalar(core.Int64),
		"iv": {Shape: core.Shape{4}, Dtype: core.Int64},
		"c":  core.Scalar(core.Bool), "bv": {Shape: core.Shape{4}, Dtype: core.Bool},
	}
}

// ParseRule parses a term over RuleEnv's variables, failing the test on an error.
func ParseRule(t testing.TB, src string) core.Term {
	t.Helper()
	u, err := core.Parse(src, RuleEnv())
	if err != nil {
		t.Fatalf("parse %q: %v", src, err)
	}
	return u
}

// Evaluator evaluates a term on tensor values of its free variables.
type Evaluator func(core.Term, map[string]*tensor.Dense) (*tensor.Dense, error)

// SameRuleValues checks that a rewrite preserved meaning: in and out, terms over RuleEnv's
// variables, must give the same values (within 1e-12, NaN where NaN) with the reference
// evaluator and with each of also, on trials random environments drawn from seed (the first 8
// finite, the others with infinities and NaNs).
func SameRuleValues(t testing.TB, seed int64, in, out core.Term, trials int, also ...Evaluator) {
	t.Helper()
	rng := rand.New(rand.NewSource(seed))
	evals := append([]Evaluator{tensors.EvalTerm}, also...)
	for trial := 0; trial < trials; trial++ {
		env := RandomEnv(rng, RuleEnv(), trial >= 8)
		var ref *tensor.Dense
		for k, eval := range evals {
			want, err := eval(in, env)
			if err != nil {
				t.Fatalf("evaluator %d, input: %v\n%v", k, err, in)
			}
			got, err := eval(out, env)
			if err != nil {
				t.Fatalf("evaluator %d, rewritten: %v\n%v", k, err, out)
			}
			if d := Close(want, got, 1e-12); d != "" {
				t.Fatalf("evaluator %d: values differ (%s)\ninput:     %v\nrewritten: %v", k, d, in, out)
			}
			if ref == nil {
				ref = want
			} else if d := Close(ref, want, 1e-12); d != "" {
				t.Fatalf("evaluator %d and core.Eval disagree (%s) on %v", k, d, in)
			}
		}
	}
}
