// Command mlp trains an MNIST-style multi-layer perceptron (784-256-10, ReLU, softmax
// cross-entropy, Adam) whose gradients come from bulkad.Grad — a port of Gorgonia's mnist
// example with the one-line switch from gorgonia.Grad to bulkad.Grad.
//
// Without flags it trains on a procedurally drawn digit dataset that ships with bulkad (no
// download) and reports the held-out accuracy:
//
//	go run ./examples/mlp
//
// Flags:
//
//	-data DIR     train on the real MNIST IDX files in DIR (train-images-idx3-ubyte etc., .gz or not)
//	-compare      also train with gorgonia.Grad from the same initial weights; print both step
//	              times and the largest gradient difference
//	-plot FILE    write the loss and accuracy curves (PNG, two panels) to FILE
//	-steps N      train exactly N steps (fewer or more epochs than the default as needed)
//	-dtype T      float64 (default) or float32
//	-epochs, -batch, -lr, -n, -seed, -hidden; -h lists them all
//
// The progress line shows the running mean loss and accuracy of the epoch's training batches
// (train loss, train acc); the accuracy printed at the end is on the held-out examples.
package main

import (
	"flag"
	"math/rand"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/bulkad/bulkad/examples/data"
	"github.com/bulkad/bulkad/examples/internal/train"
)

// example returns the MLP; *hidden is its hidden width (the -hidden flag).
func example(hidden *int) train.Example {
	return train.Example{
		Name: "MLP",
		ExtraFlags: func(fs *flag.FlagSet) {
			fs.IntVar(hidden, "hidden", *hidden, "hidden units")
		},
		Defaults: train.Config{Batch: 100, Epochs: 4, LearnRate: 0.002, Seed: 1, Classes: 10},
		DefaultN: 6000,
		Init: func(dt tensor.Dtype, seed int64) []*tensor.Dense {
			hidden := *hidden
			rng := rand.New(rand.NewSource(seed))
			return []*tensor.Dense{
				train.Glorot(rng, dt, []int{data.Pixels, hidden}, data.Pixels, hidden),
				train.Dense(dt, []int{hidden}, make([]float64, hidden)),
				train.Glorot(rng, dt, []int{hidden, 10}, hidden, 10),
				train.Dense(dt, []int{10}, make([]float64, 10)),
			}
		},
		XShape: func(batch int) []int { return []int{batch, data.Pixels} },
		Build:  build,
		Load:   train.DigitsLoader(1000),
	}
}

// build is the model: logits = relu(x·w0 + b0)·w1 + b1, cost = −mean(Σ y ⊙ logsoftmax(logits)).
func build(dt tensor.Dtype, batch int, p []*tensor.Dense, training bool) (*train.Net, error) {
	g := G.NewGraph()
	hidden := p[0].Shape()[1]
	x := G.NewMatrix(g, dt, G.WithShape(batch, data.Pixels), G.WithName("x"))
	w0 := G.NewMatrix(g, dt, G.WithShape(data.Pixels, hidden), G.WithName("w0"), G.WithValue(p[0]))
	b0 := G.NewVector(g, dt, G.WithShape(hidden), G.WithName("b0"), G.WithValue(p[1]))
	w1 := G.NewMatrix(g, dt, G.WithShape(hidden, 10), G.WithName("w1"), G.WithValue(p[2]))
	b1 := G.NewVector(g, dt, G.WithShape(10), G.WithName("b1"), G.WithValue(p[3]))
	var err error
	must := train.Must(&err)
	h := must(G.Rectify(must(G.BroadcastAdd(must(G.Mul(x, w0)), b0, nil, []byte{0}))))
	logits := must(G.BroadcastAdd(must(G.Mul(h, w1)), b1, nil, []byte{0}))
	n := &train.Net{G: g, X: x, Logits: logits, Learn: G.Nodes{w0, b0, w1, b1}}
	if training {
		n.AddCrossEntropy(dt, batch, 10, must)
	}
	return n, err // NewTrainer and Evaluate name the example and the graph
}

func main() {
	hidden := 256
	train.Command(example(&hidden))
}
