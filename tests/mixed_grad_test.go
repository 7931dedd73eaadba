package tests

import (
	"strings"
	"testing"

	"github.com/bulkad/bulkad"
	"github.com/bulkad/bulkad/examples/opgraphs"
	G "gorgonia.org/gorgonia"
)

// TestMixedAutodiffRefused: gorgonia.Grad and then bulkad.Grad on the same cost and wrt node
// would register two gradient nodes that BindDualValues adds (x.Grad() doubled): bulkad.Grad
// refuses with an error naming the node, and leaves x.Grad() what gorgonia.Grad gives (3x² for
// Σ x³, by hand) — raising coarsely and per operation alike.
func TestMixedAutodiffRefused(t *testing.T) {
	for _, mode := range []bulkad.RaiseMode{bulkad.RaisePlan, bulkad.RaiseOps} {
		t.Run(string(mode), func(t *testing.T) { mixedRefused(t, bulkad.Options{Raise: mode}) })
	}
}

func mixedRefused(t *testing.T, o bulkad.Options) {
	g := G.NewGraph()
	x := G.NewVector(g, G.Float64, G.WithShape(2), G.WithName("x"), G.WithValue(opgraphs.Dense(G.Float64, []int{2}, []float64{1, 2})))
	cost := G.Must(G.Sum(G.Must(G.Cube(x))))
	if _, err := G.Grad(cost, x); err != nil {
		t.Fatal(err)
	}
	_, err := o.Grad(cost, x)
	if err == nil || !strings.Contains(err.Error(), `node "x" already has a gradient node registered by another autodiff`) {
		t.Fatalf("error %v, want one naming x", err)
	}
	mustRunOnce(t, g, G.Nodes{x})
	gv, err := x.Grad()
	if err != nil {
		t.Fatal(err)
	}
	if got := valuesOf(gv); got[0] != 3 || got[1] != 12 {
		t.Errorf("x.Grad() = %v, want [3 12]", got)
	}
}
