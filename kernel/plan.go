package kernel

import (
	"sync"
	"time"
	"unsafe"

	"github.com/bulkad/bulkad/core"
	"github.com/pkg/errors"
)

// Plan is a straight-line sequence of kernels over typed slots, built once and run many
// times: the execution form of a whole program that a front end has already planned kernel
// by kernel (package raise's coarse mode raises a gradient or an imported model as one
// Gorgonia node running one Plan).
//
// A slot is an input (a range of one of the run's input slices), a constant, the output of a
// step, or an alias of another slot (the same elements under another shape: a reshape).
// Run writes a packed output: one flat slice of a single dtype holding the slots of the
// layout given to Build at consecutive offsets (a slot listed twice, or two aliases of one
// slot, share their offset). A packed step output is computed in place inside the packed
// slice; the other step outputs live in buffers owned by the plan, allocated by Build and
// reused between steps whose values do not overlap in time (a buffer is handed to a later
// step of the same dtype and size after the last step reading it has run), so a plan
// allocates nothing per run.
//
// A Plan is safe for concurrent use (runs are serialised).
type Plan struct {
	mu     sync.Mutex
	slots  []planSlot
	steps  []planStep
	nIn    int
	inLen  []int // the least length of each input slice (0: unused)
	dtype  core.Dtype
	outLen int
	copies []planCopy // slots copied into the packed output after the last step
	bufs   []any      // step output buffers
	views  []any      // per slot: its flat view during a run
	// the slices the views were cut from at the last run (inputs, then out): a view boxed in
	// an interface allocates, so a run whose slices are the last run's keeps its views
	viewsOf []sliceKey
	recut   []bool // per slice of viewsOf: it differs from the last run's (scratch of run)
}

// sliceKey identifies a flat slice: its element type, first element and length.
type sliceKey struct {
	dt  core.Dtype
	ptr unsafe.Pointer
	n   int
}

// keyOf is v's sliceKey (the zero key for a value that is not a flat slice).
func keyOf(v any) sliceKey {
	switch x := v.(type) {
	case []float64:
		return sliceKey{core.Float64, unsafe.Pointer(unsafe.SliceData(x)), len(x)}
	case []float32:
		return sliceKey{core.Float32, unsafe.Pointer(unsafe.SliceData(x)), len(x)}
	case []int64:
		return sliceKey{core.Int64, unsafe.Pointer(unsafe.SliceData(x)), len(x)}
	case []bool:
		return sliceKey{core.Bool, unsafe.Pointer(unsafe.SliceData(x)), len(x)}
	}
	return sliceKey{}
}

// Slot names a value of a plan under construction.
type Slot int

type slotKind uint8

const (
	slotInput slotKind = iota
	slotConst
	slotStep
	slotAlias
)

type planSlot struct {
	typ  core.Type
	kind slotKind
	in   int // input index (slotInput)
	off  int // element offset in the input (slotInput) or in the packed output (packed step)
	val  any // the elements (slotConst)
	of   Slot
	// packed is set on a step output computed inside the packed output at off.
	packed bool
	buf    int // index into Plan.bufs (unpacked step outputs)
}

type planStep struct {
	k    Kernel
	term core.Term // for error messages
	ins  []Slot
	out  Slot
	args []any // the inputs' views during a run
}

// stagingReader is a kernel that may read a copy of its input staged by another kernel of
// its plan (WindowMatMul.ShareStaging, DepthwiseWindows.ShareStaging).
type stagingReader interface {
	stagingFrom() Kernel // the stager, nil when the kernel stages its own copy
	unshareStaging()     // make the kernel stage its own copy
}

// unshareLate gives every kernel that reads a staged copy, but whose stager's step does not
// come before its own, a copy of its own: it would otherwise read the copy of an earlier run.
func unshareLate(steps []planStep) {
	seen := map[Kernel]bool{} // only kernels of the staging types (pointers: comparable)
	for _, st := range steps {
		r, ok := st.k.(stagingReader)
		if !ok {
			continue
		}
		if s := r.stagingFrom(); s != nil && !seen[s] {
			r.unshareStaging()
		}
		seen[st.k] = true
	}
}

type planCopy struct {
	from Slot
	off  int
}

// PlanBuilder assembles a Plan. Its methods record the first error, which Build returns.
type PlanBuilder struct {
	p   *Plan
	err error
}

// NewPlanBuilder starts a plan over nInputs input slices.
func NewPlanBuilder(nInputs int) *PlanBuilder {
	return &PlanBuilder{p: &Plan{nIn: nInputs, inLen: make([]int, nInputs)}}
}

