package kernel

import (
	"fmt"
	"math"
	"math/rand"
	"runtime"
	"strings"
	"testing"

	"github.com/bulkad/bulkad/core"
	"github.com/bulkad/bulkad/core/tensors"
	"github.com/bulkad/bulkad/internal/testutil"
	"gorgonia.org/tensor"
)

// Tests of WindowDot (window_dot.go): a grouped convolution's forward pass and the two
// products of its gradient, written in the core language as the planner sees them, against
// core.Eval bit for bit (the kernel adds in the reference's order), with the accesses of the
// kernel written out by hand here.

// dwCase is a grouped convolution of x : [b, groups·cg, h, w] with filters
// f : [groups, og, cg, kh, kw] (the reshape lower.GroupedConv2d gathers from).
type dwCase struct {
	name                string
	b, groups, cg, og   int
	h, w, kh, kw        int
	sh, sw, dh, dw      int
	pt, pb, pl, pr      int
	infFilter, nanCotan bool // non-finite values (the element-by-element path)
	infImage            bool
	kwFirst             bool // the domain runs kw before kh: [cg, kw, kh, b, …]
	parallel            bool // large enough to split across goroutines
}

func (c dwCase) out() (int, int) {
	oh := (c.h+c.pt+c.pb-c.dh*(c.kh-1)-1)/c.sh + 1
	ow := (c.w+c.pl+c.pr-c.dw*(c.kw-1)-1)/c.sw + 1
	return oh, ow
}

func dwCases() []dwCase {
	same := func(name string, b, ch, h, k, s int) dwCase {
		return dwCase{name: name, b: b, groups: ch, cg: 1, og: 1, h: h, w: h, kh: k, kw: k, sh: s, sw: s, dh: 1, dw: 1, pt: k / 2, pb: k / 2, pl: k / 2, pr: k / 2}
	}
	cs := []dwCase{
		same("depthwise 3x3 stride 1", 2, 4, 6, 3, 1),
		same("depthwise 3x3 stride 2", 2, 5, 7, 3, 2),
		same("depthwise 5x5 stride 1", 1, 3, 8, 5, 1),
		same("depthwise 5x5 stride 2", 2, 3, 9, 5, 2),
		{name: "multiplier 2, dilation 2, uneven pads", b: 2, groups: 3, cg: 1, og: 2, h: 7, w: 6, kh: 3, kw: 3, sh: 1, sw: 2, dh: 2, dw: 2, pt: 2, pb: 1, pl: 1, pr: 2},
		{name: "2 channels per group, 3 out, 3x2", b: 1, groups: 2, cg: 2, og: 3, h: 5, w: 6, kh: 3, kw: 2, sh: 2, sw: 1, dh: 1, dw: 1, pt: 1, pb: 0, pl: 1, pr: 1},
		{name: "no padding", b: 2, groups: 3, cg: 1, og: 1, h: 6, w: 5, kh: 3, kw: 3, sh: 1, sw: 1, dh: 1, dw: 1},
		{name: "window wider than the image", b: 1, groups: 2, cg: 1, og: 1, h: 2, w: 2, kh: 3, kw: 5, sh: 1, sw: 1, dh: 1, dw: 1, pt: 1, pb: 1, pl: 2, pr: 2},
		{name: "1x1 output", b: 2, groups: 2, cg: 1, og: 1, h: 2, w: 2, kh: 3, kw: 3, sh: 2, sw: 2, dh: 1, dw: 1, pt: 1, pb: 0, pl: 1, pr: 0},
	}
	inf := same("infinite filter element, padded", 2, 3, 5, 3, 1)
	inf.infFilter = true
	nan := same("NaN in the cotangent, padded", 2, 3, 5, 3, 2)
	nan.nanCotan = true
	big := same("large, stride 2 (split across goroutines)", 2, 32, 32, 3, 2)
	big.parallel = true
	// plane by plane (window_planes.go): stride 1
	big1 := same("large, stride 1 (split across goroutines)", 2, 24, 16, 3, 1)
	big1.parallel = true
	nan1 := same("NaN in the cotangent, stride 1", 2, 3, 6, 3, 1)
	nan1.nanCotan = true
	infImg := same("infinite image element, stride 1", 2, 3, 6, 3, 1)
	infImg.infImage = true
	cs = append(cs,
		dwCase{name: "kw before kh in the domain, 3x2, stride 2", b: 2, groups: 3, cg: 1, og: 1, h: 9, w: 8, kh: 3, kw: 2, sh: 2, sw: 2, dh: 1, dw: 1, pt: 1, pb: 1, pl: 1, pr: 0, kwFirst: true},
		dwCase{name: "dilation 2, stride 1, uneven pads", b: 2, groups: 3, cg: 1, og: 1, h: 9, w: 8, kh: 3, kw: 3, sh: 1, sw: 1, dh: 2, dw: 2, pt: 2, pb: 1, pl: 1, pr: 2},
		dwCase{name: "batch 1, one channel, 3x1", b: 1, groups: 1, cg: 1, og: 1, h: 6, w: 7, kh: 3, kw: 1, sh: 1, sw: 1, dh: 1, dw: 1, pt: 1, pb: 1},
		dwCase{name: "cropped (padding −1)", b: 2, groups: 2, cg: 1, og: 1, h: 9, w: 9, kh: 3, kw: 3, sh: 1, sw: 1, dh: 1, dw: 1, pt: -1, pb: 0, pl: 0, pr: -1})
	return append(cs, inf, nan, big, big1, nan1, infImg)
}

