package gorgoniasuite

import (
	"fmt"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// TestBinOps is operatorPointwise_binary_test.go's TestBinOps for the arithmetic operators
// (+ − × ÷ ^), scalar–scalar (ssBinOpTest) and tensor–tensor (ttBinOpTest), float64 and
// float32. Gorgonia's test draws positive random inputs and compares its TapeMachine with its
// LispMachine; here the inputs are fixed positive numbers and bulkad.Grad must equal
// gorgonia.Grad and the central differences of the float64 graph. (The comparison operators
// of the same loop have no gradient.)
func TestBinOps(t *testing.T) {
	ops := []struct {
		name string
		fn   func(a, b *G.Node) (*G.Node, error)
	}{
		{"add", G.Add}, {"sub", G.Sub}, {"mul", G.HadamardProd}, {"div", G.HadamardDiv}, {"pow", G.Pow},
	}
	xs := []float64{0.8, 1.7, 0.35, 2.2, 1.1, 0.6}
	ys := []float64{1.3, 0.45, 2.6, 0.9, 1.9, 0.75}
	for _, op := range ops {
		for _, dt := range []tensor.Dtype{tensor.Float64, tensor.Float32} {
			for _, scalar := range []bool{true, false} {
				build := func(dt tensor.Dtype) builder {
					return func() (*G.Node, G.Nodes, error) {
						g := G.NewGraph()
						var x, y *G.Node
						if scalar {
							x = G.NewScalar(g, dt, G.WithName("x"), G.WithValue(scalarOf(dt, xs[0])))
							y = G.NewScalar(g, dt, G.WithName("y"), G.WithValue(scalarOf(dt, ys[0])))
						} else {
							x = inputNode(g, dt, tensor.Shape{2, 3}, xs, "x")
							y = inputNode(g, dt, tensor.Shape{2, 3}, ys, "y")
						}
						z, err := op.fn(x, y)
						if err != nil {
							return nil, nil, err
						}
						cost, err := G.Sum(z)
						return cost, G.Nodes{x, y}, err
					}
				}
				kind := "tt"
				if scalar {
					kind = "ss"
				}
				t.Run(fmt.Sprintf("%s %s %v", op.name, kind, dt), func(t *testing.T) {
					tol := 1e-12
					if dt == tensor.Float32 {
						tol = 1e-5
					}
					_, grads := builtGrads(t, build(dt))
					gg, err := gorgoniaGrads(build(dt))
					if err != nil {
						t.Fatal(err)
					}
					for k := range grads {
						if d := maxAbsDiff(grads[k], gg[k]); d > tol {
							t.Errorf("wrt %d: bulkad %v, gorgonia.Grad %v", k, grads[k], gg[k])
						}
						fd, err := centralDiff(build(tensor.Float64), k, 1e-5)
						if err != nil {
							t.Fatal(err)
						}
						if d := maxAbsDiff(grads[k], fd); d > 1e-5 {
							t.Errorf("wrt %d: bulkad %v, central differences %v", k, grads[k], fd)
						}
					}
				})
			}
		}
	}
}
