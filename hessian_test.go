package bulkad_test

import (
	"math"
	"strings"
	"testing"

	"github.com/bulkad/bulkad"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// TestHessianVectorErrors: bad arguments give errors naming the problem, and leave no panic.
func TestHessianVectorErrors(t *testing.T) {
	g := G.NewGraph()
	x := vec64(g, "x", 1, 2, 3)
	v2 := vec64(g, "v2", 1, 2)
	v3 := vec64(g, "v3", 1, 2, 3)
	cost := G.Must(G.Sum(G.Must(G.Cube(x))))
	other := vec64(G.NewGraph(), "o", 1, 2, 3)
	f32 := G.NewVector(g, tensor.Float32, G.WithShape(3), G.WithName("f"), G.WithValue(tensor.New(tensor.WithShape(3), tensor.WithBacking([]float32{1, 2, 3}))))
	cases := []struct {
		name string
		wrt  G.Nodes
		v    G.Nodes
		want string
	}{
		{"count", G.Nodes{x}, G.Nodes{v3, v3}, "2 direction nodes for 1 wrt"},
		{"shape", G.Nodes{x}, G.Nodes{v2}, "is float64 (2)"},
		{"dtype", G.Nodes{x}, G.Nodes{f32}, "float32"},
		{"nil", G.Nodes{x}, G.Nodes{nil}, "direction node 0 is nil"},
		{"graph", G.Nodes{x}, G.Nodes{other}, "another graph"},
		{"repeat", G.Nodes{x, x}, G.Nodes{v3, v3}, "repeats wrt node 0"},
		{"no wrt", nil, nil, "no wrt nodes"},
	}
	for _, c := range cases {
		_, err := bulkad.HessianVector(cost, c.wrt, c.v)
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "bulkad: hessian-vector: ") {
			t.Errorf("%s: error %v, want one containing %q", c.name, err, c.want)
		}
	}
}

// TestHessianVectorIntermediate: with respect to an intermediate node h = x ⊙ x of
// cost = Σ tanh(h) ⊙ h, H·v (∂²cost/∂h² = diag(2 sech² h − 2 tanh h · sech² h · h), by hand:
// d/dh [tanh h + h sech² h] = sech² h + sech² h − 2 h sech² h tanh h) along v.
func TestHessianVectorIntermediate(t *testing.T) {
	g := G.NewGraph()
	xs := []float64{0.5, -0.8, 1.1}
	x := vec64(g, "x", xs...)
	v := vec64(g, "v", 1, -2, 0.5)
	h := G.Must(G.HadamardProd(x, x))
	cost := G.Must(G.Sum(G.Must(G.HadamardProd(G.Must(G.Tanh(h)), h))))
	hv, err := bulkad.HessianVector(cost, G.Nodes{h}, G.Nodes{v})
	if err != nil {
		t.Fatal(err)
	}
	runGraph(t, g)
	got := hv[0].Value().Data().([]float64)
	vs := []float64{1, -2, 0.5}
	for i, xv := range xs {
		hh := xv * xv
		th := math.Tanh(hh)
		s2 := 1 - th*th
		want := (2*s2 - 2*hh*s2*th) * vs[i]
		if math.Abs(got[i]-want) > 1e-12 {
			t.Errorf("entry %d: %.15g, by hand %.15g", i, got[i], want)
		}
	}
}
