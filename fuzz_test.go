package bulkad_test

import (
	"fmt"
	"math"
	"math/rand"
	"strings"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/bulkad/bulkad"
	"github.com/bulkad/bulkad/core"
	"github.com/bulkad/bulkad/core/tensors"
	"github.com/bulkad/bulkad/examples/opgraphs"
	"github.com/bulkad/bulkad/gradcheck"
	"github.com/bulkad/bulkad/lower"
)

// fuzzReader hands out the fuzzer's bytes as small choices (0 once the input is exhausted).
type fuzzReader struct {
	b []byte
	i int
}

func (r *fuzzReader) pick(n int) int {
	if r.i >= len(r.b) {
		return 0
	}
	v := int(r.b[r.i]) % n
	r.i++
	return v
}

// fuzzGraph is a random Gorgonia graph built from fuzz input: inputs with random shapes and
// values, then a chain of operations from the adapter's op table (element-wise, broadcasting,
// matrix products, reductions, slices, reshapes, transposes, softmax), a scalar cost and a
// random set of wrt nodes (inputs, sometimes an intermediate node).
type fuzzGraph struct {
	g    *G.ExprGraph
	cost *G.Node
	wrt  G.Nodes
	desc []string
	// views is set when the graph takes a Reshape or Slice: Gorgonia v0.9.18 may then run a
	// later op in place on the view and overwrite the viewed node's value (see
	// TestGorgoniaReshapeInPlace), so its forward values are not a reference.
	views bool
	// kinks are the inputs of the shifted ReLUs: the generator's algebra can land one exactly
	// on 0 (relu(z)+c − (x+shift+c−x) + shift = 0 when relu(z) = 0), where differences give the
	// mean of the one-sided slopes.
	kinks G.Nodes
}

func buildFuzzGraph(data []byte) (fg *fuzzGraph, err error) { return buildFuzzGraphDtype(data, false) }

// fuzzBuilder holds what buildFuzzGraphDtype draws from while it builds: the fuzzer's bytes,
// a value generator seeded from them, the graph so far, its dtype, its inputs and the pool of
// nodes an operation may take as operand.
type fuzzBuilder struct {
	r            *fuzzReader
	rng          *rand.Rand
	fg           *fuzzGraph
	dt           tensor.Dtype
	inputs, pool G.Nodes
}

// buildFuzzGraphDtype is buildFuzzGraph, in float64 whatever the input says when force64.
func buildFuzzGraphDtype(data []byte, force64 bool) (fg *fuzzGraph, err error) {
	defer func() { // Gorgonia's constructors panic on some shapes: not bulkad's concern
		if x := recover(); x != nil {
			fg, err = nil, fmt.Errorf("gorgonia panicked while building: %v", x)
		}
	}()
	r := &fuzzReader{b: data}
	dt := tensor.Float64
	if r.pick(2) == 1 && !force64 {
		dt = tensor.Float32
	}
	b := &fuzzBuilder{r: r, rng: rand.New(rand.NewSource(int64(r.pick(256)))), dt: dt}
	b.fg = &fuzzGraph{g: G.NewGraph(), desc: []string{dt.String()}}
	for k := 1 + r.pick(3); k > 0; k-- {
		n := b.newInput(b.dims())
		b.inputs = append(b.inputs, n)
		b.pool = append(b.pool, n)
	}
	var intermediate *G.Node
	for steps := 1 + r.pick(6); steps > 0; steps-- {
		y, err := b.step()
		if err != nil {
			return nil, err
		}
		b.pool = append(b.pool, y)
		if intermediate == nil && r.pick(8) == 0 {
			intermediate = y
		}
	}
	return b.finish(intermediate)
}

// dims draws a shape of rank 0 to 2 with extents 1 to 4.
func (b *fuzzBuilder) dims() []int {
	sh := make([]int, b.r.pick(3))
	for i := range sh {
		sh[i] = 1 + b.r.pick(4)
	}
	return sh
}

