package raise

import (
	"math"
	"math/rand"
	"strings"
	"testing"

	"github.com/bulkad/bulkad/core"
	kern "github.com/bulkad/bulkad/kernel"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// parseProg parses a program in the core syntax or fails the test.
func parseProg(t *testing.T, src string) *core.Program {
	t.Helper()
	p, err := core.ParseProgram(src)
	if err != nil {
		t.Fatalf("parse %s: %v", src, err)
	}
	return p
}

// TestCoarseNodes: a coarse raise adds one plan node and one node per result, whatever the
// program's size, and the results are fresh values at every run (a value kept from one run
// is not changed by the next). Expected values by hand: x·2 and Σx.
func TestCoarseNodes(t *testing.T) {
	g := gorgonia.NewGraph()
	x := input(t, g, "x", []int{3}, []float64{1, 2, 3})
	p := parseProg(t, "fn (x : [3] f64) => let a = x + x in let b = exp a in let c = log b in (c, sumOuter c)")
	before := len(g.AllNodes())
	outs, err := RaiseWith(g, p, map[string]*gorgonia.Node{"x": x}, Options{Coarse: true, FreshResults: true})
	if err != nil {
		t.Fatal(err)
	}
	if added := len(g.AllNodes()) - before; added != 3 {
		t.Errorf("coarse raise added %d nodes, want 3 (the plan and two results)", added)
	}
	var kept []float64
	m := gorgonia.NewTapeMachine(g)
	defer m.Close()
	for run := 0; run < 3; run++ {
		xv := []float64{1 + float64(run), 2, 3}
		if err := gorgonia.Let(x, tensor.New(tensor.WithShape(3), tensor.WithBacking(xv))); err != nil {
			t.Fatal(err)
		}
		if err := m.RunAll(); err != nil {
			t.Fatal(err)
		}
		got := outs[0].Value().Data().([]float64)
		for i, v := range xv {
			if math.Abs(got[i]-2*v) > 1e-12 {
				t.Errorf("run %d: c[%d] = %v, want %v", run, i, got[i], 2*v)
			}
		}
		if s := outs[1].Value().Data().(float64); math.Abs(s-2*(xv[0]+5)) > 1e-12 {
			t.Errorf("run %d: Σc = %v, want %v", run, s, 2*(xv[0]+5))
		}
		if run == 0 {
			kept = got
		}
		m.Reset()
	}
	if kept[0] != 2 {
		t.Errorf("the value kept from run 0 changed to %v (want 2): results must be fresh per run", kept[0])
	}
}

// TestCoarseTapeAndSlots: a forward program raised with Tape keeps its lets in the plan node;
// a second program whose lets are bound to those slots reads them there (its plan node's
// operands include the forward plan node, and it does not recompute them), and the adapter
// contract (Program, ParamOperands, PackedLets) describes it.
func TestCoarseTapeAndSlots(t *testing.T) {
	g := gorgonia.NewGraph()
	x := input(t, g, "x", []int{4}, []float64{0.5, -1, 2, 0})
	fwd := parseProg(t, "fn (x : [4] f64) => let h = tanh x in let y = h * h in y")
	outs, err := RaiseWith(g, fwd, map[string]*gorgonia.Node{"x": x}, Options{Coarse: true, FreshResults: true, Tape: true})
	if err != nil {
		t.Fatal(err)
	}
	fk := kidsOf(t, g, outs[0])
	if len(fk) != 1 {
		t.Fatalf("the result node has %d operands, want 1 (the plan node)", len(fk))
	}
	plan := fk[0]
	op, ok := plan.Op().(*planOp)
	if !ok {
		t.Fatalf("the result reads %T, want *planOp", plan.Op())
	}
	lets := op.PackedLets()
	hOff, ok := lets["h"]
	if !ok {
		t.Fatalf("packed lets %v lack h", lets)
	}
	// The "gradient": (1 − h²)·2h, reading h from the forward plan node.
	grad := parseProg(t, "fn (x : [4] f64) => let h = tanh x in (reshape [4] (replicate 4 1.0) - h * h) * (h + h)")
	before := len(g.AllNodes())
	gouts, err := RaiseWith(g, grad, map[string]*gorgonia.Node{"x": x}, Options{Coarse: true, FreshResults: true,
		Slots: map[string]Slot{"h": {Node: plan, Offset: hOff}}})
	if err != nil {
		t.Fatal(err)
	}
	if added := len(g.AllNodes()) - before; added != 2 {
		t.Errorf("the second raise added %d nodes, want 2", added)
	}
	gplan := kidsOf(t, g, gouts[0])[0]
	gop := gplan.Op().(*planOp)
	reads := false
	for _, k := range kidsOf(t, g, gplan) {
		reads = reads || k == plan
	}
	if !reads {
		t.Error("the second plan does not read the forward plan node")
	}
	if strings.Contains(gop.Program().String(), "tanh") {
		t.Errorf("the second plan recomputes tanh: %v", gop.Program())
	}
	m := gorgonia.NewTapeMachine(g)
	defer m.Close()
	if err := m.RunAll(); err != nil {
		t.Fatal(err)
	}
	got := gouts[0].Value().Data().([]float64)
	for i, v := range []float64{0.5, -1, 2, 0} {
		h := math.Tanh(v)
		if want := (1 - h*h) * 2 * h; math.Abs(got[i]-want) > 1e-14 {
			t.Errorf("g[%d] = %v, want %v", i, got[i], want)
		}
	}
}

// TestCoarseFallbackAndErrors: results of two dtypes are raised per operation (correctly);
// with slots that is an error, as are slots without coarse raising and a slot out of range;
// on error the graph is unchanged.
func TestCoarseFallbackAndErrors(t *testing.T) {
	g := gorgonia.NewGraph()
	x := input(t, g, "x", []int{3}, []float64{1, -2, 3})
	mixed := parseProg(t, "fn (x : [3] f64) => (x + x, argmaxOuter x)")
	outs, err := RaiseWith(g, mixed, map[string]*gorgonia.Node{"x": x}, Options{Coarse: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, isPart := outs[0].Op().(*partOp); isPart {
		t.Error("results of two dtypes were raised coarsely")
	}
	runMachine(t, g, mixed, 1, func(int) {
		if v := outs[1].Value().Data().(int64); v != 2 {
			t.Errorf("argmax = %d, want 2", v)
		}
	})
	p := parseProg(t, "fn (x : [3] f64) => let h = exp x in h * h")
	cases := []struct {
		name string
		opt  Options
		want string
	}{
		{"slots need coarse", Options{Slots: map[string]Slot{"h": {Node: x}}}, "coarse"},
		{"slot out of range", Options{Coarse: true, Slots: map[string]Slot{"h": {Node: x, Offset: 1}}}, "no such range"},
		{"mixed with slots", Options{Coarse: true, Slots: map[string]Slot{"h": {Node: x}}}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			prog := p
			if c.name == "mixed with slots" {
				prog = parseProg(t, "fn (x : [3] f64) => let h = exp x in (h * h, argmaxOuter h)")
				c.want = "dtypes"
			}
			n := len(g.AllNodes())
			_, err := RaiseWith(g, prog, map[string]*gorgonia.Node{"x": x}, c.opt)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want one mentioning %q", err, c.want)
			}
			if len(g.AllNodes()) != n {
				t.Errorf("the failed raise left %d nodes", len(g.AllNodes())-n)
			}
		})
	}
}

// kidsOf returns a node's operands.
func kidsOf(t *testing.T, g *gorgonia.ExprGraph, n *gorgonia.Node) []*gorgonia.Node {
	t.Helper()
	var out []*gorgonia.Node
	it := g.From(n.ID())
	for it.Next() {
		out = append(out, it.Node().(*gorgonia.Node))
	}
	return out
}

// TestMatmulTransposeThroughLet: a matrix product of tr (t) with t a let bound to tr w (the
// gradient of a layer y = x·wᵀ) reads w itself, with no transposition step in the plan, and
// computes what core's evaluator does.
func TestMatmulTransposeThroughLet(t *testing.T) {
	p := parseProg(t, "fn (x : [5,3] f64, w : [4,3] f64) => let t = tr [1,0] w in let y = matmul x t in matmul y (tr [1,0] t)")
	r := rand.New(rand.NewSource(3))
	args := map[string]*tensor.Dense{"x": randDense(r, "f64", 5, 3), "w": randDense(r, "f64", 4, 3)}
	outs := raisedEqualsEvalWith(t, p, args, 1e-12, Options{Coarse: true, FreshResults: true})
	var plans int
	for _, n := range outs[0].Graph().AllNodes() {
		op, ok := n.Op().(*planOp)
		if !ok {
			continue
		}
		plans++
		kp := op.Plan()
		for i := 0; i < kp.Steps(); i++ {
			if _, ok := kp.StepKernel(i).(kern.Transpose); ok {
				t.Errorf("step %d transposes: %v", i, kp.StepTerm(i))
			}
		}
	}
	if plans != 1 {
		t.Fatalf("%d plan nodes, want 1", plans)
	}
}

// TestCoarsePartViews: the part nodes of a plan whose packed value is mostly its results
// view their ranges instead of copying them (planOp.viewResults), except results that share
// a range (a result returned twice), which stay copies: changing one part's value in place
// changes no other part, and a value kept from one run is not changed by the next (the
// packed value is fresh per run). Expected values by hand: x², eˣ.
func TestCoarsePartViews(t *testing.T) {
	g := gorgonia.NewGraph()
	x := input(t, g, "x", []int{3}, []float64{1, 2, 3})
	p := parseProg(t, "fn (x : [3] f64) => let a = x * x in (a, exp x, a)")
	outs, err := RaiseWith(g, p, map[string]*gorgonia.Node{"x": x}, Options{Coarse: true, FreshResults: true})
	if err != nil {
		t.Fatal(err)
	}
	m := gorgonia.NewTapeMachine(g)
	defer m.Close()
	if err := m.RunAll(); err != nil {
		t.Fatal(err)
	}
	pn := kidsOf(t, g, outs[0])
	if len(pn) != 1 {
		t.Fatalf("part node reads %d nodes, want the plan node", len(pn))
	}
	op := pn[0].Op().(*planOp)
	if op.results[0] != op.results[2] || op.results[1] == op.results[0] {
		t.Fatalf("result offsets %v: want the two results a at one range and exp x at another", op.results)
	}
	if !op.fresh || op.views[0] || op.views[2] || !op.views[1] {
		t.Fatalf("fresh %v, views %v: want a fresh packed value, exp x viewed and both a copied", op.fresh, op.views)
	}
	packed := pn[0].Value().Data().([]float64)
	e := outs[1].Value().Data().([]float64)
	if &e[0] != &packed[op.results[1]] {
		t.Error("the part exp x is not a view of the packed value")
	}
	a0, a2 := outs[0].Value().Data().([]float64), outs[2].Value().Data().([]float64)
	if &a0[0] == &packed[op.results[0]] || &a0[0] == &a2[0] {
		t.Error("a part whose range another result shares is not a copy")
	}
	a0[1] = -1 // an op run in place on one part
	if a2[1] != 4 || packed[op.results[0]+1] != 4 {
		t.Errorf("changing one part of a in place changed the other (%v) or the packed value (%v)", a2[1], packed[op.results[0]+1])
	}
	kept := append([]float64(nil), e...)
	m.Reset()
	if err := gorgonia.Let(x, tensor.New(tensor.WithShape(3), tensor.WithBacking([]float64{0, 0, 0}))); err != nil {
		t.Fatal(err)
	}
	if err := m.RunAll(); err != nil {
		t.Fatal(err)
	}
	for i, v := range []float64{1, 2, 3} {
		if e[i] != kept[i] || math.Abs(e[i]-math.Exp(v)) > 1e-12 {
			t.Errorf("kept eˣ[%d] = %v after the next run, want %v", i, e[i], math.Exp(v))
		}
		if got := outs[1].Value().Data().([]float64)[i]; got != 1 {
			t.Errorf("run 2: eˣ[%d] = %v, want 1", i, got)
		}
	}
}
