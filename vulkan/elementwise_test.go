package vulkan

import (
	"errors"
	"fmt"
	"math"
	"math/rand"
	"testing"

	"github.com/bulkad/bulkad/core"
)

// The element-wise kernels are compared with package core's evaluator (core.Eval), the
// reference every executor of bulkad follows, within ULPBound(op) units in the last place.

// coreEval is core.Eval's result of op (core's name or symbol) applied element-wise to the
// operand columns xs (one or two, of equal length) in T's dtype.
func coreEval[T Float](tb testing.TB, op string, xs ...[]T) []T {
	tb.Helper()
	dt := core.Float32
	if is64[T]() {
		dt = core.Float64
	}
	ty := core.Type{Shape: core.Shape{len(xs[0])}, Dtype: dt}
	var b core.Builder
	vars := make([]*core.Var, len(xs))
	args := map[string]*core.Lit{}
	for k, x := range xs {
		name := fmt.Sprintf("x%d", k)
		vars[k] = b.Var(name, ty)
		f := make([]float64, len(x))
		for i, v := range x {
			f[i] = float64(v)
		}
		lit, err := core.NewLitF(ty, f)
		if err != nil {
			tb.Fatal(err)
		}
		args[name] = lit
	}
	var body core.Term
	if len(xs) == 1 {
		u, ok := core.ParseUnOp(op)
		if !ok {
			tb.Fatalf("core has no unary op %q", op)
		}
		body = b.Unary(u, vars[0])
	} else {
		o, ok := core.ParseBinOp(op)
		if !ok {
			tb.Fatalf("core has no binary op %q", op)
		}
		body = b.Binary(o, vars[0], vars[1])
	}
	if err := b.Err(); err != nil {
		tb.Fatal(err)
	}
	p, err := core.NewProgram(vars, body)
	if err != nil {
		tb.Fatal(err)
	}
	lit, err := core.Eval(p, args)
	if err != nil {
		tb.Fatalf("core.Eval of %s: %v", op, err)
	}
	out := make([]T, len(lit.F))
	for i, v := range lit.F {
		out[i] = T(v)
	}
	return out
}

// ulpDist is the number of representable T values between two finite values (through zero
// for opposite signs; -0 and +0 are 1 apart).
func ulpDist[T Float](a, b T) int64 {
	ord := func(x T) int64 {
		if is64[T]() {
			i := int64(math.Float64bits(float64(x)))
			if i < 0 {
				i = math.MinInt64 - i
			}
			return i
		}
		i := int64(int32(math.Float32bits(float32(x))))
		if i < 0 {
			i = math.MinInt32 - i
		}
		return i
	}
	d := ord(a) - ord(b)
	if d < 0 {
		return -d
	}
	return d
}

// agrees reports whether got is within bound ulp of want, with special results exact: want
// ±0, ±Inf or NaN (any NaN) and got ±Inf need the same value and sign.
func agrees[T Float](got, want T, bound int) bool {
	g, w := float64(got), float64(want)
	if math.IsNaN(g) || math.IsNaN(w) {
		return math.IsNaN(g) && math.IsNaN(w)
	}
	if g == w && math.Signbit(g) == math.Signbit(w) {
		return true
	}
	if w == 0 || math.IsInf(w, 0) || math.IsInf(g, 0) {
		return false
	}
	return ulpDist(got, want) <= int64(bound)
}

// specialValues are ±0, ±smallest subnormal, ±smallest normal, ±0.5, ±1, ±1.5, ±2.5, ±25,
// ±1e30, ±2^63, ±largest, ±Inf, NaN and NaN with the sign bit.
func specialValues[T Float]() []T {
	var tiny, norm, big float64 = math.SmallestNonzeroFloat32, 0x1p-126, math.MaxFloat32
	if is64[T]() {
		tiny, norm, big = math.SmallestNonzeroFloat64, 0x1p-1022, math.MaxFloat64
	}
	nan := math.NaN()
	pos := []float64{0, tiny, norm, 0.5, 1, 1.5, 2.5, 25, 1e30, 0x1p63, big, math.Inf(1), nan}
	var out []T
	for _, v := range pos {
		out = append(out, T(v), T(-v))
	}
	out[1] = T(math.Copysign(0, -1)) // -0.0 in Go source is +0
	return out
}

