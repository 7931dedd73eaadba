package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"math/rand"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"strings"
	"time"

	"github.com/pkg/errors"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/bulkad/bulkad"
	"github.com/bulkad/bulkad/accel"
	"github.com/bulkad/bulkad/machine"
)

// TorchvisionRow is one torchvision model exported from PyTorch (weights=None, eval mode),
// imported with bulkad.ImportONNXFile, differentiated (loss Σ out ⊙ r with respect to every
// initializer) and stepped on a TapeMachine and on machine.New, against PyTorch's step of the
// same model. On the TapeMachine the imported forward pass is its own plan node and the
// gradient another, reading the forward's taped activations; the machine runs forward and
// gradient as one plan.
type TorchvisionRow struct {
	Model string `json:"model"`
	Dtype string `json:"dtype"`
	Batch int    `json:"batch"`
	Size  int    `json:"size"`
	// Set-up stages, seconds: ImportONNXFile, bulkad.Grad, gorgonia.NewTapeMachine, the
	// first RunAll; and their sum.
	Import, Grad, Machine, FirstRun, Setup float64
	// PeakHeapMB is the largest Go heap (live and unswept objects) sampled during set-up.
	PeakHeapMB float64 `json:"peak_heap_mb"`
	// Nodes after import, the model's inputs + parameters + outputs, and the nodes Grad added
	// for how many wrt nodes.
	ImportNodes, ModelValues, GradNodes, Wrt int
	// Medians of the alternated steps, milliseconds: bulkad's whole step (value and
	// gradient), PyTorch's, bulkad's forward pass alone (the cost's subgraph on its own
	// TapeMachine) and PyTorch's (the loss with autograd recording, no backward).
	Bulkad, Torch, Forward, TorchForward float64
	// The same graph on machine.New (ReuseValues and Lean(cost): the whole step, forward
	// included, from one compiled plan, the forward's intermediate values shared with the
	// gradient, only the cost's and the gradients' values filled): its set-up
	// (machine.New and the first run, seconds), the median step and forward pass alone
	// (machine.New of the cost's subgraph), milliseconds, and the relative difference of its
	// first loss from the TapeMachine's.
	MachineSetup, MachineStep, MachineForward, MachineLossDiff float64
	Error                                                      string `json:"error,omitempty"`
}

// torchvisionModels are the models the issue measures (tests/torchvision/export.py exports the
// same list by hand).
var torchvisionModels = []string{"resnet18", "mobilenet_v2", "efficientnet_b0", "densenet121", "regnet_x_400mf", "mnasnet0_5", "shufflenet_v2_x0_5"}

// runTorchvision measures the torchvision models named in list ("all" for every one) in both
// dtypes at batch × 3 × size × size, alternating bulkad's and PyTorch's steps.
func runTorchvision(list string, batch, size, rounds int, dtypes []tensor.Dtype, torch *anchor, w io.Writer) ([]TorchvisionRow, error) {
	names := torchvisionModels
	if list != "all" {
		names = strings.Split(list, ",")
	}
	dir, err := os.MkdirTemp("", "bulkad-torchvision")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	fmt.Fprintln(w, tvHeader)
	var rows []TorchvisionRow
	for _, name := range names {
		for _, dt := range dtypes {
			r := TorchvisionRow{Model: name, Dtype: dt.String(), Batch: batch, Size: size}
			if err := measureTorchvision(&r, dir, rounds, dt, torch); err != nil {
				r.Error = err.Error()
			}
			fmt.Fprintln(w, fmtTVRow(r))
			rows = append(rows, r)
			runtime.GC()
		}
	}
	return rows, nil
}

const tvHeader = "| model | dtype | import s | Grad s | NewTapeMachine s | first run s | set-up s | peak heap MB | nodes after import (inputs+params+outputs) | nodes Grad added (wrt) | bulkad step ms | PyTorch step ms | bulkad/PyTorch | bulkad forward ms | step/forward | PyTorch step/forward | machine set-up s | machine step ms | machine/PyTorch | machine step/forward | machine loss rel. diff |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"

