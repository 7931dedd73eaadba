package kernel

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/bulkad/bulkad/core"

	"gorgonia.org/tensor"
)

func countEvals(t *testing.T, p *core.Program, args map[string]*tensor.Dense) (map[core.Term]int, []*tensor.Dense) {
	t.Helper()
	e, err := Compile(p)
	if err != nil {
		t.Fatal(err)
	}
	counts := map[core.Term]int{}
	e.hook = func(n core.Term) { counts[n]++ }
	rs, err := e.Run(args)
	if err != nil {
		t.Fatal(err)
	}
	return counts, rs
}

func TestEvalLetShareOnce(t *testing.T) {
	var b core.Builder
	x := b.Var("x", ty(core.Float64, 3))
	ex := b.Unary(core.OpExp, x)
	y := b.Var("y", ty(core.Float64, 3))
	p := mustProg(t, &b, []*core.Var{x}, b.Let(y, ex, b.Add(y, b.Mul(y, y))))
	counts, rs := countEvals(t, p, map[string]*tensor.Dense{"x": fd(core.Float64, []int{3}, 0, 1, 2)})
	if counts[ex] != 1 {
		t.Fatalf("let-bound exp evaluated %d times, want 1", counts[ex])
	}
	e1 := math.E
	checkFloats(t, "let", floats(t, rs[0]), []float64{2, e1 + e1*e1, math.Exp(2) + math.Exp(4)}, 1e-14)

	// Two distinct share nodes with the same ID denote one value, computed once.
	var b2 core.Builder
	x = b2.Var("x", ty(core.Float64, 3))
	ex1 := b2.Unary(core.OpExp, x)
	ex2 := b2.Unary(core.OpExp, x)
	s1 := b2.Share(7, ex1)
	s2 := b2.Share(7, ex2)
	p2 := mustProg(t, &b2, []*core.Var{x}, b2.Add(s1, s2))
	counts, rs = countEvals(t, p2, map[string]*tensor.Dense{"x": fd(core.Float64, []int{3}, 0, 1, 2)})
	if counts[ex1]+counts[ex2] != 1 {
		t.Fatalf("share 7 evaluated %d+%d times, want once", counts[ex1], counts[ex2])
	}
	checkFloats(t, "share", floats(t, rs[0]), []float64{2, 2 * e1, 2 * math.Exp(2)}, 1e-14)
}

func TestEvalBuild1HoistsClosedSubterms(t *testing.T) {
	// build1 5 (\i -> index x [i] + sumOuter y): sumOuter y is closed in the body.
	var b core.Builder
	x := b.Var("x", ty(core.Float32, 5))
	y := b.Var("y", ty(core.Float32, 4))
	i := b.Var("i", core.Scalar(core.Int64))
	sy := b.SumOuter(y)
	ix := b.Index(x, i)
	p := mustProg(t, &b, []*core.Var{x, y}, b.Build1(5, i, b.Add(ix, sy)))
	counts, rs := countEvals(t, p, map[string]*tensor.Dense{"x": fd(core.Float32, []int{5}, 1, 2, 3, 4, 5), "y": fd(core.Float32, []int{4}, 1, 1, 1, 1)})
	if counts[sy] != 1 {
		t.Fatalf("closed sumOuter in build1 body evaluated %d times, want 1", counts[sy])
	}
	if counts[ix] != 5 {
		t.Fatalf("index x [i] evaluated %d times, want 5", counts[ix])
	}
	checkFloats(t, "build1", floats(t, rs[0]), []float64{5, 6, 7, 8, 9}, 0)

	// Nested: build1 2 (\i -> build1 3 (\j -> (cast (i*10) + a) + cast j)): the first
	// summand depends on i and the parameter a only, so it runs once per outer index (2
	// times), not 6.
	var b2 core.Builder
	a := b2.Var("a", core.Scalar(core.Float64))
	i2 := b2.Var("i", core.Scalar(core.Int64))
	j2 := b2.Var("j", core.Scalar(core.Int64))
	ci := b2.Add(b2.Cast(core.Float64, b2.Mul(i2, core.ScalarI(10))), a)
	p2 := mustProg(t, &b2, []*core.Var{a}, b2.Build1(2, i2, b2.Build1(3, j2, b2.Add(ci, b2.Cast(core.Float64, j2)))))
	counts, rs = countEvals(t, p2, map[string]*tensor.Dense{"a": fd(core.Float64, nil, 0.5)})
	if counts[ci] != 2 {
		t.Fatalf("outer-only subterm evaluated %d times, want 2", counts[ci])
	}
	checkFloats(t, "nested build", floats(t, rs[0]), []float64{0.5, 1.5, 2.5, 10.5, 11.5, 12.5}, 0)

	// A closed subterm (no free variables) is computed once by Compile and not by any run.
	var b3 core.Builder
	x3 := b3.Var("x", ty(core.Float64, 3))
	closed := b3.Replicate(3, b3.Unary(core.OpExp, core.ScalarF(core.Float64, 1)))
	p3 := mustProg(t, &b3, []*core.Var{x3}, b3.Mul(x3, closed))
	e, err := Compile(p3)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	e.hook = func(u core.Term) {
		if u == closed {
			n++
		}
	}
	for run := 1; run <= 2; run++ {
		rs, err := e.Run(map[string]*tensor.Dense{"x": fd(core.Float64, []int{3}, 1, 2, float64(run))})
		if err != nil {
			t.Fatal(err)
		}
		checkFloats(t, "closed subterm", floats(t, rs[0]), []float64{math.E, 2 * math.E, float64(run) * math.E}, 1e-15)
	}
	if n != 0 {
		t.Fatalf("closed subterm evaluated %d times by runs, want 0", n)
	}
}

