package onnx

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/bulkad/bulkad/ad"
	"github.com/bulkad/bulkad/core"
	"github.com/bulkad/bulkad/core/tensors"
	"github.com/bulkad/bulkad/examples/opgraphs"
	"gorgonia.org/tensor"
)

// Tests of the conventions of this front end (PyTorch's values and derivatives at kinks and
// ties) and of issue 26's silently wrong cases, at the level of the core program: the
// expected values are worked out by hand from the ONNX operator specification and from
// PyTorch's documented derivative rules (checked with torch.autograd; see
// testdata/gen_conventions.py, whose fixtures package tests compares through Gorgonia).

// lowered is a model lowered for a test, with the arguments that evaluate it.
type lowered struct {
	p    *Program
	args map[string]*tensor.Dense
	core map[string]string // ONNX name → core parameter name
}

func lowerModel(t *testing.T, opset int64, ins []tIn, nodes []tNode) (*lowered, error) {
	t.Helper()
	m, err := Decode(encModel(opset, ins, nodes, nil))
	if err != nil {
		return nil, err
	}
	p, err := Lower(m)
	if err != nil {
		return nil, err
	}
	l := &lowered{p: p, args: map[string]*tensor.Dense{}, core: map[string]string{}}
	for i, v := range p.InputVars {
		for _, in := range ins {
			if in.name == p.Inputs[i] {
				l.args[v.Name] = denseOf(core.Float64, v.Type().Shape, in.data)
			}
		}
		l.core[p.Inputs[i]] = v.Name
	}
	for i, v := range p.ParamVars {
		l.args[v.Name] = p.Values[p.Params[i]]
		l.core[p.Params[i]] = v.Name
	}
	return l, nil
}

// sumProgram is the program Σ y over the model's lets, y the first output (or, with grad,
// the gradient program's component k: the first derivative summed, whose gradient is the
// diagonal of the Hessian for an element-wise model).
func sumOf(t *testing.T, params []*core.Var, body core.Term, k int) *core.Program {
	t.Helper()
	lets, res := core.LetChain(body)
	y := core.Results(res)[k]
	var b core.Builder
	s := b.SumOuter(b.Reshape(core.Shape{y.Type().Shape.Size()}, y))
	for i := len(lets) - 1; i >= 0; i-- {
		s = b.Let(lets[i].Var, lets[i].Bound, s)
	}
	sp, err := core.NewProgram(params, s)
	if err != nil {
		t.Fatal(err, b.Err())
	}
	return sp
}

// grads returns the model's first output and the gradient of Σ y w.r.t. the ONNX names wrt
// (graph inputs or float initializers).
func (l *lowered) grads(t *testing.T, wrt ...string) ([]float64, map[string][]float64) {
	t.Helper()
	outs, err := tensors.EvalTuple(l.p.Prog, l.args)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, w := range wrt {
		names = append(names, l.core[w])
	}
	art, err := ad.Grad(sumOf(t, l.p.Prog.Params, l.p.Prog.Body, 0), names...)
	if err != nil {
		t.Fatal(err)
	}
	_, gs, err := art.Run(l.args)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]float64{}
	for i, w := range wrt {
		out[w] = opgraphs.Floats(gs[names[i]])
	}
	return opgraphs.Floats(outs[0]), out
}

// second returns the second derivative of an element-wise model y = f(x) at every element
// of the graph input x: the gradient of Σ f'(x_i) (the first gradient program's result).
func (l *lowered) second(t *testing.T, x string) []float64 {
	t.Helper()
	name := l.core[x]
	art, err := ad.Grad(sumOf(t, l.p.Prog.Params, l.p.Prog.Body, 0), name)
	if err != nil {
		t.Fatal(err)
	}
	gp := art.Program()
	art2, err := ad.Grad(sumOf(t, gp.Params, gp.Body, 1), name)
	if err != nil {
		t.Fatal(err)
	}
	_, gs, err := art2.Run(l.args)
	if err != nil {
		t.Fatal(err)
	}
	return opgraphs.Floats(gs[name])
}

