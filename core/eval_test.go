package core

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
)

// ---- helpers ----

var floatDtypes = []Dtype{Float64, Float32}

func ty(d Dtype, sh ...int) Type { return Type{Shape: Shape(sh), Dtype: d} }

// fd makes a float literal of dtype d (values rounded to float32 for Float32).
func fd(d Dtype, sh []int, vals ...float64) *Lit {
	return mustLit(NewLitF(Type{Shape: Shape(sh), Dtype: d}, vals))
}

func id(sh []int, vals ...int64) *Lit { return mustLit(NewLitI(Shape(sh), vals)) }

func bd(sh []int, vals ...bool) *Lit { return mustLit(NewLitB(Shape(sh), vals)) }

// mustLit panics when a test's own literal is malformed (a bug in the test).
func mustLit(l *Lit, err error) *Lit {
	if err != nil {
		panic(err)
	}
	return l
}

// floats returns a float literal's values.
func floats(t *testing.T, l *Lit) []float64 {
	t.Helper()
	if !l.Type().Dtype.IsFloat() {
		t.Fatalf("not a float literal: %v", l.Type())
	}
	return append([]float64{}, l.F...)
}

func sameFloat(a, b float64, tol float64) bool {
	if math.IsNaN(a) || math.IsNaN(b) {
		return math.IsNaN(a) && math.IsNaN(b)
	}
	if math.IsInf(a, 0) || math.IsInf(b, 0) {
		return a == b
	}
	return math.Abs(a-b) <= tol*(1+math.Abs(b))
}

func tolOf(d Dtype) float64 {
	if d == Float32 {
		return 1e-6
	}
	return 1e-14
}

func checkFloats(t *testing.T, what string, got []float64, want []float64, tol float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: got %d values %v, want %d values %v", what, len(got), got, len(want), want)
	}
	for i := range want {
		if !sameFloat(got[i], want[i], tol) {
			t.Fatalf("%s: element %d = %v, want %v (got %v, want %v)", what, i, got[i], want[i], got, want)
		}
	}
}

func mustProg(t *testing.T, b *Builder, params []*Var, body Term) *Program {
	t.Helper()
	if err := b.Err(); err != nil {
		t.Fatalf("building: %v", err)
	}
	p, err := NewProgram(params, body)
	if err != nil {
		t.Fatalf("NewProgram: %v", err)
	}
	return p
}

func evalF(t *testing.T, p *Program, args map[string]*Lit) []float64 {
	t.Helper()
	r, err := Eval(p, args)
	if err != nil {
		t.Fatalf("Eval %s: %v", p, err)
	}
	return floats(t, r)
}

func evalI(t *testing.T, p *Program, args map[string]*Lit) []int64 {
	t.Helper()
	r, err := Eval(p, args)
	if err != nil {
		t.Fatalf("Eval %s: %v", p, err)
	}
	if r.Type().Dtype != Int64 {
		t.Fatalf("Eval %s: dtype %v, want int64", p, r.Type().Dtype)
	}
	return append([]int64{}, r.I...)
}

func evalB(t *testing.T, p *Program, args map[string]*Lit) []bool {
	t.Helper()
	r, err := Eval(p, args)
	if err != nil {
		t.Fatalf("Eval %s: %v", p, err)
	}
	return append([]bool{}, r.B...)
}

// ---- element-wise ----

func TestEvalUnaryFloat(t *testing.T) {
	xs := []float64{-2, -0.5, 0, 1.5, 3}
	sig := func(x float64) float64 { return 1 / (1 + math.Exp(-x)) }
	sgn := func(x float64) float64 {
		if x > 0 {
			return 1
		}
		if x < 0 {
			return -1
		}
		return 0
	}
	cases := []struct {
		op UnOp
		f  func(float64) float64
	}{
		{OpNeg, func(x float64) float64 { return -x }}, {OpAbs, math.Abs}, {OpSign, sgn},
		{OpExp, math.Exp}, {OpLog, math.Log}, {OpSqrt, math.Sqrt}, {OpSin, math.Sin},
		{OpCos, math.Cos}, {OpTan, math.Tan}, {OpTanh, math.Tanh}, {OpSigmoid, sig},
		{OpRecip, func(x float64) float64 { return 1 / x }}, {OpFloor, math.Floor},
		{OpCeil, math.Ceil}, {OpLog1p, math.Log1p}, {OpExpm1, math.Expm1},
	}
	for _, d := range floatDtypes {
		for _, c := range cases {
			var b Builder
			x := b.Var("x", ty(d, 5))
			p := mustProg(t, &b, []*Var{x}, b.Unary(c.op, x))
			got := evalF(t, p, map[string]*Lit{"x": fd(d, []int{5}, xs...)})
			want := make([]float64, len(xs))
			for i, v := range xs {
				if d == Float32 {
					v = float64(float32(v))
				}
				want[i] = c.f(v)
			}
			checkFloats(t, fmt.Sprintf("%v %v", c.op, d), got, want, tolOf(d))
		}
	}
}

