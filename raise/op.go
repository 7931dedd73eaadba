package raise

import (
	"fmt"
	"hash"
	"hash/fnv"
	"sync"
	"sync/atomic"

	kern "github.com/bulkad/bulkad/kernel"

	"github.com/bulkad/bulkad/core"
	"github.com/chewxy/hm"
	"github.com/pkg/errors"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Op is a bulkad custom Gorgonia op: one core operation (possibly a cheap fusion of a few)
// with a CPU kernel on flat slices. Its meaning is the one-node core program Program()
// (fn (inputs) => term), which String prints and WriteHash hashes, so two Ops hash equal
// only when they compute the same function.
type Op struct {
	pure // text: prog printed
	prog *core.Program
	body string // prog.Body printed
	kind string
	args []core.Type
	out  core.Type
	k    kern.Kernel
	// argHM, when set, are the children's Gorgonia types (e.g. Int for an i64 input),
	// used by Type instead of the types derived from args.
	argHM []hm.Type

	// fresh makes Do return a new value at every run (the node's value can become a result's
	// value, which a user may keep); otherwise the output buffer is reused across runs (the
	// TapeMachine clears its registers at every Reset, so UsePreallocDo alone would allocate
	// at every step). See markFresh.
	fresh     atomic.Bool
	mu        sync.Mutex
	cache     gorgonia.Value
	cacheFlat any
}

var (
	_ gorgonia.Op              = (*Op)(nil)
	_ gorgonia.UsePreallocDoer = (*Op)(nil)
)

// newOp wraps term t over the parameters params (its inputs, in order) with kernel k.
func newOp(kind string, params []*core.Var, t core.Term, k kern.Kernel) (*Op, error) {
	p, err := core.NewProgram(params, t)
	if err != nil {
		return nil, errors.Wrapf(err, "raise: %s: building the op's program", kind)
	}
	o := &Op{pure: pure{text: p.String()}, prog: p, body: t.String(), kind: kind, out: t.Type(), k: k}
	for _, v := range params {
		o.args = append(o.args, v.Type())
	}
	return o, nil
}

// salted returns a copy of the op whose hash (and printed program) also includes salt.
func (o *Op) salted(salt string) *Op {
	return &Op{pure: pure{text: o.text + " #" + salt}, prog: o.prog, body: o.body, kind: o.kind, args: o.args, out: o.out, k: o.k, argHM: o.argHM}
}

// Program returns the one-node core program the op computes (its inputs are the params).
func (o *Op) Program() *core.Program { return o.prog }

// Kind names the operation (gather, scatter, matmul, …), for statistics.
func (o *Op) Kind() string { return o.kind }

// Arity is the number of inputs.
func (o *Op) Arity() int { return len(o.args) }

// Type is the Gorgonia function type of the op (input types → output type).
func (o *Op) Type() hm.Type {
	ts := make([]hm.Type, 0, len(o.args)+1)
	for i, a := range o.args {
		if i < len(o.argHM) && o.argHM[i] != nil {
			ts = append(ts, o.argHM[i])
			continue
		}
		ts = append(ts, hmType(a))
	}
	ts = append(ts, hmType(o.out))
	if len(ts) == 1 {
		return ts[0]
	}
	return hm.NewFnType(ts...)
}

// InferShape returns the output shape (static in the core language).
func (o *Op) InferShape(ds ...gorgonia.DimSizer) (tensor.Shape, error) {
	if len(ds) != len(o.args) {
		return nil, errors.Errorf("raise: %s: %d input shapes, want %d", o.kind, len(ds), len(o.args))
	}
	for i, d := range ds {
		s, ok := d.(tensor.Shape)
		if !ok {
			continue
		}
		want := o.args[i].Shape
		if !(s.IsScalar() && len(want) == 0) && !s.Eq(tensor.Shape(want)) {
			return nil, errors.Errorf("raise: %s: input %d has shape %v, want %v", o.kind, i, s, want)
		}
	}
	return tensorShape(o.out.Shape), nil
}

// inputs returns the flat slices of the op's inputs, checking their number and sizes.
func (o *Op) inputs(vs []gorgonia.Value) ([]any, error) {
	ins, err := flatAll(vs, len(o.args), o.kind, "input")
	if err != nil {
		return nil, err
	}
	for i, s := range ins {
		if n := o.args[i].Shape.Size(); kern.SliceLen(s) != n {
			return nil, errors.Errorf("raise: %s: input %d has %d elements, want %d (%v)", o.kind, i, kern.SliceLen(s), n, o.args[i])
		}
	}
	return ins, nil
}

// Do runs the kernel. An op whose value can become the value of a raised result (see
// markFresh) returns a new value at every run, as Gorgonia's own ops do after the
// TapeMachine's Reset: a gradient value a user kept from one run is not changed by the next.
// Other ops run into their output buffer, allocated at the first run and reused: their
// values are read by the raised nodes within the run only.
func (o *Op) Do(vs ...gorgonia.Value) (gorgonia.Value, error) {
	ins, err := o.inputs(vs)
	if err != nil {
		return nil, err
	}
	if o.fresh.Load() {
		out, buf := newValue(o.out)
		if err := o.k.Run(buf, ins); err != nil {
			return nil, err
		}
		return out, nil
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.cache == nil || aliases(o.cacheFlat, ins) {
		o.cache, o.cacheFlat = newValue(o.out)
	}
	if err := o.k.Run(o.cacheFlat, ins); err != nil {
		o.cache, o.cacheFlat = nil, nil
		return nil, err
	}
	return o.cache, nil
}

// aliases reports whether buf shares its first element with one of the inputs.
func aliases(buf any, ins []any) bool {
	for _, in := range ins {
		if sameBacking(buf, in) {
			return true
		}
	}
	return false
}

// UsePreallocDo runs the kernel into prealloc when it has the output's type and shape, and
// into a new value otherwise.
func (o *Op) UsePreallocDo(prealloc gorgonia.Value, vs ...gorgonia.Value) (gorgonia.Value, error) {
	out, ok := reuse(prealloc, o.out)
	if !ok {
		return o.Do(vs...)
	}
	ins, err := o.inputs(vs)
	if err != nil {
		return nil, err
	}
	if aliases(out, ins) {
		return o.Do(vs...)
	}
	if err := o.k.Run(out, ins); err != nil {
		return nil, err
	}
	return prealloc, nil
}

// pure holds what raise's Gorgonia ops have in common: they return fresh values, call no
// extern code, overwrite no input, and are identified by their text (for an Op, its full
// one-node program, every parameter and index function included), which they hash.
type pure struct {
	text string
}

// ReturnsPtr is false: the result never aliases an input.
func (*pure) ReturnsPtr() bool { return false }

// CallsExtern is false: kernels are pure Go.
func (*pure) CallsExtern() bool { return false }

// OverwritesInput is -1: inputs are never overwritten.
func (*pure) OverwritesInput() int { return -1 }

// WriteHash writes the op's text.
func (p *pure) WriteHash(h hash.Hash) { fmt.Fprintf(h, "bulkad %s", p.text) }

// Hashcode hashes WriteHash's output.
func (p *pure) Hashcode() uint32 {
	h := fnv.New32a()
	p.WriteHash(h)
	return h.Sum32()
}

// String prints the op's term in the core syntax over its inputs.
func (o *Op) String() string { return o.body }

// Vulkan is the device back end of the kernels raise wraps (see kernel.Vulkan); set it in
// Options.Vulkan.
type Vulkan = kern.Vulkan
