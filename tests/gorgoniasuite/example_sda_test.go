package gorgoniasuite

import (
	"math"
	"math/rand"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// trainDA is the pretraining of one denoising autoencoder of Gorgonia's
// examples/stacked_autoencoder at a small size: corrupted = mask ⊙ x, hidden = Sigmoid(corrupted
// · w + b), reconstruction = Sigmoid(hidden · wᵀ + b′) (tied weights), cost = Mean(BinaryXent(
// reconstruction, x)), gradients w.r.t. w, b and b′, VanillaSolver with the batch size. The
// example draws the corruption mask with BinomialRandomNode on every run; here it is one fixed
// 0/1 input drawn from a seed, so both graphs see the same mask. Batch 8, 12 inputs, 5 hidden.
func trainDA(t *testing.T, grad gradFunc, steps int) []float64 {
	t.Helper()
	const bs, nIn, nHid = 8, 12, 5
	r := rand.New(rand.NewSource(3))
	xs := make([]float64, bs*nIn)
	mask := make([]float64, bs*nIn)
	for i := range xs {
		xs[i] = float64(r.Intn(2))
		if r.Float64() > 0.3 {
			mask[i] = 1
		}
	}
	ws := make([]float64, nIn*nHid)
	for i := range ws {
		ws[i] = (r.Float64()*2 - 1) * math.Sqrt(6.0/(nIn+nHid))
	}
	g := G.NewGraph()
	x := inputNode(g, tensor.Float64, tensor.Shape{bs, nIn}, xs, "x")
	corruption := inputNode(g, tensor.Float64, tensor.Shape{bs, nIn}, mask, "corruption")
	w := inputNode(g, tensor.Float64, tensor.Shape{nIn, nHid}, ws, "w")
	b := inputNode(g, tensor.Float64, tensor.Shape{bs, nHid}, make([]float64, bs*nHid), "b")
	hb := inputNode(g, tensor.Float64, tensor.Shape{bs, nIn}, make([]float64, bs*nIn), "hb")
	corrupted := G.Must(G.HadamardProd(corruption, x))
	hidden := G.Must(G.Sigmoid(G.Must(G.Add(G.Must(G.Mul(corrupted, w)), b))))
	recon := G.Must(G.Sigmoid(G.Must(G.Add(G.Must(G.Mul(hidden, G.Must(G.Transpose(w)))), hb))))
	cost := G.Must(G.Mean(G.Must(G.BinaryXent(recon, x))))
	learnables := G.Nodes{w, b, hb}
	return trainSolver(t, grad, cost, learnables, G.NewVanillaSolver(G.WithBatchSize(bs)), steps)
}

// TestExampleStackedAutoencoder pretrains the denoising autoencoder for 20 steps from identical
// weights with gorgonia.Grad and with bulkad.Grad (separate graphs); the cost curves must agree
// to 1e-9 and the cost must fall.
func TestExampleStackedAutoencoder(t *testing.T) {
	const steps = 20
	sameCurves(t, trainDA, steps)
}
