package train

import (
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/bulkad/bulkad/examples/data"
)

// DigitsLoader returns the Load function of the digit classifiers (mlp, convnet): MNIST from
// dir when one is given, else n procedural digits for training and nTest for testing.
func DigitsLoader(nTest int) func(dir string, n int, seed int64) (*Data, *Data, string, error) {
	conv := func(s *data.Set) *Data {
		return &Data{X: s.Images, Labels: s.Labels, N: s.N, Features: data.Pixels}
	}
	return func(dir string, n int, seed int64) (*Data, *Data, string, error) {
		if dir != "" {
			tr, err := data.MNIST(dir, "train")
			if err != nil {
				return nil, nil, "", err
			}
			te, err := data.MNIST(dir, "t10k")
			if err != nil {
				return nil, nil, "", err
			}
			return conv(tr), conv(te), "MNIST from " + dir, nil
		}
		tr, err := data.Digits(n, seed)
		if err != nil {
			return nil, nil, "", err
		}
		te, err := data.Digits(nTest, seed+1000)
		if err != nil {
			return nil, nil, "", err
		}
		return conv(tr), conv(te), "built-in procedural digits", nil
	}
}

// AddCrossEntropy gives the net its one-hot targets Y : [batch, classes] and the cost
// −mean over the batch of Σ y ⊙ logsoftmax(logits).
func (n *Net) AddCrossEntropy(dt tensor.Dtype, batch, classes int, must func(*G.Node, error) *G.Node) {
	n.Y = G.NewMatrix(n.G, dt, G.WithShape(batch, classes), G.WithName("y"))
	logp := must(G.LogSoftMax(n.Logits))
	n.Cost = must(G.Neg(must(G.Mean(must(G.Sum(must(G.HadamardProd(logp, n.Y)), 1))))))
}