// near reports whether got equals want within tol (absolute) element by element; NaN
// matches NaN, infinities match exactly.
func near(got, want []float64, tol float64) bool {
	if len(got) != len(want) {
		return false
	}
	for i := range got {
		g, w := got[i], want[i]
		switch {
		case math.IsNaN(w):
			if !math.IsNaN(g) {
				return false
			}
		case math.IsInf(w, 0):
			if g != w {
				return false
			}
		case !(math.Abs(g-w) <= tol):
			return false
		}
	}
	return true
}

func vec(name string, xs ...float64) tIn {
	return tIn{name: name, shape: []int64{int64(len(xs))}, data: xs}
}

func param(name string, shape []int64, xs ...float64) tIn {
	return tIn{name: name, shape: shape, data: xs, init: true}
}

// TestKinks: activations at their kinks have PyTorch's derivatives (torch.autograd, 1.13):
// relu'(0) = 0; leaky_relu'(0) = α (the x ≤ 0 branch), second derivative 0; elu'(0) = α
// (the x ≤ 0 branch) and elu”(0) = 0 (PyTorch's double backward masks x < 0); hardsigmoid
// has slope α strictly inside (0, 1) only; hardswish's slope at ±3 is PyTorch's −0.5 and
// 1.5 (the inner clamp passes its bounds); softplus'(0) = ½, softplus”(0) = ¼. Values
// follow the ONNX specification.
func TestKinks(t *testing.T) {
	e1 := math.Exp(-1)
	sig := func(x float64) float64 { return 1 / (1 + math.Exp(-x)) }
	// HardSigmoid's alpha as PyTorch exports it: 1/6 rounded to float32 (attributes are
	// float32). The value follows the specification, α·x + β with that α; PyTorch computes
	// (x + 3)/6 but its derivative is this same float32 1/6.
	sixth := float64(float32(1.0 / 6))
	cases := []struct {
		name       string
		node       tNode
		x          []float64
		y, dy, d2y []float64
		tol        float64
	}{
		{"Relu", tNode{op: "Relu"}, []float64{-1, 0, 2, math.Inf(-1), math.Inf(1)},
			[]float64{0, 0, 2, 0, math.Inf(1)}, []float64{0, 0, 1, 0, 1}, []float64{0, 0, 0, 0, 0}, 0},
		{"LeakyRelu", tNode{op: "LeakyRelu", attrsF: map[string]float64{"alpha": 0.25}}, []float64{-2, 0, 3, math.Inf(-1)},
			[]float64{-0.5, 0, 3, math.Inf(-1)}, []float64{0.25, 0.25, 1, 0.25}, []float64{0, 0, 0, 0}, 0},
		{"Elu", tNode{op: "Elu"}, []float64{-1, 0, 2, math.Inf(-1), math.Inf(1)},
			[]float64{math.Expm1(-1), 0, 2, -1, math.Inf(1)}, []float64{e1, 1, 1, 0, 1}, []float64{e1, 0, 0, 0, 0}, 1e-15},
		{"Elu alpha", tNode{op: "Elu", attrsF: map[string]float64{"alpha": 0.5}}, []float64{-1, 0, 2},
			[]float64{0.5 * math.Expm1(-1), 0, 2}, []float64{0.5 * e1, 0.5, 1}, []float64{0.5 * e1, 0, 0}, 1e-15},
		{"HardSigmoid default", tNode{op: "HardSigmoid"}, []float64{-3, -2.5, 0, 2.5, 3},
			// α = 0.2 (float32), β = 0.5: the kinks at ±2.5 are exact ties
			[]float64{0, 0, 0.5, 1, 1}, []float64{0, 0, float64(float32(0.2)), 0, 0}, []float64{0, 0, 0, 0, 0}, 1e-7},
		{"HardSigmoid PyTorch", tNode{op: "HardSigmoid", attrsF: map[string]float64{"alpha": 1.0 / 6}}, []float64{-4, -3, 0, 1.5, 3, 4},
			[]float64{0, 0, 0.5, sixth*1.5 + 0.5, 1, 1}, []float64{0, 0, sixth, sixth, 0, 0}, []float64{0, 0, 0, 0, 0, 0}, 1e-15},
		{"HardSwish", tNode{op: "HardSwish"}, []float64{-4, -3, -1.5, 0, 3, 4},
			[]float64{0, 0, -0.375, 0, 3, 4}, []float64{0, -0.5, 0, 0.5, 1.5, 1}, []float64{0, 1.0 / 3, 1.0 / 3, 1.0 / 3, 1.0 / 3, 0}, 1e-15},
		{"Softplus", tNode{op: "Softplus"}, []float64{-800, -30, 0, 17, 30, 800},
			[]float64{0, math.Log1p(math.Exp(-30)), math.Ln2, 17 + math.Log1p(math.Exp(-17)), 30 + math.Log1p(math.Exp(-30)), 800},
			[]float64{0, sig(-30), 0.5, sig(17), sig(30), 1},
			[]float64{0, sig(-30) * sig(30), 0.25, sig(17) * sig(-17), sig(30) * sig(-30), 0}, 1e-15},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			l, err := lowerModel(t, 14, []tIn{vec("x", c.x...)}, single(c.node))
			if err != nil {
				t.Fatal(err)
			}
			y, g := l.grads(t, "x")
			if !near(y, c.y, c.tol) {
				t.Errorf("y = %v, want %v", y, c.y)
			}
			if !near(g["x"], c.dy, c.tol) {
				t.Errorf("dy/dx = %v, want %v", g["x"], c.dy)
			}
			if d2 := l.second(t, "x"); !near(d2, c.d2y, c.tol) {
				t.Errorf("d²y/dx² = %v, want %v", d2, c.d2y)
			}
		})
	}
}