// newInput adds an input of shape sh (a scalar when sh is empty) with values drawn uniformly
// from [−1.5, 1.5).
func (b *fuzzBuilder) newInput(sh []int) *G.Node {
	fg, dt := b.fg, b.dt
	name := fmt.Sprintf("x%d", len(fg.g.AllNodes()))
	vals := make([]float64, 1)
	if len(sh) > 0 {
		vals = make([]float64, tensor.Shape(sh).TotalSize())
	}
	for i := range vals {
		vals[i] = -1.5 + 3*b.rng.Float64()
	}
	if len(sh) == 0 {
		var v G.Value = G.NewF64(vals[0])
		if dt == tensor.Float32 {
			v = G.NewF32(float32(vals[0]))
		}
		fg.desc = append(fg.desc, fmt.Sprintf("%s:[]", name))
		return G.NewScalar(fg.g, dt, G.WithName(name), G.WithValue(v))
	}
	var back interface{} = vals
	if dt == tensor.Float32 {
		f := make([]float32, len(vals))
		for i, x := range vals {
			f[i] = float32(x)
		}
		back = f
	}
	v := tensor.New(tensor.WithShape(sh...), tensor.WithBacking(back))
	fg.desc = append(fg.desc, fmt.Sprintf("%s:%v", name, sh))
	return G.NewTensor(fg.g, dt, len(sh), G.WithShape(sh...), G.WithName(name), G.WithValue(v))
}

// positive is n² + 1, an operand for log, sqrt and division.
func (b *fuzzBuilder) positive(n *G.Node) (*G.Node, error) {
	sq, err := G.Square(n)
	if err != nil {
		return nil, err
	}
	if b.dt == tensor.Float32 {
		return G.Add(sq, G.NewConstant(float32(1)))
	}
	return G.Add(sq, G.NewConstant(1.0))
}

// anyNode draws a node of the pool.
func (b *fuzzBuilder) anyNode() *G.Node { return b.pool[b.r.pick(len(b.pool))] }

// sameShape returns a node of n's shape: one from the pool, or a fresh input.
func (b *fuzzBuilder) sameShape(n *G.Node) *G.Node {
	for k := 0; k < 3; k++ {
		c := b.anyNode()
		if c.Shape().Eq(n.Shape()) && c.Dims() == n.Dims() {
			return c
		}
	}
	return b.newInput(append([]int(nil), n.Shape()...))
}

// isView reports whether op takes a Reshape or Slice (or a Transpose, for op 15).
func isView(op int) bool { return op == 15 || op == 16 || op == 18 }

// step draws an operand (the last node or any node of the pool) and one of 20 operations,
// and applies it.
func (b *fuzzBuilder) step() (*G.Node, error) {
	x := b.anyNode()
	if b.r.pick(2) == 0 {
		x = b.pool[len(b.pool)-1]
	}
	var err error
	op := b.r.pick(20)
	if isView(op) && isInput(b.inputs, x) {
		// Gorgonia v0.9.18 bug: Reshape and Slice of an input are views of its value, and a
		// later op of the TapeMachine may work in place on the view, overwriting the input
		// (gorgonia.Grad's own graph shows it: after one run x holds ∂cost/∂x). Views are
		// taken of computed nodes only, so the graph's value is the same on every run.
		if x, err = G.Tanh(x); err != nil {
			return nil, err
		}
	}
	var y *G.Node
	if op <= 10 {
		y, err = b.elementwise(op, x)
	} else {
		y, err = b.structural(op, x)
	}
	if err != nil {
		return nil, fmt.Errorf("gorgonia refused op %d on %v: %v", op, x.Shape(), err)
	}
	if isView(op) {
		b.fg.views = true
	}
	b.fg.desc = append(b.fg.desc, fmt.Sprintf("op%d%v", op, y.Shape()))
	return y, nil
}

// elementwise applies operation op (0 to 10: unary functions, and binary ones against a node
// of x's shape) to x.
func (b *fuzzBuilder) elementwise(op int, x *G.Node) (*G.Node, error) {
	type fn = func(*G.Node) (*G.Node, error)
	// 0–6: f(pre(x)), pre (when given) mapping x into f's domain
	unary := []struct{ pre, f fn }{
		{nil, G.Tanh}, {nil, G.Sigmoid}, {G.Tanh, G.Exp}, {b.positive, G.Log}, {b.positive, G.Sqrt},
		{nil, G.Square}, {nil, G.Neg},
	}
	// 7–10: f(x, pre(y)) with y a fresh node of x's shape
	binary := []struct {
		pre fn
		f   func(x, y *G.Node) (*G.Node, error)
	}{{nil, G.Add}, {nil, G.Sub}, {nil, G.HadamardProd}, {b.positive, G.HadamardDiv}}
	var err error
	if op < len(unary) {
		u := unary[op]
		if u.pre != nil {
			if x, err = u.pre(x); err != nil {
				return nil, err
			}
		}
		return u.f(x)
	}
	bi := binary[min(op-len(unary), len(binary)-1)]
	y := b.sameShape(x)
	if bi.pre != nil {
		if y, err = bi.pre(y); err != nil {
			return nil, err
		}
	}
	return bi.f(x, y)
}

