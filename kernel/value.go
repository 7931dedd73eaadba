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
	var back any
	switch t.Dtype {
	case core.Float64:
		back = cloneN(v.f64, n)
	case core.Float32:
		back = cloneN(v.f32, n)
	case core.Int64:
		back = cloneN(v.i64, n)
	default:
		back = cloneN(v.b, n)
	}
	return tensor.New(tensor.WithShape([]int(t.Shape.Clone())...), tensor.WithBacking(back))
}

// cloneN returns a fresh slice of n elements holding a copy of s (zeros beyond len(s)).
func cloneN[T any](s []T, n int) []T {
	out := make([]T, n)
	copy(out, s)
	return out
}

// litBuf converts a literal into evaluator storage.
func litBuf(l *core.Lit) (*buf, error) {
	t := l.Type()
	v := newBuf(t)
	if len(l.F) != len(v.f64)+len(v.f32) || len(l.I) != len(v.i64) || len(l.B) != len(v.b) {
		return nil, errors.Errorf("kernel: literal of type %v has %d values", t, len(l.F)+len(l.I)+len(l.B))
	}
	copy(v.f64, l.F)
	for i, x := range l.F[:len(v.f32)] {
		v.f32[i] = float32(x)
	}
	copy(v.i64, l.I)
	copy(v.b, l.B)
	return v, nil
}

// NewSlice returns a new flat slice of n zero elements of dtype dt ([]bool for Bool and for
// any dtype that is not numeric).
func NewSlice(dt core.Dtype, n int) any { return makeSlice(dt, n) }

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

// SliceDtype returns the dtype of a flat slice ([]float64, []float32, []int64 or []bool), and
// core.InvalidDtype for another value.
func SliceDtype(a any) core.Dtype {
	switch a.(type) {
	case []float64:
		return core.Float64
	case []float32:
		return core.Float32
	case []int64:
		return core.Int64
	case []bool:
		return core.Bool
	}
	return core.InvalidDtype
}
