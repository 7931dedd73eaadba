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

import "github.com/bulkad/bulkad/examples/internal/train"

// example returns the MLP (train.MLP, shared with examples/ddp); *hidden is its hidden width
// (the -hidden flag).
func example(hidden *int) train.Example { return train.MLP(hidden) }

func main() {
	hidden := 256
	train.Command(example(&hidden))
}
