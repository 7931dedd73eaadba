package main

import (
	"context"
	"fmt"
	"math"
	"runtime/pprof"
	"sort"
	"time"

	"github.com/pkg/errors"
	"gonum.org/v1/gonum/blas/gonum"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/bulkad/bulkad"
	"github.com/bulkad/bulkad/examples/models"
)

// gradFunc is the signature of gorgonia.Grad and bulkad.Grad.
type gradFunc func(cost *G.Node, wrt ...*G.Node) (G.Nodes, error)

// spec is one benchmarked model: a constructor that returns a fresh graph with the same
// weights and data every time (same seed).
type spec struct {
	Name  string
	Key   string // the model's name in torch_anchor.py
	Build func(dt tensor.Dtype) (*models.Model, error)
}

// specs are the benchmarked zoo models at the sizes of the issue (MLP 784-512-10 batch 128,
// small convnet batch 32, tanh RNN, single-head attention).
func specs(small bool) []spec {
	if small {
		return []spec{
			{"mlp", "", func(dt tensor.Dtype) (*models.Model, error) { return models.MLP(dt, 8, []int{32, 16, 10}, 1) }},
			{"convnet", "", func(dt tensor.Dtype) (*models.Model, error) { return models.ConvNet(dt, 2, 8, 8, 4, 10, 0, 1) }},
			{"rnn", "", func(dt tensor.Dtype) (*models.Model, error) { return models.RNN(dt, 4, 8, 8, 4, 1) }},
			{"attention", "", func(dt tensor.Dtype) (*models.Model, error) { return models.Attention(dt, 8, 8, 1) }},
		}
	}
	return []spec{
		{"mlp 784-512-10 b128", "mlp", func(dt tensor.Dtype) (*models.Model, error) { return models.MLP(dt, 128, []int{784, 512, 10}, 1) }},
		{"convnet 28x28x32 b32", "convnet", func(dt tensor.Dtype) (*models.Model, error) { return models.ConvNet(dt, 32, 28, 28, 32, 10, 0, 1) }},
		{"rnn 64→128 x16 b32", "rnn", func(dt tensor.Dtype) (*models.Model, error) { return models.RNN(dt, 32, 64, 128, 16, 1) }},
		{"attention 128x64", "attention", func(dt tensor.Dtype) (*models.Model, error) { return models.Attention(dt, 128, 64, 1) }},
	}
}

// Row is one line of the table.
type Row struct {
	Model           string  `json:"model"`
	Dtype           string  `json:"dtype"`
	BulkadStepMS    float64 `json:"bulkad_step_ms"`
	GorgoniaStepMS  float64 `json:"gorgonia_step_ms"`
	Ratio           float64 `json:"ratio_bulkad_over_gorgonia"`
	ForwardMS       float64 `json:"forward_ms"`
	BulkadOverFwd   float64 `json:"bulkad_over_forward"`
	GorgoniaOverFwd float64 `json:"gorgonia_over_forward"`
	NodesBulkad     int     `json:"nodes_added_bulkad"`
	NodesGorgonia   int     `json:"nodes_added_gorgonia"`
	DiffMSBulkad    float64 `json:"differentiation_ms_bulkad"`
	DiffMSGorgonia  float64 `json:"differentiation_ms_gorgonia"`
	AllocsBulkad    float64 `json:"alloc_kb_per_step_bulkad"`
	AllocsGorgonia  float64 `json:"alloc_kb_per_step_gorgonia"`
	// HVPStepMS is a step of a graph with bulkad.HessianVector nodes (H·v along a fixed
	// direction) instead of gradient nodes; HVPOverGrad divides it by BulkadStepMS.
	HVPStepMS   float64 `json:"hvp_step_ms"`
	HVPOverGrad float64 `json:"hvp_over_grad"`
	// TorchStepMS is PyTorch's step of the same model (-torch), measured in the anchor
	// process between the Go steps; BulkadOverTorch divides BulkadStepMS by it.
	TorchStepMS     float64 `json:"torch_step_ms,omitempty"`
	BulkadOverTorch float64 `json:"bulkad_over_torch,omitempty"`
	// DefaultStepMS is gorgonia.Grad's step as a Gorgonia user has it out of the box (gonum's
	// GEMM, Gorgonia's engine), measured between the other steps (-baseline);
	// BulkadOverDefault divides BulkadStepMS (with -blas and -engine as given) by it.
	DefaultStepMS     float64 `json:"gorgonia_default_step_ms,omitempty"`
	BulkadOverDefault float64 `json:"bulkad_over_gorgonia_default,omitempty"`
}

// prepared is a compiled graph ready to step.
type prepared struct {
	vm    G.VM
	nodes int // nodes added by Grad
	diff  time.Duration
}

