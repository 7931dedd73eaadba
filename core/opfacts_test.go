package core

import (
	"math"
	"testing"
)

// TestOpFactsUnary checks that every unary operation has a complete entry in the op-facts
// table: a missing or half-filled entry fails here instead of falling back to a default.
func TestOpFactsUnary(t *testing.T) {
	names := map[string]UnOp{}
	for _, o := range UnOps() {
		f := o.Facts()
		t.Run(f.Name, func(t *testing.T) {
			if f.Name == "" {
				t.Fatalf("unary %d: no entry (no name)", uint8(o))
			}
			if p, dup := names[f.Name]; dup {
				t.Errorf("name %q also names %d", f.Name, uint8(p))
			}
			names[f.Name] = o
			if got, ok := ParseUnOp(f.Name); !ok || got != o {
				t.Errorf("ParseUnOp(%q) = %v, %v", f.Name, got, ok)
			}
			checkDtypes(t, f.Dtypes)
			checkFuncs(t, f.Dtypes, f.Float != nil, f.Int != nil, f.Bool != nil)
			if f.KeepsZero&^f.Dtypes != 0 {
				t.Errorf("KeepsZero %v is not within Dtypes %v", f.KeepsZero, f.Dtypes)
			}
			for d := Float64; d <= Bool; d++ {
				if f.Dtypes.Has(d) && f.KeepsZero.Has(d) != unaryIsZeroAtZero(f, d) {
					t.Errorf("KeepsZero.Has(%v) = %v, but the reference function says %v", d, f.KeepsZero.Has(d), !f.KeepsZero.Has(d))
				}
			}
			checkCommon(t, f.Cost, f.Smooth, f.Kinks, f.Native, f.Dtypes.Has(Float64))
			switch d := f.Deriv; {
			case d.Kind == 0:
				t.Error("Deriv unset")
			case (f.Smooth == Discrete) != (d.Kind == NoDeriv):
				t.Errorf("Smooth %d with Deriv.Kind %d: exactly the discrete operations have no derivative", f.Smooth, d.Kind)
			case f.Smooth == PiecewiseConstant && d.Kind != DerivZero:
				t.Error("a piecewise constant operation has derivative 0")
			case (d.Kind == DerivRule) != (d.Factor != nil):
				t.Errorf("Deriv.Kind %d with Factor set %v", d.Kind, d.Factor != nil)
			case d.Kind == DerivLinear && d.Coef == 0:
				t.Error("DerivLinear with slope 0")
			}
		})
	}
}

// TestOpFactsBinary is TestOpFactsUnary for binary operations.
func TestOpFactsBinary(t *testing.T) {
	names, words := map[string]bool{}, map[string]bool{}
	for _, o := range BinOps() {
		f := o.Facts()
		t.Run(f.Word, func(t *testing.T) {
			if f.Name == "" || f.Word == "" {
				t.Fatalf("binary %d: no entry (name %q, word %q)", uint8(o), f.Name, f.Word)
			}
			if names[f.Name] || words[f.Word] {
				t.Errorf("name %q or word %q taken twice", f.Name, f.Word)
			}
			names[f.Name], words[f.Word] = true, true
			if got, ok := ParseBinOp(f.Name); !ok || got != o {
				t.Errorf("ParseBinOp(%q) = %v, %v", f.Name, got, ok)
			}
			checkDtypes(t, f.Dtypes)
			if f.Compare {
				checkFuncs(t, f.Dtypes, f.FloatCmp != nil, f.IntCmp != nil, f.Bool != nil)
				if f.Float != nil || f.Int != nil {
					t.Error("a comparison has FloatCmp and IntCmp, not Float and Int")
				}
			} else {
				checkFuncs(t, f.Dtypes, f.Float != nil, f.Int != nil, f.Bool != nil)
				if f.FloatCmp != nil || f.IntCmp != nil {
					t.Error("FloatCmp and IntCmp are for comparisons")
				}
			}
			for d := Float64; d <= Bool; d++ {
				if f.Dtypes.Has(d) && f.KeepsZero != binaryIsZeroAtZero(f, d) {
					t.Errorf("KeepsZero = %v, but the reference function on %v says %v", f.KeepsZero, d, !f.KeepsZero)
				}
			}
			checkCommon(t, f.Cost, f.Smooth, f.Kinks, f.Native, f.Dtypes.Has(Float64) && !f.Compare)
			switch d := f.Deriv; {
			case d.Kind == 0:
				t.Error("Deriv unset")
			case (f.Smooth == Discrete) != (d.Kind == NoDeriv):
				t.Errorf("Smooth %d with Deriv.Kind %d: exactly the discrete operations have no derivative", f.Smooth, d.Kind)
			case (d.Kind == DerivRule) != (d.Factors != nil):
				t.Errorf("Deriv.Kind %d with Factors set %v", d.Kind, d.Factors != nil)
			case d.Kind == DerivLinear && d.Coef == [2]float64{}:
				t.Error("DerivLinear with slopes 0")
			}
		})
	}
}

