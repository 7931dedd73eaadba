package coretest

import (
	"math/rand"
	"testing"

	"github.com/bulkad/bulkad/core"
)

// TestRandomProgramCoverage checks that generated programs type-check and that, over many
// seeds, every construct the package documentation promises occurs.
func TestRandomProgramCoverage(t *testing.T) {
	seen := map[string]int{}
	maxNest := 0
	for seed := int64(0); seed < 500; seed++ {
		rng := rand.New(rand.NewSource(seed))
		cfg := Config{ScalarResult: seed%3 == 0, Smooth: seed%4 == 0}
		p := RandomProgram(rng, cfg)
		if err := core.Check(p); err != nil {
			t.Fatalf("seed %d: %v\n%v", seed, err, p)
		}
		if cfg.ScalarResult && !p.Body.Type().Equal(core.Scalar(p.Body.Type().Dtype)) {
			t.Fatalf("seed %d: result type %v is not a scalar", seed, p.Body.Type())
		}
		args := RandomArgs(rng, p)
		if len(args) != len(p.Params) {
			t.Fatalf("seed %d: %d args for %d params", seed, len(args), len(p.Params))
		}
		core.PostOrder(p.Body, func(n core.Term) {
			switch n := n.(type) {
			case *core.Unary:
				seen["unary:"+n.Op.String()]++
				if cfg.Smooth {
					switch n.Op {
					case core.OpAbs, core.OpSign, core.OpFloor, core.OpCeil:
						t.Errorf("seed %d: smooth program uses %v", seed, n.Op)
					}
				}
			case *core.Binary:
				seen["binary:"+n.Op.String()]++
			case *core.Build1:
				seen["build1"]++
			default:
				seen[typeName(n)]++
			}
		})
		if d := buildNest(p.Body); d > maxNest {
			maxNest = d
		}
	}
	for _, want := range []string{"*core.Let", "*core.Cond", "*core.Index", "*core.SumOuter", "*core.ArgmaxOuter",
		"*core.Gather", "*core.Scatter", "*core.FromVector", "*core.Replicate", "*core.Transpose", "*core.Reshape",
		"build1", "*core.Iota", "*core.MatMul", "*core.Cast", "*core.Lit", "binary:quot", "binary:rem",
		"unary:log", "unary:sqrt", "binary:pow", "binary:max", "unary:floor"} {
		if seen[want] == 0 {
			t.Errorf("construct %s never generated", want)
		}
	}
	if maxNest < 3 {
		t.Errorf("build1 nesting reached only %d, want ≥ 3", maxNest)
	}
	t.Logf("constructs: %v; max build1 nesting %d", seen, maxNest)
}

func typeName(n core.Term) string {
	switch n.(type) {
	case *core.Let:
		return "*core.Let"
	case *core.Cond:
		return "*core.Cond"
	case *core.Index:
		return "*core.Index"
	case *core.SumOuter:
		return "*core.SumOuter"
	case *core.ArgmaxOuter:
		return "*core.ArgmaxOuter"
	case *core.Gather:
		return "*core.Gather"
	case *core.Scatter:
		return "*core.Scatter"
	case *core.FromVector:
		return "*core.FromVector"
	case *core.Replicate:
		return "*core.Replicate"
	case *core.Transpose:
		return "*core.Transpose"
	case *core.Reshape:
		return "*core.Reshape"
	case *core.Iota:
		return "*core.Iota"
	case *core.MatMul:
		return "*core.MatMul"
	case *core.Cast:
		return "*core.Cast"
	case *core.Lit:
		return "*core.Lit"
	case *core.Var:
		return "*core.Var"
	}
	return "other"
}

func buildNest(t core.Term) int {
	memo := map[core.Term]int{}
	var f func(core.Term) int
	f = func(t core.Term) int {
		if d, ok := memo[t]; ok {
			return d
		}
		d := 0
		for _, c := range core.Children(t) {
			if x := f(c); x > d {
				d = x
			}
		}
		if _, ok := t.(*core.Build1); ok {
			d++
		}
		memo[t] = d
		return d
	}
	return f(t)
}

func TestTargetNodes(t *testing.T) {
	for _, n := range []int{1000, 10000} {
		p := RandomProgram(rand.New(rand.NewSource(1)), Config{TargetNodes: n})
		s := core.Size(p.Body)
		if s < n/2 || s > 3*n {
			t.Errorf("TargetNodes %d gave %d distinct nodes", n, s)
		}
	}
}