func prepare(s spec, dt tensor.Dtype, grad gradFunc, extra ...G.VMOpt) (*prepared, error) {
	m, err := s.Build(dt)
	if err != nil {
		return nil, err
	}
	before := len(m.G.AllNodes())
	p := &prepared{}
	var opts []G.VMOpt
	if grad != nil {
		t0 := time.Now()
		if _, err := grad(m.Cost, m.Wrt...); err != nil {
			return nil, errors.Wrapf(err, "%s: grad", s.Name)
		}
		p.diff = time.Since(t0)
		opts = append(opts, G.BindDualValues(m.Wrt...))
	}
	p.nodes = len(m.G.AllNodes()) - before
	p.vm = G.NewTapeMachine(m.G, append(opts, extra...)...)
	return p, nil
}

// prepareHVP builds the model with bulkad.HessianVector nodes along a direction of ±0.01
// entries (one direction node per wrt node).
func prepareHVP(s spec, dt tensor.Dtype, extra ...G.VMOpt) (*prepared, error) {
	m, err := s.Build(dt)
	if err != nil {
		return nil, err
	}
	before := len(m.G.AllNodes())
	vs := make(G.Nodes, len(m.Wrt))
	for i, w := range m.Wrt {
		n := w.Shape().TotalSize()
		var back any
		if dt == tensor.Float32 {
			f := make([]float32, n)
			for j := range f {
				f[j] = 0.01 * float32(1-2*(j%2))
			}
			back = f
		} else {
			f := make([]float64, n)
			for j := range f {
				f[j] = 0.01 * float64(1-2*(j%2))
			}
			back = f
		}
		vs[i] = G.NewTensor(m.G, dt, w.Shape().Dims(), G.WithShape(w.Shape().Clone()...), G.WithName(fmt.Sprintf("v%d", i)),
			G.WithValue(tensor.New(tensor.WithShape(w.Shape().Clone()...), tensor.WithBacking(back))))
	}
	t0 := time.Now()
	if _, err := bulkad.HessianVector(m.Cost, m.Wrt, vs); err != nil {
		return nil, errors.Wrapf(err, "%s: hessian-vector", s.Name)
	}
	p := &prepared{diff: time.Since(t0)}
	p.nodes = len(m.G.AllNodes()) - before
	p.vm = G.NewTapeMachine(m.G, extra...)
	return p, nil
}

func (p *prepared) step() (time.Duration, error) {
	t0 := time.Now()
	if err := p.vm.RunAll(); err != nil {
		return 0, err
	}
	d := time.Since(t0)
	p.vm.Reset()
	return d, nil
}

