package tests

import (
	"testing"

	"github.com/bulkad/bulkad/examples/models"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// zoo lists the model constructors at small sizes (the convnet without dropout: its mask is
// redrawn at every run, which finite differences and cross-graph comparisons cannot follow).
func zoo(dt tensor.Dtype) []struct {
	name string
	mk   func() (*models.Model, error)
} {
	return []struct {
		name string
		mk   func() (*models.Model, error)
	}{
		{"logreg", func() (*models.Model, error) { return models.LogReg(dt, 8, 5, seed) }},
		{"mlp", func() (*models.Model, error) { return models.MLP(dt, 4, []int{12, 8, 3}, seed) }},
		{"convnet", func() (*models.Model, error) { return models.ConvNet(dt, 2, 6, 6, 3, 4, 0, seed) }},
		{"rnn", func() (*models.Model, error) { return models.RNN(dt, 3, 4, 5, 4, seed) }},
		{"lstm", func() (*models.Model, error) { return models.LSTM(dt, 3, 4, 5, seed) }},
		{"attention", func() (*models.Model, error) { return models.Attention(dt, 5, 4, seed) }},
	}
}

func modelCtor(mk func() (*models.Model, error)) ctor {
	return func() (built, error) {
		m, err := mk()
		if err != nil {
			return built{}, err
		}
		return built{g: m.G, cost: m.Cost, wrt: m.Wrt}, nil
	}
}

// gradFunc is bulkad.Grad or gorgonia.Grad.
type gradFunc = func(*G.Node, ...*G.Node) (G.Nodes, error)

// trainingMachine builds a model with mk, adds its gradient nodes with grad and returns it with
// a TapeMachine binding the wrt nodes' dual values (what a solver reads), closed when the test
// or benchmark ends.
func trainingMachine(tb testing.TB, mk func() (*models.Model, error), grad gradFunc) (*models.Model, G.VM) {
	tb.Helper()
	m, err := mk()
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := grad(m.Cost, m.Wrt...); err != nil {
		tb.Fatal(err)
	}
	vm := G.NewTapeMachine(m.G, G.BindDualValues(m.Wrt...))
	tb.Cleanup(func() { vm.Close() })
	return m, vm
}

// eachZoo runs f on a fresh zoo model of dtype dt in a subtest per model.
func eachZoo(t *testing.T, dt tensor.Dtype, f func(t *testing.T, m *models.Model)) {
	for _, z := range zoo(dt) {
		t.Run(z.name, func(t *testing.T) {
			m, err := z.mk()
			if err != nil {
				t.Fatal(err)
			}
			f(t, m)
		})
	}
}

// TestZoo runs the acceptance checks on every zoo model (float64).
func TestZoo(t *testing.T) {
	for _, z := range zoo(tensor.Float64) {
		z := z
		t.Run(z.name, func(t *testing.T) { checkAll(t, modelCtor(z.mk), false) })
	}
}

// TestZooFloat32 compares bulkad and Gorgonia in float32 (to float32 accuracy).
func TestZooFloat32(t *testing.T) {
	for _, z := range zoo(tensor.Float32) {
		z := z
		t.Run(z.name, func(t *testing.T) {
			b1, err := modelCtor(z.mk)()
			if err != nil {
				t.Fatal(err)
			}
			tape, _, _ := bulkadTape(t, b1)
			b2, _ := modelCtor(z.mk)()
			gg, err := gorgoniaTape(b2)
			if err != nil {
				t.Fatalf("gorgonia.Grad: %v", err)
			}
			if d := maxRelDiff(tape, gg); d > 1e-4 {
				t.Errorf("float32: bulkad differs from gorgonia.Grad by %g", d)
			}
		})
	}
}

// TestTrainingEquivalence: 20 VanillaSolver steps with gorgonia.Grad and with bulkad.Grad, on
// separate graphs from the same initial weights, give the same losses.
func TestTrainingEquivalence(t *testing.T) {
	for _, z := range zoo(tensor.Float64)[1:3] { // mlp, convnet
		z := z
		t.Run(z.name, func(t *testing.T) {
			losses := func(grad gradFunc) []float64 {
				m, vm := trainingMachine(t, z.mk, grad)
				solver := G.NewVanillaSolver(G.WithLearnRate(0.1))
				var ls []float64
				for step := 0; step < 20; step++ {
					if err := vm.RunAll(); err != nil {
						t.Fatal(err)
					}
					ls = append(ls, valuesOf(m.Cost.Value())[0])
					if err := solver.Step(G.NodesToValueGrads(m.Wrt)); err != nil {
						t.Fatal(err)
					}
					vm.Reset()
				}
				return ls
			}
			theirs := losses(G.Grad)
			ours := losses(bulkadGrad)
			if ours[19] >= ours[0] {
				t.Errorf("bulkad: loss did not decrease: %v", ours)
			}
			for i := range ours {
				if d := ours[i] - theirs[i]; d > 1e-9 || d < -1e-9 {
					t.Errorf("step %d: loss %.15g (bulkad) vs %.15g (gorgonia)", i, ours[i], theirs[i])
				}
			}
			t.Logf("losses: %.6g → %.6g", ours[0], ours[19])
		})
	}
}
