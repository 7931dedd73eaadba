package kernel

import (
	"github.com/bulkad/bulkad/core"
	"github.com/pkg/errors"
	"gorgonia.org/tensor"
)

// buf is the evaluator's storage for one value: a flat row-major slice of the value's dtype
// (exactly one of f64, f32, i64, b is used). Kernels capture *buf pointers at compile time and
// read the slices when they run, so a buf may be re-pointed (aliased) between runs.
type buf struct {
	typ core.Type
	f64 []float64
	f32 []float32
	i64 []int64
	b   []bool
}

// newBuf allocates zeroed storage for a value of type t.
func newBuf(t core.Type) *buf {
	n := t.Shape.Size()
	v := &buf{typ: t}
	switch t.Dtype {
	case core.Float64:
		v.f64 = make([]float64, n)
	case core.Float32:
		v.f32 = make([]float32, n)
	case core.Int64:
		v.i64 = make([]int64, n)
	case core.Bool:
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
	case core.Float64:
		copy(v.f64[off:], o.f64)
	case core.Float32:
		copy(v.f32[off:], o.f32)
	case core.Int64:
		copy(v.i64[off:], o.i64)
	case core.Bool:
		copy(v.b[off:], o.b)
	}
}

// dense returns a fresh *tensor.Dense holding a copy of v's elements, of type t.
func (v *buf) dense(t core.Type) *tensor.Dense {
	n := t.Shape.Size()
	var back interface{}
	switch t.Dtype {
	case core.Float64:
		s := make([]float64, n)
		copy(s, v.f64)
		back = s
	case core.Float32:
		s := make([]float32, n)
		copy(s, v.f32)
		back = s
	case core.Int64:
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

// litBuf converts a literal into evaluator storage.
func litBuf(l *core.Lit) (*buf, error) {
	t := l.Type()
	v := newBuf(t)
	n := t.Shape.Size()
	switch t.Dtype {
	case core.Float64:
		if len(l.F) != n {
			return nil, errors.Errorf("kernel: literal of shape %v has %d values", t.Shape, len(l.F))
		}
		copy(v.f64, l.F)
	case core.Float32:
		if len(l.F) != n {
			return nil, errors.Errorf("kernel: literal of shape %v has %d values", t.Shape, len(l.F))
		}
		for i, x := range l.F {
			v.f32[i] = float32(x)
		}
	case core.Int64:
		if len(l.I) != n {
			return nil, errors.Errorf("kernel: literal of shape %v has %d values", t.Shape, len(l.I))
		}
		copy(v.i64, l.I)
	case core.Bool:
		if len(l.B) != n {
			return nil, errors.Errorf("kernel: literal of shape %v has %d values", t.Shape, len(l.B))
		}
		copy(v.b, l.B)
	}
	return v, nil
}

// SliceLen returns the length of a flat slice of any element type (-1 for another value).
func SliceLen(a any) int {
	switch s := a.(type) {
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
