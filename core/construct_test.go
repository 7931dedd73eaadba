package core_test

import (
	"math"
	"strings"
	"testing"

	"github.com/bulkad/bulkad/core"
	"github.com/bulkad/bulkad/core/coretest"
)

// term converts a constructor's (concrete term, error) result into (core.Term, error),
// keeping a nil interface on error.
func term[T core.Term](x T, err error) (core.Term, error) {
	if err != nil {
		return nil, err
	}
	return x, nil
}

type typingCase struct {
	name string
	make func() (core.Term, error)
	want core.Type // for accepted cases
	err  string    // exact error message for rejected cases
}

func runTypingCases(t *testing.T, prefix string, cases []typingCase) {
	t.Helper()
	for _, c := range cases {
		got, err := func() (got core.Term, err error) {
			defer func() {
				if r := recover(); r != nil {
					t.Errorf("%s %s: panic %v", prefix, c.name, r)
				}
			}()
			return c.make()
		}()
		if c.err != "" {
			if err == nil {
				t.Errorf("%s %s: accepted (type %v), want error %s", prefix, c.name, got.Type(), c.err)
			} else if err.Error() != c.err {
				t.Errorf("%s %s:\n got error %s\nwant error %s", prefix, c.name, err, c.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s %s: %v", prefix, c.name, err)
			continue
		}
		if got == nil {
			t.Errorf("%s %s: nil term without error", prefix, c.name)
			continue
		}
		if _, isTuple := got.(*core.Tuple); !isTuple && !got.Type().Equal(c.want) {
			t.Errorf("%s %s: type %v, want %v", prefix, c.name, got.Type(), c.want)
		}
	}
}

// typingFixture holds the variables the typing cases are built from, for one float dtype
// d (other is the other float dtype; D and O are their names).
type typingFixture struct {
	t                                             *testing.T
	d, other                                      core.Dtype
	D, O                                          string
	x34, y43, z34, s, t9, n34, k, b, bv, i, j, fi *core.Var
	tup                                           core.Term
}

func newTypingFixture(t *testing.T, d core.Dtype) *typingFixture {
	other := core.Float32
	if d == core.Float32 {
		other = core.Float64
	}
	f := &typingFixture{t: t, d: d, other: other, D: d.String(), O: other.String()}
	f.x34 = mustVar(t, "x", f.ty(3, 4))
	f.y43 = mustVar(t, "y", f.ty(4, 3))
	f.z34 = mustVar(t, "z", core.Type{Shape: core.Shape{3, 4}, Dtype: other})
	f.s = mustVar(t, "s", f.ty())
	f.t9 = mustVar(t, "t", f.ty(9))
	f.n34 = mustVar(t, "n", coretest.I64(3, 4))
	f.k = mustVar(t, "k", coretest.I64())
	f.b = mustVar(t, "b", coretest.Bool())
	f.bv = mustVar(t, "bv", coretest.Bool(3, 4))
	f.i = mustVar(t, "i", coretest.I64())
	f.j = mustVar(t, "j", coretest.I64())
	f.fi = mustVar(t, "fi", f.ty())
	tup, err := core.NewTuple([]core.Term{f.x34})
	if err != nil {
		t.Fatal(err)
	}
	f.tup = tup
	return f
}

// ty is the type of shape sh and the fixture's dtype.
func (f *typingFixture) ty(sh ...int) core.Type { return core.Type{Shape: sh, Dtype: f.d} }

// TestConstructTyping checks every constructor's typing rule (paper 000, Fig. 8, plus the
// bulkad extensions), accepting and rejecting, in both float dtypes. The expected types and
// messages are written by hand from the rules.
func TestConstructTyping(t *testing.T) {
	for _, d := range []core.Dtype{core.Float64, core.Float32} {
		f := newTypingFixture(t, d)
		var cases []typingCase
		cases = append(cases, f.elementCases()...)
		cases = append(cases, f.arrayCases()...)
		cases = append(cases, f.shapeCases()...)
		runTypingCases(t, f.D, cases)
	}
}

// elementCases are the typing cases of variables, literals, let, share, cond and the
// element-wise operations.
func (f *typingFixture) elementCases() []typingCase {
	t, ty, d, D, other, O := f.t, f.ty, f.d, f.D, f.other, f.O
	x34, y43, z34, s, n34, k := f.x34, f.y43, f.z34, f.s, f.n34, f.k
	b, bv, tup := f.b, f.bv, f.tup
	lit := func(sh []int, vs ...float64) func() (core.Term, error) {
		return func() (core.Term, error) { return term(core.NewLitF(ty(sh...), vs)) }
	}
	return []typingCase{
		// variables and literals
		{"var", func() (core.Term, error) { return term(core.NewVar("w'", ty(2))) }, ty(2), ""},
		{"var keyword", func() (core.Term, error) { return term(core.NewVar("let", ty(2))) }, core.Type{}, `core: var: "let" is not a valid variable name`},
		{"var inf", func() (core.Term, error) { return term(core.NewVar("inf", ty(2))) }, core.Type{}, `core: var: "inf" is not a valid variable name`},
		{"var digit", func() (core.Term, error) { return term(core.NewVar("1x", ty(2))) }, core.Type{}, `core: var: "1x" is not a valid variable name`},
		{"var negative dim", func() (core.Term, error) { return term(core.NewVar("v", ty(2, -1))) }, core.Type{}, "core: var v: negative dimension in shape [2 -1]"},
		{"var dtype", func() (core.Term, error) { return term(core.NewVar("v", core.Type{Shape: core.Shape{2}})) }, core.Type{}, "core: var v: invalid dtype dtype(0)"},
		{"litF", lit([]int{2, 3}, 1, 2, 3, 4, 5, 6), ty(2, 3), ""},
		{"litF scalar", lit(nil, 1.5), ty(), ""},
		{"litF empty", lit([]int{0, 2}), ty(0, 2), ""},
		{"litF count", lit([]int{2, 2}, 1, 2, 3), core.Type{}, "core: lit: shape [2 2] needs 4 values, got 3"},
		{"litF negative", lit([]int{-1}), core.Type{}, "core: lit: negative dimension in shape [-1]"},
		{"litF int dtype", func() (core.Term, error) { return term(core.NewLitF(coretest.I64(1), []float64{1})) }, core.Type{}, "core: lit: dtype i64 is not a float dtype"},
		{"litI", func() (core.Term, error) { return term(core.NewLitI(core.Shape{2}, []int64{1, -2})) }, coretest.I64(2), ""},
		{"litI count", func() (core.Term, error) { return term(core.NewLitI(core.Shape{3}, []int64{1})) }, core.Type{}, "core: lit: shape [3] needs 3 values, got 1"},
		{"litB", func() (core.Term, error) { return term(core.NewLitB(core.Shape{}, []bool{true})) }, coretest.Bool(), ""},
		{"litB count", func() (core.Term, error) { return term(core.NewLitB(core.Shape{2}, nil)) }, core.Type{}, "core: lit: shape [2] needs 2 values, got 0"},
		{"fill", func() (core.Term, error) { return term(core.Fill(ty(2, 2), 3)) }, ty(2, 2), ""},
		{"fill invalid", func() (core.Term, error) { return term(core.Fill(core.Type{Shape: core.Shape{2}}, 3)) }, core.Type{}, "core: fill: invalid type [2] dtype(0)"},
		{"scalarF", func() (core.Term, error) { return core.ScalarF(d, 2), nil }, ty(), ""},
		{"scalarI", func() (core.Term, error) { return core.ScalarI(2), nil }, coretest.I64(), ""},
		{"scalarB", func() (core.Term, error) { return core.ScalarB(true), nil }, coretest.Bool(), ""},
		// let, share, cond
		{"let", func() (core.Term, error) {
			return term(core.NewLet(mustVar(t, "w", ty(3, 4)), x34, s))
		}, ty(), ""},
		{"let type", func() (core.Term, error) {
			return term(core.NewLet(mustVar(t, "w", ty(3, 4)), y43, s))
		}, core.Type{}, "core: let w: variable has type [3,4] " + D + " but the bound term has type [4,3] " + D},
		{"let nil var", func() (core.Term, error) { return term(core.NewLet(nil, x34, s)) }, core.Type{}, "core: let: variable is nil"},
		{"let nil bound", func() (core.Term, error) { return term(core.NewLet(mustVar(t, "w", ty()), nil, s)) }, core.Type{}, "core: let w: operand is nil"},
		{"let nil body", func() (core.Term, error) { return term(core.NewLet(mustVar(t, "w", ty()), s, nil)) }, core.Type{}, "core: let w: body is nil"},
		{"let tuple bound", func() (core.Term, error) { return term(core.NewLet(mustVar(t, "w", ty()), tup, s)) }, core.Type{}, "core: let w: operand is a tuple; tuples are only allowed as a program's result"},
		{"share", func() (core.Term, error) { return term(core.NewShare(3, x34)) }, ty(3, 4), ""},
		{"share nil", func() (core.Term, error) { return term(core.NewShare(3, nil)) }, core.Type{}, "core: share: operand is nil"},
		{"share tuple", func() (core.Term, error) { return term(core.NewShare(3, tup)) }, core.Type{}, "core: share: operand is a tuple; tuples are only allowed as a program's result"},
		{"cond", func() (core.Term, error) { return term(core.NewCond(b, x34, x34)) }, ty(3, 4), ""},
		{"cond condition", func() (core.Term, error) { return term(core.NewCond(bv, x34, x34)) }, core.Type{}, "core: cond: condition has type [3,4] bool, want [] bool"},
		{"cond branches", func() (core.Term, error) { return term(core.NewCond(b, x34, z34)) }, core.Type{}, "core: cond: branch types [3,4] " + D + " and [3,4] " + O + " differ"},
		{"cond nil", func() (core.Term, error) { return term(core.NewCond(b, nil, x34)) }, core.Type{}, "core: cond: operand is nil"},
		// unary
		{"neg int", func() (core.Term, error) { return term(core.NewUnary(core.OpNeg, n34)) }, coretest.I64(3, 4), ""},
		{"abs", func() (core.Term, error) { return term(core.NewUnary(core.OpAbs, x34)) }, ty(3, 4), ""},
		{"sign int", func() (core.Term, error) { return term(core.NewUnary(core.OpSign, k)) }, coretest.I64(), ""},
		{"not", func() (core.Term, error) { return term(core.NewUnary(core.OpNot, bv)) }, coretest.Bool(3, 4), ""},
		{"exp int", func() (core.Term, error) { return term(core.NewUnary(core.OpExp, n34)) }, core.Type{}, "core: exp: operand dtype i64 not supported (want f64 or f32)"},
		{"floor bool", func() (core.Term, error) { return term(core.NewUnary(core.OpFloor, b)) }, core.Type{}, "core: floor: operand dtype bool not supported (want f64 or f32)"},
		{"neg bool", func() (core.Term, error) { return term(core.NewUnary(core.OpNeg, b)) }, core.Type{}, "core: neg: operand dtype bool not supported (want f64, f32 or i64)"},
		{"not float", func() (core.Term, error) { return term(core.NewUnary(core.OpNot, s)) }, core.Type{}, "core: not: operand dtype " + D + " not supported (want bool)"},
		{"unary unknown", func() (core.Term, error) { return term(core.NewUnary(0, s)) }, core.Type{}, "core: unary: unknown operation 0"},
		{"unary nil", func() (core.Term, error) { return term(core.NewUnary(core.OpExp, nil)) }, core.Type{}, "core: exp: operand is nil"},
		{"unary struct literal", func() (core.Term, error) { return term(core.NewUnary(core.OpExp, &core.Var{Name: "x"})) }, core.Type{}, "core: exp: operand *core.Var has no type (build terms with the core constructors)"},
		// cast
		{"cast to int", func() (core.Term, error) { return term(core.NewCast(core.Int64, x34)) }, coretest.I64(3, 4), ""},
		{"cast to other float", func() (core.Term, error) { return term(core.NewCast(other, x34)) }, core.Type{Shape: core.Shape{3, 4}, Dtype: other}, ""},
		{"cast from bool", func() (core.Term, error) { return term(core.NewCast(d, bv)) }, ty(3, 4), ""},
		{"cast invalid", func() (core.Term, error) { return term(core.NewCast(core.InvalidDtype, x34)) }, core.Type{}, "core: cast: invalid target dtype dtype(0)"},
		{"cast nil", func() (core.Term, error) { return term(core.NewCast(d, nil)) }, core.Type{}, "core: cast: operand is nil"},
		// binary
		{"add", func() (core.Term, error) { return term(core.NewBinary(core.OpAdd, x34, x34)) }, ty(3, 4), ""},
		{"div", func() (core.Term, error) { return term(core.NewBinary(core.OpDiv, s, s)) }, ty(), ""},
		{"pow", func() (core.Term, error) { return term(core.NewBinary(core.OpPow, s, s)) }, ty(), ""},
		{"atan2", func() (core.Term, error) { return term(core.NewBinary(core.OpAtan2, x34, x34)) }, ty(3, 4), ""},
		{"max int", func() (core.Term, error) { return term(core.NewBinary(core.OpMax, n34, n34)) }, coretest.I64(3, 4), ""},
		{"quot", func() (core.Term, error) { return term(core.NewBinary(core.OpQuot, k, k)) }, coretest.I64(), ""},
		{"rem", func() (core.Term, error) { return term(core.NewBinary(core.OpRem, n34, n34)) }, coretest.I64(3, 4), ""},
		{"lt", func() (core.Term, error) { return term(core.NewBinary(core.OpLt, x34, x34)) }, coretest.Bool(3, 4), ""},
		{"ge int", func() (core.Term, error) { return term(core.NewBinary(core.OpGe, k, k)) }, coretest.Bool(), ""},
		{"eq bool", func() (core.Term, error) { return term(core.NewBinary(core.OpEq, b, b)) }, coretest.Bool(), ""},
		{"and", func() (core.Term, error) { return term(core.NewBinary(core.OpAnd, bv, bv)) }, coretest.Bool(3, 4), ""},
		{"add shapes", func() (core.Term, error) { return term(core.NewBinary(core.OpAdd, x34, y43)) }, core.Type{}, "core: add: operand shapes [3 4] and [4 3] differ"},
		{"mul dtypes", func() (core.Term, error) { return term(core.NewBinary(core.OpMul, x34, z34)) }, core.Type{}, "core: mul: operand dtypes " + D + " and " + O + " differ"},
		{"sub int and float", func() (core.Term, error) { return term(core.NewBinary(core.OpSub, n34, x34)) }, core.Type{}, "core: sub: operand dtypes i64 and " + D + " differ"},
		{"div int", func() (core.Term, error) { return term(core.NewBinary(core.OpDiv, k, k)) }, core.Type{}, "core: div: operand dtype i64 not supported"},
		{"quot float", func() (core.Term, error) { return term(core.NewBinary(core.OpQuot, s, s)) }, core.Type{}, "core: quot: operand dtype " + D + " not supported"},
		{"lt bool", func() (core.Term, error) { return term(core.NewBinary(core.OpLt, b, b)) }, core.Type{}, "core: lt: operand dtype bool not supported"},
		{"or float", func() (core.Term, error) { return term(core.NewBinary(core.OpOr, s, s)) }, core.Type{}, "core: or: operand dtype " + D + " not supported"},
		{"binary unknown", func() (core.Term, error) { return term(core.NewBinary(99, s, s)) }, core.Type{}, "core: binary: unknown operation 99"},
		{"binary nil", func() (core.Term, error) { return term(core.NewBinary(core.OpAdd, nil, s)) }, core.Type{}, "core: add: operand is nil"},
		{"binary struct literal", func() (core.Term, error) { return term(core.NewBinary(core.OpAdd, s, &core.Lit{F: []float64{1}})) }, core.Type{}, "core: add: operand *core.Lit has no type (build terms with the core constructors)"},
		{"binary tuple", func() (core.Term, error) { return term(core.NewBinary(core.OpAdd, tup, tup)) }, core.Type{}, "core: add: operand is a tuple; tuples are only allowed as a program's result"},
	}
}

// arrayCases are the typing cases of index, the reductions, gather, scatter and index functions.
func (f *typingFixture) arrayCases() []typingCase {
	t, ty, D, x34, s, t9 := f.t, f.ty, f.D, f.x34, f.s, f.t9
	n34, k, bv, i, j, fi := f.n34, f.k, f.bv, f.i, f.j, f.fi
	ok := okTerm(t)
	return []typingCase{
		// index, sumOuter, argmaxOuter
		{"index full", func() (core.Term, error) { return term(core.NewIndex(x34, []core.Term{k, core.ScalarI(1)})) }, ty(), ""},
		{"index partial", func() (core.Term, error) { return term(core.NewIndex(x34, []core.Term{k})) }, ty(4), ""},
		{"index none", func() (core.Term, error) { return term(core.NewIndex(x34, nil)) }, ty(3, 4), ""},
		{"index too many", func() (core.Term, error) { return term(core.NewIndex(t9, []core.Term{k, k})) }, core.Type{}, "core: index: 2 indices into an array of shape [9]"},
		{"index float component", func() (core.Term, error) { return term(core.NewIndex(t9, []core.Term{s})) }, core.Type{}, "core: index: index component 0 has type [] " + D + ", want [] i64"},
		{"index nil component", func() (core.Term, error) { return term(core.NewIndex(x34, []core.Term{k, nil})) }, core.Type{}, "core: index: index component 1 is nil"},
		{"index nil", func() (core.Term, error) { return term(core.NewIndex(nil, nil)) }, core.Type{}, "core: index: operand is nil"},
		{"sumOuter", func() (core.Term, error) { return term(core.NewSumOuter(x34)) }, ty(4), ""},
		{"sumOuter int", func() (core.Term, error) { return term(core.NewSumOuter(n34)) }, coretest.I64(4), ""},
		{"sumOuter scalar", func() (core.Term, error) { return term(core.NewSumOuter(s)) }, core.Type{}, "core: sumOuter: operand is a scalar (shape []), want rank ≥ 1"},
		{"sumOuter bool", func() (core.Term, error) { return term(core.NewSumOuter(bv)) }, core.Type{}, "core: sumOuter: operand dtype bool not supported, want f64, f32 or i64"},
		{"argmaxOuter", func() (core.Term, error) { return term(core.NewArgmaxOuter(x34)) }, coretest.I64(4), ""},
		{"argmaxOuter scalar", func() (core.Term, error) { return term(core.NewArgmaxOuter(k)) }, core.Type{}, "core: argmaxOuter: operand is a scalar (shape []), want rank ≥ 1"},
		{"argmaxOuter bool", func() (core.Term, error) { return term(core.NewArgmaxOuter(bv)) }, core.Type{}, "core: argmaxOuter: operand dtype bool not supported, want f64, f32 or i64"},
		// gather: result [5,4] from x : [3,4] with one variable and one output index
		{"gather", func() (core.Term, error) {
			return term(core.NewGather(core.Shape{5, 4}, x34, mustFn(t, []*core.Var{i}, i)))
		}, ty(5, 4), ""},
		{"gather transpose", func() (core.Term, error) {
			return term(core.NewGather(core.Shape{4, 3}, x34, mustFn(t, []*core.Var{i, j}, j, i)))
		}, ty(4, 3), ""},
		{"gather constant", func() (core.Term, error) {
			return term(core.NewGather(core.Shape{4}, x34, mustFn(t, nil, core.ScalarI(2))))
		}, ty(4), ""},
		{"gather too many outputs", func() (core.Term, error) {
			return term(core.NewGather(core.Shape{5}, t9, mustFn(t, []*core.Var{i}, i, i)))
		}, core.Type{}, "core: gather: index function returns 2 indices into an operand of shape [9]"},
		{"gather too many variables", func() (core.Term, error) {
			return term(core.NewGather(core.Shape{5}, t9, mustFn(t, []*core.Var{i, j}, i)))
		}, core.Type{}, "core: gather: index function takes 2 indices but the result shape [5] has rank 1"},
		{"gather inner", func() (core.Term, error) {
			return term(core.NewGather(core.Shape{5, 3}, x34, mustFn(t, []*core.Var{i}, i)))
		}, core.Type{}, "core: gather: result shape [5 3] and operand shape [3 4] differ after their indexed dimensions (1 and 1): [3] and [4]"},
		{"gather negative", func() (core.Term, error) {
			return term(core.NewGather(core.Shape{-5}, t9, mustFn(t, []*core.Var{i}, i)))
		}, core.Type{}, "core: gather: negative dimension in shape [-5]"},
		{"gather nil fn", func() (core.Term, error) { return term(core.NewGather(core.Shape{9}, t9, nil)) }, core.Type{}, "core: gather: index function is nil"},
		{"gather nil", func() (core.Term, error) {
			return term(core.NewGather(core.Shape{9}, nil, mustFn(t, []*core.Var{i}, i)))
		}, core.Type{}, "core: gather: operand is nil"},
		// scatter: §3.3 example shape, and a 2-D one
		{"scatter", func() (core.Term, error) {
			return term(core.NewScatter(core.Shape{6}, t9, mustFn(t, []*core.Var{i}, ok(term(core.NewBinary(core.OpQuot, i, core.ScalarI(2)))))))
		}, ty(6), ""},
		{"scatter rows", func() (core.Term, error) {
			return term(core.NewScatter(core.Shape{2, 4}, x34, mustFn(t, []*core.Var{i}, core.ScalarI(0))))
		}, ty(2, 4), ""},
		{"scatter int", func() (core.Term, error) {
			return term(core.NewScatter(core.Shape{1}, n34, mustFn(t, []*core.Var{i, j}, core.ScalarI(0))))
		}, coretest.I64(1), ""},
		{"scatter bool", func() (core.Term, error) {
			return term(core.NewScatter(core.Shape{3, 4}, bv, mustFn(t, []*core.Var{i}, i)))
		}, core.Type{}, "core: scatter: operand dtype bool not supported, want f64, f32 or i64"},
		{"scatter too many variables", func() (core.Term, error) {
			return term(core.NewScatter(core.Shape{9}, t9, mustFn(t, []*core.Var{i, j}, i)))
		}, core.Type{}, "core: scatter: index function takes 2 indices into an operand of shape [9]"},
		{"scatter too many outputs", func() (core.Term, error) {
			return term(core.NewScatter(core.Shape{9}, t9, mustFn(t, []*core.Var{i}, i, i)))
		}, core.Type{}, "core: scatter: index function returns 2 indices but the result shape [9] has rank 1"},
		{"scatter inner", func() (core.Term, error) {
			return term(core.NewScatter(core.Shape{2, 3}, x34, mustFn(t, []*core.Var{i}, i)))
		}, core.Type{}, "core: scatter: result shape [2 3] and operand shape [3 4] differ after their indexed dimensions (1 and 1): [3] and [4]"},
		{"scatter nil fn", func() (core.Term, error) { return term(core.NewScatter(core.Shape{9}, t9, nil)) }, core.Type{}, "core: scatter: index function is nil"},
		// index functions
		{"index fn float var", func() (core.Term, error) {
			_, err := core.NewIndexFn([]*core.Var{fi}, []core.Term{k})
			return nil, err
		}, core.Type{}, "core: index function: variable fi has type [] " + D + ", want [] i64"},
		{"index fn twice", func() (core.Term, error) {
			_, err := core.NewIndexFn([]*core.Var{i, i}, []core.Term{i})
			return nil, err
		}, core.Type{}, "core: index function: variable i bound twice"},
		{"index fn float out", func() (core.Term, error) {
			_, err := core.NewIndexFn([]*core.Var{i}, []core.Term{s})
			return nil, err
		}, core.Type{}, "core: index function: index component 0 has type [] " + D + ", want [] i64"},
		{"index fn nil var", func() (core.Term, error) {
			_, err := core.NewIndexFn([]*core.Var{nil}, nil)
			return nil, err
		}, core.Type{}, "core: index function: variable 0 is nil"},
	}
}

// shapeCases are the typing cases of fromVector, replicate, tr, reshape, build1, iota, matmul and tuple.
func (f *typingFixture) shapeCases() []typingCase {
	t, ty, D, other, O, x34 := f.t, f.ty, f.D, f.other, f.O, f.x34
	y43, z34, s, t9, n34, i := f.y43, f.z34, f.s, f.t9, f.n34, f.i
	fi, tup := f.fi, f.tup
	return []typingCase{
		// fromVector, replicate, tr, reshape
		{"fromVector", func() (core.Term, error) { return term(core.NewFromVector([]core.Term{x34, x34, x34})) }, ty(3, 3, 4), ""},
		{"fromVector scalars", func() (core.Term, error) { return term(core.NewFromVector([]core.Term{s})) }, ty(1), ""},
		{"fromVector empty", func() (core.Term, error) { return term(core.NewFromVector(nil)) }, core.Type{}, "core: fromVector: no elements (need at least one to know the type)"},
		{"fromVector mismatch", func() (core.Term, error) { return term(core.NewFromVector([]core.Term{x34, z34})) }, core.Type{}, "core: fromVector: element 1 has type [3,4] " + O + ", element 0 has [3,4] " + D},
		{"fromVector nil", func() (core.Term, error) { return term(core.NewFromVector([]core.Term{x34, nil})) }, core.Type{}, "core: fromVector: operand is nil"},
		{"replicate", func() (core.Term, error) { return term(core.NewReplicate(2, x34)) }, ty(2, 3, 4), ""},
		{"replicate zero", func() (core.Term, error) { return term(core.NewReplicate(0, s)) }, ty(0), ""},
		{"replicate negative", func() (core.Term, error) { return term(core.NewReplicate(-1, s)) }, core.Type{}, "core: replicate: negative count -1"},
		{"tr", func() (core.Term, error) { return term(core.NewTranspose([]int{1, 0}, x34)) }, ty(4, 3), ""},
		{"tr prefix", func() (core.Term, error) {
			return term(core.NewTranspose([]int{1, 0}, mustVar(t, "r", ty(2, 3, 4))))
		}, ty(3, 2, 4), ""},
		{"tr cycle", func() (core.Term, error) {
			return term(core.NewTranspose([]int{2, 0, 1}, mustVar(t, "r", ty(2, 3, 4))))
		}, ty(4, 2, 3), ""},
		{"tr empty", func() (core.Term, error) { return term(core.NewTranspose(nil, x34)) }, ty(3, 4), ""},
		{"tr long", func() (core.Term, error) { return term(core.NewTranspose([]int{0, 1, 2}, x34)) }, core.Type{}, "core: tr: permutation [0 1 2] longer than the rank of shape [3 4]"},
		{"tr not perm", func() (core.Term, error) { return term(core.NewTranspose([]int{1, 1}, x34)) }, core.Type{}, "core: tr: [1 1] is not a permutation of 0..1"},
		{"reshape", func() (core.Term, error) { return term(core.NewReshape(core.Shape{2, 6}, x34)) }, ty(2, 6), ""},
		{"reshape scalar", func() (core.Term, error) { return term(core.NewReshape(core.Shape{1, 1}, s)) }, ty(1, 1), ""},
		{"reshape size", func() (core.Term, error) { return term(core.NewReshape(core.Shape{5}, x34)) }, core.Type{}, "core: reshape: cannot reshape [3 4] (12 elements) to [5] (5 elements)"},
		{"reshape negative", func() (core.Term, error) { return term(core.NewReshape(core.Shape{-12}, x34)) }, core.Type{}, "core: reshape: negative dimension in shape [-12]"},
		// build1, iota, matmul, tuple
		{"build1", func() (core.Term, error) { return term(core.NewBuild1(5, i, x34)) }, ty(5, 3, 4), ""},
		{"build1 negative", func() (core.Term, error) { return term(core.NewBuild1(-5, i, x34)) }, core.Type{}, "core: build1: negative size -5"},
		{"build1 float var", func() (core.Term, error) { return term(core.NewBuild1(5, fi, x34)) }, core.Type{}, "core: build1: variable fi has type [] " + D + ", want [] i64"},
		{"build1 nil var", func() (core.Term, error) { return term(core.NewBuild1(5, nil, x34)) }, core.Type{}, "core: build1: variable is nil"},
		{"build1 nil body", func() (core.Term, error) { return term(core.NewBuild1(5, i, nil)) }, core.Type{}, "core: build1: operand is nil"},
		{"iota", func() (core.Term, error) { return term(core.NewIota(5)) }, coretest.I64(5), ""},
		{"iota negative", func() (core.Term, error) { return term(core.NewIota(-1)) }, core.Type{}, "core: iota: negative size -1"},
		{"matmul", func() (core.Term, error) { return term(core.NewMatMul(x34, y43)) }, ty(3, 3), ""},
		{"matmul vectors", func() (core.Term, error) { return term(core.NewMatMul(t9, t9)) }, core.Type{}, "core: matmul: operand shapes [9] and [9], want two matrices or two stacks of matrices of one rank"},
		{"matmul batched", func() (core.Term, error) {
			return term(core.NewMatMul(mustVar(t, "bx", ty(2, 5, 3, 4)), mustVar(t, "by", ty(2, 5, 4, 6))))
		}, ty(2, 5, 3, 6), ""},
		{"matmul batched ranks", func() (core.Term, error) {
			return term(core.NewMatMul(mustVar(t, "bx", ty(2, 3, 4)), y43))
		}, core.Type{}, "core: matmul: operand shapes [2 3 4] and [4 3], want two matrices or two stacks of matrices of one rank"},
		{"matmul batched batch", func() (core.Term, error) {
			return term(core.NewMatMul(mustVar(t, "bx", ty(2, 3, 4)), mustVar(t, "by", ty(3, 4, 6))))
		}, core.Type{}, "core: matmul: operand shapes [2 3 4] and [3 4 6] have different batch dimensions [2] and [3]"},
		{"matmul batched inner", func() (core.Term, error) {
			return term(core.NewMatMul(mustVar(t, "bx", ty(2, 3, 4)), mustVar(t, "by", ty(2, 3, 6))))
		}, core.Type{}, "core: matmul: operand shapes [2 3 4] and [2 3 6] do not match (inner dimensions 4 and 3)"},
		{"matmul inner", func() (core.Term, error) { return term(core.NewMatMul(x34, x34)) }, core.Type{}, "core: matmul: operand shapes [3 4] and [3 4] do not match (inner dimensions 4 and 3)"},
		{"matmul dtypes", func() (core.Term, error) {
			return term(core.NewMatMul(x34, mustVar(t, "w", core.Type{Shape: core.Shape{4, 2}, Dtype: other})))
		}, core.Type{}, "core: matmul: operand dtypes " + D + " and " + O + ", want one float dtype"},
		{"matmul int", func() (core.Term, error) { return term(core.NewMatMul(n34, mustVar(t, "m", coretest.I64(4, 2)))) }, core.Type{}, "core: matmul: operand dtypes i64 and i64, want one float dtype"},
		{"tuple", func() (core.Term, error) { return term(core.NewTuple([]core.Term{x34, s})) }, core.Type{}, ""},
		{"tuple nested", func() (core.Term, error) { return term(core.NewTuple([]core.Term{tup})) }, core.Type{}, "core: tuple: operand is a tuple; tuples are only allowed as a program's result"},
		{"tuple nil", func() (core.Term, error) { return term(core.NewTuple([]core.Term{nil})) }, core.Type{}, "core: tuple: operand is nil"},
	}
}

// okTerm returns a checker for (term, error) pairs that fails the test on error:
// ok(term(core.NewSumOuter(x))).
func okTerm(t testing.TB) func(core.Term, error) core.Term {
	return func(x core.Term, err error) core.Term {
		t.Helper()
		return must(t, x, err)
	}
}

// must returns x, failing the test if err is not nil.
func must[T any](t testing.TB, x T, err error) T {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	return x
}

// mustFn makes the index function \vs -> out, failing the test on error.
func mustFn(t testing.TB, vs []*core.Var, out ...core.Term) *core.IndexFn {
	t.Helper()
	f, err := core.NewIndexFn(vs, out)
	return must(t, f, err)
}

// TestConstructFloat32Rounding checks that f32 literals hold float32 values.
func TestConstructFloat32Rounding(t *testing.T) {
	l, err := core.NewLitF(coretest.F32(2), []float64{0.1, 1e40})
	if err != nil {
		t.Fatal(err)
	}
	if l.F[0] != float64(float32(0.1)) || !math.IsInf(l.F[1], 1) {
		t.Errorf("f32 literal values %v", l.F)
	}
	if v := core.ScalarF(core.Float32, 0.1).F[0]; v != float64(float32(0.1)) {
		t.Errorf("ScalarF f32 0.1 = %v", v)
	}
	if v := core.ScalarF(core.Float64, 0.1).F[0]; v != 0.1 {
		t.Errorf("ScalarF f64 0.1 = %v", v)
	}
}

// TestConstructProgram checks NewProgram's checks (scoping, types, tuples, struct literals).
func TestConstructProgram(t *testing.T) {
	ok := okTerm(t)
	x := mustVar(t, "x", coretest.F64(3))
	xWrong := mustVar(t, "x", coretest.F64(4))
	y := mustVar(t, "y", coretest.F64(3))
	sum := ok(term(core.NewSumOuter(x)))
	pair := ok(term(core.NewTuple([]core.Term{x, sum})))
	cases := []struct {
		name   string
		params []*core.Var
		body   core.Term
		err    string
	}{
		{"ok", []*core.Var{x}, sum, ""},
		{"tuple result", []*core.Var{x}, pair, ""},
		{"tuple under let", []*core.Var{x}, ok(term(core.NewLet(y, x, pair))), ""},
		{"nil body", []*core.Var{x}, nil, "core: program: nil program or body"},
		{"nil param", []*core.Var{nil}, x, "core: program: nil parameter"},
		{"duplicate", []*core.Var{x, x}, x, "core: program: parameter x declared twice"},
		{"unbound", []*core.Var{x}, ok(term(core.NewBinary(core.OpAdd, x, y))), "core: program: free variable y ([3] f64) is not a parameter"},
		{"wrong param type", []*core.Var{xWrong}, sum, "core: program: parameter x has type [4] f64 but is used with type [3] f64"},
		{"tuple below top", []*core.Var{x}, &core.Binary{Op: core.OpAdd, X: pair, Y: x}, "core: program: a tuple appears below the top level"},
		{"struct literal", []*core.Var{x}, &core.Iota{N: 3}, "core: program: node *core.Iota has no type (build terms with the core constructors)"},
		{"struct literal param", []*core.Var{{Name: "x"}}, x, "core: program: parameter x has no type"},
	}
	for _, c := range cases {
		_, err := core.NewProgram(c.params, c.body)
		if c.err == "" && err != nil {
			t.Errorf("%s: %v", c.name, err)
		}
		if c.err != "" && (err == nil || err.Error() != c.err) {
			t.Errorf("%s: error %v, want %s", c.name, err, c.err)
		}
	}
}

// TestBuilderSticky checks that the Builder keeps the first error and returns nil after it.
func TestBuilderSticky(t *testing.T) {
	var b core.Builder
	x := b.Var("x", coretest.F64(3, 4))
	y := b.Var("y", coretest.F64(4, 3))
	bad := b.Add(x, y)
	after := b.Unary(core.OpExp, x)
	if bad != nil || after != nil {
		t.Errorf("builder returned terms after an error: %v %v", bad, after)
	}
	if err := b.Err(); err == nil || err.Error() != "core: add: operand shapes [3 4] and [4 3] differ" {
		t.Errorf("Err = %v", err)
	}
	var b2 core.Builder
	if r := b2.SumOuter(nil); r != nil || b2.Err() == nil || !strings.Contains(b2.Err().Error(), "nil") {
		t.Errorf("nil operand: %v, %v", r, b2.Err())
	}
}

// TestBuilderFullSelect: Full is the constant array of every dtype (i64 truncates, bool is
// v ≠ 0) and refuses an invalid dtype; Select picks element-wise by a bool mask, and a NaN or
// infinity in the branch not selected does not reach the result (values by core.Eval,
// compared with core.Equal).
func TestBuilderFullSelect(t *testing.T) {
	lit := func(l *core.Lit, err error) *core.Lit { t.Helper(); return must(t, l, err) }
	f32 := core.Type{Shape: core.Shape{2}, Dtype: core.Float32}
	cases := []struct {
		typ  core.Type
		v    float64
		want *core.Lit
	}{
		{coretest.F64(2, 3), 1.5, lit(core.NewLitF(coretest.F64(2, 3), []float64{1.5, 1.5, 1.5, 1.5, 1.5, 1.5}))},
		{f32, 0.1, lit(core.NewLitF(f32, []float64{0.1, 0.1}))},
		{core.Type{Shape: core.Shape{3}, Dtype: core.Int64}, -2.7, lit(core.NewLitI(core.Shape{3}, []int64{-2, -2, -2}))},
		{core.Type{Shape: core.Shape{2}, Dtype: core.Bool}, 0.5, lit(core.NewLitB(core.Shape{2}, []bool{true, true}))},
		{core.Scalar(core.Float64), -3, lit(core.NewLitF(core.Scalar(core.Float64), []float64{-3}))},
	}
	for _, c := range cases {
		var b core.Builder
		if got := evalClosed(t, &b, b.Full(c.typ, c.v)); !core.Equal(got, c.want) {
			t.Errorf("Full(%v, %v) = %v, want %v", c.typ, c.v, got, c.want)
		}
	}
	var b core.Builder
	if r := b.Full(core.Type{Shape: core.Shape{2}}, 1); r != nil || b.Err() == nil || !strings.Contains(b.Err().Error(), "dtype") {
		t.Errorf("Full of an invalid dtype: %v, %v", r, b.Err())
	}

	var sb core.Builder
	mask := lit(core.NewLitB(core.Shape{2, 2}, []bool{true, false, false, true}))
	x := lit(core.NewLitF(coretest.F64(2, 2), []float64{1, math.NaN(), math.Inf(1), 4}))
	y := lit(core.NewLitF(coretest.F64(2, 2), []float64{math.Inf(-1), 2, 3, math.NaN()}))
	want := lit(core.NewLitF(coretest.F64(2, 2), []float64{1, 2, 3, 4}))
	if got := evalClosed(t, &sb, sb.Select(core.NewNamer(mask, x, y), mask, x, y)); !core.Equal(got, want) {
		t.Errorf("Select = %v, want %v", got, want)
	}
	var s0 core.Builder
	one, two := core.ScalarF(core.Float64, 1), core.ScalarF(core.Float64, 2)
	if got := evalClosed(t, &s0, s0.Select(core.NewNamer(), core.ScalarB(false), one, two)); !core.Equal(got, two) {
		t.Errorf("scalar Select = %v, want 2", got)
	}
}

// evalClosed evaluates a closed term built with b.
func evalClosed(t *testing.T, b *core.Builder, body core.Term) *core.Lit {
	t.Helper()
	v, err := core.Eval(coretest.MustProgram(t, b, nil, body), nil)
	return must(t, v, err)
}
