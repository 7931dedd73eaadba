package core

import (
	"fmt"
	"slices"
	"strings"
)

// Dtype is the element type of an array: one of Float64, Float32, Int64 and Bool.
type Dtype uint8

// The element types of the core language (paper 000, Fig. 8: ρ ::= ℝ | Int | Bool,
// with ℝ available in two precisions).
const (
	InvalidDtype Dtype = iota
	Float64
	Float32
	Int64
	Bool
)

// String returns the name used in the text syntax: f64, f32, i64 or bool.
func (d Dtype) String() string {
	switch d {
	case Float64:
		return "f64"
	case Float32:
		return "f32"
	case Int64:
		return "i64"
	case Bool:
		return "bool"
	}
	return fmt.Sprintf("dtype(%d)", uint8(d))
}

// IsFloat reports whether d is Float64 or Float32 (the differentiable dtypes).
func (d Dtype) IsFloat() bool { return d == Float64 || d == Float32 }

// IsNumeric reports whether d supports arithmetic (floats and Int64).
func (d Dtype) IsNumeric() bool { return d == Float64 || d == Float32 || d == Int64 }

// Valid reports whether d is one of the four dtypes.
func (d Dtype) Valid() bool { return d >= Float64 && d <= Bool }

// ParseDtype converts a dtype name of the text syntax (f64, f32, i64, bool) into a Dtype.
func ParseDtype(s string) (Dtype, bool) {
	switch s {
	case "f64":
		return Float64, true
	case "f32":
		return Float32, true
	case "i64":
		return Int64, true
	case "bool":
		return Bool, true
	}
	return InvalidDtype, false
}

// Shape is a static array shape, outermost dimension first. The empty shape is a scalar.
type Shape []int

// Size is the number of elements of an array of this shape (1 for a scalar).
func (s Shape) Size() int {
	n := 1
	for _, k := range s {
		n *= k
	}
	return n
}

// Rank is the number of dimensions.
func (s Shape) Rank() int { return len(s) }

// Equal reports whether two shapes have the same dimensions.
func (s Shape) Equal(o Shape) bool { return slices.Equal(s, o) }

// Clone returns a copy that shares no memory with s.
func (s Shape) Clone() Shape {
	c := make(Shape, len(s))
	copy(c, s)
	return c
}

// Strides returns the row-major strides of the shape (in elements).
func (s Shape) Strides() []int {
	st := make([]int, len(s))
	acc := 1
	for i := len(s) - 1; i >= 0; i-- {
		st[i] = acc
		acc *= s[i]
	}
	return st
}

// String prints the shape as in error messages: [3 4].
func (s Shape) String() string { return fmt.Sprint([]int(s)) }

// syntax prints the shape as in the text syntax: [3,4].
func (s Shape) syntax() string {
	parts := make([]string, len(s))
	for i, k := range s {
		parts[i] = fmt.Sprint(k)
	}
	return "[" + strings.Join(parts, ",") + "]"
}

func (s Shape) valid() bool {
	for _, k := range s {
		if k < 0 {
			return false
		}
	}
	return true
}

// Type is the type of a term: Array Shape Dtype (paper 000, Fig. 8).
type Type struct {
	Shape Shape
	Dtype Dtype
}

// Scalar returns the rank-0 type of dtype d.
func Scalar(d Dtype) Type { return Type{Shape: Shape{}, Dtype: d} }

// Equal reports whether two types have equal shapes and dtypes.
func (t Type) Equal(o Type) bool { return t.Dtype == o.Dtype && t.Shape.Equal(o.Shape) }

// String prints the type in the text syntax: [3,4] f64.
func (t Type) String() string { return t.Shape.syntax() + " " + t.Dtype.String() }

// IsScalar reports whether the type has rank 0.
func (t Type) IsScalar() bool { return len(t.Shape) == 0 }
