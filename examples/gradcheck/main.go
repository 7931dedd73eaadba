// Command gradcheck answers "which autodiff can I trust?": it runs gradcheck.Check — bulkad's
// gradient, Gorgonia's own gradient and central finite differences in float64 — over every
// model of the zoo (examples/models) and every single-op graph (examples/opgraphs), and
// prints one table (or JSON with -json).
//
//	go run ./examples/gradcheck            # float64 graphs
//	go run ./examples/gradcheck -dtype float32
//	go run ./examples/gradcheck -json
//
// Columns: the largest absolute error of bulkad against finite differences, of Gorgonia
// against finite differences, and the verdicts ("ok", "wrong", "failed" = Gorgonia's Grad or
// machine returned an error or panicked, "refused" = Gorgonia declines to differentiate).
// The second-order columns (gradcheck.WithSecondOrder) compare the Hessian-vector product along a
// random direction — bulkad.HessianVector and bulkad.Grad applied twice, run on a TapeMachine —
// with central differences of the float64 gradient (largest error relative to the largest
// entry), and say what Gorgonia's Grad applied twice does (ok, wrong, panics, refused).
package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/pkg/errors"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/bulkad/bulkad/examples/internal/train"
	"github.com/bulkad/bulkad/examples/models"
	"github.com/bulkad/bulkad/examples/opgraphs"
	"github.com/bulkad/bulkad/gradcheck"
)

// Row is one checked graph.
type Row struct {
	Graph    string  `json:"graph"`
	Kind     string  `json:"kind"` // "model" or "op"
	Dtype    string  `json:"dtype"`
	Bulkad   string  `json:"bulkad"`   // ok / WRONG / FAILED
	Gorgonia string  `json:"gorgonia"` // ok / wrong / failed / refused
	BulkadFD float64 `json:"bulkad_max_abs_err"`
	// NodesFD is the largest error of the nodes bulkad.Grad adds, run on a TapeMachine (vs
	// finite differences, or vs bulkad's artifact at the same run's values with dropout).
	NodesFD float64 `json:"nodes_max_abs_err"`
	GorgFD  float64 `json:"gorgonia_max_abs_err"`
	// Second is bulkad's second-order verdict (ok / WRONG / skipped), SecondRel its largest
	// error relative to the largest entry, GorgSecond Gorgonia's Grad twice.
	Second     string            `json:"second_order"`
	SecondRel  float64           `json:"second_order_max_rel_err"`
	GorgSecond string            `json:"gorgonia_second_order"`
	Report     *gradcheck.Report `json:"report,omitempty"`
	Error      string            `json:"error,omitempty"`
}

// about opens the usage -h prints.
const about = `Checks bulkad's gradients and Gorgonia's against central finite differences (float64) on
every zoo model and single-op graph, first and second order, and prints one table (or JSON).
It exits with status 1 when any of bulkad's gradients is wrong.`

// command is the command line.
type command struct {
	asJSON bool
	dt     tensor.Dtype
	probes int
}

// parseFlags reads the command line (without the program name); help is set after -h, whose
// usage went to out.
func parseFlags(args []string, out io.Writer) (c command, help bool, err error) {
	fs := train.NewFlagSet("gradcheck", about, out)
	fs.BoolVar(&c.asJSON, "json", false, "print JSON instead of a table")
	dtype := fs.String("dtype", "float64", "float64 or float32")
	fs.IntVar(&c.probes, "probes", 12, "entries probed per wrt tensor")
	if help, err := train.ParseFlags(fs, args); help || err != nil {
		return c, help, err
	}
	if c.dt, err = train.ParseDtype("gradcheck", *dtype); err != nil {
		return c, false, err
	}
	if c.probes <= 0 {
		return c, false, errors.Errorf("gradcheck: -probes %d: want at least one entry per tensor", c.probes)
	}
	return c, false, nil
}

func main() {
	c := train.ParseCommandLine(parseFlags)
	rows, err := run(c.dt, c.probes)
	if err != nil {
		train.Fail(err)
	}
	if c.asJSON {
		enc := json.NewEncoder(os.Stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rows); err != nil {
			train.Fail(err)
		}
	} else {
		printTable(os.Stdout, rows)
	}
	for _, r := range rows {
		if r.Bulkad != "ok" || (r.Second != "ok" && r.Second != "skipped") {
			os.Exit(1)
		}
	}
}

func run(dt tensor.Dtype, probes int) ([]Row, error) {
	var rows []Row
	zoo, err := models.Zoo(dt, 1)
	if err != nil {
		return nil, errors.Wrap(err, "building the zoo")
	}
	for _, m := range zoo {
		rows = append(rows, check(m.Name, "model", dt, m.Cost, m.Wrt, probes, false))
	}
	for _, c := range opgraphs.Cases() {
		gr, err := c.Build(dt, 1)
		if err != nil {
			return nil, err
		}
		rows = append(rows, check(c.Name, "op", dt, gr.Cost, gr.Wrt, probes, c.GorgoniaRefuses))
	}
	return rows, nil
}

