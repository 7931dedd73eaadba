package adapter

import (
	"fmt"
	"hash"
	"strings"
	"testing"

	"github.com/bulkad/bulkad/core"
	"github.com/bulkad/bulkad/core/tensors"
	"github.com/bulkad/bulkad/examples/models"
	"github.com/chewxy/hm"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// evalLet evaluates the value a translation gives to node n (a let or a param).
func evalLet(tr *Translation, n *G.Node) (*tensor.Dense, error) {
	a, err := args(tr)
	if err != nil {
		return nil, err
	}
	for name, pn := range tr.Params {
		if pn == n && !strings.HasSuffix(name, "_value") {
			return a[name], nil
		}
	}
	lets, _ := core.LetChain(tr.Program.Body)
	var res core.Term
	for _, l := range lets {
		if tr.Lets[l.Var.Name] == n {
			res = l.Var
		}
	}
	if res == nil {
		return nil, fmt.Errorf("node %d %q has no let", n.ID(), n.Name())
	}
	for i := len(lets) - 1; i >= 0; i-- {
		if res, err = core.NewLet(lets[i].Var, lets[i].Bound, res); err != nil {
			return nil, err
		}
	}
	p, err := core.NewProgram(tr.Program.Params, res)
	if err != nil {
		return nil, err
	}
	return tensors.Eval(p, a)
}

// TestZoo: every model of the zoo translates, and its cost and prediction evaluate to the
// TapeMachine's forward values, in both dtypes.
func TestZoo(t *testing.T) {
	for _, dt := range []tensor.Dtype{tensor.Float64, tensor.Float32} {
		zoo, err := models.Zoo(dt, 7)
		if err != nil {
			t.Fatal(err)
		}
		big, err := models.ConvNetMNIST(dt, 2, [4]float64{0.2, 0.2, 0.2, 0.55}, 7)
		if err != nil {
			t.Fatal(err)
		}
		zoo = append(zoo, big)
		for _, m := range zoo {
			label := fmt.Sprintf("%s/%v", m.Name, dt)
			if err := runGraph(m.G); err != nil {
				t.Fatalf("%s: gorgonia: %v", label, err)
			}
			tr, err := Translate(m.Cost, m.Wrt...)
			if err != nil {
				t.Fatalf("%s: translate: %v", label, err)
			}
			if len(tr.Wrt) != len(m.Wrt) {
				t.Errorf("%s: %d wrt names for %d wrt nodes", label, len(tr.Wrt), len(m.Wrt))
			}
			for i, w := range tr.Wrt {
				if tr.Params[w] != m.Wrt[i] || tr.Program.Param(w) == nil {
					t.Errorf("%s: wrt %d is %s, not a param bound to node %d", label, i, w, m.Wrt[i].ID())
				}
			}
			if err := sameValue(tr, m.Cost, tolerance(dt)); err != nil {
				t.Errorf("%s: cost: %v", label, err)
			}
			if m.Out != nil {
				got, err := evalLet(tr, m.Out)
				if err != nil {
					t.Fatalf("%s: eval of the prediction: %v", label, err)
				}
				want, _ := toDense(m.Out.Value())
				if err := compare(got, want, tolerance(dt)); err != nil {
					t.Errorf("%s: prediction: %v", label, err)
				}
			}
			checkBindings(t, label, tr)
		}
	}
}

// checkBindings: names are valid and unique, every let and param is bound to a node of its
// type, and the translation prints.
func checkBindings(t *testing.T, label string, tr *Translation) {
	t.Helper()
	if err := core.Check(tr.Program); err != nil {
		t.Errorf("%s: the program does not check: %v", label, err)
	}
	seen := map[string]bool{}
	for _, p := range tr.Program.Params {
		if seen[p.Name] || !core.ValidName(p.Name) {
			t.Errorf("%s: param name %q repeated or invalid", label, p.Name)
		}
		seen[p.Name] = true
		n := tr.Params[p.Name]
		if n == nil {
			t.Errorf("%s: param %s is bound to no node", label, p.Name)
			continue
		}
		want, err := coreType(n)
		if err != nil || !want.Equal(p.Type()) {
			t.Errorf("%s: param %s : %v bound to node %d of type %v (%v)", label, p.Name, p.Type(), n.ID(), want, err)
		}
	}
	core.PostOrder(tr.Program.Body, func(x core.Term) {
		l, ok := x.(*core.Let)
		if !ok {
			return
		}
		if seen[l.Var.Name] {
			t.Errorf("%s: let name %q repeated", label, l.Var.Name)
		}
		seen[l.Var.Name] = true
		n := tr.Lets[l.Var.Name]
		if n == nil {
			t.Errorf("%s: let %s denotes no node", label, l.Var.Name)
			return
		}
		want, err := coreType(n)
		if err != nil || !want.Equal(l.Var.Type()) {
			t.Errorf("%s: let %s : %v denotes node %d of type %v (%v)", label, l.Var.Name, l.Var.Type(), n.ID(), want, err)
		}
	})
	if len(seen) != len(tr.Params)+len(tr.Lets) {
		t.Errorf("%s: %d names but %d params and %d lets", label, len(seen), len(tr.Params), len(tr.Lets))
	}
	if s := tr.String(); !strings.Contains(s, "fn (") || !strings.Contains(s, tr.Wrt[0]) {
		t.Errorf("%s: String() does not show the program and the wrt names:\n%s", label, s)
	}
}

// opaqueOp is an op the adapter does not know (y = 2x), optionally with a String that panics.
type opaqueOp struct{ panicky bool }

func (o opaqueOp) Arity() int { return 1 }
func (o opaqueOp) Type() hm.Type {
	a := hm.TypeVariable('a')
	return hm.NewFnType(a, a)
}
func (o opaqueOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	return in[0].(tensor.Shape).Clone(), nil
}
func (o opaqueOp) Do(v ...G.Value) (G.Value, error) {
	t := v[0].(tensor.Tensor)
	return tensor.Add(t, t)
}
func (o opaqueOp) ReturnsPtr() bool      { return false }
func (o opaqueOp) CallsExtern() bool     { return false }
func (o opaqueOp) OverwritesInput() int  { return -1 }
func (o opaqueOp) WriteHash(h hash.Hash) { fmt.Fprintf(h, "opaque%v", o.panicky) }
func (o opaqueOp) Hashcode() uint32      { return 7 }
func (o opaqueOp) String() string {
	if o.panicky {
		panic("String exploded")
	}
	return "Opaque"
}

// must panics on a graph-building error (a broken test, not a finding).
func must(n *G.Node, err error) *G.Node {
	if err != nil {
		panic(err)
	}
	return n
}

// TestErrors: the error paths never panic and say what is wrong.
func TestErrors(t *testing.T) {
	b := newGen(tensor.Float64, 3)
	x := b.in(-1, 1, 3, 4)
	w := b.in(-1, 1, 3, 4)
	xw := must(G.HadamardProd(x, w))
	op := must(G.ApplyOp(opaqueOp{}, xw))
	cost := must(G.Sum(op))

	_, err := Translate(cost, w)
	if err == nil {
		t.Fatal("unsupported op on the path: no error")
	}
	for _, want := range []string{op.Name(), fmt.Sprint(op.ID()), "Opaque", "adapter.opaqueOp", "adapter.SupportedOps()", "supported ops"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("unsupported op error does not mention %q: %v", want, err)
		}
	}
	// it says how to list the table instead of printing it
	if strings.Contains(err.Error(), "gorgonia.elemBinOp") || len(err.Error()) > 400 {
		t.Errorf("unsupported op error prints the op table (%d bytes): %v", len(err.Error()), err)
	}

	// the same op off the path is a parameter
	off := must(G.ApplyOp(opaqueOp{}, x))
	c2 := must(G.Sum(must(G.HadamardProd(off, w))))
	tr, err := Translate(c2, w)
	if err != nil {
		t.Fatalf("unsupported op off the path: %v", err)
	}
	found := false
	for _, n := range tr.Params {
		found = found || n == off
	}
	if !found {
		t.Errorf("the opaque node off the path is not a param:\n%v", tr)
	}

	// an op whose String panics: an error on the path, a parameter off it, never a panic
	bad := must(G.ApplyOp(opaqueOp{panicky: true}, xw))
	if _, err := Translate(must(G.Sum(bad)), w); err == nil || !strings.Contains(err.Error(), "adapter.opaqueOp") {
		t.Errorf("panicking op on the path: got %v, want an error naming adapter.opaqueOp", err)
	}
	badOff := must(G.ApplyOp(opaqueOp{panicky: true}, x))
	if _, err := Translate(must(G.Sum(must(G.HadamardProd(badOff, w)))), w); err != nil {
		t.Errorf("panicking op off the path: %v", err)
	}

	// an op whose Gorgonia kernel is known to be wrong in this setting is refused
	bx := b.in(-1, 1, 2, 4, 3)
	bi := G.NewTensor(b.g, tensor.Int, 1, G.WithShape(2), G.WithName("bi"), G.WithValue(tensor.New(tensor.WithShape(2), tensor.WithBacking([]int{1, 2}))))
	if _, err := Translate(must(G.Sum(must(G.ByIndices(bx, bi, 1)))), bx); err == nil || !strings.Contains(err.Error(), "wrong values") {
		t.Errorf("ByIndices along axis 1 of [2 4 3]: got %v, want a refusal", err)
	}

	if _, err := Translate(must(G.Sum(must(G.Sparsemax(xw, 0)))), w); err == nil || !strings.Contains(err.Error(), "wrong values") {
		t.Errorf("Sparsemax along axis 0: got %v, want a refusal", err)
	}

	// batch norm in inference mode reads running statistics held in the op: refused
	bnx := b.in(-1, 1, 4, 3)
	bny, _, _, bnop, err := G.BatchNorm(bnx, b.in(0.5, 1, 4, 3), b.in(-1, 1, 4, 3), 0.9, 1e-5)
	if err != nil {
		t.Fatal(err)
	}
	if err := bnop.SetTraining(false); err != nil {
		t.Fatal(err)
	}
	if _, err := Translate(must(G.Sum(bny)), bnx); err == nil || !strings.Contains(err.Error(), "inference mode") {
		t.Errorf("batch norm in inference mode: got %v, want a refusal", err)
	}

	// non-scalar cost
	if _, err := Translate(xw, w); err == nil || !strings.Contains(err.Error(), "scalar") {
		t.Errorf("non-scalar cost: got %v", err)
	}
	// wrt not in the graph
	other := newGen(tensor.Float64, 4).in(-1, 1, 3, 4)
	if _, err := Translate(cost, other); err == nil || !strings.Contains(err.Error(), "not in the cost's graph") {
		t.Errorf("foreign wrt: got %v", err)
	}
	if _, err := Translate(cost, nil); err == nil {
		t.Error("nil wrt: no error")
	}
	if _, err := Translate(nil); err == nil {
		t.Error("nil cost: no error")
	}
}

