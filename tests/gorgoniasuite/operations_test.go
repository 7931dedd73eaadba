package gorgoniasuite

import (
	"math"
	"strings"
	"testing"

	"github.com/bulkad/bulkad"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// ranged is 0, 1, 2, … (Gorgonia's RangedFrom(0)).
func ranged(n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = float64(i)
	}
	return out
}

// TestMul is operations_test.go's TestMul over mulTests (x, w = 0, 1, 2, …): x·w summed (the
// vector-vector case is the dot product itself) and the expected gradients of the table.
func TestMul(t *testing.T) {
	cases := []struct {
		name         string
		xs, ws       tensor.Shape
		gradX, gradW []float64
	}{
		{"x vector", tensor.Shape{2}, tensor.Shape{2, 3}, []float64{3, 12}, []float64{0, 0, 0, 1, 1, 1}},
		{"x mat", tensor.Shape{3, 2}, tensor.Shape{2, 3}, []float64{3, 12, 3, 12, 3, 12}, []float64{6, 6, 6, 9, 9, 9}},
		{"x_vec_w_vec", tensor.Shape{6}, tensor.Shape{6}, []float64{0, 1, 2, 3, 4, 5}, []float64{0, 1, 2, 3, 4, 5}},
	}
	for _, c := range cases {
		g := G.NewGraph()
		x := inputNode(g, tensor.Float64, c.xs, ranged(c.xs.TotalSize()), "x")
		w := inputNode(g, tensor.Float64, c.ws, ranged(c.ws.TotalSize()), "w")
		cost := G.Must(G.Mul(x, w))
		if !cost.IsScalar() {
			cost = G.Must(G.Sum(cost))
		}
		_, grads, err := bulkadGrads(cost, x, w)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if maxAbsDiff(grads[0], c.gradX) != 0 || maxAbsDiff(grads[1], c.gradW) != 0 {
			t.Errorf("%s: ∂x %v ∂w %v, table %v %v", c.name, grads[0], grads[1], c.gradX, c.gradW)
		}
	}
}

// TestGt is operations_test.go's TestGt for its retSame (differentiable) rows: Σ Gt(a, b,
// retSame) runs forward to the table's value and bulkad.Grad gives the derivative of a step
// function, 0 (Gorgonia's test only requires Grad and the run to succeed), plus its special
// case Gt(1, T) with T uniform random.
func TestGt(t *testing.T) {
	scalar := func(g *G.ExprGraph, v float64, name string) *G.Node {
		return G.NewScalar(g, tensor.Float64, G.WithName(name), G.WithValue(v))
	}
	cases := []struct {
		name string
		a, b func(g *G.ExprGraph) *G.Node
		want []float64
	}{
		{"1>0", func(g *G.ExprGraph) *G.Node { return scalar(g, 1, "a") }, func(g *G.ExprGraph) *G.Node { return scalar(g, 0, "b") }, []float64{1}},
		{"0>1", func(g *G.ExprGraph) *G.Node { return scalar(g, 0, "a") }, func(g *G.ExprGraph) *G.Node { return scalar(g, 1, "b") }, []float64{0}},
		{"1>[0 2]", func(g *G.ExprGraph) *G.Node { return scalar(g, 1, "a") },
			func(g *G.ExprGraph) *G.Node {
				return inputNode(g, tensor.Float64, tensor.Shape{2}, []float64{0, 2}, "b")
			}, []float64{1, 0}},
		{"[0 2]>1", func(g *G.ExprGraph) *G.Node {
			return inputNode(g, tensor.Float64, tensor.Shape{2}, []float64{0, 2}, "a")
		},
			func(g *G.ExprGraph) *G.Node { return scalar(g, 1, "b") }, []float64{0, 1}},
		{"mat>mat", func(g *G.ExprGraph) *G.Node { return inputNode(g, tensor.Float64, tensor.Shape{2, 3}, ranged(6), "a") },
			func(g *G.ExprGraph) *G.Node {
				return inputNode(g, tensor.Float64, tensor.Shape{2, 3}, []float64{5, 4, 3, 2, 1, 0}, "b")
			}, []float64{0, 0, 0, 1, 1, 1}},
	}
	for _, c := range cases {
		g := G.NewGraph()
		a, b := c.a(g), c.b(g)
		gt := G.Must(G.Gt(a, b, true))
		_, grads, err := bulkadGrads(G.Must(G.Sum(gt)), a, b)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if maxAbsDiff(floats(gt.Value()), c.want) != 0 {
			t.Errorf("%s: value %v, table %v", c.name, floats(gt.Value()), c.want)
		}
		for k, gr := range grads {
			for _, x := range gr {
				if x != 0 {
					t.Errorf("%s: gradient %d = %v, want zeros", c.name, k, gr)
					break
				}
			}
		}
	}
	g := G.NewGraph()
	T := G.UniformRandomNode(g, tensor.Float64, 0, 1, 2)
	gt := G.Must(G.Gt(G.NewConstant(1.0), T, true))
	_, grads, err := bulkadGrads(G.Must(G.Sum(gt)), T)
	if err != nil {
		t.Fatalf("Gt(1, uniform T): %v", err)
	}
	if maxAbsDiff(grads[0], []float64{0, 0}) != 0 || len(floats(gt.Value())) != 2 {
		t.Errorf("Gt(1, uniform T): value %v gradient %v", gt.Value(), grads[0])
	}
}