func TestEvalDeepSharing(t *testing.T) {
	const levels = 60
	// let chain: let x1 = x0 + x0 in let x2 = x1 + x1 in … x60
	var b core.Builder
	x0 := b.Var("x0", ty(core.Float64, 2))
	vars := []*core.Var{x0}
	bounds := []core.Term{}
	for k := 1; k <= levels; k++ {
		prev := vars[k-1]
		bounds = append(bounds, b.Add(prev, prev))
		vars = append(vars, b.Var(fmt.Sprintf("x%d", k), ty(core.Float64, 2)))
	}
	var body core.Term = vars[levels]
	for k := levels; k >= 1; k-- {
		body = b.Let(vars[k], bounds[k-1], body)
	}
	p := mustProg(t, &b, []*core.Var{x0}, body)
	checkFloats(t, "let chain", evalF(t, p, map[string]*tensor.Dense{"x0": fd(core.Float64, []int{2}, 1, -3)}),
		[]float64{math.Pow(2, levels), -3 * math.Pow(2, levels)}, 0)

	// share chain: s_{k+1} = share k (s_k + s_k), a DAG with 2^60 paths.
	var b2 core.Builder
	x := b2.Var("x", ty(core.Float32, 2))
	var s core.Term = x
	for k := 1; k <= levels; k++ {
		s = b2.Share(k, b2.Add(s, s))
	}
	p2 := mustProg(t, &b2, []*core.Var{x}, s)
	counts, rs := countEvals(t, p2, map[string]*tensor.Dense{"x": fd(core.Float32, []int{2}, 1, 0.5)})
	total := 0
	for _, n := range counts {
		total += n
	}
	if total != levels {
		t.Fatalf("share chain ran %d instructions, want %d", total, levels)
	}
	checkFloats(t, "share chain", floats(t, rs[0]), []float64{math.Pow(2, levels), math.Pow(2, levels-1)}, 0)

	// plain pointer sharing without share/let
	var b3 core.Builder
	x = b3.Var("x", ty(core.Float64, 1))
	s = x
	for k := 1; k <= levels; k++ {
		s = b3.Add(s, s)
	}
	p3 := mustProg(t, &b3, []*core.Var{x}, s)
	checkFloats(t, "pointer chain", evalF(t, p3, map[string]*tensor.Dense{"x": fd(core.Float64, []int{1}, 1)}), []float64{math.Pow(2, levels)}, 0)
}

