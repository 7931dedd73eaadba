package kernel

import (
	"fmt"
	"math"
	"math/rand"
	"testing"

	"github.com/bulkad/bulkad/core"
	"github.com/bulkad/bulkad/core/coretest"
	"github.com/bulkad/bulkad/core/tensors"
	"gorgonia.org/tensor"
)

// propConfig varies the generator over the seeds: both float dtypes, nested builds, global
// sharing, shadowing binder names, larger let chains.
func propConfig(seed int64) coretest.Config {
	cfg := coretest.Config{Dtype: core.Float64, Shares: seed%2 == 0, ReuseNames: seed%5 == 0}
	if seed%3 == 0 {
		cfg.Dtype = core.Float32
	}
	switch seed % 4 {
	case 1:
		cfg.BuildProb, cfg.MaxBuildNest = 0.4, 3
	case 2:
		cfg.MaxDepth, cfg.MaxDim = 8, 5
	case 3:
		cfg.TargetNodes = 40
	}
	return cfg
}

// propCase is the generated program of a seed and its arguments (a third of the argument
// sets, poison set, with ±Inf and NaN elements).
func propCase(seed int64) (cfg coretest.Config, p *core.Program, args map[string]*tensor.Dense, poison bool) {
	rng := rand.New(rand.NewSource(seed))
	cfg = propConfig(seed)
	p = coretest.RandomProgram(rng, cfg)
	args = coretest.RandomArgs(rng, p)
	if poison = seed%3 == 1; poison {
		coretest.PoisonArgs(rng, p, args)
	}
	return cfg, p, args, poison
}

// reorders reports whether p contains an operation whose kernel may add in another order
// than core.Eval (matmul: blocked products); elsewhere the two must agree exactly.
func reorders(p *core.Program) bool {
	found := false
	core.PostOrder(p.Body, func(t core.Term) {
		if _, ok := t.(*core.MatMul); ok {
			found = true
		}
	})
	return found
}

// agree compares the kernel's result with the reference: NaN exactly where the reference
// has NaN, infinities equal, finite values bit for bit when exact, else within rel·(1+|want|).
func agree(got, want *tensor.Dense, exact bool, rel float64) error {
	if got.Dtype() != want.Dtype() || !got.Shape().Eq(want.Shape()) {
		return fmt.Errorf("got %v %v, want %v %v", got.Dtype(), got.Shape(), want.Dtype(), want.Shape())
	}
	g, err := tensors.ToLit(got)
	if err != nil {
		return err
	}
	w, err := tensors.ToLit(want)
	if err != nil {
		return err
	}
	for i, wv := range w.F {
		gv := g.F[i]
		var ok bool
		switch {
		case math.IsNaN(wv) || math.IsNaN(gv):
			ok = math.IsNaN(wv) && math.IsNaN(gv)
		case exact:
			ok = math.Float64bits(gv) == math.Float64bits(wv)
		case math.IsInf(wv, 0):
			ok = gv == wv
		default:
			ok = math.Abs(gv-wv) <= rel*(1+math.Abs(wv))
		}
		if !ok {
			return fmt.Errorf("element %d: kernel %v, reference %v (exact %v)", i, gv, wv, exact)
		}
	}
	return nil
}

// TestKernelAgreesWithReference runs 5,000 generated programs (both dtypes, nested builds,
// shares; out-of-bounds indices from the generator; a third of the argument sets with ±Inf
// and NaN elements) with the kernel evaluator and with core.Eval.
func TestKernelAgreesWithReference(t *testing.T) {
	n := int64(5000)
	if testing.Short() {
		n = 500
	}
	var exact, poisoned int
	for seed := int64(0); seed < n; seed++ {
		cfg, p, args, poison := propCase(seed)
		if poison {
			poisoned++
		}
		want, err := tensors.Eval(p, args)
		if err != nil {
			t.Fatalf("seed %d: core.Eval: %v\n%v", seed, err, p)
		}
		got, err := Eval(p, args)
		if err != nil {
			t.Fatalf("seed %d: kernel Eval: %v\n%v", seed, err, p)
		}
		ex := !reorders(p)
		if ex {
			exact++
		}
		rel := 1e-12
		if cfg.Dtype == core.Float32 {
			rel = 1e-5
		}
		if err := agree(got, want, ex, rel); err != nil {
			t.Fatalf("seed %d: %v\nprogram: %v\nargs: %v", seed, err, p, args)
		}
	}
	t.Logf("%d programs, %d compared exactly, %d with infinities and NaNs", n, exact, poisoned)
}

