package core_test

import (
	"fmt"
	"math"
	"math/rand"
	"strings"
	"testing"

	"github.com/bulkad/bulkad/core"
	"github.com/bulkad/bulkad/core/coretest"
	"github.com/bulkad/bulkad/core/tensors"
	"gorgonia.org/tensor"
)

func f64s(sh ...int) core.Type { return core.Type{Shape: sh, Dtype: core.Float64} }
func f32s(sh ...int) core.Type { return core.Type{Shape: sh, Dtype: core.Float32} }
func i64s(sh ...int) core.Type { return core.Type{Shape: sh, Dtype: core.Int64} }
func bools(sh ...int) core.Type {
	return core.Type{Shape: sh, Dtype: core.Bool}
}

// TestParseGolden parses hand-written programs and compares their printed form with the
// expected canonical text (written by hand from the syntax in doc.go).
func TestParseGolden(t *testing.T) {
	cases := []struct{ src, want string }{
		// the forms listed in issue 2
		{`fn (a : [5] f64, b : [5] f64, k : [] i64) => a`, `fn (a : [5] f64, b : [5] f64, k : [] i64) => a`},
		{`fn () => let x = 1.5 in x`, `fn () => let x = 1.5 in x`},
		{`fn (b : [] bool) => cond b 1.0 2.5`, `fn (b : [] bool) => cond b 1.0 2.5`},
		{`fn () => 2`, `fn () => 2`},
		{`fn () => true`, `fn () => true`},
		{`fn () => false`, `fn () => false`},
		{`fn () => 1.5`, `fn () => 1.5`},
		{`fn () => 1e3`, `fn () => 1000.0`},
		{`fn () => 2.5E-7`, `fn () => 2.5e-07`},
		{`fn () => lit [2,3] f64 [1,2,3,4,5,6]`, `fn () => lit [2,3] f64 [1.0,2.0,3.0,4.0,5.0,6.0]`},
		{`fn () => lit [3] f32 [-1, inf, -inf]`, `fn () => lit [3] f32 [-1.0,inf,-inf]`},
		{`fn () => lit [2] f64 [nan, -0.5]`, `fn () => lit [2] f64 [nan,-0.5]`},
		{`fn () => lit [2] i64 [-3, 4]`, `fn () => lit [2] i64 [-3,4]`},
		{`fn () => lit [2,1] bool [true, false]`, `fn () => lit [2,1] bool [true,false]`},
		{`fn () => lit [0] f64 []`, `fn () => lit [0] f64 []`},
		{`fn () => lit [] f32 [2]`, `fn () => lit [] f32 [2.0]`},
		{`fn () => lit [] i64 [7]`, `fn () => 7`},
		{`fn (x : [3] f64, y : [3] f64) => x + y - x * y / x`, `fn (x : [3] f64, y : [3] f64) => x + y - x * y / x`},
		{`fn (x : [3] f64, y : [3] f64) => (x + y) * (x - y)`, `fn (x : [3] f64, y : [3] f64) => (x + y) * (x - y)`},
		{`fn (x : [3] f64, y : [3] f64) => x - (y - x)`, `fn (x : [3] f64, y : [3] f64) => x - (y - x)`},
		{`fn (x : [3] f64, y : [3] f64) => ((x - y) - x)`, `fn (x : [3] f64, y : [3] f64) => x - y - x`},
		{`fn (x : [3] f64) => -x`, `fn (x : [3] f64) => neg x`},
		{`fn (x : [3] f64) => - -x`, `fn (x : [3] f64) => neg (neg x)`},
		{`fn (x : [3] f64) => -x * x`, `fn (x : [3] f64) => neg x * x`},
		{`fn () => -1.5`, `fn () => (-1.5)`},
		{`fn () => (-1.5) * 2.0`, `fn () => (-1.5) * 2.0`},
		{`fn () => - 3`, `fn () => (-3)`},
		{`fn () => -inf`, `fn () => (-inf)`},
		{`fn () => inf + nan`, `fn () => inf + nan`},
		{`fn () => -9223372036854775808`, `fn () => (-9223372036854775808)`},
		{`fn (x : [2] f64, y : [2] f64) => x < y`, `fn (x : [2] f64, y : [2] f64) => x < y`},
		{`fn (x : [] i64, y : [] i64) => x <= y && x >= y || x > y && x == y || x != y`,
			`fn (x : [] i64, y : [] i64) => x <= y && x >= y || x > y && x == y || x != y`},
		{`fn (a : [] bool, b : [] bool) => a && (b || a)`, `fn (a : [] bool, b : [] bool) => a && (b || a)`},
		{`fn (a : [] bool, b : [] bool) => (a == b) == a`, `fn (a : [] bool, b : [] bool) => (a == b) == a`},
		{`fn (x : [] i64) => x + 1 < 3 * x`, `fn (x : [] i64) => x + 1 < 3 * x`},
		{`fn (x : [2] f64) => exp (log (sqrt (sin (cos (tan (tanh (sigmoid (abs (sign (recip x))))))))))`,
			`fn (x : [2] f64) => exp (log (sqrt (sin (cos (tan (tanh (sigmoid (abs (sign (recip x))))))))))`},
		{`fn (x : [2] f32) => floor (ceil (log1p (expm1 (neg x))))`, `fn (x : [2] f32) => floor (ceil (log1p (expm1 (neg x))))`},
		{`fn (b : [2] bool) => not b`, `fn (b : [2] bool) => not b`},
		{`fn (x : [2] f64, y : [2] f64) => max x y + min x y + pow x y + atan2 x y`,
			`fn (x : [2] f64, y : [2] f64) => max x y + min x y + pow x y + atan2 x y`},
		{`fn (n : [] i64) => quot n 2 + rem n (-3)`, `fn (n : [] i64) => quot n 2 + rem n (-3)`},
		{`fn (x : [2] f64) => cast f32 x`, `fn (x : [2] f64) => cast f32 x`},
		{`fn (x : [2] f64) => cast i64 (cast bool x)`, `fn (x : [2] f64) => cast i64 (cast bool x)`},
		{`fn (x : [2,3] f64) => index x [1, 2]`, `fn (x : [2,3] f64) => index x [1, 2]`},
		{`fn (x : [2,3] f64) => x ! [1, 2]`, `fn (x : [2,3] f64) => index x [1, 2]`},
		{`fn (x : [2,3] f64) => x ! [1] ! [0]`, `fn (x : [2,3] f64) => index (index x [1]) [0]`},
		{`fn (x : [2,3] f64) => exp x ! [1]`, `fn (x : [2,3] f64) => index (exp x) [1]`},
		{`fn (x : [2,3] f64) => -x ! [1]`, `fn (x : [2,3] f64) => neg (index x [1])`},
		{`fn (x : [2,3] f64) => index x []`, `fn (x : [2,3] f64) => index x []`},
		{`fn (x : [2,3] f64) => sumOuter x`, `fn (x : [2,3] f64) => sumOuter x`},
		{`fn (x : [2,3] f64) => argmaxOuter x`, `fn (x : [2,3] f64) => argmaxOuter x`},
		{`fn (x : [2,3] f64) => replicate 3 x`, `fn (x : [2,3] f64) => replicate 3 x`},
		{`fn (x : [2,3] f64) => tr [1,0] x`, `fn (x : [2,3] f64) => tr [1,0] x`},
		{`fn (x : [2,3] f64) => reshape [3, 2] x`, `fn (x : [2,3] f64) => reshape [3,2] x`},
		{`fn () => iota 5`, `fn () => iota 5`},
		{`fn (x : [3,2] f64) => gather [4,2] x (\[i] -> [quot i 2])`, `fn (x : [3,2] f64) => gather [4,2] x (\[i] -> [quot i 2])`},
		{`fn (x : [3,2] f64) => gather [4,3] x (\[i,j] -> [j, i])`, `fn (x : [3,2] f64) => gather [4,3] x (\[i, j] -> [j, i])`},
		{`fn (x : [3,2] f64) => gather [4] x (\i -> [i, 1])`, `fn (x : [3,2] f64) => gather [4] x (\[i] -> [i, 1])`},
		{`fn (t : [9] f64) => scatter [6] t (\[i] -> [quot i 2])`, `fn (t : [9] f64) => scatter [6] t (\[i] -> [quot i 2])`},
		{`fn (t : [9] f64) => scatter [9] t (\[] -> [])`, `fn (t : [9] f64) => scatter [9] t (\[] -> [])`},
		{`fn (x : [] f64, y : [] f64) => [x, y, x]`, `fn (x : [] f64, y : [] f64) => [x, y, x]`},
		{`fn () => [[1, 2], [3, 4]]`, `fn () => [[1, 2], [3, 4]]`},
		{`fn () => build1 5 (\i -> i * i)`, `fn () => build1 5 (\i -> i * i)`},
		{`fn () => build1 5 (\[i] -> i)`, `fn () => build1 5 (\i -> i)`},
		{`fn () => build [2,3] (\[i,j] -> i + j)`, `fn () => build1 2 (\i -> build1 3 (\j -> i + j))`},
		{`fn (x : [2,3] f64, y : [3,4] f64) => matmul x y`, `fn (x : [2,3] f64, y : [3,4] f64) => matmul x y`},
		{`fn (x : [5,2,3] f64, y : [5,4,3] f64) => matmul x (tr [0,2,1] y)`, `fn (x : [5,2,3] f64, y : [5,4,3] f64) => matmul x (tr [0,2,1] y)`},
		{`fn (x : [3] f64) => share 7 (x + x) * share 7`, `fn (x : [3] f64) => share 7 (x + x) * share 7`},
		{`fn (x : [3] f64) => (x, sumOuter x)`, `fn (x : [3] f64) => (x, sumOuter x)`},
		{`fn (x : [3] f64) => (x,)`, `fn (x : [3] f64) => (x,)`},
		{`fn (x : [3] f64) => ()`, `fn (x : [3] f64) => ()`},
		{`fn (x : [3] f64) => let y = x in (y, x)`, `fn (x : [3] f64) => let y = x in (y, x)`},
		{`fn (x : [3] f64) => (x)`, `fn (x : [3] f64) => x`},
		{`fn (x : [3] f64) => ((((x))))`, `fn (x : [3] f64) => x`},
		// sugar: broadcasting of rank-0 operands
		{`fn (x : [5] f64) => sumOuter (x * 2.0)`, `fn (x : [5] f64) => sumOuter (x * replicate 5 2.0)`},
		{`fn (x : [2,3] f64) => 1.0 + x`, `fn (x : [2,3] f64) => replicate 2 (replicate 3 1.0) + x`},
		{`fn (x : [2] i64) => x < 0`, `fn (x : [2] i64) => x < replicate 2 0`},
		{`fn (x : [2] f64) => max 0.0 x`, `fn (x : [2] f64) => max (replicate 2 0.0) x`},
		// layout: newlines and tabs
		{"fn (x : [3] f64)\n  =>\tlet y = x\n  in y", `fn (x : [3] f64) => let y = x in y`},
		// shadowing
		{`fn (x : [3] f64) => let x = sumOuter x in x * x`, `fn (x : [3] f64) => let x = sumOuter x in x * x`},
		{`fn () => build1 2 (\i -> build1 3 (\i -> i))`, `fn () => build1 2 (\i -> build1 3 (\i -> i))`},
		{`fn (x : [3] f64) => let y = let z = x in z in y`, `fn (x : [3] f64) => let y = let z = x in z in y`},
		{`fn (x' : [3] f64, _y2 : [3] f64) => x' + _y2`, `fn (x' : [3] f64, _y2 : [3] f64) => x' + _y2`},
	}
	for _, c := range cases {
		p, err := core.ParseProgram(c.src)
		if err != nil {
			t.Errorf("ParseProgram(%q): %v", c.src, err)
			continue
		}
		if got := p.String(); got != c.want {
			t.Errorf("ParseProgram(%q).String()\n got %s\nwant %s", c.src, got, c.want)
		}
		q, err := core.ParseProgram(p.String())
		if err != nil || !core.ProgramEqual(p, q) {
			t.Errorf("round trip of %q failed: %v", c.src, err)
		}
	}
}

