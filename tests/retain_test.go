package tests

import (
	"strings"
	"testing"

	"github.com/bulkad/bulkad"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// retainGraph builds cost = Σ h⊙h⊙r + Σ (x·w)⊙s with h = tanh(x·w): w lies behind the interior
// node h and is also read after it. With hIn set, h is that input node instead (the graph
// downstream of h, for finite differences of the cost in h).
func retainGraph(hIn bool) (g *G.ExprGraph, cost, w, h *G.Node) {
	g = G.NewGraph()
	val := func(name string, shape []int, v ...float64) *G.Node {
		return G.NewTensor(g, tensor.Float64, len(shape), G.WithShape(shape...), G.WithName(name),
			G.WithValue(tensor.New(tensor.WithShape(shape...), tensor.WithBacking(v))))
	}
	x := val("x", []int{3, 2}, 0.3, -0.5, 0.8, 0.1, -0.7, 0.4)
	w = val("w", []int{2, 2}, 0.9, -0.6, 0.4, 1.1)
	r := val("r", []int{3, 2}, 0.5, -1, 0.25, 2, -0.75, 1.5)
	s := val("s", []int{3, 2}, 1, 0.5, -0.5, 0.25, 2, -1)
	xw := G.Must(G.Mul(x, w))
	h = G.Must(G.Tanh(xw))
	if hIn {
		hv := h.Value()
		if hv == nil { // compute tanh(x·w) for the input's value
			m := G.NewTapeMachine(g)
			if err := m.RunAll(); err != nil {
				panic(err)
			}
			hv = h.Value()
			m.Close()
		}
		h = val("h", []int{3, 2}, valuesOf(hv)...)
	}
	a := G.Must(G.Sum(G.Must(G.HadamardProd(G.Must(G.HadamardProd(h, h)), r))))
	b := G.Must(G.Sum(G.Must(G.HadamardProd(xw, s))))
	return g, G.Must(G.Add(a, b)), w, h
}

// TestRetainInteriorWrt: asking for the gradient with respect to an interior node h next to w
// gives h its adjoint and leaves w's gradient the full derivative (PyTorch's retain_grad),
// checked on the TapeMachine against central differences: of the whole graph in w, and of the
// graph downstream of h in h.
func TestRetainInteriorWrt(t *testing.T) {
	g, cost, w, h := retainGraph(false)
	before := nodeSet(g)
	gs, err := bulkad.Grad(cost, w, h)
	if err != nil {
		t.Fatal(err)
	}
	if n := added(g, before)["tanh"]; n != 0 {
		t.Errorf("Grad added %d tanh nodes: the forward value of h is recomputed", n)
	}
	mustRunOnce(t, g, G.Nodes{w, h})
	got := [][]float64{valuesOf(gs[0].Value()), valuesOf(gs[1].Value())}

	ga, costA, wA, _ := retainGraph(false)
	fdW, _ := finiteDiff(t, built{g: ga, cost: costA, wrt: G.Nodes{wA}}, 1e-6, 100)
	gb, costB, _, hB := retainGraph(true)
	fdH, _ := finiteDiff(t, built{g: gb, cost: costB, wrt: G.Nodes{hB}}, 1e-6, 100)
	if d := maxRelDiff(got[:1], fdW); d > 1e-6 {
		t.Errorf("∂cost/∂w with h also asked for differs from central differences by %g\n got %v\n fd  %v", d, got[0], fdW[0])
	}
	if d := maxRelDiff(got[1:], fdH); d > 1e-6 {
		t.Errorf("∂cost/∂h differs from central differences downstream of h by %g\n got %v\n fd  %v", d, got[1], fdH[0])
	}
	hg, err := h.Grad()
	if err != nil {
		t.Fatalf("h.Grad(): %v", err)
	}
	if d := maxRelDiff([][]float64{valuesOf(hg)}, got[1:]); d != 0 {
		t.Errorf("h.Grad() differs from the gradient node by %g", d)
	}
	if _, err := h.Deriv().Value().(tensor.Tensor); !err {
		t.Errorf("h.Deriv() has no tensor value")
	}
}

// TestUnusedWrtZero: a wrt node the cost does not depend on gets a zero gradient, not an
// error (the package documentation's choice, as PyTorch's allow_unused with materialised
// gradients): an input, and an interior node off the cost's path.
func TestUnusedWrtZero(t *testing.T) {
	g, cost, w, _ := retainGraph(false)
	other := G.NewVector(g, tensor.Float64, G.WithShape(2), G.WithName("other"),
		G.WithValue(tensor.New(tensor.WithShape(2), tensor.WithBacking([]float64{1, 2}))))
	off := G.Must(G.Exp(w)) // interior, but the cost does not read it
	gs, err := bulkad.Grad(cost, other, off)
	if err != nil {
		t.Fatalf("unused wrt nodes: %v", err)
	}
	mustRunOnce(t, g, nil)
	for i, n := range gs {
		for _, v := range valuesOf(n.Value()) {
			if v != 0 {
				t.Errorf("gradient %d = %v, want zeros", i, valuesOf(n.Value()))
				break
			}
		}
	}
}

// TestStructureChangedAfterGrad: the gradient nodes are built from the graph's structure at
// Grad time. After UnsafeLet moves a slice on the differentiable path, they would scatter
// 2·(the new window's values) into the old window — a wrong gradient — so the run fails
// with an error naming the node instead (gorgonia.Grad's nodes follow the move). Before the
// move the gradient of cost = Σ x[0:2]² is 2x on rows 0–1 (hand derivation).
func TestStructureChangedAfterGrad(t *testing.T) {
	g := G.NewGraph()
	xv := []float64{1, 2, 3, 4, 5, 6, 7, 8}
	x := G.NewMatrix(g, tensor.Float64, G.WithShape(4, 2), G.WithName("x"),
		G.WithValue(tensor.New(tensor.WithShape(4, 2), tensor.WithBacking(append([]float64(nil), xv...)))))
	s := G.Must(G.Slice(x, G.S(0, 2)))
	cost := G.Must(G.Sum(G.Must(G.Square(s))))
	gs, err := bulkad.Grad(cost, x)
	if err != nil {
		t.Fatal(err)
	}
	m, err := runOnce(g, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []float64{2, 4, 6, 8, 0, 0, 0, 0}
	got := valuesOf(gs[0].Value())
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("gradient %v, want %v", got, want)
		}
	}
	m.Close()
	if err := G.UnsafeLet(s, G.S(2, 4)); err != nil {
		t.Fatal(err)
	}
	m2, err := runOnce(g, nil)
	if err == nil {
		m2.Close()
		t.Fatalf("the run after UnsafeLet succeeded; gradient %v", valuesOf(gs[0].Value()))
	}
	if !strings.Contains(err.Error(), "changed after Grad") {
		t.Errorf("error %q does not say the graph changed after Grad", err)
	}
}

