package kernel

import (
	"fmt"
	"math"
	"math/rand"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/bulkad/bulkad/core"
	"github.com/bulkad/bulkad/core/tensors"
)

// Tests of the clipped affine path (clip.go): the Gather and Scatter op kernels with
// IndexPlan.Clip and the compiled evaluator's gather and scatter, against core.Eval (and,
// for what core has no term for, the definition), bit for bit.

// clipCase is an affine index function over dom addressing the dims outer of an array whose
// blocks have shape rest: output k is c0[k] + Σ_j c[k][j]·i_j.
type clipCase struct {
	name  string
	dom   []int
	outer []int
	rest  []int
	c     [][]int64
	c0    []int64
	// clip: AffinePlan refuses the function (some point is out of bounds) and ClipPlan takes it
	clip bool
}

func (cc clipCase) fn(b *core.Builder) *core.IndexFn {
	return randAffineCase{dom: cc.dom, c: cc.c, c0: cc.c0, dyn: make([]bool, len(cc.c))}.fn(b, nil)
}

// conv is convPattern as a case.
func conv(name string, b, c, h, w, k, s, d, pad int, clip bool) clipCase {
	p := convPattern(name, b, c, h, w, k, s, d, pad)
	return clipCase{name: name, dom: p.dom, outer: p.outer, c: p.c, c0: p.c0, clip: clip}
}

