package ad

import (
	"fmt"
	"math"
	"testing"

	"github.com/bulkad/bulkad/core"
	"github.com/bulkad/bulkad/core/coretest"
	"github.com/bulkad/bulkad/core/tensors"
	"github.com/bulkad/bulkad/lower"
	"gorgonia.org/tensor"
)

// normalisedExpProgram is fn (x, w) => let y = op x in Σ y ⊙ w (op a softmax or log-softmax
// of lower along axis), so that the cotangent of y is the non-constant w.
func normalisedExpProgram(t *testing.T, shape core.Shape, axis int, log bool) *core.Program {
	t.Helper()
	x, err := core.NewVar("x", coretest.F64(shape...))
	if err != nil {
		t.Fatal(err)
	}
	w, err := core.NewVar("w", coretest.F64(shape...))
	if err != nil {
		t.Fatal(err)
	}
	op := lower.Softmax
	if log {
		op = lower.LogSoftmax
	}
	s, err := op(x, axis)
	if err != nil {
		t.Fatal(err)
	}
	var b core.Builder
	y, err := core.NewVar("y", s.Type())
	if err != nil {
		t.Fatal(err)
	}
	var body core.Term = b.Mul(y, w)
	for range shape {
		body = b.SumOuter(body)
	}
	return mustProg(t, &b, []*core.Var{x, w}, b.Let(y, s, body))
}

// gradientReads returns the lets the gradient (the tuple's components after the value) reads,
// transitively, without looking into the bound term of a kept let (its value comes from
// outside, as a raised gradient reads a Gorgonia node).
func gradientReads(t *testing.T, a *Artifact, kept string) []core.Term {
	t.Helper()
	lets, res := core.LetChain(a.Program().Body)
	bound := map[string]core.Term{}
	for _, l := range lets {
		bound[l.Var.Name] = l.Bound
	}
	rs := core.Results(res)
	var out []core.Term
	seen := map[string]bool{kept: true}
	var visit func(core.Term)
	visit = func(u core.Term) {
		out = append(out, u)
		for _, v := range core.FreeVars(u) {
			if b, ok := bound[v.Name]; ok && !seen[v.Name] {
				seen[v.Name] = true
				visit(b)
			}
		}
	}
	for _, r := range rs[1:] {
		visit(r)
	}
	return out
}

// TestNormalisedExpClosedForm: softmax and log-softmax along every axis take the closed-form
// derivative (the gradient reads y, the kept let, and computes no exp of anything else and
// no maximum), and the gradient matches central finite differences; the Hessian-vector
// product (differentiating the closed form again) matches finite differences of the
// gradient.
func TestNormalisedExpClosedForm(t *testing.T) {
	cases := []struct {
		shape core.Shape
		axis  int
	}{
		{core.Shape{6}, 0},
		{core.Shape{4, 5}, 0},
		{core.Shape{4, 5}, 1},
		{core.Shape{2, 3, 4}, 0},
		{core.Shape{2, 3, 4}, 1},
		{core.Shape{2, 3, 4}, 2},
	}
	for _, c := range cases {
		for _, log := range []bool{false, true} {
			name := fmt.Sprintf("softmax%v/axis%d/log=%v", c.shape, c.axis, log)
			t.Run(name, func(t *testing.T) {
				p := normalisedExpProgram(t, c.shape, c.axis, log)
				args := randomArgs(newRng(int64(len(name))), p, -3, 3, 0)
				checkGradient(t, name, p, args, checkOpts{fdTol: 1e-7})

				a := must(t)(GradWith(p, Options{Wrt: []string{"x"}, Keep: []string{"y"}}))
				for _, u := range gradientReads(t, a, "y") {
					core.PostOrder(u, func(v core.Term) {
						switch v := v.(type) {
						case *core.ArgmaxOuter:
							t.Errorf("the gradient recomputes a maximum: %v", u)
						case *core.Unary:
							if y, ok := v.X.(*core.Var); v.Op == core.OpExp && !(ok && y.Name == "y") {
								t.Errorf("the gradient computes %v", v)
							}
						}
					})
				}
				checkHVP(t, p, args, "x")
			})
		}
	}
}

// TestNormalisedExpLookalikes: terms shaped like a softmax that are not one (the sum taken
// along one axis and broadcast along another; the numerator and the summed exponential of
// different arguments) take the generic rules, and their gradients match finite differences.
func TestNormalisedExpLookalikes(t *testing.T) {
	for _, src := range []string{
		// Σ_k e[k,j] broadcast to [i,j] transposed: R[i,j] = Σ_k e[k,i].
		`fn (x : [4,4] f64, w : [4,4] f64) => let e = exp x in sumOuter (sumOuter (w * (e / tr [1,0] (replicate 4 (sumOuter e)))))`,
		// The denominator sums exp of another term.
		`fn (x : [3,4] f64, w : [3,4] f64) => sumOuter (sumOuter (w * (exp x / replicate 3 (sumOuter (exp (x * x))))))`,
		`fn (x : [3,4] f64, w : [3,4] f64) => sumOuter (sumOuter (w * (x - log (replicate 3 (sumOuter (exp (x + x)))))))`,
		// A group sum, but a log-softmax of a different shift.
		`fn (x : [3,4] f64, w : [3,4] f64) => sumOuter (sumOuter (w * (w - log (replicate 3 (sumOuter (exp x))))))`,
	} {
		p := parse(t, src)
		checkGradient(t, src, p, randomArgs(newRng(3), p, -2, 2, 0), checkOpts{fdTol: 1e-7})
	}
}

// checkHVP compares the Hessian-vector product of p along a random direction of parameter
// wrt with central differences of the gradient artifact along that direction.
func checkHVP(t *testing.T, p *core.Program, args map[string]*value, wrt string) {
	t.Helper()
	h, err := HVP(p, Options{Wrt: []string{wrt}})
	if err != nil {
		t.Fatal(err)
	}
	a := must(t)(GradWith(p, Options{Wrt: []string{wrt}}))
	x := args[wrt]
	dir := randomArgs(newRng(11), p, -1, 1, 0)[wrt]
	in := map[string]*tensor.Dense{TangentPrefix + wrt: dense(dir)}
	for k, v := range args {
		in[k] = dense(v)
	}
	outs, err := tensors.EvalTuple(h, in)
	if err != nil {
		t.Fatal(err)
	}
	got := denseToF64(outs[len(outs)-1])
	grad := func(s float64) []float64 {
		moved := map[string]*value{}
		for k, v := range args {
			moved[k] = v
		}
		xs := newValue(x.typ)
		for i := range xs.f {
			xs.f[i] = x.f[i] + s*dir.f[i]
		}
		moved[wrt] = xs
		_, g := runArtifact(t, a, moved)
		return g[wrt]
	}
	const step = 1e-5
	gp, gm := grad(step), grad(-step)
	for i := range got {
		want := (gp[i] - gm[i]) / (2 * step)
		if math.Abs(got[i]-want) > 1e-6*math.Max(1, math.Abs(want)) {
			t.Fatalf("(Hv)[%d] = %v, finite differences of the gradient %v", i, got[i], want)
		}
	}
}
