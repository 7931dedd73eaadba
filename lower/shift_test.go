package lower

import (
	"math/rand"
	"testing"

	"github.com/bulkad/bulkad/ad"
	"github.com/bulkad/bulkad/core"
	"github.com/bulkad/bulkad/core/coretest"
	"gorgonia.org/tensor"
)

// TestShiftHasNoGradient: the stable shift of softmax, log-softmax and logsumexp is under
// stopgrad, so their gradients contain no scatter (the derivative of the shift, a scatter to
// the argmax positions of a cotangent that is zero up to rounding, is not computed), and they
// still equal central differences of the function.
func TestShiftHasNoGradient(t *testing.T) {
	cases := map[string]func(x core.Term) (core.Term, error){
		"softmax":     func(x core.Term) (core.Term, error) { return Softmax(x, 1) },
		"log-softmax": func(x core.Term) (core.Term, error) { return LogSoftmax(x, 1) },
		"logsumexp":   func(x core.Term) (core.Term, error) { return LogSumExp(x, 0) },
	}
	rng := rand.New(rand.NewSource(3))
	x0, w := randArr(rng, 3, 4), randArr(rng, 3, 4)
	for name, f := range cases {
		t.Run(name, func(t *testing.T) {
			// cost(x) = Σ f(x) ⊙ w (w cut to f's shape): a scalar whose gradient mixes the rows.
			cost := func(xs ...core.Term) (core.Term, error) {
				y, err := f(xs[0])
				if err != nil {
					return nil, err
				}
				return weightedSum(y, w.v)
			}
			xv, err := core.NewVar("x0", core.Type{Shape: x0.sh, Dtype: core.Float64})
			if err != nil {
				t.Fatal(err)
			}
			body, err := cost(xv)
			if err != nil {
				t.Fatal(err)
			}
			p := coretest.MustProgram(t, nil, []*core.Var{xv}, body)
			a, err := ad.Grad(p)
			if err != nil {
				t.Fatal(err)
			}
			core.PostOrder(a.Program().Body, func(u core.Term) {
				if _, ok := u.(*core.Scatter); ok { // the transpose of the gather at the argmax
					t.Fatalf("the gradient differentiates the shift (a scatter in it):\n%v", a.Program())
				}
			})
			xd := tensor.New(tensor.WithShape([]int(x0.sh)...), tensor.WithBacking(append([]float64{}, x0.v...)))
			_, grads, err := a.Run(map[string]*tensor.Dense{"x0": xd})
			if err != nil {
				t.Fatal(err)
			}
			const h = 1e-6
			fd := make([]float64, len(x0.v))
			for i := range x0.v {
				plus, minus := x0, x0
				plus.v, minus.v = append([]float64{}, x0.v...), append([]float64{}, x0.v...)
				plus.v[i] += h
				minus.v[i] -= h
				fp, _ := evalOn(t, cost, plus)
				fm, _ := evalOn(t, cost, minus)
				fd[i] = (fp[0] - fm[0]) / (2 * h)
			}
			near(t, name+" gradient vs central differences", grads["x0"].Float64s(), fd, 1e-7)
		})
	}
}