func TestEvalUnaryEdges(t *testing.T) {
	for _, d := range floatDtypes {
		var b Builder
		x := b.Var("x", ty(d, 4))
		body := b.Tuple(b.Unary(OpSigmoid, x), b.Unary(OpRecip, x), b.Unary(OpSign, x))
		p := mustProg(t, &b, []*Var{x}, body)
		rs, err := EvalTuple(p, map[string]*Lit{"x": fd(d, []int{4}, -800, 800, 0, math.NaN())})
		if err != nil {
			t.Fatal(err)
		}
		checkFloats(t, "sigmoid", floats(t, rs[0]), []float64{0, 1, 0.5, math.NaN()}, 0)
		checkFloats(t, "recip", floats(t, rs[1]), []float64{-1.0 / 800, 1.0 / 800, math.Inf(1), math.NaN()}, tolOf(d))
		checkFloats(t, "sign", floats(t, rs[2]), []float64{-1, 1, 0, math.NaN()}, 0)
	}
}

func TestEvalBinaryFloat(t *testing.T) {
	xs := []float64{1, -2, 3, 0.5}
	ys := []float64{2, 4, -1, 0.5}
	cases := []struct {
		op   BinOp
		want []float64
	}{
		{OpAdd, []float64{3, 2, 2, 1}},
		{OpSub, []float64{-1, -6, 4, 0}},
		{OpMul, []float64{2, -8, -3, 0.25}},
		{OpDiv, []float64{0.5, -0.5, -3, 1}},
		{OpPow, []float64{1, 16, 1.0 / 3, math.Sqrt(0.5)}},
		{OpMax, []float64{2, 4, 3, 0.5}},
		{OpMin, []float64{1, -2, -1, 0.5}},
		{OpAtan2, []float64{math.Atan2(1, 2), math.Atan2(-2, 4), math.Atan2(3, -1), math.Pi / 4}},
	}
	for _, d := range floatDtypes {
		for _, c := range cases {
			var b Builder
			x := b.Var("x", ty(d, 4))
			y := b.Var("y", ty(d, 4))
			p := mustProg(t, &b, []*Var{x, y}, b.Binary(c.op, x, y))
			got := evalF(t, p, map[string]*Lit{"x": fd(d, []int{4}, xs...), "y": fd(d, []int{4}, ys...)})
			checkFloats(t, fmt.Sprintf("%v %v", c.op, d), got, c.want, tolOf(d))
		}
	}
}

func TestEvalFloat32Arithmetic(t *testing.T) {
	// 1 + 2^-30 is 1 in float32 but not in float64: f32 must compute in float32.
	var b Builder
	x := b.Var("x", ty(Float32, 1))
	y := b.Var("y", ty(Float32, 1))
	p := mustProg(t, &b, []*Var{x, y}, b.Sub(b.Add(x, y), x))
	got := evalF(t, p, map[string]*Lit{"x": fd(Float32, []int{1}, 1), "y": fd(Float32, []int{1}, math.Pow(2, -30))})
	if got[0] != 0 {
		t.Fatalf("(1 + 2^-30) - 1 in f32 = %v, want 0", got[0])
	}
}

func TestEvalCompareLogic(t *testing.T) {
	for _, d := range floatDtypes {
		cases := []struct {
			op   BinOp
			want []bool
		}{
			{OpLt, []bool{true, false, false, false}},
			{OpLe, []bool{true, true, false, false}},
			{OpGt, []bool{false, false, true, false}},
			{OpGe, []bool{false, true, true, false}},
			{OpEq, []bool{false, true, false, false}},
			{OpNe, []bool{true, false, true, true}},
		}
		for _, c := range cases {
			var b Builder
			x := b.Var("x", ty(d, 4))
			y := b.Var("y", ty(d, 4))
			p := mustProg(t, &b, []*Var{x, y}, b.Binary(c.op, x, y))
			got := evalB(t, p, map[string]*Lit{"x": fd(d, []int{4}, 1, 2, 3, math.NaN()), "y": fd(d, []int{4}, 2, 2, 1, 1)})
			if fmt.Sprint(got) != fmt.Sprint(c.want) {
				t.Fatalf("%v %v: got %v want %v", c.op, d, got, c.want)
			}
		}
	}
	var b Builder
	x := b.Var("x", ty(Bool, 4))
	y := b.Var("y", ty(Bool, 4))
	p := mustProg(t, &b, []*Var{x, y}, b.Tuple(b.Binary(OpAnd, x, y), b.Binary(OpOr, x, y), b.Unary(OpNot, x), b.Binary(OpEq, x, y)))
	rs, err := EvalTuple(p, map[string]*Lit{"x": bd([]int{4}, true, true, false, false), "y": bd([]int{4}, true, false, true, false)})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"[true false false false]", "[true true true false]", "[false false true true]", "[true false false true]"}
	for i, w := range want {
		if fmt.Sprint(rs[i].B) != w {
			t.Fatalf("logic result %d: got %v want %s", i, rs[i].B, w)
		}
	}
}

