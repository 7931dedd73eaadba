// Package onnxtest is test support for the ONNX importer: the results that
// onnx/testdata/gen.py records with each model it exports from PyTorch, and the relative
// error the tests compare them with. It imports no bulkad package.
package onnxtest

import (
	"encoding/json"
	"math"
	"os"

	"github.com/pkg/errors"
)

// Array is a float array with its shape.
type Array struct {
	Shape []int     `json:"shape"`
	Data  []float64 `json:"data"`
}

// Fixture is one exported model's PyTorch results: the input, the output, the weights r of
// the loss Σ output ⊙ r, the loss and its autograd gradients by parameter name.
type Fixture struct {
	Input  Array                `json:"input"`
	Output Array                `json:"output"`
	R      []float64            `json:"r"`
	Loss   float64              `json:"loss"`
	Grads  map[string][]float64 `json:"grads"`
}

// Load reads a fixture's JSON file.
func Load(path string) (*Fixture, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, errors.Wrap(err, "onnxtest: fixture")
	}
	var f Fixture
	if err := json.Unmarshal(raw, &f); err != nil {
		return nil, errors.Wrapf(err, "onnxtest: fixture %s", path)
	}
	return &f, nil
}

// RelErr is the largest |a−b| relative to the largest |b|, or to floor when that is larger
// (entries near 0 are then compared absolutely at that scale); +Inf for different lengths or
// a NaN difference.
func RelErr(a, b []float64, floor float64) float64 {
	if len(a) != len(b) {
		return math.Inf(1)
	}
	scale := floor
	for _, x := range b {
		scale = math.Max(scale, math.Abs(x))
	}
	m := 0.0
	for i := range a {
		d := math.Abs(a[i] - b[i])
		if math.IsNaN(d) {
			return math.Inf(1)
		}
		m = math.Max(m, d/scale)
	}
	return m
}
