package tests

import (
	"fmt"
	"math"
	"math/rand"
	"testing"

	"github.com/bulkad/bulkad/ad"
	"github.com/bulkad/bulkad/core"
	"github.com/bulkad/bulkad/core/tensors"
	kern "github.com/bulkad/bulkad/kernel"
	"github.com/bulkad/bulkad/lower"
	"github.com/bulkad/bulkad/raise"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// TestSumAround: sums over the axes around a middle block — sumOuter (reshape (tr perm z)),
// as lower.Sum writes a batch norm's per-channel sums — raised coarsely equal core.Eval bit for
// bit, and run as kernel.SumAround with no transposition step exactly when the summed and the
// kept axes keep z's order and the kept ones lie together; the batch norm's forward and
// gradient (lower.BatchNormTrain's VJP, image and matrix shapes, both float dtypes) likewise,
// with every per-channel sum of the forward a SumAround.
func TestSumAround(t *testing.T) {
	type direct struct {
		z     core.Shape
		perm  []int
		lead  int // the reshape's leading (summed) dimension
		fused bool
	}
	cases := []direct{
		{core.Shape{3, 4, 5}, []int{0, 2, 1}, 15, true},       // [b, c, h·w] → [c]
		{core.Shape{2, 3, 4, 5}, []int{0, 3, 1, 2}, 10, true}, // two kept axes together
		{core.Shape{6, 4, 1}, []int{0, 2, 1}, 6, true},        // a unit axis: column sums
		{core.Shape{1, 4, 7}, []int{0, 2, 1}, 7, true},        // one image: row sums
		{core.Shape{3, 4, 5}, []int{2, 0, 1}, 15, false},      // summed axes out of order
		{core.Shape{2, 3, 4, 5}, []int{0, 2, 1, 3}, 8, false}, // kept axes apart
		{core.Shape{3, 4, 5}, []int{1, 0, 2}, 4, false},       // kept axes out of order
	}
	r := rand.New(rand.NewSource(5))
	for _, c := range cases {
		for _, dt := range []core.Dtype{core.Float64, core.Float32} {
			what := fmt.Sprintf("z %v perm %v %v", c.z, c.perm, dt)
			z, _ := core.NewVar("z", core.Type{Shape: c.z, Dtype: dt})
			var b core.Builder
			tr := b.Transpose(c.perm, z)
			s := b.SumOuter(b.Reshape(core.Shape{c.lead, c.z.Size() / c.lead}, tr))
			if b.Err() != nil {
				t.Fatal(b.Err())
			}
			p, err := core.NewProgram([]*core.Var{z}, s)
			if err != nil {
				t.Fatal(err)
			}
			arounds, transposes := checkCoarseBits(t, r, what, p)
			if c.fused && (arounds != 1 || transposes != 0) || !c.fused && arounds != 0 {
				t.Errorf("%s: %d SumAround and %d Transpose steps, want fused=%v", what, arounds, transposes, c.fused)
			}
		}
	}
	for _, sh := range []core.Shape{{4, 3, 5, 6}, {2, 3, 4}, {6, 4}, {1, 2, 3, 3}} {
		for _, dt := range []core.Dtype{core.Float64, core.Float32} {
			what := fmt.Sprintf("batch norm %v %v", sh, dt)
			x, _ := core.NewVar("x", core.Type{Shape: sh, Dtype: dt})
			y, err := lower.BatchNormTrain(x, 1e-5)
			if err != nil {
				t.Fatal(err)
			}
			p, err := core.NewProgram([]*core.Var{x}, y)
			if err != nil {
				t.Fatal(err)
			}
			art, err := ad.VJP(p, "x")
			if err != nil {
				t.Fatal(err)
			}
			arounds, _ := checkCoarseBits(t, r, what, art.Program())
			if arounds < 2 {
				t.Errorf("%s: %d SumAround steps (or fused sums), want the forward's two per-channel sums at least", what, arounds)
			}
		}
	}
}

// checkCoarseBits raises p coarsely on random arguments, runs it on a TapeMachine, compares
// every result with core.Eval's bit for bit and counts the plan's SumAround steps (with the
// sums of fused trees, kern.Fused.Sums: the same reduction computing its operand) and
// Transpose steps.
func checkCoarseBits(t *testing.T, r *rand.Rand, what string, p *core.Program) (arounds, transposes int) {
	t.Helper()
	g := coarseSameBits(t, r, what, p)
	arounds = planSteps(g, func(k kern.Kernel) bool {
		f, fused := k.(*kern.Fused)
		_, ok := k.(kern.SumAround)
		return ok || fused && f.Sums()
	})
	transposes = planSteps(g, func(k kern.Kernel) bool { _, ok := k.(kern.Transpose); return ok })
	return arounds, transposes
}

// coarseSameBits raises p coarsely on random arguments drawn from r, runs it on a
// TapeMachine and fails unless every result equals core.Eval's bit for bit; it returns the
// graph.
func coarseSameBits(t *testing.T, r *rand.Rand, what string, p *core.Program) *G.ExprGraph {
	t.Helper()
	args := randArgs(r, p)
	want, err := tensors.EvalTuple(p, args)
	if err != nil {
		t.Fatal(err)
	}
	return raisedSameBits(t, what, p, args, want, raise.Options{Coarse: true})
}

// randArgs draws a random array for each parameter of p.
func randArgs(r *rand.Rand, p *core.Program) map[string]*tensor.Dense {
	args := map[string]*tensor.Dense{}
	for _, v := range p.Params {
		args[v.Name] = randFloats(r, v.Type().Dtype, v.Type().Shape)
	}
	return args
}

// planSteps counts the steps of g's plan nodes whose kernel is holds for.
func planSteps(g *G.ExprGraph, is func(kern.Kernel) bool) int {
	n := 0
	for _, node := range g.AllNodes() {
		if op, ok := node.Op().(interface{ Plan() *kern.Plan }); ok {
			kp := op.Plan()
			for i := 0; i < kp.Steps(); i++ {
				if is(kp.StepKernel(i)) {
					n++
				}
			}
		}
	}
	return n
}

// indexVars are n int64 index variables i0 … i(n−1).
func indexVars(n int) []*core.Var {
	iv := make([]*core.Var, n)
	for j := range iv {
		iv[j], _ = core.NewVar(fmt.Sprintf("i%d", j), core.Scalar(core.Int64))
	}
	return iv
}

// raisedSameBits raises p with opt into a new graph whose inputs hold args, runs it once on a
// TapeMachine and fails unless every result equals want (core.Eval's) bit for bit; it returns
// the graph for the caller to inspect.
func raisedSameBits(t *testing.T, what string, p *core.Program, args map[string]*tensor.Dense, want []*tensor.Dense, opt raise.Options) *G.ExprGraph {
	t.Helper()
	g, outs := coarseRun(t, what, p, args, opt)
	for i, n := range outs {
		got, w := valuesOf(n.Value()), valuesOf(want[i])
		for k := range w {
			if math.Float64bits(got[k]) != math.Float64bits(w[k]) {
				t.Fatalf("%s: result %d element %d = %v, core.Eval %v", what, i, k, got[k], w[k])
			}
		}
	}
	return g
}