// TestParseLiteralTyping checks the dtypes that literals take from their context, comparing
// with terms built directly by the constructors.
func TestParseLiteralTyping(t *testing.T) {
	x5f32 := mustVar(t, "x", f32s(5))
	s32 := mustVar(t, "s", f32s())
	b := mustVar(t, "b", bools())
	var bd core.Builder
	rep := func(n int, x core.Term) core.Term { return bd.Replicate(n, x) }
	cases := []struct {
		src  string
		env  map[string]core.Type
		want core.Term
	}{
		{`x * 2.0`, map[string]core.Type{"x": f32s(5)}, bd.Mul(x5f32, rep(5, core.ScalarF(core.Float32, 2)))},
		{`2.0 * x`, map[string]core.Type{"x": f32s(5)}, bd.Mul(rep(5, core.ScalarF(core.Float32, 2)), x5f32)},
		{`s + 0.1`, map[string]core.Type{"s": f32s()}, bd.Add(s32, core.ScalarF(core.Float32, 0.1))},
		{`0.1 - -0.25 * s`, map[string]core.Type{"s": f32s()},
			bd.Sub(core.ScalarF(core.Float32, 0.1), bd.Mul(core.ScalarF(core.Float32, -0.25), s32))},
		{`(1.0 + 2.0) * s`, map[string]core.Type{"s": f32s()},
			bd.Mul(bd.Add(core.ScalarF(core.Float32, 1), core.ScalarF(core.Float32, 2)), s32)},
		{`exp 1.0 * s`, map[string]core.Type{"s": f32s()},
			bd.Mul(bd.Unary(core.OpExp, core.ScalarF(core.Float32, 1)), s32)},
		{`s < 0.5`, map[string]core.Type{"s": f32s()}, bd.Binary(core.OpLt, s32, core.ScalarF(core.Float32, 0.5))},
		{`cond b 1.5 s`, map[string]core.Type{"b": bools(), "s": f32s()}, bd.Cond(b, core.ScalarF(core.Float32, 1.5), s32)},
		{`cond b s 1.5`, map[string]core.Type{"b": bools(), "s": f32s()}, bd.Cond(b, s32, core.ScalarF(core.Float32, 1.5))},
		{`[1.0, s, -2.0]`, map[string]core.Type{"s": f32s()}, bd.FromVector(core.ScalarF(core.Float32, 1), s32, core.ScalarF(core.Float32, -2))},
		{`max 0.0 s`, map[string]core.Type{"s": f32s()}, bd.Binary(core.OpMax, core.ScalarF(core.Float32, 0), s32)},
		{`min s 1e30`, map[string]core.Type{"s": f32s()}, bd.Binary(core.OpMin, s32, core.ScalarF(core.Float32, 1e30))},
		{`pow 2.0 s`, map[string]core.Type{"s": f32s()}, bd.Binary(core.OpPow, core.ScalarF(core.Float32, 2), s32)},
		{`atan2 s 3.0`, map[string]core.Type{"s": f32s()}, bd.Binary(core.OpAtan2, s32, core.ScalarF(core.Float32, 3))},
		{`x + replicate 5 1.0`, map[string]core.Type{"x": f32s(5)}, bd.Add(x5f32, rep(5, core.ScalarF(core.Float32, 1)))},
		{`x + build1 5 (\i -> 1.0)`, map[string]core.Type{"x": f32s(5)},
			bd.Add(x5f32, bd.Build1(5, mustVar(t, "i", i64s()), core.ScalarF(core.Float32, 1)))},
		// nothing says otherwise: f64
		{`1.5`, nil, core.ScalarF(core.Float64, 1.5)},
		{`let y = 1.5 in y`, nil, bd.Let(mustVar(t, "y", f64s()), core.ScalarF(core.Float64, 1.5), mustVar(t, "y", f64s()))},
		{`cast f32 1.5`, nil, bd.Cast(core.Float32, core.ScalarF(core.Float64, 1.5))},
		{`1.0 < 2.0`, nil, bd.Binary(core.OpLt, core.ScalarF(core.Float64, 1), core.ScalarF(core.Float64, 2))},
		{`inf`, nil, core.ScalarF(core.Float64, math.Inf(1))},
		// integers are i64
		{`3`, nil, core.ScalarI(3)},
		{`(-3)`, nil, core.ScalarI(-3)},
		{`iota 3 * 2`, nil, bd.Mul(bd.Iota(3), rep(3, core.ScalarI(2)))},
	}
	if err := bd.Err(); err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		got, err := core.Parse(c.src, c.env)
		if err != nil {
			t.Errorf("Parse(%q): %v", c.src, err)
			continue
		}
		if !core.Equal(got, c.want) {
			t.Errorf("Parse(%q) = %v : %v, want %v : %v", c.src, got, got.Type(), c.want, c.want.Type())
		}
	}
	// f32 literal values are parsed as float32 (no double rounding through float64):
	// 1.00000005960464477539 is halfway between two float32 neighbours only in float64's view.
	got, err := core.Parse(`s + 0.1`, map[string]core.Type{"s": f32s()})
	if err != nil {
		t.Fatal(err)
	}
	if l := got.(*core.Binary).Y.(*core.Lit); l.F[0] != float64(float32(0.1)) {
		t.Errorf("f32 literal 0.1 = %v, want %v", l.F[0], float64(float32(0.1)))
	}
}

