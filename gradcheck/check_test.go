package gradcheck_test

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/bulkad/bulkad/examples/models"
	"github.com/bulkad/bulkad/examples/opgraphs"
	"github.com/bulkad/bulkad/gradcheck"
)

// checkOK runs gradcheck.Check and fails the test, naming label, on an error or on a report that
// is not OK; after an error the report is nil.
func checkOK(t *testing.T, label string, cost *G.Node, wrt G.Nodes, opts ...gradcheck.Option) *gradcheck.Report {
	t.Helper()
	rep, err := gradcheck.Check(cost, wrt, opts...)
	if err != nil {
		t.Errorf("%s: %v", label, err)
		return nil
	}
	if !rep.OK() {
		t.Errorf("%s: not OK\n%s", label, rep)
	}
	return rep
}

var bothDtypes = []tensor.Dtype{tensor.Float64, tensor.Float32}

// eachOpGraph calls f on every single-op graph of examples/opgraphs, built with seed in
// float64 and float32.
func eachOpGraph(t *testing.T, seed int64, f func(dt tensor.Dtype, c opgraphs.Case, gr *opgraphs.Graph)) {
	t.Helper()
	for _, c := range opgraphs.Cases() {
		for _, dt := range bothDtypes {
			gr, err := c.Build(dt, seed)
			if err != nil {
				t.Fatal(err)
			}
			f(dt, c, gr)
		}
	}
}

// eachZooModel calls f on every model of the zoo (seed 3) in float64 and float32.
func eachZooModel(t *testing.T, f func(dt tensor.Dtype, m *models.Model)) {
	t.Helper()
	for _, dt := range bothDtypes {
		zoo, err := models.Zoo(dt, 3)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range zoo {
			f(dt, m)
		}
	}
}

