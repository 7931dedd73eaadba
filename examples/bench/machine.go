package main

import (
	"fmt"
	"io"
	"math"
	"time"

	"github.com/pkg/errors"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/bulkad/bulkad"
	"github.com/bulkad/bulkad/machine"
)

// MachineRow is the -machine measurement of one model: bulkad.Grad's graph stepped on
// machine.New (the whole graph from compiled plans) between the other machines of the row.
type MachineRow struct {
	StepMS float64 `json:"step_ms"`
	// OverBulkad divides StepMS by bulkad.Grad's step on the TapeMachine (Row.BulkadStepMS);
	// OverTorch by PyTorch's step (with -torch). PairedOverTorch is the median over the
	// rounds of each round's machine step over its PyTorch step: this VM's speed drifts by
	// up to 1.5× within minutes, which moves both steps of a round alike but the two
	// medians of OverTorch apart when they fall in different stretches.
	OverBulkad      float64 `json:"over_bulkad"`
	OverTorch       float64 `json:"over_torch,omitempty"`
	PairedOverTorch float64 `json:"paired_over_torch,omitempty"`
	// Setup times build, bulkad.Grad, machine.New (CompileMS) and the first run.
	Setup   Setup   `json:"setup"`
	AllocKB float64 `json:"alloc_kb_per_step"`
	// Loss and TapeLoss are the cost after the first run on the machine and on the
	// TapeMachine (bulkad.Grad's graph); GradDiff is the largest difference of a gradient
	// entry over the largest gradient entry (the TapeMachine's, all wrt nodes).
	Loss     float64 `json:"loss"`
	TapeLoss float64 `json:"tape_loss"`
	GradDiff float64 `json:"grad_rel_diff"`
	// Mismatch says how the first step differs from the TapeMachine's beyond the dtype's
	// tolerance (the step is still timed).
	Mismatch string `json:"mismatch,omitempty"`
	// Error says why the machine refused the model or failed (StepMS is then 0).
	Error string `json:"error,omitempty"`
}

// firstStep is what a machine computed on its first run: the cost and each wrt node's
// gradient (its dual value), copied as float64.
type firstStep struct {
	loss  float64
	grads [][]float64
	names []string // the wrt nodes'
}

// readFirst copies the cost's value and the wrt nodes' gradients after the first run.
func readFirst(cost *G.Node, wrt G.Nodes) (firstStep, error) {
	var f firstStep
	l, err := floats(cost.Value())
	if err != nil || len(l) != 1 {
		return f, errors.Errorf("bench: reading the loss: node %q holds %v (%v)", cost.Name(), cost.Value(), err)
	}
	f.loss = l[0]
	for _, w := range wrt {
		g, err := w.Grad()
		if err != nil {
			return f, errors.Wrapf(err, "bench: reading the gradient of %q", w.Name())
		}
		s, err := floats(g)
		if err != nil {
			return f, errors.Wrapf(err, "bench: reading the gradient of %q", w.Name())
		}
		f.grads = append(f.grads, s)
		f.names = append(f.names, w.Name())
	}
	return f, nil
}

// floats copies a scalar or dense value's elements as float64.
func floats(v G.Value) ([]float64, error) {
	s, err := machine.Flat(v)
	if err != nil {
		return nil, errors.Wrap(err, "bench: value")
	}
	switch d := s.(type) {
	case []float64:
		return append([]float64(nil), d...), nil
	case []float32:
		out := make([]float64, len(d))
		for i, e := range d {
			out[i] = float64(e)
		}
		return out, nil
	}
	return nil, errors.Errorf("bench: value %T is not a float32 or float64 scalar or tensor", v)
}