func TestEvalIntOps(t *testing.T) {
	xs := []int64{7, -7, 7, -7, 5, math.MinInt64}
	ys := []int64{2, 2, -2, -2, 0, -1}
	cases := []struct {
		op   BinOp
		want []int64
	}{
		{OpQuot, []int64{3, -3, -3, 3, 0, math.MinInt64}},
		{OpRem, []int64{1, -1, 1, -1, 0, 0}},
		{OpAdd, []int64{9, -5, 5, -9, 5, math.MaxInt64}},
		{OpMul, []int64{14, -14, -14, 14, 0, math.MinInt64}},
		{OpMax, []int64{7, 2, 7, -2, 5, -1}},
		{OpMin, []int64{2, -7, -2, -7, 0, math.MinInt64}},
	}
	for _, c := range cases {
		var b Builder
		x := b.Var("x", ty(Int64, 6))
		y := b.Var("y", ty(Int64, 6))
		p := mustProg(t, &b, []*Var{x, y}, b.Binary(c.op, x, y))
		got := evalI(t, p, map[string]*Lit{"x": id([]int{6}, xs...), "y": id([]int{6}, ys...)})
		if !slices.Equal(got, c.want) {
			t.Fatalf("%v: got %v want %v", c.op, got, c.want)
		}
	}
	var b Builder
	x := b.Var("x", ty(Int64, 3))
	p := mustProg(t, &b, []*Var{x}, b.Tuple(b.Unary(OpNeg, x), b.Unary(OpAbs, x), b.Unary(OpSign, x)))
	rs, err := EvalTuple(p, map[string]*Lit{"x": id([]int{3}, -4, 0, 9)})
	if err != nil {
		t.Fatal(err)
	}
	for i, w := range []string{"[4 0 -9]", "[4 0 9]", "[-1 0 1]"} {
		if fmt.Sprint(rs[i].I) != w {
			t.Fatalf("int unary %d: got %v want %s", i, rs[i].I, w)
		}
	}
}

func TestEvalCast(t *testing.T) {
	for _, d := range floatDtypes {
		var b Builder
		x := b.Var("x", ty(d, 6))
		p := mustProg(t, &b, []*Var{x}, b.Tuple(b.Cast(Int64, x), b.Cast(Bool, x)))
		rs, err := EvalTuple(p, map[string]*Lit{"x": fd(d, []int{6}, 1.7, -1.7, math.NaN(), 1e30, -1e30, 0)})
		if err != nil {
			t.Fatal(err)
		}
		if got := fmt.Sprint(rs[0].I); got != "[1 -1 0 0 0 0]" {
			t.Fatalf("cast %v→i64: %s", d, got)
		}
		if got := fmt.Sprint(rs[1].B); got != "[true true true true true false]" {
			t.Fatalf("cast %v→bool: %s", d, got)
		}
	}
	var b Builder
	i := b.Var("i", ty(Int64, 3))
	bb := b.Var("b", ty(Bool, 2))
	p := mustProg(t, &b, []*Var{i, bb}, b.Tuple(b.Cast(Float32, i), b.Cast(Float64, bb), b.Cast(Int64, bb)))
	rs, err := EvalTuple(p, map[string]*Lit{"i": id([]int{3}, -3, 0, 5), "b": bd([]int{2}, true, false)})
	if err != nil {
		t.Fatal(err)
	}
	if rs[0].Type().Dtype != Float32 || fmt.Sprint(rs[0].F) != "[-3 0 5]" {
		t.Fatalf("i64→f32: %v %v", rs[0].Type(), rs[0])
	}
	if fmt.Sprint(rs[1].F) != "[1 0]" || fmt.Sprint(rs[2].I) != "[1 0]" {
		t.Fatalf("bool casts: %v %v", rs[1], rs[2])
	}
	// f64 → f32 rounds.
	var b2 Builder
	x := b2.Var("x", ty(Float64, 1))
	p2 := mustProg(t, &b2, []*Var{x}, b2.Cast(Float32, x))
	r, err := Eval(p2, map[string]*Lit{"x": fd(Float64, []int{1}, 0.1)})
	if err != nil {
		t.Fatal(err)
	}
	if r.F[0] != float64(float32(0.1)) {
		t.Fatalf("f64→f32: %v", r.F)
	}
}