func check(name, kind string, dt tensor.Dtype, cost *G.Node, wrt G.Nodes, probes int, refuses bool) Row {
	r := Row{Graph: name, Kind: kind, Dtype: dt.String()}
	rep, err := gradcheck.Check(cost, wrt, gradcheck.WithMaxProbes(probes), gradcheck.WithSecondOrder())
	if err != nil {
		r.Bulkad, r.Gorgonia, r.Error = "FAILED", "-", err.Error()
		return r
	}
	r.Report = rep
	r.Bulkad = "ok"
	if !rep.OK() {
		r.Bulkad = "WRONG"
		if rep.BulkadError != "" || rep.RaisedError != "" {
			r.Bulkad = "FAILED"
		}
	}
	r.Gorgonia = "ok"
	for _, n := range rep.Nodes {
		r.BulkadFD = max(r.BulkadFD, n.BulkadVsFD.MaxAbs)
		switch {
		case n.RaisedVsFD != nil:
			r.NodesFD = max(r.NodesFD, n.RaisedVsFD.MaxAbs)
		case n.RaisedVsArtifact != nil:
			r.NodesFD = max(r.NodesFD, n.RaisedVsArtifact.MaxAbs)
		default:
			r.NodesFD = math.Inf(1)
		}
		if n.GorgoniaVsFD != nil {
			r.GorgFD = max(r.GorgFD, n.GorgoniaVsFD.MaxAbs)
		}
		if n.Gorgonia == "wrong" {
			r.Gorgonia = "wrong"
		}
	}
	if rep.GorgoniaError != "" {
		r.Gorgonia = "failed"
		if refuses {
			r.Gorgonia = "refused"
		}
		r.GorgFD = -1
	}
	secondOrder(&r, rep)
	return r
}

// secondOrder fills the row's second-order columns from the report.
func secondOrder(r *Row, rep *gradcheck.Report) {
	switch {
	case rep.SecondOrderSkipped:
		r.Second, r.GorgSecond = "skipped", "-"
		return
	case rep.SecondOrderError != "":
		r.Second, r.GorgSecond, r.SecondRel = "FAILED", "-", math.Inf(1)
		return
	}
	r.Second, r.GorgSecond = "ok", "ok"
	for _, n := range rep.SecondOrder {
		r.SecondRel = max(r.SecondRel, n.HessianVectorVsFD.MaxRel, n.GradOfGradVsFD.MaxRel)
		if n.Verdict != "ok" {
			r.Second = "WRONG"
		}
		if n.Gorgonia != "ok" {
			r.GorgSecond = strings.SplitN(n.Gorgonia, ":", 2)[0]
		}
	}
}

func printTable(w io.Writer, rows []Row) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "graph\tkind\tdtype\tbulkad vs fd\tnodes vs fd\tbulkad\tgorgonia vs fd\tgorgonia\tH·v vs fd (rel)\tbulkad 2nd\tgorgonia 2nd")
	nb, ng, nb2, ng2 := 0, 0, 0, 0
	for _, r := range rows {
		gfd := fmt.Sprintf("%.1e", r.GorgFD)
		if r.GorgFD < 0 {
			gfd = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%.1e\t%.1e\t%s\t%s\t%s\t%.1e\t%s\t%s\n", r.Graph, r.Kind, r.Dtype, r.BulkadFD, r.NodesFD, r.Bulkad, gfd, r.Gorgonia,
			r.SecondRel, r.Second, r.GorgSecond)
		if r.Bulkad == "ok" {
			nb++
		}
		if r.Gorgonia == "ok" {
			ng++
		}
		if r.Second == "ok" {
			nb2++
		}
		if r.GorgSecond == "ok" {
			ng2++
		}
	}
	tw.Flush()
	fmt.Fprintf(w, "\nbulkad matches finite differences on %d/%d graphs; Gorgonia on %d/%d.\n", nb, len(rows), ng, len(rows))
	fmt.Fprintf(w, "Second order (H·v): bulkad matches differences of the gradient on %d/%d graphs; Gorgonia's Grad twice on %d/%d.\n", nb2, len(rows), ng2, len(rows))
	var bad []string
	for _, r := range rows {
		if r.Gorgonia == "wrong" || r.Gorgonia == "failed" {
			bad = append(bad, r.Graph)
		}
	}
	if len(bad) > 0 {
		fmt.Fprintf(w, "Gorgonia wrong or failing: %s.\n", strings.Join(bad, ", "))
	}
}