func mustVar(t testing.TB, name string, ty core.Type) *core.Var {
	t.Helper()
	v, err := core.NewVar(name, ty)
	return must(t, v, err)
}

// TestParseErrors checks positions and expected-token messages for malformed input.
func TestParseErrors(t *testing.T) {
	cases := []struct{ src, want string }{
		{``, `core: parse: line 1:1: expected "fn", found end of input`},
		{`fn x`, `core: parse: line 1:4: expected "(", found "x"`},
		{`fn (x [3] f64) => x`, `core: parse: line 1:7: expected ":", found "["`},
		{`fn (x : [3 f64) => x`, `core: parse: line 1:12: expected "," or "]", found "f64"`},
		{`fn (x : [3] f16) => x`, `core: parse: line 1:13: expected dtype (f64, f32, i64 or bool), found "f16"`},
		{`fn (x : [3] f64 y : [] f64) => x`, `core: parse: line 1:17: expected "," or ")", found "y"`},
		{`fn (x : [3] f64) x`, `core: parse: line 1:18: expected "=>", found "x"`},
		{`fn (x : [3] f64) =>`, `core: parse: line 1:20: expected term, found end of input`},
		{`fn (exp : [3] f64) => exp`, `core: parse: line 1:5: expected variable name, found "exp"`},
		{`fn (x : [3] f64, x : [3] f64) => x`, `core: parse: line 1:18: parameter x declared twice`},
		{"fn (x : [3] f64) =>\n  x + \n  * x", `core: parse: line 3:3: expected term, found "*"`},
		{`fn (x : [3] f64) => x y`, `core: parse: line 1:23: expected an infix operator or end of input, found "y"`},
		{`fn (x : [3] f64) => (x + x`, `core: parse: line 1:27: expected ")", found end of input`},
		{`fn (x : [3] f64) => exp exp x`, `core: parse: line 1:25: expected an atomic argument (parenthesise operations used as arguments), found "exp"`},
		{`fn (x : [3] f64) => let in = x in x`, `core: parse: line 1:25: expected variable name, found "in"`},
		{`fn (x : [3] f64) => let y x in x`, `core: parse: line 1:27: expected "=", found "x"`},
		{`fn (x : [3] f64) => let y = x x`, `core: parse: line 1:31: expected "in", found "x"`},
		{`fn (x : [] f64) => x < x < x`, `core: parse: line 1:26: expected the end of the comparison (comparisons do not associate; use parentheses), found "<"`},
		{`fn (x : [] f64) => x + (x, x)`, `core: parse: line 1:26: expected ")" (a tuple may only be the whole result), found ","`},
		{`fn (x : [] f64) => (x, x) + x`, `core: parse: line 1:22: expected ")" (a tuple may only be the whole result), found ","`},
		{`fn (x : [2] f64) => gather [2] x \[i] -> [i]`, `core: parse: line 1:34: expected "(", found "\\"`},
		{`fn (x : [2] f64) => gather [2] x (\[i] -> i)`, `core: parse: line 1:43: expected "[", found "i"`},
		{`fn (x : [2] f64) => gather [2] x (\[i] => [i])`, `core: parse: line 1:40: expected "->", found "=>"`},
		{`fn () => build [2,3] (\i -> i)`, `core: parse: line 1:23: build: shape [2 3] needs 2 index variables, found 1`},
		{`fn () => build1 (-2) (\i -> i)`, `core: parse: line 1:17: expected non-negative integer, found "("`},
		{`fn () => replicate x 1.0`, `core: parse: line 1:20: expected non-negative integer, found "x"`},
		{`fn () => lit [2] i64 [1, 2.5]`, `core: parse: line 1:26: expected i64 value, found "2.5"`},
		{`fn () => lit [2] bool [1, 0]`, `core: parse: line 1:24: expected bool value, found "1"`},
		{`fn () => lit [2] f64 [1 2]`, `core: parse: line 1:25: expected "," or "]", found "2"`},
		{`fn () => share 3`, `core: parse: line 1:17: expected term, found end of input`},
		{`fn () => 1.5 @ 2`, `core: parse: line 1:14: expected a term, operator or punctuation, found unexpected character '@'`},
		{`fn () => 1 & 2`, `core: parse: line 1:12: expected a term, operator or punctuation, found unexpected character '&'`},
		{`fn () => 99999999999999999999`, `core: parse: line 1:10: integer literal 99999999999999999999 out of the i64 range`},
		{`fn () => -9223372036854775809`, `core: parse: line 1:11: integer literal -9223372036854775809 out of the i64 range`},
		{`fn () => 1e400`, `core: parse: line 1:10: floating literal 1e400 out of range`},
		{`fn () => lit [1] f32 [1e39]`, `core: parse: line 1:23: floating literal 1e39 out of the f32 range`},
		{`fn () => lit [4294967296,4294967296] f64 []`, `core: parse: line 1:14: shape [4294967296 4294967296] has too many elements`},
		{`fn () => replicate 4294967296 (replicate 4294967296 1.0)`, `core: parse: line 1:10: result type [4294967296,4294967296] f64 needs 8.0 EiB, more than can be addressed (256.0 TiB)`},
		{`fn (x : [3] f64) => index x [0`, `core: parse: line 1:31: expected "," or "]", found end of input`},
		{`fn (x : [3] f64) => x ! 0`, `core: parse: line 1:25: expected "[", found "0"`},
		{`fn (x : [3] f64) => cast f16 x`, `core: parse: line 1:26: expected dtype (f64, f32, i64 or bool), found "f16"`},
		{"fn (x : [3] f64) =>\n\tlet y = x in\n\tfn", `core: parse: line 3:2: expected term, found "fn"`},
	}
	for _, c := range cases {
		wantParseError(t, c.src, c.want)
	}
}

