package dist

import (
	"fmt"
	"math"
	"reflect"
	"strings"
	"unsafe"

	"github.com/pkg/errors"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// DataParallel keeps the replicas of one model in step across the ranks of a Comm: it
// broadcasts the parameters, averages the gradients (with the loss and any metrics) in one
// packed all-reduce per step, and checks that the replicas agree. It reads and writes the
// parameter and gradient values in place, after the machine has run and before the solver
// steps, so it works with every Solver, with BindDualValues or without, and with gradients from
// bulkad.Grad or gorgonia.Grad. Every rank must make the same calls in the same order, with
// the same model (shapes and order of the parameters) and the same number of metrics.
//
// Float32 models are reduced in float32 (half the bytes); a model with any float64 parameter
// in float64. A DataParallel is not safe for concurrent use.
type DataParallel struct {
	comm  *Comm
	model []G.ValueGrad
	names []string
	buf64 []float64 // the packed buffer of a float64 model
	buf32 []float32 // the packed buffer of a float32 model
	ref64 []float64 // rank 0's parameters, for CheckParams
	ref32 []float32
}

// NewDataParallel returns a DataParallel over the learnable nodes params (the nodes
// differentiated with respect to, in the order every rank uses). A node's gradient is read
// with Node.Grad: its dual value when the machine binds dual values, else the value of its
// gradient node.
func NewDataParallel(c *Comm, params G.Nodes) (*DataParallel, error) {
	if c == nil {
		return nil, errors.New("dist: data parallel: nil Comm")
	}
	model := make([]G.ValueGrad, len(params))
	names := make([]string, len(params))
	for i, n := range params {
		if n == nil {
			return nil, errors.Errorf("dist: data parallel (rank %d of %d): parameter %d is nil", c.rank, c.size, i)
		}
		model[i], names[i] = n, n.Name()
	}
	return newDataParallel(c, model, names)
}

// NewDataParallelModel is NewDataParallel over a solver's model, such as
// gorgonia.NodesToValueGrads(params); errors name an element by its Name method, if it has one.
func NewDataParallelModel(c *Comm, model []G.ValueGrad) (*DataParallel, error) {
	if c == nil {
		return nil, errors.New("dist: data parallel: nil Comm")
	}
	names := make([]string, len(model))
	for i := range model {
		names[i] = fmt.Sprintf("parameter %d", i)
		if v := reflect.ValueOf(model[i]); model[i] == nil || v.Kind() == reflect.Pointer && v.IsNil() {
			return nil, errors.Errorf("dist: data parallel (rank %d of %d): %s is nil", c.rank, c.size, names[i])
		}
		if n, ok := model[i].(interface{ Name() string }); ok && n.Name() != "" {
			names[i] = n.Name()
		}
	}
	return newDataParallel(c, append([]G.ValueGrad{}, model...), names)
}

func newDataParallel(c *Comm, model []G.ValueGrad, names []string) (*DataParallel, error) {
	if len(model) == 0 {
		return nil, errors.Errorf("dist: data parallel (rank %d of %d): no parameters", c.rank, c.size)
	}
	return &DataParallel{comm: c, model: model, names: names}, nil
}

// Comm is the communicator d reduces over.
func (d *DataParallel) Comm() *Comm { return d.comm }

// floats is a value's storage, read and written in place: exactly one slice is set.
type floats struct {
	f64 []float64
	f32 []float32
}

func (f floats) len() int { return len(f.f64) + len(f.f32) }

// storage returns the elements of a float64 or float32 value in place.
func storage(v G.Value) (floats, error) {
	switch t := v.(type) {
	case nil:
		return floats{}, errors.New("no value")
	case *tensor.Dense:
		if t.RequiresIterator() {
			return floats{}, errors.Errorf("a non-contiguous %v view (materialise it first)", t.Shape())
		}
		switch t.Dtype() {
		case tensor.Float64:
			return floats{f64: t.Float64s()[:t.DataSize()]}, nil
		case tensor.Float32:
			return floats{f32: t.Float32s()[:t.DataSize()]}, nil
		}
		return floats{}, errors.Errorf("dtype %v (float64 or float32 only)", t.Dtype())
	case *G.F64:
		return floats{f64: unsafe.Slice((*float64)(t), 1)}, nil
	case *G.F32:
		return floats{f32: unsafe.Slice((*float32)(t), 1)}, nil
	}
	return floats{}, errors.Errorf("a %T (a *tensor.Dense, *gorgonia.F64 or *gorgonia.F32 of floats only)", v)
}

// values returns the storage of every parameter value (grads false) or gradient (grads true),
// the total element count and whether every one is float32.
func (d *DataParallel) values(op string, grads bool) ([]floats, int, bool, error) {
	out := make([]floats, len(d.model))
	n, all32 := 0, true
	for i, vg := range d.model {
		var v G.Value
		what := "value"
		if grads {
			what = "gradient"
			g, err := vg.Grad()
			if err != nil {
				return nil, 0, false, d.comm.errorf(op, "gradient of %s: %v (did the machine run, with a gradient for it?)", d.names[i], err)
			}
			v = g
		} else {
			v = vg.Value()
		}
		s, err := storage(v)
		if err != nil {
			return nil, 0, false, d.comm.errorf(op, "%s of %s: %v", what, d.names[i], err)
		}
		out[i] = s
		n += s.len()
		all32 = all32 && s.f32 != nil
	}
	return out, n, all32, nil
}

// buffer returns d's packed buffer of n elements, of the model's precision.
func (d *DataParallel) buffer(n int, all32 bool) ([]float64, []float32) {
	if all32 {
		return nil, grown(&d.buf32, n)
	}
	return grown(&d.buf64, n), nil
}

// grown returns (*s)[:n], first replacing *s by a new slice when it holds fewer than n
// elements.
func grown[T any](s *[]T, n int) []T {
	if cap(*s) < n {
		*s = make([]T, n)
	}
	return (*s)[:n]
}

// pack copies vs, each element times scale, into buf from the start; it returns the count.
func pack[T float32 | float64](buf []T, vs []floats, scale float64) int {
	off := 0
	for _, v := range vs {
		dst := buf[off : off+v.len()]
		switch {
		case scale == 1:
			copyConvert(dst, v)
		case v.f64 != nil:
			for j, x := range v.f64 {
				dst[j] = T(x * scale)
			}
		default:
			for j, x := range v.f32 {
				dst[j] = T(float64(x) * scale)
			}
		}
		off += len(dst)
	}
	return off
}

func copyConvert[T float32 | float64](dst []T, v floats) {
	if v.f64 != nil {
		for j, x := range v.f64 {
			dst[j] = T(x)
		}
		return
	}
	for j, x := range v.f32 {
		dst[j] = T(x)
	}
}

// unpack writes buf, each element times scale, back into vs.
func unpack[T float32 | float64](buf []T, vs []floats, scale float64) {
	off := 0
	for _, v := range vs {
		src := buf[off : off+v.len()]
		switch {
		case v.f64 != nil && scale == 1:
			for j := range v.f64 {
				v.f64[j] = float64(src[j])
			}
		case v.f64 != nil:
			for j := range v.f64 {
				v.f64[j] = float64(src[j]) * scale
			}
		case scale == 1:
			for j := range v.f32 {
				v.f32[j] = float32(src[j])
			}
		default:
			for j := range v.f32 {
				v.f32[j] = float32(float64(src[j]) * scale)
			}
		}
		off += len(src)
	}
}

// AverageGradients replaces every gradient, on every rank, by the weighted mean of the
// ranks' gradients, Σ weightᵣ·gradᵣ / Σ weightᵣ, and returns the weighted means of metrics (the
// loss, an accuracy…) the same way — all in one all-reduce. weight is the number of examples
// this rank's loss, metrics and gradients are means over (its shard of the batch), so that
// uneven shards give the gradient of the whole batch (up to rounding); use the same positive
// weight on every rank for plain averaging. A rank with weight 0 contributes nothing (its
// gradients may be NaN). Call it after the machine ran and before the solver steps; every rank
// passes the same number of metrics.
func (d *DataParallel) AverageGradients(weight float64, metrics ...float64) ([]float64, error) {
	const op = "average gradients"
	if !(weight >= 0) || math.IsInf(weight, 1) {
		return nil, d.comm.errorf(op, "weight %v: want a finite number ≥ 0", weight)
	}
	grads, n, all32, err := d.values(op, true)
	if err != nil {
		return nil, err
	}
	out := append([]float64{}, metrics...)
	if d.comm.size == 1 { // the mean of one rank is its own: leave the gradients bit for bit
		if weight == 0 {
			return nil, d.comm.errorf(op, "weight 0: no examples in this step")
		}
		return out, nil
	}
	b64, b32 := d.buffer(n+len(metrics)+1, all32)
	if b64 != nil {
		err = averageGradients(d.comm, b64, grads, weight, out, d.comm.AllReduceFloat64)
	} else {
		err = averageGradients(d.comm, b32, grads, weight, out, d.comm.AllReduceFloat32)
	}
	if err != nil {
		return nil, err
	}
	return out, nil
}

// averageGradients packs, reduces (with reduce: the all-reduce of the Comm) and unpacks for
// AverageGradients; the means of metrics are written into metrics.
func averageGradients[T float32 | float64](c *Comm, buf []T, grads []floats, weight float64, metrics []float64, reduce func([]T, Op) error) error {
	if weight == 0 {
		clear(buf) // NaN·0 is NaN: an empty shard adds exact zeros
	} else {
		pack(buf, grads, weight)
	}
	n := len(buf) - len(metrics) - 1
	for i, m := range metrics {
		buf[n+i] = T(m * weight)
		if weight == 0 {
			buf[n+i] = 0
		}
	}
	buf[len(buf)-1] = T(weight)
	if err := reduce(buf, Sum); err != nil {
		return err
	}
	w := float64(buf[len(buf)-1])
	if !(w > 0) {
		return c.errorf("average gradients", "the ranks' weights add up to %v: no examples in this step", w)
	}
	unpack(buf[:n], grads, 1/w) // a product per element, within about an ulp of the quotient and cheaper than a division
	for i := range metrics {
		metrics[i] = float64(buf[n+i]) / w
	}
	return nil
}

// BroadcastParams copies rank 0's parameter values into every other rank's, in place: call it
// once before training, so that every replica starts from the same parameters however each
// rank initialised them (and again whenever the replicas must be brought back together).
func (d *DataParallel) BroadcastParams() error {
	const op = "broadcast params"
	vals, n, all32, err := d.values(op, false)
	if err != nil {
		return err
	}
	b64, b32 := d.buffer(n, all32)
	if b64 != nil {
		return broadcastParams(d.comm, b64, vals, d.comm.BroadcastFloat64)
	}
	return broadcastParams(d.comm, b32, vals, d.comm.BroadcastFloat32)
}

// broadcastParams packs vals into buf, replaces buf by rank 0's with bcast (the broadcast of
// the Comm for T) and, off rank 0, unpacks it into vals: BroadcastParams for one precision.
func broadcastParams[T float32 | float64](c *Comm, buf []T, vals []floats, bcast func([]T, int) error) error {
	pack(buf, vals, 1)
	if err := bcast(buf, 0); err != nil {
		return err
	}
	if c.rank != 0 {
		unpack(buf, vals, 1)
	}
	return nil
}

// CheckParams checks that every rank holds rank 0's parameter values, bit for bit (one
// broadcast of the parameters and one small all-reduce). Every rank returns the same verdict:
// nil, or an error listing the ranks that differ, how many values and by how much at most.
// Replicas stay identical when every rank runs the same solver on the averaged gradients; a
// difference means ranks ran different code, libraries or hardware paths (or a bug).
func (d *DataParallel) CheckParams() error {
	const op = "check params"
	vals, n, all32, err := d.values(op, false)
	if err != nil {
		return err
	}
	var diff []int
	var worst []float64
	if all32 {
		diff, worst, err = compareToRank0(grown(&d.ref32, n), vals, d.comm.BroadcastFloat32)
	} else {
		diff, worst, err = compareToRank0(grown(&d.ref64, n), vals, d.comm.BroadcastFloat64)
	}
	if err != nil {
		return err
	}
	count, largest := 0, 0.0
	first := ""
	for i := range diff {
		if diff[i] > 0 && first == "" {
			first = d.names[i]
		}
		count += diff[i]
		largest = math.Max(largest, worst[i])
	}
	size, rank := d.comm.size, d.comm.rank
	report := make([]float64, 2*size)
	report[rank], report[size+rank] = float64(count), largest
	if err := d.comm.AllReduceFloat64(report, Sum); err != nil {
		return err
	}
	var bad []string
	for r := 0; r < size; r++ {
		if report[r] > 0 {
			bad = append(bad, fmt.Sprintf("rank %d: %d of %d values (largest difference %.3g)", r, int(report[r]), n, report[size+r]))
		}
	}
	if len(bad) == 0 {
		return nil
	}
	msg := "parameters differ from rank 0's on " + strings.Join(bad, "; ")
	if first != "" {
		msg += "; here first in " + first
	}
	return d.comm.errorf(op, "%s", msg)
}

// compareToRank0 packs vals into ref, replaces ref by rank 0's with bcast (the broadcast of the
// Comm for T) and compares vals with it (see compare).
func compareToRank0[T float32 | float64](ref []T, vals []floats, bcast func([]T, int) error) ([]int, []float64, error) {
	pack(ref, vals, 1)
	if err := bcast(ref, 0); err != nil {
		return nil, nil, err
	}
	diff, worst := compare(ref, vals)
	return diff, worst, nil
}

// compare counts, per parameter, the values whose bits differ from ref (NaNs with the same bits
// agree) and the largest absolute difference.
func compare[T float32 | float64](ref []T, vals []floats) ([]int, []float64) {
	diff := make([]int, len(vals))
	worst := make([]float64, len(vals))
	off := 0
	for i, v := range vals {
		r := ref[off : off+v.len()]
		for j := range r {
			var a, b float64
			var same bool
			if v.f64 != nil {
				a, b = float64(r[j]), v.f64[j]
				same = math.Float64bits(a) == math.Float64bits(b)
			} else {
				a, b = float64(r[j]), float64(v.f32[j])
				same = math.Float32bits(float32(r[j])) == math.Float32bits(v.f32[j])
			}
			if !same {
				diff[i]++
				if d := math.Abs(a - b); d > worst[i] || math.IsNaN(d) {
					worst[i] = d
				}
			}
		}
		off += len(r)
	}
	return diff, worst
}
