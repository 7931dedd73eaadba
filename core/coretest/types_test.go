package coretest

import (
	"testing"

	"github.com/bulkad/bulkad/core"
)

func TestTypes(t *testing.T) {
	cases := []struct {
		name      string
		got, want core.Type
	}{
		{"F64 matrix", F64(2, 3), core.Type{Shape: core.Shape{2, 3}, Dtype: core.Float64}},
		{"F64 scalar", F64(), core.Scalar(core.Float64)},
		{"F32 vector", F32(4), core.Type{Shape: core.Shape{4}, Dtype: core.Float32}},
		{"I64 scalar", I64(), core.Scalar(core.Int64)},
		{"I64 rank 3", I64(1, 2, 3), core.Type{Shape: core.Shape{1, 2, 3}, Dtype: core.Int64}},
		{"Bool vector", Bool(5), core.Type{Shape: core.Shape{5}, Dtype: core.Bool}},
	}
	for _, c := range cases {
		if !c.got.Equal(c.want) {
			t.Errorf("%s: %v, want %v", c.name, c.got, c.want)
		}
	}
}
