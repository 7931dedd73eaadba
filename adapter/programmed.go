package adapter

import (
	"github.com/bulkad/bulkad/core"
	"github.com/pkg/errors"
	"gorgonia.org/gorgonia"
)

// Programmed is implemented by ops that carry their meaning as a core program: the custom ops
// package raise builds (one core operation, or a small fusion, with a kernel). Its parameters
// are the op's operands in order, its body the value it computes. The adapter translates a
// node with such an op by substituting the operands' terms into the body, so a graph that
// contains nodes raised by an earlier Grad (a gradient) can be differentiated again, to any
// order.
type Programmed interface {
	gorgonia.Op
	Program() *core.Program
}

// trProgrammed inlines the op's program with its parameters replaced by the operands' terms.
func trProgrammed(c *opCtx, args []core.Term) (core.Term, error) {
	p := c.op.(Programmed).Program()
	if p == nil {
		return nil, errors.New("the op carries no program")
	}
	if len(p.Params) != len(args) {
		return nil, errors.Errorf("the op's program has %d parameters, the node has %d operands", len(p.Params), len(args))
	}
	sub := make(map[string]core.Term, len(args))
	for i, v := range p.Params {
		a := args[i]
		want := v.Type()
		if got := a.Type(); !got.Shape.Equal(want.Shape) || got.Dtype != want.Dtype {
			if got.Dtype != want.Dtype || got.Shape.Size() != want.Shape.Size() {
				return nil, errors.Errorf("operand %d is %v, the op's parameter %s is %v", i, got, v.Name, want)
			}
			r, err := core.NewReshape(want.Shape, a)
			if err != nil {
				return nil, errors.Wrapf(err, "operand %d", i)
			}
			a = r
		}
		sub[v.Name] = a
	}
	t, err := core.Subst(p.Body, sub)
	if err != nil {
		return nil, errors.Wrap(err, "substituting the operands into the op's program")
	}
	return t, nil
}
