package core_test

import (
	"math"
	"strings"
	"testing"

	"github.com/bulkad/bulkad/core"
	"github.com/bulkad/bulkad/core/coretest"
)

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
	x5f32 := mustVar(t, "x", coretest.F32(5))
	s32 := mustVar(t, "s", coretest.F32())
	b := mustVar(t, "b", coretest.Bool())
	var bd core.Builder
	rep := func(n int, x core.Term) core.Term { return bd.Replicate(n, x) }
	cases := []struct {
		src  string
		env  map[string]core.Type
		want core.Term
	}{
		{`x * 2.0`, map[string]core.Type{"x": coretest.F32(5)}, bd.Mul(x5f32, rep(5, core.ScalarF(core.Float32, 2)))},
		{`2.0 * x`, map[string]core.Type{"x": coretest.F32(5)}, bd.Mul(rep(5, core.ScalarF(core.Float32, 2)), x5f32)},
		{`s + 0.1`, map[string]core.Type{"s": coretest.F32()}, bd.Add(s32, core.ScalarF(core.Float32, 0.1))},
		{`0.1 - -0.25 * s`, map[string]core.Type{"s": coretest.F32()},
			bd.Sub(core.ScalarF(core.Float32, 0.1), bd.Mul(core.ScalarF(core.Float32, -0.25), s32))},
		{`(1.0 + 2.0) * s`, map[string]core.Type{"s": coretest.F32()},
			bd.Mul(bd.Add(core.ScalarF(core.Float32, 1), core.ScalarF(core.Float32, 2)), s32)},
		{`exp 1.0 * s`, map[string]core.Type{"s": coretest.F32()},
			bd.Mul(bd.Unary(core.OpExp, core.ScalarF(core.Float32, 1)), s32)},
		{`s < 0.5`, map[string]core.Type{"s": coretest.F32()}, bd.Binary(core.OpLt, s32, core.ScalarF(core.Float32, 0.5))},
		{`cond b 1.5 s`, map[string]core.Type{"b": coretest.Bool(), "s": coretest.F32()}, bd.Cond(b, core.ScalarF(core.Float32, 1.5), s32)},
		{`cond b s 1.5`, map[string]core.Type{"b": coretest.Bool(), "s": coretest.F32()}, bd.Cond(b, s32, core.ScalarF(core.Float32, 1.5))},
		{`[1.0, s, -2.0]`, map[string]core.Type{"s": coretest.F32()}, bd.FromVector(core.ScalarF(core.Float32, 1), s32, core.ScalarF(core.Float32, -2))},
		{`max 0.0 s`, map[string]core.Type{"s": coretest.F32()}, bd.Binary(core.OpMax, core.ScalarF(core.Float32, 0), s32)},
		{`min s 1e30`, map[string]core.Type{"s": coretest.F32()}, bd.Binary(core.OpMin, s32, core.ScalarF(core.Float32, 1e30))},
		{`pow 2.0 s`, map[string]core.Type{"s": coretest.F32()}, bd.Binary(core.OpPow, core.ScalarF(core.Float32, 2), s32)},
		{`atan2 s 3.0`, map[string]core.Type{"s": coretest.F32()}, bd.Binary(core.OpAtan2, s32, core.ScalarF(core.Float32, 3))},
		{`x + replicate 5 1.0`, map[string]core.Type{"x": coretest.F32(5)}, bd.Add(x5f32, rep(5, core.ScalarF(core.Float32, 1)))},
		{`x + build1 5 (\i -> 1.0)`, map[string]core.Type{"x": coretest.F32(5)},
			bd.Add(x5f32, bd.Build1(5, mustVar(t, "i", coretest.I64()), core.ScalarF(core.Float32, 1)))},
		// nothing says otherwise: f64
		{`1.5`, nil, core.ScalarF(core.Float64, 1.5)},
		{`let y = 1.5 in y`, nil, bd.Let(mustVar(t, "y", coretest.F64()), core.ScalarF(core.Float64, 1.5), mustVar(t, "y", coretest.F64()))},
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
	got, err := core.Parse(`s + 0.1`, map[string]core.Type{"s": coretest.F32()})
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
		{`fn (x : [3] f64) => gather [2,2] x (\[i] -> [i])`, `core: parse: line 1:21: core: gather: result shape [2 2] and operand shape [3] differ after their indexed dimensions (1 and 1): [2] and []`},
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
	env := map[string]core.Type{"x": coretest.F64(2, 3), "k": coretest.I64()}
	got, err := core.Parse(`sumOuter (x ! [k])`, env)
	if err != nil {
		t.Fatal(err)
	}
	if !got.Type().Equal(coretest.F64()) {
		t.Errorf("type %v, want [] f64", got.Type())
	}
	fv := core.FreeVars(got)
	if len(fv) != 2 || fv[0].Name != "k" || fv[1].Name != "x" || !fv[1].Type().Equal(coretest.F64(2, 3)) {
		t.Errorf("free variables %v", fv)
	}
	if _, err := core.Parse(`y`, env); err == nil || err.Error() != "core: parse: line 1:1: variable y is not bound" {
		t.Errorf("unbound: %v", err)
	}
	if _, err := core.Parse(`x`, map[string]core.Type{"let": coretest.F64()}); err == nil ||
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
