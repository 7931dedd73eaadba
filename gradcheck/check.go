package gradcheck

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/pkg/errors"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/bulkad/bulkad/adapter"
	"github.com/bulkad/bulkad/core"
	"github.com/bulkad/bulkad/internal/graphargs"
	"github.com/bulkad/bulkad/raise"
)

// Option configures Check.
type Option func(*config)

type config struct {
	atol, rtol float64
	tolSet     bool
	step       float64
	seed       int64
	maxProbes  int
	gorgonia   bool
	second     bool // WithSecondOrder
	nilOption  int  // index of the first nil option, or -1
}

// WithTolerance sets the comparison rule |got − want| ≤ atol + rtol·|want|, applied entry by
// entry with the finite-difference value as want. Defaults: atol 1e-6, rtol 1e-5 for float64
// graphs; atol 1e-3, rtol 1e-3 for float32 graphs (their gradients are computed in float32).
// Both must be ≥ 0 (+Inf accepts everything); Check refuses a negative or NaN tolerance.
func WithTolerance(atol, rtol float64) Option {
	return func(c *config) { c.atol, c.rtol, c.tolSet = atol, rtol, true }
}

// WithStep sets the finite-difference step h (default 1e-6): each probed entry x is moved to
// x ± h·max(1, |x|) and the cost difference divided by the distance. Check refuses a step
// that is not a finite number > 0.
func WithStep(h float64) Option { return func(c *config) { c.step = h } }

// WithSeed sets the seed that chooses which entries are probed (default 1).
func WithSeed(seed int64) Option { return func(c *config) { c.seed = seed } }

// WithMaxProbes sets the largest number of entries probed per wrt tensor (default 16; 0 or
// less probes every entry). Probing a random subset keeps big models fast.
func WithMaxProbes(n int) Option { return func(c *config) { c.maxProbes = n } }

// WithGorgonia sets whether Gorgonia's own Grad is run for comparison (default true).
func WithGorgonia(on bool) Option { return func(c *config) { c.gorgonia = on } }

// ErrStat summarises the differences between two gradients over the probed entries.
//
// MaxRel is the largest |got − want| / max(|got|, |want|, scale), where scale is the largest
// |want| over the node's probed entries: relative to the entry where the entry is large,
// relative to the gradient's magnitude where it is near zero (so a tiny absolute error on an
// entry that should be 0 does not read as a relative error of 1e300). It is 0 where got and
// want are both 0.
type ErrStat struct {
	MaxAbs float64 `json:"max_abs"`
	MaxRel float64 `json:"max_rel"`
	OK     bool    `json:"ok"` // every probed entry within the tolerance
}

// NodeReport is Check's result for one wrt node.
type NodeReport struct {
	Name   string `json:"name"`
	Shape  []int  `json:"shape"`
	Probed int    `json:"probed"`
	// BulkadVsFD compares bulkad's gradient (its core artifact, evaluated by package core)
	// with central finite differences.
	BulkadVsFD ErrStat `json:"bulkad_vs_fd"`
	// RaisedVsFD compares the gradient nodes that Grad adds to the graph, run on a
	// TapeMachine (on a clone of the graph), with central finite differences: what a user
	// runs. For a graph with random operations, whose every run draws new values, it is nil
	// and RaisedVsArtifact compares them with the artifact evaluated at the same run's values.
	RaisedVsFD       *ErrStat `json:"raised_vs_fd,omitempty"`
	RaisedVsArtifact *ErrStat `json:"raised_vs_artifact,omitempty"`
	// GorgoniaVsFD and BulkadVsGorgonia are set when Gorgonia ran and succeeded.
	GorgoniaVsFD     *ErrStat `json:"gorgonia_vs_fd,omitempty"`
	BulkadVsGorgonia *ErrStat `json:"bulkad_vs_gorgonia,omitempty"`
	// Gorgonia is "ok", "wrong", "failed: <reason>" or "not run".
	Gorgonia string `json:"gorgonia"`
	// Verdict is a one-word summary: "ok" when bulkad matches finite differences, else "WRONG".
	Verdict string `json:"verdict"`
}

