package kernel

import (
	"math"
	"testing"

	"github.com/bulkad/bulkad/core"
)

// opfactsValues are the float operands of TestElementLoopsFollowTable: signed zeros, tiny,
// ordinary, large, infinite and NaN values.
var opfactsValues = []float64{0, math.Copysign(0, -1), 5e-324, -1e-30, 0.5, -1, 1, 2.5, -2.5, 1e30, math.Inf(1), math.Inf(-1), math.NaN()}

// opfactsInts are the i64 operands of TestElementLoopsFollowTable.
var opfactsInts = []int64{0, 1, -1, 7, -7, 2, math.MaxInt64, math.MinInt64}

// sameFloat reports bitwise equality, any NaN matching any NaN.
func sameFloat(a, b float64) bool {
	return math.Float64bits(a) == math.Float64bits(b) || a != a && b != b
}

// TestElementLoopsFollowTable runs the element-wise loops (unaryBuf, binaryBuf) of every
// operation of core's op-facts table on every dtype it accepts, and compares each element
// with the table's reference function (float32: Float32 where set, else Float rounded once). An
// operation added to the table without a loop of its own runs through the generic one.
func TestElementLoopsFollowTable(t *testing.T) {
	for _, op := range core.UnOps() {
		f := op.Facts()
		for _, d := range []core.Dtype{core.Float64, core.Float32, core.Int64, core.Bool} {
			if !f.Dtypes.Has(d) {
				continue
			}
			x, want := unaryCase(f, d)
			out := newBufLike(d, x.length())
			if !unaryBuf(op, out, x) {
				t.Errorf("%v %v: unaryBuf refused", op, d)
				continue
			}
			checkBuf(t, op.String()+" "+d.String(), out, want)
		}
	}
	for _, op := range core.BinOps() {
		f := op.Facts()
		for _, d := range []core.Dtype{core.Float64, core.Float32, core.Int64, core.Bool} {
			if !f.Dtypes.Has(d) {
				continue
			}
			x, y, want := binaryCase(f, d)
			od := d
			if f.Compare {
				od = core.Bool
			}
			out := newBufLike(od, x.length())
			if !binaryBuf(op, out, x, y) {
				t.Errorf("%v %v: binaryBuf refused", op.Word(), d)
				continue
			}
			checkBuf(t, op.Word()+" "+d.String(), out, want)
		}
	}
}

// newBufLike is a zeroed vector of n elements of dtype d.
func newBufLike(d core.Dtype, n int) *buf { return newBuf(core.Type{Shape: core.Shape{n}, Dtype: d}) }

// expected holds the reference results, as float64, int64 or bool.
type expected struct {
	f []float64
	i []int64
	b []bool
}

// unaryCase is an operand buffer of dtype d and the reference results of f on it.
func unaryCase(f core.UnFacts, d core.Dtype) (*buf, expected) {
	var w expected
	op32 := f.Float32 // float32: the table's float32 function, else Float rounded once
	if op32 == nil {
		op32 = func(x float32) float32 { return float32(f.Float(float64(x))) }
	}
	switch d {
	case core.Float64, core.Float32:
		x := newBufLike(d, len(opfactsValues))
		for k, v := range opfactsValues {
			if d == core.Float32 {
				v = float64(float32(v))
				x.f32[k] = float32(v)
				w.f = append(w.f, float64(op32(float32(v))))
				continue
			}
			x.f64[k] = v
			w.f = append(w.f, f.Float(v))
		}
		return x, w
	case core.Int64:
		x := &buf{typ: core.Type{Dtype: d}, i64: opfactsInts}
		for _, v := range opfactsInts {
			w.i = append(w.i, f.Int(v))
		}
		return x, w
	}
	x := &buf{typ: core.Type{Dtype: d}, b: []bool{false, true}}
	w.b = []bool{f.Bool(false), f.Bool(true)}
	return x, w
}

// binaryCase is every pair of operands of dtype d (as two buffers) and the reference results
// of f on them.
func binaryCase(f core.BinFacts, d core.Dtype) (*buf, *buf, expected) {
	var w expected
	switch d {
	case core.Float64, core.Float32:
		n := len(opfactsValues)
		x, y := newBufLike(d, n*n), newBufLike(d, n*n)
		for i, a := range opfactsValues {
			for j, b := range opfactsValues {
				k := i*n + j
				if d == core.Float32 {
					a, b = float64(float32(a)), float64(float32(b))
					x.f32[k], y.f32[k] = float32(a), float32(b)
				} else {
					x.f64[k], y.f64[k] = a, b
				}
				switch {
				case f.Compare:
					w.b = append(w.b, f.FloatCmp(a, b))
				case d == core.Float32:
					w.f = append(w.f, float64(float32(f.Float(a, b))))
				default:
					w.f = append(w.f, f.Float(a, b))
				}
			}
		}
		return x, y, w
	case core.Int64:
		n := len(opfactsInts)
		x, y := newBufLike(d, n*n), newBufLike(d, n*n)
		for i, a := range opfactsInts {
			for j, b := range opfactsInts {
				x.i64[i*n+j], y.i64[i*n+j] = a, b
				if f.Compare {
					w.b = append(w.b, f.IntCmp(a, b))
				} else {
					w.i = append(w.i, f.Int(a, b))
				}
			}
		}
		return x, y, w
	}
	x := &buf{typ: core.Type{Dtype: d}, b: []bool{false, false, true, true}}
	y := &buf{typ: core.Type{Dtype: d}, b: []bool{false, true, false, true}}
	for k := range 4 {
		w.b = append(w.b, f.Bool(x.b[k], y.b[k]))
	}
	return x, y, w
}

// checkBuf compares out with the reference results element by element.
func checkBuf(t *testing.T, what string, out *buf, w expected) {
	t.Helper()
	for k, want := range w.f {
		got := 0.0
		if out.f64 != nil {
			got = out.f64[k]
		} else {
			got = float64(out.f32[k])
		}
		if !sameFloat(got, want) {
			t.Errorf("%s: element %d = %v, the table's reference gives %v", what, k, got, want)
		}
	}
	for k, want := range w.i {
		if out.i64[k] != want {
			t.Errorf("%s: element %d = %d, the table's reference gives %d", what, k, out.i64[k], want)
		}
	}
	for k, want := range w.b {
		if out.b[k] != want {
			t.Errorf("%s: element %d = %v, the table's reference gives %v", what, k, out.b[k], want)
		}
	}
}