// TestCheckSingleOps: on every single-op graph bulkad matches finite differences; on the
// operations whose Gorgonia gradient is known to be wrong, the checker says so.
func TestCheckSingleOps(t *testing.T) {
	eachOpGraph(t, 1, func(dt tensor.Dtype, c opgraphs.Case, gr *opgraphs.Graph) {
		rep := checkOK(t, fmt.Sprintf("%s %v", c.Name, dt), gr.Cost, gr.Wrt, gradcheck.WithMaxProbes(8))
		if rep == nil || dt != tensor.Float64 {
			return
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
	})
}

// TestCheckZoo: bulkad passes the check on every zoo model in both dtypes.
func TestCheckZoo(t *testing.T) {
	eachZooModel(t, func(dt tensor.Dtype, m *models.Model) {
		rep := checkOK(t, fmt.Sprintf("%s %v", m.Name, dt), m.Cost, m.Wrt, gradcheck.WithMaxProbes(6))
		if rep != nil && len(rep.Nodes) != len(m.Wrt) {
			t.Errorf("%s: %d node reports for %d wrt nodes", m.Name, len(rep.Nodes), len(m.Wrt))
		}
	})
}

// TestCheckSecondOrderZoo: the second-order check passes on every zoo model in both dtypes
// (the convnet's dropout makes it skip, which is no failure), with a row per wrt node.
func TestCheckSecondOrderZoo(t *testing.T) {
	eachZooModel(t, func(dt tensor.Dtype, m *models.Model) {
		rep := checkOK(t, fmt.Sprintf("%s %v", m.Name, dt), m.Cost, m.Wrt, gradcheck.WithMaxProbes(4), gradcheck.WithSecondOrder())
		switch {
		case rep == nil:
		case rep.SecondOrderSkipped:
			if m.Name != "convnet" || !strings.Contains(rep.SecondOrderError, "random") {
				t.Errorf("%s %v: second order skipped: %s", m.Name, dt, rep.SecondOrderError)
			}
		case len(rep.SecondOrder) != len(m.Wrt):
			t.Errorf("%s %v: %d second-order rows for %d wrt nodes\n%s", m.Name, dt, len(rep.SecondOrder), len(m.Wrt), rep)
		}
	})
}

// TestCheckSecondOrderOps: every single-op graph passes the second-order check in float64 and
// float32.
func TestCheckSecondOrderOps(t *testing.T) {
	eachOpGraph(t, 5, func(dt tensor.Dtype, c opgraphs.Case, gr *opgraphs.Graph) {
		rep := checkOK(t, fmt.Sprintf("%s %v", c.Name, dt), gr.Cost, gr.Wrt, gradcheck.WithMaxProbes(4), gradcheck.WithSecondOrder(), gradcheck.WithGorgonia(false))
		if rep != nil && len(rep.SecondOrder) != len(gr.Wrt) {
			t.Errorf("%s %v: %d second-order rows for %d wrt nodes\n%s", c.Name, dt, len(rep.SecondOrder), len(gr.Wrt), rep)
		}
	})
}

// wrongDouble is a test-only Gorgonia op computing 2x whose SymDiff claims the derivative is 3.
type wrongDouble struct{ opgraphs.UserOp }

func newWrongDouble() wrongDouble {
	return wrongDouble{opgraphs.UserOp{Name: "wrongDouble", Inputs: 1}}
}

func (wrongDouble) Do(vs ...G.Value) (G.Value, error) {
	d := vs[0].(*tensor.Dense).Clone().(*tensor.Dense)
	for i, v := range d.Data().([]float64) {
		d.Data().([]float64)[i] = 2 * v
	}
	return d, nil
}
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
	y := G.Must(G.ApplyOp(newWrongDouble(), x))
	cost := G.Must(G.Sum(G.Must(G.Square(y))))
	rep, err := gradcheck.Check(cost, G.Nodes{x})
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
	if _, err := gradcheck.Check(m.Cost, m.Wrt); err != nil {
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
	rep, err := gradcheck.Check(gr.Cost, gr.Wrt, gradcheck.WithMaxProbes(3), gradcheck.WithTolerance(1e-7, 1e-6), gradcheck.WithSeed(9), gradcheck.WithStep(1e-5), gradcheck.WithGorgonia(false))
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
	var back gradcheck.Report
	if err := json.Unmarshal(b, &back); err != nil || len(back.Nodes) != len(rep.Nodes) {
		t.Errorf("JSON round trip: %v", err)
	}
}

// TestCheckBadInput: errors, no panics.
func TestCheckBadInput(t *testing.T) {
	if _, err := gradcheck.Check(nil, nil); err == nil {
		t.Error("nil cost accepted")
	}
	gr, _ := opgraphs.Cases()[0].Build(tensor.Float64, 1)
	if _, err := gradcheck.Check(gr.Cost, nil); err == nil {
		t.Error("no wrt accepted")
	}
	other, _ := opgraphs.Cases()[1].Build(tensor.Float64, 1)
	if _, err := gradcheck.Check(gr.Cost, other.Wrt); err == nil {
		t.Error("wrt from another graph accepted")
	}
}

// TestCheckRejectsBadOptions: a nil option, a step that is not a finite positive number and a
// negative or NaN tolerance are errors naming the problem; zero and infinite tolerances are
// accepted.
func TestCheckRejectsBadOptions(t *testing.T) {
	gr, err := opgraphs.Cases()[0].Build(tensor.Float64, 1)
	if err != nil {
		t.Fatal(err)
	}
	nan := math.NaN()
	for _, tc := range []struct {
		name string
		opts []gradcheck.Option
		want string // in the error; "" means no error
	}{
		{"nil option", []gradcheck.Option{gradcheck.WithSeed(2), nil}, "option 1 is nil"},
		{"zero step", []gradcheck.Option{gradcheck.WithStep(0)}, "step 0"},
		{"negative step", []gradcheck.Option{gradcheck.WithStep(-1e-6)}, "step -1e-06"},
		{"NaN step", []gradcheck.Option{gradcheck.WithStep(nan)}, "step NaN"},
		{"infinite step", []gradcheck.Option{gradcheck.WithStep(math.Inf(1))}, "step +Inf"},
		{"negative atol", []gradcheck.Option{gradcheck.WithTolerance(-1e-6, 1e-5)}, "tolerance"},
		{"negative rtol", []gradcheck.Option{gradcheck.WithTolerance(1e-6, -1)}, "tolerance"},
		{"NaN tolerance", []gradcheck.Option{gradcheck.WithTolerance(nan, 1e-5)}, "tolerance"},
		{"zero tolerances", []gradcheck.Option{gradcheck.WithTolerance(0, 0)}, ""},
		{"infinite tolerance", []gradcheck.Option{gradcheck.WithTolerance(math.Inf(1), 0)}, ""},
	} {
		_, err := gradcheck.Check(gr.Cost, gr.Wrt, append(tc.opts, gradcheck.WithMaxProbes(2), gradcheck.WithGorgonia(false))...)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.want != "" && err == nil:
			t.Errorf("%s: accepted", tc.name)
		case tc.want != "" && (!strings.HasPrefix(err.Error(), "gradcheck: ") || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: error %q, want it to start with \"gradcheck: \" and name %q", tc.name, err, tc.want)
		}
	}
}

