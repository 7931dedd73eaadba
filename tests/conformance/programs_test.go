package conformance

import (
	"fmt"

	"github.com/bulkad/bulkad/core"
	"github.com/bulkad/bulkad/core/tensors"
	"gorgonia.org/tensor"
)

// Programs that apply one operation (or a short chain) to operand columns, and their
// arguments.

// paramNames are the names of the operands' parameters.
func paramNames(n int) []string { return []string{"x", "y", "z"}[:n] }

// shapeRankN is a shape of rank 2 or 3 holding n elements (n > 1 and not prime, which the
// special-value columns are): the product of n's two smallest factors and the rest.
func shapeRankN(n int) core.Shape {
	var sh core.Shape
	rest := n
	for f := 2; f*f <= rest && len(sh) < 2; {
		if rest%f == 0 {
			sh = append(sh, f)
			rest /= f
			continue
		}
		f++
	}
	return append(sh, rest)
}

// program is fn (x : sh d[, y : sh d]) => chain(x[, y]): the operands of o (or extra
// parameters, for a chain) of shape sh, and a body built by body from the parameters.
func program(o operation, sh core.Shape, nParams int, body func(b *core.Builder, ps []core.Term) core.Term) (*core.Program, error) {
	var b core.Builder
	params := make([]*core.Var, nParams)
	terms := make([]core.Term, nParams)
	for i, name := range paramNames(nParams) {
		params[i] = b.Var(name, core.Type{Shape: sh, Dtype: o.in})
		terms[i] = params[i]
	}
	t := body(&b, terms)
	if err := b.Err(); err != nil {
		return nil, err
	}
	return core.NewProgram(params, t)
}

// oneOp is fn (x : sh d[, y : sh d]) => op x [y].
func oneOp(o operation, sh core.Shape) (*core.Program, error) {
	return program(o, sh, o.arity(), func(b *core.Builder, ps []core.Term) core.Term { return o.apply(b, ps...) })
}

// scalarTuple is fn (x0 … x(n-1) [, y0 … y(n-1)] : [] d) => (op x0 y0, …, op x(n-1) y(n-1)):
// the operation at rank 0, once per element of the operand columns (Gorgonia's scalar nodes
// are a path of their own).
func scalarTuple(o operation, n int) (*core.Program, error) {
	var b core.Builder
	var params []*core.Var
	results := make([]core.Term, n)
	for i := range n {
		xs := make([]core.Term, o.arity())
		for k, name := range paramNames(o.arity()) {
			v := b.Var(fmt.Sprintf("%s%d", name, i), core.Scalar(o.in))
			params = append(params, v)
			xs[k] = v
		}
		results[i] = o.apply(&b, xs...)
	}
	t := b.Tuple(results...)
	if err := b.Err(); err != nil {
		return nil, err
	}
	return core.NewProgram(params, t)
}

// args binds the parameters of a program to the operand columns: positionally, each column
// reshaped to its parameter's shape, or, for a scalarTuple, element by element.
func args(p *core.Program, ins []any) map[string]*tensor.Dense {
	m := map[string]*tensor.Dense{}
	if len(p.Params) == len(ins) {
		for i, v := range p.Params {
			m[v.Name] = dense(ins[i], v.Type().Shape)
		}
		return m
	}
	k := len(ins)
	for i, v := range p.Params {
		m[v.Name] = dense(single(ins[i%k], i/k), nil)
	}
	return m
}

// reference evaluates p on ins with core.Eval (core.EvalTuple through package core/tensors)
// and returns its results as one column.
func reference(p *core.Program, ins []any) (any, error) {
	outs, err := tensors.EvalTuple(p, args(p, ins))
	if err != nil {
		return nil, err
	}
	return flatAll(outs)
}
