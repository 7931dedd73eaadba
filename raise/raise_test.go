package raise

import (
	"math"
	"math/rand"
	"strconv"
	"strings"
	"testing"

	"github.com/bulkad/bulkad/core/coretest"
	kern "github.com/bulkad/bulkad/kernel"

	"github.com/bulkad/bulkad/core"
	"gorgonia.org/gorgonia"
)

func TestGatherScatterMatmul(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	var b core.Builder
	x := mustVar(t, "x", coretest.F64(2, 3))
	ix := mustVar(t, "ix", coretest.I64(4))
	v := mustVar(t, "v", coretest.F64(6))
	a := mustVar(t, "a", coretest.F64(3, 2))
	c := mustVar(t, "c", coretest.F64(3, 4))
	i, j := mustVar(t, "i", core.Scalar(core.Int64)), mustVar(t, "j", core.Scalar(core.Int64))
	// gather [3,2] x (\[i,j] -> [j,i])   (a transpose)
	g1 := b.Gather(core.Shape{3, 2}, x, b.IndexFn([]*core.Var{i, j}, j, i))
	// gather [4,3] x (\[i] -> [index ix [i]])  (row selection; ix has an out-of-bounds entry)
	g2 := b.Gather(core.Shape{4, 3}, x, b.IndexFn([]*core.Var{i}, b.Index(ix, i)))
	// scatter [2] v (\[i] -> [quot i 2])  (pairs 0,1 → 0; 2,3 → 1; 4,5 dropped)
	s1 := b.Scatter(core.Shape{2}, v, b.IndexFn([]*core.Var{i}, b.Binary(core.OpQuot, i, core.ScalarI(2))))
	// matmul (tr [1,0] a) c : [2,4]
	m1 := b.MatMul(b.Transpose([]int{1, 0}, a), c)
	body := b.Tuple(g1, g2, s1, m1)
	if b.Err() != nil {
		t.Fatal(b.Err())
	}
	p, err := core.NewProgram([]*core.Var{x, ix, v, a, c}, body)
	if err != nil {
		t.Fatal(err)
	}
	g := gorgonia.NewGraph()
	xd, vd, ad, cd := randF(r, 6), randF(r, 6), randF(r, 6), randF(r, 12)
	ixd := []int64{1, 0, 7, 1}
	bind := map[string]*gorgonia.Node{
		"x": input(t, g, "x", []int{2, 3}, xd), "ix": input(t, g, "ix", []int{4}, ixd),
		"v": input(t, g, "v", []int{6}, vd), "a": input(t, g, "a", []int{3, 2}, ad), "c": input(t, g, "c", []int{3, 4}, cd),
	}
	outs := run(t, g, p, bind)

	want1 := make([]float64, 6)
	for i := 0; i < 3; i++ {
		for j := 0; j < 2; j++ {
			want1[i*2+j] = xd[j*3+i]
		}
	}
	want2 := make([]float64, 12)
	for i, k := range ixd {
		for j := 0; j < 3; j++ {
			if k >= 0 && k < 2 {
				want2[i*3+j] = xd[int(k)*3+j]
			}
		}
	}
	want3 := []float64{vd[0] + vd[1], vd[2] + vd[3]}
	want4 := make([]float64, 8)
	for i := 0; i < 2; i++ {
		for j := 0; j < 4; j++ {
			for k := 0; k < 3; k++ {
				want4[i*4+j] += ad[k*2+i] * cd[k*4+j]
			}
		}
	}
	for k, want := range [][]float64{want1, want2, want3, want4} {
		if got := values(t, outs[k]).([]float64); !closeTo(got, want, 1e-14) {
			t.Errorf("result %d of %v:\n got %v\nwant %v", k, p, got, want)
		}
	}
	// The matmul's transpose is a flag, not a node.
	if op, ok := outs[3].Op().(*Op); !ok || op.Kind() != "matmul" || !op.k.(kern.MatMul).TransA || op.k.(kern.MatMul).TransB {
		t.Errorf("matmul node has op %v (%T)", outs[3].Op(), outs[3].Op())
	}
	for _, n := range g.AllNodes() {
		if n.Op() != nil && strings.Contains(n.Op().String(), "ᵀ") {
			t.Errorf("unexpected transpose node %v", n)
		}
	}
}

