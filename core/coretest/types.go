package coretest

import "github.com/bulkad/bulkad/core"

// F64 is the float64 type of shape sh (a scalar for none).
func F64(sh ...int) core.Type { return core.Type{Shape: core.Shape(sh), Dtype: core.Float64} }

// F32 is the float32 type of shape sh (a scalar for none).
func F32(sh ...int) core.Type { return core.Type{Shape: core.Shape(sh), Dtype: core.Float32} }

// I64 is the int64 type of shape sh (a scalar for none).
func I64(sh ...int) core.Type { return core.Type{Shape: core.Shape(sh), Dtype: core.Int64} }

// Bool is the bool type of shape sh (a scalar for none).
func Bool(sh ...int) core.Type { return core.Type{Shape: core.Shape(sh), Dtype: core.Bool} }