// TestParseTypeErrors checks that type errors carry the position of the construct and the
// constructor's message.
func TestParseTypeErrors(t *testing.T) {
	cases := []struct{ src, want string }{
		{`fn (x : [3,4] f64, y : [4,3] f64) => x + y`, `core: parse: line 1:40: core: add: operand shapes [3 4] and [4 3] differ`},
		{"fn (x : [3] f64,\n    y : [3] f32) =>\n  exp (x * y)", `core: parse: line 3:10: core: mul: operand dtypes f64 and f32 differ`},
		{`fn (x : [3] f64) => x * 2`, `core: parse: line 1:23: core: mul: operand dtypes f64 and i64 differ`},
		{`fn (x : [3] f64) => y`, `core: parse: line 1:21: variable y is not bound`},
		{`fn (x : [3] f64) => let y = x in y + z`, `core: parse: line 1:38: variable z is not bound`},
		{`fn (x : [3] f64) => (let y = x in y) + y`, `core: parse: line 1:40: variable y is not bound`},
		{`fn (x : [3] f64) => build1 3 (\i -> x ! [i]) + x ! [i]`, `core: parse: line 1:53: variable i is not bound`},
		{`fn (x : [3] i64) => not x`, `core: parse: line 1:21: core: not: operand dtype i64 not supported (want bool)`},
		{`fn (x : [3] f64) => cond x x x`, `core: parse: line 1:21: core: cond: condition has type [3] f64, want [] bool`},
		{`fn (x : [3] f64) => sumOuter (sumOuter x)`, `core: parse: line 1:21: core: sumOuter: operand is a scalar (shape []), want rank ≥ 1`},
		{`fn (x : [3] f64) => index x [0, 1]`, `core: parse: line 1:21: core: index: 2 indices into an array of shape [3]`},
		{`fn (x : [3] f64) => x ! [1.0]`, `core: parse: line 1:23: core: index: index component 0 has type [] f64, want [] i64`},
		{`fn (x : [3,3] f64) => tr [1,1] x`, `core: parse: line 1:23: core: tr: [1 1] is not a permutation of 0..1`},
		{`fn (x : [3] f64) => reshape [2,2] x`, `core: parse: line 1:21: core: reshape: cannot reshape [3] (3 elements) to [2 2] (4 elements)`},
		{`fn (x : [3] f64) => gather [2,2] x (\[i] -> [i])`, `core: parse: line 1:21: core: gather: result shape [2 2] with 1 index variables needs inner dimensions [2] of the operand shape [3]`},
		{`fn (x : [3] f64) => gather [2] x (\[i, i] -> [i])`, `core: parse: line 1:21: core: index function: variable i bound twice`},
		{`fn (x : [3] bool) => scatter [3] x (\[i] -> [i])`, `core: parse: line 1:22: core: scatter: operand dtype bool not supported, want f64, f32 or i64`},
		{`fn (x : [3] f64) => [x, sumOuter x]`, `core: parse: line 1:21: core: fromVector: element 1 has type [] f64, element 0 has [3] f64`},
		{`fn () => []`, `core: parse: line 1:10: core: fromVector: no elements (need at least one to know the type)`},
		{`fn (x : [3] f64) => matmul x x`, `core: parse: line 1:21: core: matmul: operand shapes [3] and [3], want two matrices or two stacks of matrices of one rank`},
		{`fn (x : [2,3,4] f64, y : [3,4,5] f64) => matmul x y`, `core: parse: line 1:42: core: matmul: operand shapes [2 3 4] and [3 4 5] have different batch dimensions [2] and [3]`},
		{`fn () => lit [2,2] f64 [1,2,3]`, `core: parse: line 1:10: core: lit: shape [2 2] needs 4 values, got 3`},
		{`fn (x : [3] f64) => cond true x 1`, `core: parse: line 1:21: core: cond: branch types [3] f64 and [] i64 differ`},
		{`fn (n : [] i64) => quot n 2.0`, `core: parse: line 1:20: core: quot: operand dtypes i64 and f64 differ`},
		{`fn (x : [] f64) => quot x x`, `core: parse: line 1:20: core: quot: operand dtype f64 not supported`},
		{`fn (x : [2] f64, y : [3] f64) => x + y`, `core: parse: line 1:36: core: add: operand shapes [2] and [3] differ`},
	}
	for _, c := range cases {
		wantParseError(t, c.src, c.want)
	}
}

