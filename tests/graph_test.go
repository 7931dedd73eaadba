package tests

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"testing"

	"github.com/bulkad/bulkad"
	"github.com/bulkad/bulkad/examples/opgraphs"
	"github.com/bulkad/bulkad/raise"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

func bulkadGrad(cost *G.Node, wrt ...*G.Node) (G.Nodes, error) { return bulkad.Grad(cost, wrt...) }

// opKind classifies a node for the node-economy count.
func opKind(n *G.Node) string {
	op := n.Op()
	if op == nil {
		return "input"
	}
	if o, ok := op.(*raise.Op); ok {
		return o.Kind()
	}
	s := op.String()
	switch {
	case strings.Contains(s, "×"):
		return "matmul"
	case strings.HasPrefix(s, "const"):
		return "const"
	}
	if i := strings.IndexAny(s, "[( "); i > 0 {
		s = s[:i]
	}
	return s
}

func added(g *G.ExprGraph, before map[*G.Node]bool) map[string]int {
	m := map[string]int{}
	for _, n := range g.AllNodes() {
		if !before[n] {
			m[opKind(n)]++
		}
	}
	return m
}

func nodeSet(g *G.ExprGraph) map[*G.Node]bool {
	s := map[*G.Node]bool{}
	for _, n := range g.AllNodes() {
		s[n] = true
	}
	return s
}

func fmtCounts(m map[string]int) string {
	var ks []string
	total := 0
	for k, v := range m {
		ks = append(ks, k)
		total += v
	}
	sort.Strings(ks)
	var parts []string
	for _, k := range ks {
		parts = append(parts, fmt.Sprintf("%s:%d", k, m[k]))
	}
	return fmt.Sprintf("%d nodes {%s}", total, strings.Join(parts, " "))
}

// TestNodeEconomy counts the nodes each Grad adds to the MLP graph, by op kind: bulkad adds
// no forward-pass op (no softmax, no forward matmul; the only exp is the one inside the
// softmax's derivative, which Gorgonia's SoftmaxDiff computes internally too) and no more
// matmuls than Gorgonia's Grad.
func TestNodeEconomy(t *testing.T) {
	mk := zoo(tensor.Float64)[1].mk
	m1, err := mk()
	if err != nil {
		t.Fatal(err)
	}
	pre := nodeSet(m1.G)
	forward := map[string]int{}
	for n := range pre {
		forward[opKind(n)]++
	}
	if _, err := G.Grad(m1.Cost, m1.Wrt...); err != nil {
		t.Fatal(err)
	}
	theirs := added(m1.G, pre)
	m2, _ := mk()
	pre2 := nodeSet(m2.G)
	if _, err := bulkad.Grad(m2.Cost, m2.Wrt...); err != nil {
		t.Fatal(err)
	}
	ours := added(m2.G, pre2)
	t.Logf("forward graph:          %s", fmtCounts(forward))
	t.Logf("gorgonia.Grad adds:     %s", fmtCounts(theirs))
	t.Logf("bulkad.Grad adds:       %s", fmtCounts(ours))
	if ours["matmul"] > theirs["matmul"] {
		t.Errorf("bulkad adds %d matmuls, Gorgonia %d", ours["matmul"], theirs["matmul"])
	}
	// A backward pass of an MLP with L layers needs 2L-1 matmuls (no gradient for the data).
	if want := 2*(len(m2.Wrt)/2) - 1; ours["matmul"] > want {
		t.Errorf("bulkad adds %d matmuls, a backward pass needs %d", ours["matmul"], want)
	}
	for k, n := range ours {
		if strings.HasPrefix(strings.ToLower(k), "softmax") || k == "ln" || k == "log" {
			t.Errorf("bulkad recomputes forward op %s (%d nodes)", k, n)
		}
	}
	if ours["exp"] > forward["Softmax{-1,"] {
		t.Errorf("bulkad adds %d exp nodes for %d softmax", ours["exp"], forward["Softmax{-1,"])
	}
}

