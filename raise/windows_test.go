package raise

import (
	"fmt"
	"math"
	"math/rand"
	"testing"

	"github.com/bulkad/bulkad/core"
	"github.com/bulkad/bulkad/core/tensors"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// The sums of products over windows (windows.go): a grouped element-wise convolution and its
// gradient, in the form ad.VJP gives lower.GroupedConv2d's term (primal lets for the window
// and filter gathers and the broadcast cotangent, the forward value and the two gradient
// products), raised per operation and coarsely, against core.Eval bit for bit (the fused
// kernel adds in the reference's order), and the fusion firing three times with no array of
// the windows' size left in the plan.

type winCase struct {
	name              string
	b, groups, cg, og int
	h, w, kh, kw      int
	sh, sw, dh, dw    int
	pt, pb, pl, pr    int
}

func (c winCase) outHW() (int, int) {
	return (c.h+c.pt+c.pb-c.dh*(c.kh-1)-1)/c.sh + 1, (c.w+c.pl+c.pr-c.dw*(c.kw-1)-1)/c.sw + 1
}

func winCases() []winCase {
	dw := func(name string, b, ch, h, k, s int) winCase {
		return winCase{name: name, b: b, groups: ch, cg: 1, og: 1, h: h, w: h, kh: k, kw: k, sh: s, sw: s, dh: 1, dw: 1, pt: k / 2, pb: k / 2, pl: k / 2, pr: k / 2}
	}
	return []winCase{
		dw("depthwise 3x3 stride 1 pad 1", 2, 3, 6, 3, 1),
		dw("depthwise 3x3 stride 2 pad 1", 2, 4, 7, 3, 2),
		dw("depthwise 5x5 stride 1 pad 2", 1, 3, 7, 5, 1),
		dw("depthwise 5x5 stride 2 pad 2", 2, 2, 9, 5, 2),
		{name: "multiplier 2, dilation 2, uneven pads", b: 2, groups: 3, cg: 1, og: 2, h: 7, w: 6, kh: 3, kw: 3, sh: 1, sw: 2, dh: 2, dw: 2, pt: 2, pb: 1, pl: 1, pr: 2},
		{name: "2 channels per group, 3x2", b: 1, groups: 2, cg: 2, og: 3, h: 5, w: 6, kh: 3, kw: 2, sh: 2, sw: 1, dh: 1, dw: 1, pt: 1, pb: 0, pl: 1, pr: 1},
		{name: "no padding", b: 2, groups: 3, cg: 1, og: 1, h: 6, w: 5, kh: 3, kw: 3, sh: 1, sw: 1, dh: 1, dw: 1},
	}
}

// program is the VJP of the convolution as ad prints it (the forward product in the order
// given by swap).
func (c winCase) program(dt string, swap bool) string {
	oh, ow := c.outHW()
	o, k := c.groups*c.og, c.cg*c.kh*c.kw
	sh := fmt.Sprintf("[%d,%d,%d,%d,%d,%d,%d,%d]", c.cg, c.kh, c.kw, c.b, c.groups, c.og, oh, ow)
	fx := fmt.Sprintf("(\\[c1,r,s,n,g,m,i,j] -> [n, %d * g + c1, %d * i + (%d) + %d * r, %d * j + (%d) + %d * s])", c.cg, c.sh, -c.pt, c.dh, c.sw, -c.pl, c.dw)
	ff := "(\\[c1_,r_,s_,n_,g_,m_,i_,j_] -> [g_, m_, c1_, r_, s_])"
	fwd := "p_0 * p_1"
	if swap {
		fwd = "p_1 * p_0"
	}
	return fmt.Sprintf("fn (x : [%d,%d,%d,%d] %s, f : [%d,%d,%d,%d] %s, dret : [%d,%d,%d,%d] %s) => "+
		"let p_0 = gather %s x %s in let p_1 = gather %s (reshape [%d,%d,%d,%d,%d] f) %s in "+
		"let c_0 = reshape %s (replicate %d dret) in "+
		"(sumOuter (reshape [%d,%d,%d,%d,%d] (%s)), scatter [%d,%d,%d,%d] (c_0 * p_1) %s, reshape [%d,%d,%d,%d] (scatter [%d,%d,%d,%d,%d] (c_0 * p_0) %s))",
		c.b, c.groups*c.cg, c.h, c.w, dt, o, c.cg, c.kh, c.kw, dt, c.b, o, oh, ow, dt,
		sh, fx, sh, c.groups, c.og, c.cg, c.kh, c.kw, ff,
		sh, k,
		k, c.b, o, oh, ow, fwd, c.b, c.groups*c.cg, c.h, c.w, fx, o, c.cg, c.kh, c.kw, c.groups, c.og, c.cg, c.kh, c.kw, ff)
}

// bitsEqual compares two flat float slices bit for bit (any NaN matches any NaN) and
// describes the first difference ("" when none).
func bitsEqual(got, want any) string {
	g, w := toF64(got), toF64(want)
	if g == nil || w == nil || len(g) != len(w) {
		return fmt.Sprintf("types or lengths differ: %T[%d] vs %T[%d]", got, len(g), want, len(w))
	}
	for i := range w {
		if math.IsNaN(g[i]) && math.IsNaN(w[i]) {
			continue
		}
		if math.Float64bits(g[i]) != math.Float64bits(w[i]) {
			return fmt.Sprintf("element %d: %v, core.Eval %v", i, g[i], w[i])
		}
	}
	return ""
}

// windowKinds plans p (coarsely when coarse is set) and counts its steps by kind, and the
// steps whose value has n elements.
func windowKinds(t *testing.T, p *core.Program, coarse bool, n int) (map[string]int, int) {
	t.Helper()
	g := gorgonia.NewGraph()
	bind := map[string]*gorgonia.Node{}
	for _, v := range p.Params {
		d := tensor.Float64
		if v.Type().Dtype == core.Float32 {
			d = tensor.Float32
		}
		bind[v.Name] = gorgonia.NewTensor(g, d, len(v.Type().Shape), gorgonia.WithShape(v.Type().Shape...), gorgonia.WithName(v.Name))
	}
	pl, err := newPlan(g, p, bind, nil)
	if err != nil {
		t.Fatal(err)
	}
	pl.coarse = coarse
	if err := pl.program(p, Options{Coarse: coarse}); err != nil {
		t.Fatal(err)
	}
	kinds, big := map[string]int{}, 0
	for _, s := range pl.steps {
		kind := "native"
		switch {
		case s.op != nil:
			kind = s.op.kind
		case s.alias:
			kind = "alias"
		case s.lit != nil:
			kind = "const"
		}
		kinds[kind]++
		if s.typ.Shape.Size() == n {
			big++
		}
	}
	return kinds, big
}

func TestWindowDotFusion(t *testing.T) {
	r := rand.New(rand.NewSource(17))
	for _, c := range winCases() {
		for _, dt := range []string{"f64", "f32"} {
			for _, swap := range []bool{false, true} {
				p, err := core.ParseProgram(c.program(dt, swap))
				if err != nil {
					t.Fatalf("%s: parse: %v\n%s", c.name, err, c.program(dt, swap))
				}
				oh, ow := c.outHW()
				o := c.groups * c.og
				args := map[string]*tensor.Dense{
					"x":    randDense(r, dt, c.b, c.groups*c.cg, c.h, c.w),
					"f":    randDense(r, dt, o, c.cg, c.kh, c.kw),
					"dret": randDense(r, dt, c.b, o, oh, ow),
				}
				want, err := tensors.EvalTuple(p, args)
				if err != nil {
					t.Fatalf("%s: core.EvalTuple: %v", c.name, err)
				}
				windows := c.cg * c.kh * c.kw * c.b * o * oh * ow
				for _, mode := range []struct {
					name string
					opt  Options
				}{{"ops", Options{}}, {"coarse", Options{Coarse: true}}} {
					what := fmt.Sprintf("%s %s swap=%v %s", c.name, dt, swap, mode.name)
					g := gorgonia.NewGraph()
					bind := bindParams(t, g, p, args)
					outs := runWith(t, g, p, bind, mode.opt)
					for i, n := range outs {
						got, err := flat(n.Value())
						if err != nil {
							t.Fatal(err)
						}
						w, err := flat(want[i])
						if err != nil {
							t.Fatal(err)
						}
						if d := bitsEqual(got, w); d != "" {
							t.Errorf("%s: result %d: %s", what, i, d)
						}
					}
					kinds, big := windowKinds(t, p, mode.opt.Coarse, windows)
					if kinds["windowDot"] != 3 || big != 0 {
						t.Errorf("%s: %d windowDot steps and %d steps with arrays of the windows' size (%d elements), want 3 and 0; steps %v",
							what, kinds["windowDot"], big, windows, kinds)
					}
				}
			}
		}
	}
}

// Infinities and NaNs meeting the padding: 0·∞ = NaN in the reference, which the fused
// kernel reproduces (element by element).
func TestWindowDotNonFinite(t *testing.T) {
	c := winCases()[0]
	p, err := core.ParseProgram(c.program("f64", false))
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewSource(3))
	oh, ow := c.outHW()
	args := map[string]*tensor.Dense{
		"x":    randDense(r, "f64", c.b, c.groups, c.h, c.w),
		"f":    randDense(r, "f64", c.groups, 1, c.kh, c.kw),
		"dret": randDense(r, "f64", c.b, c.groups, oh, ow),
	}
	args["f"].Data().([]float64)[0] = math.Inf(1)
	args["dret"].Data().([]float64)[0] = math.NaN()
	want, err := tensors.EvalTuple(p, args)
	if err != nil {
		t.Fatal(err)
	}
	for _, opt := range []Options{{}, {Coarse: true}} {
		g := gorgonia.NewGraph()
		bind := bindParams(t, g, p, args)
		outs := runWith(t, g, p, bind, opt)
		nan := 0
		for i, n := range outs {
			got, _ := flat(n.Value())
			w, _ := flat(want[i])
			if d := bitsEqual(got, w); d != "" {
				t.Errorf("coarse=%v: result %d: %s", opt.Coarse, i, d)
			}
			for _, v := range got.([]float64) {
				if v != v {
					nan++
				}
			}
		}
		if nan == 0 {
			t.Errorf("no NaN in the results: the case tests nothing")
		}
	}
}

