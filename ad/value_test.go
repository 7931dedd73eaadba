package ad

import (
	"github.com/bulkad/bulkad/core"
	"github.com/bulkad/bulkad/core/tensors"
	"gorgonia.org/tensor"
)

// value is the tests' mutable view of a concrete array: floats (both widths) in f, integers in
// i, booleans in b. It converts to and from tensors; every evaluation is core.Eval's.
type value struct {
	typ core.Type
	f   []float64
	i   []int64
	b   []bool
}

func newValue(t core.Type) *value {
	v := &value{typ: core.Type{Shape: t.Shape.Clone(), Dtype: t.Dtype}}
	n := t.Shape.Size()
	switch t.Dtype {
	case core.Float64, core.Float32:
		v.f = make([]float64, n)
	case core.Int64:
		v.i = make([]int64, n)
	case core.Bool:
		v.b = make([]bool, n)
	}
	return v
}

// round rounds a float32 value's elements to float32.
func (v *value) round() {
	if v.typ.Dtype == core.Float32 {
		for k, x := range v.f {
			v.f[k] = float64(float32(x))
		}
	}
}

func (v *value) toDense() *tensor.Dense {
	var l *core.Lit
	var err error
	switch v.typ.Dtype {
	case core.Float64, core.Float32:
		c := &value{typ: v.typ, f: append([]float64{}, v.f...)}
		c.round()
		l, err = core.NewLitF(v.typ, c.f)
	case core.Int64:
		l, err = core.NewLitI(v.typ.Shape, append([]int64{}, v.i...))
	default:
		l, err = core.NewLitB(v.typ.Shape, append([]bool{}, v.b...))
	}
	if err != nil {
		panic(err)
	}
	return tensors.FromLit(l)
}

func fromDense(d *tensor.Dense) *value {
	l, err := tensors.ToLit(d)
	if err != nil {
		panic(err)
	}
	return &value{typ: l.Type(), f: l.F, i: l.I, b: l.B}
}

func denseArgs(args map[string]*value) map[string]*tensor.Dense {
	out := make(map[string]*tensor.Dense, len(args))
	for n, v := range args {
		out[n] = v.toDense()
	}
	return out
}

// evalProgram evaluates p with core.EvalTuple.
func evalProgram(p *core.Program, args map[string]*value) ([]*value, error) {
	outs, err := tensors.EvalTuple(p, denseArgs(args))
	if err != nil {
		return nil, err
	}
	vs := make([]*value, len(outs))
	for k, d := range outs {
		vs[k] = fromDense(d)
	}
	return vs, nil
}

// concreteValues runs the concrete reverse pass on values.
func concreteValues(r *diffResult, args map[string]*value) (*value, map[string]*value, Stats, error) {
	val, grads, st, err := r.concrete(denseArgs(args))
	if err != nil {
		return nil, nil, st, err
	}
	gv := make(map[string]*value, len(grads))
	for n, g := range grads {
		gv[n] = fromDense(g)
	}
	return fromDense(val), gv, st, nil
}
