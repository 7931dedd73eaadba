package lower

import (
	"math"
	"math/rand"
	"strings"
	"testing"

	"github.com/bulkad/bulkad/ad"
	"github.com/bulkad/bulkad/bot"
	"github.com/bulkad/bulkad/core"
	"github.com/bulkad/bulkad/core/coretest"
	"github.com/bulkad/bulkad/core/tensors"
	"github.com/bulkad/bulkad/kernel"
	"gorgonia.org/tensor"
)

// naiveScan is the sequential definition: position i of an inclusive scan is x_0 ⊕ … ⊕ x_i
// along axis 0 of a [n, cols] array; exclusive shifts by one (identity first); reverse runs
// from the end.
func naiveScan(a arr, op func(x, y float64) float64, id float64, o ScanOptions) []float64 {
	n, cols := a.sh[0], a.sh.Size()/a.sh[0]
	out := make([]float64, len(a.v))
	for c := 0; c < cols; c++ {
		acc := id
		for k := 0; k < n; k++ {
			i := k
			if o.Reverse {
				i = n - 1 - k
			}
			if o.Exclusive {
				out[i*cols+c] = acc
				acc = op(acc, a.v[i*cols+c])
			} else {
				acc = op(acc, a.v[i*cols+c])
				out[i*cols+c] = acc
			}
		}
	}
	return out
}

func lse(x, y float64) float64 {
	m := math.Max(x, y)
	if math.IsInf(m, -1) {
		return m
	}
	return m + math.Log(math.Exp(x-m)+math.Exp(y-m))
}

var scanMonoids = []struct {
	m  Monoid
	op func(x, y float64) float64
}{
	{SumMonoid, func(x, y float64) float64 { return x + y }},
	{ProdMonoid, func(x, y float64) float64 { return x * y }},
	{MaxMonoid, math.Max},
	{MinMonoid, math.Min},
	{LogSumExpMonoid, lse},
}

// TestScanAgainstLoops: every monoid, inclusive/exclusive/forward/reverse, lengths 1 to 9
// (powers of two and not), two columns, against the sequential loop; Reduce is the last entry
// of the inclusive scan.
func TestScanAgainstLoops(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	for _, sm := range scanMonoids {
		for n := 1; n <= 9; n++ {
			a := randArr(rng, n, 2)
			for _, o := range []ScanOptions{{}, {Exclusive: true}, {Reverse: true}, {Exclusive: true, Reverse: true}} {
				got, sh := evalOn(t, func(xs ...core.Term) (core.Term, error) { return Scan(xs[0], 0, sm.m, o) }, a)
				if !sh.Equal(a.sh) {
					t.Fatalf("%s n=%d %+v: shape %v", sm.m.Name, n, o, sh)
				}
				near(t, sm.m.Name+" scan", got, naiveScan(a, sm.op, sm.m.Identity, o), 1e-12)
			}
			red, _ := evalOn(t, func(xs ...core.Term) (core.Term, error) { return Reduce(xs[0], 0, sm.m) }, a)
			incl := naiveScan(a, sm.op, sm.m.Identity, ScanOptions{})
			near(t, sm.m.Name+" reduce", red, incl[len(incl)-2:], 1e-12)
		}
	}
}

// TestScanAxis: a scan along axis 1 of a [2,3] array and a reduction along it.
func TestScanAxis(t *testing.T) {
	a := arr{core.Shape{2, 3}, []float64{1, 2, 3, 4, 5, 6}}
	got, _ := evalOn(t, func(xs ...core.Term) (core.Term, error) { return Scan(xs[0], 1, SumMonoid, ScanOptions{}) }, a)
	near(t, "cumsum axis 1", got, []float64{1, 3, 6, 4, 9, 15}, 0)
	got, _ = evalOn(t, func(xs ...core.Term) (core.Term, error) { return Reduce(xs[0], 1, ProdMonoid) }, a)
	near(t, "product axis 1", got, []float64{6, 120}, 0)
}