// TestSoftplusExact: Softplus is log(exp(x) + 1) as the ONNX specification defines it, with
// no threshold (PyTorch's F.softplus returns x above 20; the ONNX operator, which PyTorch
// exports without the threshold, does not): softplus(17) is 17 + log1p(e^-17), not 17.
func TestSoftplusExact(t *testing.T) {
	got, _, err := runModel(t, 13, []tIn{vec("x", 17, 25, 40)}, single(tNode{op: "Softplus"}))
	if err != nil {
		t.Fatal(err)
	}
	for i, x := range []float64{17, 25, 40} {
		want := x + math.Log1p(math.Exp(-x))
		if got[i] != want {
			t.Errorf("softplus(%v) = %v, want %v", x, got[i], want)
		}
	}
}

// TestVariadic: Max, Min, Sum and Mean take every input (multidirectional broadcasting);
// Max and Min split the derivative evenly among the inputs tied for the extreme, as
// torch.maximum does for two (½ each) and torch.amax over the stacked inputs for more.
func TestVariadic(t *testing.T) {
	a := param("a", []int64{2, 3}, 1, 5, 2, 7, 0, 3)
	b := param("b", []int64{3}, 4, 5, 2)
	c := param("c", []int64{2, 1}, 4, 3)
	d := param("d", nil, 2)
	cases := []struct {
		name  string
		op    string
		ins   []tIn
		y     []float64
		grads map[string][]float64
	}{
		{"Max3", "Max", []tIn{a, b, c},
			// rows: max(a, b, c) = [4 5 4], [7 5 3]; ties: (0,0) b=c=4; (0,1) a=b=5; (0,2) c; (1,2) a=c=3
			[]float64{4, 5, 4, 7, 5, 3},
			map[string][]float64{"a": {0, 0.5, 0, 1, 0, 0.5}, "b": {0.5, 1.5, 0}, "c": {1.5, 0.5}}},
		{"Min4", "Min", []tIn{a, b, c, d},
			// min(a, b, c, 2) = [1 2 2], [2 0 2]; ties: (0,1) b=d=2... see below
			[]float64{1, 2, 2, 2, 0, 2},
			map[string][]float64{"a": {1, 0, 1.0 / 3, 0, 1, 0}, "b": {0, 0, 1.0/3 + 0.5}, "c": {0, 0}, "d": {0 + 1 + 1.0/3 + 1 + 0.5}}},
		{"Sum3", "Sum", []tIn{a, b, c},
			[]float64{9, 14, 8, 14, 8, 8},
			map[string][]float64{"a": {1, 1, 1, 1, 1, 1}, "b": {2, 2, 2}, "c": {3, 3}}},
		{"Mean3", "Mean", []tIn{a, b, c},
			[]float64{3, 14.0 / 3, 8.0 / 3, 14.0 / 3, 8.0 / 3, 8.0 / 3},
			map[string][]float64{"a": {1.0 / 3, 1.0 / 3, 1.0 / 3, 1.0 / 3, 1.0 / 3, 1.0 / 3}, "b": {2.0 / 3, 2.0 / 3, 2.0 / 3}, "c": {1, 1}}},
		{"Max1", "Max", []tIn{a}, a.data, map[string][]float64{"a": {1, 1, 1, 1, 1, 1}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			// a dummy graph input: Lower wants a float input or initializer
			ins := append([]tIn{vec("x", 0)}, c.ins...)
			var names, wrt []string
			for _, in := range c.ins {
				names = append(names, in.name)
				wrt = append(wrt, in.name)
			}
			l, err := lowerModel(t, 13, ins, single(tNode{op: c.op, ins: names}))
			if err != nil {
				t.Fatal(err)
			}
			y, g := l.grads(t, wrt...)
			if !near(y, c.y, 1e-15) {
				t.Errorf("y = %v, want %v", y, c.y)
			}
			for _, w := range wrt {
				if !near(g[w], c.grads[w], 1e-15) {
					t.Errorf("∂Σy/∂%s = %v, want %v", w, g[w], c.grads[w])
				}
			}
		})
	}
}

