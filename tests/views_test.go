package tests

import (
	"fmt"
	"math/rand"
	"strings"
	"testing"

	"github.com/bulkad/bulkad"

	"github.com/bulkad/bulkad/examples/opgraphs"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// flatWeightedSum is Σ Reshape(x) ⊙ r, x flattened to r's length: the reshape is a view of x
// on which the ⊙ may run in place.
func flatWeightedSum(x, r *G.Node) (*G.Node, error) {
	v, err := G.Reshape(x, tensor.Shape{r.Shape().TotalSize()})
	if err != nil {
		return nil, err
	}
	p, err := G.HadamardProd(v, r)
	if err != nil {
		return nil, err
	}
	return G.Sum(p)
}

// randInput makes a float64 input node with values uniform in [lo, hi].
func randInput(g *G.ExprGraph, rng *rand.Rand, name string, lo, hi float64, shape ...int) *G.Node {
	n := 1
	for _, k := range shape {
		n *= k
	}
	vals := make([]float64, n)
	for i := range vals {
		vals[i] = lo + (hi-lo)*rng.Float64()
	}
	return G.NewTensor(g, tensor.Float64, len(shape), G.WithShape(shape...), G.WithName(name),
		G.WithValue(tensor.New(tensor.WithShape(shape...), tensor.WithBacking(vals))))
}

// viewCases are the graphs of issue 13 whose raised gradients read forward values that a view
// (Reshape) followed by an in-place operation overwrote.
//
// gorgoniaWrong marks the flatten case: gorgonia.Grad's own gradient with respect to w is
// overwritten there (it equals the gradient with respect to x), the same aliasing bug in
// Gorgonia's gradient nodes.
func viewCases() []struct {
	name          string
	gorgoniaWrong bool
	build         func(g *G.ExprGraph, rng *rand.Rand) (*G.Node, G.Nodes, error)
} {
	type c = struct {
		name          string
		gorgoniaWrong bool
		build         func(g *G.ExprGraph, rng *rand.Rand) (*G.Node, G.Nodes, error)
	}
	// weighted builds Σ Reshape(f(a/b)) ⊙ r.
	weighted := func(f func(*G.Node) (*G.Node, error)) func(g *G.ExprGraph, rng *rand.Rand) (*G.Node, G.Nodes, error) {
		return func(g *G.ExprGraph, rng *rand.Rand) (*G.Node, G.Nodes, error) {
			a := randInput(g, rng, "a", -1, 1, 2, 3)
			b := randInput(g, rng, "b", 0.5, 2, 2, 3)
			r := randInput(g, rng, "r", -1, 1, 6)
			q, err := G.HadamardDiv(a, b)
			if err != nil {
				return nil, nil, err
			}
			if q, err = f(q); err != nil {
				return nil, nil, err
			}
			cost, err := flatWeightedSum(q, r)
			return cost, G.Nodes{a, b}, err
		}
	}
	id := func(x *G.Node) (*G.Node, error) { return x, nil }
	sm := func(x *G.Node) (*G.Node, error) { return G.SoftMax(x) }
	return []c{
		{"reshape(a/b)*r", false, weighted(id)},
		{"reshape(tanh(a/b))*r", false, weighted(G.Tanh)},
		{"reshape(softmax(a/b))*r", false, weighted(sm)},
		{"flatten-then-multiply", true, func(g *G.ExprGraph, rng *rand.Rand) (*G.Node, G.Nodes, error) {
			x := randInput(g, rng, "x", -1, 1, 2, 2, 3)
			w := randInput(g, rng, "w", -1, 1, 12)
			s, err := G.Sigmoid(x)
			if err != nil {
				return nil, nil, err
			}
			cost, err := flatWeightedSum(s, w)
			return cost, G.Nodes{x, w}, err
		}},
	}
}

// TestReshapeViewThenInPlace: the graphs of issue 13 pass the acceptance checks (bulkad's
// TapeMachine gradients equal Artifact.Run and match central differences).
func TestReshapeViewThenInPlace(t *testing.T) {
	for _, tc := range viewCases() {
		t.Run(tc.name, func(t *testing.T) {
			mk := func() (built, error) {
				g := G.NewGraph()
				cost, wrt, err := tc.build(g, rand.New(rand.NewSource(7)))
				return built{g: g, cost: cost, wrt: wrt}, err
			}
			checkAll(t, mk, tc.gorgoniaWrong)
		})
	}
}

// A view is an operation whose result Gorgonia may give the memory of its operand (Reshape
// does; Transpose and Slice copy but are the other layout operations a user applies).
type viewOp struct {
	name string
	f    func(*G.Node) (*G.Node, error)
}

func views() []viewOp {
	return []viewOp{
		{"reshape", func(x *G.Node) (*G.Node, error) {
			return G.Reshape(x, tensor.Shape{x.Shape().TotalSize()})
		}},
		{"transpose", func(x *G.Node) (*G.Node, error) {
			if x.Dims() < 2 {
				return nil, nil
			}
			axes := make([]int, x.Dims())
			for i := range axes {
				axes[i] = len(axes) - 1 - i
			}
			return G.Transpose(x, axes...)
		}},
		{"slice", func(x *G.Node) (*G.Node, error) {
			if x.Dims() < 1 || x.Shape()[0] < 2 {
				return nil, nil
			}
			return G.Slice(x, G.S(1, x.Shape()[0]))
		}},
	}
}

// inPlaceOps are operations the TapeMachine runs in place on their first operand when that
// operand is not read afterwards (elemUnaryOp and elemBinOp with a tensor first operand).
func inPlaceOps() []viewOp {
	other := func(x *G.Node, name string, lo, hi float64) *G.Node {
		rng := rand.New(rand.NewSource(int64(x.ID()) + 99))
		return randInput(x.Graph(), rng, name, lo, hi, x.Shape()...)
	}
	bin := func(f func(a, b *G.Node) (*G.Node, error), lo, hi float64) func(*G.Node) (*G.Node, error) {
		return func(x *G.Node) (*G.Node, error) { return f(x, other(x, "c", lo, hi)) }
	}
	return []viewOp{
		{"tanh", G.Tanh},
		{"square", G.Square},
		{"neg", G.Neg},
		{"exp", G.Exp},
		{"+c", bin(G.Add, -1, 1)},
		{"-c", bin(G.Sub, -1, 1)},
		{"⊙c", bin(G.HadamardProd, -1, 1)},
		{"÷c", bin(G.HadamardDiv, 0.5, 2)},
		{"⊙s", func(x *G.Node) (*G.Node, error) {
			s := G.NewScalar(x.Graph(), tensor.Float64, G.WithName("s"), G.WithValue(0.7))
			return G.HadamardProd(x, s)
		}},
	}
}

// TestEveryOpThenViewThenInPlace: every operation of the adapter's table (examples/opgraphs
// and the extra cases), its result through each view and then each in-place operation,
// cost Σ inPlace(view(op(inputs))) ⊙ r: bulkad's gradient nodes, run on a TapeMachine, match
// central differences to 1e-6.
func TestEveryOpThenViewThenInPlace(t *testing.T) {
	type opCase struct {
		name string
		mk   func(then func(*G.Node) (*G.Node, error)) ctor
	}
	var ops []opCase
	for _, c := range opgraphs.Cases() {
		c := c
		ops = append(ops, opCase{c.Name, func(then func(*G.Node) (*G.Node, error)) ctor {
			return func() (built, error) {
				gr, err := c.BuildThen(tensor.Float64, seed, then)
				if err != nil {
					return built{}, err
				}
				return built{g: gr.G, cost: gr.Cost, wrt: gr.Wrt}, nil
			}
		}})
	}
	for _, c := range extraCases() {
		c := c
		ops = append(ops, opCase{c.name, func(then func(*G.Node) (*G.Node, error)) ctor { return extraCtorThen(c, then) }})
	}
	for _, op := range ops {
		op := op
		t.Run(op.name, func(t *testing.T) {
			for _, v := range views() {
				for _, ip := range inPlaceOps() {
					v, ip := v, ip
					skip := false
					then := func(x *G.Node) (*G.Node, error) {
						y, err := v.f(x)
						if err != nil || y == nil {
							skip = y == nil && err == nil
							return x, err
						}
						return ip.f(y)
					}
					mk := op.mk(then)
					b, err := mk()
					if err != nil {
						t.Fatalf("%s→%s: building: %v", v.name, ip.name, err)
					}
					if skip {
						continue
					}
					grads, _, _ := bulkadTape(t, b)
					b2, _ := mk()
					fd, idx := finiteDiff(t, b2, 1e-5, 6)
					if d := maxRelDiff(pick(grads, idx), fd); d > 1e-6 {
						t.Errorf("%s→%s: gradients differ from central differences by %g\n bulkad %v\n fd     %v", v.name, ip.name, d, pick(grads, idx), fd)
					}
				}
			}
		})
	}
}

// keepAlives counts the keepAlive nodes in g (raise's liveness anchors).
func keepAlives(g *G.ExprGraph) int {
	k := 0
	for _, n := range g.AllNodes() {
		if n != nil && n.Op() != nil && strings.HasPrefix(n.Op().String(), "keepAlive(") {
			k++
		}
	}
	return k
}

// TestKeepAliveOnlyWhereNeeded: Grad adds no keepAlive node to a graph without views, one to
// the Reshape case, and a tree of them (at most 64 children each) when 70 views must be kept
// alive, whose gradients still match central differences.
func TestKeepAliveOnlyWhereNeeded(t *testing.T) {
	g := G.NewGraph()
	rng := rand.New(rand.NewSource(5))
	x := randInput(g, rng, "x", -1, 1, 3, 4)
	w := randInput(g, rng, "w", -1, 1, 4, 2)
	cost := G.Must(G.Sum(G.Must(G.Tanh(G.Must(G.Mul(x, w))))))
	if _, err := bulkad.Grad(cost, w); err != nil {
		t.Fatal(err)
	}
	if k := keepAlives(g); k != 0 {
		t.Errorf("Σ tanh(x·w): %d keepAlive nodes, want 0", k)
	}

	g = G.NewGraph()
	c, wrt, err := viewCases()[0].build(g, rand.New(rand.NewSource(7)))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := bulkad.Grad(c, wrt...); err != nil {
		t.Fatal(err)
	}
	if k := keepAlives(g); k != 1 {
		t.Errorf("Σ Reshape(a/b) ⊙ r: %d keepAlive nodes, want 1", k)
	}

	wide := func() (built, error) {
		g := G.NewGraph()
		rng := rand.New(rand.NewSource(11))
		b := randInput(g, rng, "b", 0.5, 2, 1, 2)
		var total *G.Node
		var wrt G.Nodes
		for i := 0; i < 70; i++ {
			a := randInput(g, rng, fmt.Sprintf("a%d", i), -1, 1, 1, 2)
			r := randInput(g, rng, fmt.Sprintf("r%d", i), -1, 1, 2)
			term := G.Must(G.Sum(G.Must(G.HadamardProd(G.Must(G.Reshape(G.Must(G.HadamardDiv(a, b)), tensor.Shape{2})), r))))
			if total == nil {
				total = term
			} else {
				total = G.Must(G.Add(total, term))
			}
			if i%10 == 0 {
				wrt = append(wrt, a)
			}
		}
		return built{g: g, cost: total, wrt: append(wrt, b)}, nil
	}
	b1, _ := wide()
	grads, _, _ := bulkadTape(t, b1)
	if k := keepAlives(b1.g); k < 2 {
		t.Errorf("70 kept views: %d keepAlive nodes, want a tree", k)
	}
	for _, n := range b1.g.AllNodes() {
		if n != nil && n.Op() != nil && strings.HasPrefix(n.Op().String(), "keepAlive(") && n.Op().Arity() > 64 {
			t.Errorf("keepAlive node with %d children", n.Op().Arity())
		}
	}
	b2, _ := wide()
	fd, idx := finiteDiff(t, b2, 1e-5, 4)
	if d := maxRelDiff(pick(grads, idx), fd); d > 1e-6 {
		t.Errorf("70 views: gradients differ from central differences by %g", d)
	}
}

// TestViewOfInputNotOverwritten: in Σ Reshape(w) ⊙ r the ⊙ may run in place on the reshape,
// which shares w's memory. Gorgonia's forward-only TapeMachine does write into w (pinned here
// as a Gorgonia v0.9.18 bug); after bulkad.Grad two runs leave w unchanged and the gradient
// is r, as by hand.
func TestViewOfInputNotOverwritten(t *testing.T) {
	build := func() (*G.ExprGraph, *G.Node, *G.Node) {
		g := G.NewGraph()
		w := G.NewMatrix(g, tensor.Float64, G.WithShape(2, 2), G.WithName("w"),
			G.WithValue(tensor.New(tensor.WithShape(2, 2), tensor.WithBacking([]float64{1, 2, 3, 4}))))
		r := G.NewVector(g, tensor.Float64, G.WithShape(4), G.WithName("r"),
			G.WithValue(tensor.New(tensor.WithShape(4), tensor.WithBacking([]float64{0.5, -1, 2, 0.25}))))
		return g, w, G.Must(flatWeightedSum(w, r))
	}
	g, w, _ := build()
	mustRunOnce(t, g, nil)
	if got := valuesOf(w.Value()); got[1] == 2 {
		t.Logf("Gorgonia no longer writes into w through the reshape: %v", got)
	} else {
		t.Logf("Gorgonia's forward pass wrote into w: %v", got)
	}

	g, w, cost := build()
	gs, err := bulkad.Grad(cost, w)
	if err != nil {
		t.Fatal(err)
	}
	vm := mustRunOnce(t, g, nil)
	vm.Reset()
	if err := vm.RunAll(); err != nil { // the second run
		t.Fatal(err)
	}
	if d := maxRelDiff([][]float64{valuesOf(w.Value())}, [][]float64{{1, 2, 3, 4}}); d != 0 {
		t.Errorf("w changed by the runs: %v", valuesOf(w.Value()))
	}
	if d := maxRelDiff([][]float64{valuesOf(gs[0].Value())}, [][]float64{{0.5, -1, 2, 0.25}}); d != 0 {
		t.Errorf("gradient %v, want r", valuesOf(gs[0].Value()))
	}
}
