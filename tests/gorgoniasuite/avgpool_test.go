package gorgoniasuite

import (
	"math"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// TestAvgPoolOp is op_avg_pool_test.go's TestAvgPoolOp: a 2×2 average pool (stride 1) of
// 0…15 in a 1×1×4×4 image and the cost Mean((pool − 1)²), whose value Gorgonia's table gives.
// Gorgonia's test takes Grad of it but asserts no gradient; here bulkad's gradient must match
// central differences, and each case records whether Gorgonia's own gradient does
// (gorgoniaWrong). On these sizes (4×4, 2×2 windows, stride 1) it does.
func TestAvgPoolOp(t *testing.T) {
	cases := []struct {
		name          string
		dt            tensor.Dtype
		wantCost      float64
		costTol       float64
		gorgoniaWrong bool
	}{
		{"Example 1", tensor.Float64, 53.583333333333336, 1e-12, false},
		{"Example 2", tensor.Float32, float64(float32(53.583332)), 1e-4, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			build := func(dt tensor.Dtype) builder {
				return func() (*G.Node, G.Nodes, error) {
					g := G.NewGraph()
					data := make([]float64, 16)
					for i := range data {
						data[i] = float64(i)
					}
					in := inputNode(g, dt, tensor.Shape{1, 1, 4, 4}, data, "input")
					out, err := G.AveragePool2D(in, tensor.Shape{2, 2}, []int{0, 0}, []int{1, 1})
					if err != nil {
						return nil, nil, err
					}
					ones := make([]float64, out.Shape().TotalSize())
					for i := range ones {
						ones[i] = 1
					}
					cost, err := meanSquaredError(out, inputNode(g, dt, out.Shape(), ones, "y"))
					return cost, G.Nodes{in}, err
				}
			}
			got, grads := builtGrads(t, build(c.dt))
			if math.Abs(got-c.wantCost) > c.costTol {
				t.Errorf("cost %v, Gorgonia's table %v", got, c.wantCost)
			}
			// The referee: central differences of the float64 graph (the cost is quadratic, so
			// they are exact up to rounding).
			fd, err := centralDiff(build(tensor.Float64), 0, 1e-3)
			if err != nil {
				t.Fatal(err)
			}
			tol := 1e-9
			if c.dt == tensor.Float32 {
				tol = 1e-5
			}
			if d := maxAbsDiff(grads[0], fd); d > tol {
				t.Errorf("bulkad gradient %v differs from central differences %v by %g", grads[0], fd, d)
			}
			// Gorgonia's own gradient on a separate graph.
			gcost, gwrt, err := build(c.dt)()
			if err != nil {
				t.Fatal(err)
			}
			gg, err := G.Grad(gcost, gwrt...)
			if err != nil {
				t.Fatal(err)
			}
			if err := run(gcost.Graph()); err != nil {
				t.Fatal(err)
			}
			gd := maxAbsDiff(floats(gg[0].Value()), fd)
			if wrong := gd > 1e-3; wrong != c.gorgoniaWrong {
				t.Errorf("Gorgonia's gradient %v vs central differences %v (off by %g): gorgoniaWrong=%v recorded", floats(gg[0].Value()), fd, gd, c.gorgoniaWrong)
			}
		})
	}
}