// TestCheckRunsGradNodes: Check compares the nodes Grad adds, run on a TapeMachine, with the
// differences (Σ Reshape(a/b) ⊙ r, the graph of issue 13 whose raised nodes once read an
// overwritten value), and for a graph with dropout with the artifact at the same run's
// values; the caller's graph gets no node.
func TestCheckRunsGradNodes(t *testing.T) {
	g := G.NewGraph()
	in := func(name string, vals ...float64) *G.Node {
		return G.NewMatrix(g, tensor.Float64, G.WithShape(2, 3), G.WithName(name),
			G.WithValue(tensor.New(tensor.WithShape(2, 3), tensor.WithBacking(vals))))
	}
	a := in("a", 0.3, -0.7, 0.9, -0.2, 0.5, 0.1)
	b := in("b", 1.2, 0.6, 1.9, 0.8, 1.4, 0.7)
	r := vec64(g, "r", 0.4, -0.9, 0.2, 0.7, -0.3, 0.8)
	cost := G.Must(G.Sum(G.Must(G.HadamardProd(G.Must(G.Reshape(G.Must(G.HadamardDiv(a, b)), tensor.Shape{6})), r))))
	before := len(g.AllNodes())
	rep, err := gradcheck.Check(cost, G.Nodes{a, b}, gradcheck.WithMaxProbes(0))
	if err != nil {
		t.Fatal(err)
	}
	if !rep.OK() || rep.RaisedError != "" {
		t.Errorf("not OK:\n%s", rep)
	}
	for _, n := range rep.Nodes {
		if n.RaisedVsFD == nil || !n.RaisedVsFD.OK || n.RaisedVsArtifact != nil {
			t.Errorf("%s: raised vs fd %+v, vs artifact %+v", n.Name, n.RaisedVsFD, n.RaisedVsArtifact)
		}
	}
	if !strings.Contains(rep.String(), "nodes vs fd") {
		t.Errorf("the table has no column for the nodes:\n%s", rep)
	}
	if after := len(g.AllNodes()); after != before {
		t.Errorf("Check added %d nodes to the caller's graph", after-before)
	}

	m, err := models.ConvNet(tensor.Float64, 2, 6, 6, 2, 3, 0.5, 1)
	if err != nil {
		t.Fatal(err)
	}
	rep, err = gradcheck.Check(m.Cost, m.Wrt, gradcheck.WithMaxProbes(4))
	if err != nil {
		t.Fatal(err)
	}
	if !rep.OK() {
		t.Errorf("convnet with dropout not OK:\n%s", rep)
	}
	for _, n := range rep.Nodes {
		if n.RaisedVsArtifact == nil || n.RaisedVsFD != nil {
			t.Errorf("%s (random graph): raised vs fd %+v, vs artifact %+v", n.Name, n.RaisedVsFD, n.RaisedVsArtifact)
		}
	}
}

// TestCheckSecondOrderGorgonia: the report records Gorgonia's Grad twice beside bulkad's: wrong
// on Σ x³ (it gives 3x instead of 6x along v), a panic on SoftMax; a defect in bulkad's second
// order would show as WRONG (the Hessian of Σ x³ is diag(6x), checked against differences).
func TestCheckSecondOrderGorgonia(t *testing.T) {
	g := G.NewGraph()
	x := vec64(g, "x", 1, 2, 3)
	cost := G.Must(G.Sum(G.Must(G.Cube(x))))
	rep, err := gradcheck.Check(cost, G.Nodes{x}, gradcheck.WithSecondOrder())
	if err != nil {
		t.Fatal(err)
	}
	if !rep.OK() || len(rep.SecondOrder) != 1 || rep.SecondOrder[0].Gorgonia != "wrong" {
		t.Errorf("Σ x³: want bulkad ok and gorgonia wrong\n%s", rep)
	}
	if !strings.Contains(rep.String(), "second order") {
		t.Errorf("the report does not print the second-order table:\n%s", rep)
	}

	c, _ := opgraphs.Lookup("softmax")
	gr, err := c.Build(tensor.Float64, 5)
	if err != nil {
		t.Fatal(err)
	}
	rep, err = gradcheck.Check(gr.Cost, gr.Wrt, gradcheck.WithSecondOrder())
	if err != nil {
		t.Fatal(err)
	}
	if !rep.OK() || len(rep.SecondOrder) != 1 || !strings.HasPrefix(rep.SecondOrder[0].Gorgonia, "panics") {
		t.Errorf("softmax: want bulkad ok and gorgonia panics\n%s", rep)
	}
}
