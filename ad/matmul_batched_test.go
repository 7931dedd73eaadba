package ad

import (
	"math/rand"
	"testing"

	"github.com/bulkad/bulkad/core"
	"github.com/bulkad/bulkad/core/coretest"
)

// Batched matmul (x : B ++ [m,k], y : B ++ [k,n]): the transposition of matmul A other and
// matmul other A with the last two dimensions swapped, first order (checkGradient: central
// finite differences, the concrete reverse pass, the JVP/VJP identity) and second order
// (H·v against differences of the gradient).

func TestBatchedMatMulGradients(t *testing.T) {
	cases := []struct {
		name string
		mk   func(b *core.Builder) ([]*core.Var, core.Term)
	}{
		{"both operands", func(b *core.Builder) ([]*core.Var, core.Term) {
			x, y := b.Var("x", coretest.F64(2, 3, 4)), b.Var("y", coretest.F64(2, 4, 2))
			return []*core.Var{x, y}, b.MatMul(b.Unary(core.OpTanh, x), y)
		}},
		{"rank 4", func(b *core.Builder) ([]*core.Var, core.Term) {
			x, y := b.Var("x", coretest.F64(2, 2, 3, 2)), b.Var("y", coretest.F64(2, 2, 2, 3))
			return []*core.Var{x, y}, b.MatMul(x, b.Unary(core.OpSin, y))
		}},
		{"self", func(b *core.Builder) ([]*core.Var, core.Term) {
			x := b.Var("x", coretest.F64(3, 2, 2))
			return []*core.Var{x}, b.MatMul(x, x)
		}},
		// attention's scores: q kᵀ per head, with the transpose of the last two dimensions
		{"transposed operand", func(b *core.Builder) ([]*core.Var, core.Term) {
			q, k := b.Var("q", coretest.F64(2, 3, 4)), b.Var("k", coretest.F64(2, 5, 4))
			return []*core.Var{q, k}, b.MatMul(q, b.Transpose([]int{0, 2, 1}, k))
		}},
		// softmax(q kᵀ) v: a product of products, both operands depending on one parameter
		{"attention", func(b *core.Builder) ([]*core.Var, core.Term) {
			q, v := b.Var("q", coretest.F64(2, 3, 2)), b.Var("v", coretest.F64(2, 3, 2))
			s := b.Unary(core.OpExp, b.MatMul(q, b.Transpose([]int{0, 2, 1}, q)))
			return []*core.Var{q, v}, b.MatMul(s, b.Unary(core.OpTanh, v))
		}},
		// one batch position: the ordinary product's rules in a stack of one
		{"batch of one", func(b *core.Builder) ([]*core.Var, core.Term) {
			x, y := b.Var("x", coretest.F64(1, 3, 4)), b.Var("y", coretest.F64(1, 4, 2))
			return []*core.Var{x, y}, b.MatMul(x, y)
		}},
	}
	for n, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var b core.Builder
			params, body := c.mk(&b)
			p := mustProg(t, &b, params, body)
			rng := rand.New(rand.NewSource(int64(n) + 31))
			checkGradient(t, c.name, p, randomArgs(rng, p, -1, 1, 0), checkOpts{})
		})
	}
}

// The VJP of a batched matmul is two batched matmuls with the operands' matrices transposed:
// dx = matmul dret (tr [0,2,1] y), dy = matmul (tr [0,2,1] x) dret.
func TestGoldenBatchedMatMul(t *testing.T) {
	cases := []struct{ src, want string }{
		{`fn (x : [5,3,4] f64, y : [5,4,2] f64) => matmul x y`,
			`fn (x : [5,3,4] f64, y : [5,4,2] f64, dret : [5,3,2] f64) => (matmul x y, matmul dret (tr [0,2,1] y), matmul (tr [0,2,1] x) dret)`},
		{`fn (x : [2,5,3,4] f64, y : [2,5,4,2] f64) => matmul x y`,
			`fn (x : [2,5,3,4] f64, y : [2,5,4,2] f64, dret : [2,5,3,2] f64) => (matmul x y, matmul dret (tr [0,1,3,2] y), matmul (tr [0,1,3,2] x) dret)`},
	}
	for k, c := range cases {
		p := parse(t, c.src)
		a := must(t)(VJP(p))
		if got := a.String(); got != c.want {
			t.Errorf("batched matmul VJP:\n got %s\nwant %s", got, c.want)
		}
		rng := rand.New(rand.NewSource(int64(k) + 5))
		checkGradient(t, "batched matmul", p, randomArgs(rng, p, -1, 1, 0), checkOpts{})
	}
}

// Second order: H·v of f(x, y) = Σ tanh(matmul x y)² (batched) against central differences of
// the gradient along v, (∇f(p + εv) − ∇f(p − εv)) / 2ε, both in float64.
func TestBatchedMatMulHVP(t *testing.T) {
	p := parse(t, `fn (x : [2,3,4] f64, y : [2,4,2] f64) => let z = tanh (matmul x (tr [0,2,1] (tr [0,2,1] y))) in sumOuter (reshape [12] (z * z))`)
	h, err := HVP(p, Options{Wrt: []string{"x", "y"}})
	if err != nil {
		t.Fatal(err)
	}
	g := must(t)(GradWith(p, Options{Wrt: []string{"x", "y"}}))
	rng := rand.New(rand.NewSource(77))
	args := randomArgs(rng, p, -1, 1, 0)
	dirs := map[string]*value{}
	for _, name := range []string{"x", "y"} {
		d := newValue(args[name].typ)
		for k := range d.f {
			d.f[k] = rng.Float64()*2 - 1
		}
		dirs[name] = d
	}
	in := map[string]*value{}
	for name, v := range args {
		in[name] = v
		in[TangentPrefix+name] = dirs[name]
	}
	outs, err := evalProgram(h, in)
	if err != nil {
		t.Fatal(err)
	}
	if len(outs) != 6 {
		t.Fatalf("%d components, want 6", len(outs))
	}
	// differences of the gradient (components 1 and 2 of the gradient artifact)
	const eps = 1e-5
	at := func(sign float64) []*value {
		shifted := map[string]*value{}
		for name, v := range args {
			s := newValue(v.typ)
			for k := range s.f {
				s.f[k] = v.f[k] + sign*eps*dirs[name].f[k]
			}
			shifted[name] = s
		}
		o, err := evalProgram(g.Program(), shifted)
		if err != nil {
			t.Fatal(err)
		}
		return o
	}
	plus, minus := at(1), at(-1)
	for k, name := range []string{"x", "y"} {
		want := make([]float64, len(plus[1+k].f))
		for i := range want {
			want[i] = (plus[1+k].f[i] - minus[1+k].f[i]) / (2 * eps)
		}
		if i, ok := closeSlices(outs[4+k].f, want, 1e-6); !ok {
			t.Errorf("(H·v)_%s element %d = %v, differences of the gradient give %v", name, i, outs[4+k].f[i], want[i])
		}
	}
}