func median(ds []time.Duration) float64 {
	s := append([]time.Duration{}, ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return float64(s[len(s)/2]) / float64(time.Millisecond)
}

// measure runs bulkad, Gorgonia, the forward pass, the Hessian-vector graph and (with an
// anchor) PyTorch alternating (A B C D E A B C D E …) for rounds rounds after one warm-up
// round, and reports medians.
// With vm options (such as bulkad.Engine), every machine of the row gets them. With baseline,
// a fifth machine steps gorgonia.Grad's graph on Gorgonia's defaults: gonum's BLAS installed
// for its step only (whatever -blas installed is put back after it) and no vm options.
func measure(s spec, dt tensor.Dtype, rounds int, torch *anchor, baseline bool, vm ...G.VMOpt) (Row, error) {
	row := Row{Model: s.Name, Dtype: dt.String()}
	a, err := prepare(s, dt, bulkad.Grad, vm...)
	if err != nil {
		return row, err
	}
	defer a.vm.Close()
	b, err := prepare(s, dt, G.Grad, vm...)
	if err != nil {
		return row, err
	}
	defer b.vm.Close()
	c, err := prepare(s, dt, nil, vm...)
	if err != nil {
		return row, err
	}
	defer c.vm.Close()
	h, err := prepareHVP(s, dt, vm...)
	if err != nil {
		return row, err
	}
	defer h.vm.Close()
	machines := []*prepared{a, b, c, h}
	if baseline {
		d, err := prepare(s, dt, G.Grad)
		if err != nil {
			return row, err
		}
		defer d.vm.Close()
		machines = append(machines, d)
	}
	variants := []string{"bulkad", "gorgonia", "forward", "hvp", "gorgonia-default"}
	var ta, tb, tc, th, tt, td []time.Duration
	var ma, mb float64
	for r := 0; r <= rounds; r++ {
		if torch != nil && s.Key != "" {
			ms, err := torch.number("step %s %s", s.Key, dt)
			if err != nil {
				return row, err
			}
			if r > 0 {
				tt = append(tt, time.Duration(ms*float64(time.Millisecond)))
			}
		}
		for k, p := range machines {
			var ms0, ms1 runtimeMem
			ms0.read()
			var d time.Duration
			// Profile labels (go tool pprof -tagfocus step=bulkad) separate the variants in a -cpuprofile.
			pprof.Do(context.Background(), pprof.Labels("step", variants[k], "model", s.Name+" "+dt.String()), func(context.Context) {
				if variants[k] == "gorgonia-default" {
					gb, tb := G.WhichBLAS(), tensor.WhichBLAS()
					G.Use(gonum.Implementation{})
					tensor.Use(gonum.Implementation{})
					defer func() { G.Use(gb); tensor.Use(tb) }()
				}
				d, err = p.step()
			})
			if err != nil {
				return row, errors.Wrapf(err, "%s: step", s.Name)
			}
			ms1.read()
			if r == 0 {
				continue // warm-up
			}
			switch k {
			case 0:
				ta = append(ta, d)
				ma += ms1.sub(ms0)
			case 1:
				tb = append(tb, d)
				mb += ms1.sub(ms0)
			case 2:
				tc = append(tc, d)
			case 3:
				th = append(th, d)
			case 4:
				td = append(td, d)
			}
		}
	}
	row.BulkadStepMS, row.GorgoniaStepMS, row.ForwardMS = median(ta), median(tb), median(tc)
	row.Ratio = row.BulkadStepMS / row.GorgoniaStepMS
	row.HVPStepMS = median(th)
	row.HVPOverGrad = row.HVPStepMS / row.BulkadStepMS
	row.BulkadOverFwd = row.BulkadStepMS / row.ForwardMS
	row.GorgoniaOverFwd = row.GorgoniaStepMS / row.ForwardMS
	row.NodesBulkad, row.NodesGorgonia = a.nodes, b.nodes
	row.DiffMSBulkad = float64(a.diff) / float64(time.Millisecond)
	row.DiffMSGorgonia = float64(b.diff) / float64(time.Millisecond)
	row.AllocsBulkad = ma / float64(rounds) / 1024
	row.AllocsGorgonia = mb / float64(rounds) / 1024
	if len(td) > 0 {
		row.DefaultStepMS = median(td)
		row.BulkadOverDefault = row.BulkadStepMS / row.DefaultStepMS
	}
	if len(tt) > 0 {
		row.TorchStepMS = median(tt)
		row.BulkadOverTorch = row.BulkadStepMS / row.TorchStepMS
	}
	return row, nil
}

// slope fits log y = a + e·log x by least squares and returns e.
func slope(xs []int, ys []float64) float64 {
	n := float64(len(xs))
	var sx, sy, sxx, sxy float64
	for i := range xs {
		x, y := math.Log(float64(xs[i])), math.Log(ys[i])
		sx += x
		sy += y
		sxx += x * x
		sxy += x * y
	}
	return (n*sxy - sx*sy) / (n*sxx - sx*sx)
}

func fmtRow(r Row) string {
	return fmt.Sprintf("| %s | %s | %.2f | %.2f | **%.2f** | %.2f | %.2f | %d / %d | %.1f / %.1f | %.0f / %.0f | %.2f |",
		r.Model, r.Dtype, r.BulkadStepMS, r.GorgoniaStepMS, r.Ratio, r.BulkadOverFwd, r.GorgoniaOverFwd,
		r.NodesBulkad, r.NodesGorgonia, r.DiffMSBulkad, r.DiffMSGorgonia, r.AllocsBulkad, r.AllocsGorgonia, r.HVPOverGrad)
}

const header = "| model | dtype | bulkad step ms | gorgonia step ms | bulkad/gorgonia | bulkad (value+grad)/forward | gorgonia/forward | nodes added bulkad / gorgonia | differentiation ms bulkad / gorgonia | alloc KiB/step bulkad / gorgonia | HessianVector step / gradient step |\n|---|---|---|---|---|---|---|---|---|---|---|"

func fmtTorchRow(r Row) string {
	return fmt.Sprintf("| %s | %s | %.2f | %.2f | %.2f | **%.2f** | %.2f |",
		r.Model, r.Dtype, r.BulkadStepMS, r.GorgoniaStepMS, r.TorchStepMS, r.BulkadOverTorch, r.Ratio)
}

const torchHeader = "| model | dtype | bulkad step ms | gorgonia step ms | PyTorch step ms | bulkad/PyTorch | bulkad/gorgonia |\n|---|---|---|---|---|---|---|"

const defaultHeader = "| model | dtype | bulkad step ms | gorgonia.Grad step ms, Gorgonia's defaults (gonum GEMM, its engine) | bulkad/default |\n|---|---|---|---|---|"

func fmtDefaultRow(r Row) string {
	return fmt.Sprintf("| %s | %s | %.2f | %.2f | **%.2f** |", r.Model, r.Dtype, r.BulkadStepMS, r.DefaultStepMS, r.BulkadOverDefault)
}