// TestMisha is operations_test.go's TestMisha: Mish at x0 = −2.5 < x1 = −2.2 < x2 = 1 is not
// monotone (f0 > f1 < f2) and neither is its derivative; the derivatives are also checked
// against the hand derivation mish'(x) = tanh(sp) + x·sech²(sp)·σ(x), sp = softplus(x).
func TestMisha(t *testing.T) {
	xs := []float64{-2.5, -2.2, 1.0}
	var f, d []float64
	for _, x0 := range xs {
		g := G.NewGraph()
		x := G.NewScalar(g, tensor.Float64, G.WithName("x"), G.WithValue(x0))
		y := G.Must(G.Mish(x))
		_, grads := mustGrads(t, y, x)
		f, d = append(f, floats(y.Value())[0]), append(d, grads[0][0])
		sp := math.Log1p(math.Exp(x0))
		th := math.Tanh(sp)
		want := th + x0*(1-th*th)/(1+math.Exp(-x0))
		if math.Abs(grads[0][0]-want) > 1e-12 {
			t.Errorf("mish'(%g) = %.15g, by hand %.15g", x0, grads[0][0], want)
		}
	}
	if !(f[0] > f[1] && f[1] < f[2]) || !(d[0] > d[1] && d[1] < d[2]) {
		t.Errorf("Mish values %v or derivatives %v are monotone at %v", f, d, xs)
	}
}

// TestSlice is operations_test.go's TestSlice over sliceTests (x = 0, 1, 2, …): the slice's
// value, the gradient of Σ slice at the slice node (ones, read with GradAll like Gorgonia's
// sliced.Grad()) and at x (the slice's indicator, by hand); the table's error row is refused
// by Gorgonia's constructor. Its UnsafeLet special case is TestSliceUnsafeLet.
func TestSlice(t *testing.T) {
	cases := []struct {
		name   string
		shape  tensor.Shape
		slices []tensor.Slice
		data   []float64
	}{
		{"vec[0]", tensor.Shape{2}, []tensor.Slice{G.S(0)}, []float64{0}},
		{"vec[0:2]", tensor.Shape{2}, []tensor.Slice{G.S(0, 2)}, []float64{0, 1}},
		{"Mat[0]", tensor.Shape{2, 3}, []tensor.Slice{G.S(0)}, []float64{0, 1, 2}},
		{"Mat[:, 0]", tensor.Shape{2, 3}, []tensor.Slice{nil, G.S(0)}, []float64{0, 3}},
		{"3Tensor[0]", tensor.Shape{2, 3, 4}, []tensor.Slice{G.S(0)}, ranged(12)},
		{"3Tensor[0:2]", tensor.Shape{2, 3, 4}, []tensor.Slice{G.S(0, 2)}, ranged(24)},
		{"3Tensor[:, 0]", tensor.Shape{2, 3, 4}, []tensor.Slice{nil, G.S(0)}, []float64{0, 1, 2, 3, 12, 13, 14, 15}},
		{"3Tensor[0, :, 0]", tensor.Shape{2, 3, 4}, []tensor.Slice{G.S(0), nil, G.S(0)}, []float64{0, 4, 8}},
	}
	for _, c := range cases {
		g := G.NewGraph()
		x := inputNode(g, tensor.Float64, c.shape, ranged(c.shape.TotalSize()), "x")
		sl := G.Must(G.Slice(x, c.slices...))
		if _, err := bulkad.GradAll(G.Must(G.Sum(sl)), x); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if err := run(g); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if maxAbsDiff(floats(sl.Value()), c.data) != 0 {
			t.Errorf("%s: value %v, table %v", c.name, floats(sl.Value()), c.data)
		}
		sg, err := sl.Grad()
		if err != nil {
			t.Fatalf("%s: sliced.Grad(): %v", c.name, err)
		}
		for _, v := range floats(sg) {
			if v != 1 {
				t.Errorf("%s: sliced.Grad() = %v, want ones", c.name, floats(sg))
				break
			}
		}
		xg, err := x.Grad()
		if err != nil {
			t.Fatal(err)
		}
		// by hand: x's entry k gets 1 when its value k is among the slice's values
		in := map[float64]bool{}
		for _, v := range c.data {
			in[v] = true
		}
		for k, v := range floats(xg) {
			want := 0.0
			if in[float64(k)] {
				want = 1
			}
			if v != want {
				t.Errorf("%s: x.Grad() = %v, want the slice's indicator", c.name, floats(xg))
				break
			}
		}
	}
	g := G.NewGraph()
	x := inputNode(g, tensor.Float64, tensor.Shape{2}, ranged(2), "x")
	if _, err := G.Slice(x, nil, G.S(0)); err == nil {
		t.Error("vec[:, 0]: no error")
	}
}