// structural applies operation op (11 to 19: products, broadcasting, reductions, views,
// softmax, concatenation; each falls back to an element-wise op where x's rank does not
// fit) to x.
func (b *fuzzBuilder) structural(op int, x *G.Node) (*G.Node, error) {
	r := b.r
	switch op {
	case 11: // matrix product with a fresh right operand
		switch x.Dims() {
		case 2:
			w := b.newInput([]int{x.Shape()[1], 1 + r.pick(4)})
			if r.pick(2) == 0 {
				w = b.newInput([]int{x.Shape()[1]})
			}
			return G.Mul(x, w)
		case 1:
			return G.Mul(x, b.sameShape(x)) // inner product
		default:
			return G.Mul(x, b.newInput(nil))
		}
	case 12: // broadcasting against a vector along the last axis
		if x.Dims() != 2 {
			return G.Cube(x)
		}
		v := b.newInput([]int{x.Shape()[1]})
		switch r.pick(3) {
		case 0:
			return G.BroadcastAdd(x, v, nil, []byte{0})
		case 1:
			return G.BroadcastHadamardProd(x, v, nil, []byte{0})
		default:
			return G.BroadcastSub(v, x, []byte{0}, nil)
		}
	case 13:
		if x.Dims() >= 1 {
			return G.Sum(x, r.pick(x.Dims()))
		}
		return G.Mul(x, x)
	case 14:
		return G.Mean(x)
	case 15:
		if x.Dims() == 2 {
			return G.Transpose(x)
		} else if x.Dims() == 1 && x.Shape()[0] > 2 {
			// at least two elements: Gorgonia v0.9.18 turns a one-element slice into a
			// scalar value that its own later ops (Sum, Add) reject or panic on
			lo := r.pick(x.Shape()[0] - 2)
			return G.Slice(x, G.S(lo, x.Shape()[0]))
		}
		return G.Sigmoid(x)
	case 16:
		if x.Dims() == 2 && x.Shape()[0] > 1 && x.Shape()[1] > 1 {
			return G.Slice(x, G.S(r.pick(x.Shape()[0])))
		} else if x.Dims() >= 1 {
			return G.Reshape(x, tensor.Shape{x.Shape().TotalSize(), 1})
		}
		return G.Tanh(x)
	case 17:
		if x.Dims() == 2 {
			return G.SoftMax(x)
		}
		y, pre, err := shiftedReLU(x)
		if err == nil {
			b.fg.kinks = append(b.fg.kinks, pre)
		}
		return y, err
	case 18:
		if x.Dims() >= 1 && x.Shape().TotalSize() > 1 {
			return G.Reshape(x, tensor.Shape{x.Shape().TotalSize()})
		}
		return G.Square(x)
	default:
		if x.Dims() >= 1 {
			return G.Concat(0, x, b.sameShape(x))
		}
		return G.Add(x, x)
	}
}

// finish sums the last node into a scalar cost and draws the wrt nodes: each input with
// probability 2/3, and the intermediate node when there is one.
func (b *fuzzBuilder) finish(intermediate *G.Node) (*fuzzGraph, error) {
	fg := b.fg
	out := b.pool[len(b.pool)-1]
	if out.Dims() > 0 || !out.IsScalar() {
		var err error
		if out, err = G.Sum(out); err != nil {
			return nil, err
		}
	}
	fg.cost = out
	for _, in := range b.inputs {
		if b.r.pick(3) != 0 {
			fg.wrt = append(fg.wrt, in)
		}
	}
	// Gorgonia may return an existing node for a new op (Neg(Neg(x)) is x), so the
	// intermediate can be an input already in wrt: a repeated wrt node gets the full gradient
	// for each copy (TestCheckRepeatedWrt).
	if intermediate != nil && intermediate != fg.cost {
		fg.wrt = append(fg.wrt, intermediate)
	}
	if len(fg.wrt) == 0 {
		fg.wrt = G.Nodes{b.inputs[0]}
	}
	return fg, nil
}

