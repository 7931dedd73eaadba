package coretest

import (
	"fmt"
	"math"

	"gorgonia.org/tensor"
)

// Close reports whether two tensors have the same shape and dtype and equal elements:
// integers and bools exactly, floats within the relative tolerance rel (absolute near zero:
// |a-b| ≤ rel·max(1, |a|, |b|)); NaN equals NaN and infinities must match. It returns a
// description of the first difference, or "".
func Close(a, b *tensor.Dense, rel float64) string {
	if a == nil || b == nil {
		return fmt.Sprintf("nil tensor (%v, %v)", a == nil, b == nil)
	}
	if a.Dtype() != b.Dtype() {
		return fmt.Sprintf("dtypes %v and %v differ", a.Dtype(), b.Dtype())
	}
	if !a.Shape().Eq(b.Shape()) {
		return fmt.Sprintf("shapes %v and %v differ", a.Shape(), b.Shape())
	}
	switch x := a.Data().(type) {
	case []float64:
		y := b.Data().([]float64)
		for i := range x {
			if !closeF(x[i], y[i], rel) {
				return fmt.Sprintf("element %d: %v vs %v", i, x[i], y[i])
			}
		}
	case []float32:
		y := b.Data().([]float32)
		for i := range x {
			if !closeF(float64(x[i]), float64(y[i]), rel) {
				return fmt.Sprintf("element %d: %v vs %v", i, x[i], y[i])
			}
		}
	case []int64:
		y := b.Data().([]int64)
		for i := range x {
			if x[i] != y[i] {
				return fmt.Sprintf("element %d: %v vs %v", i, x[i], y[i])
			}
		}
	case []bool:
		y := b.Data().([]bool)
		for i := range x {
			if x[i] != y[i] {
				return fmt.Sprintf("element %d: %v vs %v", i, x[i], y[i])
			}
		}
	case float64:
		if !closeF(x, b.Data().(float64), rel) {
			return fmt.Sprintf("scalar: %v vs %v", x, b.Data())
		}
	case float32:
		if !closeF(float64(x), float64(b.Data().(float32)), rel) {
			return fmt.Sprintf("scalar: %v vs %v", x, b.Data())
		}
	default:
		if fmt.Sprint(a.Data()) != fmt.Sprint(b.Data()) {
			return fmt.Sprintf("scalar: %v vs %v", a.Data(), b.Data())
		}
	}
	return ""
}

func closeF(a, b, rel float64) bool {
	if math.IsNaN(a) || math.IsNaN(b) {
		return math.IsNaN(a) && math.IsNaN(b)
	}
	if math.IsInf(a, 0) || math.IsInf(b, 0) {
		return a == b
	}
	return math.Abs(a-b) <= rel*math.Max(1, math.Max(math.Abs(a), math.Abs(b)))
}