// TestSliceUnsafeLet is TestSlice's special case: after Grad, UnsafeLet moves two slices
// before the run. Gorgonia's gradient nodes share the slice ops and follow the move (x.Grad() =
// [0 0 0 0 0 1]); bulkad documents that the structure is read at Grad time and refuses the run
// with an error naming the moved slice rather than give a gradient of the old window (see the
// package documentation).
func TestSliceUnsafeLet(t *testing.T) {
	for _, grad := range []string{"gorgonia", "bulkad"} {
		g := G.NewGraph()
		x := inputNode(g, tensor.Float64, tensor.Shape{2, 3}, ranged(6), "x")
		sl := G.Must(G.Slice(x, G.S(0)))
		cost := G.Must(G.Slice(sl, G.S(0)))
		var err error
		if grad == "gorgonia" {
			_, err = G.Grad(cost, x)
		} else {
			_, err = bulkad.Grad(cost, x)
		}
		if err != nil {
			t.Fatal(err)
		}
		m := G.NewTapeMachine(g)
		if err := G.UnsafeLet(sl, G.S(1)); err != nil {
			t.Fatal(err)
		}
		if err := G.UnsafeLet(cost, G.S(2)); err != nil {
			t.Fatal(err)
		}
		err = m.RunAll()
		switch grad {
		case "gorgonia":
			xg, gerr := x.Grad()
			if err != nil || gerr != nil || maxAbsDiff(floats(xg), []float64{0, 0, 0, 0, 0, 1}) != 0 {
				t.Errorf("gorgonia: %v %v %v", err, gerr, xg)
			}
		case "bulkad":
			if err == nil || !strings.Contains(err.Error(), "UnsafeLet") {
				t.Errorf("bulkad: run after UnsafeLet: %v, want an error naming UnsafeLet", err)
			}
		}
		m.Close()
	}
}

// TestSum is operations_test.go's TestSum over sumTests (x = 0, 1, …): Sum along the axes,
// its value, and s.Grad() of the sum node (GradAll) = ones, as the table says.
func TestSum(t *testing.T) {
	cases := []struct {
		name  string
		shape tensor.Shape
		along []int
		val   []float64
	}{
		{"Sum(vec)", tensor.Shape{2}, nil, []float64{1}},
		{"Sum(vec, 0)", tensor.Shape{2}, []int{0}, []float64{1}},
		{"Sum(Mat)", tensor.Shape{2, 3}, nil, []float64{15}},
		{"Sum(Mat, 0)", tensor.Shape{2, 3}, []int{0}, []float64{3, 5, 7}},
		{"Sum(Mat, 1)", tensor.Shape{2, 3}, []int{1}, []float64{3, 12}},
	}
	for _, c := range cases {
		g := G.NewGraph()
		x := inputNode(g, tensor.Float64, c.shape, ranged(c.shape.TotalSize()), "x")
		s := G.Must(G.Sum(x, c.along...))
		cost := s
		if len(c.along) > 0 && len(c.along) < len(c.shape) {
			cost = G.Must(G.Sum(s))
		}
		if _, err := bulkad.GradAll(cost, x); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if err := run(g); err != nil {
			t.Fatal(err)
		}
		if maxAbsDiff(floats(s.Value()), c.val) != 0 {
			t.Errorf("%s: value %v, table %v", c.name, floats(s.Value()), c.val)
		}
		sg, err := s.Grad()
		if err != nil {
			t.Fatalf("%s: s.Grad(): %v", c.name, err)
		}
		xg, err := x.Grad()
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range append(floats(sg), floats(xg)...) {
			if v != 1 {
				t.Errorf("%s: s.Grad() %v, x.Grad() %v: want ones", c.name, floats(sg), floats(xg))
				break
			}
		}
	}
}

