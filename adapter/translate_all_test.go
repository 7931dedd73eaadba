package adapter

import (
	"math"
	"testing"

	"github.com/bulkad/bulkad/core/tensors"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// TestTranslateAll translates several roots of one graph into one program and checks each
// result against values computed with package math.
func TestTranslateAll(t *testing.T) {
	xs := []float64{-1.5, 0.25, 2}
	for _, dt := range []tensor.Dtype{tensor.Float64, tensor.Float32} {
		t.Run(dt.String(), func(t *testing.T) {
			g := gorgonia.NewGraph()
			x := gorgonia.NewVector(g, dt, gorgonia.WithShape(3), gorgonia.WithName("x"))
			y := gorgonia.Must(gorgonia.Tanh(x))
			z := gorgonia.Must(gorgonia.HadamardProd(y, y))
			s := gorgonia.Must(gorgonia.Sum(z))
			tr, err := TranslateAll([]*gorgonia.Node{s, y, z, x}, x)
			if err != nil {
				t.Fatal(err)
			}
			var xv *tensor.Dense
			if dt == tensor.Float64 {
				xv = tensor.New(tensor.WithBacking(append([]float64(nil), xs...)))
			} else {
				xv = tensor.New(tensor.WithBacking([]float32{-1.5, 0.25, 2}))
			}
			name := ""
			for k, n := range tr.Params {
				if n == x {
					name = k
				}
			}
			if name == "" || len(tr.Program.Params) != 1 {
				t.Fatalf("parameters %v, want x only", tr.Program.Params)
			}
			out, err := tensors.EvalTuple(tr.Program, map[string]*tensor.Dense{name: xv})
			if err != nil {
				t.Fatal(err)
			}
			if len(out) != 4 {
				t.Fatalf("%d results, want 4", len(out))
			}
			tol := 1e-14
			if dt == tensor.Float32 {
				tol = 1e-6
			}
			sum := 0.0
			for i, v := range xs {
				th := math.Tanh(v)
				sum += th * th
				checks := [][2]float64{{at(out[1], i), th}, {at(out[2], i), th * th}, {at(out[3], i), v}}
				for j, c := range checks {
					if math.Abs(c[0]-c[1]) > tol {
						t.Errorf("result %d element %d = %g, want %g", j+1, i, c[0], c[1])
					}
				}
			}
			if got := at(out[0], 0); math.Abs(got-sum) > tol*3 {
				t.Errorf("sum = %g, want %g", got, sum)
			}
		})
	}
	t.Run("errors", func(t *testing.T) {
		g, h := gorgonia.NewGraph(), gorgonia.NewGraph()
		x := gorgonia.NewScalar(g, tensor.Float64, gorgonia.WithName("x"))
		u := gorgonia.NewScalar(h, tensor.Float64, gorgonia.WithName("u"))
		for _, roots := range [][]*gorgonia.Node{nil, {nil}, {x, u}} {
			if _, err := TranslateAll(roots, x); err == nil {
				t.Errorf("roots %v: no error", roots)
			}
		}
	})
}

// at reads element i of a float tensor as a float64.
func at(d *tensor.Dense, i int) float64 {
	switch v := d.Data().(type) {
	case []float64:
		return v[i]
	case []float32:
		return float64(v[i])
	case float64:
		return v
	case float32:
		return float64(v)
	}
	return math.NaN()
}
