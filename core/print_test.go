package core_test

import (
	"math"
	"testing"

	"github.com/bulkad/bulkad/core"
	"github.com/bulkad/bulkad/core/coretest"
)

// TestPrintGolden checks the printer on terms built with the constructors: parentheses
// exactly where precedence needs them, literal formats, shares printed once. The expected
// texts are written by hand from the syntax in doc.go.
func TestPrintGolden(t *testing.T) {
	ok := okTerm(t)
	a := mustVar(t, "a", coretest.F64(2))
	b := mustVar(t, "b", coretest.F64(2))
	c := mustVar(t, "c", coretest.F64(2))
	p := mustVar(t, "p", coretest.Bool())
	q := mustVar(t, "q", coretest.Bool())
	r := mustVar(t, "r", coretest.Bool())
	i := mustVar(t, "i", coretest.I64())
	j := mustVar(t, "j", coretest.I64())
	m := mustVar(t, "m", coretest.F64(2, 3))
	bin := func(op core.BinOp, x, y core.Term) core.Term { return ok(term(core.NewBinary(op, x, y))) }
	un := func(op core.UnOp, x core.Term) core.Term { return ok(term(core.NewUnary(op, x))) }
	letT := func(name string, bound, body core.Term) core.Term {
		return ok(term(core.NewLet(mustVar(t, name, bound.Type()), bound, body)))
	}
	y := mustVar(t, "y", coretest.F64(2))
	lety := ok(term(core.NewLet(y, a, y)))
	f64 := func(v float64) core.Term { return core.ScalarF(core.Float64, v) }
	sh := ok(term(core.NewShare(1, un(core.OpExp, a))))
	cases := []struct {
		t    core.Term
		want string
	}{
		{bin(core.OpMul, bin(core.OpAdd, a, b), c), "(a + b) * c"},
		{bin(core.OpAdd, a, bin(core.OpMul, b, c)), "a + b * c"},
		{bin(core.OpSub, a, bin(core.OpSub, b, c)), "a - (b - c)"},
		{bin(core.OpSub, bin(core.OpSub, a, b), c), "a - b - c"},
		{bin(core.OpDiv, a, bin(core.OpMul, b, c)), "a / (b * c)"},
		{bin(core.OpEq, bin(core.OpLt, a, b), bin(core.OpLt, b, c)), "(a < b) == (b < c)"},
		{bin(core.OpOr, bin(core.OpAnd, p, q), r), "p && q || r"},
		{bin(core.OpAnd, p, bin(core.OpOr, q, r)), "p && (q || r)"},
		{bin(core.OpAnd, bin(core.OpAnd, p, q), r), "p && q && r"},
		{bin(core.OpAnd, p, bin(core.OpAnd, q, r)), "p && (q && r)"},
		{bin(core.OpLt, bin(core.OpAdd, i, j), j), "i + j < j"},
		{un(core.OpExp, bin(core.OpAdd, a, b)), "exp (a + b)"},
		{bin(core.OpAdd, un(core.OpExp, a), b), "exp a + b"},
		{un(core.OpNeg, un(core.OpNeg, a)), "neg (neg a)"},
		{bin(core.OpMax, un(core.OpAbs, a), b), "max (abs a) b"},
		{un(core.OpExp, lety), "exp (let y = a in y)"},
		{bin(core.OpAdd, lety, a), "(let y = a in y) + a"},
		{bin(core.OpAdd, a, lety), "a + (let y = a in y)"},
		{letT("z", lety, a), "let z = let y = a in y in a"},
		{letT("z", a, lety), "let z = a in let y = a in y"},
		{f64(1), "1.0"},
		{f64(-1.5), "(-1.5)"},
		{un(core.OpExp, f64(-1.5)), "exp (-1.5)"},
		{bin(core.OpAdd, f64(2), f64(-1.5)), "2.0 + (-1.5)"},
		{f64(1e21), "1e+21"},
		{f64(2.5e-7), "2.5e-07"},
		{f64(math.NaN()), "nan"},
		{f64(math.Inf(1)), "inf"},
		{f64(math.Inf(-1)), "(-inf)"},
		{f64(math.Copysign(0, -1)), "(-0.0)"},
		{core.ScalarF(core.Float32, 0.1), "lit [] f32 [0.1]"},
		{core.ScalarI(-3), "(-3)"},
		{core.ScalarI(3), "3"},
		{core.ScalarB(false), "false"},
		{ok(term(core.NewLitB(core.Shape{2}, []bool{true, false}))), "lit [2] bool [true,false]"},
		{un(core.OpExp, ok(term(core.NewLitF(coretest.F64(2), []float64{1, -2.5})))), "exp (lit [2] f64 [1.0,-2.5])"},
		{ok(term(core.NewLitF(coretest.F32(1, 2), []float64{1e-45, 3.4028234663852886e38}))), "lit [1,2] f32 [1e-45,3.4028235e+38]"},
		{ok(term(core.NewLitI(core.Shape{3}, []int64{math.MinInt64, 0, math.MaxInt64}))), "lit [3] i64 [-9223372036854775808,0,9223372036854775807]"},
		{ok(term(core.NewIndex(un(core.OpExp, m), []core.Term{bin(core.OpAdd, i, j), core.ScalarI(0)}))), "index (exp m) [i + j, 0]"},
		{bin(core.OpAdd, sh, sh), "share 1 (exp a) + share 1"},
		{un(core.OpSin, sh), "sin (share 1 (exp a))"},
		{ok(term(core.NewShare(2, a))), "share 2 a"},
		{ok(term(core.NewTuple([]core.Term{a}))), "(a,)"},
		{ok(term(core.NewTuple(nil))), "()"},
		{ok(term(core.NewTuple([]core.Term{a, letT("z", a, a)}))), "(a, let z = a in a)"},
		{ok(term(core.NewFromVector([]core.Term{a, bin(core.OpAdd, a, b)}))), "[a, a + b]"},
		{ok(term(core.NewGather(core.Shape{4, 2, 3}, m, mustFn(t, []*core.Var{i, j}, j)))), `gather [4,2,3] m (\[i, j] -> [j])`},
		{ok(term(core.NewScatter(core.Shape{1, 3}, m, mustFn(t, []*core.Var{i}, bin(core.OpQuot, i, core.ScalarI(2)))))), `scatter [1,3] m (\[i] -> [quot i 2])`},
		{ok(term(core.NewBuild1(2, i, ok(term(core.NewBuild1(3, j, bin(core.OpAdd, i, j))))))), `build1 2 (\i -> build1 3 (\j -> i + j))`},
		{ok(term(core.NewCast(core.Float32, m))), "cast f32 m"},
		{ok(term(core.NewSumOuter(ok(term(core.NewIota(5)))))), "sumOuter (iota 5)"},
		{ok(term(core.NewArgmaxOuter(m))), "argmaxOuter m"},
		{ok(term(core.NewReplicate(3, f64(0)))), "replicate 3 0.0"},
		{ok(term(core.NewReshape(core.Shape{3, 2}, m))), "reshape [3,2] m"},
		{ok(term(core.NewMatMul(m, ok(term(core.NewTranspose([]int{1, 0}, m)))))), "matmul m (tr [1,0] m)"},
		{ok(term(core.NewCond(p, a, bin(core.OpAdd, a, b)))), "cond p a (a + b)"},
		{bin(core.OpPow, a, bin(core.OpAtan2, a, b)), "pow a (atan2 a b)"},
	}
	for _, c := range cases {
		if got := c.t.String(); got != c.want {
			t.Errorf("got  %s\nwant %s", got, c.want)
		}
	}
	if got := mustFn(t, []*core.Var{i, j}, j, i).String(); got != `\[i, j] -> [j, i]` {
		t.Errorf("IndexFn.String() = %s", got)
	}
	prog, err := core.NewProgram(nil, f64(1))
	if err != nil {
		t.Fatal(err)
	}
	if got := prog.String(); got != "fn () => 1.0" {
		t.Errorf("empty program prints %s", got)
	}
}