// TestParseEnv checks Parse with typed free variables.
func TestParseEnv(t *testing.T) {
	env := map[string]core.Type{"x": f64s(2, 3), "k": i64s()}
	got, err := core.Parse(`sumOuter (x ! [k])`, env)
	if err != nil {
		t.Fatal(err)
	}
	if !got.Type().Equal(f64s()) {
		t.Errorf("type %v, want [] f64", got.Type())
	}
	fv := core.FreeVars(got)
	if len(fv) != 2 || fv[0].Name != "k" || fv[1].Name != "x" || !fv[1].Type().Equal(f64s(2, 3)) {
		t.Errorf("free variables %v", fv)
	}
	if _, err := core.Parse(`y`, env); err == nil || err.Error() != "core: parse: line 1:1: variable y is not bound" {
		t.Errorf("unbound: %v", err)
	}
	if _, err := core.Parse(`x`, map[string]core.Type{"let": f64s()}); err == nil ||
		!strings.HasPrefix(err.Error(), `core: parse: environment: core: var: "let" is not a valid variable name`) {
		t.Errorf("bad env: %v", err)
	}
	tup, err := core.Parse(`let y = k in (y, x)`, env)
	if err != nil {
		t.Fatal(err)
	}
	if l, ok := tup.(*core.Let); !ok {
		t.Errorf("got %T, want *core.Let", tup)
	} else if tu, ok := l.Body.(*core.Tuple); !ok || len(tu.Elems) != 2 {
		t.Errorf("let body %v, want a pair", l.Body)
	}
}

// TestParseShareIdentity checks that "share 7" without a body denotes the very node of the
// earlier "share 7 t", and that variables resolve to their binders.
func TestParseShareIdentity(t *testing.T) {
	p, err := core.ParseProgram(`fn (x : [3] f64) => let y = share 7 (x + x) in share 7 * (y + share 7)`)
	if err != nil {
		t.Fatal(err)
	}
	l := p.Body.(*core.Let)
	s := l.Bound.(*core.Share)
	mul := l.Body.(*core.Binary)
	if mul.X != core.Term(s) || mul.Y.(*core.Binary).Y != core.Term(s) {
		t.Errorf("share 7 references are not the same node")
	}
	if core.Size(p.Body) != 7 { // let, share, x+x, x, *, y+share, y
		t.Errorf("Size = %d, want 7", core.Size(p.Body))
	}
}

// TestParseDeepNesting checks that deep nesting gives an error, not a crash, and that long
// let chains and long operator chains (which are not nested) parse.
func TestParseDeepNesting(t *testing.T) {
	src := "fn (x : [] f64) => " + strings.Repeat("(", 20000) + "x" + strings.Repeat(")", 20000)
	if _, err := core.ParseProgram(src); err == nil || !strings.Contains(err.Error(), "nested deeper than") {
		t.Errorf("deep parentheses: %v", err)
	}
	src = "fn (x : [] f64) => " + strings.Repeat("- ", 20000) + "x"
	if _, err := core.ParseProgram(src); err == nil || !strings.Contains(err.Error(), "nested deeper than") {
		t.Errorf("deep minus: %v", err)
	}
	ok := "fn (x : [] f64) => " + strings.Repeat("exp (", 1000) + "x" + strings.Repeat(")", 1000)
	if _, err := core.ParseProgram(ok); err != nil {
		t.Errorf("1000 nested applications: %v", err)
	}
	var sb strings.Builder
	sb.WriteString("fn (x0 : [] f64) => ")
	const n = 20000
	for i := 0; i < n; i++ {
		sb.WriteString("let x" + itoa(i+1) + " = x" + itoa(i) + " + x" + itoa(i) + " in ")
	}
	sb.WriteString("x" + itoa(n) + " + " + strings.Repeat("x0 + ", n) + "x0")
	p, err := core.ParseProgram(sb.String())
	if err != nil {
		t.Fatal(err)
	}
	// n lets, n bound sums, variables x0..xn, n+1 sums in the final chain
	if core.Size(p.Body) != 4*n+2 {
		t.Errorf("Size = %d, want %d", core.Size(p.Body), 4*n+2)
	}
}

func itoa(i int) string {
	if i == 0 {
		return "0"
	}
	var b []byte
	for ; i > 0; i /= 10 {
		b = append([]byte{byte('0' + i%10)}, b...)
	}
	return string(b)
}

// TestRoundTripRandom checks parse(print(p)) == p on generated well-typed programs.
func TestRoundTripRandom(t *testing.T) {
	n := 3000
	if testing.Short() {
		n = 500
	}
	kinds := map[string]int{}
	for seed := int64(0); seed < int64(n); seed++ {
		p := newRTGen(seed).program()
		core.PostOrder(p.Body, func(x core.Term) { kinds[strings.TrimPrefix(typeName(x), "*core.")]++ })
		src := p.String()
		q := roundTrip(t, fmt.Sprintf("seed %d", seed), p)
		if q.String() != src {
			t.Fatalf("seed %d: reprint differs\n%s\n%s", seed, src, q.String())
		}
	}
	for _, k := range []string{"Var", "Lit", "Let", "Share", "Cond", "Unary", "Cast", "Binary", "Index",
		"SumOuter", "ArgmaxOuter", "Gather", "Scatter", "FromVector", "Replicate", "Transpose",
		"Reshape", "Build1", "Iota", "MatMul", "Tuple"} {
		if kinds[k] == 0 {
			t.Errorf("generator never produced a %s", k)
		}
	}
	t.Logf("constructs generated: %v", kinds)
}

// TestRoundTripCoretest runs the round trip over the programs of the shared generator
// (package coretest), small ones and a few large let chains.
func TestRoundTripCoretest(t *testing.T) {
	n := 1000
	if testing.Short() {
		n = 200
	}
	skipped := 0
	for seed := int64(0); seed < int64(n); seed++ {
		cfg := coretest.Config{}
		switch seed % 4 {
		case 1:
			cfg.Dtype = core.Float32
		case 2:
			cfg.Smooth, cfg.ScalarResult = true, true
		case 3:
			cfg.Dtype = core.Float64
		}
		if seed%100 == 0 {
			cfg.TargetNodes = 2000
		}
		p := coretestProgram(seed, cfg)
		if p == nil {
			skipped++
			continue
		}
		roundTrip(t, fmt.Sprintf("seed %d", seed), p)
	}
	if skipped > n/10 {
		t.Errorf("coretest.RandomProgram failed on %d of %d seeds", skipped, n)
	} else if skipped > 0 {
		t.Logf("coretest.RandomProgram failed on %d of %d seeds (skipped)", skipped, n)
	}
}

