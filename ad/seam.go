package ad

import "github.com/bulkad/bulkad/core"

// vectorize is the bulk-operation transform (package bot). Until bot.Vectorize is available
// this seam returns the program unchanged; programs with float build1 are then rejected by
// the forward pass.
func vectorize(p *core.Program) (*core.Program, error) { return p, nil }

// simplifyProgram is core.Simplify with the lets in keep preserved. Until the simplifier is
// available this seam returns the program unchanged.
func simplifyProgram(p *core.Program, keep []string) (*core.Program, error) { return p, nil }