// TestWrtNotReached: a wrt node the cost does not depend on is a parameter (its gradient will
// be zero), not an error.
func TestWrtNotReached(t *testing.T) {
	b := newGen(tensor.Float32, 5)
	x, w, unused := b.in(-1, 1, 2, 3), b.in(-1, 1, 2, 3), b.in(-1, 1, 4)
	cost := must(G.Sum(must(G.HadamardProd(x, w))))
	if err := runGraph(b.g); err != nil {
		t.Fatal(err)
	}
	tr, err := Translate(cost, unused, w)
	if err != nil {
		t.Fatalf("translate: %v", err)
	}
	if len(tr.Wrt) != 2 || tr.Params[tr.Wrt[0]] != unused || tr.Params[tr.Wrt[1]] != w {
		t.Errorf("wrt names %v do not map to the wrt nodes", tr.Wrt)
	}
	if !core.HasFree(tr.Program.Body, tr.Wrt[1]) || core.HasFree(tr.Program.Body, tr.Wrt[0]) {
		t.Errorf("the body should use w and not the unreached node:\n%v", tr)
	}
	if err := sameValue(tr, cost, 1e-5); err != nil {
		t.Error(err)
	}
}

// TestWrtIntermediate: differentiating with respect to an inner node cuts the graph there.
func TestWrtIntermediate(t *testing.T) {
	b := newGen(tensor.Float64, 6)
	x, w := b.in(-1, 1, 3, 4), b.in(-1, 1, 4, 2)
	h := must(G.Mul(x, w))
	th := must(G.Tanh(h))
	cost := must(G.Sum(th))
	if err := runGraph(b.g); err != nil {
		t.Fatal(err)
	}
	tr, err := Translate(cost, h)
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.Params) != 1 || tr.Params[tr.Wrt[0]] != h {
		t.Errorf("params %v, want only the inner node h", tr.Params)
	}
	if len(tr.Lets) != 2 {
		t.Errorf("%d lets, want 2 (tanh, sum):\n%v", len(tr.Lets), tr)
	}
	if err := sameValue(tr, cost, 1e-12); err != nil {
		t.Error(err)
	}
}

