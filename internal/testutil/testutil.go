// Package testutil holds helpers that the module's tests share across packages which cannot
// import each other's test files: reading tensors as float64s, drawing random tensors,
// comparing within a scaled tolerance and sorting map keys. Only tests import it.
package testutil

import (
	"fmt"
	"math"
	"math/rand"
	"sort"

	"gorgonia.org/tensor"
)

// Floats returns data (a tensor's Data(): a slice or a scalar of float64, float32, int64,
// int or bool) as a fresh slice of float64s, bools as 0 and 1; ok is false for anything else.
func Floats(data any) (out []float64, ok bool) {
	switch x := data.(type) {
	case []float64:
		return append([]float64{}, x...), true
	case []float32:
		return widen(x), true
	case []int64:
		return widen(x), true
	case []int:
		return widen(x), true
	case []bool:
		out = make([]float64, len(x))
		for i, v := range x {
			if v {
				out[i] = 1
			}
		}
		return out, true
	case float64:
		return []float64{x}, true
	case float32:
		return []float64{float64(x)}, true
	case int64:
		return []float64{float64(x)}, true
	case int:
		return []float64{float64(x)}, true
	case bool:
		if x {
			return []float64{1}, true
		}
		return []float64{0}, true
	}
	return nil, false
}

// DenseFloats is Floats of d's data (an empty slice for a tensor with no elements, whose
// Data would panic); the error names the data type Floats does not read.
func DenseFloats(d *tensor.Dense) ([]float64, error) {
	if d.Shape().TotalSize() == 0 && !d.IsScalar() {
		return []float64{}, nil
	}
	out, ok := Floats(d.Data())
	if !ok {
		return nil, fmt.Errorf("testutil: DenseFloats: data of type %T (dtype %v, shape %v)", d.Data(), d.Dtype(), d.Shape())
	}
	return out, nil
}

func widen[T float32 | int64 | int](x []T) []float64 {
	out := make([]float64, len(x))
	for i, v := range x {
		out[i] = float64(v)
	}
	return out
}

// RandDense is a tensor of shape sh and dtype float32 (f32 true) or float64 holding standard
// normal draws from r.
func RandDense(r *rand.Rand, f32 bool, sh ...int) *tensor.Dense {
	n := 1
	for _, s := range sh {
		n *= s
	}
	if f32 {
		v := make([]float32, n)
		for i := range v {
			v[i] = float32(r.NormFloat64())
		}
		return tensor.New(tensor.WithShape(sh...), tensor.WithBacking(v))
	}
	v := make([]float64, n)
	for i := range v {
		v[i] = r.NormFloat64()
	}
	return tensor.New(tensor.WithShape(sh...), tensor.WithBacking(v))
}

// ScaledDiff describes the first element where got and want differ by more than
// tol·(floor + scale), scale being the largest finite |want| ("" when none, exact when
// tol = 0). NaN matches NaN only; an infinity matches the same infinity only.
func ScaledDiff(got, want []float64, tol, floor float64) string {
	if len(got) != len(want) {
		return fmt.Sprintf("%d elements, want %d", len(got), len(want))
	}
	scale := 0.0
	for _, x := range want {
		if !math.IsInf(x, 0) && !math.IsNaN(x) {
			scale = math.Max(scale, math.Abs(x))
		}
	}
	for i := range got {
		g, w := got[i], want[i]
		if g == w || (math.IsNaN(g) && math.IsNaN(w)) {
			continue
		}
		if d := math.Abs(g - w); !math.IsNaN(d) && !math.IsInf(d, 0) && d <= tol*(floor+scale) {
			continue
		}
		return fmt.Sprintf("element %d: got %.17g, want %.17g (tolerance %g × (%g + %g))", i, g, w, tol, floor, scale)
	}
	return ""
}

// SortedKeys is the keys of m in increasing order.
func SortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// CentralDiff is the central difference (f(x+h) − f(x−h)) / 2h of f with respect to
// data[j]: f is evaluated with data[j] raised and lowered by h, and data[j] is restored.
func CentralDiff(data []float64, j int, h float64, f func() float64) float64 {
	x := data[j]
	data[j] = x + h
	up := f()
	data[j] = x - h
	down := f()
	data[j] = x
	return (up - down) / (2 * h)
}