// planes reports whether the case runs plane by plane (window_planes.go): a depthwise
// convolution (one channel a group, one filter a channel) with maps of 16 points or more.
func (c dwCase) planes() bool {
	oh, ow := c.out()
	return c.cg == 1 && c.og == 1 && oh*ow >= 16
}

// programs are the forward pass and the two gradient products in the core syntax.
func (c dwCase) programs(d core.Dtype) (fwd, dx, df string) {
	oh, ow := c.out()
	o, k := c.groups*c.og, c.cg*c.kh*c.kw
	sh := fmt.Sprintf("[%d,%d,%d,%d,%d,%d,%d,%d]", c.cg, c.kh, c.kw, c.b, c.groups, c.og, oh, ow)
	binders := "c1,r,s,n,g,m,i,j"
	if c.kwFirst {
		sh = fmt.Sprintf("[%d,%d,%d,%d,%d,%d,%d,%d]", c.cg, c.kw, c.kh, c.b, c.groups, c.og, oh, ow)
		binders = "c1,s,r,n,g,m,i,j"
	}
	params := fmt.Sprintf("x : [%d,%d,%d,%d] %v, f : [%d,%d,%d,%d,%d] %v, d : [%d,%d,%d,%d] %v",
		c.b, c.groups*c.cg, c.h, c.w, d, c.groups, c.og, c.cg, c.kh, c.kw, d, c.b, o, oh, ow, d)
	fx := fmt.Sprintf("(\\[%s] -> [n, %d * g + c1, %d * i + %d * r + (%d), %d * j + %d * s + (%d)])", binders, c.cg, c.sh, c.dh, -c.pt, c.sw, c.dw, -c.pl)
	ff := fmt.Sprintf("(\\[%s] -> [g, m, c1, r, s])", binders)
	win := fmt.Sprintf("gather %s x %s", sh, fx)
	fil := fmt.Sprintf("gather %s f %s", sh, ff)
	cot := fmt.Sprintf("reshape %s (replicate %d d)", sh, k)
	fwd = fmt.Sprintf("fn (%s) => sumOuter (reshape [%d,%d,%d,%d,%d] (%s * %s))", params, k, c.b, o, oh, ow, win, fil)
	dx = fmt.Sprintf("fn (%s) => scatter [%d,%d,%d,%d] (%s * %s) %s", params, c.b, c.groups*c.cg, c.h, c.w, cot, fil, fx)
	df = fmt.Sprintf("fn (%s) => scatter [%d,%d,%d,%d,%d] (%s * %s) %s", params, c.groups, c.og, c.cg, c.kh, c.kw, cot, win, ff)
	return
}