// TestGradTwice: two costs on one graph, each differentiated with bulkad.Grad, give the same
// gradients as on separate graphs.
func TestGradTwice(t *testing.T) {
	mk := zoo(tensor.Float64)[1].mk
	m, err := mk()
	if err != nil {
		t.Fatal(err)
	}
	w := m.Wrt[0]
	sq, _ := G.Square(w)
	cost2, err := G.Sum(sq)
	if err != nil {
		t.Fatal(err)
	}
	g1, err := bulkad.Grad(m.Cost, m.Wrt...)
	if err != nil {
		t.Fatal(err)
	}
	g2, err := bulkad.Grad(cost2, w)
	if err != nil {
		t.Fatal(err)
	}
	mustRunOnce(t, m.G, nil)
	// Reference for cost 1: a separate graph.
	ref, _ := mk()
	refTape, _, _ := bulkadTape(t, built{g: ref.G, cost: ref.Cost, wrt: ref.Wrt})
	var got [][]float64
	for _, n := range g1 {
		got = append(got, valuesOf(n.Value()))
	}
	if d := maxRelDiff(got, refTape); d > 1e-12 {
		t.Errorf("first cost's gradients changed by a second Grad: %g", d)
	}
	// d/dw Σ w² = 2w (hand derivation).
	wv := valuesOf(w.Value())
	gv := valuesOf(g2[0].Value())
	for i := range wv {
		if math.Abs(gv[i]-2*wv[i]) > 1e-12 {
			t.Fatalf("second cost: gradient %v, want 2w = %v", gv[i], 2*wv[i])
		}
	}
}

// TestNonInputWrt: bulkad differentiates with respect to an interior node (Gorgonia refuses):
// cost = Σ sigmoid(z) with z = x·w gives ∂cost/∂z = s(1-s) (hand derivation). Asking for z
// does not cut the graph (PyTorch's retain_grad): w, behind z, keeps its full gradient
// xᵀ s(1-s) whether or not z is asked for too, and z.Grad() reads z's adjoint.
func TestNonInputWrt(t *testing.T) {
	g := G.NewGraph()
	x := G.NewMatrix(g, tensor.Float64, G.WithShape(3, 2), G.WithName("x"),
		G.WithValue(tensor.New(tensor.WithShape(3, 2), tensor.WithBacking([]float64{0.1, -0.4, 0.7, 0.2, -0.3, 0.5}))))
	w := G.NewVector(g, tensor.Float64, G.WithShape(2), G.WithName("w"),
		G.WithValue(tensor.New(tensor.WithShape(2), tensor.WithBacking([]float64{1.5, -2}))))
	z, err := G.Mul(x, w)
	if err != nil {
		t.Fatal(err)
	}
	s, _ := G.Sigmoid(z)
	cost, _ := G.Sum(s)
	if _, err := func() (gs G.Nodes, err error) {
		defer func() {
			if r := recover(); r != nil {
				err = fmt.Errorf("panic: %v", r)
			}
		}()
		h := G.NewGraph()
		hx := G.NewVector(h, tensor.Float64, G.WithShape(2), G.WithName("x"))
		hz, _ := G.Square(hx)
		hc, _ := G.Sum(hz)
		return G.Grad(hc, hz)
	}(); err == nil {
		t.Log("note: gorgonia.Grad accepted a non-input wrt node")
	}
	gs, err := bulkad.Grad(cost, z, w)
	if err != nil {
		t.Fatal(err)
	}
	gw1, err := bulkad.Grad(cost, w)
	if err != nil {
		t.Fatal(err)
	}
	mustRunOnce(t, g, G.Nodes{z, w})
	zv := valuesOf(z.Value())
	gz := valuesOf(gs[0].Value())
	xv := valuesOf(x.Value())
	var gw [2]float64
	for i, v := range zv {
		sg := 1 / (1 + math.Exp(-v))
		want := sg * (1 - sg)
		if math.Abs(gz[i]-want) > 1e-14 {
			t.Errorf("∂cost/∂z[%d] = %v, want %v", i, gz[i], want)
		}
		gw[0] += want * xv[2*i]
		gw[1] += want * xv[2*i+1]
	}
	for name, got := range map[string][]float64{"Grad(cost, z, w)": valuesOf(gs[1].Value()), "Grad(cost, w)": valuesOf(gw1[0].Value())} {
		if math.Abs(got[0]-gw[0]) > 1e-14 || math.Abs(got[1]-gw[1]) > 1e-14 {
			t.Errorf("%s: ∂cost/∂w = %v, want %v", name, got, gw)
		}
	}
	dz, err := z.Grad()
	if err != nil {
		t.Fatalf("z.Grad(): %v", err)
	}
	for i, v := range valuesOf(dz) {
		if v != gz[i] {
			t.Errorf("z.Grad() = %v, want the gradient node's value %v", valuesOf(dz), gz)
			break
		}
	}
}

