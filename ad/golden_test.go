package ad

import (
	"fmt"
	"math/rand"
	"strings"
	"sync"
	"testing"

	"github.com/bulkad/bulkad/core"
	"github.com/bulkad/bulkad/core/coretest"
)

func parse(t testing.TB, src string) *core.Program {
	t.Helper()
	p, err := core.ParseProgram(src)
	if err != nil {
		t.Fatalf("parse %q: %v", src, err)
	}
	return p
}

// gradRoots returns the artifact's tuple components with let-bound variables resolved to
// their bound terms (one level: the root of each component as computed).
func tupleOf(p *core.Program) (*core.Tuple, map[string]core.Term) {
	t, lets := tupleOfBody(p.Body)
	return t.(*core.Tuple), lets
}

// resolve follows let-bound variables to their bound terms.
func resolve(t core.Term, lets map[string]core.Term) core.Term {
	for {
		v, ok := t.(*core.Var)
		if !ok {
			return t
		}
		b, ok := lets[v.Name]
		if !ok {
			return t
		}
		t = b
	}
}

// count counts the nodes of the given Go type reachable from t through lets.
func countNodes(t core.Term, lets map[string]core.Term, pred func(core.Term) bool) int {
	n := 0
	seen := map[core.Term]bool{}
	var rec func(core.Term)
	rec = func(t core.Term) {
		t = resolve(t, lets)
		if seen[t] {
			return
		}
		seen[t] = true
		if pred(t) {
			n++
		}
		for k, c := range core.Children(t) {
			if len(core.BoundIn(t, k)) == 0 {
				rec(c)
			}
		}
	}
	rec(t)
	return n
}

func noShare(t *testing.T, a *Artifact) {
	t.Helper()
	core.PostOrder(a.Program().Body, func(n core.Term) {
		switch n.(type) {
		case *core.Share:
			t.Errorf("artifact contains share: %s", a)
		case *core.Build1:
			t.Errorf("artifact contains build1: %s", a)
		}
	})
}

// TestGoldenTsc: the t_sc example of paper 000 §7.1–7.4 in its bulk form. Before
// simplification the gradient is exactly the paper's result of shareToLet:
// let shared1 = replicate n 1.0 in scatter [n] (x2 · shared1) (λ[i].[i]) + scatter [n] (x1 · shared1) (λ[i].[n-1-i]),
// here with the two summands in the order of the reverse pass (highest ID first), and one
// step better: the reverse pass does not let-bind the constant cotangent replicate n 1.0, and
// scaling by ones is the identity, so the multiplications by shared1 disappear.
func TestGoldenTsc(t *testing.T) {
	p := parse(t, `fn (a : [5] f64) => sumOuter (gather [5] a (\[i] -> [i]) * gather [5] a (\[i] -> [4 - i]))`)
	a, err := GradWith(p, Options{NoSimplify: true, SkipBOT: true})
	if err != nil {
		t.Fatal(err)
	}
	want := `fn (a : [5] f64) => let p_0 = gather [5] a (\[i] -> [i]) in let p_1 = gather [5] a (\[i] -> [4 - i]) in (sumOuter (p_0 * p_1), scatter [5] p_0 (\[i] -> [4 - i]) + scatter [5] p_1 (\[i] -> [i]))`
	if got := a.String(); got != want {
		t.Errorf("t_sc gradient:\n got %s\nwant %s", got, want)
	}
	// The source form with build1 goes through the BOT; the gradient has at most the two
	// scatters (fewer after simplification), no share and no build1.
	src := parse(t, `fn (a : [5] f64) => sumOuter (build1 5 (\i -> index a [i] * index a [4 - i]))`)
	full := must(t)(Grad(src))
	noShare(t, full)
	tu, lets := tupleOf(full.Program())
	isScatter := func(n core.Term) bool { _, ok := n.(*core.Scatter); return ok }
	if n := countNodes(tu.Elems[1], lets, isScatter); n > 2 {
		t.Errorf("t_sc gradient has %d scatters, want ≤ 2: %s", n, full)
	}
	checkGradient(t, "t_sc", src, map[string]*value{"a": vals(coretest.F64(5), 1, -2, 3, 0.5, 2)}, checkOpts{})
}