// accesses are the kernel's accesses of x, f and d over the domain
// [c1, r, s, n, g, m, i, j] = [cg, kh, kw, b, groups, og, oh, ow], written from the
// definition.
func (c dwCase) accesses() (dom []int, x, f, d WinAccess) {
	oh, ow := c.out()
	dom = []int{c.cg, c.kh, c.kw, c.b, c.groups, c.og, oh, ow}
	var r, s int64 = 1, 2 // the positions of kh and kw in the domain
	if c.kwFirst {
		dom[1], dom[2], r, s = c.kw, c.kh, 2, 1
	}
	e := func(pairs ...int64) []int64 { // coefficient row from (variable, coefficient) pairs
		row := make([]int64, 8)
		for i := 0; i < len(pairs); i += 2 {
			row[pairs[i]] += pairs[i+1]
		}
		return row
	}
	x = WinAccess{Shape: []int{c.b, c.groups * c.cg, c.h, c.w},
		Coef: [][]int64{e(3, 1), e(4, int64(c.cg), 0, 1), e(6, int64(c.sh), r, int64(c.dh)), e(7, int64(c.sw), s, int64(c.dw))},
		C0:   []int64{0, 0, int64(-c.pt), int64(-c.pl)}}
	f = WinAccess{Shape: []int{c.groups, c.og, c.cg, c.kh, c.kw},
		Coef: [][]int64{e(4, 1), e(5, 1), e(0, 1), e(r, 1), e(s, 1)}, C0: make([]int64, 5)}
	d = WinAccess{Shape: []int{c.b, c.groups * c.og, oh, ow},
		Coef: [][]int64{e(3, 1), e(4, int64(c.og), 5, 1), e(6, 1), e(7, 1)}, C0: make([]int64, 4)}
	return
}

// randDense is a tensor of dtype d (float32 or float64) and shape sh of standard normal draws.
func randDense(r *rand.Rand, d core.Dtype, sh ...int) *tensor.Dense {
	return testutil.RandDense(r, d == core.Float32, sh...)
}

func setFloat(t *tensor.Dense, i int, v float64) {
	switch s := t.Data().(type) {
	case []float64:
		s[i] = v
	case []float32:
		s[i] = float32(v)
	}
}

// sameBitsNaN reports the first element where got and want differ in their bits (NaNs
// match any NaN), or -1.
func sameBitsNaN(got, want []float64) int {
	for i := range want {
		if math.IsNaN(want[i]) && math.IsNaN(got[i]) {
			continue
		}
		if math.Float64bits(got[i]) != math.Float64bits(want[i]) {
			return i
		}
	}
	return -1
}