// TestSumOpDiff is op_reduction_test.go's TestSumOpDiff: Σ x for x a 5-vector and an 11×7
// matrix (x = 0, 1, …), and Σ x + 2 (the sum not at the root); x.Grad() = ones and
// y.Grad() = 1 (Gorgonia compares its TapeMachine with its LispMachine; ones by hand).
func TestSumOpDiff(t *testing.T) {
	for _, c := range []struct {
		shape tensor.Shape
		plus2 bool
	}{{tensor.Shape{5}, false}, {tensor.Shape{11, 7}, false}, {tensor.Shape{11, 7}, true}} {
		g := G.NewGraph()
		x := inputNode(g, tensor.Float64, c.shape, ranged(c.shape.TotalSize()), "x")
		y := G.Must(G.Sum(x))
		cost := y
		if c.plus2 {
			cost = G.Must(G.Add(y, G.NewConstant(2.0)))
		}
		if _, err := bulkad.GradAll(cost, x); err != nil {
			t.Fatal(err)
		}
		if err := run(g); err != nil {
			t.Fatal(err)
		}
		n := c.shape.TotalSize()
		if want := float64(n*(n-1)) / 2; floats(y.Value())[0] != want {
			t.Errorf("%v: Σ x = %v, want %v", c.shape, y.Value(), want)
		}
		xg, err := x.Grad()
		if err != nil {
			t.Fatal(err)
		}
		yg, err := y.Grad()
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range append(floats(xg), floats(yg)...) {
			if v != 1 {
				t.Errorf("%v (+2: %v): x.Grad() %v, y.Grad() %v: want ones", c.shape, c.plus2, floats(xg), floats(yg))
				break
			}
		}
	}
}

// TestReshapeRuntime is operations_test.go's TestReshapeRuntime: Σ Reshape(W · Reshape(x, 784),
// (5, 10)) differentiated w.r.t. W must leave x's shape (28, 28) unchanged; the gradient is
// 1 ⊗ vec(x) by hand (∂/∂W_ij Σ_i (W x)_i = x_j).
func TestReshapeRuntime(t *testing.T) {
	g := G.NewGraph()
	xs := make([]float64, 784)
	for i := range xs {
		xs[i] = math.Sin(float64(i))
	}
	x := inputNode(g, tensor.Float64, tensor.Shape{28, 28}, xs, "x")
	w := inputNode(g, tensor.Float64, tensor.Shape{50, 784}, make([]float64, 50*784), "W")
	wx := G.Must(G.Mul(w, G.Must(G.Reshape(x, tensor.Shape{784}))))
	cost := G.Must(G.Sum(G.Must(G.Reshape(wx, tensor.Shape{5, 10}))))
	_, grads := mustGrads(t, cost, w)
	if !x.Value().Shape().Eq(tensor.Shape{28, 28}) {
		t.Errorf("x's shape changed to %v", x.Value().Shape())
	}
	for i, v := range grads[0] {
		if v != xs[i%784] {
			t.Fatalf("∂/∂W[%d] = %v, want x[%d] = %v", i, v, i%784, xs[i%784])
		}
	}
}