// compareFirst sets r's losses, gradient difference and, beyond tol (relative), Mismatch.
func compareFirst(r *MachineRow, mach, tape firstStep, tol float64) {
	r.Loss, r.TapeLoss = mach.loss, tape.loss
	if len(mach.grads) != len(tape.grads) {
		r.Mismatch = fmt.Sprintf("%d gradients on the machine, %d on the TapeMachine", len(mach.grads), len(tape.grads))
		return
	}
	// The scale is the largest gradient entry of any wrt node: a gradient that is zero in
	// exact arithmetic (an attention key bias) holds rounding noise, which differs between
	// the two machines by more than its own size.
	scale := math.SmallestNonzeroFloat64
	for _, b := range tape.grads {
		for _, e := range b {
			scale = math.Max(scale, math.Abs(e))
		}
	}
	worst := -1
	for i := range mach.grads {
		a, b := mach.grads[i], tape.grads[i]
		if len(a) != len(b) {
			r.Mismatch = fmt.Sprintf("gradient %d has %d elements on the machine, %d on the TapeMachine", i, len(a), len(b))
			return
		}
		var dmax float64
		for j := range a {
			if d := math.Abs(a[j] - b[j]); d > dmax || math.IsNaN(d) {
				dmax = d
				if math.IsNaN(d) {
					break
				}
			}
		}
		if rel := dmax / scale; rel > r.GradDiff || math.IsNaN(rel) {
			r.GradDiff, worst = rel, i
			if math.IsNaN(rel) {
				break
			}
		}
	}
	lossRel := math.Abs(mach.loss-tape.loss) / math.Max(math.Abs(tape.loss), math.SmallestNonzeroFloat64)
	switch {
	case !(lossRel <= tol):
		r.Mismatch = fmt.Sprintf("loss %.9g on the machine, %.9g on the TapeMachine (relative difference %.2g > %.0g)", mach.loss, tape.loss, lossRel, tol)
	case !(r.GradDiff <= tol):
		r.Mismatch = fmt.Sprintf("the gradient of %q differs from the TapeMachine's by %.2g of the largest gradient entry (> %.0g)", tape.names[worst], r.GradDiff, tol)
	}
}

// tolerance is the relative difference allowed between the machine's first step and the
// TapeMachine's: the kernels sum in other orders, so a few thousand roundings apart.
func tolerance(dt tensor.Dtype) float64 {
	if dt == tensor.Float32 {
		return 1e-3
	}
	return 1e-9
}

// prepareMachine builds the model, differentiates it with bulkad.Grad, compiles it with
// machine.New (dual values bound to the wrt nodes) and runs it once, timing each stage; it
// also returns the first step's loss and gradients.
func prepareMachine(s spec, dt tensor.Dtype) (*prepared, firstStep, error) {
	t0 := time.Now()
	m, err := s.Build(dt)
	if err != nil {
		return nil, firstStep{}, err
	}
	p := &prepared{}
	p.setup.BuildMS = ms(time.Since(t0))
	before := len(m.G.AllNodes())
	t1 := time.Now()
	if _, err := bulkad.Grad(m.Cost, m.Wrt...); err != nil {
		return nil, firstStep{}, errors.Wrapf(err, "%s: grad", s.Name)
	}
	p.diff = time.Since(t1)
	p.setup.GradMS = ms(p.diff)
	after := len(m.G.AllNodes())
	p.nodes = after - before
	p.setup.Nodes, p.setup.NodesAfter = before, after
	t2 := time.Now()
	vm, err := machine.New(m.G, machine.BindDualValues(m.Wrt...), machine.ReuseValues(), machine.Lean(m.Cost))
	if err != nil {
		return nil, firstStep{}, err
	}
	p.vm = vm
	p.setup.CompileMS = ms(time.Since(t2))
	t3 := time.Now()
	if err := p.vm.RunAll(); err != nil {
		p.vm.Close()
		return nil, firstStep{}, errors.Wrap(err, "first run")
	}
	p.setup.FirstRunMS = ms(time.Since(t3))
	first, err := readFirst(m.Cost, m.Wrt)
	p.vm.Reset()
	if err != nil {
		p.vm.Close()
		return nil, firstStep{}, err
	}
	p.setup.TotalMS = p.setup.BuildMS + p.setup.GradMS + p.setup.CompileMS + p.setup.FirstRunMS
	return p, first, nil
}

// machineHeader heads the -machine table.
const machineHeader = "| model | dtype | bulkad step ms (TapeMachine) | machine step ms | machine/bulkad | PyTorch step ms | machine/PyTorch (paired: the median of the rounds' ratios) | machine set-up ms: build / Grad / machine.New / first run = total | bulkad set-up ms (TapeMachine) | alloc KiB/step machine / bulkad | first-step loss machine (its rel. diff; largest grad diff / largest grad entry) against the TapeMachine |\n|---|---|---|---|---|---|---|---|---|---|---|"

