package raise

import (
	"fmt"
	"math"
	"math/rand"
	"strings"
	"testing"

	kern "github.com/bulkad/bulkad/kernel"

	"github.com/bulkad/bulkad/ad"
	"github.com/bulkad/bulkad/core"
	"github.com/bulkad/bulkad/lower"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Max-pool shaped index functions (2×2 windows of a [2,3,4,4] map): the windows W, the
// argmax of one window chosen inside an index function (as AD and the simplifier emit it),
// and the gather at / scatter to the argmax position.
const (
	poolW = "reshape [4,2,3,2,2] (gather [2,2,2,3,2,2] x (\\[r,s,b,c,i,j] -> [b, c, 2 * i + r, 2 * j + s]))"
	poolA = "argmaxOuter (gather [4] W (\\[p] -> [p, b, c, i, j]))"
	poolF = "\\[b,c,i,j] -> [b, c, 2 * i + quot A 2, 2 * j + rem A 2]"
	// stride-1 windows (overlapping: 3×3 outputs)
	poolW1 = "reshape [4,2,3,3,3] (gather [2,2,2,3,3,3] x (\\[r,s,b,c,i,j] -> [b, c, i + r, j + s]))"
)

func poolSrc(s string) string {
	s = strings.ReplaceAll(s, "F", poolF)
	s = strings.ReplaceAll(s, "A1", "("+strings.ReplaceAll(poolA, "W", "W1")+")")
	s = strings.ReplaceAll(s, "A", "("+poolA+")")
	s = strings.ReplaceAll(s, "W1", "("+poolW1+")")
	return strings.ReplaceAll(s, "W", "("+poolW+")")
}

// poolData is x with ties (few distinct levels), one NaN and one all-NaN window, y random,
// g and g3 random cotangents.
func poolData() map[string]*tensor.Dense {
	r := rand.New(rand.NewSource(11))
	x := make([]float64, 96)
	for i := range x {
		x[i] = float64(r.Intn(3)) - 1
	}
	x[5] = math.NaN()
	for _, p := range []int{16*4 + 0, 16*4 + 1, 16*4 + 4, 16*4 + 5} { // b=0, c=1, window (0,0)
		x[p] = math.NaN()
	}
	x32 := make([]float32, len(x))
	for i, v := range x {
		x32[i] = float32(v)
	}
	return map[string]*tensor.Dense{
		"x":   tensor.New(tensor.WithShape(2, 3, 4, 4), tensor.WithBacking(x)),
		"y":   tensor.New(tensor.WithShape(2, 3, 4, 4), tensor.WithBacking(randF(r, 96))),
		"g":   tensor.New(tensor.WithShape(2, 3, 2, 2), tensor.WithBacking(randF(r, 24))),
		"g3":  tensor.New(tensor.WithShape(2, 3, 3, 3), tensor.WithBacking(randF(r, 54))),
		"x32": tensor.New(tensor.WithShape(2, 3, 4, 4), tensor.WithBacking(x32)),
	}
}

const poolParams = "x : [2,3,4,4] f64, y : [2,3,4,4] f64, g : [2,3,2,2] f64, g3 : [2,3,3,3] f64, x32 : [2,3,4,4] f32"

// The looked-up fast paths (gather at / scatter to an argmax position, and a 0/1 mask times
// such a scatter fused into it) against package core's evaluator, and the path each takes.
func TestLookupGatherScatter(t *testing.T) {
	const (
		lookup = "lookup"  // the result is a gather/scatter on the looked-up path
		fused  = "fused"   // a product whose result is a looked-up scatter (mask fused in)
		plain  = "general" // the result is not a looked-up gather/scatter
	)
	cases := []struct{ name, src, path string }{
		{"argmax of the windows", "cast f64 (argmaxOuter W)", plain},
		{"gather at the argmax", "gather [2,3,2,2] x (F)", lookup},
		{"scatter to the argmax", "scatter [2,3,4,4] g (F)", lookup},
		{"f32 gather at the argmax", "gather [2,3,2,2] x32 (" + strings.ReplaceAll(poolF, "A", "(index (argmaxOuter W) [b,c,i,j])") + ")", lookup},
		{"mask times scatter", "scatter [2,3,4,4] g (F) * cast f64 (x >= y)", fused},
		{"mask first, transposed", "tr [0,2,3,1] (cast f64 (x >= y) * scatter [2,3,4,4] g (F))", fused},
		{"let-bound argmax", "let am = argmaxOuter W in scatter [2,3,4,4] g (\\[b,c,i,j] -> [b, c, 2 * i + quot (index am [b,c,i,j]) 2, 2 * j + rem (index am [b,c,i,j]) 2])", lookup},
		{"let-bound mask", "let mk = cast f64 (x >= y) in mk * scatter [2,3,4,4] g (F)", fused},
		{"overlapping windows: not fused", "scatter [2,3,4,4] g3 (\\[b,c,i,j] -> [b, c, i + quot A1 2, j + rem A1 2]) * cast f64 (x >= y)", plain},
		{"overlapping windows scatter", "scatter [2,3,4,4] g3 (\\[b,c,i,j] -> [b, c, i + quot A1 2, j + rem A1 2])", lookup},
		{"mask not 0/1: not fused", "scatter [2,3,4,4] g (F) * y", plain},
		// Not provably in bounds (a padded pool's shape): the clipped lookup, which drops what
		// falls outside (a scatter) or reads zeros there (a gather), as core's evaluator does.
		{"shifted (out of bounds) scatter: clipped", "scatter [2,3,4,4] g (\\[b,c,i,j] -> [b, c, 2 * i - 1 + quot A 2, 2 * j + rem A 2])", lookup},
		{"shifted (out of bounds) gather: clipped", "gather [2,3,2,2] x (\\[b,c,i,j] -> [b, c, 2 * i - 1 + quot A 2, 2 * j + 1 + rem A 2])", lookup},
		{"two variables in one output, out of bounds: general", "scatter [2,3,4,4] g (\\[b,c,i,j] -> [b, c, i + j - 1 + quot A 2, 2 * j + rem A 2])", plain},
		{"permuted lookup: general", "let am = argmaxOuter W in scatter [2,3,4,4] g (\\[b,c,i,j] -> [b, c, 2 * i + quot (index am [b,c,j,i]) 2, 2 * j + rem (index am [b,c,j,i]) 2])", plain},
	}
	// The f32 case reads x32's argmax through an f64 W: rewrite W to x32 there.
	cases[3].src = strings.ReplaceAll(cases[3].src, "W", "("+strings.ReplaceAll(poolW, " x ", " x32 ")+")")
	args := poolData()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			src := "fn (" + poolParams + ") => " + poolSrc(c.src)
			p, err := core.ParseProgram(src)
			if err != nil {
				t.Fatalf("parse %s: %v", src, err)
			}
			outs := raisedEqualsEval(t, p, args, 0)
			if path := lookupPath(outs[0]); path != c.path && !(c.path == fused && path == lookup) {
				t.Errorf("%s: result took the %s path, want %s", p, path, c.path)
			}
		})
	}
}

