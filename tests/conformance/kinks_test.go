package conformance

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/bulkad/bulkad/ad"
	"github.com/bulkad/bulkad/core"
	"github.com/bulkad/bulkad/core/tensors"
	"github.com/bulkad/bulkad/raise"
)

// The derivative conventions at kinks, ties and the other points where an operation's
// derivative is a choice, as package ad documents them: abs'(0) = 0 (abs' = sign); on a tie
// of max or min the first argument gets the whole gradient (so ReLU written max x 0 has slope
// 1 at 0 and max 0 x slope 0); floor, ceil, sign, stopgrad and casts to integers have
// derivative 0; pow x y: ∂/∂x is 0 where y = 0 and ∂/∂y is 0 where x^y = 0; atan2 is NaN at
// the origin; second derivative 0 at kinks (the operations above are piecewise linear: their
// second derivative is 0 everywhere). The README states the same.

// kinkCase is one term over x (and y) and the points where its derivative is a convention,
// with the documented gradient at each point (dx, dy).
type kinkCase struct {
	body   string // a term over x, and y when twoArgs, of one float dtype T
	two    bool
	points [][2]float64 // (x, y)
	grads  [][2]float64 // the documented (∂/∂x, ∂/∂y) at each point
	linear bool         // piecewise linear: the second derivative is 0
}

func kinkCases() []kinkCase {
	nz, inf, nan := negZero(), math.Inf(1), math.NaN()
	ties := [][2]float64{{1, 1}, {0, 0}, {0, nz}, {nz, 0}, {-2.5, -2.5}}
	first := [][2]float64{{1, 0}, {1, 0}, {1, 0}, {1, 0}, {1, 0}}
	zeros := func(n int) [][2]float64 { return make([][2]float64, n) }
	return []kinkCase{
		{body: "abs x", points: [][2]float64{{0, 0}, {nz, 0}}, grads: zeros(2), linear: true},
		{body: "max x y", two: true, points: ties, grads: first, linear: true},
		{body: "min x y", two: true, points: ties, grads: first, linear: true},
		{body: "max x 0.0", points: [][2]float64{{0, 0}, {nz, 0}}, grads: [][2]float64{{1, 0}, {1, 0}}, linear: true},
		{body: "max 0.0 x", points: [][2]float64{{0, 0}, {nz, 0}}, grads: zeros(2), linear: true},
		{body: "min x 0.0", points: [][2]float64{{0, 0}, {nz, 0}}, grads: [][2]float64{{1, 0}, {1, 0}}, linear: true},
		{body: "min 0.0 x", points: [][2]float64{{0, 0}, {nz, 0}}, grads: zeros(2), linear: true},
		{body: "floor x", points: [][2]float64{{2, 0}, {-1, 0}, {0, 0}, {nz, 0}}, grads: zeros(4), linear: true},
		{body: "ceil x", points: [][2]float64{{2, 0}, {-1, 0}, {0, 0}, {nz, 0}}, grads: zeros(4), linear: true},
		{body: "sign x", points: [][2]float64{{0, 0}, {nz, 0}, {1, 0}}, grads: zeros(3), linear: true},
		{body: "stopgrad x", points: [][2]float64{{0, 0}, {2.5, 0}}, grads: zeros(2), linear: true},
		{body: "cast T (cast i64 x)", points: [][2]float64{{2.5, 0}, {0, 0}}, grads: zeros(2), linear: true},
		{body: "pow x y", two: true, points: [][2]float64{{0, 0}, {0, 2}, {2.5, 0}, {0, 0.5}},
			grads: [][2]float64{{0, math.Inf(-1)}, {0, 0}, {0, math.Log(2.5)}, {inf, 0}}},
		{body: "atan2 x y", two: true, points: [][2]float64{{0, 0}}, grads: [][2]float64{{nan, nan}}},
	}
}

// TestKinks differentiates each case at its points, at rank 0 (one program per point) and
// rank 1 (the points in one vector, summed), in both float dtypes: the first derivative
// (ad.Grad) and the second (ad.HVP, forward over reverse, and ad.Grad of the gradient's
// inner product with a direction, reverse over reverse), each evaluated by core.Eval, by
// kernel.Compile and by the raised nodes on a TapeMachine (per operation and coarse), all
// bitwise equal to core.Eval, which must give the documented values.
func TestKinks(t *testing.T) {
	for _, c := range kinkCases() {
		for _, d := range []core.Dtype{core.Float64, core.Float32} {
			t.Run(strings.ReplaceAll(c.body, " ", "_")+"/"+d.String(), func(t *testing.T) {
				for i := range c.points {
					checkKink(t, c, d, []int{i}, true)
				}
				all := make([]int, len(c.points))
				for i := range all {
					all[i] = i
				}
				checkKink(t, c, d, all, false)
			})
		}
	}
}