// ---- array operations ----

func TestEvalIndex(t *testing.T) {
	for _, d := range floatDtypes {
		cases := []struct {
			ix   []int64
			want []float64
		}{
			{[]int64{1}, []float64{4, 5, 6}},
			{[]int64{1, 2}, []float64{6}},
			{[]int64{2}, []float64{0, 0, 0}},
			{[]int64{-1}, []float64{0, 0, 0}},
			{[]int64{0, 3}, []float64{0}},
			{[]int64{}, []float64{1, 2, 3, 4, 5, 6}},
		}
		for _, c := range cases {
			var b Builder
			x := b.Var("x", ty(d, 2, 3))
			var ix []Term
			for _, v := range c.ix {
				ix = append(ix, ScalarI(v))
			}
			p := mustProg(t, &b, []*Var{x}, b.Index(x, ix...))
			got := evalF(t, p, map[string]*Lit{"x": fd(d, []int{2, 3}, 1, 2, 3, 4, 5, 6)})
			checkFloats(t, fmt.Sprintf("index %v", c.ix), got, c.want, 0)
		}
	}
}

func TestEvalSumArgmax(t *testing.T) {
	nan := math.NaN()
	for _, d := range floatDtypes {
		var b Builder
		x := b.Var("x", ty(d, 3, 4))
		p := mustProg(t, &b, []*Var{x}, b.Tuple(b.SumOuter(x), b.ArgmaxOuter(x)))
		rs, err := EvalTuple(p, map[string]*Lit{"x": fd(d, []int{3, 4},
			1, 5, nan, nan,
			3, 5, 2, nan,
			3, 4, 7, nan)})
		if err != nil {
			t.Fatal(err)
		}
		checkFloats(t, "sumOuter", floats(t, rs[0]), []float64{7, 14, nan, nan}, 0)
		if got := fmt.Sprint(rs[1].I); got != "[1 0 2 0]" {
			t.Fatalf("argmaxOuter %v: %s, want [1 0 2 0] (first max wins, NaN ignored, all NaN → 0)", d, got)
		}
		// empty outer dimension
		var b2 Builder
		y := b2.Var("y", ty(d, 0, 2))
		p2 := mustProg(t, &b2, []*Var{y}, b2.Tuple(b2.SumOuter(y), b2.ArgmaxOuter(y)))
		rs, err = EvalTuple(p2, map[string]*Lit{"y": fd(d, []int{0, 2})})
		if err != nil {
			t.Fatal(err)
		}
		checkFloats(t, "sumOuter empty", floats(t, rs[0]), []float64{0, 0}, 0)
		if got := fmt.Sprint(rs[1].I); got != "[0 0]" {
			t.Fatalf("argmaxOuter empty: %s", got)
		}
	}
	var b Builder
	x := b.Var("x", ty(Int64, 3))
	p := mustProg(t, &b, []*Var{x}, b.Tuple(b.SumOuter(x), b.ArgmaxOuter(x)))
	rs, err := EvalTuple(p, map[string]*Lit{"x": id([]int{3}, 4, 9, 9)})
	if err != nil {
		t.Fatal(err)
	}
	if rs[0].I[0] != 22 || rs[1].I[0] != 1 {
		t.Fatalf("i64 sum/argmax: %v %v", rs[0], rs[1])
	}
}