// Report is the result of Check.
type Report struct {
	Cost  string  `json:"cost"`
	Dtype string  `json:"dtype"`
	Value float64 `json:"value"`
	// ForwardMismatch is the relative difference between Gorgonia's forward value of the cost
	// and the value of bulkad's translation (should be ~0; large means a translation bug).
	ForwardMismatch float64 `json:"forward_mismatch"`
	Atol            float64 `json:"atol"`
	Rtol            float64 `json:"rtol"`
	// GorgoniaError is set when Gorgonia's Grad or TapeMachine failed (error or panic).
	GorgoniaError string `json:"gorgonia_error,omitempty"`
	// BulkadError is set when bulkad could not differentiate or run the graph.
	BulkadError string `json:"bulkad_error,omitempty"`
	// RaisedError is set when Grad's nodes could not be added to a clone of the graph or run
	// there, when a gradient value kept from one run was changed by the next run, or when two
	// runs of a graph without random operations gave different gradients.
	RaisedError string `json:"raised_error,omitempty"`
	// FDMode says how the finite differences were computed.
	FDMode string       `json:"fd_mode"`
	Nodes  []NodeReport `json:"nodes"`
	// SecondOrder holds the second-order rows (WithSecondOrder), one per wrt node;
	// SecondOrderError says why there are none when the check was asked for but could not
	// run; SecondOrderTol is its tolerance (relative to the largest difference).
	SecondOrder      []SecondOrderReport `json:"second_order,omitempty"`
	SecondOrderError string              `json:"second_order_error,omitempty"`
	SecondOrderTol   float64             `json:"second_order_tol,omitempty"`
	// SecondOrderSkipped marks a SecondOrderError that is no failure (random operations, a
	// repeated wrt node).
	SecondOrderSkipped bool `json:"second_order_skipped,omitempty"`
	secondRun          bool
}

// OK reports whether bulkad's gradient — its artifact and the nodes Grad adds, run on a
// TapeMachine — matched finite differences for every wrt node and its forward value matched
// Gorgonia's.
func (r *Report) OK() bool {
	if r.BulkadError != "" || r.RaisedError != "" || len(r.Nodes) == 0 {
		return false
	}
	if r.ForwardMismatch > math.Max(r.Rtol, 1e-6) {
		return false
	}
	for _, n := range r.Nodes {
		if !n.BulkadVsFD.OK || (n.RaisedVsFD == nil && n.RaisedVsArtifact == nil) {
			return false
		}
		if (n.RaisedVsFD != nil && !n.RaisedVsFD.OK) || (n.RaisedVsArtifact != nil && !n.RaisedVsArtifact.OK) {
			return false
		}
	}
	return r.secondOK()
}

// JSON returns the report as indented JSON.
func (r *Report) JSON() ([]byte, error) { return json.MarshalIndent(r, "", "  ") }

func fmtStat(s *ErrStat) string {
	if s == nil {
		return "-"
	}
	return fmt.Sprintf("%.1e / %.1e", s.MaxAbs, s.MaxRel)
}

// String renders the report as an aligned table (errors as max abs / max rel).
func (r *Report) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "cost %s (%s) = %.6g; tolerance |Δ| ≤ %.0e + %.0e·|fd|\n", r.Cost, r.Dtype, r.Value, r.Atol, r.Rtol)
	fmt.Fprintf(&b, "finite differences: %s; forward mismatch %.1e\n", r.FDMode, r.ForwardMismatch)
	if r.BulkadError != "" {
		fmt.Fprintf(&b, "bulkad failed: %s\n", r.BulkadError)
	}
	if r.RaisedError != "" {
		fmt.Fprintf(&b, "bulkad's gradient nodes failed: %s\n", r.RaisedError)
	}
	if r.GorgoniaError != "" {
		fmt.Fprintf(&b, "gorgonia failed: %s\n", r.GorgoniaError)
	}
	w := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "node\tshape\tprobed\tbulkad vs fd\tnodes vs fd\tgorgonia vs fd\tbulkad vs gorgonia\tgorgonia\tverdict")
	for _, n := range r.Nodes {
		raised := fmtStat(n.RaisedVsFD)
		if n.RaisedVsArtifact != nil {
			raised = fmtStat(n.RaisedVsArtifact) + " (vs artifact)"
		}
		fmt.Fprintf(w, "%s\t%v\t%d\t%s\t%s\t%s\t%s\t%s\t%s\n", n.Name, n.Shape, n.Probed, fmtStat(&n.BulkadVsFD), raised,
			fmtStat(n.GorgoniaVsFD), fmtStat(n.BulkadVsGorgonia), n.Gorgonia, n.Verdict)
	}
	w.Flush()
	secondOrderTable(&b, r)
	return b.String()
}