// checkKink checks case c at the points idx: one rank-0 program (scalar) or a rank-1 one.
func checkKink(t *testing.T, c kinkCase, d core.Dtype, idx []int, scalar bool) {
	t.Helper()
	k := len(idx)
	ty, body := fmt.Sprintf("[%d] %v", k, d), "sumOuter ("+c.body+")"
	if scalar {
		ty, body = fmt.Sprintf("[] %v", d), c.body
	}
	params, wrt := "x : "+ty, []string{"x"}
	if c.two {
		params, wrt = params+", y : "+ty, []string{"x", "y"}
	}
	src := strings.ReplaceAll("fn ("+params+") => "+body, " T ", " "+d.String()+" ")
	p, err := core.ParseProgram(src)
	if err != nil {
		t.Fatalf("%s: %v", src, err)
	}
	xs, ys := make([]float64, k), make([]float64, k)
	for j, i := range idx {
		xs[j], ys[j] = c.points[i][0], c.points[i][1]
	}
	ins := []any{columnOf(d, xs), columnOf(d, ys)}[:len(wrt)]
	where := fmt.Sprintf("%s at x = %v", src, fmtCol(ins[0]))
	if c.two {
		where += fmt.Sprintf(", y = %v", fmtCol(ins[1]))
	}

	// first derivative: the documented values, then every executor against core.Eval
	art, err := ad.Grad(p, wrt...)
	if err != nil {
		t.Fatalf("ad.Grad(%s): %v", src, err)
	}
	gp := art.Program()
	outs, err := tensors.EvalTuple(gp, args(gp, ins))
	if err != nil {
		t.Fatalf("core.Eval of the gradient of %s: %v", src, err)
	}
	for w := range wrt {
		got, err := flat(outs[1+w])
		if err != nil {
			t.Fatal(err)
		}
		want := make([]float64, k)
		for j, i := range idx {
			want[j] = c.grads[i][w]
		}
		if msg := documented(got, want); msg != "" {
			t.Errorf("%s: core.Eval gives ∂/∂%s = %s, the documented slope is %v", where, wrt[w], msg, want)
		}
	}
	crossCheck(t, "gradient", where, gp, ins)

	// second derivative along each wrt direction
	hp, err := ad.HVP(p, ad.Options{Wrt: wrt})
	if err != nil {
		t.Fatalf("ad.HVP(%s): %v", src, err)
	}
	for dir := range wrt {
		dins := append(append([]any{}, ins...), directions(d, k, len(wrt), dir)...)
		outs, err := tensors.EvalTuple(hp, args(hp, dins))
		if err != nil {
			t.Fatalf("core.Eval of the HVP of %s: %v", src, err)
		}
		if c.linear {
			for w := range wrt {
				got, err := flat(outs[len(outs)-len(wrt)+w])
				if err != nil {
					t.Fatal(err)
				}
				if msg := documented(got, make([]float64, k)); msg != "" {
					t.Errorf("%s: core.Eval gives ∂²/∂%s∂%s = %s (ad.HVP), documented 0", where, wrt[w], wrt[dir], msg)
				}
			}
		}
		crossCheck(t, "ad.HVP along d_"+wrt[dir], where, hp, dins)

		gg, err := gradOfGradient(gp, p, wrt, d, k)
		if err != nil {
			t.Fatalf("the gradient of the gradient of %s: %v", src, err)
		}
		outs, err = tensors.EvalTuple(gg, args(gg, dins))
		if err != nil {
			t.Fatalf("core.Eval of the gradient of the gradient of %s: %v", src, err)
		}
		if c.linear {
			for w := range wrt {
				got, err := flat(outs[1+w])
				if err != nil {
					t.Fatal(err)
				}
				if msg := documented(got, make([]float64, k)); msg != "" {
					t.Errorf("%s: core.Eval gives ∂²/∂%s∂%s = %s (ad.Grad twice), documented 0", where, wrt[w], wrt[dir], msg)
				}
			}
		}
		crossCheck(t, "ad.Grad twice along d_"+wrt[dir], where, gg, dins)
	}
}

