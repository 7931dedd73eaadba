package gorgoniasuite

import (
	"math"
	"math/rand"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// trainConvnet is Gorgonia's examples/convnet at a small size: three blocks of 3×3 convolution
// (pad 1), Rectify and 2×2 max pool (stride 2), reshape, a dense layer with Rectify, a dense
// layer and SoftMax; cost = Mean(−log(out) ⊙ y) (the "correct losses" line of the example;
// its active line log(out ⊙ y) takes the log of zeros); RMSProp with the batch size, as in the
// example. Sizes: batch 4, 1×12×12 images, 4/8/8 channels, dense 8→16→10. The example's
// dropout layers are left out: their masks are random per run, so the two graphs would not see
// the same masks (Gorgonia's dropout gradient is checked elsewhere: gradcheck.Check, README).
// Data and weights are drawn from a fixed seed. It returns the cost at each step.
func trainConvnet(t *testing.T, grad gradFunc, steps int) []float64 {
	t.Helper()
	const bs = 4
	r := rand.New(rand.NewSource(11))
	normal := func(n int, scale float64) []float64 {
		out := make([]float64, n)
		for i := range out {
			out[i] = r.NormFloat64() * scale
		}
		return out
	}
	xs := make([]float64, bs*12*12)
	for i := range xs {
		xs[i] = r.Float64()
	}
	ys := make([]float64, bs*10)
	for i := 0; i < bs; i++ {
		ys[i*10+r.Intn(10)] = 1
	}
	g := G.NewGraph()
	tensorNode := func(name string, shape tensor.Shape, data []float64) *G.Node {
		return inputNode(g, tensor.Float64, shape, data, name)
	}
	x := tensorNode("x", tensor.Shape{bs, 1, 12, 12}, xs)
	y := tensorNode("y", tensor.Shape{bs, 10}, ys)
	w0 := tensorNode("w0", tensor.Shape{4, 1, 3, 3}, normal(4*9, math.Sqrt(2.0/9)))
	w1 := tensorNode("w1", tensor.Shape{8, 4, 3, 3}, normal(8*4*9, math.Sqrt(2.0/36)))
	w2 := tensorNode("w2", tensor.Shape{8, 8, 3, 3}, normal(8*8*9, math.Sqrt(2.0/72)))
	w3 := tensorNode("w3", tensor.Shape{8, 16}, normal(8*16, math.Sqrt(2.0/8)))
	w4 := tensorNode("w4", tensor.Shape{16, 10}, normal(16*10, math.Sqrt(2.0/16)))
	learnables := G.Nodes{w0, w1, w2, w3, w4}
	block := func(in, w *G.Node) *G.Node {
		c := G.Must(G.Conv2d(in, w, tensor.Shape{3, 3}, []int{1, 1}, []int{1, 1}, []int{1, 1}))
		return G.Must(G.MaxPool2D(G.Must(G.Rectify(c)), tensor.Shape{2, 2}, []int{0, 0}, []int{2, 2}))
	}
	p2 := block(block(block(x, w0), w1), w2)
	s := p2.Shape()
	r2 := G.Must(G.Reshape(p2, tensor.Shape{s[0], s[1] * s[2] * s[3]}))
	a3 := G.Must(G.Rectify(G.Must(G.Mul(r2, w3))))
	out := G.Must(G.SoftMax(G.Must(G.Mul(a3, w4))))
	cost := G.Must(G.Mean(G.Must(G.HadamardProd(G.Must(G.Neg(G.Must(G.Log(out)))), y))))
	return trainSolver(t, grad, cost, learnables, G.NewRMSPropSolver(G.WithBatchSize(bs)), steps)
}

// TestExampleConvnet trains the convnet port for 10 steps from identical weights with
// gorgonia.Grad and with bulkad.Grad (separate graphs); the cost curves must agree to 1e-9
// and the cost must fall.
func TestExampleConvnet(t *testing.T) {
	const steps = 10
	sameCurves(t, trainConvnet, steps)
}
