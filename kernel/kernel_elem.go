package kernel

import (
	"math"

	"github.com/bulkad/bulkad/core"
)

// Element-wise kernels on flat slices. Float32 values are computed in float32 arithmetic
// (transcendental functions are evaluated in float64 and rounded once to float32, which is
// within one float32 ulp of a float32 implementation).

type floatT interface{ ~float64 | ~float32 }

type numT interface{ ~float64 | ~float32 | ~int64 }

// unaryFloat applies op to every element of x (dst and x have equal length).
//
// Edge behaviour: sign(±0) = ±0 and sign(NaN) = NaN; recip(0) = +Inf and recip(-0) = -Inf
// (IEEE division); log of a negative number is NaN; sigmoid is numerically stable.
func unaryFloat[T floatT](op core.UnOp, dst, x []T) {
	x = x[:len(dst)]
	switch op {
	case core.OpNeg:
		for i, v := range x {
			dst[i] = -v
		}
	case core.OpRecip:
		for i, v := range x {
			dst[i] = 1 / v
		}
	case core.OpExp: // direct call: the indirect one below costs 18% (BenchmarkElementwise_Eval)
		for i, v := range x {
			dst[i] = T(math.Exp(float64(v)))
		}
	case core.OpTanh:
		for i, v := range x {
			dst[i] = T(math.Tanh(float64(v)))
		}
	default:
		// One call per element through core's table of float functions (math.Log, …).
		f := op.FloatFunc()
		for i, v := range x {
			dst[i] = T(f(float64(v)))
		}
	}
}

// unaryInt applies neg, abs or sign to i64 elements (two's complement: neg and abs of
// math.MinInt64 give math.MinInt64).
func unaryInt(op core.UnOp, dst, x []int64) {
	x = x[:len(dst)]
	switch op {
	case core.OpNeg:
		for i, v := range x {
			dst[i] = -v
		}
	case core.OpAbs:
		for i, v := range x {
			if v < 0 {
				v = -v
			}
			dst[i] = v
		}
	case core.OpSign:
		for i, v := range x {
			switch {
			case v > 0:
				dst[i] = 1
			case v < 0:
				dst[i] = -1
			default:
				dst[i] = 0
			}
		}
	}
}

func unaryBool(op core.UnOp, dst, x []bool) {
	x = x[:len(dst)]
	if op == core.OpNot {
		for i, v := range x {
			dst[i] = !v
		}
	}
}

// binaryArith applies an arithmetic operation that is valid for every numeric dtype
// (+ - * max min). max and min of floats follow math.Max and math.Min (NaN wins).
func binaryArith[T numT](op core.BinOp, dst, x, y []T) {
	x = x[:len(dst)]
	y = y[:len(dst)]
	switch op {
	case core.OpAdd:
		for i := range dst {
			dst[i] = x[i] + y[i]
		}
	case core.OpSub:
		for i := range dst {
			dst[i] = x[i] - y[i]
		}
	case core.OpMul:
		for i := range dst {
			dst[i] = x[i] * y[i]
		}
	case core.OpMax:
		for i := range dst {
			dst[i] = maxOf(x[i], y[i])
		}
	case core.OpMin:
		for i := range dst {
			dst[i] = minOf(x[i], y[i])
		}
	}
}

func isNaN[T numT](v T) bool { return v != v }

func maxOf[T numT](a, b T) T {
	switch {
	case isNaN(a):
		return a
	case isNaN(b):
		return b
	case a > b:
		return a
	case b > a:
		return b
	}
	// equal: prefer +0 over -0 like math.Max
	if a == 0 && math.Signbit(float64(a)) {
		return b
	}
	return a
}

func minOf[T numT](a, b T) T {
	switch {
	case isNaN(a):
		return a
	case isNaN(b):
		return b
	case a < b:
		return a
	case b < a:
		return b
	}
	if a == 0 && math.Signbit(float64(b)) {
		return b
	}
	return a
}

// binaryFloat applies / pow atan2 (float only): IEEE division (x/0 = ±Inf or NaN), math.Pow,
// math.Atan2.
func binaryFloat[T floatT](op core.BinOp, dst, x, y []T) {
	x = x[:len(dst)]
	y = y[:len(dst)]
	switch op {
	case core.OpDiv:
		for i := range dst {
			dst[i] = x[i] / y[i]
		}
	case core.OpPow:
		for i := range dst {
			dst[i] = T(math.Pow(float64(x[i]), float64(y[i])))
		}
	case core.OpAtan2:
		for i := range dst {
			dst[i] = T(math.Atan2(float64(x[i]), float64(y[i])))
		}
	default:
		binaryArith(op, dst, x, y)
	}
}

