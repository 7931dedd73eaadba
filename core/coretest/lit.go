package coretest

import "github.com/bulkad/bulkad/core"

// Lit is the literal of type t whose elements come, in order, from one of the generators:
// float for Float64 and Float32, integer for Int64, boolean for Bool (and any other dtype,
// which core.NewLitB then refuses).
func Lit(t core.Type, float func() float64, integer func() int64, boolean func() bool) (*core.Lit, error) {
	n := t.Shape.Size()
	switch t.Dtype {
	case core.Float64, core.Float32:
		return core.NewLitF(t, fill(n, float))
	case core.Int64:
		return core.NewLitI(t.Shape, fill(n, integer))
	}
	return core.NewLitB(t.Shape, fill(n, boolean))
}

// fill is n values of next, in order.
func fill[T any](n int, next func() T) []T {
	out := make([]T, n)
	for i := range out {
		out[i] = next()
	}
	return out
}