func TestEvalArgumentErrors(t *testing.T) {
	var b core.Builder
	x := b.Var("x", ty(core.Float64, 4))
	p := mustProg(t, &b, []*core.Var{x}, b.Unary(core.OpExp, x))
	cases := []struct {
		args map[string]*tensor.Dense
		want string
	}{
		{map[string]*tensor.Dense{}, "missing argument for parameter x : [4] f64"},
		{nil, "missing argument"},
		{map[string]*tensor.Dense{"x": fd(core.Float64, []int{3}, 1, 2, 3)}, "argument x has shape [3] (f64), parameter x : [4] f64"},
		{map[string]*tensor.Dense{"x": fd(core.Float32, []int{4}, 1, 2, 3, 4)}, "argument x has shape [4] (f32), parameter x : [4] f64"},
		{map[string]*tensor.Dense{"x": id([]int{4}, 1, 2, 3, 4)}, "argument x has shape [4] (i64)"},
		{map[string]*tensor.Dense{"x": nil}, "argument x is nil"},
		{map[string]*tensor.Dense{"x": fd(core.Float64, []int{4}, 1, 2, 3, 4), "w": fd(core.Float64, []int{4}, 1, 2, 3, 4)}, "argument w is not a parameter"},
	}
	for _, c := range cases {
		_, err := Eval(p, c.args)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Fatalf("args %v: error %v, want it to contain %q", c.args, err, c.want)
		}
		if !strings.HasPrefix(err.Error(), "core: eval: ") {
			t.Fatalf("error %q lacks the core: eval: prefix", err)
		}
	}
	if _, err := Eval(nil, nil); err == nil {
		t.Fatal("Eval(nil) succeeded")
	}
	if _, err := EvalTuple(&core.Program{}, nil); err == nil {
		t.Fatal("EvalTuple of an empty program succeeded")
	}
	if _, err := EvalTerm(nil, nil); err == nil {
		t.Fatal("EvalTerm(nil) succeeded")
	}
	if _, err := Compile(&core.Program{Body: &core.Var{Name: "x"}}); err == nil {
		t.Fatal("Compile of an untyped term succeeded")
	}
	var e *Exec
	if _, err := e.Run(nil); err == nil {
		t.Fatal("nil Exec ran")
	}
	if err := e.RunInto(nil); err == nil {
		t.Fatal("nil Exec ran")
	}
	ex, err := Compile(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := ex.RunInto([]*tensor.Dense{fd(core.Float64, []int{4}, 0, 0, 0, 0)}); err == nil {
		t.Fatal("RunInto with too few arguments succeeded")
	}
	if err := ex.RunInto([]*tensor.Dense{fd(core.Float64, []int{3}, 0, 0, 0)}, fd(core.Float64, []int{4}, 1, 2, 3, 4)); err == nil {
		t.Fatal("RunInto with a wrong output shape succeeded")
	}
	if err := ex.RunInto(nil, fd(core.Float64, []int{4}, 1, 2, 3, 4)); err == nil {
		t.Fatal("RunInto without outputs succeeded")
	}
}

func TestRunIntoReuseAndAllocs(t *testing.T) {
	for _, d := range floatDtypes {
		// fn (x : [3,4], am : [4] i64) => gather [4] x (\[j] -> [index am [j], j])
		var b core.Builder
		x := b.Var("x", ty(d, 3, 4))
		am := b.Var("am", ty(core.Int64, 4))
		j := b.Var("j", core.Scalar(core.Int64))
		p := mustProg(t, &b, []*core.Var{x, am}, b.Gather(core.Shape{4}, x, b.IndexFn([]*core.Var{j}, b.Index(am, j), j)))
		e, err := Compile(p)
		if err != nil {
			t.Fatal(err)
		}
		out := fd(d, []int{4}, 0, 0, 0, 0)
		xv := fd(d, []int{3, 4}, 0, 1, 2, 3, 10, 11, 12, 13, 20, 21, 22, 23)
		a1 := id([]int{4}, 0, 1, 2, 3)
		if err := e.RunInto([]*tensor.Dense{out}, xv, a1); err != nil {
			t.Fatal(err)
		}
		checkFloats(t, "run 1", floats(t, out), []float64{0, 11, 22, 0}, 0)
		a2 := id([]int{4}, 2, 2, -1, 1)
		if err := e.RunInto([]*tensor.Dense{out}, xv, a2); err != nil {
			t.Fatal(err)
		}
		checkFloats(t, "run 2", floats(t, out), []float64{20, 21, 0, 13}, 0)
		allocs := testing.AllocsPerRun(20, func() {
			if err := e.RunInto([]*tensor.Dense{out}, xv, a1); err != nil {
				t.Fatal(err)
			}
		})
		if allocs > 1 {
			t.Fatalf("RunInto of a single gather allocates %v times per run, want ≤ 1", allocs)
		}
		// Run returns fresh tensors that later runs do not overwrite.
		r1, err := e.Run(map[string]*tensor.Dense{"x": xv, "am": a1})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.Run(map[string]*tensor.Dense{"x": xv, "am": a2}); err != nil {
			t.Fatal(err)
		}
		checkFloats(t, "run result kept", floats(t, r1[0]), []float64{0, 11, 22, 0}, 0)
	}
}