// coretestProgram calls coretest.RandomProgram, returning nil if the generator itself fails
// (it panics on its own bugs; e.g. it may form the reserved name "i64" from prefix "i").
func coretestProgram(seed int64, cfg coretest.Config) (p *core.Program) {
	defer func() {
		if r := recover(); r != nil {
			p = nil
		}
	}()
	return coretest.RandomProgram(rand.New(rand.NewSource(seed)), cfg)
}

// roundTrip prints p, parses the text and requires an equal program, which it returns.
func roundTrip(t *testing.T, label string, p *core.Program) *core.Program {
	t.Helper()
	src := p.String()
	q, err := core.ParseProgram(src)
	if err != nil {
		t.Fatalf("%s: reparse failed: %v\nprinted: %s", label, err, src)
	}
	if !core.ProgramEqual(p, q) {
		t.Fatalf("%s: round trip differs\nprinted:   %s\nreprinted: %s", label, src, q.String())
	}
	return q
}

func typeName(x interface{}) string { return fmt.Sprintf("%T", x) }

// FuzzParse checks that parsing arbitrary input never panics and that whatever parses
// round-trips through the printer.
func FuzzParse(f *testing.F) {
	seeds := []string{
		`fn (a : [5] f64, b : [5] f64, k : [] i64) => let w = a * sin b in (atan2 b w + b * w, a ! [k])`,
		`fn (t : [9] f64) => scatter [6] t (\[i] -> [quot i 2])`,
		`fn (x : [2,3] f32) => build [2,3] (\[i,j] -> x ! [i, j] * (-1.5)) + lit [2,3] f32 [1,2,3,4,5,-inf]`,
		`fn (x : [4] f64) => let y = share 1 (x + x) in share 2 (share 1 * share 1) + max 0.0 x`,
		`fn (x : [3,2] f64) => gather [4,2] x (\[i,j] -> [quot i 2])`,
		`fn (x : [2,3] f64, y : [3,4] f64) => tr [1,0] (matmul x y) ! [0]`,
		`fn (b : [] bool) => cond b (iota 3) (argmaxOuter (reshape [2,3] (replicate 6 nan)))`,
	}
	for seed := int64(0); seed < 20; seed++ {
		seeds = append(seeds, newRTGen(seed).program().String())
	}
	for _, s := range seeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		p, err := core.ParseProgram(src)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "core: parse: ") {
				t.Fatalf("error without the parse prefix: %v", err)
			}
			return
		}
		roundTrip(t, fmt.Sprintf("input %q", src), p)
		// Evaluate what parsed (on zero arguments) when its arrays are small: evaluation may
		// fail with an error but must not panic or exhaust memory.
		if core.CheckArrayLimit(p, 1<<16, "fuzz") != nil {
			return
		}
		args := map[string]*tensor.Dense{}
		for _, v := range p.Params {
			args[v.Name] = zeroDense(v.Type())
		}
		if _, err := tensors.EvalTuple(p, args); err != nil && !strings.HasPrefix(err.Error(), "core: ") {
			t.Fatalf("eval error without the core prefix: %v", err)
		}
	})
}

// rtGen generates random well-typed programs covering every construct: nested build1, lets
// (with shadowing), gathers and scatters with index functions over bound variables, shares
// reused by pointer, literals of every dtype (negative, -0, inf, nan), casts and tuples.
// Every term is built with the core Builder; a builder error is a generator bug.
type rtGen struct {
	r      *rand.Rand
	b      core.Builder
	fd     core.Dtype // the program's main float dtype
	scope  []*core.Var
	params map[string]bool
	shares []core.Term // shares whose free variables are parameters only (reusable anywhere)
	nextID int
	nodes  int // budget counter
}

func newRTGen(seed int64) *rtGen {
	g := &rtGen{r: rand.New(rand.NewSource(seed)), fd: core.Float64, params: map[string]bool{}}
	if g.r.Intn(2) == 0 {
		g.fd = core.Float32
	}
	return g
}

var rtBinderNames = []string{"x", "y", "i", "j", "k", "v_1", "w'"}

func (g *rtGen) shape(maxRank int) core.Shape {
	r := g.r.Intn(maxRank + 1)
	sh := make(core.Shape, r)
	for i := range sh {
		sh[i] = 1 + g.r.Intn(3)
	}
	return sh
}

func (g *rtGen) dtype() core.Dtype {
	switch g.r.Intn(6) {
	case 0:
		return core.Int64
	case 1:
		return core.Bool
	case 2:
		if g.fd == core.Float64 {
			return core.Float32
		}
		return core.Float64
	}
	return g.fd
}

// program makes a random program.
func (g *rtGen) program() *core.Program {
	np := 1 + g.r.Intn(3)
	var params []*core.Var
	for k := 0; k < np; k++ {
		d := g.fd
		if g.r.Intn(4) == 0 {
			d = g.dtype()
		}
		v := g.b.Var(fmt.Sprintf("a%d", k), core.Type{Shape: g.shape(3), Dtype: d})
		params = append(params, v)
		g.params[v.Name] = true
	}
	g.scope = append(g.scope, params...)
	depth := 2 + g.r.Intn(4)
	var body core.Term
	if g.r.Intn(6) == 0 {
		n := g.r.Intn(4)
		elems := make([]core.Term, n)
		for k := range elems {
			elems[k] = g.term(g.ty(), depth)
		}
		body = g.b.Tuple(elems...)
		if g.r.Intn(2) == 0 {
			v := g.fresh(g.ty())
			bound := g.term(v.Type(), depth)
			body = g.b.Let(v, bound, body)
		}
	} else {
		body = g.term(g.ty(), depth)
	}
	if err := g.b.Err(); err != nil {
		panic(fmt.Sprintf("generator bug: %v", err))
	}
	p, err := core.NewProgram(params, body)
	if err != nil {
		panic(fmt.Sprintf("generator bug: %v\n%v", err, (&core.Program{Params: params, Body: body}).String()))
	}
	return p
}

