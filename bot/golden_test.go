package bot

import (
	"math/rand"
	"testing"

	"github.com/bulkad/bulkad/core"
	"github.com/bulkad/bulkad/core/coretest"
	"github.com/bulkad/bulkad/core/tensors"
	"gorgonia.org/tensor"
)

var i64s = core.Scalar(core.Int64)

// mustProg is coretest.MustProgram.
func mustProg(t testing.TB, b *core.Builder, params []*core.Var, body core.Term) *core.Program {
	return coretest.MustProgram(t, b, params, body)
}

func vec(t *testing.T, p *core.Program) *core.Program {
	t.Helper()
	q, err := Vectorize(p)
	if err != nil {
		t.Fatalf("Vectorize: %v\n%v", err, p)
	}
	if err := CheckNormalForm(q.Body); err != nil {
		t.Fatalf("%v\n%v", err, q)
	}
	return q
}

func simp(t *testing.T, p *core.Program, opts ...core.SimplifyOption) *core.Program {
	t.Helper()
	q, err := core.Simplify(p, opts...)
	if err != nil {
		t.Fatalf("Simplify: %v\n%v", err, p)
	}
	return q
}

// sameValues checks core.Eval(p) == core.Eval(q) on random arguments.
func sameValues(t *testing.T, p, q *core.Program) {
	t.Helper()
	rng := rand.New(rand.NewSource(7))
	for k := 0; k < 3; k++ {
		args := coretest.RandomArgs(rng, p)
		a, err1 := tensors.Eval(p, args)
		b, err2 := tensors.Eval(q, args)
		if err1 != nil || err2 != nil {
			t.Fatalf("eval: %v %v", err1, err2)
		}
		if d := coretest.Close(a, b, 1e-12); d != "" {
			t.Fatalf("values differ: %s\n%v\n%v", d, p, q)
		}
	}
}

// expectTerm compares a result with a hand-built expected term (structurally) and logs both
// printed forms.
func expectTerm(t *testing.T, what string, got, want core.Term) {
	t.Helper()
	if !core.Equal(got, want) {
		t.Errorf("%s:\n got  %v\n want %v", what, got, want)
		return
	}
	t.Logf("%s: %v", what, got)
}

// Paper §4.5: build1 k (\i -> index a [i] + 1.0) → gather [k] a (\[i] -> [i]) + replicate k 1.0,
// simplified to a + replicate k 1.0.
func TestGoldenIndexPlusOne(t *testing.T) {
	var b core.Builder
	k := 5
	a := b.Var("a", coretest.F64(k))
	i := b.Var("i", i64s)
	one := core.ScalarF(core.Float64, 1)
	p := mustProg(t, &b, []*core.Var{a}, b.Build1(k, i, b.Add(b.Index(a, i), one)))
	q := vec(t, p)
	wantBOT := b.Add(b.Gather(core.Shape{k}, a, b.IndexFn([]*core.Var{i}, i)), b.Replicate(k, one))
	expectTerm(t, "BOT", q.Body, wantBOT)
	r := simp(t, q)
	expectTerm(t, "simplified", r.Body, b.Add(a, b.Replicate(k, one)))
	sameValues(t, p, q)
	sameValues(t, p, r)
}

// Paper Fig. 18: t_sc = sumOuter (build1 n (\i. index a [i] * index a [n-1-i]))
// → sumOuter (gather [n] a (\[i]. [i]) * gather [n] a (\[i]. [n-1-i])).
func TestGoldenSelfConvolution(t *testing.T) {
	var b core.Builder
	n := 6
	a := b.Var("a", coretest.F64(n))
	i := b.Var("i", i64s)
	rev := b.Sub(core.ScalarI(int64(n-1)), i)
	p := mustProg(t, &b, []*core.Var{a}, b.SumOuter(b.Build1(n, i, b.Mul(b.Index(a, i), b.Index(a, rev)))))
	q := vec(t, p)
	want := b.SumOuter(b.Mul(
		b.Gather(core.Shape{n}, a, b.IndexFn([]*core.Var{i}, i)),
		b.Gather(core.Shape{n}, a, b.IndexFn([]*core.Var{i}, rev))))
	expectTerm(t, "BOT", q.Body, want)
	sameValues(t, p, q)
	// simplified: the identity gather disappears, the reversing gather stays
	r := simp(t, q)
	expectTerm(t, "simplified", r.Body, b.SumOuter(b.Mul(a, b.Gather(core.Shape{n}, a, b.IndexFn([]*core.Var{i}, rev)))))
}

// Paper §3.1: matmat with build and index → after BOT and simplification exactly matmul a b.
func TestGoldenMatmat(t *testing.T) {
	for _, dims := range [][3]int{{3, 4, 5}, {2, 2, 2}, {1, 3, 2}, {4, 1, 3}} {
		var b core.Builder
		k, m, n := dims[0], dims[1], dims[2]
		a := b.Var("a", coretest.F64(k, m))
		bb := b.Var("b", coretest.F64(m, n))
		i, j, pv := b.Var("i", i64s), b.Var("j", i64s), b.Var("p", i64s)
		body := b.Build1(k, i, b.Build1(n, j, b.SumOuter(b.Build1(m, pv, b.Mul(b.Index(a, i, pv), b.Index(bb, pv, j))))))
		p := mustProg(t, &b, []*core.Var{a, bb}, body)
		q := vec(t, p)
		r := simp(t, q)
		expectTerm(t, "matmat", r.Body, b.MatMul(a, bb))
		sameValues(t, p, q)
		sameValues(t, p, r)
	}
}