func TestEvalShapeOps(t *testing.T) {
	for _, d := range floatDtypes {
		x6 := fd(d, []int{2, 3}, 1, 2, 3, 4, 5, 6)
		type tc struct {
			name string
			mk   func(b *Builder, x Term) Term
			want []float64
		}
		cases := []tc{
			{"tr [1,0]", func(b *Builder, x Term) Term { return b.Transpose([]int{1, 0}, x) }, []float64{1, 4, 2, 5, 3, 6}},
			{"tr [0]", func(b *Builder, x Term) Term { return b.Transpose([]int{0}, x) }, []float64{1, 2, 3, 4, 5, 6}},
			{"reshape [3,2]", func(b *Builder, x Term) Term { return b.Reshape(Shape{3, 2}, x) }, []float64{1, 2, 3, 4, 5, 6}},
			{"replicate 2", func(b *Builder, x Term) Term { return b.Replicate(2, b.Index(x, ScalarI(1))) }, []float64{4, 5, 6, 4, 5, 6}},
			{"fromVector", func(b *Builder, x Term) Term {
				return b.FromVector(b.Index(x, ScalarI(1)), b.Index(x, ScalarI(0)), b.Index(x, ScalarI(1)))
			}, []float64{4, 5, 6, 1, 2, 3, 4, 5, 6}},
			{"matmul", func(b *Builder, x Term) Term { return b.MatMul(x, b.Transpose([]int{1, 0}, x)) }, []float64{14, 32, 32, 77}},
			{"cond true", func(b *Builder, x Term) Term {
				return b.Cond(ScalarB(true), x, b.Unary(OpNeg, x))
			}, []float64{1, 2, 3, 4, 5, 6}},
			{"cond false", func(b *Builder, x Term) Term {
				return b.Cond(b.Binary(OpLt, b.Index(x, ScalarI(0), ScalarI(0)), ScalarF(d, 0)), x, b.Unary(OpNeg, x))
			}, []float64{-1, -2, -3, -4, -5, -6}},
		}
		for _, c := range cases {
			var b Builder
			x := b.Var("x", ty(d, 2, 3))
			p := mustProg(t, &b, []*Var{x}, c.mk(&b, x))
			checkFloats(t, c.name, evalF(t, p, map[string]*Lit{"x": x6}), c.want, 0)
		}
		// 3-D transposes against a naive loop.
		var b Builder
		x := b.Var("x", ty(d, 2, 3, 4))
		perms := [][]int{{2, 0, 1}, {1, 0}, {0, 2, 1}, {1, 2, 0}}
		vals := make([]float64, 24)
		for i := range vals {
			vals[i] = float64(i)
		}
		for _, perm := range perms {
			var bb Builder
			p := mustProg(t, &bb, []*Var{x}, bb.Transpose(perm, x))
			got := evalF(t, p, map[string]*Lit{"x": fd(d, []int{2, 3, 4}, vals...)})
			xs := []int{2, 3, 4}
			full := append(append([]int{}, perm...), []int{0, 1, 2}[len(perm):]...)
			os := []int{xs[full[0]], xs[full[1]], xs[full[2]]}
			var want []float64
			for a := 0; a < os[0]; a++ {
				for c := 0; c < os[1]; c++ {
					for e := 0; e < os[2]; e++ {
						var in [3]int
						in[full[0]], in[full[1]], in[full[2]] = a, c, e
						want = append(want, vals[in[0]*12+in[1]*4+in[2]])
					}
				}
			}
			checkFloats(t, fmt.Sprintf("tr %v", perm), got, want, 0)
		}
	}
	var b Builder
	p := mustProg(t, &b, nil, b.Iota(4))
	if got := evalI(t, p, nil); !slices.Equal(got, []int64{0, 1, 2, 3}) {
		t.Fatalf("iota: %v", got)
	}
}

func TestEvalMatMul(t *testing.T) {
	for _, d := range floatDtypes {
		var b Builder
		x := b.Var("x", ty(d, 2, 3))
		y := b.Var("y", ty(d, 3, 2))
		p := mustProg(t, &b, []*Var{x, y}, b.MatMul(x, y))
		got := evalF(t, p, map[string]*Lit{
			"x": fd(d, []int{2, 3}, 1, 2, 3, 4, 5, 6),
			"y": fd(d, []int{3, 2}, 7, 8, 9, 10, 11, 12)})
		checkFloats(t, "matmul", got, []float64{58, 64, 139, 154}, 0)
	}
}