func TestElementwiseAndMoves(t *testing.T) {
	r := rand.New(rand.NewSource(2))
	var b core.Builder
	x := mustVar(t, "x", coretest.F64(2, 3))
	y := mustVar(t, "y", coretest.F64(3))
	k := mustVar(t, "k", coretest.I64())
	s := mustVar(t, "s", coretest.F64())
	outs := []core.Term{
		b.Mul(x, b.Replicate(2, y)), // 0 fused broadcast
		b.Unary(core.OpTan, y),      // 1 custom unary
		b.Unary(core.OpSigmoid, y),  // 2 custom unary (Gorgonia's sigmoid clamps: not native)
		b.ArgmaxOuter(x),            // 3 argmax
		b.Cast(core.Float64, b.Binary(core.OpLt, y, b.Replicate(3, s))), // 4 comparison + cast
		b.Index(x, k),                           // 5 dynamic index
		b.FromVector(y, b.Unary(core.OpNeg, y)), // 6 fromVector
		b.Cond(b.Binary(core.OpGt, s, core.ScalarF(core.Float64, 0)), y, b.Unary(core.OpExp, y)), // 7 cond
		b.Cast(core.Float64, b.Iota(3)),            // 8 iota
		b.SumOuter(x),                              // 9 native Sum
		b.Transpose([]int{1, 0}, x),                // 10 native transpose
		b.Reshape(core.Shape{3, 2}, x),             // 11 native reshape
		b.Binary(core.OpMax, y, b.Replicate(3, s)), // 12 fused custom max
	}
	body := b.Tuple(outs...)
	if b.Err() != nil {
		t.Fatal(b.Err())
	}
	p, err := core.NewProgram([]*core.Var{x, y, k, s}, body)
	if err != nil {
		t.Fatal(err)
	}
	g := gorgonia.NewGraph()
	xd, yd := randF(r, 6), randF(r, 3)
	sd := 0.1
	bind := map[string]*gorgonia.Node{
		"x": input(t, g, "x", []int{2, 3}, xd), "y": input(t, g, "y", []int{3}, yd),
		"k": input(t, g, "k", nil, []int64{1}), "s": input(t, g, "s", nil, []float64{sd}),
	}
	res := run(t, g, p, bind)
	sig := func(v float64) float64 { return 1 / (1 + math.Exp(-v)) }
	var am []int64
	for j := 0; j < 3; j++ {
		if xd[3+j] > xd[j] {
			am = append(am, 1)
		} else {
			am = append(am, 0)
		}
	}
	lt := func(v float64) float64 {
		if v < sd {
			return 1
		}
		return 0
	}
	want := []any{
		[]float64{xd[0] * yd[0], xd[1] * yd[1], xd[2] * yd[2], xd[3] * yd[0], xd[4] * yd[1], xd[5] * yd[2]},
		[]float64{math.Tan(yd[0]), math.Tan(yd[1]), math.Tan(yd[2])},
		[]float64{sig(yd[0]), sig(yd[1]), sig(yd[2])},
		am,
		[]float64{lt(yd[0]), lt(yd[1]), lt(yd[2])},
		[]float64{xd[3], xd[4], xd[5]},
		[]float64{yd[0], yd[1], yd[2], -yd[0], -yd[1], -yd[2]},
		[]float64{yd[0], yd[1], yd[2]},
		[]float64{0, 1, 2},
		[]float64{xd[0] + xd[3], xd[1] + xd[4], xd[2] + xd[5]},
		[]float64{xd[0], xd[3], xd[1], xd[4], xd[2], xd[5]},
		xd,
		[]float64{math.Max(yd[0], sd), math.Max(yd[1], sd), math.Max(yd[2], sd)},
	}
	for i, w := range want {
		got := values(t, res[i])
		switch w := w.(type) {
		case []float64:
			if g, ok := got.([]float64); !ok || !closeTo(g, w, 1e-14) {
				t.Errorf("result %d (%v): got %v, want %v", i, outs[i], got, w)
			}
		case []int64:
			g, ok := got.([]int64)
			if !ok || len(g) != len(w) {
				t.Errorf("result %d (%v): got %v, want %v", i, outs[i], got, w)
				continue
			}
			for j := range g {
				if g[j] != w[j] {
					t.Errorf("result %d (%v): got %v, want %v", i, outs[i], got, w)
				}
			}
		}
	}
	// No replicate was materialised: the fused products read y cyclically.
	for _, n := range g.AllNodes() {
		if op, ok := n.Op().(*Op); ok && op.Kind() == "replicate" {
			t.Errorf("replicate materialised: %v", n)
		}
	}
}