// TestFormatFloat checks the float format used by the printer.
func TestFormatFloat(t *testing.T) {
	cases := []struct {
		v    float64
		d    core.Dtype
		want string
	}{
		{1, core.Float64, "1.0"},
		{-2, core.Float64, "-2.0"},
		{0.1, core.Float64, "0.1"},
		{float64(float32(0.1)), core.Float32, "0.1"},
		{float64(float32(0.1)), core.Float64, "0.10000000149011612"},
		{1e100, core.Float64, "1e+100"},
		{123456789, core.Float64, "1.23456789e+08"},
		{math.Copysign(0, -1), core.Float64, "-0.0"},
		{math.Inf(-1), core.Float32, "-inf"},
		{math.NaN(), core.Float32, "nan"},
	}
	for _, c := range cases {
		if got := core.FormatFloat(c.v, c.d); got != c.want {
			t.Errorf("FormatFloat(%v, %v) = %s, want %s", c.v, c.d, got, c.want)
		}
	}
}

// TestRoundTripConstructs checks parse(print(t)) == t for every construct in both float
// dtypes (each fixture made into a program over its free variables), and for literals of
// every dtype including the special values.
func TestRoundTripConstructs(t *testing.T) {
	ok := okTerm(t)
	for _, d := range []core.Dtype{core.Float64, core.Float32} {
		fixtures := walkFixtures(t, d)
		ty := func(sh ...int) core.Type { return core.Type{Shape: sh, Dtype: d} }
		extra := []core.Term{
			core.ScalarF(d, 1.5),
			core.ScalarF(d, -1.5),
			core.ScalarF(d, math.Inf(-1)),
			core.ScalarF(d, math.NaN()),
			core.ScalarF(d, 1e-300),
			core.ScalarF(d, 0.1),
			ok(term(core.NewLitF(ty(2, 2), []float64{math.Inf(1), math.Copysign(0, -1), 1e38, -3}))),
			ok(term(core.NewLitF(ty(0), nil))),
			ok(term(core.NewUnary(core.OpNeg, core.ScalarF(d, -2)))),
			ok(term(core.NewBinary(core.OpSub, core.ScalarF(d, 1), core.ScalarF(d, -1)))),
			ok(term(core.NewReplicate(3, core.ScalarF(d, 2)))),
		}
		for _, x := range extra {
			fixtures = append(fixtures, walkFixture{name: "literal " + x.String(), t: x})
		}
		for _, f := range fixtures {
			p, err := core.NewProgram(core.FreeVars(f.t), f.t)
			if err != nil {
				t.Fatalf("%v %s: %v", d, f.name, err)
			}
			src := p.String()
			q, err := core.ParseProgram(src)
			if err != nil {
				t.Errorf("%v %s: %s: %v", d, f.name, src, err)
				continue
			}
			if !core.ProgramEqual(p, q) {
				t.Errorf("%v %s: round trip of %s gives %s", d, f.name, src, q.String())
			}
			// and as a term with typed free variables
			env := map[string]core.Type{}
			for _, v := range p.Params {
				env[v.Name] = v.Type()
			}
			if _, isTuple := f.t.(*core.Tuple); !isTuple {
				tm, err := core.Parse(f.t.String(), env)
				if err != nil || !core.Equal(tm, f.t) {
					t.Errorf("%v %s: Parse(%s) = %v, %v", d, f.name, f.t.String(), tm, err)
				}
			}
		}
	}
}

