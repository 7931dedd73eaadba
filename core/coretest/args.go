package coretest

import (
	"math"
	"math/rand"

	"github.com/bulkad/bulkad/core"
	"gorgonia.org/tensor"
)

// RandomArgs returns one random argument per parameter of p (see the package
// documentation for the ranges).
func RandomArgs(rng *rand.Rand, p *core.Program) map[string]*tensor.Dense {
	args := map[string]*tensor.Dense{}
	for _, v := range p.Params {
		t := v.Type()
		n := t.Shape.Size()
		var back interface{}
		switch t.Dtype {
		case core.Float64:
			s := make([]float64, n)
			for i := range s {
				s[i] = rng.Float64()*4 - 2
			}
			back = s
		case core.Float32:
			s := make([]float32, n)
			for i := range s {
				s[i] = float32(rng.Float64()*4 - 2)
			}
			back = s
		case core.Int64:
			s := make([]int64, n)
			for i := range s {
				s[i] = int64(rng.Intn(8) - 1)
			}
			back = s
		default:
			s := make([]bool, n)
			for i := range s {
				s[i] = rng.Intn(2) == 0
			}
			back = s
		}
		args[v.Name] = tensor.New(tensor.WithShape([]int(t.Shape.Clone())...), tensor.WithBacking(back))
	}
	return args
}

// PoisonArgs makes about a tenth of the float argument elements +Inf, -Inf or NaN.
func PoisonArgs(rng *rand.Rand, p *core.Program, args map[string]*tensor.Dense) {
	special := []float64{math.Inf(1), math.Inf(-1), math.NaN()}
	for _, v := range p.Params {
		switch d := args[v.Name].Data().(type) {
		case []float64:
			for i := range d {
				if rng.Intn(10) == 0 {
					d[i] = special[rng.Intn(3)]
				}
			}
		case []float32:
			for i := range d {
				if rng.Intn(10) == 0 {
					d[i] = float32(special[rng.Intn(3)])
				}
			}
		}
	}
}
