package ad

import (
	"github.com/bulkad/bulkad/bot"
	"github.com/bulkad/bulkad/core"
)

// vectorize is the bulk-operation transform (package bot).
func vectorize(p *core.Program) (*core.Program, error) { return bot.Vectorize(p) }

// simplifyProgram is core.Simplify (index/gather fusion, let inlining, matmul contraction)
// with the lets named in keep preserved.
func simplifyProgram(p *core.Program, keep []string) (*core.Program, error) {
	return core.Simplify(p, core.KeepLets(keep...))
}
