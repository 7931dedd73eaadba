// Command convnet trains a small convolutional network — a port of Gorgonia's convnet example
// (conv, ReLU, max-pool, dropout, dense, softmax cross-entropy) — with gradients from
// bulkad.Grad instead of gorgonia.Grad, on the built-in procedural digits (or MNIST with
// -data DIR).
//
//	go run ./examples/convnet
//
// Architecture (input 1×28×28): conv 3×3 (1→8, pad 1) → ReLU → max-pool 2×2 → conv 3×3
// (8→16, pad 1) → ReLU → max-pool 2×2 → reshape 784 → dropout 0.2 → dense 784→10 → log-softmax.
// Flags as examples/mlp (-data, -compare, -plot, -steps, -dtype, -epochs, -batch, -lr, -n, -seed).
package main

import (
	"math/rand"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/bulkad/bulkad/examples/data"
	"github.com/bulkad/bulkad/examples/internal/train"
)

const (
	c1, c2 = 8, 16      // channels of the two convolutions
	flat   = c2 * 7 * 7 // features after the second pooling
	drop   = 0.2        // dropout probability before the dense layer
)

func example() train.Example {
	return train.Example{
		Name:     "convnet",
		Defaults: train.Config{Batch: 50, Epochs: 2, LearnRate: 0.003, Seed: 1, Classes: 10},
		DefaultN: 3000,
		Init: func(dt tensor.Dtype, seed int64) []*tensor.Dense {
			rng := rand.New(rand.NewSource(seed))
			return []*tensor.Dense{
				train.Glorot(rng, dt, []int{c1, 1, 3, 3}, 9, c1*9),
				train.Glorot(rng, dt, []int{c2, c1, 3, 3}, c1*9, c2*9),
				train.Glorot(rng, dt, []int{flat, 10}, flat, 10),
			}
		},
		XShape: func(batch int) []int { return []int{batch, 1, data.Side, data.Side} },
		Build:  build,
		Load:   train.DigitsLoader(500),
		CompareNote: "Gorgonia's Dropout gradient (gorgonia v0.9.18, op_dropout.go) divides by the drop probability (0.2) " +
			"instead of the keep probability (0.8): its gradients of everything before the dropout are 4× too large.",
	}
}

func build(dt tensor.Dtype, batch int, p []*tensor.Dense, training bool) (*train.Net, error) {
	g := G.NewGraph()
	x := G.NewTensor(g, dt, 4, G.WithShape(batch, 1, data.Side, data.Side), G.WithName("x"))
	w0 := G.NewTensor(g, dt, 4, G.WithShape(c1, 1, 3, 3), G.WithName("w0"), G.WithValue(p[0]))
	w1 := G.NewTensor(g, dt, 4, G.WithShape(c2, c1, 3, 3), G.WithName("w1"), G.WithValue(p[1]))
	w2 := G.NewMatrix(g, dt, G.WithShape(flat, 10), G.WithName("w2"), G.WithValue(p[2]))
	var err error
	must := train.Must(&err)
	k := tensor.Shape{3, 3}
	one := []int{1, 1}
	h := must(G.Conv2d(x, w0, k, one, one, one))
	h = must(G.MaxPool2D(must(G.Rectify(h)), tensor.Shape{2, 2}, []int{0, 0}, []int{2, 2}))
	h = must(G.Conv2d(h, w1, k, one, one, one))
	h = must(G.MaxPool2D(must(G.Rectify(h)), tensor.Shape{2, 2}, []int{0, 0}, []int{2, 2}))
	h = must(G.Reshape(h, tensor.Shape{batch, flat}))
	if training {
		h = must(G.Dropout(h, drop))
	}
	logits := must(G.Mul(h, w2))
	n := &train.Net{G: g, X: x, Logits: logits, Learn: G.Nodes{w0, w1, w2}}
	if training {
		n.AddCrossEntropy(dt, batch, 10, must)
	}
	return n, err // NewTrainer and Evaluate name the example and the graph
}

func main() {
	train.Command(example())
}