// TestUnsupportedListed: an import error names every unsupported operator of the model at
// once, with its count and first node; element types print as names.
func TestUnsupportedListed(t *testing.T) {
	x := vec("x", 1, 2)
	nodes := []tNode{
		{op: "GridSample", ins: []string{"x"}, outs: []string{"a"}},
		{op: "Relu", ins: []string{"a"}, outs: []string{"b"}},
		{op: "Celu", ins: []string{"b"}, outs: []string{"c"}},
		{op: "GridSample", ins: []string{"c"}, outs: []string{"d"}},
		{op: "Shrink", ins: []string{"d"}, outs: []string{"y"}},
	}
	_, _, err := runModel(t, 13, []tIn{x}, nodes)
	if err == nil {
		t.Fatal("no error")
	}
	for _, w := range []string{"3 operator types are not supported", `Celu ×1 (first: node "c" (Celu, opset 13))`, `GridSample ×2 (first: node "a" (GridSample, opset 13))`, `Shrink ×1 (first: node "y" (Shrink, opset 13))`, "onnx.SupportedOps()"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q does not mention %q", err, w)
		}
	}
}

// TestCastOutput: Cast to the model's float type of a comparison, as the graph output, is a
// float array of 0s and 1s (it was left bool), and Cast to BOOL of a float array is x ≠ 0.
func TestCastOutput(t *testing.T) {
	x := vec("x", -1, 0, 2)
	z := param("z", nil, 0)
	nodes := []tNode{
		{op: "Greater", ins: []string{"x", "z"}, outs: []string{"g"}},
		{op: "Cast", ins: []string{"g"}, outs: []string{"y"}, attrsI: map[string]int64{"to": dtDouble}},
	}
	l, err := lowerModel(t, 13, []tIn{x, z}, nodes)
	if err != nil {
		t.Fatal(err)
	}
	outs, err := tensors.EvalTuple(l.p.Prog, l.args)
	if err != nil {
		t.Fatal(err)
	}
	if outs[0].Dtype() != tensor.Float64 {
		t.Fatalf("output of dtype %v, want float64", outs[0].Dtype())
	}
	wantValues(t, outs[0].Float64s(), 0, 0, 1)
	nodes = []tNode{
		{op: "Cast", ins: []string{"x"}, outs: []string{"b"}, attrsI: map[string]int64{"to": dtBool}},
		{op: "Where", ins: []string{"b", "x", "z"}, outs: []string{"y"}},
	}
	got, _, err := runModel(t, 13, []tIn{vec("x", -1, 0, 2), param("z", nil, 7)}, nodes)
	if err != nil {
		t.Fatal(err)
	}
	wantValues(t, got, -1, 7, 2)
	// a Cast to INT64 lowers (integer values are supported since), but a graph output
	// declared DOUBLE must not silently be integers
	_, _, err = runModel(t, 13, []tIn{x}, single(tNode{op: "Cast", attrsI: map[string]int64{"to": dtInt64}}))
	if err == nil || !strings.Contains(err.Error(), `graph output "y" is declared DOUBLE but lowers to i64`) {
		t.Errorf("Cast to INT64: %v", err)
	}
}

