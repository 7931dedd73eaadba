package tests

import (
	"strings"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/bulkad/bulkad"
	"github.com/bulkad/bulkad/accel"
	"github.com/bulkad/bulkad/examples/models"
)

// TestEngineZoo runs every zoo model with accel.Engine as the machine's engine: the cost is
// the default engine's (to rounding), and the bulkad gradients the machine computes match
// central finite differences of the default engine's forward pass.
func TestEngineZoo(t *testing.T) {
	for _, z := range zoo(tensor.Float64) {
		z := z
		t.Run(z.name, func(t *testing.T) {
			ref, err := z.mk()
			if err != nil {
				t.Fatal(err)
			}
			mustRunOnce(t, ref.G, nil)
			want := valuesOf(ref.Cost.Value())[0]

			m, err := z.mk()
			if err != nil {
				t.Fatal(err)
			}
			gs, err := bulkad.Grad(m.Cost, m.Wrt...)
			if err != nil {
				t.Fatal(err)
			}
			mustRunOnce(t, m.G, m.Wrt, G.WithEngine(accel.Engine{}))
			if got := valuesOf(m.Cost.Value())[0]; !near(got, want, 1e-13) {
				t.Errorf("cost with accel.Engine %v, with Gorgonia's engine %v", got, want)
			}
			var grads [][]float64
			for _, g := range gs {
				grads = append(grads, valuesOf(g.Value()))
			}
			b, err := modelCtor(z.mk)()
			if err != nil {
				t.Fatal(err)
			}
			fd, idx := finiteDiff(t, b, 1e-5, 24)
			if d := maxRelDiff(pick(grads, idx), fd); d > 1e-6 {
				t.Errorf("gradients with accel.Engine differ from central finite differences by %g", d)
			}
		})
	}
}

// TestEngineRuns: the engine really runs the attention's softmax and the convnet's
// transposes (the values the machine gives those nodes carry it).
func TestEngineRuns(t *testing.T) {
	for _, c := range []struct {
		prefix string // of the op's String
		mk     func() (*models.Model, error)
	}{
		{"Softmax{", func() (*models.Model, error) { return models.Attention(tensor.Float32, 5, 4, seed) }},
		{"Aᵀ{", func() (*models.Model, error) { return models.ConvNet(tensor.Float32, 2, 6, 6, 3, 4, 0, seed) }},
	} {
		m, err := c.mk()
		if err != nil {
			t.Fatal(err)
		}
		mustRunOnce(t, m.G, nil, G.WithEngine(accel.Engine{}))
		found := 0
		for _, n := range m.G.AllNodes() {
			if n.Op() == nil || !strings.HasPrefix(n.Op().String(), c.prefix) {
				continue
			}
			found++
			d, ok := n.Value().(*tensor.Dense)
			if !ok {
				t.Fatalf("%v: value %T", n, n.Value())
			}
			if _, ok := d.Engine().(accel.Engine); !ok {
				t.Errorf("%s: %v: engine %T, want accel.Engine", m.Name, n, d.Engine())
			}
		}
		if found == 0 {
			t.Errorf("%s: no %s… node", m.Name, c.prefix)
		}
	}
}

func near(a, b, tol float64) bool {
	d := a - b
	if d < 0 {
		d = -d
	}
	s := b
	if s < 0 {
		s = -s
	}
	return d <= tol*(1+s)
}

// TestEngineEverywhere: after a run with bulkad's gradients on accel.Engine, every tensor
// value of the graph that Gorgonia or raise allocated carries the engine, so the operations
// reading them dispatch on it (raise's ops give their outputs their inputs' engine).
func TestEngineEverywhere(t *testing.T) {
	eachZoo(t, tensor.Float32, func(t *testing.T, m *models.Model) {
		if _, err := bulkad.Grad(m.Cost, m.Wrt...); err != nil {
			t.Fatal(err)
		}
		mustRunOnce(t, m.G, m.Wrt, G.WithEngine(accel.Engine{}))
		for _, n := range m.G.AllNodes() {
			d, ok := n.Value().(*tensor.Dense)
			if !ok || n.Op() == nil {
				continue
			}
			if _, ok := d.Engine().(accel.Engine); !ok {
				t.Errorf("%v (%v): engine %T", n, n.Op(), d.Engine())
			}
		}
	})
}
