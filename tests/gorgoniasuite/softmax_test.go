package gorgoniasuite

import (
	"fmt"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// TestSoftMaxFull is op_softmax_test.go's TestSoftMaxFull: x : [2,3] and w : [2,3] from
// RangedFromWithStep, SoftMax or LogSoftMax of x·wᵀ, mean as the cost; the output against the
// table (its tolerance 1e-5). Gorgonia's test only logs dx; here the gradients w.r.t. x and w
// are compared with central differences (float64 cases; the float32 cases check the output).
func TestSoftMaxFull(t *testing.T) {
	cases := []struct {
		dt   tensor.Dtype
		log  bool
		want []float64
	}{
		{tensor.Float64, false, []float64{0.49932500041006217, 0.5006749995899378, 0.49730002624369385, 0.502699973756306}},
		{tensor.Float32, false, []float64{0.49932498, 0.50067496, 0.49730003, 0.5027}},
		{tensor.Float64, true, []float64{-0.6944980918096686, -0.6917980918096686, -0.6985617604890871, -0.6877617604890871}},
		{tensor.Float32, true, []float64{-0.6944981, -0.69179815, -0.6985617, -0.6877617}},
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("%v log=%v", c.dt, c.log), func(t *testing.T) {
			var out *G.Node
			build := func() (*G.Node, G.Nodes, error) {
				g := G.NewGraph()
				x := G.NewTensor(g, c.dt, 2, G.WithShape(2, 3), rangedInit(c.dt, 0, 0.01), G.WithName("x"))
				w := G.NewTensor(g, c.dt, 2, G.WithShape(2, 3), rangedInit(c.dt, -0.05, 0.03), G.WithName("w"))
				fc := G.Must(G.Mul(x, G.Must(G.Transpose(w, 1, 0))))
				f := G.SoftMax
				if c.log {
					f = G.LogSoftMax
				}
				out = G.Must(f(fc))
				cost, err := G.Mean(out)
				return cost, G.Nodes{x, w}, err
			}
			cost, wrt, err := build()
			if err != nil {
				t.Fatal(err)
			}
			o := out
			_, grads := mustGrads(t, cost, wrt...)
			if d := maxAbsDiff(floats(o.Value()), c.want); d > 1e-5 {
				t.Errorf("output %v, the table %v", floats(o.Value()), c.want)
			}
			if c.dt == tensor.Float32 {
				return
			}
			for k := range wrt {
				fd, err := centralDiff(build, k, 1e-6)
				if err != nil {
					t.Fatal(err)
				}
				if d := maxAbsDiff(grads[k], fd); d > 1e-8 {
					t.Errorf("∂/∂%s = %v, central differences %v", wrt[k].Name(), grads[k], fd)
				}
			}
		})
	}
}

// TestOldNewSoftmax is op_softmax_test.go's TestOld_NewSoftmax (which only logs): the
// gradient of Σ SoftMax(a) at a = (0.1, 0.1, 0.3, 0.1, 0.4) is 0 by hand (the softmax sums
// to 1 whatever a is).
func TestOldNewSoftmax(t *testing.T) {
	g := G.NewGraph()
	a := inputNode(g, tensor.Float64, tensor.Shape{5}, []float64{0.1, 0.1, 0.3, 0.1, 0.4}, "A")
	_, grads := mustGrads(t, G.Must(G.Sum(G.Must(G.SoftMax(a)))), a)
	if d := maxAbsDiff(grads[0], make([]float64, 5)); d > 1e-16 {
		t.Errorf("∂/∂a Σ softmax(a) = %v, want 0", grads[0])
	}
}
