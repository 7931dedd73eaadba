package raise

import (
	"math"
	"math/rand"
	"testing"

	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/bulkad/bulkad/core"
	"github.com/bulkad/bulkad/core/tensors"
	kern "github.com/bulkad/bulkad/kernel"
	"github.com/bulkad/bulkad/lower"
)

// TestConcatSum: a sum of gathers that tiles one axis (lower.Concat) is raised as one concat
// op, per operation and coarsely (a kern.ConcatAxis step), and its values on a TapeMachine
// are core's evaluator's bit for bit (−0 becoming +0 as the sum makes it, NaN and ±Inf kept);
// sums of gathers that do not tile the axis (overlapping, leaving a gap) or that add another
// term are raised as before, with the same values.
func TestConcatSum(t *testing.T) {
	gatherAt := func(b *core.Builder, sh core.Shape, x core.Term, axis, off int) core.Term {
		n := len(sh)
		vs := make([]*core.Var, n)
		out := make([]core.Term, n)
		for i := range vs {
			vs[i] = b.Var(string(rune('i'+i)), core.Type{Dtype: core.Int64})
			out[i] = vs[i]
		}
		out[axis] = b.Add(vs[axis], core.ScalarI(int64(-off)))
		return b.Gather(sh, x, b.IndexFn(vs, out...))
	}
	cases := []struct {
		name   string
		dt     core.Dtype
		shapes [][]int
		body   func(b *core.Builder, xs []core.Term) (core.Term, error)
		concat bool
	}{
		{"channels, f64", core.Float64, [][]int{{2, 3, 2, 2}, {2, 1, 2, 2}, {2, 4, 2, 2}},
			func(_ *core.Builder, xs []core.Term) (core.Term, error) { return lower.Concat(1, xs...) }, true},
		{"channels, f32", core.Float32, [][]int{{2, 3, 2, 2}, {2, 5, 2, 2}},
			func(_ *core.Builder, xs []core.Term) (core.Term, error) { return lower.Concat(1, xs...) }, true},
		{"last axis, i64", core.Int64, [][]int{{3, 2}, {3, 4}},
			func(_ *core.Builder, xs []core.Term) (core.Term, error) { return lower.Concat(1, xs...) }, true},
		{"operands in reverse order", core.Float64, [][]int{{2, 3}, {2, 2}},
			func(b *core.Builder, xs []core.Term) (core.Term, error) {
				sh := core.Shape{2, 5}
				return b.Add(gatherAt(b, sh, xs[1], 1, 3), gatherAt(b, sh, xs[0], 1, 0)), b.Err()
			}, true},
		{"overlapping", core.Float64, [][]int{{2, 3}, {2, 3}},
			func(b *core.Builder, xs []core.Term) (core.Term, error) {
				sh := core.Shape{2, 5}
				return b.Add(gatherAt(b, sh, xs[0], 1, 0), gatherAt(b, sh, xs[1], 1, 2)), b.Err()
			}, false},
		{"a gap", core.Float64, [][]int{{2, 2}, {2, 2}},
			func(b *core.Builder, xs []core.Term) (core.Term, error) {
				sh := core.Shape{2, 5}
				return b.Add(gatherAt(b, sh, xs[0], 1, 0), gatherAt(b, sh, xs[1], 1, 3)), b.Err()
			}, false},
		{"another term", core.Float64, [][]int{{2, 2}, {2, 3}, {2, 5}},
			func(b *core.Builder, xs []core.Term) (core.Term, error) {
				sh := core.Shape{2, 5}
				return b.Add(b.Add(gatherAt(b, sh, xs[0], 1, 0), xs[2]), gatherAt(b, sh, xs[1], 1, 2)), b.Err()
			}, false},
	}
	rng := rand.New(rand.NewSource(9))
	for _, c := range cases {
		for _, coarse := range []bool{false, true} {
			var b core.Builder
			params := make([]*core.Var, len(c.shapes))
			xs := make([]core.Term, len(c.shapes))
			args := map[string]*tensor.Dense{}
			for i, sh := range c.shapes {
				params[i] = b.Var(string(rune('a'+i)), core.Type{Shape: sh, Dtype: c.dt})
				xs[i] = params[i]
				args[params[i].Name] = specialDense(rng, c.dt, sh)
			}
			body, err := c.body(&b, xs)
			if err != nil {
				t.Fatal(err)
			}
			p, err := core.NewProgram(params, body)
			if err != nil {
				t.Fatal(err)
			}
			want, err := tensors.EvalTuple(p, args)
			if err != nil {
				t.Fatal(err)
			}
			g := gorgonia.NewGraph()
			bind := map[string]*gorgonia.Node{}
			for _, v := range params {
				bind[v.Name] = inputNode(t, g, v.Name, v.Type().Shape, args[v.Name])
			}
			res := runWith(t, g, p, bind, Options{Coarse: coarse})
			if msg := compareScaled(values(t, res[0]), want[0].Data(), 0); msg != "" || !sameSigns(values(t, res[0]), want[0].Data()) {
				t.Errorf("%s (coarse %v): %s (or a zero's sign differs)", c.name, coarse, msg)
			}
			if got := hasConcat(g); got != c.concat {
				t.Errorf("%s (coarse %v): planned as a concatenation %v, want %v", c.name, coarse, got, c.concat)
			}
		}
	}
}

// specialDense is a random tensor of dtype dt with a −0, a NaN and an infinity among its
// first elements (floats).
func specialDense(rng *rand.Rand, dt core.Dtype, sh []int) *tensor.Dense {
	n := core.Shape(sh).Size()
	switch dt {
	case core.Int64:
		v := make([]int64, n)
		for i := range v {
			v[i] = int64(rng.Intn(100) - 50)
		}
		return tensor.New(tensor.WithShape(sh...), tensor.WithBacking(v))
	case core.Float32:
		v := make([]float32, n)
		for i := range v {
			v[i] = float32(rng.NormFloat64())
		}
		copy(v, []float32{float32(math.Copysign(0, -1)), float32(math.NaN()), float32(math.Inf(-1))})
		return tensor.New(tensor.WithShape(sh...), tensor.WithBacking(v))
	}
	v := make([]float64, n)
	for i := range v {
		v[i] = rng.NormFloat64()
	}
	copy(v, []float64{math.Copysign(0, -1), math.NaN(), math.Inf(-1)})
	return tensor.New(tensor.WithShape(sh...), tensor.WithBacking(v))
}

// sameSigns reports whether two float slices have equal sign bits wherever both are zero.
func sameSigns(a, b any) bool {
	x, y := toF64(a), toF64(b)
	for i := range x {
		if x[i] == 0 && y[i] == 0 && math.Signbit(x[i]) != math.Signbit(y[i]) {
			return false
		}
	}
	return true
}

// hasConcat reports whether g holds a concat op or a plan with a ConcatAxis step.
func hasConcat(g *gorgonia.ExprGraph) bool {
	for _, n := range g.AllNodes() {
		switch op := n.Op().(type) {
		case *Op:
			if op.kind == "concat" {
				return true
			}
		case *planOp:
			kp := op.Plan()
			for i := range kp.Steps() {
				if _, ok := kp.StepKernel(i).(kern.ConcatAxis); ok {
					return true
				}
			}
		}
	}
	return false
}