// TestSliceBNConcat is operations_test.go's TestSliceBNConcat: two batch norms over slices of
// one input sharing scale and bias, reshaped, multiplied by transposed weights, concatenated,
// averaged; output, ∂scale and ∂x against the table (its tolerance 1e-5).
func TestSliceBNConcat(t *testing.T) {
	g := G.NewGraph()
	xShape := tensor.Shape{4, 2, 2, 2}
	input := G.NewTensor(g, tensor.Float64, 4, G.WithShape(xShape...), G.WithInit(G.RangedFromWithStep(0.1, 2)), G.WithName("x"))
	winit := G.RangedFromWithStep(-0.05, 3)
	scale := G.NewTensor(g, tensor.Float64, 4, G.WithShape(1, 2, 1, 1), G.WithInit(winit), G.WithName("scale"))
	bias := G.NewTensor(g, tensor.Float64, 4, G.WithShape(1, 2, 1, 1), G.WithInit(winit), G.WithName("bias"))
	sl1 := G.Must(G.Slice(input, G.S(2, 4)))
	w1 := G.NewTensor(g, tensor.Float64, 2, G.WithShape(2, 8), G.WithInit(winit), G.WithName("w1"))
	sl2 := G.Must(G.Slice(input, G.S(0, 2)))
	w2 := G.NewTensor(g, tensor.Float64, 2, G.WithShape(2, 8), G.WithInit(winit), G.WithName("w2"))
	slShape := tensor.Shape{sl1.Shape()[0], tensor.Shape(sl1.Shape()[1:]).TotalSize()}
	bn1, _, _, _, err := G.BatchNorm(sl1, scale, bias, 0.1, 1e-5)
	if err != nil {
		t.Fatal(err)
	}
	y1 := G.Must(G.Mul(G.Must(G.Reshape(bn1, slShape)), G.Must(G.Transpose(w1, 1, 0))))
	bn2, _, _, _, err := G.BatchNorm(sl2, scale, bias, 0.1, 1e-5)
	if err != nil {
		t.Fatal(err)
	}
	y2 := G.Must(G.Mul(G.Must(G.Reshape(bn2, slShape)), G.Must(G.Transpose(w2, 1, 0))))
	y := G.Must(G.Concat(0, y1, y2))
	_, grads := mustGrads(t, G.Must(G.Mean(y)), input, scale)
	wantOut := []float64{17.605945678258838, 27.882593114861223, 389.7811912407563, 936.3045438041536, 17.605945678259026, 27.882593114861688, 389.78119124075647, 936.3045438041542}
	wantScaleGrad := []float64{3.6115753308647314, 3.611575330864615}
	wantInputGrad := []float64{0.004972459049631833, 0.0007851252852762911, -0.003402208479079247, -0.007589542243434792, -0.2933750839282767, -0.04632239183130019, 0.20073030026567673, 0.4477829923626533, 0.007589542243434788, 0.0034022084790792466, -0.0007851252852762914, -0.004972459049631836, -0.4477829923626529, -0.20073030026567634, 0.046322391831300574, 0.2933750839282771, 0.004972459049631834, 0.0007851252852762919, -0.003402208479079246, -0.007589542243434792, -0.2933750839282794, -0.04632239183130238, 0.20073030026567504, 0.44778299236265207, 0.007589542243434788, 0.003402208479079246, -0.0007851252852762919, -0.004972459049631836, -0.4477829923626515, -0.20073030026567448, 0.04632239183130295, 0.29337508392828}
	for _, c := range []struct {
		name      string
		got, want []float64
	}{{"output", floats(y.Value()), wantOut}, {"∂scale", grads[1], wantScaleGrad}, {"∂x", grads[0], wantInputGrad}} {
		if d := maxAbsDiff(c.got, c.want); d > 1e-5 {
			t.Errorf("%s: max |Δ| %.2g vs the table\n got %v\nwant %v", c.name, d, c.got, c.want)
		}
	}
}

// TestSoftMax is operations_test.go's TestSoftMax: cost = −log SoftMax(x)[2] at
// x = (0.1, 0.2, −0.3, 0.4, 0.5); the gradient against Gorgonia's correctXGrad (its
// floatsEqual64 tolerance is 1e-8) and read both from the gradient node and x.Grad().
func TestSoftMax(t *testing.T) {
	g := G.NewGraph()
	x := inputNode(g, tensor.Float64, tensor.Shape{5}, []float64{0.1, 0.2, -0.3, 0.4, 0.5}, "x")
	sm := G.Must(G.SoftMax(x))
	cost := G.Must(G.Slice(G.Must(G.Neg(G.Must(G.Log(sm)))), G.S(2)))
	_, grads := mustGrads(t, cost, x)
	want := []float64{0.178025447751409, 0.1967485475322529, -0.8806659736677602, 0.24030921861990098, 0.2655827597641975}
	if d := maxAbsDiff(grads[0], want); d > 1e-12 {
		t.Errorf("∂/∂x = %v, Gorgonia's correctXGrad %v", grads[0], want)
	}
	xg, err := x.Grad()
	if err != nil {
		t.Fatal(err)
	}
	if d := maxAbsDiff(floats(xg), want); d > 1e-12 || math.IsNaN(d) {
		t.Errorf("x.Grad() = %v, Gorgonia's correctXGrad %v", floats(xg), want)
	}
}