// TestReduceSignatures: every reduction reads its axes where its opset puts them (ReduceSum
// from input 1 at 13, the others at 18; an attribute before), honours noop_with_empty_axes,
// and ReduceMax and ReduceMin split the derivative evenly among tied elements (PyTorch's
// torch.amax and amin). Values and derivatives worked out by hand from the specification.
func TestReduceSignatures(t *testing.T) {
	x := tIn{name: "x", shape: []int64{2, 4}, data: []float64{1, 3, 3, 3, 2, 2, 0, 1}}
	x22 := func(xs ...float64) tIn { return tIn{name: "x", shape: []int64{2, 2}, data: xs} }
	ints := func(name string, v ...int64) tIn { return tIn{name: name, shape: []int64{int64(len(v))}, ints: v} }
	ax := func(v ...int64) tIn { return ints("a", v...) }
	in2 := []string{"x", "a"}
	k0 := map[string]int64{"keepdims": 0}
	lse := func(xs ...float64) (v float64, g []float64) {
		s := 0.0
		for _, x := range xs {
			s += math.Exp(x)
		}
		for _, x := range xs {
			g = append(g, math.Exp(x)/s)
		}
		return math.Log(s), g
	}
	lse0, g0 := lse(1, 3, 3, 3)
	lse1, g1 := lse(2, 2, 0, 1)
	third := 1.0 / 3
	cases := []struct {
		nodeCase
		dx []float64
	}{
		{nodeCase{"ReduceMax 18 axes input", 18, []tIn{x, ax(1)}, tNode{op: "ReduceMax", ins: in2, attrsI: k0}, []int{2},
			[]float64{3, 2}}, []float64{0, third, third, third, 0.5, 0.5, 0, 0}},
		{nodeCase{"ReduceMax 13 attribute", 13, []tIn{x}, tNode{op: "ReduceMax", attrsIs: map[string][]int64{"axes": {-1}}, attrsI: k0}, []int{2},
			[]float64{3, 2}}, []float64{0, third, third, third, 0.5, 0.5, 0, 0}},
		{nodeCase{"ReduceMax 18 all", 18, []tIn{x}, tNode{op: "ReduceMax", attrsI: k0}, []int{},
			[]float64{3}}, []float64{0, third, third, third, 0, 0, 0, 0}},
		{nodeCase{"ReduceMax 18 noop", 18, []tIn{x}, tNode{op: "ReduceMax", attrsI: map[string]int64{"noop_with_empty_axes": 1}}, []int{2, 4},
			x.data}, []float64{1, 1, 1, 1, 1, 1, 1, 1}},
		{nodeCase{"ReduceMin 18 keepdims", 18, []tIn{x22(2, 1, 2, 5), ax(0)}, tNode{op: "ReduceMin", ins: in2}, []int{1, 2},
			[]float64{2, 1}}, []float64{0.5, 1, 0.5, 0}},
		{nodeCase{"ReduceMin 11 attribute", 11, []tIn{x}, tNode{op: "ReduceMin", attrsIs: map[string][]int64{"axes": {1}}, attrsI: k0}, []int{2},
			[]float64{1, 0}}, []float64{1, 0, 0, 0, 0, 0, 1, 0}},
		{nodeCase{"ReduceMean 18", 18, []tIn{x, ax(1)}, tNode{op: "ReduceMean", ins: in2, attrsI: k0}, []int{2},
			[]float64{2.5, 1.25}}, []float64{0.25, 0.25, 0.25, 0.25, 0.25, 0.25, 0.25, 0.25}},
		{nodeCase{"ReduceProd 18", 18, []tIn{x, ax(0)}, tNode{op: "ReduceProd", ins: in2, attrsI: k0}, []int{4},
			[]float64{2, 6, 0, 3}}, []float64{2, 2, 0, 1, 1, 3, 3, 3}},
		{nodeCase{"ReduceLogSumExp 18", 18, []tIn{x, ax(1)}, tNode{op: "ReduceLogSumExp", ins: in2, attrsI: k0}, []int{2},
			[]float64{lse0, lse1}}, append(g0, g1...)},
		{nodeCase{"ReduceSum 13 input", 13, []tIn{x, ax(0)}, tNode{op: "ReduceSum", ins: in2, attrsI: k0}, []int{4},
			[]float64{3, 5, 3, 4}}, []float64{1, 1, 1, 1, 1, 1, 1, 1}},
		{nodeCase{"ReduceSum 13 noop", 13, []tIn{x}, tNode{op: "ReduceSum", attrsI: map[string]int64{"noop_with_empty_axes": 1}}, []int{2, 4},
			x.data}, []float64{1, 1, 1, 1, 1, 1, 1, 1}},
		{nodeCase{"ReduceSum 11 attribute", 11, []tIn{x}, tNode{op: "ReduceSum", attrsIs: map[string][]int64{"axes": {1}}}, []int{2, 1},
			[]float64{10, 5}}, []float64{1, 1, 1, 1, 1, 1, 1, 1}},
		{nodeCase{"ReduceL2 18 zero row", 18, []tIn{x22(0, 0, 3, 4), ax(1)}, tNode{op: "ReduceL2", ins: in2, attrsI: k0}, []int{2},
			[]float64{0, 5}}, []float64{0, 0, 0.6, 0.8}},
		{nodeCase{"ReduceL2 13 keepdims", 13, []tIn{x22(3, 0, 4, 1)}, tNode{op: "ReduceL2", attrsIs: map[string][]int64{"axes": {0}}}, []int{1, 2},
			[]float64{5, 1}}, []float64{0.6, 0, 0.8, 1}},
		{nodeCase{"ReduceL1 18", 18, []tIn{x22(-1, 0, 3, -4), ax(1)}, tNode{op: "ReduceL1", ins: in2, attrsI: k0}, []int{2},
			[]float64{1, 7}}, []float64{-1, 0, 1, -1}},
		{nodeCase{"ReduceSumSquare 13", 13, []tIn{x22(-1, 0, 3, -4)}, tNode{op: "ReduceSumSquare", attrsIs: map[string][]int64{"axes": {1}}, attrsI: k0}, []int{2},
			[]float64{1, 25}}, []float64{-2, 0, 6, -8}},
		{nodeCase{"ReduceLogSum 18 all", 18, []tIn{x22(1, 3, 2, 2)}, tNode{op: "ReduceLogSum", attrsI: k0}, []int{},
			[]float64{math.Log(8)}}, []float64{0.125, 0.125, 0.125, 0.125}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			l, err := lowerModel(t, c.opset, c.ins, single(c.node))
			if err != nil {
				t.Fatal(err)
			}
			_, res := core.LetChain(l.p.Prog.Body)
			if sh := []int(core.Results(res)[0].Type().Shape); !slices.Equal(sh, c.shape) {
				t.Errorf("shape %v, want %v", sh, c.shape)
			}
			y, g := l.grads(t, "x")
			if !near(y, c.want, 1e-15) {
				t.Errorf("y = %v, want %v", y, c.want)
			}
			if !near(g["x"], c.dx, 1e-15) {
				t.Errorf("∂Σy/∂x = %v, want %v", g["x"], c.dx)
			}
		})
	}
}