// indexed is a gather (or scatter) of result shape sh: n domain variables (the result's outer
// dims for a gather, drawn for a scatter) and m computed indices (drawn for a gather, the
// result's outer dims for a scatter).
func (g *rtGen) indexed(sh core.Shape, dt core.Dtype, d int, scatter bool) core.Term {
	outer := g.r.Intn(len(sh) + 1) // dims of sh addressed by the domain (gather) or the indices (scatter)
	k := g.r.Intn(3)               // dims of x addressed by the indices (gather) or the domain (scatter)
	xsh := make(core.Shape, k)
	for i := range xsh {
		xsh[i] = 1 + g.r.Intn(4)
	}
	xsh = append(xsh, sh[outer:]...)
	x := g.term(core.Type{Shape: xsh, Dtype: dt}, d)
	n, m := outer, k
	if scatter {
		n, m = k, outer
	}
	vs := g.indexVars(n)
	var outs []core.Term
	g.with(vs, func() core.Term { outs = g.indexes(m, d); return nil })
	if scatter {
		return g.b.Scatter(sh, x, g.b.IndexFn(vs, outs...))
	}
	return g.b.Gather(sh, x, g.b.IndexFn(vs, outs...))
}

func (g *rtGen) ty() core.Type { return core.Type{Shape: g.shape(3), Dtype: g.dtype()} }

func (g *rtGen) fresh(t core.Type) *core.Var {
	return g.b.Var(rtBinderNames[g.r.Intn(len(rtBinderNames))], t)
}

// visible returns the in-scope variables of type t (the innermost binding of each name).
func (g *rtGen) visible(t core.Type) []*core.Var {
	seen := map[string]bool{}
	var out []*core.Var
	for k := len(g.scope) - 1; k >= 0; k-- {
		v := g.scope[k]
		if seen[v.Name] {
			continue
		}
		seen[v.Name] = true
		if v.Type().Equal(t) {
			out = append(out, v)
		}
	}
	return out
}

func (g *rtGen) with(vs []*core.Var, f func() core.Term) core.Term {
	n := len(g.scope)
	g.scope = append(g.scope, vs...)
	t := f()
	g.scope = g.scope[:n]
	return t
}

func (g *rtGen) float(d core.Dtype) float64 {
	switch g.r.Intn(12) {
	case 0:
		return math.Inf(1)
	case 1:
		return math.Inf(-1)
	case 2:
		return math.NaN()
	case 3:
		return math.Copysign(0, -1)
	case 4:
		return float64(g.r.Intn(7) - 3)
	case 5:
		return g.r.NormFloat64() * 1e30
	case 6:
		return g.r.NormFloat64() * 1e-30
	}
	return g.r.NormFloat64()
}

func (g *rtGen) lit(t core.Type) core.Term {
	n := t.Shape.Size()
	var l *core.Lit
	var err error
	switch t.Dtype {
	case core.Float64, core.Float32:
		vs := make([]float64, n)
		for k := range vs {
			vs[k] = g.float(t.Dtype)
		}
		l, err = core.NewLitF(t, vs)
	case core.Int64:
		vs := make([]int64, n)
		for k := range vs {
			switch g.r.Intn(8) {
			case 0:
				vs[k] = math.MinInt64
			case 1:
				vs[k] = math.MaxInt64
			default:
				vs[k] = int64(g.r.Intn(11) - 5)
			}
		}
		l, err = core.NewLitI(t.Shape, vs)
	default:
		vs := make([]bool, n)
		for k := range vs {
			vs[k] = g.r.Intn(2) == 0
		}
		l, err = core.NewLitB(t.Shape, vs)
	}
	if err != nil {
		g.b.SetErr(err)
		return nil
	}
	return l
}

// index makes a small i64 scalar index term, preferring the in-scope i64 variables.
func (g *rtGen) index(depth int) core.Term {
	vs := g.visible(core.Scalar(core.Int64))
	switch {
	case len(vs) > 0 && g.r.Intn(3) > 0:
		v := vs[g.r.Intn(len(vs))]
		switch g.r.Intn(4) {
		case 0:
			return g.b.Binary(core.OpQuot, v, core.ScalarI(2))
		case 1:
			return g.b.Add(v, core.ScalarI(int64(g.r.Intn(3))))
		}
		return v
	case depth > 0 && g.r.Intn(3) == 0:
		return g.term(core.Scalar(core.Int64), depth-1)
	}
	return core.ScalarI(int64(g.r.Intn(4) - 1))
}

func (g *rtGen) indexes(n, depth int) []core.Term {
	ix := make([]core.Term, n)
	for k := range ix {
		ix[k] = g.index(depth)
	}
	return ix
}

func (g *rtGen) indexVars(n int) []*core.Var {
	vs := make([]*core.Var, n)
	used := map[string]bool{}
	for k := range vs {
		name := rtBinderNames[g.r.Intn(len(rtBinderNames))]
		for used[name] {
			name += "'"
		}
		used[name] = true
		vs[k] = g.b.Var(name, core.Scalar(core.Int64))
	}
	return vs
}