// lookupPath names the path of the op computing n.
func lookupPath(n *gorgonia.Node) string {
	op, ok := n.Op().(*Op)
	if !ok {
		return "general"
	}
	switch k := op.k.(type) {
	case *kern.Gather:
		if k.Lookup != nil {
			return "lookup"
		}
	case *kern.Scatter:
		if k.Lookup != nil {
			return "lookup"
		}
	}
	return "general"
}

// A mask bound to an existing node (a primal let) is recognised through the let's
// definition; the fused result against naive loops.
func TestMaskedScatterBoundMask(t *testing.T) {
	args := poolData()
	src := "fn (" + poolParams + ") => " + poolSrc("let mk = cast f64 (x >= y) in tr [0,2,3,1] (scatter [2,3,4,4] g (F) * mk)")
	p, err := core.ParseProgram(src)
	if err != nil {
		t.Fatal(err)
	}
	x, y, gv := args["x"].Data().([]float64), args["y"].Data().([]float64), args["g"].Data().([]float64)
	mk := make([]float64, 96)
	for i := range mk {
		if x[i] >= y[i] {
			mk[i] = 1
		}
	}
	// naive: route g to the first maximum of each window (NaN never wins against a number,
	// an all-NaN window routes to its first position), times the mask, transposed to
	// [b,h,w,c].
	want := make([]float64, 96)
	for b := 0; b < 2; b++ {
		for c := 0; c < 3; c++ {
			for i := 0; i < 2; i++ {
				for j := 0; j < 2; j++ {
					best, br, bs := math.NaN(), 0, 0
					for r := 0; r < 2; r++ {
						for s := 0; s < 2; s++ {
							v := x[((b*3+c)*4+2*i+r)*4+2*j+s]
							if v > best || (best != best && v == v) {
								best, br, bs = v, r, s
							}
						}
					}
					h, w := 2*i+br, 2*j+bs
					want[((b*4+h)*4+w)*3+c] = gv[((b*3+c)*2+i)*2+j] * mk[((b*3+c)*4+h)*4+w]
				}
			}
		}
	}
	g := gorgonia.NewGraph()
	bind := map[string]*gorgonia.Node{"mk": input(t, g, "mk", []int{2, 3, 4, 4}, mk)}
	for _, v := range p.Params {
		bind[v.Name] = inputNode(t, g, v.Name, v.Type().Shape, args[v.Name])
	}
	outs := run(t, g, p, bind)
	if got := values(t, outs[0]).([]float64); !closeTo(got, want, 0) {
		t.Errorf("got  %v\nwant %v", got, want)
	}
	if path := lookupPath(outs[0]); path != "lookup" {
		t.Errorf("the product was not fused into the scatter (path %s)", path)
	}
}

