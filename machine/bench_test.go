package machine

import (
	"testing"
	"time"

	"github.com/bulkad/bulkad"
	"github.com/bulkad/bulkad/examples/models"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// The models of examples/bench (the sizes its closing notes use).
var benchModels = []struct {
	name string
	mk   build
}{
	{"mlp784-512-10b128", func(dt tensor.Dtype) (*models.Model, error) { return models.MLP(dt, 128, []int{784, 512, 10}, 1) }},
	{"convnet28x28x32b32", func(dt tensor.Dtype) (*models.Model, error) { return models.ConvNet(dt, 32, 28, 28, 32, 10, 0, 1) }},
}

// benchPair builds the model twice with bulkad.Grad's gradient nodes: one graph for each
// machine.
func benchPair(b *testing.B, mk build, dt tensor.Dtype) (*models.Model, *models.Model) {
	b.Helper()
	var ms [2]*models.Model
	for i := range ms {
		m, err := mk(dt)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := bulkad.Grad(m.Cost, m.Wrt...); err != nil {
			b.Fatal(err)
		}
		ms[i] = m
	}
	return ms[0], ms[1]
}

// BenchmarkStep times one training step (RunAll, a Vanilla solver step, Reset) on the
// TapeMachine and on the Machine, alternating within each iteration, and reports both and
// their ratio (machine/tape). Run with -cpu 1 for one thread.
func BenchmarkStep(b *testing.B) {
	for _, bm := range benchModels {
		for _, dt := range []tensor.Dtype{G.Float64, G.Float32} {
			b.Run(bm.name+"/"+dt.String(), func(b *testing.B) {
				mt, mm := benchPair(b, bm.mk, dt)
				tm := G.NewTapeMachine(mt.G, G.BindDualValues(mt.Wrt...))
				vm, err := New(mm.G, BindDualValues(mm.Wrt...))
				if err != nil {
					b.Fatal(err)
				}
				st, sm := G.NewVanillaSolver(G.WithLearnRate(1e-3)), G.NewVanillaSolver(G.WithLearnRate(1e-3))
				step := func(vmach G.VM, s G.Solver, wrt G.Nodes) time.Duration {
					t0 := time.Now()
					if err := vmach.RunAll(); err != nil {
						b.Fatal(err)
					}
					if err := s.Step(G.NodesToValueGrads(wrt)); err != nil {
						b.Fatal(err)
					}
					vmach.Reset()
					return time.Since(t0)
				}
				step(tm, st, mt.Wrt) // warm up both
				step(vm, sm, mm.Wrt)
				var tt, tmach time.Duration
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					tt += step(tm, st, mt.Wrt)
					tmach += step(vm, sm, mm.Wrt)
				}
				b.ReportMetric(float64(tt.Nanoseconds())/float64(b.N), "tape-ns/step")
				b.ReportMetric(float64(tmach.Nanoseconds())/float64(b.N), "machine-ns/step")
				b.ReportMetric(float64(tmach)/float64(tt), "machine/tape")
			})
		}
	}
}

// BenchmarkSetup times machine.New against gorgonia.NewTapeMachine on graphs that already
// hold bulkad.Grad's gradient nodes, alternating, and reports both and their ratio.
func BenchmarkSetup(b *testing.B) {
	for _, bm := range benchModels {
		for _, dt := range []tensor.Dtype{G.Float64, G.Float32} {
			b.Run(bm.name+"/"+dt.String(), func(b *testing.B) {
				mt, mm := benchPair(b, bm.mk, dt)
				var tt, tmach time.Duration
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					t0 := time.Now()
					tm := G.NewTapeMachine(mt.G, G.BindDualValues(mt.Wrt...))
					tt += time.Since(t0)
					t0 = time.Now()
					vm, err := New(mm.G, BindDualValues(mm.Wrt...))
					tmach += time.Since(t0)
					if err != nil {
						b.Fatal(err)
					}
					tm.Close()
					vm.Close()
				}
				b.ReportMetric(float64(tt.Nanoseconds())/float64(b.N), "tape-ns/op")
				b.ReportMetric(float64(tmach.Nanoseconds())/float64(b.N), "machine-ns/op")
				b.ReportMetric(float64(tmach)/float64(tt), "machine/tape")
			})
		}
	}
}