func fmtTVRow(r TorchvisionRow) string {
	if r.Error != "" {
		return fmt.Sprintf("| %s | %s | error: %s |", r.Model, r.Dtype, r.Error)
	}
	return fmt.Sprintf("| %s | %s | %.2f | %.2f | %.2f | %.2f | %.2f | %.0f | %d (%d) | %d (%d) | %.1f | %.1f | **%.2f** | %.1f | %.2f | %.2f | %.2f | %.1f | **%.2f** | %.2f | %.0e |",
		r.Model, r.Dtype, r.Import, r.Grad, r.Machine, r.FirstRun, r.Setup, r.PeakHeapMB, r.ImportNodes, r.ModelValues,
		r.GradNodes, r.Wrt, r.Bulkad, r.Torch, r.Bulkad/r.Torch, r.Forward, r.Bulkad/r.Forward, r.Torch/r.TorchForward,
		r.MachineSetup, r.MachineStep, r.MachineStep/r.Torch, r.MachineStep/r.MachineForward, r.MachineLossDiff)
}

// heapPeak samples the Go heap every few milliseconds until stop is called.
func heapPeak() (stop func() float64) {
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	done := make(chan struct{})
	res := make(chan float64)
	go func() {
		peak := 0.0
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for {
			metrics.Read(sample)
			if v := float64(sample[0].Value.Uint64()); v > peak {
				peak = v
			}
			select {
			case <-done:
				res <- peak
				return
			case <-tick.C:
			}
		}
	}()
	return func() float64 {
		close(done)
		return <-res / 1e6
	}
}

func measureTorchvision(r *TorchvisionRow, dir string, rounds int, dt tensor.Dtype, torch *anchor) error {
	path := filepath.Join(dir, fmt.Sprintf("%s_%s.onnx", r.Model, r.Dtype))
	if _, err := torch.ask("tvexport %s %d %d %s %s", r.Model, r.Batch, r.Size, r.Dtype, path); err != nil {
		return err
	}
	defer os.Remove(path)
	runtime.GC()
	stop := heapPeak()
	t0 := time.Now()
	m, err := bulkad.ImportONNXFile(path)
	if err != nil {
		stop()
		return err
	}
	t1 := time.Now()
	r.ImportNodes = len(m.Graph.AllNodes())
	r.ModelValues = len(m.Inputs) + len(m.Params) + len(m.Outputs)
	if len(m.Inputs) != 1 || len(m.Outputs) != 1 {
		stop()
		return errors.Errorf("%d inputs and %d outputs, want 1 and 1", len(m.Inputs), len(m.Outputs))
	}
	rng := rand.New(rand.NewSource(1))
	random := func(sh tensor.Shape) *tensor.Dense {
		d := tensor.New(tensor.Of(dt), tensor.WithShape(sh...))
		switch v := d.Data().(type) {
		case []float64:
			for i := range v {
				v[i] = rng.NormFloat64()
			}
		case []float32:
			for i := range v {
				v[i] = float32(rng.NormFloat64())
			}
		}
		return d
	}
	if err := G.Let(m.Inputs[0], random(m.Inputs[0].Shape())); err != nil {
		stop()
		return err
	}
	out := m.Outputs[0]
	rn := G.NewTensor(m.Graph, dt, out.Dims(), G.WithShape(out.Shape()...), G.WithName("r"), G.WithValue(random(out.Shape())))
	prod, err := G.HadamardProd(out, rn)
	if err != nil {
		stop()
		return err
	}
	cost, err := G.Sum(prod)
	if err != nil {
		stop()
		return err
	}
	before := len(m.Graph.AllNodes())
	t2 := time.Now()
	if _, err := bulkad.Grad(cost, m.Params...); err != nil {
		stop()
		return err
	}
	t3 := time.Now()
	r.GradNodes, r.Wrt = len(m.Graph.AllNodes())-before, len(m.Params)
	vm := G.NewTapeMachine(m.Graph, G.BindDualValues(m.Params...), G.WithEngine(accel.Engine{}))
	defer vm.Close()
	t4 := time.Now()
	if err := vm.RunAll(); err != nil {
		stop()
		return err
	}
	t5 := time.Now()
	r.PeakHeapMB = stop()
	r.Import, r.Grad, r.Machine, r.FirstRun = t1.Sub(t0).Seconds(), t3.Sub(t2).Seconds(), t4.Sub(t3).Seconds(), t5.Sub(t4).Seconds()
	r.Setup = r.Import + r.Grad + r.Machine + r.FirstRun
	fm := G.NewTapeMachine(m.Graph.SubgraphRoots(cost), G.WithEngine(accel.Engine{}))
	defer fm.Close()
	tapeLoss, err := scalarOf(cost)
	if err != nil {
		return err
	}
	t6 := time.Now()
	mm, err := machine.New(m.Graph, machine.BindDualValues(m.Params...), machine.ReuseValues(), machine.Lean(cost))
	if err != nil {
		return err
	}
	defer mm.Close()
	if err := mm.RunAll(); err != nil {
		return err
	}
	r.MachineSetup = time.Since(t6).Seconds()
	machineLoss, err := scalarOf(cost)
	if err != nil {
		return err
	}
	r.MachineLossDiff = math.Abs(machineLoss-tapeLoss) / max(math.Abs(tapeLoss), 1e-300)
	mf, err := machine.New(m.Graph.SubgraphRoots(cost), machine.ReuseValues())
	if err != nil {
		return err
	}
	defer mf.Close()
	var bs, ts, fs, tfs, mach, machF []time.Duration
	for i := 0; i <= rounds; i++ {
		d, err := timeRun(vm)
		if err != nil {
			return err
		}
		f, err := timeRun(fm)
		if err != nil {
			return err
		}
		md, err := timeRun(mm)
		if err != nil {
			return err
		}
		mfd, err := timeRun(mf)
		if err != nil {
			return err
		}
		if i > 0 {
			mach, machF = append(mach, md), append(machF, mfd)
		}
		ms, err := torch.number("tvstep %s %d %d %s", r.Model, r.Batch, r.Size, r.Dtype)
		if err != nil {
			return err
		}
		fms, err := torch.number("tvforward %s %d %d %s", r.Model, r.Batch, r.Size, r.Dtype)
		if err != nil {
			return err
		}
		if i > 0 { // the first round warms up
			bs, fs = append(bs, d), append(fs, f)
			ts = append(ts, time.Duration(ms*float64(time.Millisecond)))
			tfs = append(tfs, time.Duration(fms*float64(time.Millisecond)))
		}
	}
	r.Bulkad, r.Torch, r.Forward, r.TorchForward = median(bs), median(ts), median(fs), median(tfs)
	r.MachineStep, r.MachineForward = median(mach), median(machF)
	return nil
}

