package kernel

import (
	"fmt"
	"math"
	"math/rand"
	"testing"

	"github.com/bulkad/bulkad/core"

	"gorgonia.org/tensor"
)

// randElem builds a random element-wise float expression over the parameters and returns it
// with a reference evaluator per element (float64 arithmetic, rounded to float32 after every
// operation for f32, as the f32 semantics say).
type elemGen struct {
	rng    *rand.Rand
	b      *core.Builder
	d      core.Dtype
	n      int
	params []*core.Var
	vals   [][]float64
	pool   []core.Term // earlier nodes, reused to create DAG sharing
	refs   map[core.Term]func(i int) float64
}

func (g *elemGen) round(v float64) float64 {
	if g.d == core.Float32 {
		return float64(float32(v))
	}
	return v
}

func (g *elemGen) gen(depth int) core.Term {
	if depth == 0 || g.rng.Intn(5) == 0 {
		switch k := g.rng.Intn(4); {
		case k == 0 && len(g.pool) > 0:
			return g.pool[g.rng.Intn(len(g.pool))]
		case k == 1:
			c := g.round(float64(g.rng.Intn(7)-3) / 2)
			t := g.b.Replicate(g.n, core.ScalarF(g.d, c))
			g.refs[t] = func(int) float64 { return c }
			return t
		default:
			j := g.rng.Intn(len(g.params))
			return g.params[j]
		}
	}
	var t core.Term
	if g.rng.Intn(6) == 0 {
		ops := []core.BinOp{core.OpLt, core.OpLe, core.OpGt, core.OpGe, core.OpEq, core.OpNe}
		op := ops[g.rng.Intn(len(ops))]
		x, y := g.gen(depth-1), g.gen(depth-1)
		t = g.b.Cast(g.d, g.b.Binary(op, x, y))
		xr, yr := g.ref(x), g.ref(y)
		f := map[core.BinOp]func(a, b float64) bool{core.OpLt: func(a, b float64) bool { return a < b },
			core.OpLe: func(a, b float64) bool { return a <= b }, core.OpGt: func(a, b float64) bool { return a > b },
			core.OpGe: func(a, b float64) bool { return a >= b }, core.OpEq: func(a, b float64) bool { return a == b },
			core.OpNe: func(a, b float64) bool { return a != b }}[op]
		g.refs[t] = func(i int) float64 {
			if f(xr(i), yr(i)) {
				return 1
			}
			return 0
		}
	} else if g.rng.Intn(3) == 0 {
		ops := []core.UnOp{core.OpNeg, core.OpAbs, core.OpTanh, core.OpSigmoid, core.OpSin, core.OpExp}
		op := ops[g.rng.Intn(len(ops))]
		x := g.gen(depth - 1)
		if op == core.OpExp {
			x = g.b.Unary(core.OpTanh, x) // keep values small
			xr := g.ref(x.(*core.Unary).X)
			g.refs[x] = func(i int) float64 { return g.round(math.Tanh(xr(i))) }
		}
		t = g.b.Unary(op, x)
		xr := g.ref(x)
		f := map[core.UnOp]func(float64) float64{core.OpNeg: func(v float64) float64 { return -v }, core.OpAbs: math.Abs,
			core.OpTanh: math.Tanh, core.OpSigmoid: func(v float64) float64 { return 1 / (1 + math.Exp(-v)) }, core.OpSin: math.Sin, core.OpExp: math.Exp}[op]
		g.refs[t] = func(i int) float64 { return g.round(f(xr(i))) }
	} else {
		ops := []core.BinOp{core.OpAdd, core.OpSub, core.OpMul, core.OpDiv, core.OpMax, core.OpMin}
		op := ops[g.rng.Intn(len(ops))]
		x, y := g.gen(depth-1), g.gen(depth-1)
		if op == core.OpDiv {
			// divide by 2 + x*x to stay finite
			y = g.b.Add(g.b.Replicate(g.n, core.ScalarF(g.d, 2)), g.b.Mul(y, y))
			yy := y.(*core.Binary).Y.(*core.Binary).X
			yr := g.ref(yy)
			g.refs[y] = func(i int) float64 { v := yr(i); return g.round(2 + g.round(v*v)) }
		}
		t = g.b.Binary(op, x, y)
		xr, yr := g.ref(x), g.ref(y)
		f := map[core.BinOp]func(a, b float64) float64{core.OpAdd: func(a, b float64) float64 { return a + b },
			core.OpSub: func(a, b float64) float64 { return a - b }, core.OpMul: func(a, b float64) float64 { return a * b },
			core.OpDiv: func(a, b float64) float64 { return a / b }, core.OpMax: math.Max, core.OpMin: math.Min}[op]
		g.refs[t] = func(i int) float64 { return g.round(f(xr(i), yr(i))) }
	}
	g.pool = append(g.pool, t)
	return t
}