// Check differentiates cost with respect to wrt four ways — bulkad's gradient artifact, the
// nodes bulkad.Grad adds run on a TapeMachine, Gorgonia's own Grad (both on clones of the
// graph, so the caller's graph is untouched), and central finite differences — and compares
// them on a random subset of entries (see WithMaxProbes). Bulkad passes (Report.OK) when both
// its artifact and its nodes match the differences: the nodes are what a user runs, and
// a defect of the raised graph (a value read after the TapeMachine overwrote it in place, a
// gradient value changed by the next run) shows only there. The nodes' machine runs twice
// (the first run's gradient values must survive the second).
//
// The point of evaluation is the graph's current input values. Finite differences are the
// reference and always run in float64:
//   - for a float64 graph whose wrt nodes are inputs and which has no random operations, by
//     re-running Gorgonia's own forward pass on a clone (independent of bulkad's translation);
//   - otherwise on bulkad's translation of the graph promoted to float64 (every f32 in the core
//     program replaced by f64) with the nodes that do not depend on wrt — random ones such as
//     dropout masks included — held at the values one forward pass gave them. The report's
//     ForwardMismatch compares the translation's value with Gorgonia's.
//
// A failure inside Gorgonia (error or panic) is recorded in the report, never returned; so is
// a graph bulkad cannot differentiate (Report.BulkadError), as long as finite differences can
// still be computed.
func Check(cost *gorgonia.Node, wrt gorgonia.Nodes, opts ...Option) (*Report, error) {
	cfg := config{step: 1e-6, seed: 1, maxProbes: 16, gorgonia: true, nilOption: -1}
	for i, o := range opts {
		if o == nil {
			if cfg.nilOption < 0 {
				cfg.nilOption = i
			}
			continue
		}
		o(&cfg)
	}
	if err := cfg.validate(); err != nil {
		return nil, errors.Wrap(err, "gradcheck")
	}
	if err := graphargs.Check(cost, wrt); err != nil {
		return nil, errors.Wrap(err, "gradcheck")
	}
	c := &checkRun{g: cost.Graph(), cost: cost, wrt: wrt, idx: map[*gorgonia.Node]int{}, f32: cost.Dtype() == tensor.Float32}
	for i, n := range c.g.AllNodes() {
		c.idx[n] = i
	}
	if !cfg.tolSet {
		cfg.atol, cfg.rtol = 1e-6, 1e-5
		if c.f32 {
			cfg.atol, cfg.rtol = 1e-3, 1e-3
		}
	}
	c.cfg = cfg
	c.rep = &Report{Cost: cost.Name(), Dtype: "float64", Atol: cfg.atol, Rtol: cfg.rtol}
	if c.f32 {
		c.rep.Dtype = "float32"
	}

	// The translation is made first: its parameters name the nodes whose values fix the point
	// of evaluation.
	c.tr, c.terr = adapter.Translate(cost, wrt...)
	c.need = []int{c.idx[cost]}
	for _, n := range wrt {
		c.need = append(c.need, c.idx[n])
	}
	if c.terr == nil {
		for _, n := range c.tr.Params {
			if i, ok := c.idx[n]; ok {
				c.need = append(c.need, i)
			}
		}
	}

	// 1. Gorgonia's Grad on a clone, and the point of evaluation from a protected forward pass.
	var err error
	if cfg.gorgonia {
		if c.ggrads, _, _, err = gorgoniaGrads(c.g, cost, wrt, c.idx, c.need); err != nil {
			c.rep.GorgoniaError = err.Error()
			c.ggrads = nil
		}
	}
	// The point is read from a forward pass of its own, with the needed values protected from
	// Gorgonia's in-place ops on views (Gorgonia's gradient run is left as Gorgonia runs it).
	var gcost float64
	if c.vals, gcost, err = forwardValues(c.g, cost, c.idx, c.need); err != nil {
		return nil, errors.Wrap(err, "gradcheck: forward pass on a clone of the graph")
	}
	c.rep.Value = gcost
	c.runBulkad(gcost) // 2.
	c.runRaised()      // 2b.
	if c.terr != nil {
		c.tr = nil
	}
	if err := c.compareAll(); err != nil { // 3.
		return nil, err
	}
	if cfg.second {
		rep := c.rep
		rep.secondRun, rep.SecondOrderTol = true, secondOrderTol(c.f32)
		var so []SecondOrderReport
		if so, err = secondOrder(c.g, cost, c.wrt, c.idx, c.tr, c.args, cfg, c.f32); err != nil {
			_, rep.SecondOrderSkipped = err.(errSkip)
			rep.SecondOrderError = err.Error()
		}
		rep.SecondOrder = so
	}
	return c.rep, nil
}