// fmtMachineRow formats r's -machine measurement; a refused model gets "—" and a footnote
// mark (note), whose text fmtMachineNotes prints.
func fmtMachineRow(r Row, note int) string {
	m := r.Machine
	torch, mt := "—", "—"
	if r.TorchStepMS > 0 {
		torch = fmt.Sprintf("%.2f", r.TorchStepMS)
	}
	if m == nil || m.Error != "" {
		return fmt.Sprintf("| %s | %s | %.2f | — [%d] | — | %s | — | — | %.0f | — | — |", r.Model, r.Dtype, r.BulkadStepMS, note, torch, r.SetupBulkad.TotalMS)
	}
	if m.OverTorch > 0 {
		mt = fmt.Sprintf("**%.2f**", m.OverTorch)
		if m.PairedOverTorch > 0 {
			mt += fmt.Sprintf(" (%.2f)", m.PairedOverTorch)
		}
	}
	check := fmt.Sprintf("%.6g (%.1g; %.1g)", m.Loss, math.Abs(m.Loss-m.TapeLoss)/math.Abs(m.TapeLoss), m.GradDiff)
	if m.Mismatch != "" {
		check += fmt.Sprintf(" differs [%d]", note)
	}
	s := m.Setup
	return fmt.Sprintf("| %s | %s | %.2f | %.2f | **%.2f** | %s | %s | %.1f / %.1f / %.1f / %.1f = %.0f | %.0f | %.0f / %.0f | %s |",
		r.Model, r.Dtype, r.BulkadStepMS, m.StepMS, m.OverBulkad, torch, mt, s.BuildMS, s.GradMS, s.CompileMS, s.FirstRunMS, s.TotalMS,
		r.SetupBulkad.TotalMS, m.AllocKB, r.AllocsBulkad, check)
}

// machineNote is the footnote of a row: why the machine refused it, or how its first step
// differs from the TapeMachine's ("" when neither).
func machineNote(r Row) string {
	switch {
	case r.Machine == nil:
		return ""
	case r.Machine.Error != "":
		return "machine.New or its run failed: " + r.Machine.Error
	case r.Machine.Mismatch != "":
		return "first step: " + r.Machine.Mismatch
	}
	return ""
}

// measureMachineSetup prepares the machine of a row (-machine) and compares its first step
// with the TapeMachine's (tape: bulkad.Grad's graph, which has run once). A model the
// machine refuses sets row.Machine.Error and returns a nil machine; err is reserved for
// failures of the TapeMachine's side.
func measureMachineSetup(row *Row, tape *prepared, s spec, dt tensor.Dtype) (*prepared, error) {
	row.Machine = &MachineRow{}
	want, err := readFirst(tape.model.Cost, tape.model.Wrt)
	if err != nil {
		return nil, errors.Wrapf(err, "%s: the TapeMachine's first step", s.Name)
	}
	e, got, err := prepareMachine(s, dt)
	if err != nil {
		row.Machine.Error = err.Error()
		return nil, nil
	}
	row.Machine.Setup = e.setup
	compareFirst(row.Machine, got, want, tolerance(dt))
	return e, nil
}

// printMachine prints the -machine table and its footnotes (models the machine refused,
// first steps that differ from the TapeMachine's).
func printMachine(w io.Writer, rows []Row) {
	fmt.Fprintln(w, "bulkad.Grad's graph on machine.New with ReuseValues and Lean(cost) (one plan for the whole graph, values written in place, only the cost's and the gradients' values filled) against the same graph on the TapeMachine:")
	fmt.Fprintln(w)
	fmt.Fprintln(w, machineHeader)
	var notes []string
	for _, r := range rows {
		n := 0
		if text := machineNote(r); text != "" {
			notes = append(notes, fmt.Sprintf("[%d] %s %s: %s", len(notes)+1, r.Model, r.Dtype, text))
			n = len(notes)
		}
		fmt.Fprintln(w, fmtMachineRow(r, n))
	}
	if len(notes) > 0 {
		fmt.Fprintln(w)
		for _, n := range notes {
			fmt.Fprintln(w, n)
		}
	}
}
