package core

import "math"

// The element-wise operations of the reference evaluator (see Eval for their semantics).

// unaryValue applies op's reference function (the op-facts table's) to every element.
func unaryValue(op UnOp, a *value) *value {
	out := newValue(a.t)
	f := op.Facts()
	for k, e := range a.b {
		out.b[k] = f.Bool(e)
	}
	for k, e := range a.i {
		out.i[k] = f.Int(e)
	}
	if a.t.Dtype == Float32 && f.Float32 != nil {
		for k, e := range a.f {
			out.f[k] = float64(f.Float32(float32(e)))
		}
		return out
	}
	for k, e := range a.f {
		out.f[k] = round(a.t.Dtype, f.Float(e))
	}
	return out
}

// FloatToInt is the cast of a float to i64: truncation toward zero; NaN and values outside
// the int64 range give 0.
func FloatToInt(f float64) int64 {
	if math.IsNaN(f) || f >= 0x1p63 || f < -0x1p63 {
		return 0
	}
	return int64(f)
}

func castValue(to Dtype, a *value) *value {
	out := newValue(Type{Shape: a.t.Shape, Dtype: to})
	for k := range a.t.Shape.Size() {
		var f float64
		var i int64
		var b bool
		switch {
		case a.f != nil:
			f, i, b = a.f[k], FloatToInt(a.f[k]), a.f[k] != 0
		case a.i != nil:
			f, i, b = float64(a.i[k]), a.i[k], a.i[k] != 0
		case a.b[k]:
			f, i, b = 1, 1, true
		}
		switch to {
		case Float64, Float32:
			if to == Float32 && a.i != nil {
				out.f[k] = float64(float32(a.i[k])) // one rounding (through float64 rounds twice)
			} else {
				out.f[k] = round(to, f)
			}
		case Int64:
			out.i[k] = i
		default:
			out.b[k] = b
		}
	}
	return out
}

// binaryValue applies op's reference function (the op-facts table's) to every pair of
// elements.
func binaryValue(op BinOp, a, b *value, rt Type) *value {
	out := newValue(rt)
	f := op.Facts()
	for k := range a.t.Shape.Size() {
		switch {
		case f.Compare && a.f != nil:
			out.b[k] = f.FloatCmp(a.f[k], b.f[k])
		case f.Compare && a.i != nil:
			out.b[k] = f.IntCmp(a.i[k], b.i[k])
		case a.b != nil:
			out.b[k] = f.Bool(a.b[k], b.b[k])
		case a.i != nil:
			out.i[k] = f.Int(a.i[k], b.i[k])
		default:
			out.f[k] = round(rt.Dtype, f.Float(a.f[k], b.f[k]))
		}
	}
	return out
}
