package raise

import (
	"github.com/bulkad/bulkad/core"
	kern "github.com/bulkad/bulkad/kernel"
)

// evalOp plans t as one custom op evaluated by package core: its inputs are t's free variables.
func (pl *plan) evalOp(t core.Term, kind string) (ref, error) {
	fvs := core.FreeVars(t)
	ins := make([]core.Term, len(fvs))
	types := make([]core.Type, len(fvs))
	for i, v := range fvs {
		ins[i] = v
		types[i] = v.Type()
	}
	return pl.programOp(t, kind, fvs, ins, types, t)
}

// programOp plans t as one custom op that runs the compiled program params ⇒ body on ins.
func (pl *plan) programOp(t core.Term, kind string, params []*core.Var, ins []core.Term, types []core.Type, body core.Term) (ref, error) {
	p, err := core.NewProgram(params, body)
	if err != nil {
		return ref{}, termErr(t, "%v", err)
	}
	ex, err := kern.Compile(p)
	if err != nil {
		return ref{}, termErr(t, "compiling for the core evaluator: %v", err)
	}
	k := &kern.ExecKernel{Ex: ex, Args: types, Out: t.Type()}
	return pl.custom(t, kind, ins, func([]*core.Var) (core.Term, []*core.Var, error) { return body, params, nil }, k)
}

// evalIndexed plans a gather or scatter whose index function the compiler rejects: the op's
// inputs are the array x and the index function's free variables; package core evaluates it.
func (pl *plan) evalIndexed(t, x core.Term, scatter bool) (ref, error) {
	kind := "gather"
	if scatter {
		kind = "scatter"
	}
	xv := core.NewNamer(t).FreshVar("arr", x.Type())
	var body core.Term
	var err error
	switch u := t.(type) {
	case *core.Gather:
		body, err = core.NewGather(u.Shape, xv, u.Fn)
	case *core.Scatter:
		body, err = core.NewScatter(u.Shape, xv, u.Fn)
	}
	if err != nil {
		return ref{}, termErr(t, "%v", err)
	}
	fvs := core.FreeVars(body)
	params := []*core.Var{xv}
	ins := []core.Term{x}
	types := []core.Type{x.Type()}
	for _, v := range fvs {
		if v.Name == xv.Name {
			continue
		}
		params = append(params, v)
		ins = append(ins, v)
		types = append(types, v.Type())
	}
	return pl.programOp(t, kind, params, ins, types, body)
}
