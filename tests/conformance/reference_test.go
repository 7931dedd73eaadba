package conformance

import (
	"math"
	"math/big"
	"testing"

	"github.com/bulkad/bulkad/core"
)

// TestReference checks the reference evaluator itself: core.Eval of every operation at its
// special values against the mathematical definitions (Go's IEEE arithmetic and comparisons,
// the math package, math/big for conversions, and the rules core documents where the
// language chooses: max and min propagate NaN and order +0 above -0, sign keeps ±0 and NaN,
// quot and rem by 0 give 0, casts to i64 truncate and give 0 for NaN and out of range),
// then the hand-written tables of special values below.
func TestReference(t *testing.T) {
	for _, o := range operations() {
		t.Run(o.String(), func(t *testing.T) {
			// An operation without a definition below fails its subtest, not the whole run.
			defer func() {
				if r := recover(); r != nil {
					t.Errorf("%v: add the operation's independent definition to tests/conformance/reference_test.go", r)
				}
			}()
			ins := operands(o)
			p, err := oneOp(o, core.Shape{colLen(ins[0])})
			if err != nil {
				t.Fatal(err)
			}
			got, err := reference(p, ins)
			if err != nil {
				t.Fatal(err)
			}
			want, tol := definition(o, ins)
			if msg := mismatches(o, ins, got, want, "the definition", tol); msg != "" {
				t.Errorf("core.Eval against the definition: %s", msg)
			}
		})
	}
}

// definition computes o on the operand columns from the definitions (not from core), with
// the tolerance the definition allows: exact except sigmoid, whose definition 1/(1+e^-x) is
// evaluated here in another (unstable) form, and the functions core computes with package
// internal/vmath (exp, log, tanh, sigmoid, erf), which its doc states within 2 ulp of the
// math package in float64 and 1 ulp of the correctly rounded value in float32.
func definition(o operation, ins []any) (any, tolerance) {
	n := colLen(ins[0])
	var tol tolerance
	switch o.un {
	case core.OpSigmoid:
		tol = tolerance{ulps: 4}
	case core.OpExp, core.OpLog, core.OpTanh, core.OpErf:
		tol = tolerance{ulps: 2}
	}
	switch {
	case o.cast:
		return castDef(o, ins[0]), tol
	case o.in == core.Bool:
		out := make([]bool, n)
		x := ins[0].([]bool)
		for i := range out {
			switch {
			case o.un == core.OpNot:
				out[i] = !x[i]
			case o.bin == core.OpAnd:
				out[i] = x[i] && ins[1].([]bool)[i]
			case o.bin == core.OpOr:
				out[i] = x[i] || ins[1].([]bool)[i]
			case o.bin == core.OpEq:
				out[i] = x[i] == ins[1].([]bool)[i]
			case o.bin == core.OpNe:
				out[i] = x[i] != ins[1].([]bool)[i]
			default:
				panic("no definition of " + o.String())
			}
		}
		return out, tol
	case o.in == core.Int64:
		return intDef(o, ins), tol
	}
	// floats: computed in float64 from the float64 (or float32, widened) operands; a float32
	// result is the float32 arithmetic itself for + - * / (IEEE) and the float64 value
	// rounded once for the functions.
	get := func(k, i int) float64 {
		if x, ok := ins[k].([]float32); ok {
			return float64(x[i])
		}
		return ins[k].([]float64)[i]
	}
	if o.bin != 0 && o.bin.IsComparison() {
		out := make([]bool, n)
		for i := range out {
			out[i] = compareDef(o.bin, get(0, i), get(1, i))
		}
		return out, tol
	}
	f := make([]float64, n)
	for i := range f {
		if o.un != 0 {
			f[i] = unaryDef(o.un)(get(0, i))
			continue
		}
		x, y := get(0, i), get(1, i)
		if o.in == core.Float32 {
			f[i] = float64(binaryDef(o.bin, float32(x), float32(y)))
		} else {
			f[i] = binaryDef(o.bin, x, y)
		}
	}
	if o.in == core.Float32 {
		out := make([]float32, n)
		for i, v := range f {
			out[i] = float32(v)
		}
		return out, tol
	}
	return f, tol
}

