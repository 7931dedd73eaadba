package conformance

import (
	"fmt"
	"math"
	"testing"

	"github.com/bulkad/bulkad/core"
)

// Hand-written tables of special values: what IEEE 754, C99 Annex F (which the math package
// follows) and core's documentation say each operation gives at its edges, checked against
// core.Eval. They restate the definitions at the points where a definition written in Go
// (TestReference) could share a mistake with the evaluator.

// floatRow is one float operation at special operands: op names a unary or binary operation
// (its text-syntax name), y is unused for unary ones; only restricts the row to one dtype
// (0: both, the values converted to float32 for f32); ulps allows that many units in the
// last place (0: bitwise).
type floatRow struct {
	op      string
	only    core.Dtype
	x, y, w float64
	ulps    int64
}

func floatRows() []floatRow {
	inf, nan, nz := math.Inf(1), math.NaN(), negZero()
	sub64, max64 := math.SmallestNonzeroFloat64, math.MaxFloat64
	sub32, max32 := float64(math.SmallestNonzeroFloat32), float64(math.MaxFloat32)
	f64, f32 := core.Float64, core.Float32
	pi := math.Pi
	return []floatRow{
		{op: "neg", x: 0, w: nz}, {op: "neg", x: nz, w: 0}, {op: "neg", x: inf, w: -inf},
		{op: "neg", x: -inf, w: inf}, {op: "neg", x: nan, w: nan}, {op: "neg", x: 1, w: -1},

		{op: "abs", x: nz, w: 0}, {op: "abs", x: 0, w: 0}, {op: "abs", x: -inf, w: inf},
		{op: "abs", x: nan, w: nan}, {op: "abs", x: -2.5, w: 2.5},

		{op: "sign", x: 0, w: 0}, {op: "sign", x: nz, w: nz}, {op: "sign", x: nan, w: nan},
		{op: "sign", x: inf, w: 1}, {op: "sign", x: -inf, w: -1}, {op: "sign", x: 1e30, w: 1},
		{op: "sign", x: -1e30, w: -1}, {op: "sign", only: f64, x: sub64, w: 1},
		{op: "sign", only: f64, x: -sub64, w: -1}, {op: "sign", only: f32, x: sub32, w: 1},
		{op: "sign", only: f32, x: -sub32, w: -1},

		{op: "exp", x: 0, w: 1}, {op: "exp", x: nz, w: 1}, {op: "exp", x: inf, w: inf},
		{op: "exp", x: -inf, w: 0}, {op: "exp", x: nan, w: nan}, {op: "exp", x: 1e30, w: inf},
		{op: "exp", x: -1e30, w: 0}, {op: "exp", only: f64, x: sub64, w: 1},
		{op: "exp", only: f32, x: sub32, w: 1},

		{op: "log", x: 0, w: -inf}, {op: "log", x: nz, w: -inf}, {op: "log", x: inf, w: inf},
		{op: "log", x: -inf, w: nan}, {op: "log", x: nan, w: nan}, {op: "log", x: -1, w: nan},
		{op: "log", x: 1, w: 0}, {op: "log", only: f64, x: -sub64, w: nan},

		{op: "sqrt", x: 0, w: 0}, {op: "sqrt", x: nz, w: nz}, {op: "sqrt", x: inf, w: inf},
		{op: "sqrt", x: -inf, w: nan}, {op: "sqrt", x: nan, w: nan}, {op: "sqrt", x: -1, w: nan},
		{op: "sqrt", x: 0.25, w: 0.5},

		{op: "sin", x: 0, w: 0}, {op: "sin", x: nz, w: nz}, {op: "sin", x: inf, w: nan},
		{op: "sin", x: -inf, w: nan}, {op: "sin", x: nan, w: nan},
		{op: "sin", only: f64, x: sub64, w: sub64}, {op: "sin", only: f32, x: sub32, w: sub32},

		{op: "cos", x: 0, w: 1}, {op: "cos", x: nz, w: 1}, {op: "cos", x: inf, w: nan},
		{op: "cos", x: -inf, w: nan}, {op: "cos", x: nan, w: nan}, {op: "cos", only: f64, x: sub64, w: 1},

		{op: "tan", x: 0, w: 0}, {op: "tan", x: nz, w: nz}, {op: "tan", x: inf, w: nan},
		{op: "tan", x: -inf, w: nan}, {op: "tan", x: nan, w: nan}, {op: "tan", only: f64, x: sub64, w: sub64},

		{op: "tanh", x: 0, w: 0}, {op: "tanh", x: nz, w: nz}, {op: "tanh", x: inf, w: 1},
		{op: "tanh", x: -inf, w: -1}, {op: "tanh", x: nan, w: nan}, {op: "tanh", x: 25, w: 1},
		{op: "tanh", x: -25, w: -1}, {op: "tanh", x: 1e30, w: 1}, {op: "tanh", only: f64, x: sub64, w: sub64},

		// sigmoid: 1/(1+e^-x), correctly rounded (Python's decimal at 60 digits); never
		// clamped to 1 where float64 can tell (Gorgonia returns 1 above 19, 15 in float32)
		{op: "sigmoid", x: 0, w: 0.5}, {op: "sigmoid", x: nz, w: 0.5}, {op: "sigmoid", x: inf, w: 1},
		{op: "sigmoid", x: -inf, w: 0}, {op: "sigmoid", x: nan, w: nan}, {op: "sigmoid", x: 1e30, w: 1},
		{op: "sigmoid", x: -1e30, w: 0}, {op: "sigmoid", only: f64, x: sub64, w: 0.5},
		{op: "sigmoid", only: f64, x: 25, w: 0.9999999999861121, ulps: 1},
		{op: "sigmoid", only: f64, x: -25, w: 1.3887943864771146e-11, ulps: 1},
		{op: "sigmoid", only: f64, x: 40, w: 1},
		{op: "sigmoid", only: f64, x: -40, w: 4.248354255291589e-18, ulps: 1},
		{op: "sigmoid", only: f32, x: 25, w: 1},

		{op: "recip", x: 0, w: inf}, {op: "recip", x: nz, w: -inf}, {op: "recip", x: inf, w: 0},
		{op: "recip", x: -inf, w: nz}, {op: "recip", x: nan, w: nan}, {op: "recip", x: 2.5, w: 0.4},
		{op: "recip", x: -0.5, w: -2}, {op: "recip", only: f64, x: sub64, w: inf},
		{op: "recip", only: f64, x: max64, w: 0x1p-1024}, {op: "recip", only: f32, x: sub32, w: inf},
		{op: "recip", only: f32, x: max32, w: 0x1p-128},

		{op: "floor", x: 0, w: 0}, {op: "floor", x: nz, w: nz}, {op: "floor", x: inf, w: inf},
		{op: "floor", x: -inf, w: -inf}, {op: "floor", x: nan, w: nan}, {op: "floor", x: 2.5, w: 2},
		{op: "floor", x: -2.5, w: -3}, {op: "floor", x: 0.5, w: 0}, {op: "floor", x: -0.5, w: -1},
		{op: "floor", x: 1e30, w: 1e30}, {op: "floor", only: f64, x: sub64, w: 0},
		{op: "floor", only: f64, x: -sub64, w: -1},

		{op: "ceil", x: 0, w: 0}, {op: "ceil", x: nz, w: nz}, {op: "ceil", x: inf, w: inf},
		{op: "ceil", x: -inf, w: -inf}, {op: "ceil", x: nan, w: nan}, {op: "ceil", x: 2.5, w: 3},
		{op: "ceil", x: -2.5, w: -2}, {op: "ceil", x: 0.5, w: 1}, {op: "ceil", x: -0.5, w: nz},
		{op: "ceil", only: f64, x: sub64, w: 1}, {op: "ceil", only: f64, x: -sub64, w: nz},

		{op: "log1p", x: 0, w: 0}, {op: "log1p", x: nz, w: nz}, {op: "log1p", x: inf, w: inf},
		{op: "log1p", x: -1, w: -inf}, {op: "log1p", x: -inf, w: nan}, {op: "log1p", x: -2.5, w: nan},
		{op: "log1p", x: nan, w: nan}, {op: "log1p", only: f64, x: sub64, w: sub64},

		{op: "expm1", x: 0, w: 0}, {op: "expm1", x: nz, w: nz}, {op: "expm1", x: inf, w: inf},
		{op: "expm1", x: -inf, w: -1}, {op: "expm1", x: nan, w: nan}, {op: "expm1", x: 1e30, w: inf},
		{op: "expm1", x: -1e30, w: -1}, {op: "expm1", only: f64, x: sub64, w: sub64},

		{op: "erf", x: 0, w: 0}, {op: "erf", x: nz, w: nz}, {op: "erf", x: inf, w: 1},
		{op: "erf", x: -inf, w: -1}, {op: "erf", x: nan, w: nan}, {op: "erf", x: 25, w: 1},
		{op: "erf", x: -25, w: -1},

		{op: "stopgrad", x: nz, w: nz}, {op: "stopgrad", x: nan, w: nan}, {op: "stopgrad", x: -inf, w: -inf},
		{op: "stopgrad", x: 2.5, w: 2.5},

		// binary
		{op: "+", x: 0, y: 0, w: 0}, {op: "+", x: nz, y: nz, w: nz}, {op: "+", x: 0, y: nz, w: 0},
		{op: "+", x: nz, y: 0, w: 0}, {op: "+", x: inf, y: -inf, w: nan}, {op: "+", x: inf, y: inf, w: inf},
		{op: "+", x: nan, y: 1, w: nan}, {op: "+", x: 1, y: -1, w: 0}, {op: "+", x: 1e30, y: -1e30, w: 0},
		{op: "+", only: f64, x: max64, y: max64, w: inf}, {op: "+", only: f32, x: max32, y: max32, w: inf},
		{op: "+", only: f64, x: sub64, y: -sub64, w: 0},

		{op: "-", x: 0, y: 0, w: 0}, {op: "-", x: nz, y: 0, w: nz}, {op: "-", x: 0, y: nz, w: 0},
		{op: "-", x: nz, y: nz, w: 0}, {op: "-", x: inf, y: inf, w: nan}, {op: "-", x: -inf, y: inf, w: -inf},
		{op: "-", x: 1, y: 1, w: 0}, {op: "-", x: nan, y: nan, w: nan},

		{op: "*", x: 0, y: nz, w: nz}, {op: "*", x: nz, y: nz, w: 0}, {op: "*", x: 0, y: inf, w: nan},
		{op: "*", x: nz, y: -inf, w: nan}, {op: "*", x: -1, y: 0, w: nz}, {op: "*", x: -inf, y: -inf, w: inf},
		{op: "*", x: nan, y: 0, w: nan}, {op: "*", only: f64, x: max64, y: 2.5, w: inf},
		{op: "*", only: f64, x: sub64, y: 0.5, w: 0}, {op: "*", only: f64, x: -sub64, y: 0.5, w: nz},
		{op: "*", only: f32, x: sub32, y: 0.5, w: 0}, {op: "*", only: f32, x: -sub32, y: 0.5, w: nz},

		{op: "/", x: 1, y: 0, w: inf}, {op: "/", x: 1, y: nz, w: -inf}, {op: "/", x: -1, y: 0, w: -inf},
		{op: "/", x: 0, y: 0, w: nan}, {op: "/", x: nz, y: nz, w: nan}, {op: "/", x: inf, y: inf, w: nan},
		{op: "/", x: 1, y: inf, w: 0}, {op: "/", x: 1, y: -inf, w: nz}, {op: "/", x: nz, y: 1, w: nz},
		{op: "/", x: inf, y: 0, w: inf}, {op: "/", x: nan, y: 1, w: nan},

		{op: "pow", x: nan, y: 0, w: 1}, {op: "pow", x: nan, y: nz, w: 1}, {op: "pow", x: 1, y: nan, w: 1},
		{op: "pow", x: 1, y: inf, w: 1}, {op: "pow", x: -1, y: inf, w: 1}, {op: "pow", x: -1, y: -inf, w: 1},
		{op: "pow", x: 0, y: -1, w: inf}, {op: "pow", x: nz, y: -1, w: -inf}, {op: "pow", x: nz, y: 3, w: nz},
		{op: "pow", x: nz, y: 2.5, w: 0}, {op: "pow", x: 0, y: -inf, w: inf}, {op: "pow", x: 0, y: inf, w: 0},
		{op: "pow", x: 0.5, y: inf, w: 0}, {op: "pow", x: 2.5, y: inf, w: inf}, {op: "pow", x: 0.5, y: -inf, w: inf},
		{op: "pow", x: 2.5, y: -inf, w: 0}, {op: "pow", x: inf, y: 0.5, w: inf}, {op: "pow", x: inf, y: -1, w: 0},
		{op: "pow", x: -inf, y: 3, w: -inf}, {op: "pow", x: -inf, y: -1, w: nz}, {op: "pow", x: -inf, y: 2.5, w: inf},
		{op: "pow", x: -2.5, y: 0.5, w: nan}, {op: "pow", x: -1, y: 0.5, w: nan}, {op: "pow", x: -2.5, y: 3, w: -15.625},
		{op: "pow", x: 2.5, y: nan, w: nan}, {op: "pow", x: nan, y: 1, w: nan}, {op: "pow", x: nz, y: 1, w: nz},

		{op: "max", x: nan, y: inf, w: nan}, {op: "max", x: inf, y: nan, w: nan}, {op: "max", x: -inf, y: nan, w: nan},
		{op: "max", x: nan, y: -inf, w: nan}, {op: "max", x: nan, y: 1, w: nan}, {op: "max", x: 1, y: nan, w: nan},
		{op: "max", x: 0, y: nz, w: 0}, {op: "max", x: nz, y: 0, w: 0}, {op: "max", x: nz, y: nz, w: nz},
		{op: "max", x: -inf, y: -1e30, w: -1e30}, {op: "max", x: 1, y: 1, w: 1}, {op: "max", x: inf, y: 1e30, w: inf},

		{op: "min", x: nan, y: inf, w: nan}, {op: "min", x: -inf, y: nan, w: nan}, {op: "min", x: nan, y: -inf, w: nan},
		{op: "min", x: 0, y: nz, w: nz}, {op: "min", x: nz, y: 0, w: nz}, {op: "min", x: 0, y: 0, w: 0},
		{op: "min", x: inf, y: -inf, w: -inf}, {op: "min", x: 1, y: 1, w: 1},

		// atan2 x y is the angle of the point (y, x), math.Atan2(x, y)
		{op: "atan2", x: 0, y: 0, w: 0}, {op: "atan2", x: nz, y: 0, w: nz}, {op: "atan2", x: 0, y: nz, w: pi},
		{op: "atan2", x: nz, y: nz, w: -pi}, {op: "atan2", x: 0, y: 1, w: 0}, {op: "atan2", x: nz, y: 1, w: nz},
		{op: "atan2", x: 0, y: -1, w: pi}, {op: "atan2", x: nz, y: -1, w: -pi}, {op: "atan2", x: 1, y: 0, w: pi / 2},
		{op: "atan2", x: 1, y: nz, w: pi / 2}, {op: "atan2", x: -1, y: 0, w: -pi / 2}, {op: "atan2", x: -1, y: nz, w: -pi / 2},
		{op: "atan2", x: inf, y: inf, w: pi / 4}, {op: "atan2", x: -inf, y: inf, w: -pi / 4},
		{op: "atan2", x: inf, y: -inf, w: 3 * pi / 4}, {op: "atan2", x: -inf, y: -inf, w: -3 * pi / 4},
		{op: "atan2", x: 1, y: inf, w: 0}, {op: "atan2", x: -1, y: inf, w: nz}, {op: "atan2", x: 1, y: -inf, w: pi},
		{op: "atan2", x: -1, y: -inf, w: -pi}, {op: "atan2", x: inf, y: 1, w: pi / 2}, {op: "atan2", x: -inf, y: 1, w: -pi / 2},
		{op: "atan2", x: nan, y: 1, w: nan}, {op: "atan2", x: 1, y: nan, w: nan},
	}
}

