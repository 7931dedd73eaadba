package onnxtest

import (
	"math"
	"testing"
)

func TestRelErr(t *testing.T) {
	cases := []struct {
		a, b  []float64
		floor float64
		want  float64
	}{
		{[]float64{1, 2}, []float64{1, 2.5}, 1e-3, 0.5 / 2.5},
		{[]float64{0.001}, []float64{0}, 1e-3, 1},          // compared at the floor
		{[]float64{1}, []float64{1, 2}, 1e-3, math.Inf(1)}, // lengths differ
		{[]float64{math.NaN()}, []float64{1}, 1e-3, math.Inf(1)},
		{nil, nil, 1e-3, 0},
	}
	for _, c := range cases {
		if got := RelErr(c.a, c.b, c.floor); got != c.want {
			t.Errorf("RelErr(%v, %v) = %v, want %v", c.a, c.b, got, c.want)
		}
	}
}

func TestLoadErrors(t *testing.T) {
	if _, err := Load("no such file.json"); err == nil {
		t.Error("a missing file loaded")
	}
	f, err := Load("../testdata/mlp_f64.json")
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Grads) == 0 || len(f.Output.Data) == 0 {
		t.Errorf("the MLP fixture has %d gradients and %d output values", len(f.Grads), len(f.Output.Data))
	}
}