// gradOfGradient is reverse over reverse: the gradient program of p with respect to wrt of
// the inner product of p's gradient gp (as a program of p's parameters) with direction
// parameters d_w.
func gradOfGradient(gp, p *core.Program, wrt []string, d core.Dtype, k int) (*core.Program, error) {
	lets, res := core.LetChain(gp.Body)
	tup, ok := res.(*core.Tuple)
	if !ok {
		return nil, fmt.Errorf("gradient program's result is %T, not a tuple", res)
	}
	var b core.Builder
	params := append([]*core.Var{}, gp.Params...)
	var sum core.Term
	for w, name := range wrt {
		dv := b.Var(ad.TangentPrefix+name, p.Param(name).Type())
		params = append(params, dv)
		prod := b.Mul(tup.Elems[1+w], dv)
		if len(p.Param(name).Type().Shape) > 0 {
			prod = b.SumOuter(prod)
		}
		if sum == nil {
			sum = prod
		} else {
			sum = b.Add(sum, prod)
		}
	}
	body := sum
	for i := len(lets) - 1; i >= 0; i-- {
		body = b.Let(lets[i].Var, lets[i].Bound, body)
	}
	if err := b.Err(); err != nil {
		return nil, err
	}
	inner, err := core.NewProgram(params, body)
	if err != nil {
		return nil, err
	}
	art, err := ad.Grad(inner, wrt...)
	if err != nil {
		return nil, err
	}
	return art.Program(), nil
}

// crossCheck evaluates the derivative program q on ins with kernel.Compile and as raised
// nodes on a TapeMachine (per operation and coarse), each bitwise against core.Eval.
func crossCheck(t *testing.T, what, where string, q *core.Program, ins []any) {
	t.Helper()
	want, err := reference(q, ins)
	if err != nil {
		t.Fatalf("%s of %s: core.Eval: %v", what, where, err)
	}
	got, _, err := compiled(q, ins)
	if err != nil {
		t.Fatalf("%s of %s: kernel.Compile: %v", what, where, err)
	}
	if msg := differ(got, want); msg != "" {
		t.Errorf("%s of %s: kernel.Compile gives %s", what, where, msg)
	}
	for _, coarse := range []bool{false, true} {
		name := "raised per operation"
		if coarse {
			name = "raised coarse"
		}
		got, err := raised(q, ins, raise.Options{Coarse: coarse})
		if err != nil {
			t.Fatalf("%s of %s: %s: %v", what, where, name, err)
		}
		if msg := differ(got, concat([]any{want, want})); msg != "" {
			t.Errorf("%s of %s: %s on a TapeMachine gives %s", what, where, name, msg)
		}
	}
}

// differ describes how got differs from want (bitwise, any NaN equal to any NaN): the
// results of a derivative program, value first; "" when equal.
func differ(got, want any) string {
	if dtypeOf(got) != dtypeOf(want) || colLen(got) != colLen(want) {
		return fmt.Sprintf("a result %T[%d], core.Eval %T[%d]", got, lenOrZero(got), want, colLen(want))
	}
	for i := range colLen(want) {
		if !sameElem(got, want, i, tolerance{}) {
			return fmt.Sprintf("%v where core.Eval gives %v (results flattened, value first; both runs)", fmtCol(got), fmtCol(want))
		}
	}
	return ""
}

// documented compares derivative values with the documented ones: equal as numbers (the
// sign of a zero derivative is not documented), NaN where NaN is documented.
func documented(got any, want []float64) string {
	for i, w := range want {
		var g float64
		switch c := got.(type) {
		case []float64:
			g = c[i]
		case []float32:
			g = float64(c[i])
		default:
			return fmt.Sprintf("a %T", got)
		}
		if g != w && !(math.IsNaN(g) && math.IsNaN(w)) && !(d32(got) && float64(float32(w)) == g) {
			return fmtCol(got)
		}
	}
	return ""
}

func d32(c any) bool { _, ok := c.([]float32); return ok }

// directions are the direction columns of a second derivative: ones for wrt parameter dir,
// zeros for the others (each k elements of dtype d).
func directions(d core.Dtype, k, n, dir int) []any {
	out := make([]any, n)
	for w := range n {
		v := make([]float64, k)
		if w == dir {
			for i := range v {
				v[i] = 1
			}
		}
		out[w] = columnOf(d, v)
	}
	return out
}

// columnOf is vs as a column of the float dtype d.
func columnOf(d core.Dtype, vs []float64) any {
	if d == core.Float32 {
		out := make([]float32, len(vs))
		for i, v := range vs {
			out[i] = float32(v)
		}
		return out
	}
	return append([]float64{}, vs...)
}

// fmtCol prints a column with fmtElem.
func fmtCol(c any) string {
	parts := make([]string, colLen(c))
	for i := range parts {
		parts[i] = fmtElem(c, i)
	}
	return "[" + strings.Join(parts, " ") + "]"
}