func (g *elemGen) ref(t core.Term) func(int) float64 {
	if f, ok := g.refs[t]; ok {
		return f
	}
	for j, p := range g.params {
		if p == t {
			vals := g.vals[j]
			return func(i int) float64 { return vals[i] }
		}
	}
	panic(fmt.Sprintf("no reference for %v", t))
}

func TestEvalFusedElementwiseRandom(t *testing.T) {
	seed := int64(7)
	rng := rand.New(rand.NewSource(seed))
	for iter := 0; iter < 150; iter++ {
		d := floatDtypes[iter%2]
		n := []int{1, 7, 1024, 1500, 2100}[rng.Intn(5)]
		var b core.Builder
		g := &elemGen{rng: rng, b: &b, d: d, n: n, refs: map[core.Term]func(int) float64{}}
		args := map[string]*tensor.Dense{}
		for j := 0; j < 3; j++ {
			v := b.Var(fmt.Sprintf("x%d", j), ty(d, n))
			g.params = append(g.params, v)
			vals := make([]float64, n)
			for i := range vals {
				vals[i] = g.round(rng.Float64()*4 - 2)
			}
			g.vals = append(g.vals, vals)
			args[v.Name] = fd(d, []int{n}, vals...)
		}
		body := g.gen(5)
		if body.Type().Shape.Equal(core.Shape{n}) && len(g.pool) == 0 {
			continue
		}
		p := mustProg(t, &b, g.params, body)
		got := evalF(t, p, args)
		ref := g.ref(body)
		want := make([]float64, n)
		for i := range want {
			want[i] = ref(i)
		}
		tol := 1e-12
		if d == core.Float32 {
			tol = 1e-5
		}
		checkFloats(t, fmt.Sprintf("seed %d iter %d: %s", seed, iter, p), got, want, tol)
	}
}

// Fusion inside a build1 body, and element-wise nodes shared between a fused tree and
// another consumer.
func TestEvalFusedInBuildAndShared(t *testing.T) {
	for _, d := range floatDtypes {
		var b core.Builder
		x := b.Var("x", ty(d, 3, 2))
		i := b.Var("i", core.Scalar(core.Int64))
		row := b.Index(x, i)
		sq := b.Mul(row, row)                                                                 // used twice below
		body := b.Add(b.Sub(sq, b.Replicate(2, core.ScalarF(d, 1))), b.Unary(core.OpNeg, sq)) // = -1
		other := b.Mul(sq, b.Replicate(2, core.ScalarF(d, 3)))
		p := mustProg(t, &b, []*core.Var{x}, b.Tuple(b.Build1(3, i, body), b.Build1(3, i, other)))
		rs, err := EvalTuple(p, map[string]*tensor.Dense{"x": fd(d, []int{3, 2}, 1, 2, 3, 4, 5, 6)})
		if err != nil {
			t.Fatal(err)
		}
		checkFloats(t, "fused in build", floats(t, rs[0]), []float64{-1, -1, -1, -1, -1, -1}, 0)
		checkFloats(t, "shared operand", floats(t, rs[1]), []float64{3, 12, 27, 48, 75, 108}, 0)
	}
}
