package tests

import (
	"testing"

	"github.com/bulkad/bulkad"
	"github.com/bulkad/bulkad/adapter"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// gradAllGraph: cost = Σ (tanh(x·w + b)² ⊙ r) / 2 with intermediate nodes on the path.
func gradAllGraph() (g *G.ExprGraph, cost *G.Node, wrt G.Nodes) {
	g = G.NewGraph()
	val := func(name string, shape []int, v ...float64) *G.Node {
		return G.NewTensor(g, tensor.Float64, len(shape), G.WithShape(shape...), G.WithName(name),
			G.WithValue(tensor.New(tensor.WithShape(shape...), tensor.WithBacking(v))))
	}
	x := val("x", []int{3, 2}, 0.3, -0.5, 0.8, 0.1, -0.7, 0.4)
	w := val("w", []int{2, 2}, 0.9, -0.6, 0.4, 1.1)
	b := val("b", []int{3, 2}, 0.1, 0.2, -0.3, 0.05, 0, -0.1)
	r := val("r", []int{3, 2}, 0.5, -1, 0.25, 2, -0.75, 1.5)
	y := G.Must(G.Tanh(G.Must(G.Add(G.Must(G.Mul(x, w)), b))))
	z := G.Must(G.HadamardProd(G.Must(G.Square(y)), r))
	cost = G.Must(G.Div(G.Must(G.Sum(z)), G.NewConstant(2.0)))
	return g, cost, G.Nodes{w, b}
}

// TestGradAllIntermediate: after GradAll, every intermediate node's Grad() equals the one
// gorgonia.Grad gives on an identical graph (Gorgonia is right on these ops), and the wrt
// gradients match central differences.
func TestGradAllIntermediate(t *testing.T) {
	g1, cost1, wrt1 := gradAllGraph()
	path, err := pathOf(cost1, wrt1)
	if err != nil {
		t.Fatal(err)
	}
	gs, err := bulkad.GradAll(cost1, wrt1...)
	if err != nil {
		t.Fatal(err)
	}
	if len(gs) != len(wrt1) {
		t.Fatalf("%d gradients for %d wrt nodes", len(gs), len(wrt1))
	}
	mustRunOnce(t, g1, wrt1)
	g2, cost2, wrt2 := gradAllGraph()
	if _, err := G.Grad(cost2, wrt2...); err != nil {
		t.Fatal(err)
	}
	mustRunOnce(t, g2, wrt2, G.TraceExec())
	all2 := g2.AllNodes()
	if len(path) < 5 {
		t.Fatalf("path has %d nodes", len(path))
	}
	for _, n := range path {
		got, err := n.Grad()
		if err != nil {
			t.Errorf("%v.Grad(): %v", n, err)
			continue
		}
		want, err := all2[n.ID()].Grad()
		if err != nil {
			t.Fatalf("Gorgonia: %v.Grad(): %v", all2[n.ID()], err)
		}
		if d := maxRelDiff([][]float64{valuesOf(got)}, [][]float64{valuesOf(want)}); d > 1e-12 {
			t.Errorf("%v.Grad() = %v, Gorgonia %v", n, valuesOf(got), valuesOf(want))
		}
	}
	var tape [][]float64
	for _, n := range gs {
		tape = append(tape, valuesOf(n.Value()))
	}
	g3, cost3, wrt3 := gradAllGraph()
	fd, idx := finiteDiff(t, built{g: g3, cost: cost3, wrt: wrt3}, 1e-6, 100)
	if d := maxRelDiff(pick(tape, idx), fd); d > 1e-6 {
		t.Errorf("wrt gradients differ from central differences by %g", d)
	}
}

func pathOf(cost *G.Node, wrt G.Nodes) (G.Nodes, error) { return adapter.Path(cost, wrt...) }
