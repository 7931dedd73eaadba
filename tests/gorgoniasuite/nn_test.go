package gorgoniasuite

import (
	"fmt"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// compareWithGorgonia runs b's graph with bulkad.Grad and a separate one with gorgonia.Grad,
// requires the gradients to be equal within tol, and requires bulkad's to match central
// differences (step h) of the float64 graph fd (nil: same as b) at the listed entries of
// wrt[0]. The costs here are piecewise linear or quadratic in each entry with distinct
// inputs, so a large step is exact and avoids the rounding of big sums.
func compareWithGorgonia(t *testing.T, b, fd builder, tol, h float64, entries func(size int) []int) {
	t.Helper()
	_, grads := builtGrads(t, b)
	gg, err := gorgoniaGrads(b)
	if err != nil {
		t.Fatal(err)
	}
	for k := range grads {
		if d := maxAbsDiff(grads[k], gg[k]); d > tol {
			t.Errorf("wrt %d: bulkad and Gorgonia's Grad differ by %g", k, d)
		}
	}
	if fd == nil {
		fd = b
	}
	at := entries(len(grads[0]))
	diffs, err := centralDiffAt(fd, 0, h, at)
	if err != nil {
		t.Fatal(err)
	}
	if d := maxAbsDiff(pick(grads[0], at), diffs); d > 1e-6 {
		t.Errorf("bulkad gradient differs from central differences by %g", d)
	}
}

// TestIm2Col is nn_test.go's TestIm2Col: Σ Im2Col(x) over a 2×1×28×28 input holding 0, 1, …
// for three kernel/pad/stride settings and both dtypes. Gorgonia's test compares its Grad with
// its LispMachine; here bulkad's gradient must equal Gorgonia's Grad and central differences
// (at every 23rd entry).
func TestIm2Col(t *testing.T) {
	settings := []struct{ kernel, pad, stride, dilation tensor.Shape }{
		{tensor.Shape{4, 4}, tensor.Shape{0, 0}, tensor.Shape{1, 1}, tensor.Shape{1, 1}},
		{tensor.Shape{3, 3}, tensor.Shape{1, 1}, tensor.Shape{2, 2}, tensor.Shape{1, 1}},
		{tensor.Shape{3, 3}, tensor.Shape{1, 1}, tensor.Shape{3, 3}, tensor.Shape{1, 1}},
	}
	for _, dt := range []tensor.Dtype{tensor.Float64, tensor.Float32} {
		for _, s := range settings {
			build := func(dt tensor.Dtype) builder {
				return func() (*G.Node, G.Nodes, error) {
					g := G.NewGraph()
					x := G.NewTensor(g, dt, 4, G.WithShape(2, 1, 28, 28), G.WithInit(G.RangedFrom(0)), G.WithName("x"))
					y, err := G.Im2Col(x, s.kernel, s.pad, s.stride, s.dilation)
					if err != nil {
						return nil, nil, err
					}
					cost, err := G.Sum(y)
					return cost, G.Nodes{x}, err
				}
			}
			t.Run(fmt.Sprintf("%v kernel %v pad %v stride %v", dt, s.kernel, s.pad, s.stride), func(t *testing.T) {
				compareWithGorgonia(t, build(dt), build(tensor.Float64), 0, 0.25, func(n int) []int { return everyNth(n, 23) })
			})
		}
	}
}

// TestMaxPool2D is nn_test.go's TestMaxPool2D: Σ MaxPool2D(x) with 2×2 windows, stride 1, on a
// 1×2×3×4 input holding 0, 1, …, both dtypes; compared with Gorgonia's Grad and central
// differences at every entry.
func TestMaxPool2D(t *testing.T) {
	for _, dt := range []tensor.Dtype{tensor.Float64, tensor.Float32} {
		build := func(dt tensor.Dtype) builder {
			return func() (*G.Node, G.Nodes, error) {
				g := G.NewGraph()
				x := G.NewTensor(g, dt, 4, G.WithShape(1, 2, 3, 4), G.WithInit(G.RangedFrom(0)), G.WithName("x"))
				y, err := G.MaxPool2D(x, tensor.Shape{2, 2}, []int{0, 0}, []int{1, 1})
				if err != nil {
					return nil, nil, err
				}
				cost, err := G.Sum(y)
				return cost, G.Nodes{x}, err
			}
		}
		t.Run(dt.String(), func(t *testing.T) {
			compareWithGorgonia(t, build(dt), build(tensor.Float64), 0, 0.25, func(n int) []int { return everyNth(n, 1) })
		})
	}
}

// TestMaxPool is nn_test.go's TestMaxPool: a 4×4 max pool of 0…15 (one window), cost
// Mean((pool − 1)²) = 196 as Gorgonia's table says; the gradient is 2·14 = 28 at the maximum
// and 0 elsewhere (checked against Gorgonia's Grad and central differences).
func TestMaxPool(t *testing.T) {
	build := func() (*G.Node, G.Nodes, error) {
		g := G.NewGraph()
		data := make([]float64, 16)
		for i := range data {
			data[i] = float64(i)
		}
		in := inputNode(g, tensor.Float64, tensor.Shape{1, 1, 4, 4}, data, "input")
		out, err := G.MaxPool2D(in, tensor.Shape{4, 4}, []int{0, 0}, []int{1, 1})
		if err != nil {
			return nil, nil, err
		}
		cost, err := meanSquaredError(out, inputNode(g, tensor.Float64, out.Shape(), []float64{1}, "y"))
		return cost, G.Nodes{in}, err
	}
	got, grads := builtGrads(t, build)
	if got != 196 {
		t.Errorf("cost %v, Gorgonia's table 196", got)
	}
	if grads[0][15] != 28 {
		t.Errorf("∂/∂input[15] = %v, want 28", grads[0][15])
	}
	compareWithGorgonia(t, build, nil, 0, 0.25, func(n int) []int { return everyNth(n, 1) })
}