// Attention's products written per head, build1 over matmuls whose operands both depend on the
// build variable: after BOT and simplification one batched matmul (a batch dimension per
// build1), no product of rank 4 and no build1.
func TestGoldenBatchedMatMul(t *testing.T) {
	var b core.Builder
	bs, h, s, d := 2, 3, 4, 5
	i, j := b.Var("i", i64s), b.Var("j", i64s)
	q := b.Var("q", coretest.F64(h, s, d))
	kk := b.Var("kk", coretest.F64(h, s, d))
	q4 := b.Var("q4", coretest.F64(bs, h, s, d))
	v4 := b.Var("v4", coretest.F64(bs, h, d, s))
	cases := []goldenCase{
		{"q k^T per head", []*core.Var{q, kk},
			b.Build1(h, i, b.MatMul(b.Index(q, i), b.Transpose([]int{1, 0}, b.Index(kk, i)))),
			b.MatMul(q, b.Transpose([]int{0, 2, 1}, kk))},
		{"per batch and head", []*core.Var{q4, v4},
			b.Build1(bs, i, b.Build1(h, j, b.MatMul(b.Index(q4, i, j), b.Index(v4, i, j)))),
			b.MatMul(q4, v4)},
		{"batched under build1", []*core.Var{q4, v4},
			b.Build1(bs, i, b.MatMul(b.Index(q4, i), b.Index(v4, i))),
			b.MatMul(q4, v4)},
	}
	checkGoldenCases(t, &b, cases)
}

// goldenCase is a program (params, body) whose vectorised and simplified body is want.
type goldenCase struct {
	name   string
	params []*core.Var
	body   core.Term
	want   core.Term
}

// checkGoldenCases checks each case: the vectorised program, simplified, has body want, and
// both have the original's values.
func checkGoldenCases(t *testing.T, b *core.Builder, cases []goldenCase) {
	t.Helper()
	for _, c := range cases {
		p := mustProg(t, b, c.params, c.body)
		q := vec(t, p)
		r := simp(t, q)
		expectTerm(t, c.name, r.Body, c.want)
		sameValues(t, p, q)
		sameValues(t, p, r)
	}
}

// Transposed matmat variants: Σ_p a[p,i] b[j,p] and Σ_p a[i,p] b[j,p] contract to one matmul
// with transposes.
func TestGoldenMatmatTransposed(t *testing.T) {
	var b core.Builder
	k, m, n := 3, 4, 2
	i, j, pv := b.Var("i", i64s), b.Var("j", i64s), b.Var("p", i64s)
	at := b.Var("at", coretest.F64(m, k))
	bt := b.Var("bt", coretest.F64(n, m))
	a := b.Var("a", coretest.F64(k, m))
	mk := func(x, y core.Term) core.Term {
		return b.Build1(k, i, b.Build1(n, j, b.SumOuter(b.Build1(m, pv, b.Mul(x, y)))))
	}
	cases := []goldenCase{
		{"a^T b^T", []*core.Var{at, bt}, mk(b.Index(at, pv, i), b.Index(bt, j, pv)),
			b.MatMul(b.Transpose([]int{1, 0}, at), b.Transpose([]int{1, 0}, bt))},
		{"a b^T", []*core.Var{a, bt}, mk(b.Index(a, i, pv), b.Index(bt, j, pv)),
			b.MatMul(a, b.Transpose([]int{1, 0}, bt))},
	}
	checkGoldenCases(t, &b, cases)
}

// sumOuter (build1 50 (\i -> index v [rem i 28])) → sumOuter (gather [50] v (\[i] -> [rem i 28])).
func TestGoldenRemGather(t *testing.T) {
	var b core.Builder
	v := b.Var("v", coretest.F64(28))
	i := b.Var("i", i64s)
	ix := b.Binary(core.OpRem, i, core.ScalarI(28))
	p := mustProg(t, &b, []*core.Var{v}, b.SumOuter(b.Build1(50, i, b.Index(v, ix))))
	q := vec(t, p)
	expectTerm(t, "BOT", q.Body, b.SumOuter(b.Gather(core.Shape{50}, v, b.IndexFn([]*core.Var{i}, ix))))
	sameValues(t, p, q)
}