// TestReduceErrors: an axes attribute where the opset wants an input, a second input where
// it wants the attribute, and a repeated axis are errors naming the node.
func TestReduceErrors(t *testing.T) {
	x := tIn{name: "x", shape: []int64{2, 2}, data: []float64{1, 2, 3, 4}}
	a := tIn{name: "a", shape: []int64{1}, ints: []int64{1}}
	cases := []struct {
		opset int64
		ins   []tIn
		node  tNode
		want  string
	}{
		{18, []tIn{x}, tNode{op: "ReduceMean", attrsIs: map[string][]int64{"axes": {1}}}, "from opset 18 the axes are input 1"},
		{13, []tIn{x}, tNode{op: "ReduceSum", attrsIs: map[string][]int64{"axes": {1}}}, "from opset 13 the axes are input 1"},
		{13, []tIn{x, a}, tNode{op: "ReduceMax", ins: []string{"x", "a"}}, "before opset 18 the axes are an attribute"},
		{11, []tIn{x}, tNode{op: "ReduceMin", attrsIs: map[string][]int64{"axes": {1, -1}}}, "name axis 1 twice"},
	}
	for _, c := range cases {
		_, _, err := runModel(t, c.opset, c.ins, single(c.node))
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), c.node.op) {
			t.Errorf("%s at opset %d: error %v, want one mentioning %q", c.node.op, c.opset, err, c.want)
		}
	}
}

