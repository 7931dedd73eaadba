package raise

import (
	"math/rand"
	"testing"

	"github.com/bulkad/bulkad/core"
	kern "github.com/bulkad/bulkad/kernel"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// TestViewReadsMaterialisedTranspose: a let bound to a transpose that is already a value of
// its own (a result, planned first) is read where it lies by a later element-wise op (a
// ReLU's mask of it), contiguously, not through the transpose's strides; a small transpose not
// yet materialised is still read through its strides, a large one (stridedRowsMin elements,
// rows that the view would read with a stride) is transposed once and read contiguously.
// Values against core.Eval.
func TestViewReadsMaterialisedTranspose(t *testing.T) {
	zero := "replicate 4 (replicate 3 (lit [] f64 [0.0]))"
	zeroL := "replicate 128 (replicate 128 (lit [] f64 [0.0]))"
	cases := []struct {
		name, src  string
		rows, cols int
		contiguous bool
	}{
		{"transpose a result, planned first", "fn (x : [3,4] f64) => let t = tr [1,0] x in (t, cast f64 (t >= " + zero + ") * t)", 3, 4, true},
		{"transpose only read by the mask", "fn (x : [3,4] f64) => let t = tr [1,0] x in cast f64 (t >= " + zero + ") * t", 3, 4, false},
		{"large transpose only read by the mask", "fn (x : [128,128] f64) => let t = tr [1,0] x in cast f64 (t >= " + zeroL + ") * t", 128, 128, true},
	}
	r := rand.New(rand.NewSource(8))
	for _, c := range cases {
		p, err := core.ParseProgram(c.src)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		args := map[string]*tensor.Dense{"x": tensor.New(tensor.WithShape(c.rows, c.cols), tensor.WithBacking(randF(r, c.rows*c.cols)))}
		raisedEqualsEvalWith(t, p, args, 0, Options{Coarse: true})
		g := gorgonia.NewGraph()
		bind := map[string]*gorgonia.Node{"x": gorgonia.NewTensor(g, tensor.Float64, 2, gorgonia.WithShape(c.rows, c.cols), gorgonia.WithName("x"))}
		pl, err := newPlan(g, p, bind, nil)
		if err != nil {
			t.Fatal(err)
		}
		pl.coarse = true
		if err := pl.program(p, Options{Coarse: true}); err != nil {
			t.Fatal(err)
		}
		found := false
		for _, s := range pl.steps {
			if s.op == nil {
				continue
			}
			if k, ok := s.op.k.(kern.MaskMul); ok {
				found = true
				contiguous := len(k.Shape) == 1 && k.St[0][0] == 1 && k.St[2][0] == 1
				if contiguous != c.contiguous {
					t.Errorf("%s: mask kernel %+v: contiguous %v, want %v", c.name, k, contiguous, c.contiguous)
				}
			}
		}
		if !found {
			t.Errorf("%s: no mask kernel in the plan", c.name)
		}
	}
}

// TestSumProdLast: a sum along the last axis of a product (lower.Sum's sumOuter of the
// transposed product, a Gorgonia-built depthwise convolution's taps: windows times a filter
// broadcast over the rows) is one sumProdLast step, coarsely, with no product step, and
// equals core.Eval bit for bit; a let-bound transposed broadcast read by a product stays a
// view (no transposition step).
func TestSumProdLast(t *testing.T) {
	cases := []struct {
		name, src    string
		kind         string
		shapeX       []int
		shapeW       []int
		wantSteps    int
		wantTranspos int
	}{
		{"windows times a broadcast filter", "fn (x : [64,8,9] f64, w : [8,9] f64) => sumOuter (tr [2,0,1] (x * replicate 64 w))", "sumProdLast", []int{64, 8, 9}, []int{8, 9}, 1, 0},
		{"a transposed broadcast let read by a product", "fn (x : [256,8,9] f64, w : [256,8] f64) => let b = tr [1,2,0] (replicate 9 w) in x * b", "mul", []int{256, 8, 9}, []int{256, 8}, 1, 0},
	}
	r := rand.New(rand.NewSource(12))
	for _, c := range cases {
		p, err := core.ParseProgram(c.src)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		args := map[string]*tensor.Dense{
			"x": tensor.New(tensor.WithShape(c.shapeX...), tensor.WithBacking(randF(r, core.Shape(c.shapeX).Size()))),
			"w": tensor.New(tensor.WithShape(c.shapeW...), tensor.WithBacking(randF(r, core.Shape(c.shapeW).Size()))),
		}
		raisedEqualsEvalWith(t, p, args, 0, Options{Coarse: true})
		kinds, _ := windowKinds(t, p, true, 0)
		if kinds[c.kind] != c.wantSteps || kinds["tr"] != c.wantTranspos || c.kind == "sumProdLast" && kinds["mul"] != 0 {
			t.Errorf("%s: steps %v, want %d %s and %d transpositions", c.name, kinds, c.wantSteps, c.kind, c.wantTranspos)
		}
	}
}