// §5.2: concatenation through a strict cond, nested in another build:
// build1 3 (\j -> build1 20 (\i -> cond (i < 10) (index a [j, i]) (index a [j, i - 10])))
// → gathers only (no index, no build1), and the value is each row of a concatenated with itself.
func TestGoldenConcatCond(t *testing.T) {
	var b core.Builder
	a := b.Var("a", coretest.F64(3, 10))
	i, j := b.Var("i", i64s), b.Var("j", i64s)
	c := b.Binary(core.OpLt, i, core.ScalarI(10))
	body := b.Build1(3, j, b.Build1(20, i, b.Cond(c, b.Index(a, j, i), b.Index(a, j, b.Sub(i, core.ScalarI(10))))))
	p := mustProg(t, &b, []*core.Var{a}, body)
	for _, stage := range []string{"BOT", "BOT+simplify"} {
		q := vec(t, p)
		if stage == "BOT+simplify" {
			q = simp(t, q)
		}
		gathers := 0
		core.PostOrder(q.Body, func(n core.Term) {
			switch n.(type) {
			case *core.Index, *core.Build1:
				t.Errorf("%s: %T remains: %v", stage, n, q)
			case *core.Gather:
				gathers++
			}
		})
		if gathers == 0 {
			t.Errorf("%s: no gather in %v", stage, q)
		}
		t.Logf("%s: %v", stage, q.Body)
		// expected values, computed by hand: out[j][i] = a[j][i mod 10]
		vals := make([]float64, 30)
		for k := range vals {
			vals[k] = float64(k) + 0.5
		}
		arg := tensor.New(tensor.WithShape(3, 10), tensor.WithBacking(vals))
		got, err := tensors.Eval(q, map[string]*tensor.Dense{"a": arg})
		if err != nil {
			t.Fatal(err)
		}
		data := got.Data().([]float64)
		for jj := 0; jj < 3; jj++ {
			for ii := 0; ii < 20; ii++ {
				if w := vals[jj*10+ii%10]; data[jj*20+ii] != w {
					t.Fatalf("%s: out[%d][%d] = %v, want %v", stage, jj, ii, data[jj*20+ii], w)
				}
			}
		}
		if ev, err := safeEval(q, map[string]*tensor.Dense{"a": arg}); err == nil {
			if d := coretest.Close(ev, got, 0); d != "" {
				t.Logf("%s: kernel.Eval disagrees with core.Eval: %s", stage, d)
			}
		}
	}
}

// Top-level let names survive Vectorize, and KeepLets protects lets in Simplify.
func TestTopLevelLetNames(t *testing.T) {
	var b core.Builder
	a := b.Var("a", coretest.F64(4))
	h := b.Var("h", coretest.F64(4))
	g := b.Var("g", coretest.F64(4))
	i := b.Var("i", i64s)
	// let h = exp a in let g = build1 4 (\i -> index h [i] * 2) in g + h
	two := core.ScalarF(core.Float64, 2)
	body := b.Let(h, b.Unary(core.OpExp, a),
		b.Let(g, b.Build1(4, i, b.Mul(b.Index(h, i), two)), b.Add(g, h)))
	p := mustProg(t, &b, []*core.Var{a}, body)
	q := vec(t, p)
	l1, ok := q.Body.(*core.Let)
	if !ok || l1.Var.Name != "h" {
		t.Fatalf("top-level let h lost: %v", q)
	}
	l2, ok := l1.Body.(*core.Let)
	if !ok || l2.Var.Name != "g" {
		t.Fatalf("top-level let g lost: %v", q)
	}
	sameValues(t, p, q)
	// Without KeepLets, g (used once) is inlined; with KeepLets("g","h") both stay.
	r := simp(t, q)
	if l, ok := r.Body.(*core.Let); !ok || l.Var.Name != "h" {
		t.Errorf("h is used twice and must stay: %v", r)
	} else if _, ok := l.Body.(*core.Let); ok {
		t.Errorf("g is used once and should be inlined: %v", r)
	}
	r2 := simp(t, q, core.KeepLets("g", "h"))
	l1, ok = r2.Body.(*core.Let)
	if !ok || l1.Var.Name != "h" {
		t.Fatalf("KeepLets: h lost: %v", r2)
	}
	if l2, ok = l1.Body.(*core.Let); !ok || l2.Var.Name != "g" {
		t.Fatalf("KeepLets: g lost: %v", r2)
	}
	sameValues(t, p, r2)
}

// Ill-typed input is rejected with the checker's error before any rewriting.
func TestRejectIllTyped(t *testing.T) {
	x, _ := core.NewVar("x", coretest.F64(3))
	y, _ := core.NewVar("y", coretest.F64(3))
	// a program whose body mentions a variable that is not a parameter
	p := &core.Program{Params: []*core.Var{x}, Body: y}
	if _, err := Vectorize(p); err == nil {
		t.Error("Vectorize accepted an ill-scoped program")
	}
	if _, err := core.Simplify(p); err == nil {
		t.Error("Simplify accepted an ill-scoped program")
	}
	// a node built without a constructor has no type
	bad := &core.Program{Params: []*core.Var{x}, Body: &core.SumOuter{X: x}}
	if _, err := Vectorize(bad); err == nil {
		t.Error("Vectorize accepted an untyped node")
	}
	if _, err := Vectorize(nil); err == nil {
		t.Error("Vectorize accepted nil")
	}
	if _, err := VectorizeTerm(nil); err == nil {
		t.Error("VectorizeTerm accepted nil")
	}
}