// A let bound to an existing node is not raised again: the forward pass is reused.
func TestBoundLetNotRecomputed(t *testing.T) {
	var b core.Builder
	x := mustVar(t, "x", coretest.F64(3))
	h := mustVar(t, "h", coretest.F64(3))
	body := b.Let(h, b.Unary(core.OpExp, x), b.Tuple(b.Mul(h, x), b.SumOuter(h)))
	p, err := core.NewProgram([]*core.Var{x}, body)
	if err != nil || b.Err() != nil {
		t.Fatal(err, b.Err())
	}
	g := gorgonia.NewGraph()
	xd := []float64{0.5, -1, 2}
	xn := input(t, g, "x", []int{3}, xd)
	hn, err := gorgonia.Exp(xn)
	if err != nil {
		t.Fatal(err)
	}
	before := len(g.AllNodes())
	res := run(t, g, p, map[string]*gorgonia.Node{"x": xn, "h": hn})
	exps := 0
	for _, n := range g.AllNodes() {
		if n.Op() != nil && n.Op().String() == "exp" {
			exps++
		}
	}
	if exps != 1 {
		t.Errorf("%d exp nodes after raising, want 1 (the original)", exps)
	}
	if added := len(g.AllNodes()) - before; added != 2 {
		t.Errorf("raise added %d nodes, want 2 (the product and the sum)", added)
	}
	got := values(t, res[1]).([]float64)
	want := math.Exp(0.5) + math.Exp(-1) + math.Exp(2)
	if math.Abs(got[0]-want) > 1e-12 {
		t.Errorf("sum = %v, want %v", got[0], want)
	}
}

func TestFailureLeavesGraphUnchanged(t *testing.T) {
	var b core.Builder
	x := mustVar(t, "x", coretest.F64(3))
	h := mustVar(t, "h", coretest.F64(3))
	// A good term first, then a let bound to a node of the wrong shape: nothing may be added.
	body := b.Let(h, b.Unary(core.OpExp, x), b.Tuple(b.Mul(x, x), b.Add(h, x)))
	p, err := core.NewProgram([]*core.Var{x}, body)
	if err != nil || b.Err() != nil {
		t.Fatal(err, b.Err())
	}
	g := gorgonia.NewGraph()
	xn := input(t, g, "x", []int{3}, []float64{1, 2, 3})
	bad := input(t, g, "bad", []int{2}, []float64{1, 2})
	before := len(g.AllNodes())
	if _, err := Raise(g, p, map[string]*gorgonia.Node{"x": xn, "h": bad}); err == nil || !strings.Contains(err.Error(), "binding h") {
		t.Errorf("Raise: err = %v, want an error naming the binding of h", err)
	}
	if n := len(g.AllNodes()); n != before {
		t.Errorf("graph grew from %d to %d nodes on error", before, n)
	}
	// Unbound parameter, wrong-type binding, node from another graph.
	other := gorgonia.NewGraph()
	on := input(t, other, "x", []int{3}, []float64{1, 2, 3})
	wrong := input(t, g, "w", []int{4}, []float64{1, 2, 3, 4})
	q, _ := core.NewProgram([]*core.Var{x}, b.Mul(x, x))
	for _, bind := range []map[string]*gorgonia.Node{{}, {"x": wrong}, {"x": on}} {
		before = len(g.AllNodes())
		if _, err := Raise(g, q, bind); err == nil {
			t.Errorf("Raise with bindings %v: no error", bind)
		}
		if n := len(g.AllNodes()); n != before {
			t.Errorf("graph grew from %d to %d nodes on error", before, n)
		}
	}
}