func (b *PlanBuilder) add(s planSlot) Slot {
	b.p.slots = append(b.p.slots, s)
	return Slot(len(b.p.slots) - 1)
}

func (b *PlanBuilder) valid(s Slot, what string) bool {
	if b.err == nil && (s < 0 || int(s) >= len(b.p.slots)) {
		b.err = errors.Errorf("kernel: plan: %s: no slot %d", what, s)
	}
	return b.err == nil
}

// Input is the slot holding elements off … off+size(t)-1 of input i.
func (b *PlanBuilder) Input(i, off int, t core.Type) Slot {
	if b.err == nil && (i < 0 || i >= b.p.nIn || off < 0) {
		b.err = errors.Errorf("kernel: plan: input %d at offset %d of %d inputs", i, off, b.p.nIn)
	}
	if b.err != nil {
		return -1
	}
	if n := off + t.Shape.Size(); n > b.p.inLen[i] {
		b.p.inLen[i] = n
	}
	return b.add(planSlot{typ: t, kind: slotInput, in: i, off: off})
}

// Const is a slot holding the elements v (a []float64, []float32, []int64 or []bool with
// t's dtype and size), which the plan keeps and never writes.
func (b *PlanBuilder) Const(v any, t core.Type) Slot {
	if b.err == nil && (SliceLen(v) != t.Shape.Size() || SliceDtype(v) != t.Dtype) {
		b.err = errors.Errorf("kernel: plan: constant of %s with %d elements, want %v", typeName(v), SliceLen(v), t)
	}
	if b.err != nil {
		return -1
	}
	return b.add(planSlot{typ: t, kind: slotConst, val: v})
}

// Step is the slot of k's output, of type t, computed from the slots ins; term (which may
// be nil) is what the step computes, for error messages.
func (b *PlanBuilder) Step(k Kernel, term core.Term, t core.Type, ins ...Slot) Slot {
	for _, s := range ins {
		b.valid(s, "step input")
	}
	if b.err == nil && k == nil {
		b.err = errors.New("kernel: plan: step without a kernel")
	}
	if b.err != nil {
		return -1
	}
	out := b.add(planSlot{typ: t, kind: slotStep, buf: -1})
	b.p.steps = append(b.p.steps, planStep{k: k, term: term, ins: append([]Slot(nil), ins...), out: out, args: make([]any, len(ins))})
	return out
}

// Alias is x's elements under type t (same dtype and size): a reshape, no copy.
func (b *PlanBuilder) Alias(x Slot, t core.Type) Slot {
	if !b.valid(x, "alias") {
		return -1
	}
	xt := b.p.slots[x].typ
	if xt.Dtype != t.Dtype || xt.Shape.Size() != t.Shape.Size() {
		b.err = errors.Errorf("kernel: plan: alias of %v as %v", xt, t)
		return -1
	}
	return b.add(planSlot{typ: t, kind: slotAlias, of: b.owner(x)})
}

// owner follows aliases to the slot that holds the elements.
func (b *PlanBuilder) owner(s Slot) Slot {
	for b.p.slots[s].kind == slotAlias {
		s = b.p.slots[s].of
	}
	return s
}

