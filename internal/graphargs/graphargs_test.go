package graphargs

import (
	"strings"
	"testing"

	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// TestCheck: each kind of bad argument gives its own error, naming the offending node by
// position; good arguments give none, in float32 and float64.
func TestCheck(t *testing.T) {
	for _, dt := range []tensor.Dtype{tensor.Float64, tensor.Float32} {
		g, other := gorgonia.NewGraph(), gorgonia.NewGraph()
		x := gorgonia.NewScalar(g, dt, gorgonia.WithName("x"))
		v := gorgonia.NewVector(g, dt, gorgonia.WithShape(3), gorgonia.WithName("v"))
		y := gorgonia.NewScalar(other, dt, gorgonia.WithName("y"))
		cases := []struct {
			name string
			cost *gorgonia.Node
			wrt  []*gorgonia.Node
			want string // "" for no error
		}{
			{"scalar cost, wrt in its graph", x, []*gorgonia.Node{x, v}, ""},
			{"nil cost", nil, []*gorgonia.Node{x}, "cost node is nil"},
			{"vector cost", v, []*gorgonia.Node{x}, "has shape (3), want a scalar"},
			{"no wrt", x, nil, "no wrt nodes"},
			{"nil wrt", x, []*gorgonia.Node{x, nil}, "wrt node 1 is nil"},
			{"wrt of another graph", x, []*gorgonia.Node{y}, "wrt node 0 (y :: " + dt.String() + ") belongs to another graph than the cost"},
		}
		for _, c := range cases {
			err := Check(c.cost, c.wrt)
			switch {
			case c.want == "" && err != nil:
				t.Errorf("%v %s: %v", dt, c.name, err)
			case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
				t.Errorf("%v %s: error %v, want one containing %q", dt, c.name, err, c.want)
			}
		}
	}
}