// TestScanEdges: ±Inf and ties by hand: cummax with ties, logcumsumexp starting at −Inf, a
// product with zeros.
func TestScanEdges(t *testing.T) {
	inf := math.Inf(1)
	cases := []struct {
		name string
		m    Monoid
		o    ScanOptions
		in   []float64
		want []float64
	}{
		{"cummax ties", MaxMonoid, ScanOptions{}, []float64{1, 3, 3, 2, 5}, []float64{1, 3, 3, 3, 5}},
		{"cummin", MinMonoid, ScanOptions{}, []float64{4, 2, 3, 1}, []float64{4, 2, 2, 1}},
		{"logcumsumexp −Inf", LogSumExpMonoid, ScanOptions{}, []float64{-inf, -inf, 0, math.Log(3)}, []float64{-inf, -inf, 0, math.Log(4)}},
		{"cumprod zeros", ProdMonoid, ScanOptions{}, []float64{2, 0, 3, 0}, []float64{2, 0, 0, 0}},
		{"exclusive reverse cumsum", SumMonoid, ScanOptions{Exclusive: true, Reverse: true}, []float64{1, 2, 3}, []float64{5, 3, 0}},
	}
	for _, c := range cases {
		got, _ := evalOn(t, func(xs ...core.Term) (core.Term, error) { return Scan(xs[0], 0, c.m, c.o) }, arr{core.Shape{len(c.in)}, c.in})
		for i := range got {
			if got[i] != c.want[i] && !(math.IsInf(got[i], -1) && math.IsInf(c.want[i], -1)) {
				t.Errorf("%s: %v, want %v", c.name, got, c.want)
				break
			}
		}
	}
}

// TestScanErrors: the typing rules: a float operand, an axis in range, a combine that keeps
// the type.
func TestScanErrors(t *testing.T) {
	f, _ := core.NewVar("f", core.Type{Shape: core.Shape{3}, Dtype: core.Float64})
	i, _ := core.NewVar("i", core.Type{Shape: core.Shape{3}, Dtype: core.Int64})
	s, _ := core.NewVar("s", core.Type{Shape: core.Shape{}, Dtype: core.Float64})
	bad := Monoid{Name: "bad", Combine: func(a, b core.Term) (core.Term, error) { return Sum(a) }}
	cases := []struct {
		name string
		run  func() (core.Term, error)
		want string
	}{
		{"int operand", func() (core.Term, error) { return Scan(i, 0, SumMonoid, ScanOptions{}) }, "dtype"},
		{"axis", func() (core.Term, error) { return Scan(f, 1, SumMonoid, ScanOptions{}) }, "axis 1 out of range"},
		{"rank 0", func() (core.Term, error) { return Reduce(s, 0, SumMonoid) }, "out of range"},
		{"combine type", func() (core.Term, error) { return Scan(f, 0, bad, ScanOptions{}) }, "a monoid maps two arrays to one of the same type"},
		{"no combine", func() (core.Term, error) { return Reduce(f, 0, Monoid{Name: "none"}) }, "no Combine"},
	}
	for _, c := range cases {
		if _, err := c.run(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error containing %q", c.name, err, c.want)
		}
	}
}

// scanProgram is fn (x : [n] f64) (r : [n] f64) => Σ op(x) ⊙ r.
func scanProgram(t *testing.T, n int, op func(core.Term) (core.Term, error)) *core.Program {
	t.Helper()
	x, _ := core.NewVar("x", core.Type{Shape: core.Shape{n}, Dtype: core.Float64})
	r, _ := core.NewVar("r", core.Type{Shape: core.Shape{n}, Dtype: core.Float64})
	y, err := op(x)
	if err != nil {
		t.Fatal(err)
	}
	var b core.Builder
	if y.Type().Shape.Rank() == 1 {
		y = b.SumOuter(b.Mul(y, r))
	}
	return coretest.MustProgram(t, &b, []*core.Var{x, r}, y)
}