// wideValues are n values of magnitude log-uniform over T's whole finite range (subnormals
// included), of both signs.
func wideValues[T Float](rng *rand.Rand, n int) []T {
	lo, hi := -149.0, 128.0
	if is64[T]() {
		lo, hi = -1074, 1024
	}
	out := make([]T, n)
	for i := range out {
		v := math.Exp2(lo + (hi-lo)*rng.Float64())
		if rng.Intn(2) == 0 {
			v = -v
		}
		out[i] = T(v)
	}
	return out
}

// checkAgainstCore compares got with core.Eval's result of op on xs and reports up to three
// operands that disagree beyond ULPBound(op) (0 for float64); it returns the worst distance
// among finite results.
func checkAgainstCore[T Float](t *testing.T, what, op string, got []T, xs ...[]T) int64 {
	t.Helper()
	want := coreEval(t, op, xs...)
	bound := ULPBound(op)
	if is64[T]() {
		bound = 0
	}
	bad, worst := 0, int64(0)
	for i := range got {
		if !agrees(got[i], want[i], bound) {
			if bad < 3 {
				args := make([]any, len(xs))
				for k := range xs {
					args[k] = xs[k][i]
				}
				t.Errorf("%s %s %s%v = %v, core.Eval gives %v (bound %d ulp)", dtypeName[T](), what, op, args, got[i], want[i], bound)
			}
			bad++
		} else if !math.IsInf(float64(want[i]), 0) && !math.IsNaN(float64(want[i])) {
			worst = max(worst, ulpDist(got[i], want[i]))
		}
	}
	if bad > 0 {
		t.Errorf("%s %s %s: %d of %d results differ from core.Eval", dtypeName[T](), what, op, bad, len(got))
	}
	return worst
}

// unaryInputs are the special values, values spread over the whole range and n values in the
// op's usual domain.
func unaryInputs[T Float](op string, rng *rand.Rand, n int) []T {
	x := append(specialValues[T](), wideValues[T](rng, n)...)
	lo, hi := unaryDomain(op)
	return append(x, uniform[T](rng, n, lo, hi)...)
}

// ran reports whether d ran the kind op ("unary" or "binary") that returned err: an op
// Supports declines must fail with ErrUnsupported, and any other error fails the test.
func ran[T Float](t *testing.T, d *Device, kind, op string, err error) bool {
	t.Helper()
	if !Supports[T](d, kind, op) {
		if !errors.Is(err, ErrUnsupported) {
			t.Errorf("%s %s %s: declined by Supports, but err = %v, want ErrUnsupported", dtypeName[T](), kind, op, err)
		}
		return false
	}
	if err != nil {
		t.Fatalf("%s %s %s: %v", dtypeName[T](), kind, op, err)
	}
	return true
}

func testUnaryCore[T Float](t *testing.T, d *Device) {
	for _, op := range UnaryOps() {
		rng := rand.New(rand.NewSource(int64(len(op))))
		x := unaryInputs[T](op, rng, 5000)
		dst := make([]T, len(x))
		err := Unary(d, op, dst, x)
		if !ran[T](t, d, "unary", op, err) {
			continue
		}
		worst := checkAgainstCore(t, "unary", op, dst, x)
		t.Logf("%s %s: worst %d ulp (bound %d) on %d operands", dtypeName[T](), op, worst, ULPBound(op), len(x))
	}
}

// TestUnaryCore compares Unary with core.Eval on both float types: special values and values
// over the whole range.
func TestUnaryCore(t *testing.T) {
	d := device(t)
	testUnaryCore[float32](t, d)
	if d.SupportsFloat64() {
		testUnaryCore[float64](t, d)
	}
}

