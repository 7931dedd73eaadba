package kernel

import (
	"math"
	"runtime"
	"testing"

	"github.com/bulkad/bulkad/core"
	"github.com/bulkad/bulkad/core/coretest"
	"github.com/bulkad/bulkad/core/tensors"
	"gorgonia.org/tensor"
)

var floatDtypes = []core.Dtype{core.Float64, core.Float32}

func ty(d core.Dtype, sh ...int) core.Type { return core.Type{Shape: core.Shape(sh), Dtype: d} }

// fd makes a float tensor of dtype d (values rounded to float32 for Float32).
func fd(d core.Dtype, sh []int, vals ...float64) *tensor.Dense {
	lit, err := core.NewLitF(ty(d, sh...), vals)
	if err != nil {
		panic(err)
	}
	return tensors.FromLit(lit)
}

func id(sh []int, vals ...int64) *tensor.Dense {
	return tensor.New(tensor.WithShape(sh...), tensor.WithBacking(append([]int64{}, vals...)))
}

// floats reads a float tensor as float64s.
func floats(t *testing.T, d *tensor.Dense) []float64 {
	t.Helper()
	l, err := tensors.ToLit(d)
	if err != nil || l.F == nil {
		t.Fatalf("not a float tensor: %v (%v)", d.Dtype(), err)
	}
	return l.F
}

// checkFloats compares got with want elementwise: NaN matches NaN, infinities match exactly,
// finite values within tol relative to 1+|want|.
func checkFloats(t *testing.T, what string, got, want []float64, tol float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: got %d values %v, want %d values %v", what, len(got), got, len(want), want)
	}
	for i, w := range want {
		g := got[i]
		ok := math.IsNaN(g) == math.IsNaN(w)
		if !math.IsNaN(w) {
			ok = g == w || (!math.IsInf(w, 0) && math.Abs(g-w) <= tol*(1+math.Abs(w)))
		}
		if !ok {
			t.Fatalf("%s: element %d = %v, want %v (got %v, want %v)", what, i, g, w, got, want)
		}
	}
}

// mustProg is coretest.MustProgram.
func mustProg(t testing.TB, b *core.Builder, params []*core.Var, body core.Term) *core.Program {
	return coretest.MustProgram(t, b, params, body)
}

// evalF runs p with the kernel evaluator and returns its float result.
func evalF(t *testing.T, p *core.Program, args map[string]*tensor.Dense) []float64 {
	t.Helper()
	r, err := Eval(p, args)
	if err != nil {
		t.Fatalf("Eval %s: %v", p, err)
	}
	return floats(t, r)
}

// sameBitsAcrossProcs runs run into a fresh output of n elements at GOMAXPROCS 1, 2 and 3 and
// fails unless the splits give the one-goroutine bits (the determinism of a split kernel).
func sameBitsAcrossProcs(t *testing.T, name string, n int, run func(out []float32) error) {
	t.Helper()
	var first []float32
	for _, procs := range []int{1, 2, 3} {
		prev := runtime.GOMAXPROCS(procs)
		got := make([]float32, n)
		err := run(got)
		runtime.GOMAXPROCS(prev)
		if err != nil {
			t.Fatal(err)
		}
		if procs == 1 {
			first = got
			continue
		}
		for i := range got {
			if math.Float32bits(got[i]) != math.Float32bits(first[i]) {
				t.Fatalf("%s at %d goroutines: element %d = %v, one goroutine %v", name, procs, i, got[i], first[i])
			}
		}
	}
}