// term makes a random term of type t.
func (g *rtGen) term(t core.Type, depth int) core.Term {
	if g.b.Err() != nil {
		return nil
	}
	g.nodes++
	if depth <= 0 || g.nodes > 400 {
		if vs := g.visible(t); len(vs) > 0 && g.r.Intn(3) > 0 {
			return vs[g.r.Intn(len(vs))]
		}
		if t.Dtype == core.Int64 && len(t.Shape) == 1 && g.r.Intn(3) == 0 {
			return g.b.Iota(t.Shape[0])
		}
		return g.lit(t)
	}
	d := depth - 1
	sh, dt := t.Shape, t.Dtype
	var opts []func() core.Term
	add := func(f func() core.Term) { opts = append(opts, f) }
	add(func() core.Term { return g.lit(t) })
	if vs := g.visible(t); len(vs) > 0 {
		add(func() core.Term { return vs[g.r.Intn(len(vs))] })
	}
	// element-wise
	add(func() core.Term {
		var ops []core.UnOp
		for _, op := range core.UnOps() {
			switch {
			case op == core.OpNot && dt == core.Bool,
				(op == core.OpNeg || op == core.OpAbs || op == core.OpSign) && dt.IsNumeric(),
				op != core.OpNot && op != core.OpNeg && op != core.OpAbs && op != core.OpSign && dt.IsFloat():
				ops = append(ops, op)
			}
		}
		if len(ops) == 0 {
			return g.lit(t)
		}
		return g.b.Unary(ops[g.r.Intn(len(ops))], g.term(t, d))
	})
	add(func() core.Term {
		var ops []core.BinOp
		for _, op := range core.BinOps() {
			if op.IsComparison() {
				continue
			}
			switch {
			case (op == core.OpAnd || op == core.OpOr) && dt == core.Bool,
				(op == core.OpQuot || op == core.OpRem) && dt == core.Int64,
				(op == core.OpDiv || op == core.OpPow || op == core.OpAtan2) && dt.IsFloat(),
				(op == core.OpAdd || op == core.OpSub || op == core.OpMul || op == core.OpMax || op == core.OpMin) && dt.IsNumeric():
				ops = append(ops, op)
			}
		}
		if len(ops) == 0 {
			return g.lit(t)
		}
		return g.b.Binary(ops[g.r.Intn(len(ops))], g.term(t, d), g.term(t, d))
	})
	if dt == core.Bool {
		add(func() core.Term {
			ops := []core.BinOp{core.OpLt, core.OpLe, core.OpGt, core.OpGe, core.OpEq, core.OpNe}
			op := ops[g.r.Intn(len(ops))]
			od := []core.Dtype{g.fd, core.Int64, core.Bool}[g.r.Intn(3)]
			if od == core.Bool && op != core.OpEq && op != core.OpNe {
				od = g.fd
			}
			ot := core.Type{Shape: sh, Dtype: od}
			return g.b.Binary(op, g.term(ot, d), g.term(ot, d))
		})
	}
	add(func() core.Term {
		return g.b.Cast(dt, g.term(core.Type{Shape: sh, Dtype: g.dtype()}, d))
	})
	add(func() core.Term {
		return g.b.Cond(g.term(core.Scalar(core.Bool), d), g.term(t, d), g.term(t, d))
	})
	// binding
	add(func() core.Term {
		v := g.fresh(g.ty())
		bound := g.term(v.Type(), d)
		return g.b.Let(v, bound, g.with([]*core.Var{v}, func() core.Term { return g.term(t, d) }))
	})
	add(func() core.Term {
		var same []core.Term
		for _, s := range g.shares {
			if s.Type().Equal(t) {
				same = append(same, s)
			}
		}
		if len(same) > 0 && g.r.Intn(2) == 0 {
			return same[g.r.Intn(len(same))]
		}
		g.nextID++
		id := g.nextID
		s := g.b.Share(id, g.term(t, d))
		if s != nil {
			closed := true
			for _, v := range core.FreeVars(s) {
				if !g.params[v.Name] {
					closed = false
				}
			}
			if closed {
				g.shares = append(g.shares, s)
			}
		}
		return s
	})
	// array constructs
	add(func() core.Term {
		m := g.r.Intn(3)
		full := make(core.Shape, m)
		for k := range full {
			full[k] = 1 + g.r.Intn(3)
		}
		full = append(full, sh...)
		return g.b.Index(g.term(core.Type{Shape: full, Dtype: dt}, d), g.indexes(m, d)...)
	})
	if dt.IsNumeric() {
		add(func() core.Term {
			return g.b.SumOuter(g.term(core.Type{Shape: append(core.Shape{1 + g.r.Intn(3)}, sh...), Dtype: dt}, d))
		})
	}
	if dt == core.Int64 {
		add(func() core.Term {
			od := []core.Dtype{g.fd, core.Int64}[g.r.Intn(2)]
			return g.b.ArgmaxOuter(g.term(core.Type{Shape: append(core.Shape{1 + g.r.Intn(3)}, sh...), Dtype: od}, d))
		})
		if len(sh) == 1 {
			add(func() core.Term { return g.b.Iota(sh[0]) })
		}
	}
	// gather: result sh = domain(n) ++ rest; x shape = [k1..km] ++ rest
	add(func() core.Term { return g.indexed(sh, dt, d, false) })
	if dt.IsNumeric() {
		// scatter: x shape = domain(n) ++ rest; result sh = [k'1..k'm] ++ rest
		add(func() core.Term { return g.indexed(sh, dt, d, true) })
	}
	if len(sh) > 0 {
		inner := core.Type{Shape: sh[1:], Dtype: dt}
		add(func() core.Term {
			elems := make([]core.Term, sh[0])
			for k := range elems {
				elems[k] = g.term(inner, d)
			}
			return g.b.FromVector(elems...)
		})
		add(func() core.Term { return g.b.Replicate(sh[0], g.term(inner, d)) })
		add(func() core.Term {
			v := g.b.Var(rtBinderNames[g.r.Intn(len(rtBinderNames))], core.Scalar(core.Int64))
			return g.b.Build1(sh[0], v, g.with([]*core.Var{v}, func() core.Term { return g.term(inner, d) }))
		})
		add(func() core.Term {
			m := 1 + g.r.Intn(len(sh))
			perm := g.r.Perm(m)
			xsh := append(core.Shape{}, sh...)
			for i := 0; i < m; i++ {
				xsh[perm[i]] = sh[i]
			}
			return g.b.Transpose(perm, g.term(core.Type{Shape: xsh, Dtype: dt}, d))
		})
	}
	add(func() core.Term {
		// reshape from the flattened shape, or from the shape with a unit dimension added
		var xsh core.Shape
		if g.r.Intn(2) == 0 {
			xsh = core.Shape{sh.Size()}
		} else {
			xsh = append(core.Shape{1}, sh...)
		}
		return g.b.Reshape(sh, g.term(core.Type{Shape: xsh, Dtype: dt}, d))
	})
	if dt.IsFloat() && len(sh) >= 2 {
		add(func() core.Term {
			k := 1 + g.r.Intn(3)
			r := len(sh)
			return g.b.MatMul(g.term(core.Type{Shape: append(sh[:r-1].Clone(), k), Dtype: dt}, d),
				g.term(core.Type{Shape: append(sh[:r-2].Clone(), k, sh[r-1]), Dtype: dt}, d))
		})
	}
	return opts[g.r.Intn(len(opts))]()
}

// zeroDense returns a zero array of type t.
func zeroDense(t core.Type) *tensor.Dense {
	n := t.Shape.Size()
	var back interface{}
	switch t.Dtype {
	case core.Float32:
		back = make([]float32, n)
	case core.Int64:
		back = make([]int64, n)
	case core.Bool:
		back = make([]bool, n)
	default:
		back = make([]float64, n)
	}
	if len(t.Shape) == 0 {
		switch b := back.(type) {
		case []float32:
			return tensor.New(tensor.FromScalar(b[0]))
		case []int64:
			return tensor.New(tensor.FromScalar(b[0]))
		case []bool:
			return tensor.New(tensor.FromScalar(b[0]))
		default:
			return tensor.New(tensor.FromScalar(float64(0)))
		}
	}
	return tensor.New(tensor.WithShape(t.Shape...), tensor.WithBacking(back))
}

// wantParseError requires ParseProgram(src) to fail with exactly the message want.
func wantParseError(t *testing.T, src, want string) {
	t.Helper()
	_, err := core.ParseProgram(src)
	if err == nil {
		t.Errorf("ParseProgram(%q) succeeded, want error %s", src, want)
		return
	}
	if err.Error() != want {
		t.Errorf("ParseProgram(%q)\n got error %s\nwant error %s", src, err, want)
	}
}