// TestReferenceSpecialValues checks core.Eval against the hand-written tables.
func TestReferenceSpecialValues(t *testing.T) {
	t.Run("float", func(t *testing.T) {
		for _, r := range floatRows() {
			for _, d := range []core.Dtype{core.Float64, core.Float32} {
				if r.only != 0 && r.only != d {
					continue
				}
				o, ok := parseOp(r.op, d)
				if !ok {
					t.Fatalf("row %+v: no operation %q", r, r.op)
				}
				ins := []any{floatCol(d, r.x), floatCol(d, r.y)}[:o.arity()]
				checkRow(t, o, ins, floatCol(d, r.w), tolerance{ulps: r.ulps})
			}
		}
	})
	t.Run("compare", func(t *testing.T) {
		inf, nan, nz := math.Inf(1), math.NaN(), negZero()
		sub := math.SmallestNonzeroFloat64
		ops := []string{"<", "<=", ">", ">=", "==", "!="}
		for _, r := range []struct {
			only core.Dtype
			x, y float64
			want string // one letter per operation of ops: T or F
		}{
			{0, nan, nan, "FFFFFT"}, {0, nan, 1, "FFFFFT"}, {0, 1, nan, "FFFFFT"}, {0, inf, nan, "FFFFFT"},
			{0, 0, nz, "FTFTTF"}, {0, nz, 0, "FTFTTF"}, {0, -inf, inf, "TTFFFT"}, {0, inf, inf, "FTFTTF"},
			{0, 1, 1, "FTFTTF"}, {0, 2.5, 1, "FFTTFT"}, {core.Float64, sub, 0, "FFTTFT"},
			{core.Float64, -sub, nz, "TTFFFT"},
		} {
			for _, d := range []core.Dtype{core.Float64, core.Float32} {
				if r.only != 0 && r.only != d {
					continue
				}
				for k, name := range ops {
					o, _ := parseOp(name, d)
					checkRow(t, o, []any{floatCol(d, r.x), floatCol(d, r.y)}, []bool{r.want[k] == 'T'}, tolerance{})
				}
			}
		}
	})
	t.Run("int", func(t *testing.T) {
		minI, maxI := int64(math.MinInt64), int64(math.MaxInt64)
		for _, r := range []struct {
			op      string
			x, y, w int64
		}{
			{"neg", minI, 0, minI}, {"abs", minI, 0, minI}, {"abs", -7, 0, 7}, {"neg", 0, 0, 0},
			{"sign", 0, 0, 0}, {"sign", -7, 0, -1}, {"sign", maxI, 0, 1}, {"sign", minI, 0, -1},
			{"quot", 7, 0, 0}, {"rem", 7, 0, 0}, {"quot", 0, 0, 0}, {"quot", -7, 2, -3}, {"rem", -7, 2, -1},
			{"rem", 7, -2, 1}, {"quot", 7, -2, -3}, {"quot", minI, -1, minI}, {"rem", minI, -1, 0},
			{"+", maxI, 1, minI}, {"-", minI, 1, maxI}, {"*", maxI, 2, -2}, {"max", -7, 7, 7},
			{"min", minI, maxI, minI},
		} {
			o, ok := parseOp(r.op, core.Int64)
			if !ok {
				t.Fatalf("no i64 operation %q", r.op)
			}
			ins := []any{[]int64{r.x}, []int64{r.y}}[:o.arity()]
			checkRow(t, o, ins, []int64{r.w}, tolerance{})
		}
		// integers compare exactly, not through float64 (where 2⁵³+1 == 2⁵³)
		for _, r := range []struct {
			op   string
			x, y int64
			w    bool
		}{{"==", 1<<53 + 1, 1 << 53, false}, {">", 1<<53 + 1, 1 << 53, true}, {"<", minI, maxI, true}, {"!=", maxI, maxI - 1, true}} {
			o, _ := parseOp(r.op, core.Int64)
			checkRow(t, o, []any{[]int64{r.x}, []int64{r.y}}, []bool{r.w}, tolerance{})
		}
	})
	t.Run("cast", func(t *testing.T) {
		inf, nan, nz := math.Inf(1), math.NaN(), negZero()
		minI, maxI := int64(math.MinInt64), int64(math.MaxInt64)
		max32 := float32(math.MaxFloat32)
		for _, r := range []struct {
			x, w any // the operand (its dtype is the cast's source) and the result
		}{
			{2.5, int64(2)}, {-2.5, int64(-2)}, {0.5, int64(0)}, {-0.5, int64(0)}, {nan, int64(0)},
			{inf, int64(0)}, {-inf, int64(0)}, {1e30, int64(0)}, {-1e30, int64(0)}, {nz, int64(0)},
			{0x1p63, int64(0)}, {-0x1p63, minI}, {0x1p63 - 1024, int64(9223372036854774784)},
			{math.MaxFloat64, int64(0)},
			{float32(-0x1p63), minI}, {float32(0x1p63), int64(0)}, {float32(-2.5), int64(-2)}, {float32(nan), int64(0)},

			{math.MaxFloat64, float32(inf)}, {-math.MaxFloat64, float32(-inf)}, {nz, float32(nz)},
			{nan, float32(nan)}, {math.SmallestNonzeroFloat64, float32(0)}, {-math.SmallestNonzeroFloat64, float32(nz)},
			{0x1.fffffefp127, max32}, {0x1.ffffffp127, float32(inf)}, {0x1.000001p0, float32(1)},
			{0x1.000003p0, float32(0x1.000004p0)}, {1e30, float32(1e30)},

			{float32(math.SmallestNonzeroFloat32), 0x1p-149}, {float32(nz), nz}, {float32(inf), inf},

			{nan, true}, {nz, false}, {0.0, false}, {math.SmallestNonzeroFloat64, true}, {-inf, true},
			{float32(nan), true}, {float32(nz), false},

			{int64(1<<53 + 1), 0x1p53}, {maxI, 0x1p63}, {minI, -0x1p63},
			{int64(1<<60 + 1<<36 + 1), float32(0x1p60 + 0x1p37)}, {int64(1<<24 + 1), float32(0x1p24)},
			{maxI, float32(0x1p63)}, {int64(0), false}, {minI, true},

			{true, 1.0}, {false, 0.0}, {true, int64(1)}, {false, float32(0)}, {true, float32(1)},

			{nz, nz}, {nan, nan}, {minI, minI}, {float32(nz), float32(nz)}, {true, true},
		} {
			xs, ws := boxedColumn([]any{r.x}, dtypeOfValue(r.x)), boxedColumn([]any{r.w}, dtypeOfValue(r.w))
			o := operation{cast: true, in: dtypeOf(xs), to: dtypeOf(ws)}
			checkRow(t, o, []any{xs}, ws, tolerance{})
		}
	})
}