// TestOpIndexKernelsAgreeWithReference checks the op kernels' side of the index-function
// compiler (CompileIndexFn, Gather, Scatter, with the affine and clipped plans where raise uses them) on every
// gather and scatter of generated programs whose operands can be evaluated on their own (no
// variable of an enclosing build): the kernel, fed the operand and the extra inputs computed by
// core.Eval, must equal core.Eval of the whole gather or scatter — exactly, out-of-bounds
// indices, infinities and NaNs included (a scatter adds collisions in domain order like the
// reference).
func TestOpIndexKernelsAgreeWithReference(t *testing.T) {
	n := int64(3000)
	if testing.Short() {
		n = 300
	}
	var checked, compiled, affine, clipped, extra int
	for seed := int64(0); seed < n; seed++ {
		_, p, args, _ := propCase(seed)
		params := map[string]bool{}
		for _, v := range p.Params {
			params[v.Name] = true
		}
		closed := func(t core.Term) bool {
			for _, v := range core.FreeVars(t) {
				if !params[v.Name] {
					return false
				}
			}
			return true
		}
		core.PostOrder(p.Body, func(term core.Term) {
			var x core.Term
			var fn *core.IndexFn
			switch u := term.(type) {
			case *core.Gather:
				x, fn = u.X, u.Fn
			case *core.Scatter:
				x, fn = u.X, u.Fn
			default:
				return
			}
			if !closed(term) {
				return
			}
			checked++
			prog, err := CompileIndexFn(fn)
			if err != nil {
				if !isUnsupportedIx(err) {
					t.Fatalf("seed %d: %v: %v", seed, term, err)
				}
				return
			}
			compiled++
			if len(prog.Frees) > 0 {
				extra++
			}
			ins := []any{evalFlat(t, x, args)}
			for _, f := range prog.Frees {
				ins = append(ins, evalFlat(t, f, args))
			}
			want := evalFlat(t, term, args)
			got := zeroLike(want)
			xs, sh := x.Type().Shape, term.Type().Shape
			nv, m := len(fn.Vars), len(fn.Out)
			var k Kernel
			var ip *IndexPlan
			if g, ok := term.(*core.Gather); ok {
				gk := &Gather{Dom: g.Shape[:nv], Src: xs[:m], Rest: xs[m:].Size(), IndexPlan: IndexPlan{Fn: prog}}
				gk.SetFastPaths(gk.Dom, gk.Src)
				k, ip = gk, &gk.IndexPlan
			} else {
				sk := &Scatter{Dom: xs[:nv], Dst: sh[:m], Rest: xs[nv:].Size(), IndexPlan: IndexPlan{Fn: prog}}
				sk.SetFastPaths(sk.Dom, sk.Dst)
				k, ip = sk, &sk.IndexPlan
			}
			affine += b2iInt(ip.Affine)
			clipped += b2iInt(!ip.Affine && ip.Clip != nil)
			if err := k.Run(got, ins); err != nil {
				t.Fatalf("seed %d: %v: run: %v", seed, term, err)
			}
			if err := agreeAny(got, want, sh); err != nil {
				t.Fatalf("seed %d: %v\n%v\nargs %v", seed, err, term, args)
			}
		})
	}
	if compiled < checked/2 || affine == 0 || clipped == 0 || extra == 0 {
		t.Fatalf("only %d of %d gathers/scatters compiled (%d affine, %d clipped, %d with extra inputs): the test covers too little", compiled, checked, affine, clipped, extra)
	}
	t.Logf("%d gathers/scatters, %d compiled (%d with the affine plan, %d with the clipped plan, %d with extra inputs)", checked, compiled, affine, clipped, extra)
}