// TestRoundTripNegativeZero: a negative zero in a literal keeps its sign through printing and
// parsing (core.Equal, which the round trips above use, does not tell -0 from +0).
func TestRoundTripNegativeZero(t *testing.T) {
	nz := math.Copysign(0, -1)
	for _, d := range []core.Dtype{core.Float64, core.Float32} {
		for _, elems := range [][]float64{{nz}, {math.Inf(1), nz, 0, -3}} {
			lit, err := core.NewLitF(core.Type{Shape: core.Shape{len(elems)}, Dtype: d}, elems)
			if err != nil {
				t.Fatalf("%v %v: %v", d, elems, err)
			}
			src := lit.String()
			back, err := core.Parse(src, nil)
			if err != nil {
				t.Fatalf("%v: Parse(%s): %v", d, src, err)
			}
			got, ok := back.(*core.Lit)
			if !ok || len(got.F) != len(elems) {
				t.Fatalf("%v: Parse(%s) = %v, not a literal of %d elements", d, src, back, len(elems))
			}
			for i, w := range elems {
				if math.Signbit(got.F[i]) != math.Signbit(w) || got.F[i] != w {
					t.Errorf("%v: %s parses to element %d = %v, want %v", d, src, i, got.F[i], w)
				}
			}
		}
	}
}
