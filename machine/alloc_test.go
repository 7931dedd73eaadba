package machine

import (
	"fmt"
	"testing"

	"github.com/bulkad/bulkad/examples/models"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// stepAllocs is what a steady-state step of a lean, reusing machine may allocate for each
// scalar node it gives a value (the loss, the gradient of a scalar learnable): a new scalar
// value (a caller may keep the loss of each step, so it is never overwritten) and the copy of
// its shape Gorgonia makes when the value is bound.
const stepAllocs = 2

// TestSteadyStateAllocations: with ReuseValues and Lean(cost), a step after the first few
// allocates nothing but its scalar values (stepAllocs each), on one thread (testing.AllocsPerRun
// runs at GOMAXPROCS 1: a kernel split across goroutines allocates their closures), for the
// zoo plus a transformer and an unrolled LSTM (Gorgonia slices: their windows are checked
// every run), in both float dtypes. The dual values keep accumulating in place.
func TestSteadyStateAllocations(t *testing.T) {
	cases := append(leanZoo(), []struct {
		name string
		mk   build
	}{
		{"transformer", func(dt tensor.Dtype) (*models.Model, error) { return models.Transformer(dt, 2, 4, 8, 2, 16, 1, 7) }},
		{"lstmseq", func(dt tensor.Dtype) (*models.Model, error) { return models.LSTMSeq(dt, 2, 3, 4, 3, 8) }},
	}...)
	for _, z := range cases {
		for _, d := range dtypes {
			t.Run(fmt.Sprintf("%s %v", z.name, d.dt), func(t *testing.T) {
				m, err := z.mk(d.dt)
				if err != nil {
					t.Fatal(err)
				}
				gradWith(t, m, false)
				vm, err := New(m.G, BindDualValues(m.Wrt...), ReuseValues(), Lean(m.Cost))
				if err != nil {
					t.Fatal(err)
				}
				step := func() {
					vm.Reset()
					if err := vm.RunAll(); err != nil {
						t.Fatal(err)
					}
				}
				for range 3 {
					step()
				}
				w := m.Wrt[0]
				g0, err := w.Grad()
				if err != nil {
					t.Fatal(err)
				}
				before := append([]float64(nil), floats(t, g0)...)
				scalars := 0 // the scalar nodes a lean run gives values: new ones each run
				for _, n := range m.G.AllNodes() {
					if n.IsScalar() && n.Op() != nil && (n == m.Cost || len(n.DerivOf()) > 0) {
						scalars++
					}
				}
				if a := testing.AllocsPerRun(4, step); a > float64(stepAllocs*scalars) {
					t.Errorf("a step allocated %v times, want at most %d (%d for each of the %d scalar values: the loss, scalar gradients)", a, stepAllocs*scalars, stepAllocs, scalars)
				}
				// AllocsPerRun ran 5 steps: the dual value is the one object, 5 gradients more
				g1, err := w.Grad()
				if err != nil {
					t.Fatal(err)
				}
				if g1 != g0 {
					t.Fatalf("%v's dual value is a new object after the steps", w)
				}
				after := floats(t, g1)
				for i, b := range before {
					if want := b * 8 / 3; !near(after[i], want, 1e-9+d.tol*10*max(1, abs(want))) {
						t.Fatalf("%v's dual value[%d] = %v after 8 steps, want 8/3 of %v after 3 (accumulated in place)", w, i, after[i], b)
					}
				}
			})
		}
	}
}

func near(a, b, tol float64) bool { return abs(a-b) <= tol }

func abs(v float64) float64 {
	if v < 0 {
		return -v
	}
	return v
}

// TestInputsRebound: a reusing machine reads each input afresh: bound to a new tensor
// (gorgonia.Let), changed in place, or a scalar input given a new value. The graph is
// cost = s · Σ x ⊙ w with gradient s · x with respect to w, checked against those formulas
// after every change.
func TestInputsRebound(t *testing.T) {
	for _, dt := range []tensor.Dtype{G.Float64, G.Float32} {
		t.Run(dt.String(), func(t *testing.T) {
			g := G.NewGraph()
			x := G.NewMatrix(g, dt, G.WithShape(2, 3), G.WithName("x"))
			w := G.NewMatrix(g, dt, G.WithShape(2, 3), G.WithName("w"))
			s := G.NewScalar(g, dt, G.WithName("s"))
			xw := G.Must(G.HadamardProd(x, w))
			cost := G.Must(G.Mul(G.Must(G.Sum(xw)), s))
			gradWith(t, &models.Model{G: g, Cost: cost, Wrt: G.Nodes{w}}, false)
			vm, err := New(g, BindDualValues(w), ReuseValues(), Lean(cost))
			if err != nil {
				t.Fatal(err)
			}
			xs, ws := []float64{1, 2, 3, 4, 5, 6}, []float64{0.5, -1, 2, 0.25, 1, -2}
			let := func(n *G.Node, v []float64) {
				var val G.Value = tensor.New(tensor.WithShape(2, 3), tensor.WithBacking(v))
				if dt == G.Float32 {
					v32 := make([]float32, len(v))
					for i, e := range v {
						v32[i] = float32(e)
					}
					val = tensor.New(tensor.WithShape(2, 3), tensor.WithBacking(v32))
				}
				if err := G.Let(n, val); err != nil {
					t.Fatal(err)
				}
			}
			letScalar := func(v float64) {
				var val G.Value = G.NewF64(v)
				if dt == G.Float32 {
					val = G.NewF32(float32(v))
				}
				if err := G.Let(s, val); err != nil {
					t.Fatal(err)
				}
			}
			let(w, ws)
			let(x, xs)
			letScalar(2)
			check := func(what string, xv []float64, sv float64) {
				t.Helper()
				// the dual value accumulates: zero it so that each run shows its own gradient
				dv, err := w.Grad()
				if err == nil && dv != nil {
					for i := range floats(t, dv) {
						setFloat(dv, i, 0)
					}
				}
				vm.Reset()
				if err := vm.RunAll(); err != nil {
					t.Fatal(err)
				}
				want := 0.0
				for i := range xv {
					want += xv[i] * ws[i]
				}
				want *= sv
				if got := floats(t, cost.Value())[0]; !near(got, want, 1e-5*max(1, abs(want))) {
					t.Errorf("%s: cost %v, want %v", what, got, want)
				}
				dv, err = w.Grad()
				if err != nil {
					t.Fatal(err)
				}
				for i, gv := range floats(t, dv) {
					if want := sv * xv[i]; !near(gv, want, 1e-5*max(1, abs(want))) {
						t.Errorf("%s: ∂cost/∂w[%d] = %v, want %v", what, i, gv, want)
					}
				}
			}
			check("first run", xs, 2)
			check("same values", xs, 2)
			xs2 := []float64{-1, 0, 7, 2, 2, 1}
			let(x, xs2)
			check("x bound to a new tensor", xs2, 2)
			setFloat(x.Value(), 4, -3)
			xs2[4] = -3
			check("x changed in place", xs2, 2)
			letScalar(-0.5)
			check("s rebound", xs2, -0.5)
			// a scalar held by a dense tensor, changed in place: Flat copies its element, so
			// the copy must not be kept from one run to the next
			var sd *tensor.Dense
			if dt == G.Float64 {
				sd = tensor.New(tensor.FromScalar(1.5))
			} else {
				sd = tensor.New(tensor.FromScalar(float32(1.5)))
			}
			if err := G.Let(s, sd); err != nil {
				t.Fatal(err)
			}
			check("s a dense scalar", xs2, 1.5)
			if dt == G.Float64 {
				sd.Float64s()[0] = 4
			} else {
				sd.Float32s()[0] = 4
			}
			check("s a dense scalar changed in place", xs2, 4)
		})
	}
}

// setFloat sets element i of a dense float tensor.
func setFloat(v G.Value, i int, e float64) {
	switch d := v.(*tensor.Dense).Data().(type) {
	case []float64:
		d[i] = e
	case []float32:
		d[i] = float32(e)
	}
}