// TestGoldenMatmat: the VJP of matmul x y is two matmuls with transposes:
// dx = matmul dret (tr [1,0] y), dy = matmul (tr [1,0] x) dret.
func TestGoldenMatmat(t *testing.T) {
	p := parse(t, `fn (x : [3,4] f64, y : [4,2] f64) => matmul x y`)
	a := must(t)(VJP(p))
	want := `fn (x : [3,4] f64, y : [4,2] f64, dret : [3,2] f64) => (matmul x y, matmul dret (tr [1,0] y), matmul (tr [1,0] x) dret)`
	if got := a.String(); got != want {
		t.Errorf("matmat VJP:\n got %s\nwant %s", got, want)
	}
	rng := rand.New(rand.NewSource(9))
	checkGradient(t, "matmat", p, randomArgs(rng, p, -1, 1, 0), checkOpts{})
}

// TestGoldenOverleaf: overleaf v = sumOuter (build1 50 (\i -> index v [rem i 28])): the BOT
// makes it one gather, its gradient is one scatter (22 twos then 6 ones).
func TestGoldenOverleaf(t *testing.T) {
	p := parse(t, `fn (v : [28] f64) => sumOuter (build1 50 (\i -> index v [rem i 28]))`)
	a := must(t)(Grad(p))
	noShare(t, a)
	tu, lets := tupleOf(a.Program())
	isScatter := func(n core.Term) bool { _, ok := n.(*core.Scatter); return ok }
	isOther := func(n core.Term) bool {
		switch n.(type) {
		case *core.Gather, *core.Binary, *core.FromVector:
			return true
		}
		return false
	}
	if n := countNodes(tu.Elems[1], lets, isScatter); n != 1 {
		t.Errorf("overleaf gradient has %d scatters, want 1: %s", n, a)
	}
	if n := countNodes(tu.Elems[1], lets, isOther); n != 0 {
		t.Errorf("overleaf gradient has %d gathers/arithmetic nodes besides the scatter: %s", n, a)
	}
	checkOverleaf(t, p, checkOpts{})
}

// TestKeepLets: lets named in Options.Keep survive with their names and bound terms in the
// artifact's primal part (adapter style: one let per node).
func TestKeepLets(t *testing.T) {
	p := parse(t, `fn (x : [4,3] f64, w : [3,2] f64, b : [4,2] f64) => let n1 = matmul x w in let n2 = n1 + b in let n3 = tanh n2 in let n4 = n3 * n3 in sumOuter (sumOuter n4)`)
	keep := []string{"n1", "n2", "n3", "n4"}
	a, err := GradWith(p, Options{Keep: keep})
	if err != nil {
		t.Fatal(err)
	}
	_, lets := tupleOf(a.Program())
	_, orig := tupleOfBody(p.Body)
	for _, k := range keep {
		got, ok := lets[k]
		if !ok {
			t.Errorf("let %s missing from the artifact: %s", k, a)
			continue
		}
		if !core.Equal(got, orig[k]) {
			t.Errorf("let %s = %s in the artifact, %s in the input", k, got, orig[k])
		}
	}
	rng := rand.New(rand.NewSource(4))
	checkGradient(t, "keep", p, randomArgs(rng, p, -1, 1, 0), checkOpts{skipBOT: true})
}

func tupleOfBody(t core.Term) (core.Term, map[string]core.Term) {
	chain, r := core.LetChain(t)
	lets := map[string]core.Term{}
	for _, l := range chain {
		lets[l.Var.Name] = l.Bound
	}
	return r, lets
}