func vec(xs ...float64) *tensor.Dense {
	return tensor.New(tensor.WithShape(len(xs)), tensor.WithBacking(append([]float64(nil), xs...)))
}

// gradAt returns ∂/∂x of the program at x (r given) from the artifact, evaluated by kernel.
func gradAt(t *testing.T, p *core.Program, x, r []float64) []float64 {
	t.Helper()
	art, err := ad.Grad(p, "x")
	if err != nil {
		t.Fatal(err)
	}
	_, gs, err := art.RunWith(kernel.EvalTuple, map[string]*tensor.Dense{"x": vec(x...), "r": vec(r...)})
	if err != nil {
		t.Fatal(err)
	}
	return gs["x"].Data().([]float64)
}

// TestScanGradAnchors: the derivatives by hand. Product of [2 0 3 0] and of [2 0 3 4]:
// gradients [0 0 0 0] and [0 24 0 0] (no division; exact at the zeros). cummax of
// [1 3 3 2 5] weighted by r: each output's cotangent goes to the earliest maximum so far
// (position 1 gets r1+r2+r3, position 4 gets r4). logcumsumexp starting at −Inf: finite,
// gradient (0 at the −Inf entries).
func TestScanGradAnchors(t *testing.T) {
	prod := func(x core.Term) (core.Term, error) { return Reduce(x, 0, ProdMonoid) }
	near(t, "∂Π[2 0 3 0]", gradAt(t, scanProgram(t, 4, prod), []float64{2, 0, 3, 0}, []float64{0, 0, 0, 0}), []float64{0, 0, 0, 0}, 0)
	near(t, "∂Π[2 0 3 4]", gradAt(t, scanProgram(t, 4, prod), []float64{2, 0, 3, 4}, []float64{0, 0, 0, 0}), []float64{0, 24, 0, 0}, 0)

	cummax := func(x core.Term) (core.Term, error) { return Scan(x, 0, MaxMonoid, ScanOptions{}) }
	r := []float64{1, 10, 100, 1000, 10000}
	near(t, "∂cummax ties", gradAt(t, scanProgram(t, 5, cummax), []float64{1, 3, 3, 2, 5}, r), []float64{1, 1110, 0, 0, 10000}, 0)

	cumprod := func(x core.Term) (core.Term, error) { return Scan(x, 0, ProdMonoid, ScanOptions{}) }
	// y = [x0, x0x1, x0x1x2, x0x1x2x3] at [2 0 3 0], r = 1: ∂/∂x0 = 1 (others 0 products),
	// ∂/∂x1 = x0 + x0x2 + x0x2x3 = 2 + 6 + 0 = 8, ∂/∂x2 = 0, ∂/∂x3 = x0x1x2 = 0.
	near(t, "∂cumprod zeros", gradAt(t, scanProgram(t, 4, cumprod), []float64{2, 0, 3, 0}, []float64{1, 1, 1, 1}), []float64{1, 8, 0, 0}, 0)

	lcse := func(x core.Term) (core.Term, error) { return Scan(x, 0, LogSumExpMonoid, ScanOptions{}) }
	inf := math.Inf(-1)
	g := gradAt(t, scanProgram(t, 3, lcse), []float64{inf, 0, math.Log(3)}, []float64{1, 1, 1})
	// y = [−Inf, 0, log 4]: y0 = x0 (∂ 1), ∂y1/∂x1 = 1, ∂y2/∂x1 = 1/4, ∂y2/∂x2 = 3/4, and
	// e^(x0−y) = 0 elsewhere: [1, 1.25, 0.75]
	near(t, "∂logcumsumexp at −Inf", g, []float64{1, 1.25, 0.75}, 1e-12)
}

