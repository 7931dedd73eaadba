package bulkad_test

import (
	"encoding/json"
	"hash"
	"hash/fnv"
	"strings"
	"testing"

	"github.com/chewxy/hm"
	"github.com/pkg/errors"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/bulkad/bulkad"
	"github.com/bulkad/bulkad/examples/models"
	"github.com/bulkad/bulkad/examples/opgraphs"
)

// TestCheckSingleOps: on every single-op graph bulkad matches finite differences; on the
// operations whose Gorgonia gradient is known to be wrong, the checker says so.
func TestCheckSingleOps(t *testing.T) {
	for _, c := range opgraphs.Cases() {
		for _, dt := range []tensor.Dtype{tensor.Float64, tensor.Float32} {
			gr, err := c.Build(dt, 1)
			if err != nil {
				t.Fatal(err)
			}
			rep, err := bulkad.Check(gr.Cost, gr.Wrt, bulkad.WithMaxProbes(8))
			if err != nil {
				t.Errorf("%s %v: %v", c.Name, dt, err)
				continue
			}
			if !rep.OK() {
				t.Errorf("%s %v: bulkad not OK\n%s", c.Name, dt, rep)
			}
			if dt != tensor.Float64 {
				continue
			}
			gorgoniaBad := rep.GorgoniaError != ""
			for _, n := range rep.Nodes {
				if n.Gorgonia != "ok" {
					gorgoniaBad = true
				}
			}
			if c.GorgoniaWrong && !gorgoniaBad {
				t.Errorf("%s: Gorgonia's gradient is known to be wrong but the check did not flag it\n%s", c.Name, rep)
			}
			if c.GorgoniaRefuses && rep.GorgoniaError == "" {
				t.Errorf("%s: Gorgonia is known to refuse this op but did not fail\n%s", c.Name, rep)
			}
			if !c.GorgoniaWrong && !c.GorgoniaRefuses && gorgoniaBad {
				t.Errorf("%s: Gorgonia flagged on an op where it is known to be right\n%s", c.Name, rep)
			}
		}
	}
}

// TestCheckZoo: bulkad passes the check on every zoo model in both dtypes.
func TestCheckZoo(t *testing.T) {
	for _, dt := range []tensor.Dtype{tensor.Float64, tensor.Float32} {
		zoo, err := models.Zoo(dt, 3)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range zoo {
			rep, err := bulkad.Check(m.Cost, m.Wrt, bulkad.WithMaxProbes(6))
			if err != nil {
				t.Errorf("%s %v: %v", m.Name, dt, err)
				continue
			}
			if !rep.OK() {
				t.Errorf("%s %v: not OK\n%s", m.Name, dt, rep)
			}
			if len(rep.Nodes) != len(m.Wrt) {
				t.Errorf("%s: %d node reports for %d wrt nodes", m.Name, len(rep.Nodes), len(m.Wrt))
			}
		}
	}
}

// wrongDouble is a test-only Gorgonia op computing 2x whose SymDiff claims the derivative is 3.
type wrongDouble struct{}

func (wrongDouble) Arity() int { return 1 }
func (wrongDouble) Type() hm.Type {
	a := hm.TypeVariable('a')
	return hm.NewFnType(a, a)
}
func (wrongDouble) InferShape(ds ...G.DimSizer) (tensor.Shape, error) {
	s, ok := ds[0].(tensor.Shape)
	if !ok {
		return nil, errors.New("wrongDouble: no shape")
	}
	return s.Clone(), nil
}
func (wrongDouble) Do(vs ...G.Value) (G.Value, error) {
	d := vs[0].(*tensor.Dense).Clone().(*tensor.Dense)
	for i, v := range d.Data().([]float64) {
		d.Data().([]float64)[i] = 2 * v
	}
	return d, nil
}
func (wrongDouble) ReturnsPtr() bool      { return false }
func (wrongDouble) CallsExtern() bool     { return false }
func (wrongDouble) OverwritesInput() int  { return -1 }
func (wrongDouble) WriteHash(h hash.Hash) { h.Write([]byte("wrongDouble")) }
func (wrongDouble) Hashcode() uint32 {
	h := fnv.New32a()
	h.Write([]byte("wrongDouble"))
	return h.Sum32()
}
func (wrongDouble) String() string            { return "wrongDouble" }
func (wrongDouble) DiffWRT(inputs int) []bool { return []bool{true} }
func (wrongDouble) SymDiff(inputs G.Nodes, output, grad *G.Node) (G.Nodes, error) {
	three := G.NewConstant(3.0)
	d, err := G.Mul(grad, three)
	return G.Nodes{d}, err
}

