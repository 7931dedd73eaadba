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
)

// TestUniformLiteralOperand: a replicated literal whose elements are all equal to the bit
// (the lowering's [4] block of 1.0 in 1 − x) is read as a scalar, so the element-wise kernel
// runs one row over the whole array; a literal with different elements, −0 beside +0
// included, keeps its strides; the values are core's evaluator's bit for bit either way.
func TestUniformLiteralOperand(t *testing.T) {
	negz := math.Copysign(0, -1)
	cases := []struct {
		name    string
		lit     []float64
		dt      core.Dtype
		uniform bool
	}{
		{"ones, f32", []float64{1, 1, 1, 1}, core.Float32, true},
		{"ones, f64", []float64{1, 1, 1, 1}, core.Float64, true},
		{"different", []float64{1, 1, 2, 1}, core.Float64, false},
		{"signed zeros", []float64{0, negz, 0, 0}, core.Float64, false},
	}
	rng := rand.New(rand.NewSource(2))
	for _, c := range cases {
		var b core.Builder
		x := b.Var("x", core.Type{Shape: core.Shape{3, 5, 4}, Dtype: c.dt})
		l, err := core.NewLitF(core.Type{Shape: core.Shape{4}, Dtype: c.dt}, c.lit)
		if err != nil {
			t.Fatal(err)
		}
		body := b.Sub(b.Replicate(3, b.Replicate(5, l)), x)
		p, err := core.NewProgram([]*core.Var{x}, body)
		if err != nil || b.Err() != nil {
			t.Fatal(err, b.Err())
		}
		args := map[string]*tensor.Dense{"x": specialDense(rng, c.dt, []int{3, 5, 4})}
		want, err := tensors.EvalTuple(p, args)
		if err != nil {
			t.Fatal(err)
		}
		for _, coarse := range []bool{false, true} {
			g := gorgonia.NewGraph()
			res := runWith(t, g, p, map[string]*gorgonia.Node{"x": inputNode(t, g, "x", []int{3, 5, 4}, args["x"])}, Options{Coarse: coarse})
			if msg := compareScaled(values(t, res[0]), want[0].Data(), 0); msg != "" || !sameSigns(values(t, res[0]), want[0].Data()) {
				t.Errorf("%s (coarse %v): %s (or a zero's sign differs)", c.name, coarse, msg)
			}
			sb, ok := stridedKernel(g)
			if !ok {
				t.Fatalf("%s (coarse %v): no strided element-wise kernel", c.name, coarse)
			}
			scalar := len(sb.Shape) == 1 && sb.XS[0] == 0
			if scalar != c.uniform {
				t.Errorf("%s (coarse %v): kernel %+v reads the literal as a scalar: %v, want %v", c.name, coarse, sb, scalar, c.uniform)
			}
		}
	}
}

// stridedKernel returns the StridedBinary kernel of g's raised op or plan.
func stridedKernel(g *gorgonia.ExprGraph) (kern.StridedBinary, bool) {
	for _, n := range g.AllNodes() {
		switch op := n.Op().(type) {
		case *Op:
			if k, ok := op.k.(kern.StridedBinary); ok {
				return k, true
			}
		case *planOp:
			kp := op.Plan()
			for i := range kp.Steps() {
				if k, ok := kp.StepKernel(i).(kern.StridedBinary); ok {
					return k, true
				}
			}
		}
	}
	return kern.StridedBinary{}, false
}