// TestConcurrentGrad: Grad from 8 goroutines on different programs gives the same artifacts
// as sequential calls (run with -race).
func TestConcurrentGrad(t *testing.T) {
	var progs []*core.Program
	for seed := int64(1); len(progs) < 16; seed++ {
		progs = append(progs, coretest.RandomProgram(rand.New(rand.NewSource(seed)), coretest.Config{Dtype: core.Float64, Smooth: true, ScalarResult: true}))
	}
	seq := make([]string, len(progs))
	for k, p := range progs {
		a := must(t)(Grad(p))
		seq[k] = a.String()
	}
	par := make([]string, len(progs))
	errs := make([]error, len(progs))
	var wg sync.WaitGroup
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for k := w; k < len(progs); k += 8 {
				a, err := Grad(progs[k])
				if err != nil {
					errs[k] = err
					return
				}
				par[k] = a.String()
			}
		}(w)
	}
	wg.Wait()
	for k := range progs {
		if errs[k] != nil {
			t.Fatal(errs[k])
		}
		if par[k] != seq[k] {
			t.Errorf("program %d: concurrent artifact differs:\n%s\n%s", k, par[k], seq[k])
		}
	}
	// One artifact run from several goroutines at once.
	a := must(t)(Grad(progs[0]))
	args := coretest.RandomArgs(rand.New(rand.NewSource(3)), progs[0])
	_, g0, err := a.Run(args)
	if err != nil {
		t.Fatal(err)
	}
	var wg2 sync.WaitGroup
	res := make([]string, 8)
	for w := 0; w < 8; w++ {
		wg2.Add(1)
		go func(w int) {
			defer wg2.Done()
			_, g, err := a.Run(args)
			if err != nil {
				res[w] = err.Error()
				return
			}
			res[w] = fmt.Sprint(denseToF64(g["p0"]))
		}(w)
	}
	wg2.Wait()
	for _, r := range res {
		if r != fmt.Sprint(denseToF64(g0["p0"])) {
			t.Errorf("concurrent Run: %s", r)
		}
	}
}

// TestArtifactAPI: Program, Wrt, String and Run agree; VJP artifacts take dret.
func TestArtifactAPI(t *testing.T) {
	p := parse(t, `fn (x : [3] f64, y : [3] f64) => x * sin y`)
	a := must(t)(VJP(p, "y"))
	if a.Program().Param(DretName) == nil || !strings.Contains(a.String(), "dret : [3] f64") {
		t.Errorf("VJP artifact without dret: %s", a)
	}
	if w := a.Wrt(); len(w) != 1 || w[0] != "y" {
		t.Errorf("Wrt %v", w)
	}
	x, y, d := vals(coretest.F64(3), 1, 2, 3), vals(coretest.F64(3), 0.1, 0.2, 0.3), vals(coretest.F64(3), 1, -1, 2)
	v, g := runArtifact(t, a, map[string]*value{"x": x, "y": y, DretName: d})
	for k := 0; k < 3; k++ {
		if relErr(v[k], x.f[k]*sinf(y.f[k])) > 1e-15 || relErr(g["y"][k], d.f[k]*x.f[k]*cosf(y.f[k])) > 1e-15 {
			t.Errorf("k=%d: value %v gradient %v", k, v[k], g["y"][k])
		}
	}
	if _, _, err := a.Run(nil); err == nil {
		t.Errorf("Run without arguments succeeded")
	}
}

