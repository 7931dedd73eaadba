package bulkad_test

import (
	"strings"
	"testing"

	"github.com/bulkad/bulkad"
	"github.com/bulkad/bulkad/examples/models"
	"github.com/bulkad/bulkad/examples/opgraphs"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// TestCheckSecondOrderZoo: the second-order check passes on every zoo model in both dtypes
// (the convnet's dropout makes it skip, which is no failure), with a row per wrt node.
func TestCheckSecondOrderZoo(t *testing.T) {
	for _, dt := range []tensor.Dtype{tensor.Float64, tensor.Float32} {
		zoo, err := models.Zoo(dt, 3)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range zoo {
			rep, err := bulkad.Check(m.Cost, m.Wrt, bulkad.WithMaxProbes(4), bulkad.WithSecondOrder())
			if err != nil {
				t.Errorf("%s %v: %v", m.Name, dt, err)
				continue
			}
			if !rep.OK() {
				t.Errorf("%s %v: not OK\n%s", m.Name, dt, rep)
			}
			if rep.SecondOrderSkipped {
				if m.Name != "convnet" || !strings.Contains(rep.SecondOrderError, "random") {
					t.Errorf("%s %v: second order skipped: %s", m.Name, dt, rep.SecondOrderError)
				}
				continue
			}
			if len(rep.SecondOrder) != len(m.Wrt) {
				t.Errorf("%s %v: %d second-order rows for %d wrt nodes\n%s", m.Name, dt, len(rep.SecondOrder), len(m.Wrt), rep)
			}
		}
	}
}

// TestCheckSecondOrderOps: every single-op graph passes the second-order check in float64 and
// float32.
func TestCheckSecondOrderOps(t *testing.T) {
	for _, dt := range []tensor.Dtype{tensor.Float64, tensor.Float32} {
		for _, c := range opgraphs.Cases() {
			gr, err := c.Build(dt, 5)
			if err != nil {
				t.Fatal(err)
			}
			rep, err := bulkad.Check(gr.Cost, gr.Wrt, bulkad.WithMaxProbes(4), bulkad.WithSecondOrder(), bulkad.WithGorgonia(false))
			if err != nil {
				t.Errorf("%s %v: %v", c.Name, dt, err)
				continue
			}
			if !rep.OK() || len(rep.SecondOrder) != len(gr.Wrt) {
				t.Errorf("%s %v: not OK\n%s", c.Name, dt, rep)
			}
		}
	}
}

// TestCheckSecondOrderGorgonia: the report records Gorgonia's Grad twice beside bulkad's: wrong
// on Σ x³ (it gives 3x instead of 6x along v), a panic on SoftMax; a defect in bulkad's second
// order would show as WRONG (the Hessian of Σ x³ is diag(6x), checked against differences).
func TestCheckSecondOrderGorgonia(t *testing.T) {
	g := G.NewGraph()
	x := G.NewVector(g, tensor.Float64, G.WithShape(3), G.WithName("x"), G.WithValue(tensor.New(tensor.WithShape(3), tensor.WithBacking([]float64{1, 2, 3}))))
	cost := G.Must(G.Sum(G.Must(G.Cube(x))))
	rep, err := bulkad.Check(cost, G.Nodes{x}, bulkad.WithSecondOrder())
	if err != nil {
		t.Fatal(err)
	}
	if !rep.OK() || len(rep.SecondOrder) != 1 || rep.SecondOrder[0].Gorgonia != "wrong" {
		t.Errorf("Σ x³: want bulkad ok and gorgonia wrong\n%s", rep)
	}
	if !strings.Contains(rep.String(), "second order") {
		t.Errorf("the report does not print the second-order table:\n%s", rep)
	}

	c, _ := opgraphs.Lookup("softmax")
	gr, err := c.Build(tensor.Float64, 5)
	if err != nil {
		t.Fatal(err)
	}
	rep, err = bulkad.Check(gr.Cost, gr.Wrt, bulkad.WithSecondOrder())
	if err != nil {
		t.Fatal(err)
	}
	if !rep.OK() || len(rep.SecondOrder) != 1 || !strings.HasPrefix(rep.SecondOrder[0].Gorgonia, "panics") {
		t.Errorf("softmax: want bulkad ok and gorgonia panics\n%s", rep)
	}
}