// Products with a factor read in place through an index function with fewer variables than
// outputs, and products the fusion leaves alone, raised per operation and coarsely, equal
// core.Eval.
//
//   - rows: \[i] -> [1, i], a row of x (the derivative of a where or of an index) inside a
//     sum of products or a scatter of one. Planning it indexed a row at −1 and panicked (an
//     ONNX ReduceL2's gradient hit it); it is fused.
//   - time step: one step of a recurrence, \[i,j] -> [t, i, c + j] (the gradient of
//     lower.Recurrent); identityAccess once indexed a row at −1 and panicked.
//   - not fused: no factor is a gather whose index function is affine with static constants
//     (not affine, or reading an argmax), or the product is of plain arrays; they are
//     planned as before. (A factor of the first kinds beside an affine gather is fused as a
//     plain array: TestAgainstCoreEval.)
func TestWindowDotRowsAndNotFused(t *testing.T) {
	cases := []struct {
		name, params string
		srcs         []string
		notFused     bool
	}{
		{name: "rows", params: "x : [2,3] f64, y : [3] f64, z : [2,3] f64", srcs: []string{
			"sumOuter (gather [3] x (\\[i] -> [1, i]) * y)",
			"scatter [2,3] (y * gather [3] x (\\[i] -> [1, i])) (\\[i] -> [0, i])",
			"scatter [2,3] (gather [3] z (\\[i] -> [0, i]) * gather [3] x (\\[i] -> [1, 2 - i])) (\\[i] -> [1, i])",
		}},
		{name: "time step", params: "x : [3,2,8] f64, y : [2,4] f64", srcs: []string{
			"scatter [3,2,8] (y * gather [2,4] x (\\[i,j] -> [1, i, 4 + j])) (\\[i,j] -> [2, i, j])",
			"sumOuter (y * gather [2,4] x (\\[i,j] -> [2, i, j + 3]))",
		}},
		{name: "not fused", params: "x : [3,4] f64, y : [4] f64, v : [6] f64", notFused: true, srcs: []string{
			"sumOuter (gather [2,3] y (\\[a,i] -> [quot i 2 + a]) * gather [2,3] v (\\[a,i] -> [rem (i + a) 3]))",
			"scatter [3] (gather [2,3] y (\\[a,i] -> [quot (i + a) 2]) * gather [2,3] v (\\[a,i] -> [i + 3 * a])) (\\[a,i] -> [quot i a])",
			"sumOuter (gather [4,3] x (\\[j,i] -> [i, index (argmaxOuter (tr [1,0] x)) [i]]) * gather [4,3] y (\\[j,i] -> [quot (j + i) 2]))",
			"sumOuter (reshape [2,3] (v * v))",
		}},
	}
	for _, c := range cases {
		for i, src := range c.srcs {
			p := parseProgram(t, c.params, src)
			args := randArgs(rand.New(rand.NewSource(int64(i+1))), p)
			for _, opt := range []Options{{}, {Coarse: true}} {
				raisedEqualsEvalWith(t, p, args, 0, opt)
				if !c.notFused {
					continue
				}
				if kinds, _ := windowKinds(t, p, opt.Coarse, -1); kinds["windowDot"] != 0 {
					t.Errorf("%s: %s: fused (%v)", c.name, src, kinds)
				}
			}
		}
	}
}