// pointArgs reads the translation's parameter values from the forward values.
func pointArgs(tr *adapter.Translation, vals map[int]gorgonia.Value, idx map[*gorgonia.Node]int) (map[string]*tensor.Dense, error) {
	args := map[string]*tensor.Dense{}
	for name, n := range tr.Params {
		i, ok := idx[n]
		if !ok || vals[i] == nil {
			return nil, errors.Errorf("node %s (parameter %s) has no value; give every input a value first", n.Name(), name)
		}
		d, ok := vals[i].(*tensor.Dense)
		if !ok {
			var err error
			if d, err = scalarDense(vals[i]); err != nil {
				return nil, errors.Wrapf(err, "value of %s", n.Name())
			}
		}
		args[name] = d
	}
	for name, n := range tr.Zero { // perturbations of interior wrt nodes: zero at the point
		for _, v := range tr.Program.Params {
			if v.Name == name {
				z, err := zeroDense(v.Type())
				if err != nil {
					return nil, errors.Wrapf(err, "perturbation of %s", n.Name())
				}
				args[name] = z
			}
		}
	}
	return args, nil
}

// zeroDense is a tensor of zeros of a core float type.
func zeroDense(t core.Type) (*tensor.Dense, error) {
	sh := []int(t.Shape)
	switch t.Dtype {
	case core.Float64:
		if len(sh) == 0 {
			return tensor.New(tensor.FromScalar(float64(0))), nil
		}
		return tensor.New(tensor.WithShape(sh...), tensor.Of(tensor.Float64)), nil
	case core.Float32:
		if len(sh) == 0 {
			return tensor.New(tensor.FromScalar(float32(0))), nil
		}
		return tensor.New(tensor.WithShape(sh...), tensor.Of(tensor.Float32)), nil
	}
	return nil, errors.Errorf("dtype %v has no gradient", t.Dtype)
}

// compare checks got[probes[j]] against want[j] (MaxRel: see ErrStat).
func compare(got, want []float64, probes []int, cfg config) ErrStat {
	s := ErrStat{OK: true}
	scale := 0.0
	for _, w := range want {
		if !math.IsNaN(w) {
			scale = math.Max(scale, math.Abs(w))
		}
	}
	for j, e := range probes {
		if e >= len(got) {
			s.OK = false
			s.MaxAbs = math.Inf(1)
			continue
		}
		d := math.Abs(got[e] - want[j])
		if math.IsNaN(d) {
			d = math.Inf(1)
		}
		s.MaxAbs = math.Max(s.MaxAbs, d)
		if d > 0 {
			s.MaxRel = math.Max(s.MaxRel, d/math.Max(math.Max(math.Abs(got[e]), math.Abs(want[j])), scale))
		}
		if !(d <= cfg.atol+cfg.rtol*math.Abs(want[j])) {
			s.OK = false
		}
	}
	if len(probes) == 0 {
		s.MaxRel = 0
	}
	return s
}

// chooseProbes picks up to max distinct entries of n (all when max ≤ 0 or n ≤ max), sorted.
func chooseProbes(rng *rand.Rand, n, max int) []int {
	if max <= 0 || n <= max {
		p := make([]int, n)
		for i := range p {
			p[i] = i
		}
		return p
	}
	p := rng.Perm(n)[:max]
	sort.Ints(p)
	return p
}

// readAll adds a Read of every needed node to the clone g2 (a TapeMachine reuses the registers
// of values it no longer needs, so node values must be pinned to be read after a run).
func readAll(g2 *gorgonia.ExprGraph, need []int) map[int]*gorgonia.Value {
	all := g2.AllNodes()
	slots := map[int]*gorgonia.Value{}
	for _, i := range need {
		if _, ok := slots[i]; ok {
			continue
		}
		n := all[i]
		if n.Op() == nil {
			continue // inputs keep their values
		}
		v := new(gorgonia.Value)
		gorgonia.Read(n, v)
		slots[i] = v
	}
	return slots
}

