package ad

import (
	"github.com/bulkad/bulkad/core"
	"github.com/pkg/errors"
)

// HVP returns the Hessian-vector product program of p, whose result is a rank-0 float,
// built forward over reverse: the JVP (forward mode, dual arrays) of p's gradient program.
// Its parameters are the gradient program's (p's, less the Options.AtZero ones) followed by
// one direction parameter TangentPrefix+w ("d_w") per wrt name, of w's type; its body is
//
//	let … in (value, g_1, …, g_k, ⟨∇value, v⟩, (H·v)_1, …, (H·v)_k)
//
// with k wrt names in Options.Wrt order (every float parameter when empty): the value, the
// gradient, the directional derivative of the value along v = (d_w_1, …, d_w_k) and the
// product of the Hessian with v, one array per wrt parameter. It is one program, not two
// nested reverse passes: its cost is a small constant times the gradient's. Options.Keep
// names lets that survive in the primal part; Options.AtZero parameters are differentiated
// at zero (their directions stay parameters).
func HVP(p *core.Program, o Options) (*core.Program, error) {
	const op = "hvp"
	if p == nil {
		return nil, errors.New("ad: hvp: nil program")
	}
	go1 := o
	go1.AtZero = nil // the directions of AtZero parameters need them as parameters below
	art, err := GradWith(p, go1)
	if err != nil {
		return nil, errors.Wrap(err, "ad: hvp: gradient")
	}
	jo := Options{Wrt: art.Wrt(), Keep: o.Keep, NoSimplify: o.NoSimplify}
	h, err := JVPWith(art.Program(), jo)
	if err != nil {
		return nil, errors.Wrapf(err, "ad: %s: forward derivative of the gradient", op)
	}
	if len(o.AtZero) > 0 {
		if h, err = atZero(h, o.AtZero); err != nil {
			return nil, errors.Wrapf(err, "ad: %s", op)
		}
	}
	return h, nil
}

// isTupleResult says whether the body, under its lets, is a tuple.
func isTupleResult(body core.Term) bool {
	_, ok := underLets(body).(*core.Tuple)
	return ok
}

// underLets is the result below the lets of a program body.
func underLets(body core.Term) core.Term {
	_, r := core.LetChain(body)
	return r
}

// tupleCheck accepts a tuple result whose components are all float arrays (a JVP of a
// gradient program).
func tupleCheck(body core.Term, op string) error {
	tu := underLets(body).(*core.Tuple)
	for k, e := range tu.Elems {
		if !e.Type().Dtype.IsFloat() {
			return errors.Errorf("ad: %s: tuple component %d has type %v, want float components", op, k, e.Type())
		}
	}
	return nil
}
