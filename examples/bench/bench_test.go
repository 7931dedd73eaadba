package main

import (
	"strconv"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/bulkad/bulkad"
)

// TestBenchSmoke runs the whole command on tiny models (on bulkad.Engine, with the
// Gorgonia-defaults baseline): every model steps with both autodiffs, the numbers are
// positive, and the exponent is finite.
func TestBenchSmoke(t *testing.T) {
	res, err := run(options{small: true, rounds: 2, engine: true, baseline: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Rows) != 8 {
		t.Fatalf("%d rows", len(res.Rows))
	}
	for _, r := range res.Rows {
		if !(r.BulkadStepMS > 0 && r.GorgoniaStepMS > 0 && r.ForwardMS > 0 && r.NodesBulkad > 0 && r.NodesGorgonia > 0 && r.DefaultStepMS > 0) {
			t.Errorf("row %+v", r)
		}
	}
	if len(res.Growth) != 3 {
		t.Fatalf("%d growth families", len(res.Growth))
	}
	for _, g := range res.Growth {
		for _, e := range []float64{g.ExpDiff, g.ExpRaise, g.ExpGrad, g.ExpOurs} {
			if e != e || e <= 0 {
				t.Errorf("%s: exponent %v", g.Family, e)
			}
		}
		for _, r := range g.Rows {
			if !(r.DiffMS > 0 && r.RaiseMS > 0 && r.RaiseGorgMS > 0 && r.RaiseGorgMS < r.RaiseMS && r.Nodes > r.Size) {
				t.Errorf("%s: row %+v", g.Family, r)
			}
		}
	}
}

func TestSlope(t *testing.T) {
	// y = 3 x²: slope 2.
	if s := slope([]int{1, 10, 100}, []float64{3, 300, 30000}); s < 1.999 || s > 2.001 {
		t.Errorf("slope %v", s)
	}
}

func benchStep(b *testing.B, s spec, dt tensor.Dtype, grad gradFunc) {
	p, err := prepare(s, dt, grad)
	if err != nil {
		b.Fatal(err)
	}
	defer p.vm.Close()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := p.step(); err != nil {
			b.Fatal(err)
		}
	}
}

// Training-step benchmarks (forward + gradient): go test -bench Step ./examples/bench
func BenchmarkStep(b *testing.B) {
	for _, s := range specs(false) {
		for _, dt := range []tensor.Dtype{tensor.Float64, tensor.Float32} {
			b.Run(s.Name+"/"+dt.String()+"/bulkad", func(b *testing.B) { benchStep(b, s, dt, bulkad.Grad) })
			b.Run(s.Name+"/"+dt.String()+"/gorgonia", func(b *testing.B) { benchStep(b, s, dt, G.Grad) })
			b.Run(s.Name+"/"+dt.String()+"/forward", func(b *testing.B) { benchStep(b, s, dt, nil) })
		}
	}
}

// Differentiation-time benchmarks: go test -bench Differentiate ./examples/bench
func BenchmarkDifferentiate(b *testing.B) {
	for _, s := range specs(false) {
		b.Run(s.Name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				m, err := s.Build(tensor.Float64)
				if err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				if _, err := bulkad.Grad(m.Cost, m.Wrt...); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	for _, f := range families(false) {
		for _, size := range f.Sizes {
			f1 := f
			f1.Sizes = []int{size}
			b.Run(f.Name+"-"+strconv.Itoa(size), func(b *testing.B) {
				for i := 0; i < b.N; i++ {
					if _, err := growth(f1, 1); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