// TestScanGradFD: gradients of every monoid's scans and reductions against central
// differences (1e-6), and the JVP/VJP dot-product identity, at random points.
func TestScanGradFD(t *testing.T) {
	rng := rand.New(rand.NewSource(9))
	for _, sm := range scanMonoids {
		for _, n := range []int{1, 5, 8} {
			ops := map[string]func(core.Term) (core.Term, error){
				"scan": func(x core.Term) (core.Term, error) { return Scan(x, 0, sm.m, ScanOptions{}) },
				"exclusive": func(x core.Term) (core.Term, error) {
					return Scan(x, 0, sm.m, ScanOptions{Exclusive: true, Reverse: true})
				},
				"reduce": func(x core.Term) (core.Term, error) { return Reduce(x, 0, sm.m) },
			}
			for name, op := range ops {
				p := scanProgram(t, n, op)
				x, r := make([]float64, n), make([]float64, n)
				for i := range x {
					x[i] = 0.5 + 1.5*rng.Float64() // apart, no ties
					r[i] = 2*rng.Float64() - 1
				}
				g := gradAt(t, p, x, r)
				exec, err := kernel.Compile(p)
				if err != nil {
					t.Fatal(err)
				}
				f := func(xs []float64) float64 {
					d, err := exec.Run(map[string]*tensor.Dense{"x": vec(xs...), "r": vec(r...)})
					if err != nil {
						t.Fatal(err)
					}
					return d[0].Data().(float64)
				}
				fd := make([]float64, n)
				for i := range x {
					h := 1e-6
					xp, xm := append([]float64(nil), x...), append([]float64(nil), x...)
					xp[i] += h
					xm[i] -= h
					fd[i] = (f(xp) - f(xm)) / (2 * h)
				}
				near(t, sm.m.Name+" "+name+" vs fd", g, fd, 1e-6)
				// JVP/VJP: ⟨∇f, v⟩ from the VJP equals the JVP along v.
				jp, err := ad.JVP(p, "x")
				if err != nil {
					t.Fatal(err)
				}
				v := make([]float64, n)
				dot := 0.0
				for i := range v {
					v[i] = 2*rng.Float64() - 1
					dot += g[i] * v[i]
				}
				outs, err := tensors.EvalTuple(jp, map[string]*tensor.Dense{"x": vec(x...), "r": vec(r...), ad.TangentPrefix + "x": vec(v...)})
				if err != nil {
					t.Fatal(err)
				}
				if jv := outs[1].Data().(float64); math.Abs(jv-dot) > 1e-10*math.Max(1, math.Abs(dot)) {
					t.Errorf("%s %s n=%d: JVP %v, ⟨VJP, v⟩ %v", sm.m.Name, name, n, jv, dot)
				}
			}
		}
	}
}

// TestScanGradLinear: the gradient program of cumsum and of the product stays a bulk program
// (no build1 after BOT) and its size grows linearly with n (the size doubles with n up to the
// log n levels' constant).
func TestScanGradLinear(t *testing.T) {
	for _, c := range []struct {
		name string
		op   func(core.Term) (core.Term, error)
	}{
		{"cumsum", func(x core.Term) (core.Term, error) { return Scan(x, 0, SumMonoid, ScanOptions{}) }},
		{"product", func(x core.Term) (core.Term, error) { return Reduce(x, 0, ProdMonoid) }},
	} {
		var sizes []float64
		for _, n := range []int{256, 512, 1024} {
			art, err := ad.Grad(scanProgram(t, n, c.op), "x")
			if err != nil {
				t.Fatal(err)
			}
			body := art.Program().Body
			core.PostOrder(body, func(u core.Term) {
				if _, ok := u.(*core.Build1); ok {
					t.Fatalf("%s n=%d: the gradient program contains a build1", c.name, n)
				}
			})
			// work: the total number of elements the program's terms produce
			work := 0
			core.PostOrder(body, func(u core.Term) { work += u.Type().Shape.Size() })
			sizes = append(sizes, float64(work))
		}
		for i := 1; i < len(sizes); i++ {
			if r := sizes[i] / sizes[i-1]; r > 2.2 {
				t.Errorf("%s: work %v grows faster than n (ratio %.2f)", c.name, sizes, r)
			}
		}
	}
}