// scalarOf is the value of a scalar node as a float64.
func scalarOf(n *G.Node) (float64, error) {
	switch v := n.Value().Data().(type) {
	case float64:
		return v, nil
	case float32:
		return float64(v), nil
	}
	return 0, errors.Errorf("%v: value %v is not a float scalar", n, n.Value())
}

// timeRun times one Reset and RunAll of m.
func timeRun(m G.VM) (time.Duration, error) {
	s := time.Now()
	m.Reset()
	err := m.RunAll()
	return time.Since(s), err
}

// torchvisionMain is the -torchvision mode: it needs PyTorch (exports and the anchor).
func torchvisionMain(list string, batch, size int, dtypes string, rounds, threads int, asJSON bool) error {
	var dts []tensor.Dtype
	switch dtypes {
	case "both":
		dts = []tensor.Dtype{tensor.Float32, tensor.Float64}
	case "float32":
		dts = []tensor.Dtype{tensor.Float32}
	case "float64":
		dts = []tensor.Dtype{tensor.Float64}
	default:
		return errors.Errorf("bench: -tvdtype %q: want float32, float64 or both", dtypes)
	}
	torch, err := startAnchor(threads)
	if err != nil {
		return errors.Wrap(err, "bench: -torchvision needs PyTorch")
	}
	defer torch.close()
	w := io.Writer(os.Stdout)
	if asJSON {
		w = io.Discard
	}
	fmt.Fprintf(w, "threads: %d; batch %d, images 3×%d×%d\n\n", threads, batch, size, size)
	rows, err := runTorchvision(list, batch, size, rounds, dts, torch, w)
	if err != nil {
		return err
	}
	if asJSON {
		b, _ := json.MarshalIndent(rows, "", "  ")
		fmt.Println(string(b))
	}
	return nil
}
