package raise

import (
	"math"
	"reflect"
	"strconv"
	"unsafe"

	"github.com/bulkad/bulkad/core"
	"github.com/bulkad/bulkad/core/tensors"
	kern "github.com/bulkad/bulkad/kernel"
	"github.com/chewxy/hm"
	"github.com/pkg/errors"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// tensorDtypes, indexed by a core dtype, is the tensor dtype that package tensors maps to it
// (the zero Dtype for none): the inverse of tensors.Dtype, made once, since a value's
// allocation looks it up.
var tensorDtypes = func() (inv [math.MaxUint8 + 1]tensor.Dtype) {
	for _, td := range []tensor.Dtype{tensor.Float64, tensor.Float32, tensor.Int64, tensor.Bool} {
		inv[tensors.Dtype(td)] = td
	}
	return inv
}()

// tensorDtype maps a core dtype to the tensor package's dtype.
func tensorDtype(d core.Dtype) (tensor.Dtype, error) {
	if td := tensorDtypes[d]; td != (tensor.Dtype{}) {
		return td, nil
	}
	return tensor.Dtype{}, errors.Errorf("raise: dtype: unsupported dtype %v", d)
}

// coreDtype maps a tensor dtype back to a core dtype.
func coreDtype(d tensor.Dtype) (core.Dtype, bool) {
	if d == tensor.Int && strconv.IntSize == 64 {
		return core.Int64, true // Gorgonia's default integer dtype (e.g. ByIndices indices)
	}
	dt := tensors.Dtype(d)
	return dt, dt.Valid()
}

// hmType is the Gorgonia type of a value of core type t: the dtype itself for a scalar,
// a TensorType otherwise.
func hmType(t core.Type) hm.Type {
	dt, _ := tensorDtype(t.Dtype)
	if len(t.Shape) == 0 {
		return dt
	}
	return gorgonia.TensorType{Dims: len(t.Shape), Of: dt}
}

// tensorShape converts a core shape to a tensor shape (the scalar shape for rank 0).
func tensorShape(s core.Shape) tensor.Shape {
	if len(s) == 0 {
		return tensor.ScalarShape()
	}
	return tensor.Shape(append([]int(nil), s...))
}

// nodeType returns the core type of a Gorgonia node, or false when its dtype has no core
// counterpart.
func nodeType(n *gorgonia.Node) (core.Type, bool) {
	d, ok := coreDtype(n.Dtype())
	if !ok {
		return core.Type{}, false
	}
	sh := n.Shape()
	if sh.IsScalar() {
		return core.Scalar(d), true
	}
	return core.Type{Shape: core.Shape(append([]int(nil), sh...)), Dtype: d}, true
}

// flatAll returns the flat slices (see flat) of the operands vs of the op named name, of
// which there must be want ("operand" or "input": what the errors call one).
func flatAll(vs []gorgonia.Value, want int, name, what string) ([]any, error) {
	if len(vs) != want {
		return nil, errors.Errorf("raise: %s: %d %ss, want %d", name, len(vs), what, want)
	}
	ins := make([]any, len(vs))
	for i, v := range vs {
		s, err := flat(v)
		if err != nil {
			return nil, errors.Wrapf(err, "raise: %s: %s %d", name, what, i)
		}
		ins[i] = s
	}
	return ins, nil
}

// flat returns the backing slice of a value ([]float64, []float32, []int64 or []bool),
// materialising views. A scalar value yields a one-element slice aliasing it.
func flat(v gorgonia.Value) (any, error) {
	switch x := v.(type) {
	case *gorgonia.F64:
		return unsafe.Slice((*float64)(x), 1), nil
	case *gorgonia.F32:
		return unsafe.Slice((*float32)(x), 1), nil
	case *gorgonia.I64:
		return unsafe.Slice((*int64)(x), 1), nil
	case *gorgonia.B:
		return unsafe.Slice((*bool)(x), 1), nil
	case *gorgonia.I:
		if strconv.IntSize != 64 {
			break
		}
		return unsafe.Slice((*int64)(unsafe.Pointer(x)), 1), nil
	case *tensor.Dense:
		if x.RequiresIterator() {
			m, ok := x.Materialize().(*tensor.Dense)
			if !ok {
				return nil, errors.Errorf("raise: value: cannot materialise a %T", x)
			}
			x = m
		}
		switch x.Dtype() {
		case tensor.Float64:
			return x.Float64s(), nil
		case tensor.Float32:
			return x.Float32s(), nil
		case tensor.Int64:
			return x.Int64s(), nil
		case tensor.Bool:
			return x.Bools(), nil
		case tensor.Int:
			if is := x.Ints(); strconv.IntSize == 64 && len(is) > 0 {
				return unsafe.Slice((*int64)(unsafe.Pointer(&is[0])), len(is)), nil
			} else if strconv.IntSize == 64 {
				return []int64{}, nil
			}
		}
		return nil, errors.Errorf("raise: value: unsupported dtype %v", x.Dtype())
	case nil:
		return nil, errors.New("raise: value: nil input")
	}
	return nil, errors.Errorf("raise: value: unsupported value type %T", v)
}

// newValue allocates a zeroed value of core type t and returns it with its backing slice.
func newValue(t core.Type) (gorgonia.Value, any) {
	if len(t.Shape) == 0 {
		switch t.Dtype {
		case core.Float64:
			v := gorgonia.NewF64(0)
			return v, unsafe.Slice((*float64)(v), 1)
		case core.Float32:
			v := gorgonia.NewF32(0)
			return v, unsafe.Slice((*float32)(v), 1)
		case core.Int64:
			v := gorgonia.NewI64(0)
			return v, unsafe.Slice((*int64)(v), 1)
		default:
			v := gorgonia.NewB(false)
			return v, unsafe.Slice((*bool)(v), 1)
		}
	}
	dt, _ := tensorDtype(t.Dtype)
	d := tensor.New(tensor.WithShape(t.Shape...), tensor.Of(dt))
	s, _ := flat(d)
	return d, s
}

// viewValue is a tensor of type t (not a scalar) whose backing array is src[off:off+n] (n its
// size, capacity n): no copy. false when src is not a slice of t's element type or too short.
func viewValue(t core.Type, src any, off int) (gorgonia.Value, bool) {
	n := t.Shape.Size()
	if off < 0 || kern.SliceLen(src) < off+n || kern.SliceDtype(src) != t.Dtype {
		return nil, false
	}
	var back any
	switch s := src.(type) {
	case []float64:
		back = s[off : off+n : off+n]
	case []float32:
		back = s[off : off+n : off+n]
	case []int64:
		back = s[off : off+n : off+n]
	case []bool:
		back = s[off : off+n : off+n]
	default:
		return nil, false
	}
	return tensor.New(tensor.WithShape(t.Shape...), tensor.WithBacking(back)), true
}

// reuse returns prealloc's backing slice when prealloc has exactly type t (so a kernel may
// write into it), or false.
func reuse(prealloc gorgonia.Value, t core.Type) (any, bool) {
	if prealloc == nil {
		return nil, false
	}
	if len(t.Shape) == 0 {
		if _, isDense := prealloc.(*tensor.Dense); isDense {
			return nil, false
		}
	} else {
		d, ok := prealloc.(*tensor.Dense)
		if !ok || d.RequiresIterator() || !d.Shape().Eq(tensor.Shape(t.Shape)) {
			return nil, false
		}
	}
	if cd, ok := coreDtype(prealloc.Dtype()); !ok || cd != t.Dtype {
		return nil, false
	}
	s, err := flat(prealloc)
	if err != nil {
		return nil, false
	}
	return s, true
}

// denseOf builds a tensor value of type t holding a copy of the literal's elements.
func litValue(l *core.Lit) any {
	t := l.Type()
	switch t.Dtype {
	case core.Float64:
		if len(t.Shape) == 0 {
			return l.F[0]
		}
		return tensor.New(tensor.WithShape(t.Shape...), tensor.WithBacking(append([]float64(nil), l.F...)))
	case core.Float32:
		f := make([]float32, len(l.F))
		for i, v := range l.F {
			f[i] = float32(v)
		}
		if len(t.Shape) == 0 {
			return f[0]
		}
		return tensor.New(tensor.WithShape(t.Shape...), tensor.WithBacking(f))
	case core.Int64:
		if len(t.Shape) == 0 {
			return l.I[0]
		}
		return tensor.New(tensor.WithShape(t.Shape...), tensor.WithBacking(append([]int64(nil), l.I...)))
	default:
		if len(t.Shape) == 0 {
			return l.B[0]
		}
		return tensor.New(tensor.WithShape(t.Shape...), tensor.WithBacking(append([]bool(nil), l.B...)))
	}
}

// The flat slices of the kernels ([]float64, []float32, []int64 or []bool) are handled here
// through package reflect, one function for every element type: none of these runs per
// element (reflect.Copy is copy's memmove).

// sameBacking reports whether a and b are slices of one type sharing their first element.
func sameBacking(a, b any) bool {
	if reflect.TypeOf(a) != reflect.TypeOf(b) {
		return false
	}
	x, y := reflect.ValueOf(a), reflect.ValueOf(b)
	return x.Kind() == reflect.Slice && x.Len() > 0 && y.Len() > 0 && x.Pointer() == y.Pointer()
}

// subLen returns the slice s[:n] (s itself when s is not a slice or n is beyond its capacity).
func subLen(s any, n int) any {
	v := reflect.ValueOf(s)
	if v.Kind() != reflect.Slice || n < 0 || n > v.Cap() {
		return s
	}
	return v.Slice(0, n).Interface()
}

// copyFrom copies src[off:] into dst (slices of one element type) and reports whether the
// types matched (and off is within src).
func copyFrom(dst, src any, off int) bool {
	if reflect.TypeOf(dst) != reflect.TypeOf(src) {
		return false
	}
	d, s := reflect.ValueOf(dst), reflect.ValueOf(src)
	if d.Kind() != reflect.Slice || off < 0 || off > s.Len() {
		return false
	}
	reflect.Copy(d, s.Slice(off, s.Len()))
	return true
}