// TestBadInputs: errors, no panic, graph unchanged.
func TestBadInputs(t *testing.T) {
	g := G.NewGraph()
	x := G.NewVector(g, tensor.Float64, G.WithShape(4), G.WithName("x"),
		G.WithValue(tensor.New(tensor.WithShape(4), tensor.WithBacking([]float64{0.1, 0.2, 0.3, 0.4}))))
	sq, _ := G.Square(x)
	cost, _ := G.Sum(sq)
	other := G.NewGraph()
	y := G.NewVector(other, tensor.Float64, G.WithShape(4), G.WithName("y"))
	un, err := G.ApplyOp(userOp{opgraphs.UserOp{Name: "userOp", Inputs: 1}}, x) // a user-defined op: no translation exists
	if err != nil {
		t.Fatal(err)
	}
	unCost, _ := G.Sum(un)
	cases := []struct {
		name string
		cost *G.Node
		wrt  []*G.Node
	}{
		{"nil cost", nil, []*G.Node{x}},
		{"non-scalar cost", sq, []*G.Node{x}},
		{"wrt from another graph", cost, []*G.Node{y}},
		{"nil wrt", cost, []*G.Node{nil}},
		{"no wrt", cost, nil},
		{"unsupported op (user-defined)", unCost, []*G.Node{x}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := len(g.AllNodes())
			var err error
			func() {
				defer func() {
					if r := recover(); r != nil {
						t.Fatalf("panic: %v", r)
					}
				}()
				_, err = bulkad.Grad(c.cost, c.wrt...)
			}()
			if err == nil {
				t.Fatal("no error")
			}
			t.Logf("error: %v", err)
			if after := len(g.AllNodes()); after != before {
				t.Errorf("graph changed from %d to %d nodes", before, after)
			}
		})
	}
}

// userOp is a user-defined Gorgonia op (the identity) that bulkad cannot know.
type userOp struct{ opgraphs.UserOp }

func (userOp) Do(vs ...G.Value) (G.Value, error) { return vs[0], nil }

// TestRepeatedAndUnrelatedWrt: a wrt node given twice gets the same gradient node at both
// positions (registered once, so BindDualValues does not double it); a wrt node the cost does
// not depend on gets zeros. cost = Σ x², so ∂cost/∂x = 2x.
func TestRepeatedAndUnrelatedWrt(t *testing.T) {
	g := G.NewGraph()
	x := G.NewVector(g, tensor.Float64, G.WithShape(3), G.WithName("x"),
		G.WithValue(tensor.New(tensor.WithShape(3), tensor.WithBacking([]float64{1, -2, 3}))))
	u := G.NewVector(g, tensor.Float64, G.WithShape(3), G.WithName("u"),
		G.WithValue(tensor.New(tensor.WithShape(3), tensor.WithBacking([]float64{4, 5, 6}))))
	cost := G.Must(G.Sum(G.Must(G.Square(x))))
	gs, err := bulkad.Grad(cost, x, u, x)
	if err != nil {
		t.Fatal(err)
	}
	if gs[0] != gs[2] {
		t.Errorf("repeated wrt: two different gradient nodes")
	}
	mustRunOnce(t, g, G.Nodes{x, u})
	want := []float64{2, -4, 6}
	dx, _ := x.Grad()
	for name, got := range map[string][]float64{"node": valuesOf(gs[0].Value()), "x.Grad()": valuesOf(dx)} {
		for i := range want {
			if got[i] != want[i] {
				t.Errorf("%s: ∂cost/∂x = %v, want %v", name, got, want)
				break
			}
		}
	}
	for _, v := range valuesOf(gs[1].Value()) {
		if v != 0 {
			t.Errorf("∂cost/∂u = %v, want zeros", valuesOf(gs[1].Value()))
			break
		}
	}
}