// lookupPlan: which index functions are planned, and which are recognised as injective.
func TestLookupPlan(t *testing.T) {
	cases := []struct {
		fn                 string
		dom, out           []int
		planned, injective bool
	}{
		{poolF, []int{2, 3, 2, 2}, []int{2, 3, 4, 4}, true, true},
		// overlapping windows
		{"\\[b,c,i,j] -> [b, c, i + quot A 2, j + rem A 2]", []int{2, 3, 2, 2}, []int{2, 3, 4, 4}, true, false},
		// a variable in two outputs
		{"\\[b,c,i,j] -> [b, c, 2 * i + quot A 2, 2 * i + rem A 2]", []int{2, 3, 2, 2}, []int{2, 3, 4, 4}, true, false},
		// two variables in one output
		{"\\[b,c,i,j] -> [b, c, 2 * i + 2 * j + quot A 2, rem A 2]", []int{2, 3, 2, 2}, []int{2, 3, 8, 4}, true, false},
		// transposed outputs and a negated, scaled variable
		{"\\[b,c,i,j] -> [b, 3 - 2 * j - rem A 2, 2 * i + quot A 2, c]", []int{2, 3, 2, 2}, []int{2, 4, 4, 3}, true, true},
		// out of bounds for a = 3
		{"\\[b,c,i,j] -> [b, c, 2 * i + A, 2 * j]", []int{2, 3, 2, 2}, []int{2, 3, 4, 4}, false, false},
		// the lookup is not indexed by the bound variables in order
		{"\\[b,c,i,j] -> [b, c, 2 * i + quot (index (argmaxOuter W) [b,c,j,i]) 2, 2 * j]", []int{2, 3, 2, 2}, []int{2, 3, 4, 4}, false, false},
		// a product of a variable and the lookup is not affine
		{"\\[b,c,i,j] -> [b, c, i * quot A 2, 2 * j]", []int{2, 3, 2, 2}, []int{2, 3, 4, 4}, false, false},
	}
	for k, c := range cases {
		src := fmt.Sprintf("fn (%s) => scatter [%s] g (%s)", poolParams, joinInts(c.out), poolSrc(c.fn))
		p, err := core.ParseProgram(src)
		if err != nil {
			t.Fatalf("case %d: parse %s: %v", k, src, err)
		}
		s := p.Body.(*core.Scatter)
		prog, err := kern.CompileIndexFn(s.Fn)
		if err != nil {
			t.Fatalf("case %d: compile: %v", k, err)
		}
		pl := &plan{}
		lp, ok := kern.LookupPlan(s.Fn, prog, c.dom, c.out, pl.argmaxRange)
		if ok != c.planned || (ok && lp.Injective != c.injective) {
			inj := false
			if ok {
				inj = lp.Injective
			}
			t.Errorf("case %d %s: planned %v injective %v, want %v %v", k, c.fn, ok, inj, c.planned, c.injective)
		}
	}
}

