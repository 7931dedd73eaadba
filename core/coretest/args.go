package coretest

import (
	"math"
	"math/rand"
	"sort"

	"github.com/bulkad/bulkad/core"
	"gorgonia.org/tensor"
)

// RandomArgs returns one random argument per parameter of p (see the package
// documentation for the ranges).
func RandomArgs(rng *rand.Rand, p *core.Program) map[string]*tensor.Dense {
	args := map[string]*tensor.Dense{}
	for _, v := range p.Params {
		args[v.Name] = randomArray(rng, v.Type(), -1, 8, false)
	}
	return args
}

// RandomEnv draws a value for every variable of types: floats in [-2, 2] (with nonFinite, a
// fifth of them are +Inf, -Inf or NaN), i64 in [-2, 6] (some indices out of bounds on purpose),
// bools at random. The variables are drawn in the order of types' iteration.
func RandomEnv(rng *rand.Rand, types map[string]core.Type, nonFinite bool) map[string]*tensor.Dense {
	names := make([]string, 0, len(types))
	for name := range types {
		names = append(names, name)
	}
	sort.Strings(names) // draw in a fixed order: a seed gives one environment
	env := map[string]*tensor.Dense{}
	for _, name := range names {
		env[name] = randomArray(rng, types[name], -2, 9, nonFinite)
	}
	return env
}

// randomArray draws an array of type t: floats in [-2, 2] (with nonFinite, a fifth of them
// +Inf, -Inf or NaN), integers lo, lo+1, …, lo+n-1, bools at random.
func randomArray(rng *rand.Rand, t core.Type, lo, n int, nonFinite bool) *tensor.Dense {
	special := []float64{math.Inf(1), math.Inf(-1), math.NaN()}
	draw := func() float64 {
		v := rng.Float64()*4 - 2
		if nonFinite && rng.Intn(5) == 0 {
			return special[rng.Intn(3)]
		}
		return v
	}
	size := t.Shape.Size()
	var back interface{}
	switch t.Dtype {
	case core.Float64:
		s := make([]float64, size)
		for i := range s {
			s[i] = draw()
		}
		back = s
	case core.Float32:
		s := make([]float32, size)
		for i := range s {
			s[i] = float32(draw())
		}
		back = s
	case core.Int64:
		s := make([]int64, size)
		for i := range s {
			s[i] = int64(rng.Intn(n) + lo)
		}
		back = s
	default:
		s := make([]bool, size)
		for i := range s {
			s[i] = rng.Intn(2) == 0
		}
		back = s
	}
	return tensor.New(tensor.WithShape([]int(t.Shape.Clone())...), tensor.WithBacking(back))
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
