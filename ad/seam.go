package ad

import (
	"github.com/bulkad/bulkad/bot"
	"github.com/bulkad/bulkad/core"
)

// vectorize is the bulk-operation transform (package bot).
func vectorize(p *core.Program) (*core.Program, error) { return bot.Vectorize(p) }

// simplifyProgram is core.Simplify with the lets in keep preserved. Until the simplifier is
// available this seam returns the program unchanged.
func simplifyProgram(p *core.Program, keep []string) (*core.Program, error) { return p, nil }