// Ops that differ only in their index function must not be deduplicated.
func TestHashDistinguishesIndexFunctions(t *testing.T) {
	var b core.Builder
	x := mustVar(t, "x", coretest.F64(4))
	i := mustVar(t, "i", core.Scalar(core.Int64))
	g1 := b.Gather(core.Shape{4}, x, b.IndexFn([]*core.Var{i}, b.Sub(core.ScalarI(3), i)))
	g2 := b.Gather(core.Shape{4}, x, b.IndexFn([]*core.Var{i}, b.Add(i, core.ScalarI(1))))
	p, err := core.NewProgram([]*core.Var{x}, b.Tuple(g1, g2))
	if err != nil || b.Err() != nil {
		t.Fatal(err, b.Err())
	}
	g := gorgonia.NewGraph()
	xn := input(t, g, "x", []int{4}, []float64{1, 2, 3, 4})
	res := run(t, g, p, map[string]*gorgonia.Node{"x": xn})
	if res[0] == res[1] {
		t.Fatal("two different gathers were deduplicated into one node")
	}
	if got := values(t, res[0]).([]float64); !closeTo(got, []float64{4, 3, 2, 1}, 0) {
		t.Errorf("reverse gather = %v", got)
	}
	if got := values(t, res[1]).([]float64); !closeTo(got, []float64{2, 3, 4, 0}, 0) {
		t.Errorf("shift gather = %v (out of bounds must read 0)", got)
	}
}

// A tensor literal feeding Gorgonia's in-place arithmetic must survive repeated runs.
func TestLiteralSurvivesRuns(t *testing.T) {
	x := mustVar(t, "x", coretest.F64(3))
	lit, err := core.NewLitF(coretest.F64(3), []float64{1, 2, 3})
	if err != nil {
		t.Fatal(err)
	}
	var b core.Builder
	body := b.Mul(b.Add(lit, x), x)
	p, err := core.NewProgram([]*core.Var{x}, body)
	if err != nil || b.Err() != nil {
		t.Fatal(err, b.Err())
	}
	g := gorgonia.NewGraph()
	xn := input(t, g, "x", []int{3}, []float64{1, 1, 2})
	res, err := Raise(g, p, map[string]*gorgonia.Node{"x": xn})
	if err != nil {
		t.Fatal(err)
	}
	runMachine(t, g, p, 3, func(run int) {
		if got := values(t, res[0]).([]float64); !closeTo(got, []float64{2, 3, 10}, 0) {
			t.Fatalf("run %d: got %v, want [2 3 10]", run, got)
		}
	})
}

