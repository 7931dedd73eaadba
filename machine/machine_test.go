package machine

import (
	"math"
	"runtime"
	"strings"
	"testing"

	"github.com/bulkad/bulkad"
	"github.com/bulkad/bulkad/examples/models"
	"github.com/bulkad/bulkad/internal/testutil"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// build makes a model; the same arguments give the same graph (node IDs) and values.
type build func(dt tensor.Dtype) (*models.Model, error)

var zoo = []struct {
	name string
	mk   build
}{
	{"logreg", func(dt tensor.Dtype) (*models.Model, error) { return models.LogReg(dt, 6, 4, 1) }},
	{"mlp", func(dt tensor.Dtype) (*models.Model, error) { return models.MLP(dt, 5, []int{7, 6, 3}, 2) }},
	{"convnet", func(dt tensor.Dtype) (*models.Model, error) { return models.ConvNet(dt, 2, 6, 6, 3, 4, 0, 3) }},
	{"rnn", func(dt tensor.Dtype) (*models.Model, error) { return models.RNN(dt, 3, 4, 5, 3, 4) }},
	{"lstm", func(dt tensor.Dtype) (*models.Model, error) { return models.LSTM(dt, 3, 4, 5, 5) }},
	{"attention", func(dt tensor.Dtype) (*models.Model, error) { return models.Attention(dt, 4, 5, 6) }},
}

var dtypes = []struct {
	dt  tensor.Dtype
	tol float64
}{{G.Float64, 1e-12}, {G.Float32, 1e-5}}

// gradWith adds gradient nodes to the model's graph with bulkad.Grad or gorgonia.Grad.
func gradWith(t *testing.T, m *models.Model, gorgoniaGrad bool) {
	t.Helper()
	var err error
	if gorgoniaGrad {
		_, err = G.Grad(m.Cost, m.Wrt...)
	} else {
		_, err = bulkad.Grad(m.Cost, m.Wrt...)
	}
	if err != nil {
		t.Fatalf("grad: %v", err)
	}
}

// twins builds two identical graphs of a model with their gradients (see gradWith) and a
// Machine over the first; the second is the reference for a TapeMachine.
func twins(t *testing.T, mk build, dt tensor.Dtype, gorgoniaGrad bool) (ours, ref *models.Model, vm *Machine) {
	t.Helper()
	ours, err := mk(dt)
	if err != nil {
		t.Fatal(err)
	}
	if ref, err = mk(dt); err != nil {
		t.Fatal(err)
	}
	gradWith(t, ours, gorgoniaGrad)
	gradWith(t, ref, gorgoniaGrad)
	if vm, err = New(ours.G, BindDualValues(ours.Wrt...)); err != nil {
		t.Fatal(err)
	}
	return ours, ref, vm
}

// floats returns a value's elements as float64s.
func floats(t *testing.T, v G.Value) []float64 {
	t.Helper()
	s, err := Flat(v)
	if err != nil {
		t.Fatalf("flat: %v", err)
	}
	out, ok := testutil.Floats(s)
	if !ok {
		t.Fatalf("value of %T", s)
	}
	return out
}

// close reports whether got and want agree within tol relative to want's largest magnitude
// (at least 1e-3, so values that are rounding noise around zero compare absolutely).
func closeTo(got, want []float64, tol float64) (int, bool) {
	if len(got) != len(want) {
		return -1, false
	}
	scale := 1e-3
	for _, w := range want {
		scale = math.Max(scale, math.Abs(w))
	}
	for i := range got {
		if !(math.Abs(got[i]-want[i]) <= tol*scale) {
			return i, false
		}
	}
	return 0, true
}

// TestSameAsTapeMachine runs each model of the zoo with its gradient (bulkad.Grad and, for
// logistic regression, whose Gorgonia gradient the adapter reads, gorgonia.Grad) on a Machine and on a
// TapeMachine built from an identical graph, and compares every float node's value and every
// learnable's dual value.
func TestSameAsTapeMachine(t *testing.T) {
	for _, mdl := range zoo {
		for _, d := range dtypes {
			for _, gg := range []bool{false, true} {
				if gg && mdl.name != "logreg" { // the others use ops whose Gorgonia gradient the adapter lacks (see below)
					continue
				}
				name := mdl.name + "/" + d.dt.String()
				if gg {
					name += "/gorgonia.Grad"
				}
				t.Run(name, func(t *testing.T) {
					ours, ref, vm := twins(t, mdl.mk, d.dt, gg)
					defer vm.Close()
					// TraceExec binds a copy of every node's value: without it the TapeMachine's
					// in-place ops overwrite the values of intermediate nodes.
					tm := G.NewTapeMachine(ref.G, G.BindDualValues(ref.Wrt...), G.TraceExec())
					defer tm.Close()
					if err := vm.RunAll(); err != nil {
						t.Fatal(err)
					}
					if err := tm.RunAll(); err != nil {
						t.Fatal(err)
					}
					a, b := ours.G.AllNodes(), ref.G.AllNodes()
					if len(a) != len(b) {
						t.Fatalf("%d nodes, reference %d", len(a), len(b))
					}
					checked := 0
					for i, n := range a {
						r := b[i]
						if n.Op() == nil || isStatement(n) || isPlanned(n.Op()) || isConstant(n.Op()) || (n.Dtype() != G.Float64 && n.Dtype() != G.Float32) {
							continue
						}
						if n.Value() == nil {
							t.Fatalf("node %v has no value", n)
						}
						if k, ok := closeTo(floats(t, n.Value()), floats(t, r.Value()), d.tol); !ok {
							t.Errorf("node %v: element %d differs from the TapeMachine's", n, k)
						}
						checked++
					}
					for i, w := range ours.Wrt {
						g, err := w.Grad()
						if err != nil {
							t.Fatalf("wrt %v: %v", w, err)
						}
						rg, err := ref.Wrt[i].Grad()
						if err != nil {
							t.Fatal(err)
						}
						if k, ok := closeTo(floats(t, g), floats(t, rg), d.tol); !ok {
							t.Errorf("gradient of %v: element %d differs from the TapeMachine's", w, k)
						}
					}
					if checked < 5 {
						t.Errorf("only %d nodes compared", checked)
					}
				})
			}
		}
	}
}

// TestFiniteDifferences checks the MLP's gradients, as the Machine computes them, against
// central differences of the cost (float64), also computed by the Machine.
func TestFiniteDifferences(t *testing.T) {
	m, err := models.MLP(G.Float64, 4, []int{5, 4, 3}, 7)
	if err != nil {
		t.Fatal(err)
	}
	gradWith(t, m, false)
	vm, err := New(m.G, BindDualValues(m.Wrt...))
	if err != nil {
		t.Fatal(err)
	}
	checkFiniteDifferences(t, m, vm, 1e-7)
}

// checkFiniteDifferences runs vm once and compares the first, middle and last entries of each
// learnable's gradient (its dual value) with central differences of the cost, run on vm,
// within tol relative to max(1, |difference|).
func checkFiniteDifferences(t *testing.T, m *models.Model, vm *Machine, tol float64) {
	t.Helper()
	run := func() float64 {
		vm.Reset()
		if err := vm.RunAll(); err != nil {
			t.Fatal(err)
		}
		return floats(t, m.Cost.Value())[0]
	}
	run()
	grads := make([][]float64, len(m.Wrt))
	for i, w := range m.Wrt {
		g, err := w.Grad()
		if err != nil {
			t.Fatal(err)
		}
		grads[i] = append([]float64(nil), floats(t, g)...)
	}
	const h = 1e-6
	for i, w := range m.Wrt {
		data := w.Value().Data().([]float64)
		for _, j := range []int{0, len(data) / 2, len(data) - 1} {
			fd := testutil.CentralDiff(data, j, h, run)
			if math.Abs(fd-grads[i][j]) > tol*math.Max(1, math.Abs(fd)) {
				t.Errorf("d cost / d %v[%d] = %g, finite differences %g", w, j, grads[i][j], fd)
			}
		}
	}
}

// TestTraining runs 20 steps of Vanilla and Adam on the Machine and on the TapeMachine and
// compares the learnables.
func TestTraining(t *testing.T) {
	solvers := []struct {
		name string
		mk   func() G.Solver
	}{
		{"vanilla", func() G.Solver { return G.NewVanillaSolver(G.WithLearnRate(0.1)) }},
		{"adam", func() G.Solver { return G.NewAdamSolver(G.WithLearnRate(0.01)) }},
	}
	for _, mdl := range []int{1, 2} { // mlp, convnet
		for _, d := range dtypes {
			for _, s := range solvers {
				t.Run(zoo[mdl].name+"/"+d.dt.String()+"/"+s.name, func(t *testing.T) {
					ours, ref, vm := twins(t, zoo[mdl].mk, d.dt, false)
					tm := G.NewTapeMachine(ref.G, G.BindDualValues(ref.Wrt...))
					so, sr := s.mk(), s.mk()
					for step := 0; step < 20; step++ {
						if err := vm.RunAll(); err != nil {
							t.Fatal(err)
						}
						if err := tm.RunAll(); err != nil {
							t.Fatal(err)
						}
						if err := so.Step(G.NodesToValueGrads(ours.Wrt)); err != nil {
							t.Fatal(err)
						}
						if err := sr.Step(G.NodesToValueGrads(ref.Wrt)); err != nil {
							t.Fatal(err)
						}
						vm.Reset()
						tm.Reset()
					}
					tol := d.tol * 100 // 20 steps of rounding differences
					for i, w := range ours.Wrt {
						if k, ok := closeTo(floats(t, w.Value()), floats(t, ref.Wrt[i].Value()), tol); !ok {
							t.Errorf("%v after 20 steps: element %d differs from the TapeMachine's", w, k)
						}
					}
					if k, ok := closeTo(floats(t, ours.Cost.Value()), floats(t, ref.Cost.Value()), tol); !ok {
						t.Errorf("cost after 20 steps differs (%d)", k)
					}
				})
			}
		}
	}
}

// TestReadResetClose checks Read targets (nil and preallocated), that a second RunAll
// without Reset does nothing (as on the TapeMachine: dual values do not accumulate twice),
// that values kept from one run survive the next, and Close.
func TestReadResetClose(t *testing.T) {
	for _, d := range dtypes {
		t.Run(d.dt.String(), func(t *testing.T) {
			m, err := models.MLP(d.dt, 3, []int{4, 3}, 9)
			if err != nil {
				t.Fatal(err)
			}
			gradWith(t, m, false)
			var cost, out G.Value
			G.Read(m.Cost, &cost)
			out = tensor.New(tensor.Of(d.dt), tensor.WithShape(m.Out.Shape()...))
			keep := out
			G.Read(m.Out, &out)
			vm, err := New(m.G, BindDualValues(m.Wrt...))
			if err != nil {
				t.Fatal(err)
			}
			if err := vm.RunAll(); err != nil {
				t.Fatal(err)
			}
			if cost == nil || floats(t, cost)[0] != floats(t, m.Cost.Value())[0] {
				t.Fatalf("Read target %v, cost node %v", cost, m.Cost.Value())
			}
			if out != keep {
				t.Errorf("a preallocated Read target was replaced")
			}
			if _, ok := closeTo(floats(t, out), floats(t, m.Out.Value()), 0); !ok {
				t.Errorf("Read target %v, node %v", out, m.Out.Value())
			}
			g0, _ := m.Wrt[0].Grad()
			first := append([]float64(nil), floats(t, g0)...)
			kept := append([]float64(nil), floats(t, m.Out.Value())...)
			keptVal := m.Out.Value()
			if err := vm.RunAll(); err != nil { // no Reset: nothing runs
				t.Fatal(err)
			}
			g1, _ := m.Wrt[0].Grad()
			if _, ok := closeTo(floats(t, g1), first, 0); !ok {
				t.Errorf("RunAll without Reset changed the dual value")
			}
			vm.Reset()
			if err := vm.RunAll(); err != nil {
				t.Fatal(err)
			}
			g2, _ := m.Wrt[0].Grad()
			for i, x := range floats(t, g2) {
				if math.Abs(x-2*first[i]) > d.tol*math.Max(1, math.Abs(x)) {
					t.Fatalf("after Reset and RunAll the dual value is %g, want twice %g (accumulated)", x, first[i])
				}
			}
			if _, ok := closeTo(floats(t, keptVal), kept, 0); !ok || keptVal == m.Out.Value() {
				t.Errorf("a value kept from the first run was changed or reused by the second")
			}
			if err := vm.Close(); err != nil {
				t.Fatal(err)
			}
			vm.Reset()
			if err := vm.RunAll(); err == nil || !strings.Contains(err.Error(), "closed") {
				t.Errorf("RunAll after Close: %v", err)
			}
		})
	}
}

// TestGradWithoutDualValues: without BindDualValues, n.Grad() is the gradient node's value.
func TestGradWithoutDualValues(t *testing.T) {
	m, err := models.MLP(G.Float64, 3, []int{4, 3}, 9)
	if err != nil {
		t.Fatal(err)
	}
	grads, err := bulkad.Grad(m.Cost, m.Wrt...)
	if err != nil {
		t.Fatal(err)
	}
	vm, err := New(m.G)
	if err != nil {
		t.Fatal(err)
	}
	if err := vm.RunAll(); err != nil {
		t.Fatal(err)
	}
	g, err := m.Wrt[0].Grad()
	if err != nil {
		t.Fatal(err)
	}
	if g != grads[0].Value() {
		t.Errorf("Grad() is not the gradient node's value")
	}
}

// TestConstantsAndErrors covers nodes run by their own op (arithmetic on constants), bad
// input and a graph the machine refuses.
func TestConstantsAndErrors(t *testing.T) {
	t.Run("constant subgraph", func(t *testing.T) {
		g := G.NewGraph()
		x := G.NewVector(g, G.Float64, G.WithShape(3), G.WithName("x"), G.WithValue(tensor.New(tensor.WithBacking([]float64{1, 2, 3}))))
		c := G.NewConstant(1.5, G.In(g))
		cc := G.Must(G.Mul(c, c))
		y := G.Must(G.Mul(x, cc))
		vm, err := New(g)
		if err != nil {
			t.Fatal(err)
		}
		if err := vm.RunAll(); err != nil {
			t.Fatal(err)
		}
		if v := floats(t, cc.Value()); v[0] != 2.25 {
			t.Errorf("c*c = %v", v)
		}
		if _, ok := closeTo(floats(t, y.Value()), []float64{2.25, 4.5, 6.75}, 1e-15); !ok {
			t.Errorf("y = %v", y.Value())
		}
	})
	t.Run("nil graph", func(t *testing.T) {
		if _, err := New(nil); err == nil {
			t.Error("no error")
		}
		var m *Machine
		if err := m.RunAll(); err == nil {
			t.Error("nil machine: no error")
		}
	})
	t.Run("input without value", func(t *testing.T) {
		g := G.NewGraph()
		x := G.NewMatrix(g, G.Float32, G.WithShape(2, 3), G.WithName("x"))
		G.Must(G.Tanh(x))
		vm, err := New(g)
		if err != nil {
			t.Fatal(err)
		}
		err = vm.RunAll()
		if err == nil || !strings.Contains(err.Error(), `"x"`) || !strings.Contains(err.Error(), "Let") {
			t.Errorf("error %v, want one naming x and gorgonia.Let", err)
		}
	})
	t.Run("dropout refused", func(t *testing.T) {
		m, err := models.ConvNet(G.Float64, 2, 4, 4, 2, 3, 0.5, 1)
		if err != nil {
			t.Fatal(err)
		}
		_, err = New(m.G)
		if err == nil || !strings.Contains(err.Error(), "NewTapeMachine") || !strings.Contains(err.Error(), "ropout") {
			t.Errorf("error %v, want one naming the dropout node and gorgonia.NewTapeMachine", err)
		}
	})
	t.Run("gorgonia.Grad of a softmax refused", func(t *testing.T) {
		m, err := models.MLP(G.Float32, 2, []int{3, 2}, 1)
		if err != nil {
			t.Fatal(err)
		}
		gradWith(t, m, true)
		_, err = New(m.G)
		if err == nil || !strings.Contains(err.Error(), "SoftmaxDiff") || !strings.Contains(err.Error(), "NewTapeMachine") {
			t.Errorf("error %v, want one naming the SoftmaxDiff node and gorgonia.NewTapeMachine", err)
		}
	})
	t.Run("untranslated op refused", func(t *testing.T) {
		g := G.NewGraph()
		x := G.NewMatrix(g, G.Float64, G.WithShape(2, 3), G.WithName("x"), G.WithInit(G.Ones()))
		G.Must(G.ApplyOp(opaqueOp{}, x))
		_, err := New(g)
		if err == nil || !strings.Contains(err.Error(), "opaque") || !strings.Contains(err.Error(), "NewTapeMachine") {
			t.Errorf("error %v, want one naming the opaque op and gorgonia.NewTapeMachine", err)
		}
	})
}

// TestReuseValues: with ReuseValues, 10 Adam steps give the same learnables and cost as
// without (bit for bit: the same kernels on the same values), a value kept from one run is
// overwritten by the next (the documented trade), and a run allocates at least half the
// packed vector's bytes less than without (which allocates at least the whole vector).
func TestReuseValues(t *testing.T) {
	for _, d := range dtypes {
		t.Run(d.dt.String(), func(t *testing.T) {
			fresh, reused, vf, vr := freshAndReused(t, d.dt, false)
			sf, sr := G.NewAdamSolver(G.WithLearnRate(0.01)), G.NewAdamSolver(G.WithLearnRate(0.01))
			var kept []float64
			var keptVal, keptCost G.Value
			for step := 0; step < 10; step++ {
				for _, s := range []struct {
					vm     *Machine
					solver G.Solver
					m      *models.Model
				}{{vf, sf, fresh}, {vr, sr, reused}} {
					s.vm.Reset()
					if err := s.vm.RunAll(); err != nil {
						t.Fatal(err)
					}
					if err := s.solver.Step(G.NodesToValueGrads(s.m.Wrt)); err != nil {
						t.Fatal(err)
					}
				}
				if step == 0 {
					keptVal, keptCost = reused.Out.Value(), reused.Cost.Value()
					kept = floats(t, keptVal)
				}
			}
			if reused.Out.Value() != keptVal {
				t.Errorf("ReuseValues gave the output a new value object after the first run")
			}
			if reused.Cost.Value() == keptCost {
				t.Errorf("ReuseValues reused the cost's scalar value: a loss kept from the first step changed")
			}
			if c, ok := closeTo(floats(t, reused.Cost.Value()), floats(t, fresh.Cost.Value()), 0); !ok {
				t.Errorf("the cost's reused value differs from the fresh machine's (element %d)", c)
			}
			for i, w := range reused.Wrt {
				if k, ok := closeTo(floats(t, w.Value()), floats(t, fresh.Wrt[i].Value()), 0); !ok {
					t.Errorf("%v after 10 steps: element %d differs from the machine without ReuseValues", w, k)
				}
			}
			if _, ok := closeTo(floats(t, keptVal), kept, 0); ok {
				t.Errorf("the output value kept from run 1 did not change: ReuseValues wrote into a fresh vector")
			}
			packed := 0
			for _, pr := range vr.plans {
				packed += pr.kp.OutLen() * int(d.dt.Size())
			}
			perRun := func(vm *Machine) float64 {
				var a, b runtime.MemStats
				runtime.ReadMemStats(&a)
				for i := 0; i < 3; i++ {
					vm.Reset()
					if err := vm.RunAll(); err != nil {
						t.Fatal(err)
					}
				}
				runtime.ReadMemStats(&b)
				return float64(b.TotalAlloc-a.TotalAlloc) / 3
			}
			f, r := perRun(vf), perRun(vr)
			if f < float64(packed) {
				t.Errorf("without ReuseValues a run allocated %.0f bytes, less than the packed vector's %d", f, packed)
			}
			if f-r < float64(packed)/2 {
				t.Errorf("ReuseValues saved %.0f of %.0f bytes a run; the packed vector is %d bytes", f-r, f, packed)
			}
		})
	}
}

// TestReuseValuesCopies: with ReuseValues, a node whose elements another node shares (it gets
// its own copy: here a full slice of the prediction) keeps one buffer across runs — the second
// run writes the new values into the first run's copy — and its values equal those of a
// machine without ReuseValues. A Gorgonia reshape shares its operand's elements, as on the
// TapeMachine (the convnet's im2col reshapes get no copy).
func TestReuseValuesCopies(t *testing.T) {
	fresh, reused, vf, vr := freshAndReused(t, tensor.Float64, true)
	for _, pr := range vr.plans {
		for _, r := range pr.outs {
			if r.copy && isReshape(r.node) {
				t.Errorf("reshape node %v gets its own copy", r.node)
			}
		}
	}
	byName := map[string]*G.Node{}
	for _, n := range fresh.G.AllNodes() {
		byName[n.Name()] = n
	}
	var nodes []*G.Node
	for _, pr := range vr.plans {
		for _, r := range pr.outs {
			if r.copy && !r.node.IsScalar() {
				nodes = append(nodes, r.node)
			}
		}
	}
	if len(nodes) == 0 {
		t.Fatal("the model has no node that gets its own copy: the test shows nothing")
	}
	backing := make([]*float64, len(nodes))
	for run := 0; run < 3; run++ {
		for _, m := range []*models.Model{fresh, reused} { // new inputs: every value changes
			x := m.Inputs[0].Value().Data().([]float64)
			for i := range x {
				x[i] += 0.1 * float64(run+1)
			}
		}
		for _, vm := range []*Machine{vf, vr} {
			vm.Reset()
			if err := vm.RunAll(); err != nil {
				t.Fatal(err)
			}
		}
		for i, n := range nodes {
			got := n.Value().Data().([]float64)
			if run == 0 {
				backing[i] = &got[0]
			} else if &got[0] != backing[i] {
				t.Fatalf("run %d: node %v's copy is a new buffer", run, n)
			}
			f := byName[n.Name()]
			if f == nil {
				t.Fatalf("node %v has no twin in the fresh model", n)
			}
			if k, ok := closeTo(got, f.Value().Data().([]float64), 0); !ok {
				t.Fatalf("run %d: node %v element %d differs from the machine without ReuseValues", run, n, k)
			}
		}
	}
}

// freshAndReused builds the same small convnet twice (0.1–0.2 MB of values a run, so that
// an allocation bound is not the per-node headers every run allocates either way), with a
// full slice of its prediction when slice is set, with bulkad.Grad, on a machine without and
// one with ReuseValues.
func freshAndReused(t *testing.T, dt tensor.Dtype, slice bool) (fresh, reused *models.Model, vf, vr *Machine) {
	t.Helper()
	var err error
	for _, m := range []**models.Model{&fresh, &reused} {
		if *m, err = models.ConvNet(dt, 4, 12, 12, 8, 4, 0, 3); err != nil {
			t.Fatal(err)
		}
		if slice {
			if _, err := G.Slice((*m).Out, nil, nil); err != nil {
				t.Fatal(err)
			}
		}
		gradWith(t, *m, false)
	}
	if vf, err = New(fresh.G, BindDualValues(fresh.Wrt...)); err != nil {
		t.Fatal(err)
	}
	if vr, err = New(reused.G, BindDualValues(reused.Wrt...), ReuseValues()); err != nil {
		t.Fatal(err)
	}
	return fresh, reused, vf, vr
}