// Build finishes the plan. The packed output has dtype dt and holds the slots of layout (of
// that dtype) in order; Build returns each one's offset. The builder must not be used after.
func (b *PlanBuilder) Build(dt core.Dtype, layout []Slot) (*Plan, []int, error) {
	for _, s := range layout {
		b.valid(s, "packed output")
	}
	if b.err != nil {
		return nil, nil, b.err
	}
	p := b.p
	p.dtype = dt
	unshareLate(p.steps)
	offs := make([]int, len(layout))
	at := map[Slot]int{} // owner → its offset in the packed output
	for i, s := range layout {
		t := p.slots[s].typ
		if t.Dtype != dt {
			return nil, nil, errors.Errorf("kernel: plan: packed output of dtype %v cannot hold slot %d of type %v", dt, s, t)
		}
		o := b.owner(s)
		if off, ok := at[o]; ok {
			offs[i] = off
			continue
		}
		off := p.outLen
		if t.Shape.Size() >= alignMin {
			off = alignOffset(off, dt)
		}
		p.outLen = off + t.Shape.Size()
		at[o], offs[i] = off, off
		if os := &p.slots[o]; os.kind == slotStep {
			os.packed, os.off = true, off
		} else {
			p.copies = append(p.copies, planCopy{from: o, off: off})
		}
	}
	// Liveness: the last step reading each owner (len(steps) for the final copies).
	last := make([]int, len(p.slots))
	for i := range last {
		last[i] = -1
	}
	for i, st := range p.steps {
		for _, s := range st.ins {
			last[b.owner(s)] = i
		}
	}
	for _, c := range p.copies {
		last[c.from] = len(p.steps)
	}
	type key struct {
		dt core.Dtype
		n  int
	}
	free := map[key][]int{}
	var sizes []bufSize // the buffers' (allocBuffers)
	for i, st := range p.steps {
		os := &p.slots[st.out]
		reused := Slot(-1) // the input whose buffer the output takes over (InPlace)
		if o, ok := b.inPlace(st, i, last); ok && !os.packed {
			os.buf, reused = p.slots[o].buf, o
		} else if !os.packed {
			k := key{os.typ.Dtype, os.typ.Shape.Size()}
			if fs := free[k]; len(fs) > 0 {
				os.buf, free[k] = fs[len(fs)-1], fs[:len(fs)-1]
			} else {
				os.buf = len(sizes)
				sizes = append(sizes, bufSize{os.typ.Dtype, k.n})
			}
		}
		release := func(o Slot) {
			if s := p.slots[o]; o != reused && s.kind == slotStep && !s.packed && last[o] <= i {
				k := key{s.typ.Dtype, s.typ.Shape.Size()}
				free[k] = append(free[k], s.buf)
			}
		}
		seen := map[Slot]bool{}
		for _, s := range st.ins {
			if o := b.owner(s); !seen[o] {
				seen[o] = true
				release(o)
			}
		}
		if !seen[st.out] {
			release(st.out) // never read
		}
	}
	p.bufs = allocBuffers(sizes)
	p.views = make([]any, len(p.slots))
	for i, s := range p.slots {
		switch s.kind {
		case slotConst:
			p.views[i] = s.val
		case slotStep:
			if !s.packed {
				p.views[i] = p.bufs[s.buf]
			}
		}
	}
	b.p = nil
	return p, offs, nil
}

// inPlace reports whether step i's output may take over the buffer of its first input
// (returned, as the owner slot): the kernel writes over its first input (InPlace), which is
// an unpacked step output of the output's dtype and size that step i is the last to read
// and that no other input of step i shares.
func (b *PlanBuilder) inPlace(st planStep, i int, last []int) (Slot, bool) {
	ip, ok := st.k.(InPlace)
	if !ok || !ip.InPlace() || len(st.ins) == 0 {
		return -1, false
	}
	p := b.p
	o := b.owner(st.ins[0])
	s, out := p.slots[o], p.slots[st.out]
	if s.kind != slotStep || s.packed || last[o] != i || s.typ.Dtype != out.typ.Dtype || s.typ.Shape.Size() != out.typ.Shape.Size() {
		return -1, false
	}
	for _, x := range st.ins[1:] {
		if b.owner(x) == o {
			return -1, false
		}
	}
	return o, true
}

// alignMin is the size (elements) from which a slot of the packed output starts on a 64-byte
// line of it (alignOffset); smaller ones are packed one after another.
const alignMin = 256

// alignOffset is the first offset from off whose element starts a 64-byte line of a packed
// output that itself starts on one (the caller's slice; Go's large allocations do): a kernel
// writing a slot with non-temporal stores needs it (the GEMM's, see ntWorth).
func alignOffset(off int, dt core.Dtype) int {
	size := 8
	switch dt {
	case core.Float32:
		size = 4
	case core.Bool:
		size = 1
	}
	per := 64 / size
	return (off + per - 1) / per * per
}

// Inputs is the number of input slices Run takes.
func (p *Plan) Inputs() int { return p.nIn }

// OutLen is the number of elements of the packed output.
func (p *Plan) OutLen() int { return p.outLen }

// Dtype is the dtype of the packed output.
func (p *Plan) Dtype() core.Dtype { return p.dtype }

// Steps is the number of kernels the plan runs.
func (p *Plan) Steps() int { return len(p.steps) }

// BufferElems is the number of elements of the plan's own buffers (the packed output
// excluded), by dtype.
func (p *Plan) BufferElems() map[core.Dtype]int {
	m := map[core.Dtype]int{}
	for _, b := range p.bufs {
		m[SliceDtype(b)] += SliceLen(b)
	}
	return m
}

// StepTerm returns the term step i computes (nil if the builder was given none), for
// profiles and messages.
func (p *Plan) StepTerm(i int) core.Term { return p.steps[i].term }

// Run runs the plan on ins (flat slices, at least as long as the plan's inputs read) and
// writes the packed output into out (a flat slice of the plan's dtype and OutLen elements).
// Inputs are read, never written; they must not share memory with out.
func (p *Plan) Run(out any, ins []any) error { return p.run(out, ins, nil) }