func TestWindowDotAgainstCoreEval(t *testing.T) {
	r := rand.New(rand.NewSource(7))
	for _, c := range dwCases() {
		if c.parallel && testing.Short() {
			continue
		}
		for _, d := range floatDtypes {
			if c.parallel && d == core.Float64 {
				continue // core.Eval is slow on these; float32 runs the same loops
			}
			oh, ow := c.out()
			args := map[string]*tensor.Dense{
				"x": randDense(r, d, c.b, c.groups*c.cg, c.h, c.w),
				"f": randDense(r, d, c.groups, c.og, c.cg, c.kh, c.kw),
				"d": randDense(r, d, c.b, c.groups*c.og, oh, ow),
			}
			if c.infFilter {
				setFloat(args["f"], 0, math.Inf(1))
			}
			if c.nanCotan {
				setFloat(args["d"], 1, math.NaN())
			}
			if c.infImage { // at the end of a row: the planes' extra columns read it
				setFloat(args["x"], 3*c.w-1, math.Inf(-1))
			}
			dom, xa, fa, da := c.accesses()
			fwd, dx, df := c.programs(d)
			wants := map[string]*tensor.Dense{}
			for _, k := range []struct {
				name      string
				src       string
				out, a, b WinAccess
				ins       []string
			}{
				{"forward", fwd, da, xa, fa, []string{"x", "f"}},
				{"forward, operands swapped", fwd, da, fa, xa, []string{"f", "x"}},
				{"∂x", dx, xa, da, fa, []string{"d", "f"}},
				{"∂f", df, fa, da, xa, []string{"d", "x"}},
			} {
				what := fmt.Sprintf("%s %v %s", c.name, d, k.name)
				p, err := core.ParseProgram(k.src)
				if err != nil {
					t.Fatalf("%s: parse: %v\n%s", what, err, k.src)
				}
				want, ok := wants[k.src]
				if !ok {
					if want, err = tensors.Eval(p, args); err != nil {
						t.Fatalf("%s: core.Eval: %v", what, err)
					}
					wants[k.src] = want
				}
				for _, mode := range []int{winRows, winChannels, winPlanes} {
					wk, err := newWindowDot(dom, k.out, k.a, k.b, mode)
					if err != nil {
						t.Fatalf("%s: NewWindowDot: %v", what, err)
					}
					if mode == winPlanes && (wk.plane != nil) != c.planes() {
						t.Fatalf("%s: plane plan %v, want %v", what, wk.plane != nil, c.planes())
					}
					procs := []int{1}
					if c.parallel {
						procs = []int{1, 2}
					}
					for _, np := range procs {
						old := runtime.GOMAXPROCS(np)
						got := tensor.New(tensor.Of(want.Dtype()), tensor.WithShape(want.Shape()...))
						err := wk.Run(got.Data(), []any{args[k.ins[0]].Data(), args[k.ins[1]].Data()})
						runtime.GOMAXPROCS(old)
						if err != nil {
							t.Fatalf("%s: Run: %v", what, err)
						}
						g, w := floats(t, got), floats(t, want)
						if i := sameBitsNaN(g, w); i >= 0 {
							t.Fatalf("%s (mode %d, GOMAXPROCS %d): element %d = %v, core.Eval %v", what, mode, np, i, g[i], w[i])
						}
					}
				}
			}
		}
	}
}

// The loop order keeps, for every destination, the reference's order of its products (the
// variables that are not disjoint keep their order), a reduction row sums several
// destinations at once, and small maps run the channels innermost.
func TestWindowDotLoopOrder(t *testing.T) {
	c := dwCase{b: 2, groups: 6, cg: 2, og: 2, h: 5, w: 5, kh: 3, kw: 3, sh: 1, sw: 1, dh: 1, dw: 1, pt: 1, pb: 1, pl: 1, pr: 1}
	dom, xa, fa, da := c.accesses()
	// variables: c1 r s n g m i j
	for _, k := range []struct {
		name      string
		mode      int
		out, a, b WinAccess
		order     string
		unroll    bool
	}{
		{"forward", winRows, da, xa, fa, "n g m c1 r s i j", false},
		{"∂x", winRows, xa, da, fa, "c1 n g r s m i j", false},
		{"∂f", winRows, fa, da, xa, "c1 r s m g n i j", true},
		{"forward", winChannels, da, xa, fa, "n m c1 r s i j g", false},
		{"∂x", winChannels, xa, da, fa, "c1 n r s m i j g", false},
		{"∂f", winChannels, fa, da, xa, "c1 r s m n i j g", false},
		{"forward", winAuto, da, xa, fa, "n m c1 r s i j g", false}, // 5 < winRowMin
	} {
		wk, err := newWindowDot(dom, k.out, k.a, k.b, k.mode)
		if err != nil {
			t.Fatal(err)
		}
		names := strings.Fields("c1 r s n g m i j")
		var got []string
		for _, v := range wk.order {
			got = append(got, names[v])
		}
		if strings.Join(got, " ") != k.order || (wk.unroll >= 0) != k.unroll {
			t.Errorf("%s (mode %d): loop order %v (unrolled level %d), want %s (unrolled %v)", k.name, k.mode, got, wk.unroll, k.order, k.unroll)
		}
	}
}

