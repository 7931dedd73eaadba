package main

import (
	"bytes"
	"math"
	"strconv"
	"strings"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/bulkad/bulkad"
	"github.com/bulkad/bulkad/gradcheck"
)

// TestBenchSmoke runs the whole command on tiny models (on accel.Engine, with the
// Gorgonia-defaults baseline): every model steps with both autodiffs, the numbers are
// positive, and the exponents are finite. (Their sign is not asserted: at these sizes the
// times are a few milliseconds, and on a loaded machine a larger graph can set up faster.)
func TestBenchSmoke(t *testing.T) {
	res, err := run(options{small: true, rounds: 2, engine: true, baseline: true, steps: true, growth: true})
	if err != nil {
		t.Fatal(err)
	}
	if n := 2 * len(specs(true)); len(res.Rows) != n {
		t.Fatalf("%d rows, want %d", len(res.Rows), n)
	}
	setupOK := func(s Setup) bool {
		return s.BuildMS > 0 && s.GradMS > 0 && s.CompileMS > 0 && s.FirstRunMS > 0 && s.Nodes > 0 && s.NodesAfter > s.Nodes &&
			s.TotalMS >= s.BuildMS+s.GradMS+s.CompileMS+s.FirstRunMS-1e-9
	}
	for _, r := range res.Rows {
		if !(r.BulkadStepMS > 0 && r.GorgoniaStepMS > 0 && r.ForwardMS > 0 && r.NodesBulkad > 0 && r.NodesGorgonia > 0 && r.DefaultStepMS > 0) {
			t.Errorf("row %+v", r)
		}
		if r.HVPError != "" || !(r.HVPStepMS > 0) {
			t.Errorf("%s %s: HessianVector: %q, %v ms", r.Model, r.Dtype, r.HVPError, r.HVPStepMS)
		}
		if !setupOK(r.SetupBulkad) || !setupOK(r.SetupGorgonia) || r.NodesGraph != r.SetupBulkad.Nodes ||
			r.SetupBulkad.NodesAfter != r.NodesGraph+r.NodesBulkad || r.SetupGorgonia.NodesAfter != r.NodesGraph+r.NodesGorgonia {
			t.Errorf("%s %s: set-up %+v / %+v, nodes %d + %d / %d", r.Model, r.Dtype, r.SetupBulkad, r.SetupGorgonia, r.NodesGraph, r.NodesBulkad, r.NodesGorgonia)
		}
	}
	if n := len(blockFamilies(true)); len(res.SetupGrowth) != n {
		t.Fatalf("%d set-up growth families, want %d", len(res.SetupGrowth), n)
	}
	for _, g := range res.SetupGrowth {
		for i, r := range g.Rows {
			if !setupOK(r.Bulkad) || !setupOK(r.Gorgonia) || r.Gorgonia.Nodes != r.Bulkad.Nodes {
				t.Errorf("%s %d: %+v / %+v", g.Family, r.Blocks, r.Bulkad, r.Gorgonia)
			}
			if i > 0 && !(r.Bulkad.Nodes > g.Rows[i-1].Bulkad.Nodes && r.Bulkad.NodesAfter > g.Rows[i-1].Bulkad.NodesAfter) {
				t.Errorf("%s: nodes do not grow with the blocks: %+v", g.Family, g.Rows)
			}
		}
		for _, e := range append(g.ExpBulkad[:], g.ExpGorgonia[:]...) {
			if math.IsNaN(e) || math.IsInf(e, 0) {
				t.Errorf("%s: exponents %v / %v", g.Family, g.ExpBulkad, g.ExpGorgonia)
				break
			}
		}
	}
	if len(res.Growth) != 3 {
		t.Fatalf("%d growth families", len(res.Growth))
	}
	for _, g := range res.Growth {
		for _, e := range []float64{g.ExpDiff, g.ExpRaise, g.ExpGrad, g.ExpOurs} {
			if math.IsNaN(e) || math.IsInf(e, 0) {
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

// TestModelGradients checks the gradients of the benchmarked models people train, at the
// smoke test's sizes, with gradcheck.Check: bulkad's gradient (its program and the nodes Grad
// adds, run on a TapeMachine) must match central finite differences; Gorgonia's Grad must
// run, and wherever its gradient matches the differences bulkad's must match Gorgonia's.
// The costs must be finite.
func TestModelGradients(t *testing.T) {
	newModels := map[string]bool{"convnet-mnist": true, "resnet": true, "mobilenet": true, "transformer": true, "lstm": true}
	seen := 0
	for _, s := range specs(true) {
		if !newModels[s.Name] {
			continue
		}
		seen++
		for _, dt := range []tensor.Dtype{tensor.Float64, tensor.Float32} {
			m, err := s.Build(dt)
			if err != nil {
				t.Fatal(err)
			}
			rep, err := gradcheck.Check(m.Cost, m.Wrt, gradcheck.WithMaxProbes(6))
			if err != nil {
				t.Fatalf("%s %v: %v", s.Name, dt, err)
			}
			if !rep.OK() || math.IsNaN(rep.Value) || math.IsInf(rep.Value, 0) {
				t.Errorf("%s %v: bulkad's gradient:\n%s", s.Name, dt, rep)
				continue
			}
			if rep.GorgoniaError != "" {
				t.Errorf("%s %v: gorgonia.Grad failed: %s", s.Name, dt, rep.GorgoniaError)
				continue
			}
			for _, n := range rep.Nodes {
				if n.GorgoniaVsFD == nil || n.BulkadVsGorgonia == nil {
					t.Errorf("%s %v %s: Gorgonia's gradient not compared (%s)", s.Name, dt, n.Name, n.Gorgonia)
				} else if n.GorgoniaVsFD.OK && !n.BulkadVsGorgonia.OK {
					t.Errorf("%s %v %s: Gorgonia matches finite differences, bulkad differs from it: %+v", s.Name, dt, n.Name, *n.BulkadVsGorgonia)
				}
			}
		}
	}
	if seen != len(newModels) {
		t.Errorf("%d of the %d models in the smoke specs", seen, len(newModels))
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

// TestParseFlags: -h opens with a line saying what the command does; the growth tables run
// only with -growth (they take about a minute); bad values are refused before measuring.
func TestParseFlags(t *testing.T) {
	for _, c := range []struct {
		args          []string
		help          bool
		wantErr       string
		steps, growth bool
		machine       bool
		burst         int // 0: the default, 1
	}{
		{args: []string{"-h"}, help: true},
		{args: nil, steps: true},
		{args: []string{"-model", "convnet", "-rounds", "10"}, steps: true},
		{args: []string{"-growth"}, growth: true},
		{args: []string{"-machine", "-model", "mlp"}, steps: true, machine: true},
		{args: []string{"-growth", "-model", "mlp"}, wantErr: "exclude each other"},
		{args: []string{"-rounds", "0"}, wantErr: "-rounds 0"},
		{args: []string{"-machine", "-burst", "4"}, steps: true, machine: true, burst: 4},
		{args: []string{"-burst", "0"}, wantErr: "-burst 0"},
		{args: []string{"-model", "nosuch"}, wantErr: `-model "nosuch": no zoo model`},
		{args: []string{"stray"}, wantErr: "stray"},
	} {
		var out bytes.Buffer
		got, help, err := parseFlags(c.args, &out)
		if help != c.help {
			t.Errorf("%v: help %v, want %v", c.args, help, c.help)
		}
		if c.help {
			if !strings.HasPrefix(out.String(), "Measures bulkad against Gorgonia") || !strings.Contains(out.String(), "-growth") {
				t.Errorf("-h printed:\n%s", out.String())
			}
			continue
		}
		if c.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Errorf("%v: error %v, want one containing %q", c.args, err, c.wantErr)
			}
			continue
		}
		if c.burst == 0 {
			c.burst = 1
		}
		if err == nil && got.o.burst != c.burst {
			t.Errorf("%v: burst %d, want %d", c.args, got.o.burst, c.burst)
		}
		if err != nil || got.o.steps != c.steps || got.o.growth != c.growth || got.o.machine != c.machine {
			t.Errorf("%v: steps %v growth %v machine %v (%v), want steps %v growth %v machine %v", c.args, got.o.steps, got.o.growth, got.o.machine, err, c.steps, c.growth, c.machine)
		}
	}
}
