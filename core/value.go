package core

import (
	"github.com/pkg/errors"
	"gorgonia.org/tensor"
)

// buf is the evaluator's storage for one value: a flat row-major slice of the value's dtype
// (exactly one of f64, f32, i64, b is used). Kernels capture *buf pointers at compile time and
// read the slices when they run, so a buf may be re-pointed (aliased) between runs.
type buf struct {
	typ Type
	f64 []float64
	f32 []float32
	i64 []int64
	b   []bool
}

// newBuf allocates zeroed storage for a value of type t.
func newBuf(t Type) *buf {
	n := t.Shape.Size()
	v := &buf{typ: t}
	switch t.Dtype {
	case Float64:
		v.f64 = make([]float64, n)
	case Float32:
		v.f32 = make([]float32, n)
	case Int64:
		v.i64 = make([]int64, n)
	case Bool:
		v.b = make([]bool, n)
	}
	return v
}

// aliasOf makes v share o's storage (no copy).
func (v *buf) aliasOf(o *buf) {
	v.f64, v.f32, v.i64, v.b = o.f64, o.f32, o.i64, o.b
}

// copyAt copies o's elements into v at element offset off.
func (v *buf) copyAt(off int, o *buf) {
	switch v.typ.Dtype {
	case Float64:
		copy(v.f64[off:], o.f64)
	case Float32:
		copy(v.f32[off:], o.f32)
	case Int64:
		copy(v.i64[off:], o.i64)
	case Bool:
		copy(v.b[off:], o.b)
	}
}

// dense returns a fresh *tensor.Dense holding a copy of v's elements, of type t.
func (v *buf) dense(t Type) *tensor.Dense {
	n := t.Shape.Size()
	var back interface{}
	switch t.Dtype {
	case Float64:
		s := make([]float64, n)
		copy(s, v.f64)
		back = s
	case Float32:
		s := make([]float32, n)
		copy(s, v.f32)
		back = s
	case Int64:
		s := make([]int64, n)
		copy(s, v.i64)
		back = s
	default:
		s := make([]bool, n)
		copy(s, v.b)
		back = s
	}
	return tensor.New(tensor.WithShape([]int(t.Shape.Clone())...), tensor.WithBacking(back))
}

// dtypeOfTensor maps a tensor dtype to a core dtype (InvalidDtype if unsupported).
func dtypeOfTensor(dt tensor.Dtype) Dtype {
	switch dt {
	case tensor.Float64:
		return Float64
	case tensor.Float32:
		return Float32
	case tensor.Int64:
		return Int64
	case tensor.Bool:
		return Bool
	}
	return InvalidDtype
}

// TypeOfDense returns the core type of a dense tensor: its shape (rank 0 for a scalar Dense
// with shape ()) and dtype. Only Float64, Float32, Int64 and Bool tensors have a core type.
func TypeOfDense(d *tensor.Dense) (Type, error) {
	if d == nil {
		return Type{}, errors.New("core: type of dense: tensor is nil")
	}
	dt := dtypeOfTensor(d.Dtype())
	if !dt.Valid() {
		return Type{}, errors.Errorf("core: type of dense: unsupported tensor dtype %v (want float64, float32, int64 or bool)", d.Dtype())
	}
	sh := d.Shape()
	out := make(Shape, len(sh))
	copy(out, sh)
	return Type{Shape: out, Dtype: dt}, nil
}

// denseData returns d's elements as a row-major slice of length n (materialising views,
// transposed and masked tensors into a contiguous copy; contiguous tensors are not copied).
// The result is one of []float64, []float32, []int64, []bool.
func denseData(d *tensor.Dense, dt Dtype, n int) (f64 []float64, f32 []float32, i64 []int64, b []bool, err error) {
	if d.RequiresIterator() || (d.IsMaterializable() && !d.IsView()) {
		m, ok := d.Materialize().(*tensor.Dense)
		if !ok {
			return nil, nil, nil, nil, errors.New("core: eval: cannot materialise tensor")
		}
		d = m
	}
	short := func(have int) error {
		return errors.Errorf("core: eval: tensor of shape %v holds %d elements, want %d", d.Shape(), have, n)
	}
	switch dt {
	case Float64:
		s := d.Float64s()
		if len(s) < n {
			return nil, nil, nil, nil, short(len(s))
		}
		f64 = s[:n:n]
	case Float32:
		s := d.Float32s()
		if len(s) < n {
			return nil, nil, nil, nil, short(len(s))
		}
		f32 = s[:n:n]
	case Int64:
		s := d.Int64s()
		if len(s) < n {
			return nil, nil, nil, nil, short(len(s))
		}
		i64 = s[:n:n]
	case Bool:
		s := d.Bools()
		if len(s) < n {
			return nil, nil, nil, nil, short(len(s))
		}
		b = s[:n:n]
	}
	return
}

// DenseFromLit converts a literal to a fresh *tensor.Dense of the literal's shape (a scalar
// literal gives a Dense with shape ()). Float32 literals give float32 tensors. A nil or
// untyped literal gives nil.
func DenseFromLit(l *Lit) *tensor.Dense {
	if l == nil || !l.Type().Dtype.Valid() {
		return nil
	}
	v, err := litBuf(l)
	if err != nil {
		return nil
	}
	return v.dense(l.Type())
}

// litBuf converts a literal into evaluator storage.
func litBuf(l *Lit) (*buf, error) {
	t := l.Type()
	v := newBuf(t)
	n := t.Shape.Size()
	switch t.Dtype {
	case Float64:
		if len(l.F) != n {
			return nil, errors.Errorf("core: eval: literal of shape %v has %d values", t.Shape, len(l.F))
		}
		copy(v.f64, l.F)
	case Float32:
		if len(l.F) != n {
			return nil, errors.Errorf("core: eval: literal of shape %v has %d values", t.Shape, len(l.F))
		}
		for i, x := range l.F {
			v.f32[i] = float32(x)
		}
	case Int64:
		if len(l.I) != n {
			return nil, errors.Errorf("core: eval: literal of shape %v has %d values", t.Shape, len(l.I))
		}
		copy(v.i64, l.I)
	case Bool:
		if len(l.B) != n {
			return nil, errors.Errorf("core: eval: literal of shape %v has %d values", t.Shape, len(l.B))
		}
		copy(v.b, l.B)
	}
	return v, nil
}

// LitFromDense converts a dense tensor (float64, float32, int64 or bool) into a literal of the
// same shape and dtype, copying the elements.
func LitFromDense(d *tensor.Dense) (*Lit, error) {
	t, err := TypeOfDense(d)
	if err != nil {
		return nil, errors.Wrap(err, "core: lit from dense")
	}
	f64, f32, i64, b, err := denseData(d, t.Dtype, t.Shape.Size())
	if err != nil {
		return nil, err
	}
	switch t.Dtype {
	case Float64:
		return NewLitF(t, f64)
	case Float32:
		f := make([]float64, len(f32))
		for i, x := range f32 {
			f[i] = float64(x)
		}
		return NewLitF(t, f)
	case Int64:
		return NewLitI(t.Shape, i64)
	default:
		return NewLitB(t.Shape, b)
	}
}
