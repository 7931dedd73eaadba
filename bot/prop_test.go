package bot

import (
	"fmt"
	"math/rand"
	"testing"

	"github.com/bulkad/bulkad/core"
	"github.com/bulkad/bulkad/core/coretest"
	"github.com/bulkad/bulkad/core/tensors"
	"github.com/bulkad/bulkad/kernel"
	"gorgonia.org/tensor"
)

func tolFor(p *core.Program) float64 {
	if p.Body.Type().Dtype == core.Float32 {
		return 1e-4
	}
	return 1e-12
}

// safeEval is kernel.Eval with a panic turned into an error.
func safeEval(p *core.Program, args map[string]*tensor.Dense) (r *tensor.Dense, err error) {
	defer func() {
		if x := recover(); x != nil {
			err = fmt.Errorf("panic: %v", x)
		}
	}()
	return kernel.Eval(p, args)
}

// propStats counts what the property checks saw.
type propStats struct {
	programs, evalChecked, evalDisagree int
}

// checkVectorize runs the BOT property on one program: Vectorize succeeds, the result is in
// normal form, and it evaluates to the same value as the input. Values are compared with
// core.Eval (the reference evaluator) always, and with kernel.Eval
// whenever kernel.Eval agrees with core.Eval on the input program (disagreements there are
// evaluator bugs, counted and reported in the log, not BOT failures).
func checkVectorize(t *testing.T, seed int64, p *core.Program, args map[string]*tensor.Dense, st *propStats) (*core.Program, bool) {
	t.Helper()
	st.programs++
	q, err := Vectorize(p)
	if err != nil {
		t.Errorf("seed %d: Vectorize: %v\nprogram: %v", seed, err, p)
		return nil, false
	}
	if err := CheckNormalForm(q.Body); err != nil {
		t.Errorf("seed %d: %v\nprogram: %v\nvectorized: %v", seed, err, p, q)
		return nil, false
	}
	tol := tolFor(p)
	want, ok := sameValue(t, seed, "Vectorize", p, q, args, tol)
	if !ok {
		return nil, false
	}
	// kernel.Eval: checked on both programs; a disagreement with core.Eval, which already
	// established that the values are equal, is an evaluator bug (counted, logged).
	ev, err1 := safeEval(p, args)
	eq, err2 := safeEval(q, args)
	if err1 == nil && err2 == nil && coretest.Close(ev, eq, tol) == "" && coretest.Close(ev, want, tol) == "" {
		st.evalChecked++
	} else {
		st.evalDisagree++
		if st.evalDisagree <= 3 {
			t.Logf("seed %d: kernel.Eval disagrees with core.Eval (errors %v, %v)", seed, err1, err2)
		}
	}
	return q, true
}

// sameValue evaluates p and its transform q (by the named pass) with core.Eval and reports
// whether they agree within tol; it returns p's value.
func sameValue(t *testing.T, seed int64, pass string, p, q *core.Program, args map[string]*tensor.Dense, tol float64) (*tensor.Dense, bool) {
	t.Helper()
	want, err := tensors.Eval(p, args)
	if err != nil {
		t.Errorf("seed %d: tensors.Eval(p): %v\nprogram: %v", seed, err, p)
		return nil, false
	}
	got, err := tensors.Eval(q, args)
	if err != nil {
		t.Errorf("seed %d: tensors.Eval(%s(p)): %v\nprogram: %v\nresult: %v", seed, pass, err, p, q)
		return nil, false
	}
	if d := coretest.Close(want, got, tol); d != "" {
		t.Errorf("seed %d: value changed by %s: %s\nprogram: %v\nresult: %v\nargs: %v", seed, pass, d, p, q, args)
		return nil, false
	}
	return want, true
}

// checkSimplify checks Eval(Simplify(q)) == Eval(q) with core.Eval (the reference evaluator).
// like in checkVectorize).
func checkSimplify(t *testing.T, seed int64, what string, q *core.Program, args map[string]*tensor.Dense, st *propStats, opts ...core.SimplifyOption) (*core.Program, bool) {
	t.Helper()
	r, err := core.Simplify(q, opts...)
	if err != nil {
		t.Errorf("seed %d: Simplify(%s): %v\nprogram: %v", seed, what, err, q)
		return nil, false
	}
	if _, ok := sameValue(t, seed, "Simplify", q, r, args, tolFor(q)); !ok {
		return nil, false
	}
	return r, true
}

func TestSimplifyProperty(t *testing.T) {
	var st propStats
	for seed := int64(0); seed < propPrograms; seed++ {
		rng := rand.New(rand.NewSource(seed))
		p := coretest.RandomProgram(rng, propConfig(seed))
		args := propArgs(rng, seed, p)
		if _, ok := checkSimplify(t, seed, "p", p, args, &st); !ok {
			return
		}
		q, err := Vectorize(p)
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		if _, ok := checkSimplify(t, seed, "Vectorize(p)", q, args, &st); !ok {
			return
		}
	}
}

// propConfig is the generator configuration of the property tests for a seed: every 5th
// program has a scalar result, every 7th is Smooth, the odd seeds favour build1 (nested
// up to 3 deep, 4 for every 4th seed) and use share, and every third reuses binder names.
func propConfig(seed int64) coretest.Config {
	cfg := coretest.Config{ScalarResult: seed%5 == 0, Smooth: seed%7 == 0}
	if seed%2 == 1 {
		cfg.BuildProb = 0.5
		cfg.Shares = true
	}
	if seed%4 == 3 {
		cfg.MaxBuildNest = 4
	}
	// every third program reuses binder names (shadowing: capture-avoidance)
	cfg.ReuseNames = seed%3 == 2
	return cfg
}

