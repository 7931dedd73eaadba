package tests

import (
	"fmt"
	"math"
	"math/rand"
	"testing"

	"github.com/bulkad/bulkad/core"
	"github.com/bulkad/bulkad/core/tensors"
	kern "github.com/bulkad/bulkad/kernel"
	"github.com/bulkad/bulkad/raise"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// TestTransposedCol2im: Gorgonia's col2im — scatter [b, c, h, w] (reshape [b, oh, ow, c, kh,
// kw] (δ · W)) with image index [b, c, oh·s + kh·d − p, ow·s + kw·d − p] — raised coarsely
// with the window products off (raise.Options.Materialised; TestWindowCol2im has them on)
// gives the bits of the same plan without the transposed product (the product also a result,
// so materialised as it lies), within rounding of core.Eval (a GEMM's fused multiply-adds), and where the product computed transposed lets the scatter
// add whole rows (ow of at least 8, stride 1: the padded rows mode) the plan does so: its
// scatter runs in that mode (the taps reversed, so that every image element receives its
// terms in core.Eval's order). Stride 2, small maps and an unpadded window stay as they were.
func TestTransposedCol2im(t *testing.T) {
	cases := []struct {
		b, c, o, h, k, s, d, p int
		rows                   bool
	}{
		{2, 3, 4, 9, 3, 1, 1, 1, true},   // a 3×3 window, padding 1
		{1, 2, 3, 12, 3, 1, 1, 0, false}, // no padding: in bounds, the affine path
		{2, 2, 3, 10, 5, 1, 1, 2, true},  // a 5×5 window, padding 2
		{2, 2, 2, 12, 3, 1, 2, 2, true},  // dilation 2
		{2, 3, 4, 17, 3, 2, 1, 1, false}, // stride 2: rows 2 apart
		{2, 3, 4, 5, 3, 1, 1, 1, false},  // 5×5 maps: rows shorter than 8
		{2, 3, 4, 9, 1, 1, 1, 0, false},  // a 1×1 window: in bounds, affine already
	}
	r := rand.New(rand.NewSource(11))
	for _, c := range cases {
		for _, dt := range []core.Dtype{core.Float64, core.Float32} {
			oh := (c.h+2*c.p-c.d*(c.k-1)-1)/c.s + 1
			what := fmt.Sprintf("b %d c %d o %d h %d k %d s %d d %d p %d %v", c.b, c.c, c.o, c.h, c.k, c.s, c.d, c.p, dt)
			p := col2imProgram(t, dt, c.b, c.c, c.o, c.h, oh, c.k, c.s, c.d, c.p, false)
			// the same with the product also a result: materialised, the scatter reads it as
			// it lies (the plan without the transposed product)
			ref := col2imProgram(t, dt, c.b, c.c, c.o, c.h, oh, c.k, c.s, c.d, c.p, true)
			args := randArgs(r, p)
			eval, err := tensors.EvalTuple(p, args)
			if err != nil {
				t.Fatal(err)
			}
			got, rows, _ := raisedCol2im(t, what, p, args, true)
			want, refRows, _ := raisedCol2im(t, what+" (product materialised)", ref, args, true)
			if refRows != 0 {
				t.Fatalf("%s: the plan with the product materialised has %d scatters in the rows mode", what, refRows)
			}
			if got := rows > 0; got != c.rows {
				t.Errorf("%s: %d scatters in the padded rows mode, want them %v", what, rows, c.rows)
			}
			tol := 1e-12
			if dt == core.Float32 {
				tol = 1e-4
			}
			g, w, e := valuesOf(got[0]), valuesOf(want[0]), valuesOf(eval[0])
			for i := range e {
				if math.Float64bits(g[i]) != math.Float64bits(w[i]) {
					t.Fatalf("%s: element %d = %v, the plan without the transposed product %v", what, i, g[i], w[i])
				}
				if math.Abs(g[i]-e[i]) > tol*(1+math.Abs(e[i])) {
					t.Fatalf("%s: element %d = %v, core.Eval %v", what, i, g[i], e[i])
				}
			}
		}
	}
}

// raisedCol2im raises p coarsely into a new graph whose inputs hold args, runs it once on a
// TapeMachine, and returns its results and the number of its plan's scatters that run in the
// padded rows mode.
// TestWindowCol2im: the col2im programs of TestTransposedCol2im raised coarsely as they are
// by default agree with core.Eval to rounding (float64 1e-12, float32 1e-4, relative), and
// where the cotangent's positions move with coefficient 1 (stride 1, any padding or
// dilation) and its window matrix is large enough, the image is computed as one window
// product (the filter times the cotangent's windows, kern.WindowMatMul with the image's
// layout): the test checks which cases do, so that the comparison covers the kernel.
func TestWindowCol2im(t *testing.T) {
	cases := []struct {
		b, c, o, h, k, s, d, p int
		windows                bool
	}{
		{2, 3, 4, 9, 3, 1, 1, 1, true},   // a 3×3 window, padding 1
		{1, 2, 3, 12, 3, 1, 1, 0, true},  // no padding
		{2, 2, 3, 10, 5, 1, 1, 2, true},  // a 5×5 window, padding 2
		{2, 2, 2, 12, 3, 1, 2, 2, true},  // dilation 2
		{2, 3, 4, 17, 3, 2, 1, 1, false}, // stride 2: positions 2 apart, not a window
		{2, 3, 4, 5, 3, 1, 1, 1, true},   // 5×5 maps
		{1, 9, 2, 3, 3, 1, 1, 1, false},  // 3×3 maps of 9 channels: the windows are too few
		{2, 16, 8, 2, 3, 1, 1, 1, false}, // 2×2 maps, 3×3 taps: not the filter's windows either
	}
	r := rand.New(rand.NewSource(12))
	for _, c := range cases {
		for _, dt := range []core.Dtype{core.Float64, core.Float32} {
			oh := (c.h+2*c.p-c.d*(c.k-1)-1)/c.s + 1
			what := fmt.Sprintf("b %d c %d o %d h %d k %d s %d d %d p %d %v", c.b, c.c, c.o, c.h, c.k, c.s, c.d, c.p, dt)
			p := col2imProgram(t, dt, c.b, c.c, c.o, c.h, oh, c.k, c.s, c.d, c.p, false)
			args := randArgs(r, p)
			eval, err := tensors.EvalTuple(p, args)
			if err != nil {
				t.Fatal(err)
			}
			got, _, windows := raisedCol2im(t, what, p, args, false)
			if (windows > 0) != c.windows {
				t.Errorf("%s: %d window products into the image, want them %v", what, windows, c.windows)
			}
			tol := 1e-12
			if dt == core.Float32 {
				tol = 1e-4
			}
			sameValues(t, what, valuesOf(got[0]), valuesOf(eval[0]), tol)
			// an infinite filter element: the image elements it reaches are infinite or NaN
			// as core.Eval's, the others finite (the padding's products are left out)
			setFirst(args["w"], math.Inf(1))
			if eval, err = tensors.EvalTuple(p, args); err != nil {
				t.Fatal(err)
			}
			got, _, _ = raisedCol2im(t, what+" (infinite filter)", p, args, false)
			sameValues(t, what+" (infinite filter)", valuesOf(got[0]), valuesOf(eval[0]), tol)
		}
	}
}

// sameValues compares got with want: NaN where want is NaN, the same infinity where it is
// infinite, else within tol relative.
func sameValues(t *testing.T, what string, got, want []float64, tol float64) {
	t.Helper()
	for i, e := range want {
		g := got[i]
		switch {
		case math.IsNaN(e) || math.IsNaN(g):
			if math.IsNaN(e) != math.IsNaN(g) {
				t.Fatalf("%s: element %d = %v, core.Eval %v", what, i, g, e)
			}
		case math.IsInf(e, 0) || math.IsInf(g, 0):
			if g != e {
				t.Fatalf("%s: element %d = %v, core.Eval %v", what, i, g, e)
			}
		case math.Abs(g-e) > tol*(1+math.Abs(e)):
			t.Fatalf("%s: element %d = %v, core.Eval %v", what, i, g, e)
		}
	}
}

// setFirst sets the first element of a float tensor to v.
func setFirst(d *tensor.Dense, v float64) {
	switch s := d.Data().(type) {
	case []float64:
		s[0] = v
	case []float32:
		s[0] = float32(v)
	}
}

func raisedCol2im(t *testing.T, what string, p *core.Program, args map[string]*tensor.Dense, materialised bool) ([]G.Value, int, int) {
	t.Helper()
	g, outs := coarseRun(t, what, p, args, raise.Options{Coarse: true, Materialised: materialised})
	vals := make([]G.Value, len(outs))
	for i, n := range outs {
		vals[i] = n.Value()
	}
	rows := planSteps(g, func(k kern.Kernel) bool { sk, ok := k.(*kern.Scatter); return ok && sk.IndexPlan.PaddedRows() })
	windows := planSteps(g, func(k kern.Kernel) bool { wk, ok := k.(*kern.WindowMatMul); return ok && wk.OutJ != nil })
	return vals, rows, windows
}

// convWindowFn is the im2col's index function \[b, oh, ow, c, kh, kw] -> [b, c, oh·s + kh·d − p,
// ow·s + kw·d − p] of a convolution of stride s, dilation d and padding p.
func convWindowFn(t *testing.T, s, d, p int) *core.IndexFn {
	t.Helper()
	iv := indexVars(6)
	lit := func(v int) core.Term { return litIndex(t, v) }
	bin := func(op core.BinOp, x, y core.Term) core.Term {
		z, err := core.NewBinary(op, x, y)
		if err != nil {
			t.Fatal(err)
		}
		return z
	}
	pos := func(o, tap *core.Var) core.Term { // o·s + tap·d − p
		return bin(core.OpSub, bin(core.OpAdd, bin(core.OpMul, o, lit(s)), bin(core.OpMul, tap, lit(d))), lit(p))
	}
	fn, err := core.NewIndexFn(iv, []core.Term{iv[0], iv[3], pos(iv[1], iv[4]), pos(iv[2], iv[5])})
	if err != nil {
		t.Fatal(err)
	}
	return fn
}

// litIndex is the index literal v.
func litIndex(t *testing.T, v int) core.Term {
	t.Helper()
	l, err := core.NewLitI(core.Shape{}, []int64{int64(v)})
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// col2imProgram is the program (δ, W) ↦ col2im(δ·W) of a convolution of [b, c, h, h] images
// with o filters of k×k (stride s, dilation d, padding p; oh×oh outputs), as Gorgonia's
// im2col lays the columns out: [b, oh, ow, c, kh, kw]; withProduct adds δ·W as a second result.
func col2imProgram(t *testing.T, dt core.Dtype, b, c, o, h, oh, k, s, d, p int, withProduct bool) *core.Program {
	t.Helper()
	delta, _ := core.NewVar("delta", core.Type{Shape: core.Shape{b * oh * oh, o}, Dtype: dt})
	w, _ := core.NewVar("w", core.Type{Shape: core.Shape{o, c * k * k}, Dtype: dt})
	fn := convWindowFn(t, s, d, p)
	var bd core.Builder
	prod := bd.MatMul(delta, w)
	cols := bd.Reshape(core.Shape{b, oh, oh, c, k, k}, prod)
	if bd.Err() != nil {
		t.Fatal(bd.Err())
	}
	img, err := core.NewScatter(core.Shape{b, c, h, h}, cols, fn)
	if err != nil {
		t.Fatal(err)
	}
	var body core.Term = img
	if withProduct {
		body = bd.Tuple(img, prod)
	}
	prog, err := core.NewProgram([]*core.Var{delta, w}, body)
	if err != nil {
		t.Fatal(err)
	}
	return prog
}

// TestWindowFilterGradients: a convolution's filter gradient, δᵀ times the window matrix of
// the image (Gorgonia's im2col), raised coarsely equals core.Eval within rounding, and reads
// the windows in place (kern.WindowMatMul, no gather) when the window matrix has windowGain
// times δ's elements or the product is at most 16 filters wide (a stem convolution: three
// channels, few filters, a long cotangent), not for 32 filters over three channels.
func TestWindowFilterGradients(t *testing.T) {
	cases := []struct {
		b, c, h, o int
		windows    bool
	}{
		{2, 3, 16, 8, true},   // [512, 27] windows against a [512, 8] cotangent: narrow
		{2, 3, 16, 16, true},  // sixteen filters: still one vector block
		{2, 3, 16, 32, false}, // thirty-two: the cotangent is the larger factor
		{2, 32, 16, 32, true}, // [512, 288] windows: over four times the cotangent
	}
	r := rand.New(rand.NewSource(21))
	for _, c := range cases {
		for _, dt := range []core.Dtype{core.Float64, core.Float32} {
			what := fmt.Sprintf("b %d c %d h %d o %d %v", c.b, c.c, c.h, c.o, dt)
			x, _ := core.NewVar("x", core.Type{Shape: core.Shape{c.b, c.c, c.h, c.h}, Dtype: dt})
			delta, _ := core.NewVar("delta", core.Type{Shape: core.Shape{c.b * c.h * c.h, c.o}, Dtype: dt})
			var bd core.Builder
			win := bd.Reshape(core.Shape{c.b * c.h * c.h, c.c * 9}, bd.Gather(core.Shape{c.b, c.h, c.h, c.c, 3, 3}, x, convWindowFn(t, 1, 1, 1)))
			body := bd.MatMul(bd.Transpose([]int{1, 0}, delta), win)
			p, args, eval := programEval(t, r, &bd, []*core.Var{x, delta}, body)
			g, outs := coarseRun(t, what, p, args, raise.Options{Coarse: true})
			tol := 1e-12
			if dt == core.Float32 {
				tol = 1e-4
			}
			sameValues(t, what, valuesOf(outs[0].Value()), valuesOf(eval[0]), tol)
			windows := planSteps(g, func(k kern.Kernel) bool { _, ok := k.(*kern.WindowMatMul); return ok })
			gathers := planSteps(g, func(k kern.Kernel) bool { _, ok := k.(*kern.Gather); return ok })
			if (windows == 1 && gathers == 0) != c.windows {
				t.Errorf("%s: %d window products and %d gathers, want the windows read in place %v", what, windows, gathers, c.windows)
			}
		}
	}
}

// TestWindowTransposedOutput: a convolution's output as Gorgonia builds it — the window
// product [b·h·w, o] reshaped [b, h, w, o] and transposed to [b, o, h, w] — raised coarsely
// equals core.Eval within rounding; in float64 the window product writes the transposed
// image itself (kern.WindowMatMul.ScatterRows, no transpose step), in float32, or when the
// channels-last output is also a result, the transpose stays a step of its own.
func TestWindowTransposedOutput(t *testing.T) {
	cases := []struct {
		b, c, h, o int
		dt         core.Dtype
		alsoLast   bool // the channels-last output is a result too
		scattered  bool
	}{
		{2, 4, 16, 16, core.Float64, false, true},
		{3, 2, 10, 7, core.Float64, false, true}, // 100 points an image: tiles across images
		{2, 4, 16, 16, core.Float32, false, false},
		{2, 4, 16, 16, core.Float64, true, false},
	}
	r := rand.New(rand.NewSource(22))
	for _, c := range cases {
		what := fmt.Sprintf("b %d c %d h %d o %d %v also channels-last %v", c.b, c.c, c.h, c.o, c.dt, c.alsoLast)
		x, _ := core.NewVar("x", core.Type{Shape: core.Shape{c.b, c.c, c.h, c.h}, Dtype: c.dt})
		w, _ := core.NewVar("w", core.Type{Shape: core.Shape{c.o, c.c * 9}, Dtype: c.dt})
		var bd core.Builder
		win := bd.Reshape(core.Shape{c.b * c.h * c.h, c.c * 9}, bd.Gather(core.Shape{c.b, c.h, c.h, c.c, 3, 3}, x, convWindowFn(t, 1, 1, 1)))
		last := bd.Reshape(core.Shape{c.b, c.h, c.h, c.o}, bd.MatMul(win, bd.Transpose([]int{1, 0}, w)))
		var body core.Term = bd.Transpose([]int{0, 3, 1, 2}, last)
		if c.alsoLast {
			body = bd.Tuple(body, last)
		}
		p, args, eval := programEval(t, r, &bd, []*core.Var{x, w}, body)
		g, outs := coarseRun(t, what, p, args, raise.Options{Coarse: true})
		tol := 1e-12
		if c.dt == core.Float32 {
			tol = 1e-4
		}
		for i, n := range outs {
			sameValues(t, what, valuesOf(n.Value()), valuesOf(eval[i]), tol)
		}
		scattered := planSteps(g, func(k kern.Kernel) bool { wk, ok := k.(*kern.WindowMatMul); return ok && wk.OutP != nil })
		transposes := planSteps(g, func(k kern.Kernel) bool { _, ok := k.(kern.Transpose); return ok })
		if (scattered == 1 && transposes == 0) != c.scattered || scattered+transposes != 1 {
			t.Errorf("%s: %d window products writing the image and %d transposes, want the image written by the product %v", what, scattered, transposes, c.scattered)
		}
	}
}

// coarseRun raises p (with opt) over input nodes holding args and runs the graph once: the
// graph and p's result nodes.
func coarseRun(t *testing.T, what string, p *core.Program, args map[string]*tensor.Dense, opt raise.Options) (*G.ExprGraph, []*G.Node) {
	t.Helper()
	g := G.NewGraph()
	bind := map[string]*G.Node{}
	for _, v := range p.Params {
		d := args[v.Name]
		bind[v.Name] = G.NewTensor(g, d.Dtype(), d.Dims(), G.WithShape(d.Shape()...), G.WithName(v.Name), G.WithValue(d.Clone()))
	}
	outs, err := raise.RaiseWith(g, p, bind, opt)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	mustRunOnce(t, g, nil)
	return g, outs
}

// programEval makes the program params ↦ body (bd's first error fails the test), random
// arguments for it and core.Eval's results.
func programEval(t *testing.T, r *rand.Rand, bd *core.Builder, params []*core.Var, body core.Term) (*core.Program, map[string]*tensor.Dense, []*tensor.Dense) {
	t.Helper()
	if bd.Err() != nil {
		t.Fatal(bd.Err())
	}
	p, err := core.NewProgram(params, body)
	if err != nil {
		t.Fatal(err)
	}
	args := randArgs(r, p)
	eval, err := tensors.EvalTuple(p, args)
	if err != nil {
		t.Fatal(err)
	}
	return p, args, eval
}