// RunTimed is Run adding the wall time of each step i to times[i] (len(times) = Steps()): a
// profile of where a plan's time goes.
func (p *Plan) RunTimed(out any, ins []any, times []time.Duration) error {
	if len(times) != len(p.steps) {
		return errors.Errorf("kernel: plan: %d step times for %d steps", len(times), len(p.steps))
	}
	return p.run(out, ins, times)
}

func (p *Plan) run(out any, ins []any, times []time.Duration) (err error) {
	if len(ins) != p.nIn {
		return errors.Errorf("kernel: plan: %d inputs, want %d", len(ins), p.nIn)
	}
	if SliceLen(out) != p.outLen || SliceDtype(out) != p.dtype {
		return errors.Errorf("kernel: plan: output %s with %d elements, want %v with %d", typeName(out), SliceLen(out), p.dtype, p.outLen)
	}
	for i, in := range ins {
		if p.inLen[i] > 0 && SliceLen(in) < p.inLen[i] {
			return errors.Errorf("kernel: plan: input %d has %d elements, want at least %d", i, SliceLen(in), p.inLen[i])
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.viewsOf) != len(ins)+1 {
		p.viewsOf, p.recut = make([]sliceKey, len(ins)+1), make([]bool, len(ins)+1)
	}
	for k := range p.viewsOf { // the slices that differ from the last run's: their views are cut again
		v := out
		if k < len(ins) {
			v = ins[k]
		}
		key := keyOf(v)
		p.recut[k] = key.ptr == nil || key != p.viewsOf[k]
		p.viewsOf[k] = key
	}
	for i, s := range p.slots {
		switch {
		case s.kind == slotInput:
			if SliceDtype(ins[s.in]) != s.typ.Dtype {
				return errors.Errorf("kernel: plan: input %d is %s, want %v", s.in, typeName(ins[s.in]), s.typ)
			}
			if p.recut[s.in] || p.views[i] == nil {
				p.views[i] = subSlice(ins[s.in], s.off, s.typ.Shape.Size())
			}
		case s.kind == slotStep && s.packed:
			if p.recut[len(ins)] || p.views[i] == nil {
				p.views[i] = subSlice(out, s.off, s.typ.Shape.Size())
			}
		}
	}
	for i, s := range p.slots {
		if s.kind == slotAlias {
			p.views[i] = p.views[s.of]
		}
	}
	defer func() {
		if x := recover(); x != nil {
			err = errors.Errorf("kernel: plan: internal error (please report): %v", x)
		}
	}()
	for i := range p.steps {
		st := &p.steps[i]
		for j, s := range st.ins {
			st.args[j] = p.views[s]
		}
		var t0 time.Time
		if times != nil {
			t0 = time.Now()
		}
		if err := st.k.Run(p.views[st.out], st.args); err != nil {
			return errors.Wrapf(err, "kernel: plan: step %d of %d (%s)", i+1, len(p.steps), shortTerm(st.term))
		}
		if times != nil {
			times[i] += time.Since(t0)
		}
	}
	for _, c := range p.copies {
		copySlice(out, c.off, p.views[c.from])
	}
	return nil
}

// shortTerm prints t, cut to 200 characters.
func shortTerm(t core.Term) string {
	if t == nil {
		return "?"
	}
	s := t.String()
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}

// makeSlice is NewSlice.
func makeSlice(dt core.Dtype, n int) any {
	switch dt {
	case core.Float64:
		return make([]float64, n)
	case core.Float32:
		return make([]float32, n)
	case core.Int64:
		return make([]int64, n)
	}
	return make([]bool, n)
}

// subSlice is v[off:off+n] with capacity n.
func subSlice(v any, off, n int) any {
	switch x := v.(type) {
	case []float64:
		return x[off : off+n : off+n]
	case []float32:
		return x[off : off+n : off+n]
	case []int64:
		return x[off : off+n : off+n]
	case []bool:
		return x[off : off+n : off+n]
	}
	return nil
}

// copySlice copies src into dst at offset off (same element type).
func copySlice(dst any, off int, src any) {
	switch d := dst.(type) {
	case []float64:
		copy(d[off:], src.([]float64))
	case []float32:
		copy(d[off:], src.([]float32))
	case []int64:
		copy(d[off:], src.([]int64))
	case []bool:
		copy(d[off:], src.([]bool))
	}
}

// StepKernel is the kernel of step i (for profiling tools).
func (p *Plan) StepKernel(i int) Kernel { return p.steps[i].k }
