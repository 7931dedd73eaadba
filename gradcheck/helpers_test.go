package gradcheck_test

import (
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// vec64 is a float64 vector node holding xs.
func vec64(g *G.ExprGraph, name string, xs ...float64) *G.Node {
	return G.NewVector(g, tensor.Float64, G.WithShape(len(xs)), G.WithName(name),
		G.WithValue(tensor.New(tensor.WithShape(len(xs)), tensor.WithBacking(xs))))
}