// TestScanKernelEqualsEval: the compiled evaluator (package kernel) and core.Eval agree on
// the scans and reductions of every monoid (exactly for max and min, to 1e-12 otherwise).
func TestScanKernelEqualsEval(t *testing.T) {
	rng := rand.New(rand.NewSource(4))
	for _, sm := range scanMonoids {
		for _, n := range []int{1, 6, 16} {
			x, _ := core.NewVar("x", core.Type{Shape: core.Shape{n, 3}, Dtype: core.Float64})
			for _, build := range []func() (core.Term, error){
				func() (core.Term, error) { return Scan(x, 0, sm.m, ScanOptions{Reverse: true}) },
				func() (core.Term, error) { return Reduce(x, 1, sm.m) },
			} {
				y, err := build()
				if err != nil {
					t.Fatal(err)
				}
				p := coretest.MustProgram(t, nil, []*core.Var{x}, y)
				a := randArr(rng, n, 3)
				args := map[string]*tensor.Dense{"x": tensor.New(tensor.WithShape(n, 3), tensor.WithBacking(a.v))}
				want, err := tensors.Eval(p, args)
				if err != nil {
					t.Fatal(err)
				}
				exec, err := kernel.Compile(p)
				if err != nil {
					t.Fatal(err)
				}
				got, err := exec.Run(args)
				if err != nil {
					t.Fatal(err)
				}
				near(t, sm.m.Name+" kernel", got[0].Data().([]float64), want.Data().([]float64), 1e-12)
			}
		}
	}
}

// TestScanUnderBuild1: BOT vectorises build1 m (\i -> scan (index X [i])) into bulk
// operations (no build1 left) with the values of the per-row scans.
func TestScanUnderBuild1(t *testing.T) {
	for _, sm := range scanMonoids {
		X, _ := core.NewVar("X", core.Type{Shape: core.Shape{3, 5}, Dtype: core.Float64})
		var b core.Builder
		i := b.Var("i", core.Scalar(core.Int64))
		row := b.Index(X, i)
		s, err := Scan(row, 0, sm.m, ScanOptions{Exclusive: true})
		if err != nil {
			t.Fatal(err)
		}
		p := coretest.MustProgram(t, &b, []*core.Var{X}, b.Build1(3, i, s))
		q, err := bot.Vectorize(p)
		if err != nil {
			t.Fatalf("%s: %v", sm.m.Name, err)
		}
		core.PostOrder(q.Body, func(u core.Term) {
			if _, ok := u.(*core.Build1); ok {
				t.Fatalf("%s: build1 left after BOT", sm.m.Name)
			}
		})
		a := randArr(rand.New(rand.NewSource(5)), 3, 5)
		args := map[string]*tensor.Dense{"X": tensor.New(tensor.WithShape(3, 5), tensor.WithBacking(a.v))}
		got, err := tensors.Eval(q, args)
		if err != nil {
			t.Fatal(err)
		}
		// the per-row scans are the scan along axis 1
		want := make([]float64, 15)
		tr := arr{core.Shape{5, 3}, make([]float64, 15)}
		for r := 0; r < 3; r++ {
			for c := 0; c < 5; c++ {
				tr.v[c*3+r] = a.v[r*5+c]
			}
		}
		ws := naiveScan(tr, sm.op, sm.m.Identity, ScanOptions{Exclusive: true})
		for r := 0; r < 3; r++ {
			for c := 0; c < 5; c++ {
				want[r*5+c] = ws[c*3+r]
			}
		}
		near(t, sm.m.Name+" build1 scan", got.Data().([]float64), want, 1e-12)
	}
}