func clipCases() []clipCase {
	return []clipCase{
		conv("im2col 3x3 pad 1", 2, 3, 5, 5, 3, 1, 1, 1, true),
		conv("im2col 3x3 pad 1 stride 2", 2, 3, 6, 6, 3, 2, 1, 1, true),
		conv("im2col 3x3 pad 1 stride 2 odd", 1, 2, 7, 5, 3, 2, 1, 1, true),
		conv("im2col 3x3 pad 2 dilation 2", 1, 2, 4, 5, 3, 1, 2, 2, true),
		conv("im2col 5x5 pad 2", 2, 2, 6, 6, 5, 1, 1, 2, true),
		conv("im2col 3x3 no pad (in bounds)", 2, 2, 5, 5, 3, 1, 1, 0, false),
		{name: "depthwise windows [n,c,oh,ow,3,3]", dom: []int{2, 3, 4, 4, 3, 3}, outer: []int{2, 3, 4, 4},
			c:  [][]int64{{1, 0, 0, 0, 0, 0}, {0, 1, 0, 0, 0, 0}, {0, 0, 1, 0, 1, 0}, {0, 0, 0, 1, 0, 1}},
			c0: []int64{0, 0, -1, -1}, clip: true},
		{name: "pool windows [r,s,n,c,oh,ow] pad 1", dom: []int{3, 3, 2, 2, 4, 4}, outer: []int{2, 2, 4, 4},
			c:  [][]int64{{0, 0, 1, 0, 0, 0}, {0, 0, 0, 1, 0, 0}, {1, 0, 0, 0, 1, 0}, {0, 1, 0, 0, 0, 1}},
			c0: []int64{0, 0, -1, -1}, clip: true},
		{name: "pool windows 2x2 stride 2 (in bounds)", dom: []int{2, 2, 2, 2, 3, 3}, outer: []int{2, 2, 6, 6},
			c:  [][]int64{{0, 0, 1, 0, 0, 0}, {0, 0, 0, 1, 0, 0}, {1, 0, 0, 0, 2, 0}, {0, 1, 0, 0, 0, 2}},
			c0: []int64{0, 0, 0, 0}},
		{name: "shift out both ends", dom: []int{4, 7}, outer: []int{4, 5}, c: [][]int64{{1, 0}, {0, 1}}, c0: []int64{0, -1}, clip: true},
		{name: "reverse (coefficient -1)", dom: []int{3, 8}, outer: []int{3, 6}, c: [][]int64{{1, 0}, {0, -1}}, c0: []int64{0, 5}, clip: true},
		{name: "coefficients 3 and -2", dom: []int{5, 6}, outer: []int{9, 8}, c: [][]int64{{0, 3}, {-2, 0}}, c0: []int64{-4, 7}, clip: true},
		{name: "coefficients -3 and 2 on the inner variable", dom: []int{3, 9}, outer: []int{7, 8}, c: [][]int64{{1, -3}, {0, 2}}, c0: []int64{12, -5}, clip: true},
		{name: "inner variable unused (broadcast)", dom: []int{4, 5}, outer: []int{3}, c: [][]int64{{1, 0}}, c0: []int64{-1}, clip: true},
		{name: "outer-only output out of bounds", dom: []int{4, 3}, outer: []int{3, 3}, c: [][]int64{{1, 0}, {0, 1}}, c0: []int64{-1, 0}, clip: true},
		{name: "clip at a middle level", dom: []int{3, 3, 4}, outer: []int{3, 4}, c: [][]int64{{1, 1, 0}, {0, 0, 1}}, c0: []int64{-2, 0}, clip: true},
		{name: "two outputs clip the inner variable", dom: []int{2, 6}, outer: []int{2, 4, 4}, c: [][]int64{{1, 0}, {0, 1}, {0, -1}}, c0: []int64{0, -1, 4}, clip: true},
		{name: "constant output out of bounds", dom: []int{3}, outer: []int{4, 3}, c: [][]int64{{0}, {1}}, c0: []int64{5, 0}, clip: true},
		{name: "constant output in bounds", dom: []int{4}, outer: []int{3, 3}, c: [][]int64{{0}, {1}}, c0: []int64{2, -1}, clip: true},
		{name: "constant negative output", dom: []int{2, 2}, outer: []int{4, 3}, c: [][]int64{{0, 0}, {0, 1}}, c0: []int64{-1, 0}, clip: true},
		{name: "no output (whole blocks)", dom: []int{3, 2}, outer: []int{}, rest: []int{2}, c: [][]int64{}, c0: []int64{}},
		{name: "rank-0 domain out of bounds", dom: []int{}, outer: []int{3}, rest: []int{2}, c: [][]int64{{}}, c0: []int64{-1}, clip: true},
		{name: "empty domain dim", dom: []int{2, 0, 3}, outer: []int{2, 3}, c: [][]int64{{1, 0, 0}, {0, 0, 1}}, c0: []int64{0, -1}, clip: true},
		{name: "empty inner domain dim", dom: []int{2, 0}, outer: []int{2, 3}, c: [][]int64{{1, 0}, {0, 1}}, c0: []int64{0, -1}, clip: true},
		{name: "empty addressed dim", dom: []int{2, 3}, outer: []int{0, 3}, c: [][]int64{{1, 0}, {0, 1}}, c0: []int64{0, 0}, clip: true},
		{name: "size-1 dims", dom: []int{1, 4, 1, 1}, outer: []int{1, 4}, c: [][]int64{{0, 0, 1, 1}, {0, 1, 0, 0}}, c0: []int64{0, -1}, clip: true},
		{name: "size-1 leading dims out of bounds", dom: []int{1, 1, 5}, outer: []int{2, 5}, c: [][]int64{{1, 0, 0}, {0, 0, 1}}, c0: []int64{2, 0}, clip: true},
		{name: "rest blocks [2,3]", dom: []int{2, 4, 3}, outer: []int{2, 4}, rest: []int{2, 3}, c: [][]int64{{1, 0, 0}, {0, 1, 1}}, c0: []int64{0, -1}, clip: true},
		{name: "rest blocks, strided inner", dom: []int{3, 5}, outer: []int{6, 3}, rest: []int{4}, c: [][]int64{{0, 2}, {1, 0}}, c0: []int64{-1, 0}, clip: true},
		{name: "all out of bounds", dom: []int{3, 4}, outer: []int{3, 4}, c: [][]int64{{1, 0}, {0, 1}}, c0: []int64{-3, 0}, clip: true},
	}
}

// clipDtypes are the dtypes the kernels are checked in.
var clipDtypes = []core.Dtype{core.Float64, core.Float32, core.Int64, core.Bool}