// shiftedReLU is relu(x + 0.0123) + 0.01: a ReLU whose kink is not at 0 and whose output is
// never 0, so that no value the fuzzer makes lands exactly on a kink (x − x is exactly 0, and
// relu(0) is 0), where finite differences give the mean of the one-sided slopes and any
// subgradient is a right answer.
// It also returns the ReLU's input (the node whose sign decides the slope).
func shiftedReLU(x *G.Node) (*G.Node, *G.Node, error) {
	c := func(v float64) *G.Node {
		if x.Dtype() == tensor.Float32 {
			return G.NewConstant(float32(v))
		}
		return G.NewConstant(v)
	}
	pre, err := G.Add(x, c(0.0123))
	if err != nil {
		return nil, nil, err
	}
	s, err := G.Rectify(pre)
	if err != nil {
		return nil, nil, err
	}
	y, err := G.Add(s, c(0.01))
	return y, pre, err
}

func isInput(inputs G.Nodes, n *G.Node) bool {
	for _, in := range inputs {
		if in == n {
			return true
		}
	}
	return false
}

// FuzzGrad builds a random Gorgonia graph from its input and requires bulkad to either
// refuse it with a clear error or give a gradient that Check accepts (bulkad's artifact and
// its raised nodes on a TapeMachine against central finite differences in float64).
//
//	go test -run XXX -fuzz FuzzGrad -fuzztime 10m .
func FuzzGrad(f *testing.F) {
	seeds := [][]byte{
		{0, 1, 2, 2, 3, 4, 7, 9, 11, 12, 3},
		{1, 5, 1, 2, 3, 2, 0, 11, 0, 12, 0, 17},
		{0, 9, 2, 1, 2, 2, 3, 3, 0, 15, 0, 16, 0, 13},
		{1, 77, 3, 2, 4, 4, 1, 3, 2, 1, 0, 10, 1, 19, 0, 14},
		{0, 3, 1, 1, 3, 5, 0, 2, 1, 4, 0, 18, 1, 6, 1, 8},
	}
	for _, s := range seeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		fg, err := buildFuzzGraph(data)
		if err != nil {
			return // Gorgonia itself refused the graph
		}
		rep, err := gradcheck.Check(fg.cost, fg.wrt, gradcheck.WithGorgonia(false), gradcheck.WithMaxProbes(6))
		if err != nil {
			if !strings.HasPrefix(err.Error(), "bulkad: ") {
				t.Fatalf("graph %v: unclear error %q", fg.desc, err)
			}
			return
		}
		if rep.BulkadError != "" {
			if !strings.HasPrefix(rep.BulkadError, "bulkad: ") && !strings.Contains(rep.BulkadError, ": ") {
				t.Fatalf("graph %v: unclear error %q", fg.desc, rep.BulkadError)
			}
			if strings.Contains(rep.BulkadError, "internal error") || strings.Contains(rep.BulkadError, "panic") {
				t.Fatalf("graph %v: %s", fg.desc, rep.BulkadError)
			}
			return
		}
		if fg.views && rep.ForwardMismatch > 1e-6 {
			return // Gorgonia's forward values were overwritten in place (its bug, not ours)
		}
		if !rep.OK() && math.IsNaN(rep.ForwardMismatch) && (math.IsNaN(rep.Value) || math.IsInf(rep.Value, 0)) {
			// Gorgonia's forward pass is not finite where bulkad's translation is: its SoftMax
			// shifts every row by the first row's maximum (TestGorgoniaSoftmaxShift), so a row
			// of large values overflows; the gradient nodes read that forward value.
			return
		}
		if !rep.OK() && rep.Value != 0 {
			// Central differences of a cost of size |f| carry a rounding error of about
			// ε·|f|/h (2e-10·|f| at h = 1e-6); chains such as cube(cube(x²)) make costs of
			// 10⁶ and more, so the absolute tolerance grows with the cost.
			atol := rep.Atol + 1e-8*math.Abs(rep.Value)
			if rep2, err := gradcheck.Check(fg.cost, fg.wrt, gradcheck.WithGorgonia(false), gradcheck.WithMaxProbes(6), gradcheck.WithTolerance(atol, rep.Rtol)); err == nil && rep2.OK() {
				return
			}
		}
		if !rep.OK() && rep.Dtype == "float32" && math.Abs(rep.Value) > 1e30 {
			// float32 range: a cost of 2e37 has gradients beyond float32's largest value (3.4e38),
			// which are +Inf in float32 and finite in the float64 differences.
			return
		}
		if !rep.OK() && rep.Dtype == "float32" && f32RoundOff(rep) {
			// float32 gradients carry round-off relative to the magnitudes inside the program,
			// not to each entry: an entry near 0 of a cost of 2427 can be off by 1.6e-3 absolute
			// while the error relative to the gradient's scale is 1.4e-6.
			return
		}
		if !rep.OK() && atKink(fg) {
			return
		}
		if !rep.OK() && rep.Dtype == "float32" {
			// float32 conditioning: the same graph in float64, differentiated by the same
			// (dtype-generic) program, decides whether the gradient or float32 is at fault (a
			// cost of 5031 whose float32 gradient has 2.7e-3 relative error, 1.9e-7 in float64).
			if fg64, err := buildFuzzGraphDtype(data, true); err == nil {
				if rep64, err := gradcheck.Check(fg64.cost, fg64.wrt, gradcheck.WithGorgonia(false), gradcheck.WithMaxProbes(6)); err == nil && rep64.OK() {
					return
				}
			}
		}
		if !rep.OK() {
			t.Fatalf("graph %v: gradient rejected by Check:\n%s", fg.desc, rep.String())
		}
	})
}