// TestClipBounds: Clip's bounds from float initializers are parameters: the derivative
// reaches them (PyTorch's clamp with tensor bounds: to the bound where x is beyond it), x
// keeps its derivative at a bound, and a lower bound above the upper gives the upper (the
// specification). The bound may come through a Cast, as PyTorch exports it.
func TestClipBounds(t *testing.T) {
	x := vec("x", -1, 0, 0.5, 1, 2)
	for _, viaCast := range []bool{false, true} {
		nodes := single(tNode{op: "Clip", ins: []string{"x", "lo", "hi"}})
		if viaCast {
			nodes = []tNode{
				{op: "Cast", ins: []string{"lo"}, outs: []string{"lo1"}, attrsI: map[string]int64{"to": dtDouble}},
				{op: "Clip", ins: []string{"x", "lo1", "hi"}, outs: []string{"y"}},
			}
		}
		l, err := lowerModel(t, 13, []tIn{x, param("lo", nil, 0), param("hi", nil, 1)}, nodes)
		if err != nil {
			t.Fatal(err)
		}
		y, g := l.grads(t, "x", "lo", "hi")
		if !near(y, []float64{0, 0, 0.5, 1, 1}, 0) || !near(g["x"], []float64{0, 1, 1, 1, 0}, 0) || !near(g["lo"], []float64{1}, 0) || !near(g["hi"], []float64{1}, 0) {
			t.Errorf("cast %v: y = %v, ∂/∂x = %v, ∂/∂lo = %v, ∂/∂hi = %v; want [0 0 0.5 1 1], [0 1 1 1 0], [1], [1]", viaCast, y, g["x"], g["lo"], g["hi"])
		}
	}
	got, _, err := runModel(t, 13, []tIn{x, param("lo", nil, 2), param("hi", nil, 1)}, single(tNode{op: "Clip", ins: []string{"x", "lo", "hi"}}))
	if err != nil {
		t.Fatal(err)
	}
	wantValues(t, got, 1, 1, 1, 1, 1)
	if got, _, err = runModel(t, 13, []tIn{x, param("hi", nil, 0.5)}, single(tNode{op: "Clip", ins: []string{"x", "", "hi"}})); err != nil {
		t.Fatal(err)
	}
	wantValues(t, got, -1, 0, 0.5, 0.5, 0.5)
}