// Window gathers and scatters (affine index functions, provably in bounds) take the strided
// fast path; shifted ones (not provably in bounds) the general path. Both against naive loops.
func TestAffineGatherScatter(t *testing.T) {
	r := rand.New(rand.NewSource(3))
	var b core.Builder
	x := mustVar(t, "x", coretest.F64(6, 6, 2))
	y := mustVar(t, "y", coretest.F64(2, 2, 3, 3, 2))
	v := mustVar(t, "v", coretest.F64(5))
	a, c := mustVar(t, "a", core.Scalar(core.Int64)), mustVar(t, "c", core.Scalar(core.Int64))
	i, j := mustVar(t, "i", core.Scalar(core.Int64)), mustVar(t, "j", core.Scalar(core.Int64))
	two := core.ScalarI(2)
	win := func() *core.IndexFn {
		return b.IndexFn([]*core.Var{a, c, i, j}, b.Add(b.Mul(two, i), a), b.Add(b.Mul(two, j), c))
	}
	g := b.Gather(core.Shape{2, 2, 3, 3, 2}, x, win())
	s := b.Scatter(core.Shape{6, 6, 2}, y, win())
	shift := b.Gather(core.Shape{5}, v, b.IndexFn([]*core.Var{i}, b.Sub(i, core.ScalarI(1))))
	p, err := core.NewProgram([]*core.Var{x, y, v}, b.Tuple(g, s, shift))
	if err != nil || b.Err() != nil {
		t.Fatal(err, b.Err())
	}
	gr := gorgonia.NewGraph()
	xd, yd, vd := randF(r, 72), randF(r, 72), randF(r, 5)
	res := run(t, gr, p, map[string]*gorgonia.Node{
		"x": input(t, gr, "x", []int{6, 6, 2}, xd), "y": input(t, gr, "y", []int{2, 2, 3, 3, 2}, yd), "v": input(t, gr, "v", []int{5}, vd)})
	for _, n := range res[:2] {
		op := n.Op().(*Op)
		switch k := op.k.(type) {
		case *kern.Gather:
			if !k.Affine {
				t.Errorf("window gather did not take the affine path")
			}
		case *kern.Scatter:
			if !k.Affine {
				t.Errorf("window scatter did not take the affine path")
			}
		}
	}
	if k := res[2].Op().(*Op).k.(*kern.Gather); k.Affine {
		t.Errorf("shifted gather (reads index -1) took the affine path")
	}
	wantG := make([]float64, 72)
	wantS := make([]float64, 72)
	for aa := 0; aa < 2; aa++ {
		for cc := 0; cc < 2; cc++ {
			for ii := 0; ii < 3; ii++ {
				for jj := 0; jj < 3; jj++ {
					for e := 0; e < 2; e++ {
						dom := (((aa*2+cc)*3+ii)*3+jj)*2 + e
						src := ((2*ii+aa)*6+(2*jj+cc))*2 + e
						wantG[dom] = xd[src]
						wantS[src] += yd[dom]
					}
				}
			}
		}
	}
	wantShift := []float64{0, vd[0], vd[1], vd[2], vd[3]}
	for k, want := range [][]float64{wantG, wantS, wantShift} {
		if got := values(t, res[k]).([]float64); !closeTo(got, want, 1e-14) {
			t.Errorf("result %d:\n got %v\nwant %v", k, got, want)
		}
	}
}

// build1 (not vectorised) runs through package core's evaluator as one custom op.
func TestBuild1Fallback(t *testing.T) {
	var b core.Builder
	x := mustVar(t, "x", coretest.F64(3))
	i := mustVar(t, "i", core.Scalar(core.Int64))
	body := b.Build1(3, i, b.Mul(b.Index(x, i), b.Cast(core.Float64, i)))
	p, err := core.NewProgram([]*core.Var{x}, body)
	if err != nil || b.Err() != nil {
		t.Fatal(err, b.Err())
	}
	g := gorgonia.NewGraph()
	res := run(t, g, p, map[string]*gorgonia.Node{"x": input(t, g, "x", []int{3}, []float64{1.5, 2, -3})})
	if got := values(t, res[0]).([]float64); !closeTo(got, []float64{0, 2, -6}, 0) {
		t.Errorf("build1 = %v, want [0 2 -6]", got)
	}
}