// atKink reports whether a shifted ReLU's input is within 1e-5 of its kink at the graph's
// point (a forward run on a clone).
func atKink(fg *fuzzGraph) bool {
	if len(fg.kinks) == 0 {
		return false
	}
	g2 := fg.g.Clone().(*G.ExprGraph)
	all := g2.AllNodes()
	pos := map[*G.Node]int{}
	for i, n := range fg.g.AllNodes() {
		pos[n] = i
	}
	vals := make([]G.Value, len(fg.kinks))
	for k, n := range fg.kinks {
		G.Read(all[pos[n]], &vals[k])
	}
	m := G.NewTapeMachine(g2)
	defer m.Close()
	if err := m.RunAll(); err != nil {
		return false
	}
	for _, v := range vals {
		if v == nil {
			continue
		}
		for _, x := range opgraphs.Floats(v) {
			if math.Abs(x) < 1e-5 {
				return true
			}
		}
	}
	return false
}

// f32RoundOff reports whether a float32 report fails only by round-off: no error besides the
// comparisons, and every comparison within 1e-4 relative to the node's gradient scale.
func f32RoundOff(rep *gradcheck.Report) bool {
	if rep.BulkadError != "" || rep.RaisedError != "" || len(rep.Nodes) == 0 {
		return false
	}
	for _, n := range rep.Nodes {
		for _, s := range []*gradcheck.ErrStat{&n.BulkadVsFD, n.RaisedVsFD, n.RaisedVsArtifact} {
			if s != nil && !s.OK && !(s.MaxRel <= 1e-4) {
				return false
			}
		}
		if n.RaisedVsFD == nil && n.RaisedVsArtifact == nil {
			return false
		}
	}
	return true
}

// TestGorgoniaReshapeInPlace records a Gorgonia v0.9.18 bug the graph fuzzer met: for
// cost = Σ (reshape(tanh x) − y)², Gorgonia's TapeMachine runs the subtraction in place on the
// reshape view and so overwrites the value of tanh x, which gorgonia.Grad's backward pass then
// reads: its gradient is wrong (and tanh x's value after the run is not tanh x). bulkad.Grad
// gives the hand-derived gradient 2(tanh x − y)(1 − tanh² x), and tanh x keeps its value.
func TestGorgoniaReshapeInPlace(t *testing.T) {
	xv := []float64{0.3, -0.7, 0.5}
	want := make([]float64, 3)
	for i, v := range xv {
		th := math.Tanh(v)
		want[i] = 2 * (th - float64(i+1)) * (1 - th*th)
	}
	for _, c := range []struct {
		name      string
		grad      func(*G.Node, ...*G.Node) (G.Nodes, error)
		wantRight bool
	}{{"gorgonia.Grad", G.Grad, false}, {"bulkad.Grad", bulkad.Grad, true}} {
		g := G.NewGraph()
		x := G.NewTensor(g, tensor.Float64, 1, G.WithShape(3), G.WithName("x"), G.WithValue(tensor.New(tensor.WithShape(3), tensor.WithBacking(append([]float64(nil), xv...)))))
		y := G.NewTensor(g, tensor.Float64, 2, G.WithShape(3, 1), G.WithName("y"), G.WithValue(tensor.New(tensor.WithShape(3, 1), tensor.WithBacking([]float64{1, 2, 3}))))
		th := G.Must(G.Tanh(x))
		d := G.Must(G.Sub(G.Must(G.Reshape(th, tensor.Shape{3, 1})), y))
		cost := G.Must(G.Sum(G.Must(G.HadamardProd(d, d))))
		if _, err := c.grad(cost, x); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		vm := G.NewTapeMachine(g, G.BindDualValues(x))
		if err := vm.RunAll(); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		gv, err := x.Grad()
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		got := gv.Data().([]float64)
		right := true
		for i := range want {
			if math.Abs(got[i]-want[i]) > 1e-12*(1+math.Abs(want[i])) {
				right = false
			}
		}
		if right != c.wantRight {
			t.Errorf("%s: gradient %v, hand derivation %v (expected it to be right: %v)", c.name, got, want, c.wantRight)
		}
		vm.Close()
	}
}

