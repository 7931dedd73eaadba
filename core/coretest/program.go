package coretest

import (
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