func collect(all gorgonia.Nodes, need []int, slots map[int]*gorgonia.Value) (map[int]gorgonia.Value, error) {
	vals := map[int]gorgonia.Value{}
	for _, i := range need {
		var v gorgonia.Value
		if s, ok := slots[i]; ok {
			v = *s
		} else {
			v = all[i].Value()
		}
		if v == nil {
			continue
		}
		c, err := gorgonia.CloneValue(v)
		if err != nil {
			return nil, err
		}
		vals[i] = c
	}
	return vals, nil
}

// cloneWith clones g and returns the clone, its nodes (in g.AllNodes() order) and the clones
// of the wrt nodes (idx gives each node's index in g.AllNodes()).
func cloneWith(g *gorgonia.ExprGraph, wrt gorgonia.Nodes, idx map[*gorgonia.Node]int) (*gorgonia.ExprGraph, gorgonia.Nodes, gorgonia.Nodes, error) {
	g2 := g.Clone().(*gorgonia.ExprGraph)
	all := g2.AllNodes()
	wrt2 := make(gorgonia.Nodes, len(wrt))
	for i, n := range wrt {
		j, ok := idx[n]
		if !ok {
			return nil, nil, nil, errors.Errorf("wrt node %s is not in the cost's graph", n.Name())
		}
		wrt2[i] = all[j]
	}
	return g2, all, wrt2, nil
}

// gorgoniaGrads runs gorgonia.Grad and a TapeMachine on a clone of g, returning the wrt
// gradients, the values of the needed nodes (by index in g.AllNodes()) and the cost. Panics
// become errors.
func gorgoniaGrads(g *gorgonia.ExprGraph, cost *gorgonia.Node, wrt gorgonia.Nodes, idx map[*gorgonia.Node]int, need []int) (grads []*tensor.Dense, vals map[int]gorgonia.Value, c float64, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = errors.Errorf("panic: %v", r)
		}
	}()
	g2, all, wrt2, err := cloneWith(g, wrt, idx)
	if err != nil {
		return nil, nil, 0, err
	}
	slots := readAll(g2, need)
	if _, err := gorgonia.Grad(all[idx[cost]], wrt2...); err != nil {
		return nil, nil, 0, err
	}
	vm := gorgonia.NewTapeMachine(g2, gorgonia.BindDualValues(wrt2...))
	defer vm.Close()
	if err := vm.RunAll(); err != nil {
		return nil, nil, 0, err
	}
	for _, n := range wrt2 {
		gv, err := n.Grad()
		if err != nil {
			return nil, nil, 0, err
		}
		d, ok := gv.(*tensor.Dense)
		if !ok {
			if d, err = scalarDense(gv); err != nil {
				return nil, nil, 0, err
			}
		}
		grads = append(grads, d.Clone().(*tensor.Dense))
	}
	if vals, err = collect(all, need, slots); err != nil {
		return nil, nil, 0, err
	}
	return grads, vals, costOf(vals, idx[cost]), nil
}

// forwardValues runs a forward-only TapeMachine on a clone of g.
func forwardValues(g *gorgonia.ExprGraph, cost *gorgonia.Node, idx map[*gorgonia.Node]int, need []int) (vals map[int]gorgonia.Value, c float64, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = errors.Errorf("panic: %v", r)
		}
	}()
	g2 := g.Clone().(*gorgonia.ExprGraph)
	slots := readAll(g2, need)
	if err := protectNeeded(g2, g2.AllNodes()[idx[cost]]); err != nil {
		return nil, 0, err
	}
	// Input values are copied before the run: Gorgonia may run an op in place on a view of an
	// input (Σ Reshape(x) ⊙ r writes x ⊙ r into x), and the point of evaluation is x.
	all := g2.AllNodes()
	before := map[int]gorgonia.Value{}
	for _, i := range need {
		if n := all[i]; n.Op() == nil && n.Value() != nil {
			c, err := gorgonia.CloneValue(n.Value())
			if err != nil {
				return nil, 0, errors.Wrapf(err, "copying the value of %s", n.Name())
			}
			before[i] = c
		}
	}
	vm := gorgonia.NewTapeMachine(g2)
	defer vm.Close()
	if err := vm.RunAll(); err != nil {
		return nil, 0, err
	}
	if vals, err = collect(all, need, slots); err != nil {
		return nil, 0, err
	}
	for i, v := range before {
		vals[i] = v
	}
	return vals, costOf(vals, idx[cost]), nil
}