func TestWindowDotErrors(t *testing.T) {
	c := dwCases()[0]
	dom, xa, fa, da := c.accesses()
	bad := func(w WinAccess, f func(*WinAccess)) WinAccess {
		w = w.clone()
		f(&w)
		return w
	}
	for _, k := range []struct {
		name      string
		dom       []int
		out, a, b WinAccess
	}{
		{"negative domain", []int{-1, 3, 3, 2, 4, 1, 6, 6}, da, xa, fa},
		{"coefficient row too short", dom, da, bad(xa, func(w *WinAccess) { w.Coef[0] = w.Coef[0][:3] }), fa},
		{"missing constant", dom, da, bad(xa, func(w *WinAccess) { w.C0 = w.C0[:2] }), fa},
		{"overflowing constant", dom, da, bad(xa, func(w *WinAccess) { w.C0[2] = 1 << 62 }), fa},
		{"overflowing coefficient", dom, da, bad(xa, func(w *WinAccess) { w.Coef[2][6] = 1 << 61 }), fa},
		{"negative shape", dom, bad(da, func(w *WinAccess) { w.Shape[0] = -2 }), xa, fa},
	} {
		if _, err := NewWindowDot(k.dom, k.out, k.a, k.b); err == nil || !strings.Contains(err.Error(), "windowDot") {
			t.Errorf("%s: err = %v, want a windowDot error", k.name, err)
		}
	}
	wk, err := NewWindowDot(dom, da, xa, fa)
	if err != nil {
		t.Fatal(err)
	}
	oh, ow := c.out()
	out := make([]float64, c.b*c.groups*oh*ow)
	x := make([]float64, c.b*c.groups*c.h*c.w)
	f := make([]float64, c.groups*c.kh*c.kw)
	for _, k := range []struct {
		name string
		out  any
		ins  []any
	}{
		{"one input", out, []any{x}},
		{"short output", out[1:], []any{x, f}},
		{"short input", out, []any{x[1:], f}},
		{"mixed types", out, []any{x, make([]float32, len(f))}},
		{"integers", make([]int64, len(out)), []any{make([]int64, len(x)), make([]int64, len(f))}},
	} {
		if err := wk.Run(k.out, k.ins); err == nil || !strings.Contains(err.Error(), "windowDot") {
			t.Errorf("%s: err = %v, want a windowDot error", k.name, err)
		}
	}
}

// Random affine accesses (negative coefficients, indices that never or always leave the
// bounds, dimensions of one element, empty domains) as
// scatter shO (gather dom a fA * gather dom b fB) fO, against core.Eval bit for bit.
func TestWindowDotRandomAffine(t *testing.T) {
	r := rand.New(rand.NewSource(11))
	randAccess := func(dom []int) WinAccess {
		m := 1 + r.Intn(3)
		w := WinAccess{Shape: make([]int, m), Coef: make([][]int64, m), C0: make([]int64, m)}
		for k := range m {
			w.Shape[k] = 1 + r.Intn(5)
			w.Coef[k] = make([]int64, len(dom))
			for j := range dom {
				if r.Intn(3) > 0 {
					w.Coef[k][j] = int64(r.Intn(5) - 2)
				}
			}
			w.C0[k] = int64(r.Intn(7) - 3)
		}
		return w
	}
	fn := func(dom []int, w WinAccess) string {
		vs := make([]string, len(dom))
		for j := range dom {
			vs[j] = fmt.Sprintf("v%d", j)
		}
		outs := make([]string, len(w.Shape))
		for k, row := range w.Coef {
			e := fmt.Sprintf("(%d)", w.C0[k])
			for j, c := range row {
				e += fmt.Sprintf(" + (%d) * v%d", c, j)
			}
			outs[k] = e
		}
		return fmt.Sprintf("(\\[%s] -> [%s])", strings.Join(vs, ", "), strings.Join(outs, ", "))
	}
	shape := func(s []int) string { return strings.Trim(strings.Join(strings.Fields(fmt.Sprint(s)), ","), "") }
	for seed := range 300 {
		n := 1 + r.Intn(4)
		dom := make([]int, n)
		for j := range dom {
			dom[j] = 1 + r.Intn(4)
		}
		if seed%50 == 0 {
			dom[r.Intn(n)] = 0
		}
		o, a, b := randAccess(dom), randAccess(dom), randAccess(dom)
		d := floatDtypes[seed%2]
		src := fmt.Sprintf("fn (a : %s %v, b : %s %v) => scatter %s (gather %s a %s * gather %s b %s) %s",
			shape(a.Shape), d, shape(b.Shape), d, shape(o.Shape), shape(dom), fn(dom, a), shape(dom), fn(dom, b), fn(dom, o))
		p, err := core.ParseProgram(src)
		if err != nil {
			t.Fatalf("seed %d: parse: %v\n%s", seed, err, src)
		}
		args := map[string]*tensor.Dense{"a": randDense(r, d, a.Shape...), "b": randDense(r, d, b.Shape...)}
		if seed%7 == 0 {
			setFloat(args["b"], 0, math.Inf(-1))
		}
		want, err := tensors.Eval(p, args)
		if err != nil {
			t.Fatalf("seed %d: core.Eval: %v", seed, err)
		}
		for _, mode := range []int{winAuto, winRows, winChannels} {
			wk, err := newWindowDot(dom, o, a, b, mode)
			if err != nil {
				t.Fatalf("seed %d: NewWindowDot: %v", seed, err)
			}
			got := tensor.New(tensor.Of(want.Dtype()), tensor.WithShape(want.Shape()...))
			if err := wk.Run(got.Data(), []any{args["a"].Data(), args["b"].Data()}); err != nil {
				t.Fatalf("seed %d: Run: %v", seed, err)
			}
			g, w := floats(t, got), floats(t, want)
			if i := sameBitsNaN(g, w); i >= 0 {
				t.Fatalf("seed %d mode %d: element %d = %v, core.Eval %v\n%s", seed, mode, i, g[i], w[i], src)
			}
		}
	}
}