func joinInts(v []int) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = fmt.Sprint(x)
	}
	return strings.Join(s, ",")
}

// matmul (tr [1,0] S) B with S a scatter (to argmax positions, masked, transposed and
// reshaped as in a convnet's filter gradient, or affine) runs as one sparse op; its value
// against package core's evaluator (summation orders differ: 1e-12, f32 1e-5), also when B
// holds an infinity (the dense definition: 0·Inf = NaN in the rows S does not touch).
func TestScatterMatmul(t *testing.T) {
	params := poolParams + ", bm : [32,13] f64, bi : [32,5] f64, v : [3,3] f64, b4 : [4,5] f64, g32 : [2,3,2,2] f32, bm32 : [32,13] f32, bw : [32,300] f64"
	pool := "tr [0,2,3,1] (scatter [2,3,4,4] g (F) * cast f64 (x >= y))"
	cases := []struct {
		name, src string
		fused     bool
	}{
		{"masked pool scatter, transposed and reshaped", "matmul (tr [1,0] (reshape [32,3] (" + pool + "))) bm", true},
		{"pool scatter", "matmul (tr [1,0] (reshape [32,3] (tr [0,2,3,1] (scatter [2,3,4,4] g (F))))) bm", true},
		{"pool scatter, wide B (S materialised, a GEMM)", "matmul (tr [1,0] (reshape [32,3] (" + pool + "))) bw", true},
		{"infinity in B", "matmul (tr [1,0] (reshape [32,3] (" + pool + "))) bi", true},
		{"affine 2-D scatter (column varies innermost)", "matmul (tr [1,0] (scatter [4,3] v (\\[i,j] -> [i + 1, j]))) b4", true},
		{"not a scatter", "matmul (tr [1,0] (reshape [32,3] (tr [0,2,3,1] (x * y)))) bm", false},
		{"reshape splitting the last dimension", "matmul (tr [1,0] (reshape [16,6] (" + pool + "))) (reshape [16,5] (gather [16,5] b4 (\\[i,j] -> [rem i 4, j])))", false},
		{"f32", "matmul (tr [1,0] (reshape [32,3] (tr [0,2,3,1] (scatter [2,3,4,4] g32 (" + strings.ReplaceAll(poolF, "A", "(index (argmaxOuter W) [b,c,i,j])") + "))))) bm32", true},
	}
	args := poolData()
	r := rand.New(rand.NewSource(21))
	bi := randF(r, 160)
	bi[7*5+2] = math.Inf(1) // row 7: in the padding-free map, a position no argmax reaches (checked below)
	bm32 := make([]float32, 416)
	for i := range bm32 {
		bm32[i] = float32(r.NormFloat64())
	}
	g32 := make([]float32, 24)
	for i := range g32 {
		g32[i] = float32(r.NormFloat64())
	}
	args["bm"] = tensor.New(tensor.WithShape(32, 13), tensor.WithBacking(randF(r, 416))) // 13 = 8 + 4 + 1 columns
	args["bw"] = tensor.New(tensor.WithShape(32, 300), tensor.WithBacking(randF(r, 9600)))
	args["bi"] = tensor.New(tensor.WithShape(32, 5), tensor.WithBacking(bi))
	args["v"] = tensor.New(tensor.WithShape(3, 3), tensor.WithBacking(randF(r, 9)))
	args["b4"] = tensor.New(tensor.WithShape(4, 5), tensor.WithBacking(randF(r, 20)))
	args["g32"] = tensor.New(tensor.WithShape(2, 3, 2, 2), tensor.WithBacking(g32))
	args["bm32"] = tensor.New(tensor.WithShape(32, 13), tensor.WithBacking(bm32))
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			src := poolSrc(c.src)
			if c.name == "f32" {
				src = strings.ReplaceAll(src, "("+poolW+")", "("+strings.ReplaceAll(poolW, " x ", " x32 ")+")")
			}
			p, err := core.ParseProgram("fn (" + params + ") => " + src)
			if err != nil {
				t.Fatalf("parse: %v", err)
			}
			tol := 1e-12
			if c.name == "f32" {
				tol = 1e-5
			}
			outs := raisedEqualsEval(t, p, args, tol)
			fused := false
			if op, isOp := outs[0].Op().(*Op); isOp {
				_, fused = op.k.(*kern.ScatterMatMul)
			}
			if fused != c.fused {
				t.Errorf("%s: sparse op used %v, want %v", p, fused, c.fused)
			}
			if c.name == "infinity in B" {
				nan := 0
				got, err := flat(outs[0].Value()) // equal to core.EvalTuple's (checked above)
				if err != nil {
					t.Fatal(err)
				}
				for _, v := range got.([]float64) {
					if v != v {
						nan++
					}
				}
				if nan == 0 {
					t.Errorf("the infinity in B does not reach the result (no NaN): the case tests nothing")
				}
			}
		})
	}
}

