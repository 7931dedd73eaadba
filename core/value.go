package core

import (
	"github.com/pkg/errors"
	"gorgonia.org/tensor"
)

// DtypeOfTensor maps a tensor dtype to a core dtype (InvalidDtype if unsupported).
func DtypeOfTensor(dt tensor.Dtype) Dtype {
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
	dt := DtypeOfTensor(d.Dtype())
	if !dt.Valid() {
		return Type{}, errors.Errorf("core: type of dense: unsupported tensor dtype %v (want float64, float32, int64 or bool)", d.Dtype())
	}
	sh := d.Shape()
	out := make(Shape, len(sh))
	copy(out, sh)
	return Type{Shape: out, Dtype: dt}, nil
}

// DenseData returns d's elements as a row-major slice of length n (materialising views,
// transposed and masked tensors into a contiguous copy; contiguous tensors are not copied).
// The result is one of []float64, []float32, []int64, []bool.
func DenseData(d *tensor.Dense, dt Dtype, n int) (f64 []float64, f32 []float32, i64 []int64, b []bool, err error) {
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
	t := l.Type()
	n := t.Shape.Size()
	var back interface{}
	switch t.Dtype {
	case Float64:
		back = append(make([]float64, 0, n), l.F...)
	case Float32:
		s := make([]float32, len(l.F))
		for i, x := range l.F {
			s[i] = float32(x)
		}
		back = s
	case Int64:
		back = append(make([]int64, 0, n), l.I...)
	default:
		back = append(make([]bool, 0, n), l.B...)
	}
	if reflectLen(back) != n {
		return nil
	}
	return tensor.New(tensor.WithShape([]int(t.Shape.Clone())...), tensor.WithBacking(back))
}

// LitFromDense converts a dense tensor (float64, float32, int64 or bool) into a literal of the
// same shape and dtype, copying the elements.
func LitFromDense(d *tensor.Dense) (*Lit, error) {
	t, err := TypeOfDense(d)
	if err != nil {
		return nil, errors.Wrap(err, "core: lit from dense")
	}
	f64, f32, i64, b, err := DenseData(d, t.Dtype, t.Shape.Size())
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

func reflectLen(back interface{}) int {
	switch s := back.(type) {
	case []float64:
		return len(s)
	case []float32:
		return len(s)
	case []int64:
		return len(s)
	case []bool:
		return len(s)
	}
	return -1
}
