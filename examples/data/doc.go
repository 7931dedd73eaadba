// Package data provides the datasets of bulkad's examples: a deterministic procedural
// digit dataset shaped like MNIST (28×28 grey glyphs of the digits 0–9 drawn as strokes with
// random affine distortions, stroke widths and noise), a reader for the real MNIST IDX files
// (gzip or not), and the iris data set.
//
// The procedural digits need no download, so `go run ./examples/mlp` works on a fresh
// machine; a classifier must still learn shape features to separate them.
package data
