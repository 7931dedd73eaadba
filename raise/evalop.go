package raise

import (
	"github.com/bulkad/bulkad/core"
	"github.com/pkg/errors"
	"gorgonia.org/tensor"
)

// evalK runs a one-term core program with package core's evaluator: the fallback for what the
// specialised kernels do not cover (build1, index functions the compiler rejects).
type evalK struct {
	ex   *core.Exec
	args []core.Type
	out  core.Type
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

func (k *evalK) run(out any, ins []any) error {
	args := make([]*tensor.Dense, len(ins))
	for i, in := range ins {
		args[i] = denseOver(k.args[i], in)
	}
	if err := k.ex.RunInto([]*tensor.Dense{denseOver(k.out, out)}, args...); err != nil {
		return errors.Wrap(err, "raise: core evaluator")
	}
	return nil
}

// evalOp plans t as one custom op evaluated by package core: its inputs are t's free variables.
func (pl *plan) evalOp(t core.Term, kind string) (ref, error) {
	fvs := core.FreeVars(t)
	ins := make([]core.Term, len(fvs))
	types := make([]core.Type, len(fvs))
	for i, v := range fvs {
		ins[i] = v
		types[i] = v.Type()
	}
	p, err := core.NewProgram(fvs, t)
	if err != nil {
		return ref{}, termErr(t, "%v", err)
	}
	ex, err := core.Compile(p)
	if err != nil {
		return ref{}, termErr(t, "compiling for the core evaluator: %v", err)
	}
	k := &evalK{ex: ex, args: types, out: t.Type()}
	return pl.custom(t, kind, ins, func([]*core.Var) (core.Term, []*core.Var, error) { return t, fvs, nil }, k)
}