// TestEvalBatchedMatMul checks matmul of stacks against products written out by hand: at each
// batch position the product of that position's matrices.
func TestEvalBatchedMatMul(t *testing.T) {
	for _, d := range floatDtypes {
		cases := []struct {
			name   string
			xs, ys []int
			x, y   []float64
			want   []float64
		}{
			// [[1,2,3],[4,5,6]]·[[7,8],[9,10],[11,12]] = [[58,64],[139,154]];
			// [[1,0,0],[0,1,0]]·[[1,2],[3,4],[5,6]] = [[1,2],[3,4]]
			{"two", []int{2, 2, 3}, []int{2, 3, 2},
				[]float64{1, 2, 3, 4, 5, 6, 1, 0, 0, 0, 1, 0},
				[]float64{7, 8, 9, 10, 11, 12, 1, 2, 3, 4, 5, 6},
				[]float64{58, 64, 139, 154, 1, 2, 3, 4}},
			// batch [2,1]: [1,2]·[[3],[4]] = 11, [5,6]·[[7],[8]] = 83
			{"rank 4", []int{2, 1, 1, 2}, []int{2, 1, 2, 1},
				[]float64{1, 2, 5, 6}, []float64{3, 4, 7, 8}, []float64{11, 83}},
			{"empty batch", []int{0, 2, 3}, []int{0, 3, 2}, nil, nil, nil},
			// k = 0: every product is a zero matrix
			{"empty inner", []int{2, 1, 0}, []int{2, 0, 2}, nil, nil, []float64{0, 0, 0, 0}},
		}
		for _, c := range cases {
			var b Builder
			x := b.Var("x", ty(d, c.xs...))
			y := b.Var("y", ty(d, c.ys...))
			p := mustProg(t, &b, []*Var{x, y}, b.MatMul(x, y))
			got := evalF(t, p, map[string]*Lit{"x": fd(d, c.xs, c.x...), "y": fd(d, c.ys, c.y...)})
			checkFloats(t, "batched matmul "+c.name, got, c.want, 0)
		}
	}
}

func TestSwapLastTwo(t *testing.T) {
	cases := []struct {
		rank int
		want []int
	}{{0, []int{}}, {1, []int{0}}, {2, []int{1, 0}}, {3, []int{0, 2, 1}}, {4, []int{0, 1, 3, 2}}}
	for _, c := range cases {
		if got := SwapLastTwo(c.rank); !slices.Equal(got, c.want) {
			t.Errorf("SwapLastTwo(%d) = %v, want %v", c.rank, got, c.want)
		}
	}
	is := []struct {
		perm []int
		rank int
		want bool
	}{
		{[]int{1, 0}, 2, true}, {[]int{0, 2, 1}, 3, true}, {[]int{0, 1, 3, 2}, 4, true},
		{[]int{1, 0}, 3, false}, {[]int{0, 2, 1}, 4, false}, {nil, 2, false}, {[]int{0, 1}, 2, false},
		{[]int{0}, 1, false}, {[]int{0, 2, 1}, 2, false}, {[]int{2, 1, 0}, 3, false},
	}
	for _, c := range is {
		if got := IsSwapLastTwo(c.perm, c.rank); got != c.want {
			t.Errorf("IsSwapLastTwo(%v, %d) = %v, want %v", c.perm, c.rank, got, c.want)
		}
	}
}

func TestEvalBuild1(t *testing.T) {
	for _, d := range floatDtypes {
		// build1 3 (\i -> index x [2 - i] * 10)  → reversed, scaled
		var b Builder
		x := b.Var("x", ty(d, 3, 2))
		i := b.Var("i", Scalar(Int64))
		body := b.Mul(b.Index(x, b.Sub(ScalarI(2), i)), b.Replicate(2, ScalarF(d, 10)))
		p := mustProg(t, &b, []*Var{x}, b.Build1(3, i, body))
		got := evalF(t, p, map[string]*Lit{"x": fd(d, []int{3, 2}, 1, 2, 3, 4, 5, 6)})
		checkFloats(t, "build1", got, []float64{50, 60, 30, 40, 10, 20}, 0)
		// nested build: build [2,3] (\[i,j] -> cast (i*3+j)) with i shadowed by the inner binder name
		var b2 Builder
		i2 := b2.Var("i", Scalar(Int64))
		j2 := b2.Var("j", Scalar(Int64))
		inner := b2.Build1(3, j2, b2.Cast(d, b2.Add(b2.Mul(i2, ScalarI(3)), j2)))
		p2 := mustProg(t, &b2, nil, b2.Build1(2, i2, inner))
		checkFloats(t, "build [2,3]", evalF(t, p2, nil), []float64{0, 1, 2, 3, 4, 5}, 0)
	}
}

// ---- gather / scatter ----

func TestEvalScatterPaperExample(t *testing.T) {
	for _, d := range floatDtypes {
		var b Builder
		tv := b.Var("t", ty(d, 9))
		i := b.Var("i", Scalar(Int64))
		body := b.Scatter(Shape{6}, tv, b.IndexFn([]*Var{i}, b.Binary(OpQuot, i, ScalarI(2))))
		p := mustProg(t, &b, []*Var{tv}, body)
		got := evalF(t, p, map[string]*Lit{"t": fd(d, []int{9}, 1, 2, 3, 4, 5, 6, 7, 8, 9)})
		checkFloats(t, "§3.3 scatter", got, []float64{3, 7, 11, 15, 9, 0}, 0)
	}
}

