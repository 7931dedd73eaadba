package machine

import (
	"fmt"
	"reflect"

	kern "github.com/bulkad/bulkad/kernel"
	"github.com/bulkad/bulkad/raise"

	"github.com/pkg/errors"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// RunAll runs the whole graph once: the nodes computed by their own op, the plans, raise's
// auxiliary nodes, then the dual values and the Read targets. Like the TapeMachine, it runs
// once per Reset: a second call without Reset does nothing.
func (m *Machine) RunAll() (err error) {
	if m == nil || m.g == nil {
		return errors.New("machine: run: nil or uninitialised machine (use machine.New)")
	}
	if m.closed {
		return errors.New("machine: run: the machine is closed")
	}
	if m.ran {
		return nil
	}
	defer func() {
		if r := recover(); r != nil {
			err = errors.Errorf("machine: run: panic inside Gorgonia or bulkad: %v", r)
		}
	}()
	for n, text := range m.mutable {
		if w, ok := m.windows[n]; ok {
			if now, ok := raise.SliceWindow(n.Op()); ok && now == w {
				continue // the same window (compared without printing the op)
			}
		}
		if now := fmt.Sprint(n.Op()); now != text {
			return errors.Errorf("machine: run: node %q (ID %d) changed after machine.New (its op was %s, is now %s, e.g. by UnsafeLet): build a new machine", n.Name(), n.ID(), text, now)
		}
	}
	for _, n := range m.inputs {
		if n.Value() == nil {
			return errors.Errorf("machine: run: input node %q (ID %d, %v %v) has no value: bind one with gorgonia.Let", n.Name(), n.ID(), n.Dtype(), n.Shape())
		}
	}
	for _, n := range m.pre {
		if err := m.doOp(n); err != nil {
			return err
		}
	}
	for _, pr := range m.plans {
		if err := pr.run(); err != nil {
			return err
		}
	}
	for _, n := range m.aux {
		if m.keeps[n] && n.Value() != nil {
			continue // a keepAlive's value is a constant zero, given by the first run
		}
		if err := m.doOp(n); err != nil {
			return err
		}
	}
	for _, l := range m.grads {
		if err := addDual(l.src, l.grad); err != nil {
			return err
		}
	}
	for _, n := range m.reads {
		if err := m.read(n); err != nil {
			return err
		}
	}
	m.ran = true
	return nil
}

// Reset prepares the next run (as the TapeMachine's Reset). Node values are kept.
func (m *Machine) Reset() {
	if m != nil {
		m.ran = false
	}
}

// Close releases the compiled plans; RunAll fails afterwards. Node values are kept.
func (m *Machine) Close() error {
	if m == nil {
		return nil
	}
	m.closed = true
	m.plans, m.pre, m.aux, m.reads, m.grads = nil, nil, nil, nil, nil
	return nil
}

// doOp runs n's own Gorgonia op on its operands' values and binds the result.
func (m *Machine) doOp(n *gorgonia.Node) error {
	kids := m.kids[n]
	vs, ok := m.args[n]
	if !ok {
		vs = make([]gorgonia.Value, len(kids))
		m.args[n] = vs
	}
	_, aux := m.keeps[n] // raise's keepAlive or guard node
	for i, k := range kids {
		// raise's keepAlive and guard ops read no operand value (a guard checks its node's
		// op): with Lean their operands may have none
		if vs[i] = k.Value(); vs[i] == nil && !aux {
			return errors.Errorf("machine: run: node %q (ID %d): operand %d (node %q) has no value", n.Name(), n.ID(), i, k.Name())
		}
	}
	v, err := n.Op().Do(vs...)
	clear(vs) // the slice outlives the run: it must not keep the operands' values alive
	if err != nil {
		return errors.Wrapf(err, "machine: run: node %q (ID %d) with op %v", n.Name(), n.ID(), n.Op())
	}
	if v != nil && v == n.Value() {
		return nil // the op gave the value the node has (a guard's constant)
	}
	if err := gorgonia.UnsafeLet(n, v); err != nil {
		return errors.Wrapf(err, "machine: run: binding the value of node %q (ID %d)", n.Name(), n.ID())
	}
	return nil
}

// run runs one plan into a new packed vector and binds each result node to its range.
func (pr *planRun) run() error {
	if len(pr.args) != len(pr.ins) {
		pr.args = make([]any, len(pr.ins))
	}
	ins := pr.args
	for i := range pr.ins {
		s := &pr.ins[i]
		if s.node == nil {
			ins[i] = s.konst
			continue
		}
		v, err := s.read()
		if err != nil {
			return errors.Wrapf(err, "machine: run: reading node %q (ID %d)", s.node.Name(), s.node.ID())
		}
		ins[i] = v
	}
	out := pr.buf
	if out == nil || !pr.reuse {
		out = kern.NewSlice(pr.dt, pr.kp.OutLen())
		if pr.reuse {
			pr.buf = out
		}
	}
	if err := pr.kp.Run(out, ins); err != nil {
		return errors.Wrap(err, "machine: run")
	}
	for i := range pr.outs {
		r := &pr.outs[i]
		if pr.reuse && r.inPlace(out) {
			continue // the node's value already shows this run's elements
		}
		var v gorgonia.Value
		if pr.reuse && r.copy {
			v = r.copyInto(out)
		}
		if v == nil {
			v = valueOf(r.node, out, r.off, r.typ.Shape.Size(), r.copy)
		}
		if v == nil {
			return errors.Errorf("machine: run: node %q (ID %d) of dtype %v in a %v plan (internal error)", r.node.Name(), r.node.ID(), r.node.Dtype(), pr.dt)
		}
		if err := gorgonia.UnsafeLet(r.node, v); err != nil {
			return errors.Wrapf(err, "machine: run: binding the value of node %q (ID %d)", r.node.Name(), r.node.ID())
		}
	}
	return nil
}

// read is Flat of the source node's value, without allocating when the node holds the value
// object of the last run over the same array (its backing array is read in place, a
// scalar-shaped tensor's one element included), or a Gorgonia scalar (its slice is refilled).
func (s *source) read() (any, error) {
	switch v := s.node.Value().(type) {
	case *tensor.Dense:
		if v == s.last && s.flat != nil && v.Uintptr() == s.ptr && v.DataSize() == s.size && !v.RequiresIterator() {
			return s.flat, nil
		}
		if f := backing(v); f != nil {
			s.last, s.flat, s.ptr, s.size = v, f, v.Uintptr(), v.DataSize()
			return f, nil
		}
		s.last, s.flat = nil, nil
		return Flat(v) // a view materialised, or ints converted: a copy each run
	case *gorgonia.F64:
		return refill(s, float64(*v)), nil
	case *gorgonia.F32:
		return refill(s, float32(*v)), nil
	}
	s.last, s.flat = nil, nil
	return Flat(s.node.Value())
}

// backing is v's backing array as a flat slice of its dtype (float64, float32, int64 or
// bool), or nil for a view or another dtype.
func backing(v *tensor.Dense) any {
	if v.RequiresIterator() {
		return nil
	}
	switch v.Dtype() {
	case tensor.Float64:
		return v.Float64s()
	case tensor.Float32:
		return v.Float32s()
	case tensor.Int64:
		return v.Int64s()
	case tensor.Bool:
		return v.Bools()
	}
	return nil
}

// refill is the source's kept one-element slice of T holding e (a new one the first time).
func refill[T float64 | float32](s *source, e T) any {
	if f, ok := s.flat.([]T); ok && len(f) == 1 && s.last == nil {
		f[0] = e
		return s.flat
	}
	s.last, s.flat = nil, []T{e}
	return s.flat
}

// inPlace reports whether r's node holds the tensor value a reusing run gave it before, and
// makes it show this run's elements without a new value: a dense view of out's range (written
// by the plan already) or the kept copy buffer (copied into again). A steady state of
// ReuseValues then allocates no tensor value (scalars, a loss kept from step to step, stay
// new values of a few bytes).
func (r *result) inPlace(out any) bool {
	switch v := r.node.Value().(type) {
	case *tensor.Dense:
		if !v.Shape().Eq(r.shape) || v.IsView() {
			return false
		}
		size := r.typ.Shape.Size()
		switch o := out.(type) {
		case []float64:
			return sameRange(v, o, r, size)
		case []float32:
			return sameRange(v, o, r, size)
		case []int64:
			return sameRange(v, o, r, size)
		case []bool:
			return sameRange(v, o, r, size)
		}
	}
	return false // a scalar gets a new value each run: a loss kept from an earlier step stays
}

// sameRange reports whether v's backing array is r's range of out (a view the plan wrote) or
// r's kept copy buffer, which it then refills from out.
func sameRange[T any](v *tensor.Dense, out []T, r *result, size int) bool {
	d, ok := denseData[T](v)
	if !ok || len(d) != size || size == 0 {
		return false
	}
	if !r.copy {
		return &d[0] == &out[r.off]
	}
	if buf, ok := r.buf.([]T); ok && len(buf) == size && &buf[0] == &d[0] {
		copy(buf, out[r.off:r.off+size])
		return true
	}
	return false
}

// denseData is v's backing array as a []T, through the typed accessor (Data boxes the slice
// in an interface, which allocates); false when v's dtype is not T.
func denseData[T any](v *tensor.Dense) ([]T, bool) {
	var out []T
	dt := v.Dtype()
	switch p := any(&out).(type) {
	case *[]float64:
		if dt == tensor.Float64 {
			*p = v.Float64s()
		}
	case *[]float32:
		if dt == tensor.Float32 {
			*p = v.Float32s()
		}
	case *[]int64:
		if dt == tensor.Int64 {
			*p = v.Int64s()
		}
	case *[]bool:
		if dt == tensor.Bool {
			*p = v.Bools()
		}
	}
	return out, out != nil
}

// copyInto is the value of a result that needs its own copy, with ReuseValues: its range of
// out copied into the buffer the last run's copy used (allocated at the first run), so that a
// steady state allocates nothing for it either; nil for a scalar or an int node (valueOf
// makes those).
func (r *result) copyInto(out any) gorgonia.Value {
	if r.node.IsScalar() || r.node.Dtype() == tensor.Int {
		return nil
	}
	size := r.typ.Shape.Size()
	switch o := out.(type) {
	case []float64:
		return copyDense(r, o[r.off:r.off+size])
	case []float32:
		return copyDense(r, o[r.off:r.off+size])
	case []int64:
		return copyDense(r, o[r.off:r.off+size])
	case []bool:
		return copyDense(r, o[r.off:r.off+size])
	}
	return nil
}

// copyDense copies src into r's kept buffer (made on first use) and wraps it as r's value.
func copyDense[T any](r *result, src []T) gorgonia.Value {
	buf, ok := r.buf.([]T)
	if !ok || len(buf) != len(src) {
		buf = make([]T, len(src))
		r.buf = buf
	}
	copy(buf, src)
	return tensor.New(tensor.WithShape(r.node.Shape()...), tensor.WithBacking(buf))
}

// valueOf is node n's value: elements off … off+size-1 of out (a view, or a copy), as a
// *gorgonia.F64/F32/I64/B for a scalar node and a *tensor.Dense of n's shape otherwise.
func valueOf(n *gorgonia.Node, out any, off, size int, cp bool) gorgonia.Value {
	scalar := n.IsScalar()
	switch o := out.(type) {
	case []float64:
		if scalar {
			return gorgonia.NewF64(o[off])
		}
		return dense(n, o[off:off+size:off+size], cp)
	case []float32:
		if scalar {
			return gorgonia.NewF32(o[off])
		}
		return dense(n, o[off:off+size:off+size], cp)
	case []int64:
		if scalar {
			if n.Dtype() == tensor.Int {
				return gorgonia.NewI(int(o[off]))
			}
			return gorgonia.NewI64(o[off])
		}
		if n.Dtype() == tensor.Int {
			s := make([]int, size)
			for i, x := range o[off : off+size] {
				s[i] = int(x)
			}
			return tensor.New(tensor.WithShape(n.Shape()...), tensor.WithBacking(s))
		}
		return dense(n, o[off:off+size:off+size], cp)
	case []bool:
		if scalar {
			return gorgonia.NewB(o[off])
		}
		return dense(n, o[off:off+size:off+size], cp)
	}
	return nil
}

func dense[T any](n *gorgonia.Node, s []T, cp bool) gorgonia.Value {
	if cp {
		s = append([]T(nil), s...)
	}
	return tensor.New(tensor.WithShape(n.Shape()...), tensor.WithBacking(s))
}

// Flat returns a value's elements as a flat slice: []float64, []float32, []int64 (int scalars
// and tensors converted) or []bool. A dense tensor's slice is its backing array (a view is
// materialised first); a scalar's is a new one-element slice.
func Flat(v gorgonia.Value) (any, error) {
	switch x := v.(type) {
	case nil:
		return nil, errors.New("no value")
	case *gorgonia.F64:
		return []float64{float64(*x)}, nil
	case *gorgonia.F32:
		return []float32{float32(*x)}, nil
	case *gorgonia.I64:
		return []int64{int64(*x)}, nil
	case *gorgonia.I:
		return []int64{int64(*x)}, nil
	case *gorgonia.B:
		return []bool{bool(*x)}, nil
	case *tensor.Dense:
		if x.RequiresIterator() {
			d, ok := x.Materialize().(*tensor.Dense)
			if !ok {
				return nil, errors.Errorf("cannot materialise a view %v", x.Shape())
			}
			x = d
		}
		switch d := x.Data().(type) {
		case []float64, []float32, []int64, []bool:
			return d, nil
		case []int:
			s := make([]int64, len(d))
			for i, e := range d {
				s[i] = int64(e)
			}
			return s, nil
		case float64:
			return []float64{d}, nil
		case float32:
			return []float32{d}, nil
		case int64:
			return []int64{d}, nil
		case int:
			return []int64{int64(d)}, nil
		case bool:
			return []bool{d}, nil
		}
		return nil, errors.Errorf("a tensor of dtype %v, want float64, float32, int, int64 or bool", x.Dtype())
	}
	return nil, errors.Errorf("a value of type %T, want a *tensor.Dense or a Gorgonia scalar", v)
}

// hasDual reports whether n holds a dual value (read with reflect, without unsafe).
func hasDual(n *gorgonia.Node) bool {
	f := reflect.ValueOf(n).Elem().FieldByName("boundTo")
	if !f.IsValid() || f.Kind() != reflect.Interface || f.IsNil() {
		return false
	}
	return f.Elem().Type().String() == "*gorgonia.dualValue"
}

// addDual adds grad's value into src's dual value, creating a zero one first (the
// TapeMachine's BindDualValues).
func addDual(src, grad *gorgonia.Node) (err error) {
	gv := grad.Value()
	if gv == nil || src.Value() == nil {
		return errors.Errorf("machine: run: dual value of node %q (ID %d): it or its gradient node %q has no value", src.Name(), src.ID(), grad.Name())
	}
	defer func() {
		if r := recover(); r != nil {
			err = errors.Errorf("machine: run: dual value of node %q (ID %d): %v", src.Name(), src.ID(), r)
		}
	}()
	var d gorgonia.Value
	if hasDual(src) {
		if d, err = src.Grad(); err != nil {
			return errors.Wrapf(err, "machine: run: dual value of node %q (ID %d)", src.Name(), src.ID())
		}
	}
	if d == nil {
		if d, err = gorgonia.CloneValue(src.Value()); err != nil {
			return errors.Wrapf(err, "machine: run: dual value of node %q (ID %d)", src.Name(), src.ID())
		}
		d = gorgonia.ZeroValue(d)
	}
	had := d
	sum, err := addInto(d, gv)
	if err != nil {
		return errors.Wrapf(err, "machine: run: dual value of node %q (ID %d): adding gradient node %q", src.Name(), src.ID(), grad.Name())
	}
	if sum == had && hasDual(src) {
		return nil // added in place into the dual value the node holds
	}
	gorgonia.WithGrad(sum)(src)
	return nil
}

// addInto adds g to d in place (d is returned; Gorgonia's solvers zero a scalar dual value in
// place too).
func addInto(d, g gorgonia.Value) (gorgonia.Value, error) {
	if x, ok := d.(*tensor.Dense); ok && !x.RequiresIterator() {
		if y, ok := g.(*tensor.Dense); ok && !y.RequiresIterator() && (addDense[float64](x, y) || addDense[float32](x, y)) {
			return x, nil // without Flat, whose boxing of the slice allocates
		}
		if addOne[float64](x, g) || addOne[float32](x, g) {
			return x, nil // a scalar's gradient into a dense dual value
		}
	}
	switch x := d.(type) { // scalars without Flat's one-element slice
	case *gorgonia.F64:
		if y, ok := oneElement[float64](g); ok {
			*x += gorgonia.F64(y)
			return x, nil
		}
	case *gorgonia.F32:
		if y, ok := oneElement[float32](g); ok {
			*x += gorgonia.F32(y)
			return x, nil
		}
	}
	gs, err := Flat(g)
	if err != nil {
		return nil, err
	}
	switch x := d.(type) {
	case *gorgonia.F64: // in place, as a tensor's (Gorgonia's solvers zero it in place)
		if s, ok := gs.([]float64); ok && len(s) == 1 {
			*x += gorgonia.F64(s[0])
			return x, nil
		}
	case *gorgonia.F32:
		if s, ok := gs.([]float32); ok && len(s) == 1 {
			*x += gorgonia.F32(s[0])
			return x, nil
		}
	case *tensor.Dense:
		if x.RequiresIterator() {
			break
		}
		var data any
		switch x.Dtype() {
		case tensor.Float64:
			data = x.Float64s()
		case tensor.Float32:
			data = x.Float32s()
		}
		switch ds := data.(type) {
		case []float64:
			if s, ok := gs.([]float64); ok && len(s) == len(ds) {
				kern.AddTo(ds, s)
				return x, nil
			}
		case []float32:
			if s, ok := gs.([]float32); ok && len(s) == len(ds) {
				kern.AddTo(ds, s)
				return x, nil
			}
		}
	}
	return nil, errors.Errorf("gradient %v %v does not fit the dual value %T %v", g.Dtype(), g.Shape(), d, d.Shape())
}

// oneElement is the element of a one-element value of T: a Gorgonia scalar or a dense
// tensor (a gradient of a scalar may be either).
func oneElement[T float64 | float32](v gorgonia.Value) (T, bool) {
	switch y := v.(type) {
	case *gorgonia.F64:
		e, ok := any(float64(*y)).(T)
		return e, ok
	case *gorgonia.F32:
		e, ok := any(float32(*y)).(T)
		return e, ok
	case *tensor.Dense:
		if s, ok := denseData[T](y); ok && len(s) == 1 && !y.RequiresIterator() {
			return s[0], true
		}
	}
	return 0, false
}

// addOne adds the element of a one-element g into the one element of x, when both hold T.
func addOne[T float64 | float32](x *tensor.Dense, g gorgonia.Value) bool {
	xs, ok := denseData[T](x)
	y, ok2 := oneElement[T](g)
	if !ok || !ok2 || len(xs) != 1 {
		return false
	}
	xs[0] += y
	return true
}

// addDense adds y's elements into x's when both hold T and have as many elements, with the
// kernels' vector loops (the MLP's first-layer gradient, 401408 float64s added into its dual
// value every step: 238 µs a scalar loop, 96 µs vectorised, hot).
func addDense[T float64 | float32](x, y *tensor.Dense) bool {
	xs, ok1 := denseData[T](x)
	ys, ok2 := denseData[T](y)
	if !ok1 || !ok2 || len(xs) != len(ys) {
		return false
	}
	kern.AddTo(xs, ys)
	return true
}

// read fills a Read statement's target with a copy of its node's value (copied into the
// target's value when it has one), as the TapeMachine's read instruction does.
func (m *Machine) read(n *gorgonia.Node) error {
	kids := m.kids[n]
	if len(kids) != 1 {
		return errors.Errorf("machine: run: read node %q (ID %d) has %d operands, want 1", n.Name(), n.ID(), len(kids))
	}
	v := kids[0].Value()
	if v == nil {
		return errors.Errorf("machine: run: read node %q (ID %d): node %q has no value", n.Name(), n.ID(), kids[0].Name())
	}
	f := reflect.ValueOf(n.Op()).FieldByName("into")
	if !f.IsValid() || f.Kind() != reflect.Pointer || f.Type().Elem() != reflect.TypeOf((*gorgonia.Value)(nil)).Elem() || f.IsNil() {
		return errors.Errorf("machine: run: read node %q (ID %d): cannot find its target (Gorgonia's readOp changed)", n.Name(), n.ID())
	}
	into := (*gorgonia.Value)(f.UnsafePointer())
	if *into != nil {
		if _, err := gorgonia.Copy(*into, v); err == nil {
			return nil
		}
	}
	c, err := gorgonia.CloneValue(v)
	if err != nil {
		return errors.Wrapf(err, "machine: run: read node %q (ID %d)", n.Name(), n.ID())
	}
	*into = c
	return nil
}