// checkRow evaluates o on one-element operand columns with core.Eval and compares with want.
func checkRow(t *testing.T, o operation, ins []any, want any, tol tolerance) {
	t.Helper()
	p, err := oneOp(o, core.Shape{1})
	if err != nil {
		t.Fatalf("%v: %v", o, err)
	}
	got, err := reference(p, ins)
	if err != nil {
		t.Fatalf("%v: %v", o, err)
	}
	if msg := mismatches(o, ins, got, want, "the table", tol); msg != "" {
		t.Errorf("%v: core.Eval: %s", o, msg)
	}
}

// parseOp finds the unary or binary operation named s at operand dtype d.
func parseOp(s string, d core.Dtype) (operation, bool) {
	for _, o := range operations() {
		if o.cast || o.in != d {
			continue
		}
		if (o.un != 0 && o.un.String() == s) || (o.bin != 0 && (o.bin.String() == s || o.bin.Word() == s)) {
			return o, true
		}
	}
	return operation{}, false
}

// floatCol is the one-element column of dtype d holding v.
func floatCol(d core.Dtype, v float64) any {
	if d == core.Float32 {
		return []float32{float32(v)}
	}
	return []float64{v}
}

// dtypeOfValue is the dtype of a boxed element.
func dtypeOfValue(v any) core.Dtype {
	switch v.(type) {
	case float64:
		return core.Float64
	case float32:
		return core.Float32
	case int64:
		return core.Int64
	case bool:
		return core.Bool
	}
	panic(fmt.Sprintf("no dtype for %T", v))
}