// checkFuncs checks that the reference functions set are exactly those of the dtypes.
func checkFuncs(t *testing.T, ds DtypeSet, float, int, bool bool) {
	t.Helper()
	if float != ds.Has(Float64) || int != ds.Has(Int64) || bool != ds.Has(Bool) {
		t.Errorf("Dtypes %v, but reference functions for floats %v, i64 %v, bool %v", ds, float, int, bool)
	}
}

// checkCommon checks the fields unary and binary entries share.
func checkCommon(t *testing.T, c Cost, s Smoothness, kinks, native string, floatResult bool) {
	t.Helper()
	if c < CostCheap || c > CostHeavy {
		t.Errorf("Cost %d unset or unknown", c)
	}
	if s < Smooth || s > Discrete {
		t.Errorf("Smooth %d unset or unknown", s)
	}
	if s != Smooth && kinks == "" {
		t.Errorf("Smooth %d without the convention at its kinks (Kinks)", s)
	}
	if (s == Discrete) == floatResult {
		t.Errorf("Smooth %d, float result %v: exactly the operations without a float result are discrete", s, floatResult)
	}
	if native == "" {
		t.Error("Native unset (NoNative for none)")
	}
}

// unaryIsZeroAtZero evaluates f at 0 of dtype d: exactly +0 (or false)?
func unaryIsZeroAtZero(f UnFacts, d Dtype) bool {
	switch d {
	case Int64:
		return f.Int(0) == 0
	case Bool:
		return !f.Bool(false)
	}
	return math.Float64bits(f.Float(0)) == 0
}

// binaryIsZeroAtZero evaluates f at (0, 0) of dtype d: exactly +0 (or false)?
func binaryIsZeroAtZero(f BinFacts, d Dtype) bool {
	switch {
	case d == Bool:
		return !f.Bool(false, false)
	case f.Compare && d == Int64:
		return !f.IntCmp(0, 0)
	case f.Compare:
		return !f.FloatCmp(0, 0)
	case d == Int64:
		return f.Int(0, 0) == 0
	}
	return math.Float64bits(f.Float(0, 0)) == 0
}