// Accesses whose indices or element offsets could overflow are refused (the planner then
// keeps the unfused kernels).
func TestWindowDotOverflow(t *testing.T) {
	dom := []int{4, 4}
	ok := WinAccess{Shape: []int{4, 4}, Coef: [][]int64{{1, 0}, {0, 1}}, C0: []int64{0, 0}}
	for _, k := range []struct {
		name string
		dom  []int
		a    WinAccess
	}{
		{"domain", []int{1 << 31, 1 << 31, 4}, WinAccess{Shape: []int{1}, Coef: [][]int64{{0, 0, 0}}, C0: []int64{0}}},
		{"shape", dom, WinAccess{Shape: []int{1 << 31, 1 << 31, 4}, Coef: [][]int64{{1, 0}, {0, 1}, {0, 0}}, C0: []int64{0, 0, 0}}},
		{"element offset", dom, WinAccess{Shape: []int{1 << 20, 1 << 20}, Coef: [][]int64{{1 << 40, 0}, {0, 1}}, C0: []int64{0, 0}}},
	} {
		out := WinAccess{Shape: []int{1}, Coef: [][]int64{make([]int64, len(k.dom))}, C0: []int64{0}}
		b := out // a scalar, or ok over dom
		if len(k.dom) == len(dom) {
			b = ok
		}
		if _, err := NewWindowDot(k.dom, out, k.a, b); err == nil || !strings.Contains(err.Error(), "windowDot") {
			t.Errorf("%s: err = %v, want a windowDot error", k.name, err)
		}
	}
}