// TestArgmaxViewShared: two argmaxes over the same windows of one array, written with
// differently named index variables (a max-pooling's forward and its gradient, as the adapter
// and ad produce them), are one argmax step, per operation and coarsely, and both results
// equal core.Eval's; an argmax over other windows (stride 1) stays a step of its own.
func TestArgmaxViewShared(t *testing.T) {
	win := func(v string, stride int) string {
		return fmt.Sprintf("argmaxOuter (reshape [4,2,3,2,2] (gather [2,2,2,3,2,2] x (\\[r%[1]s,s%[1]s,b%[1]s,c%[1]s,i%[1]s,j%[1]s] -> [b%[1]s, c%[1]s, %[2]d * i%[1]s + r%[1]s, %[2]d * j%[1]s + s%[1]s])))", v, stride)
	}
	p, err := core.ParseProgram("fn (x : [2,3,4,4] f64) => (" + win("", 2) + ", " + win("_", 2) + ", " + win("1", 1) + ")")
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewSource(5))
	args := map[string]*tensor.Dense{"x": tensor.New(tensor.WithShape(2, 3, 4, 4), tensor.WithBacking(randF(r, 96)))}
	for _, opt := range []Options{{}, {Coarse: true}} {
		raisedEqualsEvalWith(t, p, args, 0, opt)
		if kinds, _ := windowKinds(t, p, opt.Coarse, 0); kinds["argmaxOuter"] != 2 {
			t.Errorf("coarse %v: %d argmax steps, want 2 (one per distinct window); steps %v", opt.Coarse, kinds["argmaxOuter"], kinds)
		}
	}
}

// TestArgmaxOperandShared: a padded max-pool (its windows read through a −∞ pad, so not a
// strided view) and its gradient, whose index function takes the argmax of one window per
// output point, raised coarsely after CSE: one argmax step of the whole operand, not the
// forward's and a second compiled from the gradient's per-window argmax, and both results
// equal core.Eval's.
func TestArgmaxOperandShared(t *testing.T) {
	for _, dt := range []core.Dtype{core.Float64, core.Float32} {
		x, err := core.NewVar("x", core.Type{Shape: core.Shape{2, 3, 6, 6}, Dtype: dt})
		if err != nil {
			t.Fatal(err)
		}
		win := lower.Window{KH: 3, KW: 3, PadTop: 1, PadBottom: 1, PadLeft: 1, PadRight: 1, StrideH: 2, StrideW: 2}
		y, err := lower.MaxPool2D(x, win)
		if err != nil {
			t.Fatal(err)
		}
		p, err := core.NewProgram([]*core.Var{x}, y)
		if err != nil {
			t.Fatal(err)
		}
		art, err := ad.VJP(p, "x")
		if err != nil {
			t.Fatal(err)
		}
		gp, err := core.CSE(art.Program())
		if err != nil {
			t.Fatal(err)
		}
		args := randArgs(rand.New(rand.NewSource(6)), gp)
		raisedEqualsEvalWith(t, gp, args, 0, Options{Coarse: true})
		if kinds, _ := windowKinds(t, gp, true, 0); kinds["argmaxOuter"] != 1 {
			t.Errorf("%v: %d argmax steps, want 1; steps %v", dt, kinds["argmaxOuter"], kinds)
		}
	}
}