// propPrograms is the number of programs of the property tests.
const propPrograms = 5000

// TestVectorizeProperty: propPrograms random programs (seeds 0.., configured by propConfig).
func TestVectorizeProperty(t *testing.T) {
	var st propStats
	for seed := int64(0); seed < propPrograms; seed++ {
		rng := rand.New(rand.NewSource(seed))
		p := coretest.RandomProgram(rng, propConfig(seed))
		if _, ok := checkVectorize(t, seed, p, propArgs(rng, seed, p), &st); !ok {
			return
		}
	}
	t.Logf("%d programs; compared with kernel.Eval on %d; kernel.Eval disagreed with core.Eval (or failed) on %d",
		st.programs, st.evalChecked, st.evalDisagree)
}

// propArgs draws the arguments of a property-test program; for every 4th seed (seeds 1, 5,
// …) about a tenth of the float elements are +Inf, -Inf or NaN, so rewrites that are exact
// only on finite values are caught.
func propArgs(rng *rand.Rand, seed int64, p *core.Program) map[string]*tensor.Dense {
	args := coretest.RandomArgs(rng, p)
	if seed%4 == 1 {
		coretest.PoisonArgs(rng, p, args)
	}
	return args
}

// Simplify reaches its fixed point on vectorised random programs too.
func TestSimplifyFixedPointAfterBOT(t *testing.T) {
	coretest.CheckSimplifyFixedPoint(t, 500, func(seed int64) (*core.Program, error) {
		return Vectorize(coretest.RandomProgram(rand.New(rand.NewSource(seed)), propConfig(seed)))
	})
}

// DAG inputs stay DAGs: a chain of 200 nodes, each using the previous one twice (a tree of
// 2^200 nodes), under build1 and under index, vectorises and simplifies to a term of size
// linear in the chain (unfolding would not terminate).
func TestBOTSharedDAG(t *testing.T) {
	var b core.Builder
	a := b.Var("a", coretest.F64(4))
	i := b.Var("i", i64s)
	k := b.Var("k", i64s)
	const n = 200
	var u core.Term = b.Index(a, i)
	var d core.Term = a
	for s := 0; s < n; s++ {
		u = b.Mul(u, b.Unary(core.OpSin, u))
		d = b.Add(d, b.Unary(core.OpTanh, d))
	}
	// let chain under build1: let x0 = index a [i] in let x1 = x0 * sin x0 in … in index a [x_n-ish]
	xs := []*core.Var{b.Var("x0", core.Scalar(core.Float64))}
	for s := 1; s <= n; s++ {
		xs = append(xs, b.Var(fmt.Sprintf("x%d", s), core.Scalar(core.Float64)))
	}
	var chain core.Term = b.Add(xs[n], b.Index(a, b.Binary(core.OpRem, b.Cast(core.Int64, xs[n]), core.ScalarI(4))))
	for s := n; s >= 1; s-- {
		chain = b.Let(xs[s], b.Mul(xs[s-1], b.Unary(core.OpSin, xs[s-1])), chain)
	}
	chain = b.Let(xs[0], b.Index(a, i), chain)
	for _, c := range []struct {
		name   string
		params []*core.Var
		body   core.Term
	}{
		{"let chain", []*core.Var{a}, b.Build1(4, i, chain)},
		{"build1", []*core.Var{a}, b.Build1(4, i, u)},
		{"index", []*core.Var{a, k}, b.Index(d, k)},
		{"build1 of index", []*core.Var{a}, b.Build1(4, i, b.Index(d, b.Binary(core.OpRem, b.Add(i, core.ScalarI(1)), core.ScalarI(4))))},
	} {
		p := mustProg(t, &b, c.params, c.body)
		q := vec(t, p)
		r := simp(t, q)
		in, out, so := core.Size(p.Body), core.Size(q.Body), core.Size(r.Body)
		t.Logf("%s: %d nodes in, %d after BOT, %d after Simplify", c.name, in, out, so)
		if out > 5*in || so > 5*in {
			t.Errorf("%s: sizes %d → %d → %d are not linear", c.name, in, out, so)
		}
		// values with kernel.Eval (a DAG of 2^200 nodes in tree form)
		args := map[string]*tensor.Dense{
			"a": tensor.New(tensor.WithShape(4), tensor.WithBacking([]float64{0.3, -0.2, 0.1, 0.25})),
		}
		if len(c.params) > 1 {
			args["k"] = tensor.New(tensor.WithShape(), tensor.WithBacking([]int64{2}))
		}
		v0, err0 := safeEval(p, args)
		v1, err1 := safeEval(q, args)
		v2, err2 := safeEval(r, args)
		if err0 != nil || err1 != nil || err2 != nil {
			t.Fatalf("%s: Eval: %v %v %v", c.name, err0, err1, err2)
		}
		if d1, d2 := coretest.Close(v0, v1, 1e-12), coretest.Close(v0, v2, 1e-12); d1 != "" || d2 != "" {
			t.Errorf("%s: values differ: %s / %s", c.name, d1, d2)
		}
	}
}