// TestGoldenMatmatBuild: matmat written element-wise with build1 and sumOuter becomes one
// matmul under the BOT and the simplifier's contraction, and its VJP is two matmuls with
// transposes.
func TestGoldenMatmatBuild(t *testing.T) {
	p := parse(t, `fn (x : [3,4] f64, y : [4,2] f64) => build1 3 (\i -> build1 2 (\j -> sumOuter (build1 4 (\k -> index x [i, k] * index y [k, j]))))`)
	a := must(t)(VJP(p))
	noShare(t, a)
	tu, lets := tupleOf(a.Program())
	for k, want := range [][2]string{{"dret", "y"}, {"x", "dret"}} {
		g := resolve(tu.Elems[k+1], lets)
		m, ok := g.(*core.MatMul)
		if !ok {
			t.Fatalf("gradient %d is %s, want a matmul: %s", k, g, a)
		}
		// one operand is the transpose of a parameter, the other the cotangent
		ops := []core.Term{resolve(m.X, lets), resolve(m.Y, lets)}
		tr, isTr := ops[1-k].(*core.Transpose)
		if !isTr {
			t.Errorf("gradient %d: operand %s is not a transpose: %s", k, ops[1-k], a)
			continue
		}
		if v, ok := tr.X.(*core.Var); !ok || (v.Name != want[0] && v.Name != want[1]) {
			t.Errorf("gradient %d: transposes %s: %s", k, tr.X, a)
		}
	}
	rng := rand.New(rand.NewSource(9))
	checkGradient(t, "matmat build", p, randomArgs(rng, p, -1, 1, 0), checkOpts{})
}

// component returns the program computing component k of a's result tuple (the artifact
// is an ordinary core program, so it can be differentiated again).
func component(t *testing.T, p *core.Program, k int, drop string) *core.Program {
	t.Helper()
	lets, body := core.LetChain(p.Body)
	var out core.Term = body.(*core.Tuple).Elems[k]
	var b core.Builder
	for i := len(lets) - 1; i >= 0; i-- {
		out = b.Let(lets[i].Var, lets[i].Bound, out)
	}
	var params []*core.Var
	for _, v := range p.Params {
		if v.Name != drop {
			params = append(params, v)
		}
	}
	return mustProg(t, &b, params, out)
}

// TestSecondOrder: differentiating a gradient program again gives second derivatives:
// f = sumOuter (x * sin x * y): d²f/dx_i² = (2 cos x_i - x_i sin x_i) y_i, d²f/dx_i dy_i = sin x_i + x_i cos x_i.
func TestSecondOrder(t *testing.T) {
	p := parse(t, `fn (x : [3] f64, y : [3] f64) => sumOuter (x * sin x * y)`)
	a := must(t)(Grad(p, "x"))
	gx := component(t, a.Program(), 1, "")
	// sum of the gradient components: its gradient is the row sums of the Hessian, which is
	// diagonal per element here.
	var b core.Builder
	sum := b.SumOuter(resultOf(gx.Body))
	sp := mustProg(t, &b, gx.Params, replaceResult(&b, gx.Body, sum))
	h := must(t)(Grad(sp))
	args := map[string]*value{"x": vals(coretest.F64(3), 0.3, -1.2, 2), "y": vals(coretest.F64(3), 1.5, -0.5, 0.25)}
	_, g := runArtifact(t, h, args)
	for i := 0; i < 3; i++ {
		x, y := args["x"].f[i], args["y"].f[i]
		if want := (2*cosf(x) - x*sinf(x)) * y; relErr(g["x"][i], want) > 1e-12 {
			t.Errorf("d²f/dx%d² = %v, want %v", i, g["x"][i], want)
		}
		if want := sinf(x) + x*cosf(x); relErr(g["y"][i], want) > 1e-12 {
			t.Errorf("d²f/dx%d dy%d = %v, want %v", i, i, g["y"][i], want)
		}
	}
	checkGradient(t, "second order", sp, args, checkOpts{})
}

func resultOf(t core.Term) core.Term {
	_, r := core.LetChain(t)
	return r
}

func replaceResult(b *core.Builder, t core.Term, r core.Term) core.Term {
	l, ok := t.(*core.Let)
	if !ok {
		return r
	}
	return b.Let(l.Var, l.Bound, replaceResult(b, l.Body, r))
}