// TestCheckFlagsWrongCustomGradient: a custom op with a wrong SymDiff is caught (Gorgonia's
// gradient disagrees with finite differences); bulkad, which does not know the op, reports
// that it cannot translate it instead of guessing.
func TestCheckFlagsWrongCustomGradient(t *testing.T) {
	g := G.NewGraph()
	x := G.NewMatrix(g, tensor.Float64, G.WithShape(2, 3), G.WithName("x"),
		G.WithValue(tensor.New(tensor.WithShape(2, 3), tensor.WithBacking([]float64{1, -2, 3, 0.5, 4, -1}))))
	y := G.Must(G.ApplyOp(wrongDouble{}, x))
	cost := G.Must(G.Sum(G.Must(G.Square(y))))
	rep, err := bulkad.Check(cost, G.Nodes{x})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Nodes[0].Gorgonia != "wrong" {
		t.Errorf("wrong SymDiff not flagged:\n%s", rep)
	}
	if rep.OK() || rep.BulkadError == "" || !strings.Contains(rep.BulkadError, "wrongDouble") {
		t.Errorf("bulkad should report the unsupported op, got OK=%v error %q", rep.OK(), rep.BulkadError)
	}
	if !strings.Contains(rep.String(), "wrong") {
		t.Errorf("table does not show the verdict:\n%s", rep)
	}
}

// TestCheckLeavesGraphUnchanged: same node count and same input values after Check.
func TestCheckLeavesGraphUnchanged(t *testing.T) {
	m, err := models.MLP(tensor.Float64, 4, []int{6, 5, 3}, 1)
	if err != nil {
		t.Fatal(err)
	}
	before := len(m.G.AllNodes())
	var vals [][]float64
	for _, n := range m.Wrt {
		vals = append(vals, append([]float64{}, n.Value().Data().([]float64)...))
	}
	if _, err := bulkad.Check(m.Cost, m.Wrt); err != nil {
		t.Fatal(err)
	}
	if after := len(m.G.AllNodes()); after != before {
		t.Errorf("node count %d -> %d", before, after)
	}
	for i, n := range m.Wrt {
		for j, v := range n.Value().Data().([]float64) {
			if v != vals[i][j] {
				t.Fatalf("value of %s changed", n.Name())
			}
		}
		if _, err := n.Grad(); err == nil {
			t.Errorf("%s has a gradient after Check: the caller's graph was differentiated", n.Name())
		}
	}
}

// TestCheckReportFormats: String is an aligned table with one row per wrt node, JSON parses
// back, and options take effect.
func TestCheckReportFormats(t *testing.T) {
	gr, err := opgraphs.Cases()[0].Build(tensor.Float64, 2)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := bulkad.Check(gr.Cost, gr.Wrt, bulkad.WithMaxProbes(3), bulkad.WithTolerance(1e-7, 1e-6), bulkad.WithSeed(9), bulkad.WithStep(1e-5), bulkad.WithGorgonia(false))
	if err != nil {
		t.Fatal(err)
	}
	if rep.Atol != 1e-7 || rep.Rtol != 1e-6 {
		t.Errorf("tolerances %g %g", rep.Atol, rep.Rtol)
	}
	for _, n := range rep.Nodes {
		if n.Probed != 3 || n.Gorgonia != "not run" || n.GorgoniaVsFD != nil {
			t.Errorf("node %+v", n)
		}
	}
	lines := strings.Split(strings.TrimSpace(rep.String()), "\n")
	if len(lines) != 2+1+len(rep.Nodes) {
		t.Errorf("table has %d lines:\n%s", len(lines), rep)
	}
	b, err := rep.JSON()
	if err != nil {
		t.Fatal(err)
	}
	var back bulkad.Report
	if err := json.Unmarshal(b, &back); err != nil || len(back.Nodes) != len(rep.Nodes) {
		t.Errorf("JSON round trip: %v", err)
	}
}

// TestCheckBadInput: errors, no panics.
func TestCheckBadInput(t *testing.T) {
	if _, err := bulkad.Check(nil, nil); err == nil {
		t.Error("nil cost accepted")
	}
	gr, _ := opgraphs.Cases()[0].Build(tensor.Float64, 1)
	if _, err := bulkad.Check(gr.Cost, nil); err == nil {
		t.Error("no wrt accepted")
	}
	other, _ := opgraphs.Cases()[1].Build(tensor.Float64, 1)
	if _, err := bulkad.Check(gr.Cost, other.Wrt); err == nil {
		t.Error("wrt from another graph accepted")
	}
}