// TestOpFactsValues spot-checks reference values against the math package and hand
// derivations, the special values included.
func TestOpFactsValues(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	negZero := math.Copysign(0, -1)
	un := []struct {
		op      UnOp
		x, want float64
	}{
		{OpNeg, 0, negZero}, {OpAbs, negZero, 0}, {OpSign, negZero, negZero}, {OpSign, -3, -1},
		{OpSign, nan, nan}, {OpTanh, 0.5, math.Tanh(0.5)}, {OpSigmoid, 0, 0.5},
		{OpSigmoid, -800, 0}, {OpSigmoid, 800, 1}, {OpRecip, negZero, -inf}, {OpExpm1, 1e-10, math.Expm1(1e-10)},
		{OpStopGrad, 2.5, 2.5}, {OpAtan, 1, math.Pi / 4}, {OpAtan, -inf, -math.Pi / 2}, {OpAtan, negZero, negZero}, {OpErf, inf, 1}, {OpFloor, -0.5, -1}, {OpCeil, -0.5, negZero},
	}
	for _, c := range un {
		got := c.op.FloatFunc()(c.x)
		if c.op == OpTanh && math.Abs(got-c.want) <= 2*ulp(c.want) {
			continue // vmath's tanh: within 2 ulp of math.Tanh (internal/vmath's doc)
		}
		if math.Float64bits(got) != math.Float64bits(c.want) && !(math.IsNaN(got) && math.IsNaN(c.want)) {
			t.Errorf("%v %v = %v, want %v", c.op, c.x, got, c.want)
		}
	}
	bin := []struct {
		op         BinOp
		x, y, want float64
	}{
		{OpMax, nan, inf, nan}, {OpMax, inf, nan, nan}, {OpMin, nan, -inf, nan}, {OpMax, negZero, 0, 0},
		{OpMin, 0, negZero, negZero}, {OpPow, 0, 0, 1}, {OpAtan2, 0, 0, 0}, {OpAtan2, 1, -1, 3 * math.Pi / 4},
		{OpDiv, 1, negZero, -inf}, {OpSub, 0, 0, 0},
	}
	for _, c := range bin {
		got := c.op.FloatFunc()(c.x, c.y)
		if math.Float64bits(got) != math.Float64bits(c.want) && !(math.IsNaN(got) && math.IsNaN(c.want)) {
			t.Errorf("%v %v %v = %v, want %v", c.op, c.x, c.y, got, c.want)
		}
	}
	ints := []struct {
		op         BinOp
		x, y, want int64
	}{
		{OpQuot, -7, 2, -3}, {OpRem, -7, 2, -1}, {OpQuot, 5, 0, 0}, {OpRem, 5, 0, 0},
		{OpQuot, math.MinInt64, -1, math.MinInt64}, {OpMax, -1, 3, 3},
	}
	for _, c := range ints {
		if got := c.op.IntFunc()(c.x, c.y); got != c.want {
			t.Errorf("%v %d %d = %d, want %d", c.op, c.x, c.y, got, c.want)
		}
	}
	if got := OpNe.Facts().FloatCmp(nan, nan); !got {
		t.Error("NaN != NaN is false")
	}
	if got := OpLe.Facts().FloatCmp(nan, nan); got {
		t.Error("NaN <= NaN is true")
	}
}

// TestDtypeSetString checks the wording of dtype sets in error messages.
func TestDtypeSetString(t *testing.T) {
	for _, c := range []struct {
		s    DtypeSet
		want string
	}{{Floats, "f64 or f32"}, {Numeric, "f64, f32 or i64"}, {Bools, "bool"}, {AnyDtype, "f64, f32, i64 or bool"}, {NoDtype, "no dtype"}} {
		if got := c.s.String(); got != c.want {
			t.Errorf("%08b: %q, want %q", uint8(c.s), got, c.want)
		}
	}
}

// ulp is the spacing of float64 values at x.
func ulp(x float64) float64 { return math.Nextafter(math.Abs(x), math.Inf(1)) - math.Abs(x) }

// checkDtypes checks an operation's dtype set: not empty, and f64 and f32 together.
func checkDtypes(t *testing.T, ds DtypeSet) {
	t.Helper()
	if ds == NoDtype {
		t.Fatal("Dtypes unset")
	}
	if ds.Has(Float64) != ds.Has(Float32) {
		t.Errorf("Dtypes %v: f64 and f32 go together", ds)
	}
}

// TestConverse: for every comparison, a op b holds exactly when b (op.Converse()) a holds, by
// the table's own reference comparisons, over special values and integers; an operation that
// is not a comparison is its own converse.
func TestConverse(t *testing.T) {
	fs := []float64{0, math.Copysign(0, -1), 1, -1, 2.5, math.Inf(1), math.Inf(-1), math.NaN()}
	is := []int64{0, 1, -1, 7, math.MinInt64, math.MaxInt64}
	for _, op := range []BinOp{OpLt, OpLe, OpGt, OpGe, OpEq, OpNe} {
		c := op.Converse()
		if !c.IsComparison() {
			t.Fatalf("%v: converse %v is not a comparison", op, c)
		}
		for _, a := range fs {
			for _, b := range fs {
				if op.Facts().FloatCmp(a, b) != c.Facts().FloatCmp(b, a) {
					t.Errorf("%v %v %v is %v, but %v %v %v is not", a, op, b, op.Facts().FloatCmp(a, b), b, c, a)
				}
			}
		}
		for _, a := range is {
			for _, b := range is {
				if op.Facts().IntCmp(a, b) != c.Facts().IntCmp(b, a) {
					t.Errorf("%d %v %d: converse %v disagrees", a, op, b, c)
				}
			}
		}
	}
	if OpAdd.Converse() != OpAdd || OpSub.Converse() != OpSub {
		t.Errorf("a non-comparison's converse changed it")
	}
}
