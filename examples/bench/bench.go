package main

import (
	"context"
	"fmt"
	"math"
	"runtime"
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

// specs are the benchmarked zoo models: those of the issue (MLP 784-512-10 batch 128, small
// convnet batch 32, tanh RNN, single-head attention) and the models people train (Gorgonia's
// MNIST convnet at batch 50 without dropout, a ResNet basic-block stack, a MobileNet-style
// depthwise-separable stack, a transformer encoder layer, an LSTM unrolled over 16 steps).
// torch_anchor.py builds the same models (Key) at the same sizes.
func specs(small bool) []spec {
	if small {
		return []spec{
			{"mlp", "", func(dt tensor.Dtype) (*models.Model, error) { return models.MLP(dt, 8, []int{32, 16, 10}, 1) }},
			{"convnet", "", func(dt tensor.Dtype) (*models.Model, error) { return models.ConvNet(dt, 2, 8, 8, 4, 10, 0, 1) }},
			{"rnn", "", func(dt tensor.Dtype) (*models.Model, error) { return models.RNN(dt, 4, 8, 8, 4, 1) }},
			{"attention", "", func(dt tensor.Dtype) (*models.Model, error) { return models.Attention(dt, 8, 8, 1) }},
			{"convnet-mnist", "", func(dt tensor.Dtype) (*models.Model, error) { return models.ConvNetMNIST(dt, 2, [4]float64{}, 1) }},
			{"resnet", "", func(dt tensor.Dtype) (*models.Model, error) { return models.ResNet(dt, 2, 4, 3, 2, 3, 1) }},
			{"mobilenet", "", func(dt tensor.Dtype) (*models.Model, error) { return models.MobileNet(dt, 2, 4, 3, 2, 3, 1) }},
			{"transformer", "", func(dt tensor.Dtype) (*models.Model, error) { return models.Transformer(dt, 2, 3, 4, 2, 6, 1, 1) }},
			{"lstm", "", func(dt tensor.Dtype) (*models.Model, error) { return models.LSTMSeq(dt, 2, 3, 4, 3, 1) }},
		}
	}
	return []spec{
		{"mlp 784-512-10 b128", "mlp", func(dt tensor.Dtype) (*models.Model, error) { return models.MLP(dt, 128, []int{784, 512, 10}, 1) }},
		{"convnet 28x28x32 b32", "convnet", func(dt tensor.Dtype) (*models.Model, error) { return models.ConvNet(dt, 32, 28, 28, 32, 10, 0, 1) }},
		{"rnn 64→128 x16 b32", "rnn", func(dt tensor.Dtype) (*models.Model, error) { return models.RNN(dt, 32, 64, 128, 16, 1) }},
		{"attention 128x64", "attention", func(dt tensor.Dtype) (*models.Model, error) { return models.Attention(dt, 128, 64, 1) }},
		{"convnet-mnist b50", "convnet_mnist", func(dt tensor.Dtype) (*models.Model, error) {
			return models.ConvNetMNIST(dt, 50, [4]float64{}, 1)
		}},
		{"resnet 2 blocks 16ch 16x16 b32", "resnet", func(dt tensor.Dtype) (*models.Model, error) {
			return models.ResNet(dt, 32, 16, 16, 2, 10, 1)
		}},
		{"mobilenet 3 blocks 32ch 16x16 b32", "mobilenet", func(dt tensor.Dtype) (*models.Model, error) {
			return models.MobileNet(dt, 32, 16, 32, 3, 10, 1)
		}},
		{"transformer 1 layer 4x64 d128 h4 ff512", "transformer", func(dt tensor.Dtype) (*models.Model, error) {
			return models.Transformer(dt, 4, 64, 128, 4, 512, 1, 1)
		}},
		{"lstm 64→128 x16 b32", "lstm", func(dt tensor.Dtype) (*models.Model, error) { return models.LSTMSeq(dt, 32, 64, 128, 16, 1) }},
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
	// NodesGraph is the forward graph's node count before Grad; NodesBulkad and
	// NodesGorgonia are what each Grad added to it.
	NodesGraph int `json:"nodes_before_grad"`
	// SetupBulkad and SetupGorgonia time what a user waits for before the first step ends:
	// building the graph, Grad, NewTapeMachine and the first run (one sample each).
	SetupBulkad    Setup   `json:"setup_bulkad"`
	SetupGorgonia  Setup   `json:"setup_gorgonia"`
	DiffMSBulkad   float64 `json:"differentiation_ms_bulkad"`
	DiffMSGorgonia float64 `json:"differentiation_ms_gorgonia"`
	AllocsBulkad   float64 `json:"alloc_kb_per_step_bulkad"`
	AllocsGorgonia float64 `json:"alloc_kb_per_step_gorgonia"`
	// HVPStepMS is a step of a graph with bulkad.HessianVector nodes (H·v along a fixed
	// direction) instead of gradient nodes; HVPOverGrad divides it by BulkadStepMS.
	HVPStepMS   float64 `json:"hvp_step_ms"`
	HVPOverGrad float64 `json:"hvp_over_grad"`
	// HVPError says why bulkad.HessianVector could not be built or run (HVPStepMS is then 0).
	HVPError string `json:"hvp_error,omitempty"`
	// TorchStepMS is PyTorch's step of the same model (-torch), measured in the anchor
	// process between the Go steps; BulkadOverTorch divides BulkadStepMS by it.
	TorchStepMS     float64 `json:"torch_step_ms,omitempty"`
	BulkadOverTorch float64 `json:"bulkad_over_torch,omitempty"`
	// DefaultStepMS is gorgonia.Grad's step as a Gorgonia user has it out of the box (gonum's
	// GEMM, Gorgonia's engine), measured between the other steps (-baseline);
	// BulkadOverDefault divides BulkadStepMS (with -blas and -engine as given) by it.
	DefaultStepMS     float64 `json:"gorgonia_default_step_ms,omitempty"`
	BulkadOverDefault float64 `json:"bulkad_over_gorgonia_default,omitempty"`
	// Machine is bulkad.Grad's graph stepped on machine.New between the other steps (-machine).
	Machine *MachineRow `json:"machine,omitempty"`
}

// Setup is the time from nothing to the end of the first step, in milliseconds, and the
// graph's size before and after Grad.
type Setup struct {
	BuildMS    float64 `json:"build_ms"`     // the model's constructor (Gorgonia graph, values)
	GradMS     float64 `json:"grad_ms"`      // bulkad.Grad or gorgonia.Grad
	CompileMS  float64 `json:"compile_ms"`   // gorgonia.NewTapeMachine
	FirstRunMS float64 `json:"first_run_ms"` // the first RunAll (allocates every buffer)
	TotalMS    float64 `json:"total_ms"`
	Nodes      int     `json:"nodes_before_grad"`
	NodesAfter int     `json:"nodes_after_grad"`
}

// prepared is a compiled graph ready to step (it has run once).
type prepared struct {
	vm    G.VM
	model *models.Model // the graph the machine runs
	nodes int           // nodes added by Grad
	diff  time.Duration
	setup Setup
}

// newTapeMachine is gorgonia.NewTapeMachine with its panics (compile errors) as errors.
func newTapeMachine(g *G.ExprGraph, opts ...G.VMOpt) (vm G.VM, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = errors.Errorf("NewTapeMachine: panic: %v", r)
		}
	}()
	return G.NewTapeMachine(g, opts...), nil
}