// binaryInputs are every pair of special values, then n pairs over the whole range and n in
// the op's usual domain (pow: x > 0, some y integers).
func binaryInputs[T Float](op string, rng *rand.Rand, n int) (x, y []T) {
	s := specialValues[T]()
	for _, a := range s {
		for _, b := range s {
			x, y = append(x, a), append(y, b)
		}
	}
	x, y = append(x, wideValues[T](rng, n)...), append(y, wideValues[T](rng, n)...)
	xlo, ylo := -10.0, -10.0
	if op == "pow" {
		xlo, ylo = 0.01, -5
		// negative bases with integer exponents, and exponents that reach the ends of the range
		for range n {
			x = append(x, T(-math.Exp2(-8+16*rng.Float64())))
			y = append(y, T(rng.Intn(41)-20))
			x = append(x, T(math.Exp2(-4+8*rng.Float64())))
			y = append(y, T(-300+600*rng.Float64()))
		}
	}
	return append(x, uniform[T](rng, n, xlo, 10)...), append(y, uniform[T](rng, n, ylo, 5)...)
}

func testBinaryCore[T Float](t *testing.T, d *Device) {
	for _, op := range BinaryOps() {
		rng := rand.New(rand.NewSource(int64(len(op) + 100)))
		x, y := binaryInputs[T](op, rng, 5000)
		dst := make([]T, len(x))
		err := Binary(d, op, dst, x, y)
		if !ran[T](t, d, "binary", op, err) {
			continue
		}
		worst := checkAgainstCore(t, "binary", op, dst, x, y)
		t.Logf("%s %s: worst %d ulp (bound %d) on %d operand pairs", dtypeName[T](), op, worst, ULPBound(op), len(x))
		// the same pairs with y read cyclically: x holds n copies of a column, y one
		if len(x) > 24*24 {
			x, y = x[:24*24], y[:24]
			dst = dst[:len(x)]
			if err := Binary(d, op, dst, x, y); err != nil {
				t.Fatalf("%s binary %s (cyclic): %v", dtypeName[T](), op, err)
			}
			yy := make([]T, len(x))
			for i := range yy {
				yy[i] = y[i%len(y)]
			}
			checkAgainstCore(t, "binary (cyclic)", op, dst, x, yy)
		}
	}
}

// TestBinaryCore compares Binary with core.Eval on both float types: every pair of special
// values, pairs over the whole range, in full and cyclic layouts.
func TestBinaryCore(t *testing.T) {
	d := device(t)
	testBinaryCore[float32](t, d)
	if d.SupportsFloat64() {
		testBinaryCore[float64](t, d)
	}
}

// TestElementwiseSizes runs exp (float32) and + over sizes from 1 to beyond one dispatch's
// workgroups (the grid-stride loop) against core.Eval.
func TestElementwiseSizes(t *testing.T) {
	d := device(t)
	if !d.Info().Float32Subnormals {
		if err := Unary(d, "exp", make([]float32, 3), make([]float32, 3)); !errors.Is(err, ErrUnsupported) {
			t.Errorf("float32 exp on a device that may flush subnormals: err = %v, want ErrUnsupported", err)
		}
	}
	eitherType(t, d, func() { elementwiseSizes[float32](t, d) }, func() { elementwiseSizes[float64](t, d) })
}

func elementwiseSizes[T Float](t *testing.T, d *Device) {
	for _, n := range []int{1, 7, 1000, 1000003} {
		rng := rand.New(rand.NewSource(int64(n)))
		x := uniform[T](rng, n, -87, 88)
		y := uniform[T](rng, n, -10, 10)
		dst := make([]T, n)
		if !is64[T]() {
			if err := Unary(d, "exp", dst, x); err != nil {
				t.Fatalf("exp n=%d: %v", n, err)
			}
			checkAgainstCore(t, fmt.Sprintf("unary (n=%d)", n), "exp", dst, x)
		}
		if err := Binary(d, "+", dst, x, y); err != nil {
			t.Fatalf("+ n=%d: %v", n, err)
		}
		checkAgainstCore(t, fmt.Sprintf("binary (n=%d)", n), "+", dst, x, y)
	}
}
