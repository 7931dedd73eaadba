package lower

import (
	"fmt"
	"math/rand"
	"testing"

	"github.com/bulkad/bulkad/ad"
	"github.com/bulkad/bulkad/core"
	"github.com/bulkad/bulkad/core/tensors"
	"github.com/bulkad/bulkad/kernel"
	"gorgonia.org/tensor"
)

// evaluator is one of the two evaluators every lowered program runs on, for one result
// (run) and for a tuple (tuple).
type evaluator struct {
	name  string
	run   func(*core.Program, map[string]*tensor.Dense) (*tensor.Dense, error)
	tuple func(*core.Program, map[string]*tensor.Dense) ([]*tensor.Dense, error)
}

// evaluators are the reference evaluator (core.Eval through package tensors) and the kernels.
func evaluators() []evaluator {
	return []evaluator{{"core.Eval", tensors.Eval, tensors.EvalTuple}, {"kernel", kernel.Eval, kernel.EvalTuple}}
}

// checkLayer checks a lowered operation build (of parameters named x0, x1, …, one per
// argument) against want, a direct loop of the test written from the operation's definition:
// the forward value in float64 and float32 by the reference evaluator and by the kernels,
// and the gradient of Σ build(args) ⊙ r (ad.Grad, both evaluators) with respect to every
// argument in diff against central differences of want's Σ y ⊙ r in float64.
func checkLayer(t *testing.T, label string, build func(xs ...core.Term) (core.Term, error), want func(args []arr) arr, args []arr, diff []bool, fdStep float64) {
	t.Helper()
	wantY := want(args)
	rng := rand.New(rand.NewSource(int64(len(label))))
	ra := randArr(rng, wantY.sh...)
	for _, d := range []core.Dtype{core.Float64, core.Float32} {
		fwdTol, gradTol := 1e-12, 1e-7
		if d == core.Float32 {
			fwdTol, gradTol = 2e-5, 1e-4
		}
		vars := make([]*core.Var, len(args))
		terms := make([]core.Term, len(args))
		env := map[string]*tensor.Dense{}
		var names []string
		for i, a := range args {
			name := fmt.Sprintf("x%d", i)
			v, err := core.NewVar(name, core.Type{Shape: a.sh, Dtype: d})
			if err != nil {
				t.Fatal(err)
			}
			vars[i], terms[i] = v, v
			env[name] = denseOf(a, d)
			if diff[i] {
				names = append(names, name)
			}
		}
		y, err := build(terms...)
		if err != nil {
			t.Fatalf("%s: %v", label, err)
		}
		if !y.Type().Shape.Equal(wantY.sh) {
			t.Fatalf("%s: shape %v, want %v", label, y.Type().Shape, wantY.sh)
		}
		fp, err := core.NewProgram(vars, y)
		if err != nil {
			t.Fatalf("%s: %v", label, err)
		}
		for _, ev := range evaluators() {
			got, err := ev.run(fp, env)
			if err != nil {
				t.Fatalf("%s %v %s: %v", label, d, ev.name, err)
			}
			near(t, fmt.Sprintf("%s %v %s forward", label, d, ev.name), floatsOf(t, got), wantY.v, fwdTol)
		}
		if len(names) == 0 {
			continue
		}
		r, _ := core.NewVar("r", core.Type{Shape: wantY.sh, Dtype: d})
		var b core.Builder
		l := b.SumOuter(b.Reshape(core.Shape{wantY.sh.Size()}, b.Mul(y, r)))
		lp, err := core.NewProgram(append(append([]*core.Var{}, vars...), r), l)
		if err != nil {
			t.Fatal(err, b.Err())
		}
		art, err := ad.Grad(lp, names...)
		if err != nil {
			t.Fatalf("%s: grad: %v", label, err)
		}
		genv := map[string]*tensor.Dense{"r": denseOf(ra, d)}
		for k, v := range env {
			genv[k] = v
		}
		for _, ev := range evaluators() {
			_, gs, err := art.RunWith(ev.tuple, genv)
			if err != nil {
				t.Fatalf("%s %v %s: %v", label, d, ev.name, err)
			}
			for i := range args {
				if !diff[i] {
					continue
				}
				fd := centralDiff(args, i, fdStep, func(as []arr) float64 { return dotArr(want(as), ra) })
				near(t, fmt.Sprintf("%s %v %s ∂x%d", label, d, ev.name, i), floatsOf(t, gs[fmt.Sprintf("x%d", i)]), fd, gradTol)
			}
		}
	}
}

// centralDiff is the central difference of loss with respect to every element of args[i].
func centralDiff(args []arr, i int, h float64, loss func([]arr) float64) []float64 {
	g := make([]float64, len(args[i].v))
	for k := range g {
		p := append([]arr{}, args...)
		m := append([]arr{}, args...)
		p[i] = arr{args[i].sh, append([]float64{}, args[i].v...)}
		m[i] = arr{args[i].sh, append([]float64{}, args[i].v...)}
		p[i].v[k] += h
		m[i].v[k] -= h
		g[k] = (loss(p) - loss(m)) / (2 * h)
	}
	return g
}

func dotArr(a, b arr) float64 {
	s := 0.0
	for i := range a.v {
		s += a.v[i] * b.v[i]
	}
	return s
}