// TestTraps covers the traps of the notes: duplicate children, the SoftMax/LogSoftMax hash
// collision, stabilising rewrites, Read statements and constants.
func TestTraps(t *testing.T) {
	b := newGen(tensor.Float64, 8)
	x := b.in(0.1, 2, 3, 4)
	sq := must(G.HadamardProd(x, x)) // children [x x]
	sm := must(G.SoftMax(sq))
	lsm := must(G.LogSoftMax(sq)) // returns the softmax node (hash collision)
	if lsm != sm {
		t.Log("LogSoftMax after SoftMax returned a new node: the collision is gone in this Gorgonia")
	}
	nn := must(G.Neg(must(G.Neg(lsm)))) // rewritten at build time: Neg(Neg(a)) is a
	if nn != lsm {
		t.Log("Neg(Neg(a)) built a new node: the rewrite did not fire")
	}
	lg := must(G.Log(nn))
	twice := must(G.Add(must(G.HadamardProd(x, x)), sq)) // deduplicated: sq + sq
	cost := must(G.Sum(must(G.Add(lg, twice))))
	var read G.Value
	G.Read(cost, &read)
	if err := runGraph(b.g); err != nil {
		t.Fatal(err)
	}
	tr, err := Translate(cost, x)
	if err != nil {
		t.Fatal(err)
	}
	if err := sameValue(tr, cost, 1e-12); err != nil {
		t.Errorf("%v\n%v", err, tr)
	}
	// Log(SoftMax(a)) is rewritten at build time by turning the softmax node itself into a
	// log-softmax (isLog = true): one let per distinct op node (x⊙x, log-softmax, sq+sq, add,
	// sum), and the translation follows the op's field.
	ops := reachableOps(cost)
	if len(tr.Lets) != ops || ops != 5 {
		t.Errorf("%d lets for %d op nodes, want 5:\n%v", len(tr.Lets), ops, tr)
	}
	if !strings.Contains(fmt.Sprint(sm.Op()), "true") {
		t.Logf("the softmax node was not turned into a log-softmax: %v", sm.Op())
	}
	checkBindings(t, "traps", tr)
}

// reachableOps counts the op nodes with operands (not constants) that n reads, itself included.
func reachableOps(n *G.Node) int {
	ops := 0
	seen := map[int64]bool{n.ID(): true}
	stack := []*G.Node{n}
	for len(stack) > 0 {
		m := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		it := m.Graph().From(m.ID())
		if m.Op() != nil && it.Len() > 0 {
			ops++
		}
		for it.Next() {
			c := it.Node().(*G.Node)
			if !seen[c.ID()] {
				seen[c.ID()] = true
				stack = append(stack, c)
			}
		}
	}
	return ops
}