// Regression: a let-bound variable whose value is closed (computed at Compile) used by a
// closed consumer must be computed before that consumer.
func TestEvalClosedLetOrder(t *testing.T) {
	var b core.Builder
	p2 := b.Var("p2", core.Scalar(core.Float64))
	x2 := b.Var("x2", core.Scalar(core.Float64))
	s := b.Let(x2, core.ScalarF(core.Float64, 1.5), b.SumOuter(b.Replicate(4, x2)))
	p := mustProg(t, &b, []*core.Var{p2}, b.Add(b.Unary(core.OpSign, b.Replicate(3, s)), b.Replicate(3, b.Mul(s, p2))))
	got := evalF(t, p, map[string]*tensor.Dense{"p2": tensor.New(tensor.FromScalar(0.5))})
	checkFloats(t, "closed let", got, []float64{4, 4, 4}, 0)
}

// Products above gemmThreshold go through gonum's gemm; both paths against a naive loop.
func TestEvalMatMulLarge(t *testing.T) {
	for _, d := range floatDtypes {
		for _, s := range [][3]int{{70, 65, 80}, {5, 3, 4}, {3, 0, 2}} {
			m, k, n := s[0], s[1], s[2]
			xs, ys := benchData(m*k, 11), benchData(k*n, 12)
			var b core.Builder
			x := b.Var("x", ty(d, m, k))
			y := b.Var("y", ty(d, k, n))
			p := mustProg(t, &b, []*core.Var{x, y}, b.MatMul(x, y))
			got := evalF(t, p, map[string]*tensor.Dense{"x": fd(d, []int{m, k}, xs...), "y": fd(d, []int{k, n}, ys...)})
			want := make([]float64, m*n)
			for i := 0; i < m; i++ {
				for j := 0; j < n; j++ {
					for q := 0; q < k; q++ {
						a, c := xs[i*k+q], ys[q*n+j]
						if d == core.Float32 {
							a, c = float64(float32(a)), float64(float32(c))
						}
						want[i*n+j] += a * c
					}
				}
			}
			tol := 1e-12
			if d == core.Float32 {
				tol = 1e-5
			}
			checkFloats(t, fmt.Sprintf("matmul %v %v", s, d), got, want, tol)
		}
	}
}

// A literal tampered with after construction gives an error, not a panic.
func TestEvalTamperedLiteral(t *testing.T) {
	l, err := core.NewLitF(ty(core.Float64, 3), []float64{1, 2, 3})
	if err != nil {
		t.Fatal(err)
	}
	var b core.Builder
	x := b.Var("x", ty(core.Float64, 3))
	p := mustProg(t, &b, []*core.Var{x}, b.Add(x, l))
	l.F = l.F[:1]
	if _, err := Eval(p, map[string]*tensor.Dense{"x": fd(core.Float64, []int{3}, 1, 2, 3)}); err == nil {
		t.Fatal("Eval with a 1-value literal of shape [3] succeeded")
	}
}

// Concurrent runs of one Exec are serialised and each gets its own correct result.
func TestExecConcurrentRuns(t *testing.T) {
	var b core.Builder
	x := b.Var("x", ty(core.Float64, 3))
	p := mustProg(t, &b, []*core.Var{x}, b.Mul(x, x))
	e, err := Compile(p)
	if err != nil {
		t.Fatal(err)
	}
	errs := make(chan error, 8)
	for g := 0; g < 8; g++ {
		go func(g int) {
			v := float64(g)
			for it := 0; it < 200; it++ {
				rs, err := e.Run(map[string]*tensor.Dense{"x": fd(core.Float64, []int{3}, v, v+1, v+2)})
				if err != nil {
					errs <- err
					return
				}
				got := rs[0].Float64s()
				if got[0] != v*v || got[1] != (v+1)*(v+1) || got[2] != (v+2)*(v+2) {
					errs <- fmt.Errorf("goroutine %d: got %v", g, got)
					return
				}
			}
			errs <- nil
		}(g)
	}
	for g := 0; g < 8; g++ {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
}