func TestEvalGatherScatterCases(t *testing.T) {
	vals := []float64{1, 2, 3, 4, 5, 6}
	for _, d := range floatDtypes {
		type tc struct {
			name string
			mk   func(b *Builder, x, am Term) Term
			want []float64
		}
		iv := func(b *Builder, n string) *Var { return b.Var(n, Scalar(Int64)) }
		cases := []tc{
			{"gather transpose (affine)", func(b *Builder, x, am Term) Term {
				i, j := iv(b, "i"), iv(b, "j")
				return b.Gather(Shape{3, 2}, x, b.IndexFn([]*Var{i, j}, j, i))
			}, []float64{1, 4, 2, 5, 3, 6}},
			{"gather shifted, out of bounds → 0 (affine)", func(b *Builder, x, am Term) Term {
				i, j := iv(b, "i"), iv(b, "j")
				return b.Gather(Shape{2, 3}, x, b.IndexFn([]*Var{i, j}, i, b.Sub(j, ScalarI(1))))
			}, []float64{0, 1, 2, 0, 4, 5}},
			{"gather reversed rows with rest dims (affine, negative coef)", func(b *Builder, x, am Term) Term {
				i := iv(b, "i")
				return b.Gather(Shape{3, 3}, x, b.IndexFn([]*Var{i}, b.Sub(ScalarI(1), i)))
			}, []float64{4, 5, 6, 1, 2, 3, 0, 0, 0}},
			{"gather by index array (closure)", func(b *Builder, x, am Term) Term {
				j := iv(b, "j")
				return b.Gather(Shape{3}, x, b.IndexFn([]*Var{j}, b.Index(am, j), j))
			}, []float64{4, 2, 0}},
			{"gather with quot (closure)", func(b *Builder, x, am Term) Term {
				k := iv(b, "k")
				return b.Gather(Shape{6}, b.Reshape(Shape{6}, x), b.IndexFn([]*Var{k}, b.Binary(OpQuot, k, ScalarI(2))))
			}, []float64{1, 1, 2, 2, 3, 3}},
			{"gather with cond (closure)", func(b *Builder, x, am Term) Term {
				k := iv(b, "k")
				c := b.Cond(b.Binary(OpLt, k, ScalarI(3)), b.Add(k, ScalarI(3)), b.Sub(k, ScalarI(3)))
				return b.Gather(Shape{6}, b.Reshape(Shape{6}, x), b.IndexFn([]*Var{k}, c))
			}, []float64{4, 5, 6, 1, 2, 3}},
			{"gather via a let (scope fallback)", func(b *Builder, x, am Term) Term {
				k := iv(b, "k")
				u := iv(b, "u")
				e := b.Let(u, b.Add(k, k), b.Add(u, ScalarI(1)))
				return b.Gather(Shape{3}, b.Reshape(Shape{6}, x), b.IndexFn([]*Var{k}, e))
			}, []float64{2, 4, 6}},
			{"gather, no index variables", func(b *Builder, x, am Term) Term {
				return b.Gather(Shape{3}, x, b.IndexFn(nil, ScalarI(1)))
			}, []float64{4, 5, 6}},
			{"scatter transpose (affine)", func(b *Builder, x, am Term) Term {
				i, j := iv(b, "i"), iv(b, "j")
				return b.Scatter(Shape{3, 2}, x, b.IndexFn([]*Var{i, j}, j, i))
			}, []float64{1, 4, 2, 5, 3, 6}},
			{"scatter rows, drop out of range and add collisions (affine)", func(b *Builder, x, am Term) Term {
				i := iv(b, "i")
				return b.Scatter(Shape{1, 3}, x, b.IndexFn([]*Var{i}, b.Mul(i, ScalarI(0))))
			}, []float64{5, 7, 9}},
			{"scatter out of range dropped (affine)", func(b *Builder, x, am Term) Term {
				i := iv(b, "i")
				return b.Scatter(Shape{2, 3}, x, b.IndexFn([]*Var{i}, b.Add(i, ScalarI(1))))
			}, []float64{0, 0, 0, 1, 2, 3}},
			{"scatter by index array (closure)", func(b *Builder, x, am Term) Term {
				j := iv(b, "j")
				return b.Scatter(Shape{4}, b.Index(x, ScalarI(1)), b.IndexFn([]*Var{j}, b.Index(am, j)))
			}, []float64{5, 4, 0, 0}},
		}
		for _, c := range cases {
			var b Builder
			x := b.Var("x", ty(d, 2, 3))
			am := b.Var("am", ty(Int64, 3))
			p := mustProg(t, &b, []*Var{x, am}, c.mk(&b, x, am))
			got := evalF(t, p, map[string]*Lit{"x": fd(d, []int{2, 3}, vals...), "am": id([]int{3}, 1, 0, 7)})
			checkFloats(t, c.name+" "+p.String(), got, c.want, 0)
		}
	}
}

