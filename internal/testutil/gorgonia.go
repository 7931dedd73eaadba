package testutil

import (
	"fmt"

	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// InputNode makes an input node of g named name holding a copy of d: a scalar node holding
// d's one element when d has rank 0 (dtype float64, float32, int64 or bool), a tensor node of
// d's shape otherwise.
func InputNode(g *gorgonia.ExprGraph, name string, d *tensor.Dense) (*gorgonia.Node, error) {
	if d.Dims() > 0 {
		n := gorgonia.NewTensor(g, d.Dtype(), d.Dims(), gorgonia.WithShape(d.Shape()...), gorgonia.WithName(name))
		if err := gorgonia.Let(n, d.Clone().(*tensor.Dense)); err != nil {
			return nil, fmt.Errorf("testutil: InputNode %s: %w", name, err)
		}
		return n, nil
	}
	switch d.Dtype() {
	case tensor.Float64, tensor.Float32, tensor.Int64, tensor.Bool:
	default:
		return nil, fmt.Errorf("testutil: InputNode %s: scalar of dtype %v", name, d.Dtype())
	}
	n := gorgonia.NewScalar(g, d.Dtype(), gorgonia.WithName(name))
	if err := gorgonia.Let(n, d.Get(0)); err != nil { // a Go scalar: Let wraps it in a gorgonia scalar Value
		return nil, fmt.Errorf("testutil: InputNode %s: %w", name, err)
	}
	return n, nil
}
