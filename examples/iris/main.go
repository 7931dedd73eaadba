// Command iris trains softmax regression on Fisher's iris data set (150 flowers, 4 features,
// 3 species; shipped with bulkad) — a port of Gorgonia's iris example with gradients from
// bulkad.Grad. 120 flowers train, 30 are held out (a seeded shuffle); features are
// standardised with the training set's mean and deviation.
//
//	go run ./examples/iris
//
// Flags as examples/mlp (-compare, -plot, -steps, -dtype, -epochs, -batch, -lr, -seed).
package main

import (
	"math"
	"math/rand"

	"github.com/pkg/errors"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/bulkad/bulkad/examples/data"
	"github.com/bulkad/bulkad/examples/internal/train"
)

func example() train.Example {
	return train.Example{
		Name:     "softmax regression (iris)",
		Defaults: train.Config{Batch: 15, Epochs: 40, LearnRate: 0.05, Seed: 1, Classes: 3},
		Init: func(dt tensor.Dtype, seed int64) []*tensor.Dense {
			rng := rand.New(rand.NewSource(seed))
			return []*tensor.Dense{train.Glorot(rng, dt, []int{4, 3}, 4, 3), train.Dense(dt, []int{3}, make([]float64, 3))}
		},
		XShape:      func(batch int) []int { return []int{batch, 4} },
		Build:       build,
		Load:        load,
		BuiltInOnly: true,
	}
}

// build: logits = x·w + b, cost = −mean(Σ y ⊙ logsoftmax(logits)).
func build(dt tensor.Dtype, batch int, p []*tensor.Dense, training bool) (*train.Net, error) {
	g := G.NewGraph()
	x := G.NewMatrix(g, dt, G.WithShape(batch, 4), G.WithName("x"))
	w := G.NewMatrix(g, dt, G.WithShape(4, 3), G.WithName("w"), G.WithValue(p[0]))
	b := G.NewVector(g, dt, G.WithShape(3), G.WithName("b"), G.WithValue(p[1]))
	var err error
	must := train.Must(&err)
	logits := must(G.BroadcastAdd(must(G.Mul(x, w)), b, nil, []byte{0}))
	n := &train.Net{G: g, X: x, Logits: logits, Learn: G.Nodes{w, b}}
	if training {
		n.AddCrossEntropy(dt, batch, 3, must)
	}
	return n, err // NewTrainer and Evaluate name the example and the graph
}

func load(dir string, _ int, seed int64) (*train.Data, *train.Data, string, error) {
	if dir != "" {
		return nil, nil, "", errors.New("iris: -data is not supported: the data set is built in")
	}
	feats, labels, err := data.Iris()
	if err != nil {
		return nil, nil, "", err
	}
	order := rand.New(rand.NewSource(seed)).Perm(len(feats))
	const nTrain = 120
	var mu, sd [4]float64
	for _, k := range order[:nTrain] {
		for j := 0; j < 4; j++ {
			mu[j] += feats[k][j] / nTrain
		}
	}
	for _, k := range order[:nTrain] {
		for j := 0; j < 4; j++ {
			sd[j] += (feats[k][j] - mu[j]) * (feats[k][j] - mu[j]) / nTrain
		}
	}
	split := func(ks []int) *train.Data {
		d := &train.Data{N: len(ks), Features: 4}
		for _, k := range ks {
			for j := 0; j < 4; j++ {
				d.X = append(d.X, (feats[k][j]-mu[j])/math.Sqrt(sd[j]))
			}
			d.Labels = append(d.Labels, labels[k])
		}
		return d
	}
	return split(order[:nTrain]), split(order[nTrain:]), "Fisher's iris, built in", nil
}

func main() {
	train.Command(example())
}
