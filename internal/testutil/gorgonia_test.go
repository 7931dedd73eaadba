package testutil

import (
	"reflect"
	"testing"

	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

func TestInputNode(t *testing.T) {
	cases := []struct {
		name   string
		d      *tensor.Dense
		scalar bool
		want   any // the node's Data()
		error  bool
	}{
		{"f64 scalar", tensor.New(tensor.FromScalar(2.5)), true, 2.5, false},
		{"f32 scalar", tensor.New(tensor.FromScalar(float32(-1.5))), true, float32(-1.5), false},
		{"i64 scalar", tensor.New(tensor.FromScalar(int64(7))), true, int64(7), false},
		{"bool scalar", tensor.New(tensor.FromScalar(true)), true, true, false},
		{"f64 shape () from a backing", tensor.New(tensor.WithShape(), tensor.WithBacking([]float64{4})), true, 4.0, false},
		{"f32 matrix", tensor.New(tensor.WithShape(2, 2), tensor.WithBacking([]float32{1, 2, 3, 4})), false, []float32{1, 2, 3, 4}, false},
		{"i64 vector", tensor.New(tensor.WithShape(3), tensor.WithBacking([]int64{5, 6, 7})), false, []int64{5, 6, 7}, false},
		{"int scalar", tensor.New(tensor.FromScalar(3)), false, nil, true},
	}
	for _, c := range cases {
		g := gorgonia.NewGraph()
		n, err := InputNode(g, "x", c.d)
		if (err != nil) != c.error {
			t.Errorf("%s: error %v, want error %v", c.name, err, c.error)
			continue
		}
		if c.error {
			continue
		}
		if n.Name() != "x" || n.IsScalar() != c.scalar || n.Dtype() != c.d.Dtype() {
			t.Errorf("%s: node %s scalar %v dtype %v; want x, %v, %v", c.name, n.Name(), n.IsScalar(), n.Dtype(), c.scalar, c.d.Dtype())
		}
		got := n.Value().Data()
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: value %v (%T), want %v (%T)", c.name, got, got, c.want, c.want)
		}
		if !c.scalar {
			// a copy: writing d afterwards leaves the node's value alone
			want := reflect.ValueOf(got).Index(0).Interface()
			c.d.Zero()
			if v := reflect.ValueOf(n.Value().Data()).Index(0).Interface(); v != want {
				t.Errorf("%s: node value follows d: element 0 %v, want %v", c.name, v, want)
			}
		}
	}
}
