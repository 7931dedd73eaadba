package coretest

import (
	"strings"
	"testing"

	"github.com/bulkad/bulkad/core"
)

// MustProgram is the program with params and body built with b, failing tb when b recorded
// an error or the program is ill-formed. b is nil for a body built without a Builder.
func MustProgram(tb testing.TB, b *core.Builder, params []*core.Var, body core.Term) *core.Program {
	tb.Helper()
	if b == nil {
		b = new(core.Builder)
	}
	if err := b.Err(); err != nil {
		tb.Fatalf("building program: %v", err)
	}
	p, err := core.NewProgram(params, body)
	if err != nil {
		tb.Fatalf("building program: %v", err)
	}
	return p
}

// CheckSimplifyFixedPoint checks that core.Simplify reaches a fixed point on the programs
// prog(seed), seed 0 to n−1: simplifying its result again changes nothing. It logs the first
// three programs where it does not and fails tb when any did (or at the first error).
func CheckSimplifyFixedPoint(tb testing.TB, n int64, prog func(seed int64) (*core.Program, error)) {
	tb.Helper()
	notFixed := 0
	for seed := int64(0); seed < n; seed++ {
		p, err := prog(seed)
		if err != nil {
			tb.Fatalf("seed %d: %v", seed, err)
		}
		once, err := core.Simplify(p)
		if err != nil {
			tb.Fatalf("seed %d: Simplify: %v\n%v", seed, err, p)
		}
		twice, err := core.Simplify(once)
		if err != nil {
			tb.Fatalf("seed %d: Simplify again: %v", seed, err)
		}
		if !core.Equal(once.Body, twice.Body) {
			notFixed++
			if notFixed <= 3 {
				tb.Logf("seed %d: Simplify is not idempotent:\n once  %v\n twice %v", seed,
					clipped(once.Body.String()), clipped(twice.Body.String()))
			}
		}
	}
	if notFixed > 0 {
		tb.Errorf("%d of %d programs were not at a fixed point after Simplify", notFixed, n)
	}
}

// clipped is s without surrounding space, cut after 400 bytes.
func clipped(s string) string {
	if len(s) > 400 {
		return s[:400] + "…"
	}
	return strings.TrimSpace(s)
}
