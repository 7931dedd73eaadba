package ad

import (
	"math"
	"math/rand"
	"testing"

	"github.com/bulkad/bulkad/core"
	"github.com/bulkad/bulkad/core/coretest"
	"github.com/bulkad/bulkad/internal/testutil"
	"github.com/bulkad/bulkad/kernel"
	"gorgonia.org/tensor"
)

// must is the artifact of a Grad or VJP call, failing t on an error: a := must(t)(Grad(p)).
func must(t testing.TB) func(a *Artifact, err error) *Artifact {
	return func(a *Artifact, err error) *Artifact {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
}

// mustProg is coretest.MustProgram.
func mustProg(t testing.TB, b *core.Builder, params []*core.Var, body core.Term) *core.Program {
	return coretest.MustProgram(t, b, params, body)
}

// vals makes a value of type ty from float64s.
func vals(ty core.Type, xs ...float64) *value {
	v := newValue(ty)
	copy(v.f, xs)
	v.round()
	return v
}

func dense(v *value) *tensor.Dense { return v.toDense() }

// denseToF64 is d's elements as float64s (panicking on data testutil.DenseFloats does not read).
func denseToF64(d *tensor.Dense) []float64 {
	out, err := testutil.DenseFloats(d)
	if err != nil {
		panic(err)
	}
	return out
}

// evalPrimal evaluates p (one result) with core.Eval.
func evalPrimal(p *core.Program, args map[string]*value) (*value, error) {
	outs, err := evalProgram(p, args)
	if err != nil {
		return nil, err
	}
	return outs[0], nil
}

// runArtifact runs a with the given argument values on package kernel (the primal values and
// the concrete reverse pass it is compared with use core.Eval) and returns value and gradients
// as float64s.
func runArtifact(t testing.TB, a *Artifact, args map[string]*value) ([]float64, map[string][]float64) {
	t.Helper()
	da := map[string]*tensor.Dense{}
	for k, v := range args {
		da[k] = dense(v)
	}
	val, grads, err := a.RunWith(kernel.EvalTuple, da)
	if err != nil {
		t.Fatalf("run: %v\n%s", err, a)
	}
	g := map[string][]float64{}
	for k, v := range grads {
		g[k] = denseToF64(v)
	}
	return denseToF64(val), g
}

// fdGrad computes the gradient of <dret, p(args)> by central differences in float64, for the
// float parameters in wrt.
func fdGrad(t testing.TB, p *core.Program, args map[string]*value, dret *value, wrt []string) map[string][]float64 {
	t.Helper()
	obj := func() float64 {
		v, err := evalPrimal(p, args)
		if err != nil {
			t.Fatalf("eval: %v", err)
		}
		s := 0.0
		for k, x := range v.f {
			c := 1.0
			if dret != nil {
				c = dret.f[k]
			}
			s += c * x
		}
		return s
	}
	out := map[string][]float64{}
	for _, name := range wrt {
		a := args[name]
		g := make([]float64, len(a.f))
		for k := range a.f {
			h := 1e-6 * math.Max(1, math.Abs(a.f[k]))
			g[k] = testutil.CentralDiff(a.f, k, h, obj)
		}
		out[name] = g
	}
	return out
}

// relErr is |a-b| / max(1, |a|, |b|)-style relative error with an absolute floor.
func relErr(a, b float64) float64 {
	if a == b || (math.IsNaN(a) && math.IsNaN(b)) {
		return 0
	}
	if math.IsNaN(a) || math.IsNaN(b) || math.IsInf(a, 0) || math.IsInf(b, 0) {
		return math.Inf(1)
	}
	d := math.Abs(a - b)
	s := math.Max(math.Abs(a), math.Abs(b))
	if s < 1 {
		return d
	}
	return d / s
}

func closeSlices(a, b []float64, tol float64) (int, bool) {
	if len(a) != len(b) {
		return -1, false
	}
	for k := range a {
		if math.IsNaN(a[k]) && math.IsNaN(b[k]) {
			continue
		}
		if relErr(a[k], b[k]) > tol {
			return k, false
		}
	}
	return 0, true
}

// randomArgs draws every parameter: floats uniformly in [lo, hi], away from 0 by at least
// minAbs; ints in [0, 4); bools at random.
func randomArgs(rng *rand.Rand, p *core.Program, lo, hi, minAbs float64) map[string]*value {
	args := map[string]*value{}
	for _, v := range p.Params {
		x := newValue(v.Type())
		for k := range x.f {
			for {
				a := lo + (hi-lo)*rng.Float64()
				if math.Abs(a) >= minAbs {
					x.f[k] = a
					break
				}
			}
		}
		for k := range x.i {
			x.i[k] = int64(rng.Intn(4))
		}
		for k := range x.b {
			x.b[k] = rng.Intn(2) == 0
		}
		x.round()
		args[v.Name] = x
	}
	return args
}

func newRng(seed int64) *rand.Rand { return rand.New(rand.NewSource(seed)) }

func sinf(x float64) float64 { return math.Sin(x) }
func cosf(x float64) float64 { return math.Cos(x) }
