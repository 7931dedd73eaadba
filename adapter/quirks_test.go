package adapter

import (
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// TestGorgoniaClamps: the adapter reproduces Gorgonia v0.9.18's clamped sigmoid and softplus
// (lower's are the mathematical functions), at the points on both sides of each bound, in
// both dtypes: the translation gives the TapeMachine's clamped values exactly (sigmoid(25) = 1)
// and its values in between within a few ulps.
func TestGorgoniaClamps(t *testing.T) {
	pts := map[tensor.Dtype][]float64{
		tensor.Float64: {-800, -709.5, -708.5, -30, 0, 1, 15.5, 16.5, 18.5, 19.5, 25},
		tensor.Float32: {-110, -103.5, -102, -88.5, -87.5, 0, 1, 13.5, 14.5, 15.5, 25},
	}
	for _, dt := range []tensor.Dtype{tensor.Float64, tensor.Float32} {
		for _, name := range []string{"sigmoid", "softplus"} {
			b := newGen(dt, 1)
			x := b.from(pts[dt], len(pts[dt]))
			var out *G.Node
			var err error
			if name == "sigmoid" {
				out, err = G.Sigmoid(x)
			} else {
				out, err = G.Softplus(x)
			}
			if err != nil {
				t.Fatal(err)
			}
			if err := runGraph(out.Graph()); err != nil {
				t.Fatalf("%s %v: gorgonia: %v", name, dt, err)
			}
			tr, err := translateGraph(out, G.Nodes{x}, false)
			if err != nil {
				t.Fatalf("%s %v: translate: %v", name, dt, err)
			}
			// The clamped values exactly; in between, the translation's function (core's,
			// package vmath's sigmoid) may differ from Gorgonia's math by an ulp or two.
			got, err := evalTranslation(tr)
			if err != nil {
				t.Fatal(err)
			}
			g, w := floats(got), floats(mustDense(t, out.Value()))
			eps := 4 * 0x1p-52
			if dt == tensor.Float32 {
				eps = 4 * 0x1p-23
			}
			for i, v := range g {
				if (v == 0 || v == 1 || v == pts[dt][i] || w[i] == 0 || w[i] == 1 || w[i] == pts[dt][i]) && v != w[i] {
					t.Errorf("%s %v (%g) = %v, Gorgonia gives %v exactly", name, dt, pts[dt][i], v, w[i])
				} else if d := v - w[i]; d > eps*w[i] || -d > eps*w[i] {
					t.Errorf("%s %v (%g) = %v, Gorgonia gives %v", name, dt, pts[dt][i], v, w[i])
				}
			}
			if name == "sigmoid" {
				if v := floats(mustDense(t, out.Value())); v[len(v)-1] != 1 {
					t.Errorf("Gorgonia's sigmoid(25) %v = %v, want exactly 1 (its clamp)", dt, v[len(v)-1])
				}
			}
		}
	}
}

func mustDense(t *testing.T, v G.Value) *tensor.Dense {
	t.Helper()
	d, err := toDense(v)
	if err != nil {
		t.Fatal(err)
	}
	return d
}