// clipLit is a literal of type t with random values: floats with ties, signed zeros, the
// odd infinity and NaN; integers; booleans.
func clipLit(t *testing.T, rng *rand.Rand, typ core.Type) *core.Lit {
	n := typ.Shape.Size()
	var l *core.Lit
	var err error
	switch typ.Dtype {
	case core.Float64, core.Float32:
		v := make([]float64, n)
		for i := range v {
			v[i] = float64(rng.Intn(64)-32) / 4
			switch rng.Intn(200) {
			case 0:
				v[i] = math.Inf(1)
			case 1:
				v[i] = math.Copysign(0, -1)
			case 2:
				v[i] = math.NaN()
			}
		}
		l, err = core.NewLitF(typ, v)
	case core.Int64:
		v := make([]int64, n)
		for i := range v {
			v[i] = int64(rng.Intn(2001) - 1000)
		}
		l, err = core.NewLitI(typ.Shape, v)
	default:
		v := make([]bool, n)
		for i := range v {
			v[i] = rng.Intn(2) == 0
		}
		l, err = core.NewLitB(typ.Shape, v)
	}
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// flatOf is the data of a literal as the kernels' slice type.
func flatOf(l *core.Lit) any {
	switch l.Type().Dtype {
	case core.Float64:
		return append([]float64{}, l.F...)
	case core.Float32:
		v := make([]float32, len(l.F))
		for i, f := range l.F {
			v[i] = float32(f)
		}
		return v
	case core.Int64:
		return append([]int64{}, l.I...)
	}
	return append([]bool{}, l.B...)
}

// sameAsLitFrom compares two flat slices of one type bit for bit from element i on, NaNs
// matching NaNs.
func sameAsLitFrom(got, want any, i int) error {
	n := SliceLen(want)
	if SliceLen(got) != n {
		return fmt.Errorf("%d elements, want %d", SliceLen(got), n)
	}
	for ; i < n; i++ {
		g, w := at(got, i), at(want, i)
		gf, isF := toFloat(g)
		wf, _ := toFloat(w)
		if isF && math.IsNaN(gf) && math.IsNaN(wf) {
			continue
		}
		if isF && math.Float64bits(gf) == math.Float64bits(wf) || !isF && g == w {
			continue
		}
		return fmt.Errorf("element %d: got %v, want %v", i, g, w)
	}
	return nil
}

// at is element i of the flat slice s (boxed), "(none)" past its end.
func at(s any, i int) any {
	if i < 0 || i >= SliceLen(s) {
		return "(none)"
	}
	return reflect.ValueOf(s).Index(i).Interface()
}

func toFloat(v any) (float64, bool) {
	switch v := v.(type) {
	case float64:
		return v, true
	case float32:
		return float64(v), true
	}
	return 0, false
}

// clipSetup is one gather or scatter of a case: the term, its operand, and the op kernel
// built as package raise builds it (AffinePlan, then ClipPlan).
type clipSetup struct {
	term core.Term
	x    *core.Lit
	k    Kernel
	plan *IndexPlan
	prog *IndexProgram
	fn   *core.IndexFn
	dom  []int // the walked domain
	tgt  core.Shape
}

func (cc clipCase) setup(t *testing.T, rng *rand.Rand, d core.Dtype, scatter bool) clipSetup {
	var b core.Builder
	fn := cc.fn(&b)
	rest := core.Shape(cc.rest)
	big := append(append(core.Shape{}, cc.outer...), rest...) // the addressed array
	small := append(append(core.Shape{}, cc.dom...), rest...) // the domain-side array
	prog, err := CompileIndexFn(fn)
	if err != nil {
		t.Fatal(err)
	}
	s := clipSetup{prog: prog, fn: fn, dom: cc.dom}
	r := rest.Size()
	if scatter {
		s.x = clipLit(t, rng, core.Type{Shape: small, Dtype: d})
		s.tgt = big
		k := &Scatter{Dom: cc.dom, Dst: cc.outer, Rest: r, IndexPlan: IndexPlan{Fn: prog}}
		k.SetFastPaths(k.Dom, k.Dst)
		s.k, s.plan = k, &k.IndexPlan
		if d != core.Bool {
			s.term = b.Scatter(big, s.x, fn)
		}
	} else {
		s.x = clipLit(t, rng, core.Type{Shape: big, Dtype: d})
		s.tgt = big
		k := &Gather{Dom: cc.dom, Src: cc.outer, Rest: r, IndexPlan: IndexPlan{Fn: prog}}
		k.SetFastPaths(k.Dom, k.Src)
		s.k, s.plan = k, &k.IndexPlan
		s.term = b.Gather(small, s.x, fn)
	}
	return s
}

// scatterOrRef is the definition of the op kernel's boolean scatter (core has no boolean
// scatter): out[f(i) ++ r] = ∨ x[i ++ r] over the in-bounds points.
func scatterOrRef(cc clipCase, x []bool) []bool {
	r := core.Shape(cc.rest).Size()
	out := make([]bool, core.Shape(cc.outer).Size()*r)
	xstr := core.Shape(cc.outer).Strides()
	rc := randAffineCase{dom: cc.dom, c: cc.c, c0: cc.c0, dyn: make([]bool, len(cc.c))}
	src := 0
	each(cc.dom, func(pt []int) {
		if off, ok := flatOffset(rc.eval(pt, 0), cc.outer, xstr); ok {
			for q := range r {
				out[off*r+q] = out[off*r+q] || x[src+q]
			}
		}
		src += r
	})
	return out
}

// checkClip runs the case's gather and scatter in every dtype through the op kernel, the
// op kernel with its interpreter poisoned (when the clipped path is expected), the
// evaluator's kernels with their closures poisoned, and the compiled evaluator, against
// core.Eval.
func checkClip(t *testing.T, rng *rand.Rand, cc clipCase, wantClip bool) (clipped int) {
	t.Helper()
	for _, d := range clipDtypes {
		for _, scatter := range []bool{false, true} {
			what := fmt.Sprintf("%s: %v gather", cc.name, d)
			if scatter {
				what = fmt.Sprintf("%s: %v scatter", cc.name, d)
			}
			s := cc.setup(t, rng, d, scatter)
			if wantClip && (s.plan.Affine || s.plan.Clip == nil) {
				t.Fatalf("%s: Affine %v, Clip %v: want the clipped plan only", what, s.plan.Affine, s.plan.Clip != nil)
			}
			if !s.plan.Affine && s.plan.Clip != nil {
				clipped++
			}
			x := flatOf(s.x)
			var want any
			if s.term == nil {
				want = scatterOrRef(cc, x.([]bool))
			} else {
				ref, err := core.EvalTerm(s.term, nil)
				if err != nil {
					t.Fatalf("%s: core.Eval: %v", what, err)
				}
				want = flatOf(ref)
			}
			outLen := SliceLen(want)
			check := func(how string, got any) {
				t.Helper()
				if err := sameAsLitFrom(got, want, 0); err != nil {
					t.Fatalf("%s (%s): %v", what, how, err)
				}
			}
			// the op kernel, over a dirty output
			got := dirty(zeroLike(x), outLen)
			if err := s.k.Run(got, []any{x}); err != nil {
				t.Fatalf("%s: %v", what, err)
			}
			check("op kernel", got)
			// the op kernel with an index program that reads out of bounds everywhere: only the
			// clipped plan can give the reference result
			if !s.plan.Affine && s.plan.Clip != nil && len(cc.c) > 0 {
				*s.plan = IndexPlan{Fn: poisonProg(t, len(cc.dom), len(cc.c)), Clip: s.plan.Clip}
				got := dirty(zeroLike(x), outLen)
				if err := s.k.Run(got, []any{x}); err != nil {
					t.Fatalf("%s: %v", what, err)
				}
				check("op kernel, interpreter poisoned", got)
			}
			// the evaluator's kernels with their closures poisoned, and the compiled evaluator
			if s.term != nil {
				check("evaluator kernel", runIxPlan(t, s, x, outLen, scatter))
				res, err := EvalTerm(s.term, nil)
				if err != nil {
					t.Fatalf("%s: kernel.EvalTerm: %v", what, err)
				}
				lit, err := tensors.ToLit(res)
				if err != nil {
					t.Fatalf("%s: %v", what, err)
				}
				check("evaluator", flatOf(lit))
			}
		}
	}
	return clipped
}

// dirty is a slice like x of n elements, not zero (the kernels must overwrite it).
func dirty(x any, n int) any {
	switch x.(type) {
	case []float64:
		v := make([]float64, n)
		for i := range v {
			v[i] = 7
		}
		return v
	case []float32:
		v := make([]float32, n)
		for i := range v {
			v[i] = 7
		}
		return v
	case []int64:
		v := make([]int64, n)
		for i := range v {
			v[i] = 7
		}
		return v
	}
	v := make([]bool, n)
	for i := range v {
		v[i] = true
	}
	return v
}

// poisonProg is an index program of n variables whose m outputs are all -1.
func poisonProg(t *testing.T, n, m int) *IndexProgram {
	var b core.Builder
	vs := make([]*core.Var, n)
	for j := range vs {
		vs[j] = b.Var(fmt.Sprintf("p%d", j), core.Scalar(core.Int64))
	}
	outs := make([]core.Term, m)
	for k := range outs {
		outs[k] = core.ScalarI(-1)
	}
	p, err := CompileIndexFn(b.IndexFn(vs, outs...))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// runIxPlan runs the evaluator's gather or scatter kernel (gatherK, scatterK) of s with the
// index function's closures replaced by ones that fail the test: an affine function must
// run on the clipped path.
func runIxPlan(t *testing.T, s clipSetup, x any, outLen int, scatter bool) any {
	t.Helper()
	p := s.prog
	f := &idxFn{n: len(s.fn.Vars), m: len(s.fn.Out), aff: p.aff, prog: p, env: p.newEnvWith(nil)}
	f.eval = func([]int64) { t.Fatal("the evaluator's index closure was called") }
	if p.vec != nil {
		f.vec = func(int64, int, [][]int64) { t.Fatal("the evaluator's vector closure was called") }
	}
	ip := newIxPlan(f, s.dom, s.tgt, len(s.fn.Out))
	if ip.clip == nil {
		t.Fatal("no clipped plan for an affine index function")
	}
	got := dirty(x, outLen)
	switch x := x.(type) {
	case []float64:
		gatherOrScatter(ip, got.([]float64), x, scatter)
	case []float32:
		gatherOrScatter(ip, got.([]float32), x, scatter)
	case []int64:
		gatherOrScatter(ip, got.([]int64), x, scatter)
	case []bool:
		gatherK(ip, got.([]bool), x)
	}
	if !ip.okRows {
		t.Fatal("the evaluator's kernel did not take the clipped path")
	}
	return got
}

// TestClipTable: the clipped affine path on convolution, pooling and depthwise windows,
// shifts, reversals, strides, dilations, zero and negative coefficients, constant outputs,
// empty and one-element dimensions, a rank-0 domain and blocks of several elements.
func TestClipTable(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	for _, cc := range clipCases() {
		t.Run(cc.name, func(t *testing.T) { checkClip(t, rng, cc, cc.clip) })
	}
}

// TestClipRandom: random affine index functions (0–4 variables of 0–5 values, 0–3 outputs,
// coefficients in [-3, 3], every other function with half of them zero, constants in
// [-4, 4], blocks of 1–6 elements) in every dtype, walked with segments of every depth.
func TestClipRandom(t *testing.T) {
	rng := rand.New(rand.NewSource(20261126))
	iters := 400
	if testing.Short() {
		iters = 100
	}
	clipped, depths := 0, map[int]int{}
	for it := range iters {
		n, m := rng.Intn(5), rng.Intn(4)
		cc := clipCase{name: fmt.Sprintf("random %d", it), c: make([][]int64, m), c0: make([]int64, m)}
		for range n {
			cc.dom = append(cc.dom, rng.Intn(6))
		}
		for k := range m {
			cc.outer = append(cc.outer, rng.Intn(6))
			cc.c[k] = make([]int64, n)
			for j := range n {
				if it%2 == 0 || rng.Intn(2) == 0 { // every other function sparse, like windows
					cc.c[k][j] = int64(rng.Intn(7) - 3)
				}
			}
			cc.c0[k] = int64(rng.Intn(9) - 4)
		}
		for range rng.Intn(3) {
			cc.rest = append(cc.rest, 1+rng.Intn(3))
		}
		if c := checkClip(t, rng, cc, false); c > 0 {
			clipped += c
			var b core.Builder
			prog, err := CompileIndexFn(cc.fn(&b))
			if err != nil {
				t.Fatal(err)
			}
			depths[prog.ClipPlan(cc.dom, cc.outer).depth]++
		}
	}
	if clipped < iters || depths[1] == 0 || depths[2] == 0 || depths[3] == 0 {
		t.Fatalf("only %d of %d gathers and scatters took the clipped path (walks of depth 1, 2, 3: %d, %d, %d)", clipped, 8*iters, depths[1], depths[2], depths[3])
	}
	t.Logf("%d of %d gathers and scatters took the clipped path (walks of depth 1, 2, 3: %d, %d, %d)", clipped, 8*iters, depths[1], depths[2], depths[3])
}

// clipDef is the definition of a case's gather (scatter false) or scatter of x, a flat
// float64 operand: out[i ++ r] = x[f(i) ++ r] (0 out of bounds), or out[f(i) ++ r] +=
// x[i ++ r] in row-major order of i (dropped out of bounds).
func clipDef(cc clipCase, x []float64, scatter bool) []float64 {
	r := core.Shape(cc.rest).Size()
	xstr := core.Shape(cc.outer).Strides()
	rc := randAffineCase{dom: cc.dom, c: cc.c, c0: cc.c0, dyn: make([]bool, len(cc.c))}
	var out []float64
	if scatter {
		out = make([]float64, core.Shape(cc.outer).Size()*r)
	}
	p := 0
	each(cc.dom, func(pt []int) {
		off, ok := flatOffset(rc.eval(pt, 0), cc.outer, xstr)
		for q := range r {
			switch {
			case scatter && ok:
				out[off*r+q] += x[p+q]
			case !scatter && ok:
				out = append(out, x[off*r+q])
			case !scatter:
				out = append(out, 0)
			}
		}
		p += r
	})
	return out
}

// TestClipSplit: gathers and scatters on the clipped path large enough to be split across
// goroutines give the serial result (GOMAXPROCS 1) with GOMAXPROCS 2 and 3, bit for bit,
// and that result is the definition's. The scatters are split along a dimension whose
// slices write disjoint blocks: the batch of a col2im (an output that depends on it alone)
// and the middle variable of a shift that collides along the other two.
func TestClipSplit(t *testing.T) {
	cases := []struct {
		cc      clipCase
		scatter bool
		dim     int // the dimension split
	}{
		{conv("im2col", 8, 12, 28, 28, 3, 1, 1, 1, true), false, 0},
		{conv("col2im", 8, 12, 28, 28, 3, 1, 1, 1, true), true, 0},
		{conv("col2im stride 2", 8, 12, 56, 56, 3, 2, 1, 1, true), true, 0},
		{clipCase{name: "pool windows, rest 2", dom: []int{3, 3, 8, 8, 28, 28}, outer: []int{8, 8, 28, 28}, rest: []int{2},
			c:  [][]int64{{0, 0, 1, 0, 0, 0}, {0, 0, 0, 1, 0, 0}, {1, 0, 0, 0, 1, 0}, {0, 1, 0, 0, 0, 1}},
			c0: []int64{0, 0, -1, -1}}, false, 0},
		{clipCase{name: "colliding shift", dom: []int{2, 300, 1000}, outer: []int{299, 1000},
			c: [][]int64{{0, 1, 0}, {1, 0, 1}}, c0: []int64{-1, -1}}, true, 1},
	}
	for _, c := range cases {
		cc := c.cc
		rng := rand.New(rand.NewSource(5))
		s := cc.setup(t, rng, core.Float64, c.scatter)
		p := s.plan.Clip
		if s.plan.Affine || p == nil {
			t.Fatalf("%s: not on the clipped path", cc.name)
		}
		r := core.Shape(cc.rest).Size()
		func() {
			defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
			work := costOf(p.points()*r, p.weight(r))
			d, ok := splitDim(cc.dom[:len(cc.dom)-1], work)
			if c.scatter {
				d, ok = p.disjoint()
				ok = ok && workers(cc.dom[d], work) > 1
			}
			if !ok || d != c.dim {
				t.Fatalf("%s: split along %d (%v), want %d: the test does not cover the split", cc.name, d, ok, c.dim)
			}
		}()
		x := flatOf(s.x).([]float64)
		outLen := core.Shape(cc.outer).Size() * r
		if !c.scatter {
			outLen = core.Shape(cc.dom).Size() * r
		}
		got := checkSplit(t, cc.name, runOp(t, s.k, make([]float64, outLen), x)).([]float64)
		want := clipDef(cc, x, c.scatter)
		if err := sameAsLitFrom(got, want, 0); err != nil {
			t.Fatalf("%s: %v", cc.name, err)
		}
		// the evaluator's kernels
		got = checkSplit(t, cc.name+" (evaluator)", func() any { return runIxPlan(t, s, x, outLen, c.scatter) }).([]float64)
		if err := sameAsLitFrom(got, want, 0); err != nil {
			t.Fatalf("%s (evaluator): %v", cc.name, err)
		}
	}
}

// TestClipPlanRefusesOverflow: index functions whose values could overflow the walk's
// arithmetic get no clipped plan (the op kernels then interpret them, as core.Eval does,
// with wrapping i64 arithmetic), and the evaluator's plan refuses them per run.
func TestClipPlanRefusesOverflow(t *testing.T) {
	for _, cc := range []clipCase{
		{name: "huge coefficient", dom: []int{3, 4}, outer: []int{4, 4}, c: [][]int64{{1 << 62, 0}, {0, 1}}, c0: []int64{0, -1}},
		{name: "huge constant", dom: []int{3, 4}, outer: []int{4, 4}, c: [][]int64{{1, 0}, {0, 1}}, c0: []int64{-1 << 62, -1}},
		{name: "spans add up", dom: []int{3, 4}, outer: []int{4, 4}, c: [][]int64{{1 << 60, 1 << 60}, {0, 1}}, c0: []int64{0, -1}},
	} {
		var b core.Builder
		prog, err := CompileIndexFn(cc.fn(&b))
		if err != nil {
			t.Fatal(err)
		}
		if p := prog.ClipPlan(cc.dom, cc.outer); p != nil {
			t.Fatalf("%s: a clipped plan", cc.name)
		}
		if p := newClipPlan(prog.aff, cc.dom, cc.outer); p != nil && p.fits(p.c0) {
			t.Fatalf("%s: the evaluator's plan fits", cc.name)
		}
		for _, scatter := range []bool{false, true} {
			s := cc.setup(t, rand.New(rand.NewSource(1)), core.Float64, scatter)
			ref, err := core.EvalTerm(s.term, nil)
			if err != nil {
				t.Fatal(err)
			}
			want := flatOf(ref)
			got := dirty([]float64{}, SliceLen(want))
			if err := s.k.Run(got, []any{flatOf(s.x)}); err != nil {
				t.Fatal(err)
			}
			if err := sameAsLitFrom(got, want, 0); err != nil {
				t.Fatalf("%s (op kernel): %v", cc.name, err)
			}
			res, err := EvalTerm(s.term, nil)
			if err != nil {
				t.Fatal(err)
			}
			if err := sameAsLitFrom(res.Data(), want, 0); err != nil {
				t.Fatalf("%s (evaluator): %v", cc.name, err)
			}
		}
	}
}

// TestClipRefusesBadLengths: the clipped path refuses an output or operand that does not fit
// its plan, with an error naming the op and the shapes, instead of writing part of it.
func TestClipRefusesBadLengths(t *testing.T) {
	cc := clipCases()[0] // im2col: domain [2,5,5,3,3,3] over [2,3,5,5]
	for _, scatter := range []bool{false, true} {
		s := cc.setup(t, rand.New(rand.NewSource(1)), core.Float64, scatter)
		x := flatOf(s.x).([]float64)
		n := 2 * 3 * 5 * 5
		if !scatter {
			n = 2 * 5 * 5 * 3 * 3 * 3
		}
		if err := s.k.Run(make([]float64, n), []any{x}); err != nil {
			t.Fatalf("scatter %v: %v", scatter, err)
		}
		err := s.k.Run(make([]float64, n-1), []any{x})
		if err == nil || !strings.Contains(err.Error(), "[2 5 5 3 3 3]") || !strings.Contains(err.Error(), "[2 3 5 5]") {
			t.Fatalf("scatter %v, one element short: error %v, want one naming the domain and the addressed dims", scatter, err)
		}
	}
}

// gatherOrScatter runs the planned scatter or gather of src into dst.
func gatherOrScatter[T numT](p *ixPlan, dst, src []T, scatter bool) {
	if scatter {
		scatterK(p, dst, src)
	} else {
		gatherK(p, dst, src)
	}
}
