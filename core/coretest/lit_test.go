package coretest

import (
	"reflect"
	"testing"

	"github.com/bulkad/bulkad/core"
)

func TestLit(t *testing.T) {
	counter := func() (func() float64, func() int64, func() bool) {
		n := 0
		return func() float64 { n++; return float64(n) / 2 },
			func() int64 { n++; return int64(-n) },
			func() bool { n++; return n%2 == 0 }
	}
	cases := []struct {
		name string
		t    core.Type
		want any // the literal's values: F, I or B
	}{
		{"f64 matrix", core.Type{Shape: core.Shape{2, 2}, Dtype: core.Float64}, []float64{0.5, 1, 1.5, 2}},
		{"f32 vector", core.Type{Shape: core.Shape{3}, Dtype: core.Float32}, []float64{0.5, 1, 1.5}},
		{"i64 vector", core.Type{Shape: core.Shape{3}, Dtype: core.Int64}, []int64{-1, -2, -3}},
		{"bool scalar", core.Scalar(core.Bool), []bool{false}},
		{"bool vector", core.Type{Shape: core.Shape{4}, Dtype: core.Bool}, []bool{false, true, false, true}},
	}
	for _, c := range cases {
		f, i, b := counter()
		l, err := Lit(c.t, f, i, b)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if !l.Type().Equal(c.t) {
			t.Errorf("%s: type %v, want %v", c.name, l.Type(), c.t)
		}
		var got any
		switch c.t.Dtype {
		case core.Float64, core.Float32:
			got = l.F
		case core.Int64:
			got = l.I
		default:
			got = l.B
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: values %v, want %v", c.name, got, c.want)
		}
	}
}