// unaryDefs are the float unary operations' definitions on float64.
var unaryDefs = map[core.UnOp]func(float64) float64{
	core.OpNeg: func(x float64) float64 { return -x },
	core.OpAbs: math.Abs,
	core.OpSign: func(x float64) float64 {
		switch {
		case x > 0:
			return 1
		case x < 0:
			return -1
		}
		return x // ±0 and NaN
	},
	core.OpExp:      math.Exp,
	core.OpLog:      logDef,
	core.OpSqrt:     math.Sqrt,
	core.OpSin:      math.Sin,
	core.OpCos:      math.Cos,
	core.OpTan:      math.Tan,
	core.OpTanh:     math.Tanh,
	core.OpSigmoid:  func(x float64) float64 { return 1 / (1 + math.Exp(-x)) },
	core.OpRecip:    func(x float64) float64 { return 1 / x },
	core.OpFloor:    math.Floor,
	core.OpCeil:     math.Ceil,
	core.OpLog1p:    math.Log1p,
	core.OpExpm1:    math.Expm1,
	core.OpErf:      math.Erf,
	core.OpStopGrad: func(x float64) float64 { return x },
	core.OpAtan:     math.Atan,
}

// unaryDef is a float unary operation's definition on float64.
func unaryDef(op core.UnOp) func(float64) float64 {
	if f, ok := unaryDefs[op]; ok {
		return f
	}
	panic("no definition of unary " + op.String())
}

// maxDef and minDef are core's documented max and min: NaN when an operand is NaN (also
// against an infinity), +0 above -0.
func maxDef(x, y float64) float64 {
	switch {
	case math.IsNaN(x) || math.IsNaN(y):
		return math.NaN()
	case x == y && math.Signbit(x):
		return y
	case x >= y:
		return x
	}
	return y
}

func minDef(x, y float64) float64 {
	switch {
	case math.IsNaN(x) || math.IsNaN(y):
		return math.NaN()
	case x == y && !math.Signbit(x):
		return y
	case x <= y:
		return x
	}
	return y
}

// binaryDef is a float binary (non-comparison) operation's definition in T: T's own IEEE
// arithmetic for + - * /, the float64 function (binaryFunc) rounded once to T for the others.
func binaryDef[T float32 | float64](op core.BinOp, x, y T) T {
	switch op {
	case core.OpAdd:
		return x + y
	case core.OpSub:
		return x - y
	case core.OpMul:
		return x * y
	case core.OpDiv:
		return x / y
	}
	return T(binaryFunc(op, float64(x), float64(y)))
}

// binaryFunc is the definition on float64 of a float binary operation other than + - * /.
func binaryFunc(op core.BinOp, x, y float64) float64 {
	switch op {
	case core.OpPow:
		return math.Pow(x, y)
	case core.OpMax:
		return maxDef(x, y)
	case core.OpMin:
		return minDef(x, y)
	case core.OpAtan2:
		return math.Atan2(x, y)
	}
	panic("no definition of binary " + op.String())
}

// compareDef is an IEEE comparison: false with a NaN operand, except !=; -0 == +0.
func compareDef[T float64 | int64](op core.BinOp, x, y T) bool {
	switch op {
	case core.OpLt:
		return x < y
	case core.OpLe:
		return x <= y
	case core.OpGt:
		return x > y
	case core.OpGe:
		return x >= y
	case core.OpEq:
		return x == y
	case core.OpNe:
		return x != y
	}
	panic("not a comparison: " + op.String())
}

