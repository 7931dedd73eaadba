package ad

import (
	"github.com/bulkad/bulkad/core"
	"github.com/pkg/errors"
)

// atZero removes the parameters named in names from p and binds each to zeros of its type by
// a let at the top of the body: the gradient with respect to a parameter at the value zero
// (see Options.AtZero) stays in the result, and the artifact no longer takes it as an argument.
func atZero(p *core.Program, names []string) (*core.Program, error) {
	drop := make(map[string]bool, len(names))
	for _, n := range names {
		drop[n] = true
	}
	var params, zeros []*core.Var
	for _, v := range p.Params {
		if drop[v.Name] {
			zeros = append(zeros, v)
			delete(drop, v.Name)
			continue
		}
		params = append(params, v)
	}
	for n := range drop {
		return nil, errors.Errorf("at zero: %s is not a parameter", n)
	}
	body := p.Body
	for i := len(zeros) - 1; i >= 0; i-- {
		v := zeros[i]
		z, err := zeroTerm(v.Type())
		if err != nil {
			return nil, errors.Wrapf(err, "at zero: %s", v.Name)
		}
		if body, err = core.NewLet(v, z, body); err != nil {
			return nil, errors.Wrapf(err, "at zero: %s", v.Name)
		}
	}
	// Every free variable of the body was a parameter and the removed ones are now bound
	// above it, so the program stays closed; core.NewProgram is not called (its check is
	// quadratic on long let chains).
	return &core.Program{Params: params, Body: body}, nil
}

// zeroTerm is replicate d1 (… (replicate dk 0.0)) : t, t a float type.
func zeroTerm(t core.Type) (core.Term, error) {
	var x core.Term
	x, err := core.NewLitF(core.Type{Shape: core.Shape{}, Dtype: t.Dtype}, []float64{0})
	if err != nil {
		return nil, err
	}
	for i := len(t.Shape) - 1; i >= 0; i-- {
		if x, err = core.NewReplicate(t.Shape[i], x); err != nil {
			return nil, err
		}
	}
	return x, nil
}
