package train

import (
	"flag"
	"math/rand"

	"github.com/pkg/errors"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/bulkad/bulkad/examples/data"
)

// MLP is the main job's model (examples/mlp, and examples/ddp data-parallel): an MNIST-style
// multi-layer perceptron 784-hidden-10 (ReLU, softmax cross-entropy, Adam) on the built-in
// digits. *hidden is its hidden width (the -hidden flag it registers).
func MLP(hidden *int) Example {
	return Example{
		Name: "MLP",
		ExtraFlags: func(fs *flag.FlagSet) {
			fs.IntVar(hidden, "hidden", *hidden, "hidden units")
		},
		CheckFlags: func() error {
			if *hidden <= 0 {
				return errors.Errorf("MLP: -hidden %d: want at least one hidden unit", *hidden)
			}
			return nil
		},
		Defaults: Config{Batch: 100, Epochs: 4, LearnRate: 0.002, Seed: 1, Classes: 10},
		DefaultN: 6000,
		Init: func(dt tensor.Dtype, seed int64) []*tensor.Dense {
			hidden := *hidden
			rng := rand.New(rand.NewSource(seed))
			return []*tensor.Dense{
				Glorot(rng, dt, []int{data.Pixels, hidden}, data.Pixels, hidden),
				Dense(dt, []int{hidden}, make([]float64, hidden)),
				Glorot(rng, dt, []int{hidden, 10}, hidden, 10),
				Dense(dt, []int{10}, make([]float64, 10)),
			}
		},
		XShape: func(batch int) []int { return []int{batch, data.Pixels} },
		Build:  buildMLP,
		Load:   DigitsLoader(1000),
	}
}

// buildMLP is the model: logits = relu(x·w0 + b0)·w1 + b1, cost = −mean(Σ y ⊙ logsoftmax(logits)).
func buildMLP(dt tensor.Dtype, batch int, p []*tensor.Dense, training bool) (*Net, error) {
	g := G.NewGraph()
	hidden := p[0].Shape()[1]
	x := G.NewMatrix(g, dt, G.WithShape(batch, data.Pixels), G.WithName("x"))
	w0 := G.NewMatrix(g, dt, G.WithShape(data.Pixels, hidden), G.WithName("w0"), G.WithValue(p[0]))
	b0 := G.NewVector(g, dt, G.WithShape(hidden), G.WithName("b0"), G.WithValue(p[1]))
	w1 := G.NewMatrix(g, dt, G.WithShape(hidden, 10), G.WithName("w1"), G.WithValue(p[2]))
	b1 := G.NewVector(g, dt, G.WithShape(10), G.WithName("b1"), G.WithValue(p[3]))
	var err error
	must := Must(&err)
	h := must(G.Rectify(must(G.BroadcastAdd(must(G.Mul(x, w0)), b0, nil, []byte{0}))))
	logits := must(G.BroadcastAdd(must(G.Mul(h, w1)), b1, nil, []byte{0}))
	n := &Net{G: g, X: x, Logits: logits, Learn: G.Nodes{w0, b0, w1, b1}}
	if training {
		n.AddCrossEntropy(dt, batch, 10, must)
	}
	return n, err // NewTrainer and Evaluate name the example and the graph
}