// TestDecodeDataKind: a FLOAT tensor whose values sit in int64_data (a corrupt file) is a
// decode error naming the type; it passed the count check and panicked building the
// initializer's value.
func TestDecodeDataKind(t *testing.T) {
	tensorBytes := msg(fVarint(1, 1), fVarint(2, dtFloat), fBytes(8, []byte("w")), fVarint(7, 3))
	var g []byte
	g = append(g, fBytes(1, encNode(tNode{op: "Add", ins: []string{"x", "w"}, outs: []string{"y"}}))...)
	g = append(g, fBytes(5, tensorBytes)...)
	g = append(g, fBytes(11, encValueInfo("x", []int64{1}))...)
	g = append(g, fBytes(12, encValueInfo("y", []int64{1}))...)
	b := msg(fVarint(1, 8), fBytes(7, g), fBytes(8, msg(fBytes(1, nil), fVarint(2, 13))))
	err := importBytes(t, b)
	if err == nil || !strings.Contains(err.Error(), `tensor "w" (FLOAT, dims [1]) holds 0 float and 1 integer values`) {
		t.Errorf("error %v", err)
	}
}

// TestTypeNames: element types print by name.
func TestTypeNames(t *testing.T) {
	for in, want := range map[int64]string{1: "FLOAT", 7: "INT64", 9: "BOOL", 11: "DOUBLE", 10: "FLOAT16", 16: "BFLOAT16", 99: "element type 99", -1: "element type -1"} {
		if got := typeName(in); got != want {
			t.Errorf("typeName(%d) = %q, want %q", in, got, want)
		}
	}
	// a FLOAT16 graph input
	vi := msg(fBytes(1, []byte("x")), fBytes(2, fBytes(1, msg(fVarint(1, 10), fBytes(2, fBytes(1, fVarint(1, 2)))))))
	g := msg(fBytes(1, encNode(tNode{op: "Relu", ins: []string{"x"}, outs: []string{"y"}})), fBytes(5, encTensor(tIn{name: "w", shape: []int64{1}, data: []float64{1}})),
		fBytes(11, vi), fBytes(12, encValueInfo("y", []int64{2})))
	err := importBytes(t, msg(fVarint(1, 8), fBytes(7, g), fBytes(8, msg(fBytes(1, nil), fVarint(2, 13)))))
	if err == nil || !strings.Contains(err.Error(), `graph input "x" has element type FLOAT16; supported: FLOAT, DOUBLE, INT64, INT32 and BOOL`) {
		t.Errorf("FLOAT16 input: %v", err)
	}
}

// TestOutputDtype: a graph output declared DOUBLE that lowers to a bool array (a comparison
// the model mistypes) is an error naming it, not a bool output node.
func TestOutputDtype(t *testing.T) {
	_, _, err := runModel(t, 13, []tIn{vec("x", 1, 2), param("z", nil, 0)}, single(tNode{op: "Greater", ins: []string{"x", "z"}}))
	if err == nil || !strings.Contains(err.Error(), `graph output "y" is declared DOUBLE but lowers to bool`) {
		t.Errorf("error %v", err)
	}
}