// quotI is integer division truncating toward zero; division by zero gives 0 (and
// math.MinInt64 quot -1 gives math.MinInt64, as in Go).
func quotI(a, b int64) int64 {
	if b == 0 {
		return 0
	}
	if b == -1 {
		return -a
	}
	return a / b
}

// remI is the remainder with the sign of the dividend (Go's %); remainder by zero gives 0.
func remI(a, b int64) int64 {
	if b == 0 || b == -1 {
		return 0
	}
	return a % b
}

func binaryInt(op core.BinOp, dst, x, y []int64) {
	x = x[:len(dst)]
	y = y[:len(dst)]
	switch op {
	case core.OpQuot:
		for i := range dst {
			dst[i] = quotI(x[i], y[i])
		}
	case core.OpRem:
		for i := range dst {
			dst[i] = remI(x[i], y[i])
		}
	default:
		binaryArith(op, dst, x, y)
	}
}

// compare applies a comparison; NaN compares unequal to everything (IEEE).
func compare[T numT](op core.BinOp, dst []bool, x, y []T) {
	x = x[:len(dst)]
	y = y[:len(dst)]
	switch op {
	case core.OpLt:
		for i := range dst {
			dst[i] = x[i] < y[i]
		}
	case core.OpLe:
		for i := range dst {
			dst[i] = x[i] <= y[i]
		}
	case core.OpGt:
		for i := range dst {
			dst[i] = x[i] > y[i]
		}
	case core.OpGe:
		for i := range dst {
			dst[i] = x[i] >= y[i]
		}
	case core.OpEq:
		for i := range dst {
			dst[i] = x[i] == y[i]
		}
	case core.OpNe:
		for i := range dst {
			dst[i] = x[i] != y[i]
		}
	}
}

func binaryBool(op core.BinOp, dst, x, y []bool) {
	x = x[:len(dst)]
	y = y[:len(dst)]
	switch op {
	case core.OpAnd:
		for i := range dst {
			dst[i] = x[i] && y[i]
		}
	case core.OpOr:
		for i := range dst {
			dst[i] = x[i] || y[i]
		}
	case core.OpEq:
		for i := range dst {
			dst[i] = x[i] == y[i]
		}
	case core.OpNe:
		for i := range dst {
			dst[i] = x[i] != y[i]
		}
	}
}

// castKernel converts every element of x (dtype from) into dst (dtype to): float→int
// truncates toward zero (NaN and out-of-range give 0), bool→number gives 0 or 1,
// number→bool is x != 0 (so NaN → true), f64→f32 rounds to nearest.
func castKernel(to, from core.Dtype, dst, x *buf) {
	switch from {
	case core.Float64:
		castFrom(to, dst, x.f64)
	case core.Float32:
		castFrom(to, dst, x.f32)
	case core.Int64:
		castFrom(to, dst, x.i64)
	case core.Bool:
		switch to {
		case core.Float64:
			for i, v := range x.b[:len(dst.f64)] {
				dst.f64[i] = b2n[float64](v)
			}
		case core.Float32:
			for i, v := range x.b[:len(dst.f32)] {
				dst.f32[i] = b2n[float32](v)
			}
		case core.Int64:
			for i, v := range x.b[:len(dst.i64)] {
				dst.i64[i] = b2n[int64](v)
			}
		case core.Bool:
			copy(dst.b, x.b)
		}
	}
}

func b2n[T numT](v bool) T {
	if v {
		return 1
	}
	return 0
}

func castFrom[S numT](to core.Dtype, dst *buf, x []S) {
	switch to {
	case core.Float64:
		for i, v := range x[:len(dst.f64)] {
			dst.f64[i] = float64(v)
		}
	case core.Float32:
		for i, v := range x[:len(dst.f32)] {
			dst.f32[i] = float32(v)
		}
	case core.Int64:
		var z S
		if isIntType(z) {
			for i, v := range x[:len(dst.i64)] {
				dst.i64[i] = int64(v)
			}
			return
		}
		for i, v := range x[:len(dst.i64)] {
			dst.i64[i] = core.FloatToInt(float64(v))
		}
	case core.Bool:
		for i, v := range x[:len(dst.b)] {
			dst.b[i] = v != 0
		}
	}
}

// isIntType reports whether the type parameter is int64 (1/2 truncates to 0 only for integers).
func isIntType[T numT](z T) bool {
	one := z + 1
	return one/2 == 0
}