// TestWindowDotProductRows: a scatter of an element-wise product into a slice of a larger
// array (densenet121's gradients through its concatenations) runs its rows of products with
// the vector loops (mulAddUnit, rows of 16 or more, across its 256-element buffer) and equals
// core.Eval bit for bit, specials included, in both float dtypes.
func TestWindowDotProductRows(t *testing.T) {
	rng := rand.New(rand.NewSource(12))
	for _, d := range floatDtypes {
		for _, r := range []int{5, 16, 19, 256, 300} {
			src := fmt.Sprintf(`fn (a : [2,3,%d] %v, b : [2,3,%d] %v) => scatter [2,5,%d] (a * b) (\[i, j, k] -> [i, j + 1, k])`, r, d, r, d, r)
			p, err := core.ParseProgram(src)
			if err != nil {
				t.Fatal(err)
			}
			args := map[string]*tensor.Dense{"a": randDense(rng, d, 2, 3, r), "b": randDense(rng, d, 2, 3, r)}
			for i, v := range []float64{math.Copysign(0, -1), math.Inf(1), math.NaN(), 0} {
				setFloat(args["a"], 3*i, v)
				setFloat(args["b"], 3*i+1, -v)
			}
			want, err := tensors.Eval(p, args)
			if err != nil {
				t.Fatal(err)
			}
			id := func(rows int, c0 int64) WinAccess {
				return WinAccess{Shape: []int{2, rows, r}, Coef: [][]int64{{1, 0, 0}, {0, 1, 0}, {0, 0, 1}}, C0: []int64{0, c0, 0}}
			}
			k, err := NewWindowDot([]int{2, 3, r}, id(5, 1), id(3, 0), id(3, 0))
			if err != nil {
				t.Fatal(err)
			}
			got := tensor.New(tensor.Of(want.Dtype()), tensor.WithShape(want.Shape()...))
			if err := k.Run(got.Data(), []any{args["a"].Data(), args["b"].Data()}); err != nil {
				t.Fatal(err)
			}
			if i := sameBitsNaN(floats(t, got), floats(t, want)); i >= 0 {
				t.Fatalf("%v rows of %d: element %d = %v, core.Eval %v", d, r, i, floats(t, got)[i], floats(t, want)[i])
			}
		}
	}
}

// TestWindowDotChannelScaleSlices: a scatter into a channel slice of a product by a
// per-channel factor on small maps (densenet121's gradients through a batch norm's scale into
// its concatenation's slices: rows of 2 merged into planes of 4, rows of 3 kept) equals
// core.Eval bit for bit, specials included: the innermost levels merge (mergeInner) and the
// short rows run a block at a time (axpyShortRows).
func TestWindowDotChannelScaleSlices(t *testing.T) {
	rng := rand.New(rand.NewSource(13))
	for _, d := range floatDtypes {
		for _, hw := range [][2]int{{2, 2}, {1, 3}, {3, 3}} {
			h, w := hw[0], hw[1]
			src := fmt.Sprintf(`fn (a : [2,7,%d,%d] %v, b : [7] %v) => scatter [2,4,%d,%d] (a * gather [2,7,%d,%d] b (\[i, j, k, l] -> [j])) (\[i, j, k, l] -> [i, j + (-2), k, l])`,
				h, w, d, d, h, w, h, w)
			p, err := core.ParseProgram(src)
			if err != nil {
				t.Fatal(err)
			}
			args := map[string]*tensor.Dense{"a": randDense(rng, d, 2, 7, h, w), "b": randDense(rng, d, 7)}
			setFloat(args["a"], 9, math.Copysign(0, -1))
			setFloat(args["a"], 10, math.NaN())
			setFloat(args["b"], 3, math.Inf(-1))
			want, err := tensors.Eval(p, args)
			if err != nil {
				t.Fatal(err)
			}
			dom := []int{2, 7, h, w}
			id := WinAccess{Shape: []int{2, 7, h, w}, Coef: [][]int64{{1, 0, 0, 0}, {0, 1, 0, 0}, {0, 0, 1, 0}, {0, 0, 0, 1}}, C0: make([]int64, 4)}
			out := id.clone()
			out.Shape[1], out.C0[1] = 4, -2
			ch := WinAccess{Shape: []int{7}, Coef: [][]int64{{0, 1, 0, 0}}, C0: []int64{0}}
			k, err := NewWindowDot(dom, out, id, ch)
			if err != nil {
				t.Fatal(err)
			}
			if h*w > 1 && h > 1 && len(k.ldom) != 3 {
				t.Fatalf("%dx%d maps: loop levels %v, want the map's two merged", h, w, k.ldom)
			}
			got := tensor.New(tensor.Of(want.Dtype()), tensor.WithShape(want.Shape()...))
			if err := k.Run(got.Data(), []any{args["a"].Data(), args["b"].Data()}); err != nil {
				t.Fatal(err)
			}
			if i := sameBitsNaN(floats(t, got), floats(t, want)); i >= 0 {
				t.Fatalf("%v %dx%d: element %d = %v, core.Eval %v", d, h, w, i, floats(t, got)[i], floats(t, want)[i])
			}
		}
	}
}
