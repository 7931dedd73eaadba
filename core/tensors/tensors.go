// Package tensors converts between core's values (literals) and gorgonia.org/tensor dense
// tensors, and gives the reference evaluator (core.Eval) a tensor face: Eval, EvalTuple and
// EvalTerm take and return *tensor.Dense.
//
// It exists so that package core, the language, depends on no array library (and through it on
// no BLAS); packages that execute programs on tensors (kernel, ad's concrete reverse pass,
// tests) use it.
package tensors

import (
	"github.com/bulkad/bulkad/core"
	"github.com/pkg/errors"
	"gorgonia.org/tensor"
)

// Dtype maps a tensor dtype to a core dtype (core.InvalidDtype if unsupported).
func Dtype(dt tensor.Dtype) core.Dtype {
	if d, ok := coreDtypes[dt]; ok {
		return d
	}
	return core.InvalidDtype
}

// coreDtypes maps the tensor dtypes that have a core dtype to it.
var coreDtypes = map[tensor.Dtype]core.Dtype{
	tensor.Float64: core.Float64,
	tensor.Float32: core.Float32,
	tensor.Int64:   core.Int64,
	tensor.Bool:    core.Bool,
}

// TypeOf returns the core type of a dense tensor: its shape (rank 0 for a scalar Dense
// with shape ()) and dtype. Only float64, float32, int64 and bool tensors have a core type.
func TypeOf(d *tensor.Dense) (core.Type, error) {
	if d == nil {
		return core.Type{}, errors.New("tensors: type of dense: tensor is nil")
	}
	dt := Dtype(d.Dtype())
	if !dt.Valid() {
		return core.Type{}, errors.Errorf("tensors: type of dense: unsupported tensor dtype %v (want float64, float32, int64 or bool)", d.Dtype())
	}
	sh := d.Shape()
	out := make(core.Shape, len(sh))
	copy(out, sh)
	return core.Type{Shape: out, Dtype: dt}, nil
}

// Data returns d's elements as a row-major slice of length n (materialising views,
// transposed and masked tensors into a contiguous copy; contiguous tensors are not copied).
// The result is one of []float64, []float32, []int64, []bool.
func Data(d *tensor.Dense, dt core.Dtype, n int) (f64 []float64, f32 []float32, i64 []int64, b []bool, err error) {
	if d.RequiresIterator() || (d.IsMaterializable() && !d.IsView()) {
		m, ok := d.Materialize().(*tensor.Dense)
		if !ok {
			return nil, nil, nil, nil, errors.New("tensors: cannot materialise tensor")
		}
		d = m
	}
	switch dt {
	case core.Float64:
		f64, err = firstN(d.Float64s(), n, d)
	case core.Float32:
		f32, err = firstN(d.Float32s(), n, d)
	case core.Int64:
		i64, err = firstN(d.Int64s(), n, d)
	case core.Bool:
		b, err = firstN(d.Bools(), n, d)
	}
	return
}

// firstN returns the first n elements of s, the data of d (an error when it holds fewer).
func firstN[T any](s []T, n int, d *tensor.Dense) ([]T, error) {
	if len(s) < n {
		return nil, errors.Errorf("tensors: tensor of shape %v holds %d elements, want %d", d.Shape(), len(s), n)
	}
	return s[:n:n], nil
}

// FromLit converts a literal to a fresh *tensor.Dense of the literal's shape (a scalar
// literal gives a Dense with shape ()). Float32 literals give float32 tensors. A nil or
// untyped literal gives nil.
func FromLit(l *core.Lit) *tensor.Dense {
	if l == nil || !l.Type().Dtype.Valid() {
		return nil
	}
	t := l.Type()
	n := t.Shape.Size()
	have := len(l.B)
	if t.Dtype.IsFloat() {
		have = len(l.F)
	} else if t.Dtype == core.Int64 {
		have = len(l.I)
	}
	if have != n {
		return nil // malformed: the elements do not fill the shape
	}
	var back interface{}
	switch t.Dtype {
	case core.Float64:
		back = append(make([]float64, 0, n), l.F...)
	case core.Float32:
		s := make([]float32, len(l.F))
		for i, x := range l.F {
			s[i] = float32(x)
		}
		back = s
	case core.Int64:
		back = append(make([]int64, 0, n), l.I...)
	default:
		back = append(make([]bool, 0, n), l.B...)
	}
	return tensor.New(tensor.WithShape([]int(t.Shape.Clone())...), tensor.WithBacking(back))
}

// ToLit converts a dense tensor (float64, float32, int64 or bool) into a literal of the
// same shape and dtype, copying the elements.
func ToLit(d *tensor.Dense) (*core.Lit, error) {
	t, err := TypeOf(d)
	if err != nil {
		return nil, errors.Wrap(err, "tensors: lit from dense")
	}
	f64, f32, i64, b, err := Data(d, t.Dtype, t.Shape.Size())
	if err != nil {
		return nil, err
	}
	switch t.Dtype {
	case core.Float64:
		return core.NewLitF(t, f64)
	case core.Float32:
		f := make([]float64, len(f32))
		for i, x := range f32 {
			f[i] = float64(x)
		}
		return core.NewLitF(t, f)
	case core.Int64:
		return core.NewLitI(t.Shape, i64)
	default:
		return core.NewLitB(t.Shape, b)
	}
}

// Eval evaluates a program that does not return a tuple with the reference evaluator
// (core.Eval) on tensor arguments and returns a fresh tensor. Arguments may be views; each
// must have its parameter's shape and dtype.
func Eval(p *core.Program, args map[string]*tensor.Dense) (*tensor.Dense, error) {
	r, err := withLits(args, func(lits map[string]*core.Lit) (*core.Lit, error) { return core.Eval(p, lits) })
	return FromLit(r), err // FromLit(nil) is nil
}

// EvalTuple evaluates a program with core.EvalTuple on tensor arguments (see Eval) and returns
// its results as fresh tensors.
func EvalTuple(p *core.Program, args map[string]*tensor.Dense) ([]*tensor.Dense, error) {
	rs, err := withLits(args, func(lits map[string]*core.Lit) ([]*core.Lit, error) { return core.EvalTuple(p, lits) })
	if err != nil {
		return nil, err
	}
	outs := make([]*tensor.Dense, len(rs))
	for i, r := range rs {
		outs[i] = FromLit(r)
	}
	return outs, nil
}

// EvalTerm evaluates a term with free variables with core.EvalTerm, taking their values from
// env (see Eval).
func EvalTerm(t core.Term, env map[string]*tensor.Dense) (*tensor.Dense, error) {
	r, err := withLits(env, func(lits map[string]*core.Lit) (*core.Lit, error) { return core.EvalTerm(t, lits) })
	return FromLit(r), err // FromLit(nil) is nil
}

// withLits converts tensor arguments to literals (see litArgs) and evaluates with eval.
func withLits[R any](args map[string]*tensor.Dense, eval func(map[string]*core.Lit) (R, error)) (R, error) {
	lits, err := litArgs(args)
	if err != nil {
		var zero R
		return zero, err
	}
	return eval(lits)
}

// litArgs converts tensor arguments to literals (a nil tensor stays a nil literal, which the
// evaluator reports with the parameter's name).
func litArgs(args map[string]*tensor.Dense) (map[string]*core.Lit, error) {
	lits := make(map[string]*core.Lit, len(args))
	for name, d := range args {
		if d == nil {
			lits[name] = nil
			continue
		}
		l, err := ToLit(d)
		if err != nil {
			return nil, errors.Wrapf(err, "core: eval: argument %s", name)
		}
		lits[name] = l
	}
	return lits, nil
}