// intDef is an i64 operation's definition: two's-complement arithmetic, quot truncating and
// rem with the dividend's sign, both 0 for a zero divisor.
func intDef(o operation, ins []any) any {
	x := ins[0].([]int64)
	if o.bin != 0 && o.bin.IsComparison() {
		out := make([]bool, len(x))
		for i := range out {
			out[i] = compareDef(o.bin, x[i], ins[1].([]int64)[i])
		}
		return out
	}
	out := make([]int64, len(x))
	for i := range out {
		switch o.un {
		case core.OpNeg:
			out[i] = -x[i]
		case core.OpAbs:
			out[i] = x[i]
			if x[i] < 0 {
				out[i] = -x[i] // MinInt64 stays MinInt64
			}
		case core.OpSign:
			switch {
			case x[i] > 0:
				out[i] = 1
			case x[i] < 0:
				out[i] = -1
			}
		case 0:
			y := ins[1].([]int64)[i]
			switch o.bin {
			case core.OpAdd:
				out[i] = x[i] + y
			case core.OpSub:
				out[i] = x[i] - y
			case core.OpMul:
				out[i] = x[i] * y
			case core.OpMax:
				out[i] = max(x[i], y)
			case core.OpMin:
				out[i] = min(x[i], y)
			case core.OpQuot:
				if y != 0 {
					out[i] = x[i] / y
				}
			case core.OpRem:
				if y != 0 {
					out[i] = x[i] % y
				}
			default:
				panic("no definition of " + o.String())
			}
		default:
			panic("no definition of " + o.String())
		}
	}
	return out
}

// truncDef is the cast of a float to i64: truncation toward zero; NaN and values outside
// [-2⁶³, 2⁶³) give 0.
func truncDef(x float64) int64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return 0
	}
	tr := math.Trunc(x)
	if tr < -9223372036854775808.0 || tr >= 9223372036854775808.0 {
		return 0
	}
	return int64(tr)
}

// castDef is the cast o on the column x: float→float and i64→float rounded once to nearest
// even (math/big; beyond the largest float32: ±Inf), float→i64 by truncDef, number→bool
// x ≠ 0 (so NaN → true), bool→number 0 or 1.
func castDef(o operation, x any) any {
	n := colLen(x)
	out := make([]any, n)
	for i := range n {
		var f float64 // the value, for float and bool operands
		var bf *big.Float
		switch x := x.(type) {
		case []float64:
			f = x[i]
		case []float32:
			f = float64(x[i])
		case []int64:
			bf = new(big.Float).SetInt64(x[i])
		case []bool:
			if x[i] {
				f = 1
			}
		}
		switch o.to {
		case core.Float64:
			if bf != nil {
				f, _ = bf.Float64() // rounded once, to nearest even
			}
			out[i] = f
		case core.Float32:
			switch {
			case bf != nil:
				v, _ := bf.Float32()
				out[i] = v
			case math.IsNaN(f):
				out[i] = float32(math.NaN())
			case math.IsInf(f, 0):
				out[i] = float32(f)
			default:
				v, _ := big.NewFloat(f).Float32() // rounded once; beyond MaxFloat32: ±Inf
				out[i] = v
			}
		case core.Int64:
			if bf != nil {
				out[i], _ = bf.Int64()
			} else {
				out[i] = truncDef(f)
			}
		case core.Bool:
			out[i] = f != 0 || (bf != nil && bf.Sign() != 0) // NaN != 0
		}
	}
	return boxedColumn(out, o.to)
}

// boxedColumn converts boxed elements into a column of dtype d.
func boxedColumn(xs []any, d core.Dtype) any {
	switch d {
	case core.Float64:
		out := make([]float64, len(xs))
		for i, x := range xs {
			out[i] = x.(float64)
		}
		return out
	case core.Float32:
		out := make([]float32, len(xs))
		for i, x := range xs {
			out[i] = x.(float32)
		}
		return out
	case core.Int64:
		out := make([]int64, len(xs))
		for i, x := range xs {
			out[i] = x.(int64)
		}
		return out
	}
	out := make([]bool, len(xs))
	for i, x := range xs {
		out[i] = x.(bool)
	}
	return out
}

// logDef is the natural logarithm: math.Log, except on subnormals, where math.Log on amd64
// (Go 1.26) is wrong (math.Log(5e-324) = -709.09; the logarithm is -744.44): there the
// operand is scaled into the normal range first, log(x) = log(x·2⁶⁰) − 60·ln 2.
func logDef(x float64) float64 {
	if x > 0 && x < 0x1p-1022 {
		return math.Log(x*0x1p60) - 60*math.Ln2
	}
	return math.Log(x)
}