// Gorgonia deduplicates nodes by a 32-bit hash without comparing children: in a long chain of
// identical steps the hashes eventually repeat and Gorgonia would return an earlier node (a
// chain like this one collided near step 8250 before raise salted colliding ops). Every step must
// get its own node.
func TestLongChainNoHashCollision(t *testing.T) {
	if testing.Short() {
		t.Skip("long chain")
	}
	const n = 9000
	x := mustVar(t, "x", coretest.F64(4, 4))
	w := mustVar(t, "w", coretest.F64(4, 4))
	cur := core.Term(x)
	var b core.Builder
	vars := make([]*core.Var, n)
	bounds := make([]core.Term, n)
	for i := 0; i < n; i++ {
		vars[i] = mustVar(t, "h"+strconv.Itoa(i), coretest.F64(4, 4))
		bounds[i] = b.Unary(core.OpTanh, b.MatMul(cur, w)) // a custom and a native op per step
		cur = vars[i]
	}
	body := core.Term(cur)
	for i := n - 1; i >= 0; i-- {
		l, err := core.NewLet(vars[i], bounds[i], body)
		if err != nil {
			t.Fatal(err)
		}
		body = l
	}
	if b.Err() != nil {
		t.Fatal(b.Err())
	}
	p := &core.Program{Params: []*core.Var{x, w}, Body: body}
	g := gorgonia.NewGraph()
	bind := map[string]*gorgonia.Node{
		"x": input(t, g, "x", []int{4, 4}, make([]float64, 16)), "w": input(t, g, "w", []int{4, 4}, make([]float64, 16))}
	if _, err := Raise(g, p, bind); err != nil {
		t.Fatal(err)
	}
	if got, want := len(g.AllNodes()), 2*n+2; got != want {
		t.Errorf("graph has %d nodes, want %d (two per step and the inputs)", got, want)
	}
}

// argmaxOuter: first maximum on ties, NaN never the maximum unless a column is all NaN (0).
func TestArgmaxTiesAndNaN(t *testing.T) {
	nan := math.NaN()
	x := mustVar(t, "x", coretest.F64(3, 4))
	var b core.Builder
	p, err := core.NewProgram([]*core.Var{x}, b.Tuple(b.ArgmaxOuter(x), b.ArgmaxOuter(b.Transpose([]int{1, 0}, x))))
	if err != nil || b.Err() != nil {
		t.Fatal(err, b.Err())
	}
	g := gorgonia.NewGraph()
	data := []float64{
		nan, 2, nan, 1,
		5, 2, nan, 0,
		5, 1, nan, 3,
	}
	res := run(t, g, p, map[string]*gorgonia.Node{"x": input(t, g, "x", []int{3, 4}, data)})
	for k, want := range [][]int64{{1, 0, 0, 2}, {1, 0, 0}} {
		got := values(t, res[k]).([]int64)
		for i := range want {
			if got[i] != want[i] {
				t.Errorf("result %d: argmax = %v, want %v", k, got, want)
				break
			}
		}
	}
}

// When Gorgonia answers a native constructor with an existing node built on other children
// (a hash collision, or a stabilising rewrite such as neg (neg x) = x meeting an existing
// node), the step is rebuilt as a checked custom op; values stay exact.
func TestNativeUnrelatedNodeFallback(t *testing.T) {
	x := mustVar(t, "x", coretest.F64(3))
	var b core.Builder
	p, err := core.NewProgram([]*core.Var{x}, b.Tuple(b.Unary(core.OpNeg, b.Unary(core.OpNeg, x))))
	if err != nil || b.Err() != nil {
		t.Fatal(err, b.Err())
	}
	g := gorgonia.NewGraph()
	xn := input(t, g, "x", []int{3}, []float64{1, -2, 3})
	res := run(t, g, p, map[string]*gorgonia.Node{"x": xn})
	if got := values(t, res[0]).([]float64); !closeTo(got, []float64{1, -2, 3}, 0) {
		t.Errorf("neg (neg x) = %v", got)
	}
	fallbacks := 0
	for _, n := range g.AllNodes() {
		if o, ok := n.Op().(*Op); ok && o.Kind() == "fallback" {
			fallbacks++
		}
	}
	t.Logf("raised neg (neg x): result node %v, %d fallback ops", res[0], fallbacks)
	if res[0] == xn && fallbacks == 0 {
		t.Errorf("the result is the input node itself but no fallback op was built")
	}
}