func b2iInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// evalFlat evaluates a closed term with the reference evaluator and returns its flat data.
func evalFlat(t *testing.T, term core.Term, args map[string]*tensor.Dense) any {
	t.Helper()
	d, err := tensors.EvalTerm(term, args)
	if err != nil {
		t.Fatalf("core.Eval %v: %v", term, err)
	}
	typ, err := tensors.TypeOf(d)
	if err != nil {
		t.Fatal(err)
	}
	f64, f32, i64, b, err := tensors.Data(d, typ.Dtype, typ.Shape.Size())
	if err != nil {
		t.Fatal(err)
	}
	switch typ.Dtype {
	case core.Float64:
		return append([]float64{}, f64...)
	case core.Float32:
		return append([]float32{}, f32...)
	case core.Int64:
		return append([]int64{}, i64...)
	}
	return append([]bool{}, b...)
}

func zeroLike(s any) any {
	switch x := s.(type) {
	case []float64:
		return make([]float64, len(x))
	case []float32:
		return make([]float32, len(x))
	case []int64:
		return make([]int64, len(x))
	case []bool:
		return make([]bool, len(x))
	}
	return nil
}

func denseOf(s any, sh core.Shape) *tensor.Dense {
	return tensor.New(tensor.WithShape([]int(sh)...), tensor.WithBacking(s))
}

// agreeAny compares flat results of any dtype exactly (floats as agree does: NaN where and
// only where the reference has NaN).
func agreeAny(got, want any, sh core.Shape) error {
	switch want.(type) {
	case []float64, []float32:
		return agree(denseOf(got, sh), denseOf(want, sh), true, 0)
	}
	if g, w := fmt.Sprint(got), fmt.Sprint(want); g != w {
		return fmt.Errorf("kernel %s, reference %s", g, w)
	}
	return nil
}

// TestCompileIndexFnUnfoldsShares: an op kernel's index function whose outputs share a
// subterm of the index variables (a convolution's window position) compiles into closures
// (the op kernels have no per-point fallback; refusing it made raise evaluate such gathers as
// whole programs, 2.6× slower on the convnet step) and computes what core.Eval computes.
func TestCompileIndexFnUnfoldsShares(t *testing.T) {
	var bl core.Builder
	x := bl.Var("x", ty(core.Float64, 7, 3))
	i, j := bl.Var("i", core.Scalar(core.Int64)), bl.Var("j", core.Scalar(core.Int64))
	pos := bl.Share(1, bl.Add(bl.Binary(core.OpQuot, i, core.ScalarI(2)), j)) // shared by both outputs
	fn := bl.IndexFn([]*core.Var{i, j}, pos, bl.Binary(core.OpRem, pos, core.ScalarI(3)))
	g := bl.Gather(core.Shape{6, 4}, x, fn)
	if err := bl.Err(); err != nil {
		t.Fatal(err)
	}
	prog, err := CompileIndexFn(fn)
	if err != nil {
		t.Fatalf("CompileIndexFn refused a shared subterm: %v", err)
	}
	args := map[string]*tensor.Dense{"x": tensor.New(tensor.WithShape(7, 3), tensor.WithBacking(benchData(21, 1)))}
	want := evalFlat(t, g, args)
	got := zeroLike(want)
	k := &Gather{Dom: []int{6, 4}, Src: []int{7, 3}, Rest: 1, IndexPlan: IndexPlan{Fn: prog}}
	if err := k.Run(got, []any{evalFlat(t, x, args)}); err != nil {
		t.Fatal(err)
	}
	if err := agreeAny(got, want, core.Shape{6, 4}); err != nil {
		t.Fatal(err)
	}
}