// prepare builds the model, differentiates it with grad (none: the forward pass only),
// compiles it and runs it once, timing each stage (p.setup).
func prepare(s spec, dt tensor.Dtype, grad gradFunc, extra ...G.VMOpt) (*prepared, error) {
	t0 := time.Now()
	m, err := s.Build(dt)
	if err != nil {
		return nil, err
	}
	p := &prepared{model: m}
	p.setup.BuildMS = ms(time.Since(t0))
	before := len(m.G.AllNodes())
	var opts []G.VMOpt
	if grad != nil {
		t1 := time.Now()
		if _, err := grad(m.Cost, m.Wrt...); err != nil {
			return nil, errors.Wrapf(err, "%s: grad", s.Name)
		}
		p.diff = time.Since(t1)
		p.setup.GradMS = ms(p.diff)
		opts = append(opts, G.BindDualValues(m.Wrt...))
	}
	after := len(m.G.AllNodes())
	p.nodes = after - before
	p.setup.Nodes, p.setup.NodesAfter = before, after
	t2 := time.Now()
	if p.vm, err = newTapeMachine(m.G, append(opts, extra...)...); err != nil {
		return nil, errors.Wrap(err, s.Name)
	}
	p.setup.CompileMS = ms(time.Since(t2))
	first, err := p.step()
	if err != nil {
		p.vm.Close()
		return nil, errors.Wrapf(err, "%s: first run", s.Name)
	}
	p.setup.FirstRunMS = ms(first)
	p.setup.TotalMS = p.setup.BuildMS + p.setup.GradMS + p.setup.CompileMS + p.setup.FirstRunMS
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
	if p.vm, err = newTapeMachine(m.G, extra...); err != nil {
		return nil, errors.Wrapf(err, "%s: hessian-vector", s.Name)
	}
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

// pairedRatio is the median over the rounds of a[r]/b[r] (0 unless both have a step every
// round).
func pairedRatio(a, b []time.Duration) float64 {
	if len(a) == 0 || len(a) != len(b) {
		return 0
	}
	rs := make([]float64, len(a))
	for r := range a {
		if b[r] <= 0 {
			return 0
		}
		rs[r] = float64(a[r]) / float64(b[r])
	}
	sort.Float64s(rs)
	return rs[len(rs)/2]
}

func median(ds []time.Duration) float64 {
	s := append([]time.Duration{}, ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return float64(s[len(s)/2]) / float64(time.Millisecond)
}

// beforeTurn prepares the turn of a variant: the machine's starts after a garbage
// collection (before its untimed steps with -burst, which allocate nothing: the timed step
// follows steps, as in a training loop, not the collector's walk of the heap). It allocates
// nothing per step, so in a training loop of its own no collection runs during its steps;
// here the other variants' garbage would be collected during its timed step (at two threads the collector's worker took the second core from its splits: on the
// device host the MNIST convnet's float32 step sped up 1.11× from one to two threads in the
// bench, the sum of its kernels' times 1.54× in a process of its own).
func beforeTurn(variant string) {
	if variant == "machine" {
		runtime.GC()
	}
}

// machineAlloc is the KiB the machine p allocates a step, over steps run one after another:
// its timed steps follow a garbage collection, and across those the process's allocation
// grew by about 1 KiB a step (the collection's aftermath, not the plans: 0 back to back,
// which is what a training loop of the machine alone sees).
func machineAlloc(p *prepared) (float64, error) {
	const n = 4
	if _, err := p.step(); err != nil {
		return 0, err
	}
	var m0, m1 runtimeMem
	m0.read()
	for range n {
		if _, err := p.step(); err != nil {
			return 0, err
		}
	}
	m1.read()
	return m1.sub(m0) / n / 1024, nil
}

// measure runs bulkad, Gorgonia, the forward pass, the Hessian-vector graph and (with an
// anchor) PyTorch alternating (A B C D E A B C D E …) for rounds rounds after one warm-up
// round, and reports medians. Each turn runs burst steps in a row and times the last.
// With vm options (such as accel.Engine), every machine of the row gets them. With baseline,
// a fifth machine steps gorgonia.Grad's graph on Gorgonia's defaults: gonum's BLAS installed
// for its step only (whatever -blas installed is put back after it) and no vm options. With
// mach, bulkad.Grad's graph is also stepped on machine.New (which takes no vm options), after
// a garbage collection (it allocates nothing itself; the others' garbage is not its cost); a
// model the machine refuses gets row.Machine.Error and is measured without it.
func measure(s spec, dt tensor.Dtype, rounds, burst int, torch *anchor, baseline, mach bool, vm ...G.VMOpt) (Row, error) {
	row := Row{Model: s.Name, Dtype: dt.String()}
	burst = max(burst, 1)
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
	machines := []*prepared{a, b, c, nil}
	if h, err := prepareHVP(s, dt, vm...); err != nil {
		row.HVPError = err.Error()
	} else {
		defer h.vm.Close()
		machines[3] = h
	}
	if baseline {
		d, err := prepare(s, dt, G.Grad)
		if err != nil {
			return row, err
		}
		defer d.vm.Close()
		machines = append(machines, d)
	} else {
		machines = append(machines, nil)
	}
	if mach {
		e, err := measureMachineSetup(&row, a, s, dt)
		if err != nil {
			return row, err
		}
		if e != nil {
			defer e.vm.Close()
		}
		machines = append(machines, e)
	}
	variants := []string{"bulkad", "gorgonia", "forward", "hvp", "gorgonia-default", "machine"}
	var ta, tb, tc, th, tt, td, te []time.Duration
	var ma, mb float64
	for r := 0; r <= rounds; r++ {
		if torch != nil && s.Key != "" {
			var ms float64
			for range burst { // the last step of the turn is timed
				if ms, err = torch.number("step %s %s", s.Key, dt); err != nil {
					return row, err
				}
			}
			if r > 0 {
				tt = append(tt, time.Duration(ms*float64(time.Millisecond)))
			}
		}
		for k, p := range machines {
			if p == nil {
				continue
			}
			// the collection before the turn's steps: with -burst the timed step follows
			// steps of its own, not the collector's walk of the heap
			beforeTurn(variants[k])
			for range burst - 1 { // untimed steps before the timed one
				if _, err := p.step(); err != nil {
					return row, errors.Wrapf(err, "%s: step", s.Name)
				}
			}
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
			case 5:
				te = append(te, d) // its allocation is measured after the rounds (machineAlloc)
			}
		}
	}
	row.BulkadStepMS, row.GorgoniaStepMS, row.ForwardMS = median(ta), median(tb), median(tc)
	row.Ratio = row.BulkadStepMS / row.GorgoniaStepMS
	if len(th) > 0 {
		row.HVPStepMS = median(th)
		row.HVPOverGrad = row.HVPStepMS / row.BulkadStepMS
	}
	row.BulkadOverFwd = row.BulkadStepMS / row.ForwardMS
	row.GorgoniaOverFwd = row.GorgoniaStepMS / row.ForwardMS
	row.NodesBulkad, row.NodesGorgonia = a.nodes, b.nodes
	row.NodesGraph = a.setup.Nodes
	row.SetupBulkad, row.SetupGorgonia = a.setup, b.setup
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
	if len(te) > 0 {
		row.Machine.StepMS = median(te)
		row.Machine.OverBulkad = row.Machine.StepMS / row.BulkadStepMS
		if row.Machine.AllocKB, err = machineAlloc(machines[5]); err != nil {
			return row, errors.Wrapf(err, "%s: step", s.Name)
		}
		if row.TorchStepMS > 0 {
			row.Machine.OverTorch = row.Machine.StepMS / row.TorchStepMS
			row.Machine.PairedOverTorch = pairedRatio(te, tt)
		}
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
	hvp := "–"
	if r.HVPError == "" {
		hvp = fmt.Sprintf("%.2f", r.HVPOverGrad)
	}
	return fmt.Sprintf("| %s | %s | %.2f | %.2f | **%.2f** | %.2f | %.2f | %d → %d / %d | %.1f / %.1f | %.0f / %.0f | %.0f / %.0f | %s |",
		r.Model, r.Dtype, r.BulkadStepMS, r.GorgoniaStepMS, r.Ratio, r.BulkadOverFwd, r.GorgoniaOverFwd,
		r.NodesGraph, r.NodesGraph+r.NodesBulkad, r.NodesGraph+r.NodesGorgonia, r.DiffMSBulkad, r.DiffMSGorgonia,
		r.SetupBulkad.TotalMS, r.SetupGorgonia.TotalMS, r.AllocsBulkad, r.AllocsGorgonia, hvp)
}

const header = "| model | dtype | bulkad step ms | gorgonia step ms | bulkad/gorgonia | bulkad (value+grad)/forward | gorgonia/forward | nodes before Grad → after bulkad / gorgonia | differentiation ms bulkad / gorgonia | set-up ms bulkad / gorgonia | alloc KiB/step bulkad / gorgonia | HessianVector step / gradient step |\n|---|---|---|---|---|---|---|---|---|---|---|---|"

// setupHeader heads the set-up table: each stage from nothing to the end of the first step.
const setupHeader = "| model | dtype | build graph ms bulkad / gorgonia | Grad ms bulkad / gorgonia | NewTapeMachine ms bulkad / gorgonia | first run ms bulkad / gorgonia | set-up ms bulkad / gorgonia | bulkad/gorgonia |\n|---|---|---|---|---|---|---|---|"

func fmtSetupRow(r Row) string {
	a, b := r.SetupBulkad, r.SetupGorgonia
	return fmt.Sprintf("| %s | %s | %.1f / %.1f | %.1f / %.1f | %.1f / %.1f | %.1f / %.1f | %.0f / %.0f | **%.2f** |",
		r.Model, r.Dtype, a.BuildMS, b.BuildMS, a.GradMS, b.GradMS, a.CompileMS, b.CompileMS, a.FirstRunMS, b.FirstRunMS,
		a.TotalMS, b.TotalMS, a.TotalMS/b.TotalMS)
}

func fmtTorchRow(r Row) string {
	return fmt.Sprintf("| %s | %s | %.2f | %.2f | %.2f | **%.2f** | %.2f |",
		r.Model, r.Dtype, r.BulkadStepMS, r.GorgoniaStepMS, r.TorchStepMS, r.BulkadOverTorch, r.Ratio)
}

const torchHeader = "| model | dtype | bulkad step ms | gorgonia step ms | PyTorch step ms | bulkad/PyTorch | bulkad/gorgonia |\n|---|---|---|---|---|---|---|"

const defaultHeader = "| model | dtype | bulkad step ms | gorgonia.Grad step ms, Gorgonia's defaults (gonum GEMM, its engine) | bulkad/default |\n|---|---|---|---|---|"

func fmtDefaultRow(r Row) string {
	return fmt.Sprintf("| %s | %s | %.2f | %.2f | **%.2f** |", r.Model, r.Dtype, r.BulkadStepMS, r.DefaultStepMS, r.BulkadOverDefault)
}