// ---- sharing ----

func TestEvalShadowing(t *testing.T) {
	// The same node u = x + 1 (one pointer) under two bindings of x must get two values:
	// let x = a in let y = u in let x = c in u + y  =  (c+1) + (a+1).
	var b Builder
	a := b.Var("a", ty(Float64, 1))
	c := b.Var("c", ty(Float64, 1))
	x := b.Var("x", ty(Float64, 1))
	y := b.Var("y", ty(Float64, 1))
	one, _ := NewLitF(ty(Float64, 1), []float64{1})
	u := b.Add(x, one)
	body := b.Let(x, a, b.Let(y, u, b.Let(x, c, b.Add(u, y))))
	p := mustProg(t, &b, []*Var{a, c}, body)
	got := evalF(t, p, map[string]*Lit{"a": fd(Float64, []int{1}, 10), "c": fd(Float64, []int{1}, 100)})
	checkFloats(t, "shadowing", got, []float64{112}, 0)
}

// ---- API, arguments, errors ----

func TestEvalTupleAndTerm(t *testing.T) {
	var b Builder
	x := b.Var("x", ty(Float64, 2))
	y := b.Var("y", ty(Float64, 2))
	s := b.Var("s", ty(Float64, 2))
	p := mustProg(t, &b, []*Var{x}, b.Let(s, b.Add(x, x), b.Tuple(s, b.SumOuter(s))))
	rs, err := EvalTuple(p, map[string]*Lit{"x": fd(Float64, []int{2}, 1, 2)})
	if err != nil {
		t.Fatal(err)
	}
	checkFloats(t, "tuple 0", floats(t, rs[0]), []float64{2, 4}, 0)
	checkFloats(t, "tuple 1", floats(t, rs[1]), []float64{6}, 0)
	if len(rs[1].Type().Shape) != 0 {
		t.Fatalf("scalar result has shape %v, want ()", rs[1].Type().Shape)
	}
	if _, err := Eval(p, map[string]*Lit{"x": fd(Float64, []int{2}, 1, 2)}); err == nil || !strings.Contains(err.Error(), "tuple") {
		t.Fatalf("Eval of a tuple program: %v", err)
	}
	term := b.Mul(x, y)
	r, err := EvalTerm(term, map[string]*Lit{"x": fd(Float64, []int{2}, 1, 2), "y": fd(Float64, []int{2}, 3, 4), "z": fd(Float64, []int{1}, 0)})
	if err != nil {
		t.Fatal(err)
	}
	checkFloats(t, "EvalTerm", floats(t, r), []float64{3, 8}, 0)
	if _, err := EvalTerm(term, map[string]*Lit{"x": fd(Float64, []int{2}, 1, 2)}); err == nil || !strings.Contains(err.Error(), "y") {
		t.Fatalf("EvalTerm with a missing variable: %v", err)
	}
}

// ---- Compile / RunInto ----

// TestEvalMaxMinSpecial: max and min give NaN when an operand is NaN — also against ±Inf,
// where math.Max(NaN, +Inf) and math.Min(NaN, -Inf) return the infinity — and order the
// signed zeros (max(-0, +0) = +0, min(+0, -0) = -0), as the kernels do.
func TestEvalMaxMinSpecial(t *testing.T) {
	negZero := math.Copysign(0, -1)
	nan, inf := math.NaN(), math.Inf(1)
	xs := []float64{nan, inf, nan, -inf, negZero, 0}
	ys := []float64{inf, nan, -inf, nan, 0, negZero}
	for _, d := range floatDtypes {
		for _, c := range []struct {
			op   BinOp
			want []float64
		}{
			{OpMax, []float64{nan, nan, nan, nan, 0, 0}},
			{OpMin, []float64{nan, nan, nan, nan, negZero, negZero}},
		} {
			var b Builder
			x := b.Var("x", ty(d, 6))
			y := b.Var("y", ty(d, 6))
			p := mustProg(t, &b, []*Var{x, y}, b.Binary(c.op, x, y))
			got := evalF(t, p, map[string]*Lit{"x": fd(d, []int{6}, xs...), "y": fd(d, []int{6}, ys...)})
			for i, w := range c.want {
				same := math.IsNaN(w) && math.IsNaN(got[i]) || got[i] == w && math.Signbit(got[i]) == math.Signbit(w)
				if !same {
					t.Errorf("%v %v (%v, %v) = %v, want %v", c.op, d, xs[i], ys[i], got[i], w)
				}
			}
		}
	}
}