// TestGorgoniaSoftmaxShift records a Gorgonia bug (gorgonia.org/tensor v0.9.24,
// StdEng.softMaxLastDim) the graph fuzzer met: the stabilising shift of each row is the
// maximum of element 0 of the *first* row and elements 1… of the row, so a row whose first
// element is large overflows: SoftMax([[0, 0], [1000, 0]]) gives NaN in the second row, where
// the exact value is [1, e⁻¹⁰⁰⁰ ≈ 0]. bulkad's lowering (and its gradient) shifts by the row's
// own maximum.
func TestGorgoniaSoftmaxShift(t *testing.T) {
	g := G.NewGraph()
	x := G.NewMatrix(g, tensor.Float64, G.WithShape(2, 2), G.WithName("x"),
		G.WithValue(tensor.New(tensor.WithShape(2, 2), tensor.WithBacking([]float64{0, 0, 1000, 0}))))
	sm := G.Must(G.SoftMax(x))
	runGraph(t, g)
	got := sm.Value().Data().([]float64)
	if got[0] != 0.5 || got[1] != 0.5 || !math.IsNaN(got[2]) {
		t.Errorf("Gorgonia's SoftMax = %v: the bug is fixed or has changed (want 0.5, 0.5, NaN, …)", got)
	}
	xv, err := core.NewVar("x", core.Type{Shape: core.Shape{2, 2}, Dtype: core.Float64})
	if err != nil {
		t.Fatal(err)
	}
	body, err := lower.Softmax(xv, 1)
	if err != nil {
		t.Fatal(err)
	}
	p, err := core.NewProgram([]*core.Var{xv}, body)
	if err != nil {
		t.Fatal(err)
	}
	r, err := tensors.Eval(p, map[string]*tensor.Dense{"x": x.Value().(*tensor.Dense)})
	if err != nil {
		t.Fatal(err)
	}
	if mine := r.Float64s(); mine[0] != 0.5 || mine[1] != 0.5 || mine[2] != 1 || mine[3] != 0 {
		t.Errorf("bulkad's softmax = %v, want [0.5 0.5 1 0] (e^-1000 underflows to 0)", mine)
	}
}

// TestCheckRepeatedWrt: found by FuzzGrad. bulkad.Grad(cost, x, x) gives each copy the full
// gradient (here 2x for cost = Σx²), and gradcheck.Check(cost, {x, x}) must accept both copies
// (its finite differences once reset the first copy's perturbation with the second copy's
// unperturbed value, so the first copy was reported WRONG).
func TestCheckRepeatedWrt(t *testing.T) {
	g := G.NewGraph()
	x := vec64(g, "x", 1, 2)
	cost := G.Must(G.Sum(G.Must(G.Square(x))))
	grads, err := bulkad.Grad(cost, x, x)
	if err != nil {
		t.Fatal(err)
	}
	runGraph(t, g)
	for k, gn := range grads {
		got := gn.Value().Data().([]float64)
		if got[0] != 2 || got[1] != 4 { // 2x by hand
			t.Errorf("gradient %d = %v, want [2 4]", k, got)
		}
	}
	rep, err := gradcheck.Check(cost, G.Nodes{x, x}, gradcheck.WithGorgonia(false))
	if err != nil {
		t.Fatal(err)
	}
	if !rep.OK() || len(rep.Nodes) != 2 {
		t.Errorf("Check with a repeated wrt node: want two ok rows, got:\n%s", rep)
	}
}