// TestDataSliceFollowed: a slice of data off the differentiable path is only a value, so the
// gradient follows UnsafeLet on it: cost = Σ x[a:b]·w has ∂cost/∂w = the column sums of the
// window (hand derivation): rows 2–3 of x after the move, [5+7, 6+8].
func TestDataSliceFollowed(t *testing.T) {
	g := G.NewGraph()
	x := G.NewMatrix(g, tensor.Float64, G.WithShape(4, 2), G.WithName("x"),
		G.WithValue(tensor.New(tensor.WithShape(4, 2), tensor.WithBacking([]float64{1, 2, 3, 4, 5, 6, 7, 8}))))
	w := G.NewVector(g, tensor.Float64, G.WithShape(2), G.WithName("w"),
		G.WithValue(tensor.New(tensor.WithShape(2), tensor.WithBacking([]float64{0.5, -1}))))
	s := G.Must(G.Slice(x, G.S(0, 2)))
	cost := G.Must(G.Sum(G.Must(G.Mul(s, w))))
	gs, err := bulkad.Grad(cost, w)
	if err != nil {
		t.Fatal(err)
	}
	if err := G.UnsafeLet(s, G.S(2, 4)); err != nil {
		t.Fatal(err)
	}
	mustRunOnce(t, g, nil)
	if got := valuesOf(gs[0].Value()); got[0] != 12 || got[1] != 14 {
		t.Errorf("gradient %v, want [12 14]", got)
	}
}
