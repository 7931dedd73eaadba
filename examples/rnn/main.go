// Command rnn trains a character-level recurrent network (tanh RNN, unrolled over 10 steps)
// to predict the next character of a small built-in text — a port of the idea of Gorgonia's
// charRNN example, with gradients from bulkad.Grad instead of gorgonia.Grad.
//
//	go run ./examples/rnn
//
// Each example is a window of 10 one-hot characters; the model reads it with
// h_t = tanh(x_t·Wxh + h_{t−1}·Whh + bh) and predicts the next character from h_10·Why + by.
// The text's last 15% is held out. Flags as examples/mlp (-compare, -plot, -steps, -dtype, …).
package main

import (
	"fmt"
	"math/rand"
	"sort"
	"strings"

	"github.com/pkg/errors"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/bulkad/bulkad/examples/internal/train"
)

const (
	window = 10 // characters the RNN reads before predicting the next one
	hidden = 48
)

// vocabulary is the sorted set of characters of the corpus (newlines read as spaces).
func vocabulary() ([]rune, string) {
	text := strings.Join(strings.Fields(corpus), " ")
	set := map[rune]bool{}
	for _, r := range text {
		set[r] = true
	}
	var v []rune
	for r := range set {
		v = append(v, r)
	}
	sort.Slice(v, func(i, j int) bool { return v[i] < v[j] })
	return v, text
}

func example() train.Example {
	vocab, _ := vocabulary()
	nv := len(vocab)
	return train.Example{
		Name:     fmt.Sprintf("tanh RNN (%d chars, vocabulary %d)", window, nv),
		Defaults: train.Config{Batch: 32, Epochs: 12, LearnRate: 0.01, Seed: 1, Classes: nv},
		Init: func(dt tensor.Dtype, seed int64) []*tensor.Dense {
			rng := rand.New(rand.NewSource(seed))
			return []*tensor.Dense{
				train.Glorot(rng, dt, []int{nv, hidden}, nv, hidden),
				train.Glorot(rng, dt, []int{hidden, hidden}, hidden, hidden),
				train.Dense(dt, []int{hidden}, make([]float64, hidden)),
				train.Glorot(rng, dt, []int{hidden, nv}, hidden, nv),
				train.Dense(dt, []int{nv}, make([]float64, nv)),
			}
		},
		XShape:      func(batch int) []int { return []int{batch, window, nv} },
		Build:       build,
		Load:        load,
		BuiltInOnly: true,
	}
}

func build(dt tensor.Dtype, batch int, p []*tensor.Dense, training bool) (*train.Net, error) {
	nv := p[0].Shape()[0]
	g := G.NewGraph()
	x := G.NewTensor(g, dt, 3, G.WithShape(batch, window, nv), G.WithName("x"))
	wxh := G.NewMatrix(g, dt, G.WithShape(nv, hidden), G.WithName("wxh"), G.WithValue(p[0]))
	whh := G.NewMatrix(g, dt, G.WithShape(hidden, hidden), G.WithName("whh"), G.WithValue(p[1]))
	bh := G.NewVector(g, dt, G.WithShape(hidden), G.WithName("bh"), G.WithValue(p[2]))
	why := G.NewMatrix(g, dt, G.WithShape(hidden, nv), G.WithName("why"), G.WithValue(p[3]))
	by := G.NewVector(g, dt, G.WithShape(nv), G.WithName("by"), G.WithValue(p[4]))
	var err error
	must := train.Must(&err)
	var h *G.Node
	for t := 0; t < window; t++ {
		xt := must(G.Slice(x, nil, G.S(t)))
		pre := must(G.Mul(xt, wxh))
		if h != nil {
			pre = must(G.Add(pre, must(G.Mul(h, whh))))
		}
		h = must(G.Tanh(must(G.BroadcastAdd(pre, bh, nil, []byte{0}))))
	}
	logits := must(G.BroadcastAdd(must(G.Mul(h, why)), by, nil, []byte{0}))
	n := &train.Net{G: g, X: x, Logits: logits, Learn: G.Nodes{wxh, whh, bh, why, by}}
	if training {
		n.AddCrossEntropy(dt, batch, nv, must)
	}
	return n, err // NewTrainer and Evaluate name the example and the graph
}

// load cuts the text into (window, next character) examples; the last 15% of the text is held out.
func load(dir string, _ int, _ int64) (*train.Data, *train.Data, string, error) {
	if dir != "" {
		return nil, nil, "", errors.New("rnn: -data is not supported: the text is built in")
	}
	vocab, text := vocabulary()
	id := map[rune]int{}
	for i, r := range vocab {
		id[r] = i
	}
	runes := []rune(text)
	nv := len(vocab)
	cut := len(runes) * 85 / 100
	mk := func(from, to int) *train.Data {
		d := &train.Data{Features: window * nv}
		for s := from; s+window < to; s++ {
			row := make([]float64, window*nv)
			for t := 0; t < window; t++ {
				row[t*nv+id[runes[s+t]]] = 1
			}
			d.X = append(d.X, row...)
			d.Labels = append(d.Labels, id[runes[s+window]])
			d.N++
		}
		return d
	}
	return mk(0, cut), mk(cut, len(runes)), fmt.Sprintf("built-in text, %d characters", len(runes)), nil
}

func main() {
	train.Command(example())
}
