package adapter

import (
	"fmt"
	"math/rand"
	"strings"
	"testing"

	"github.com/bulkad/bulkad/core/tensors"
	"github.com/bulkad/bulkad/internal/testutil"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// tolerance of the comparisons: float64 1e-12, float32 1e-5, relative to the larger of the
// element's magnitude and the largest magnitude of the expected array (so sums with
// cancellation are judged against the size of their terms, not of their result).
func tolerance(dt tensor.Dtype) float64 {
	if dt == tensor.Float32 {
		return 1e-5
	}
	return 1e-12
}

// toDense converts a Gorgonia value into a fresh *tensor.Dense (scalars get shape ()).
func toDense(v G.Value) (*tensor.Dense, error) {
	switch x := v.(type) {
	case *tensor.Dense:
		if is, ok := x.Data().([]int); ok { // Gorgonia's Int: core's i64
			return tensor.New(tensor.WithShape(x.Shape().Clone()...), tensor.WithBacking(convert[int64](is))), nil
		}
		return x.Clone().(*tensor.Dense), nil
	case nil:
		return nil, fmt.Errorf("no value")
	}
	return tensor.New(tensor.FromScalar(v.Data())), nil
}

// floats returns a dense tensor's elements as float64 (bools as 0/1; nil for other data).
func floats(d *tensor.Dense) []float64 {
	out, _ := testutil.Floats(d.Data())
	return out
}

// convert converts numbers to another number type.
func convert[To, From float32 | float64 | int | int64](x []From) []To {
	out := make([]To, len(x))
	for i, v := range x {
		out[i] = To(v)
	}
	return out
}

// compare reports the first element where got and want differ beyond tol.
func compare(got, want *tensor.Dense, tol float64) error {
	if got.Shape().TotalSize() != want.Shape().TotalSize() {
		return fmt.Errorf("shape %v, want %v", got.Shape(), want.Shape())
	}
	if got.Dtype() != want.Dtype() {
		return fmt.Errorf("dtype %v, want %v", got.Dtype(), want.Dtype())
	}
	if msg := testutil.ScaledDiff(floats(got), floats(want), tol, 1e-300); msg != "" {
		return fmt.Errorf("%s", msg)
	}
	return nil
}

// args collects the values of a translation's parameters from their nodes.
func args(tr *Translation) (map[string]*tensor.Dense, error) {
	m := map[string]*tensor.Dense{}
	for name, n := range tr.Params {
		d, err := toDense(n.Value())
		if err != nil {
			return nil, fmt.Errorf("param %s (node %d %q): %v", name, n.ID(), n.Name(), err)
		}
		m[name] = d
	}
	return m, nil
}

// evalTranslation evaluates the program of a translation on its nodes' current values.
func evalTranslation(tr *Translation) (*tensor.Dense, error) {
	a, err := args(tr)
	if err != nil {
		return nil, err
	}
	return tensors.Eval(tr.Program, a)
}

// sameValue evaluates the translation and compares it with the TapeMachine's value of node n
// (the graph has run).
func sameValue(tr *Translation, n *G.Node, tol float64) error {
	got, err := evalTranslation(tr)
	if err != nil {
		return fmt.Errorf("eval: %v", err)
	}
	want, err := toDense(n.Value())
	if err != nil {
		return fmt.Errorf("value of node %d %q: %v", n.ID(), n.Name(), err)
	}
	return compare(got, want, tol)
}

// checkCost translates cost with respect to wrt in a graph that has run, checks the
// translation's bindings and compares its value with the TapeMachine's.
func checkCost(t *testing.T, label string, cost *G.Node, wrt G.Nodes) {
	t.Helper()
	tr, err := Translate(cost, wrt...)
	if err != nil {
		t.Errorf("%s: translate: %v", label, err)
		return
	}
	checkBindings(t, label, tr)
	if err := sameValue(tr, cost, tolerance(cost.Dtype())); err != nil {
		t.Errorf("%s: cost: %v\n%v", label, err, tr)
	}
}

// gen makes random input nodes for a test graph.
type gen struct {
	g   *G.ExprGraph
	dt  tensor.Dtype
	rng *rand.Rand
	n   int
	ins G.Nodes
}

func newGen(dt tensor.Dtype, seed int64) *gen {
	return &gen{g: G.NewGraph(), dt: dt, rng: rand.New(rand.NewSource(seed))}
}

// in makes an input node with values uniform in [lo, hi] (a scalar when shape is empty).
func (b *gen) in(lo, hi float64, shape ...int) *G.Node {
	vals := make([]float64, 1)
	if len(shape) > 0 {
		vals = make([]float64, tensor.Shape(shape).TotalSize())
	}
	for i := range vals {
		vals[i] = lo + (hi-lo)*b.rng.Float64()
	}
	return b.from(vals, shape...)
}

// ints makes an input node with integer values in [0, k) (to exercise == and ties).
func (b *gen) ints(k int, shape ...int) *G.Node {
	vals := make([]float64, tensor.Shape(shape).TotalSize())
	for i := range vals {
		vals[i] = float64(b.rng.Intn(k))
	}
	return b.from(vals, shape...)
}

// from makes an input node holding vals.
func (b *gen) from(vals []float64, shape ...int) *G.Node {
	b.n++
	name := fmt.Sprintf("in%d", b.n)
	var n *G.Node
	if len(shape) == 0 {
		if b.dt == tensor.Float32 {
			n = G.NewScalar(b.g, b.dt, G.WithName(name), G.WithValue(float32(vals[0])))
		} else {
			n = G.NewScalar(b.g, b.dt, G.WithName(name), G.WithValue(vals[0]))
		}
	} else {
		var back interface{} = vals
		if b.dt == tensor.Float32 {
			f := make([]float32, len(vals))
			for i, v := range vals {
				f[i] = float32(v)
			}
			back = f
		}
		n = G.NewTensor(b.g, b.dt, len(shape), G.WithShape(shape...), G.WithName(name),
			G.WithValue(tensor.New(tensor.WithShape(shape...), tensor.WithBacking(back))))
	}
	b.ins = append(b.ins, n)
	return n
}

// runGraph runs a graph's forward pass on a TapeMachine, turning panics into errors. Every op
// node is first pinned with a Read statement: otherwise the TapeMachine reuses the registers of
// dead nodes in place, and the values left in intermediate nodes after the run are clobbered.
func runGraph(g *G.ExprGraph) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("tape machine panicked: %v", r)
		}
	}()
	for _, n := range g.AllNodes() {
		if n.Op() != nil && !strings.Contains(fmt.Sprintf("%T", n.Op()), "readOp") {
			G.Read(n, new(G.Value))
		}
	}
	vm := G.NewTapeMachine(g)
	defer vm.Close()
	return vm.RunAll()
}

// checkNode runs the graph, translates out (any shape) with respect to wrt, evaluates the
// translation and compares it with the TapeMachine's value of out.
func checkNode(t *testing.T, label string, out *G.Node, wrt G.Nodes) {
	t.Helper()
	if err := runGraph(out.Graph()); err != nil {
		t.Fatalf("%s: gorgonia: %v", label, err)
	}
	tr, err := translateGraph(out, wrt, false)
	if err != nil {
		t.Fatalf("%s: translate: %v", label, err)
	}
	if err := sameValue(tr, out, tolerance(out.Dtype())); err != nil {
		t.Errorf("%s: %v\nprogram:\n%v", label, err, tr)
	}
}
