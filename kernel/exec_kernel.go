package kernel

import (
	"github.com/bulkad/bulkad/core"
	"github.com/pkg/errors"
	"gorgonia.org/tensor"
)

// ExecKernel runs a one-term core program with package core's evaluator: the fallback for what the
// specialised kernels do not cover (build1, index functions the compiler rejects).
type ExecKernel struct {
	Ex   *Exec
	Args []core.Type
	Out  core.Type
}

func denseOver(t core.Type, s any) *tensor.Dense {
	sh := []int(t.Shape)
	if len(sh) == 0 {
		sh = nil
	}
	opts := []tensor.ConsOpt{tensor.WithBacking(s)}
	if len(sh) > 0 {
		opts = append(opts, tensor.WithShape(sh...))
	} else {
		opts = append(opts, tensor.WithShape())
	}
	return tensor.New(opts...)
}

// Run implements Kernel.
func (k *ExecKernel) Run(out any, ins []any) error {
	args := make([]*tensor.Dense, len(ins))
	for i, in := range ins {
		args[i] = denseOver(k.Args[i], in)
	}
	if err := k.Ex.RunInto([]*tensor.Dense{denseOver(k.Out, out)}, args...); err != nil {
		return errors.Wrap(err, "kernel: core evaluator")
	}
	return nil
}