func costOf(vals map[int]gorgonia.Value, i int) float64 {
	v, ok := vals[i]
	if !ok {
		return math.NaN()
	}
	return toFloats(scalarOrDense(v))[0]
}

func scalarOrDense(v gorgonia.Value) *tensor.Dense {
	if d, ok := v.(*tensor.Dense); ok {
		return d
	}
	d, _ := scalarDense(v)
	return d
}

// scalarDense converts a Gorgonia scalar value (F64, F32, …) into a rank-0 dense tensor.
func scalarDense(v gorgonia.Value) (*tensor.Dense, error) {
	if v == nil {
		return nil, errors.New("no value")
	}
	switch x := v.Data().(type) {
	case float64, float32, int64, bool:
		return tensor.New(tensor.FromScalar(x)), nil
	case int:
		return tensor.New(tensor.FromScalar(int64(x))), nil
	}
	return nil, errors.Errorf("value of type %T not supported", v)
}

// toFloats returns the elements of d as float64: its backing array for float64 (not a copy),
// a converted copy for float32, and [NaN] for no tensor or another dtype.
func toFloats(d *tensor.Dense) []float64 {
	switch {
	case d == nil:
	case d.Dtype() == tensor.Float64:
		return d.Float64s()
	case d.Dtype() == tensor.Float32:
		return widen(d.Float32s())
	}
	return []float64{math.NaN()}
}

// widen converts float32s to float64s.
func widen(x []float32) []float64 {
	out := make([]float64, len(x))
	for i, v := range x {
		out[i] = float64(v)
	}
	return out
}

// toF64Dense copies d, converting float32 to float64.
func toF64Dense(d *tensor.Dense) *tensor.Dense {
	if d.Dtype() != tensor.Float32 {
		return d.Clone().(*tensor.Dense)
	}
	vals := toFloats(d)
	if d.Shape().IsScalar() {
		return tensor.New(tensor.FromScalar(vals[0]))
	}
	return tensor.New(tensor.WithShape(d.Shape().Clone()...), tensor.WithBacking(vals))
}

// promote returns p with every f32 type replaced by f64 (variables, literals, casts).
func promote(p *core.Program) (*core.Program, error) {
	memo := map[core.Term]core.Term{}
	pt := func(t core.Type) core.Type {
		if t.Dtype == core.Float32 {
			t.Dtype = core.Float64
		}
		return t
	}
	pv := func(v *core.Var) (*core.Var, error) {
		if v.Type().Dtype != core.Float32 {
			return v, nil
		}
		return core.NewVar(v.Name, pt(v.Type()))
	}
	var err error
	core.PostOrder(p.Body, func(t core.Term) {
		if err != nil {
			return
		}
		kids := core.Children(t)
		nk := make([]core.Term, len(kids))
		for i, k := range kids {
			nk[i] = memo[k]
		}
		var out core.Term
		switch x := t.(type) {
		case *core.Var:
			out, err = pv(x)
		case *core.Lit:
			if x.Type().Dtype == core.Float32 {
				out, err = core.NewLitF(pt(x.Type()), x.F)
			} else {
				out = x
			}
		case *core.Cast:
			to := x.To
			if to == core.Float32 {
				to = core.Float64
			}
			out, err = core.NewCast(to, nk[0])
		case *core.Let:
			var v *core.Var
			if v, err = pv(x.Var); err == nil {
				out, err = core.NewLet(v, nk[0], nk[1])
			}
		default:
			out, err = core.Rebuild(t, nk)
		}
		memo[t] = out
	})
	if err != nil {
		return nil, err
	}
	params := make([]*core.Var, len(p.Params))
	for i, v := range p.Params {
		if params[i], err = pv(v); err != nil {
			return nil, err
		}
	}
	return core.NewProgram(params, memo[p.Body])
}

// protectNeeded keeps the values of a clone intact until after the cost (and the extra
// nodes) ran: Gorgonia may otherwise run a later op in place on a view of one of
// them and the value read would not be the point of evaluation (found by FuzzGrad: an
// intermediate wrt node h with Reshape(h) − x5 computed in place).
func protectNeeded(g2 *gorgonia.ExprGraph, after ...*gorgonia.Node) error {
	return errors.Wrap(raise.Protect(g2, after), "protecting the values read from Gorgonia's forward pass")
}
