package gradcheck

import (
	"fmt"
	"math"
	"math/rand"
	"strings"
	"text/tabwriter"

	"github.com/bulkad/bulkad"

	"github.com/bulkad/bulkad/ad"
	"github.com/bulkad/bulkad/adapter"
	"github.com/bulkad/bulkad/kernel"
	"github.com/pkg/errors"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// WithSecondOrder adds a second-order check to Check: the Hessian-vector product H·v along a
// random direction v (seeded by WithSeed), computed by the nodes HessianVector adds and by
// bulkad.Grad applied twice (Grad of Σ g ⊙ v), both run on a TapeMachine on a clone of the
// graph, against central differences of the float64 gradient along v, (∇f(x + εv) −
// ∇f(x − εv)) / 2ε with ε = 1e-5 (the gradient of bulkad's translation promoted to float64,
// evaluated by package kernel; first-order Check validates it). Every entry must be within
// 1e-6 of the differences' largest magnitude for float64 graphs, 2e-3 for float32 graphs.
// Gorgonia's Grad applied twice is run beside it (Report.SecondOrder[i].Gorgonia: ok, wrong,
// panics, refused). Graphs with random operations are not checked (Report.SecondOrderError).
func WithSecondOrder() Option { return func(c *config) { c.second = true } }

// secondOK says whether the second-order part (when it ran) passed: every row ok, or the
// check skipped for a reason that is no failure of bulkad (random operations, a repeated wrt
// node).
func (r *Report) secondOK() bool {
	if !r.secondRun {
		return true
	}
	if r.SecondOrderError != "" {
		return r.SecondOrderSkipped
	}
	for _, n := range r.SecondOrder {
		if n.Verdict != "ok" {
			return false
		}
	}
	return len(r.SecondOrder) > 0
}

// SecondOrderReport is the second-order result for one wrt node (see WithSecondOrder).
type SecondOrderReport struct {
	Name  string `json:"name"`
	Shape []int  `json:"shape"`
	// HessianVectorVsFD compares the HessianVector nodes with the differences of the gradient.
	HessianVectorVsFD ErrStat `json:"hessian_vector_vs_fd"`
	// GradOfGradVsFD compares bulkad.Grad(Σ g ⊙ v) for g from Grad with the differences.
	GradOfGradVsFD ErrStat `json:"grad_of_grad_vs_fd"`
	// Gorgonia is "ok", "wrong", "panics: …", "refused: …" or "not run".
	Gorgonia     string   `json:"gorgonia"`
	GorgoniaVsFD *ErrStat `json:"gorgonia_vs_fd,omitempty"`
	// Verdict is "ok" when both of bulkad's products match the differences, else "WRONG".
	Verdict string `json:"verdict"`
}

// errSkip is the reason a second-order check was not run (not a failure of bulkad).
type errSkip string

func (e errSkip) Error() string { return "not checked: " + string(e) }

// secondOrderTol is the largest |Δ| of an entry relative to the largest |difference|.
func secondOrderTol(f32 bool) float64 {
	if f32 {
		return 2e-3
	}
	return 1e-6
}

// secondOrder runs the check of WithSecondOrder; args are the translation's arguments at the
// point (pointArgs, zeros for interior wrt nodes included).
func secondOrder(g *gorgonia.ExprGraph, cost *gorgonia.Node, wrt gorgonia.Nodes, idx map[*gorgonia.Node]int,
	tr *adapter.Translation, args map[string]*tensor.Dense, cfg config, f32 bool) ([]SecondOrderReport, error) {
	if tr == nil || args == nil {
		return nil, errors.New("bulkad cannot translate the graph (see the bulkad error)")
	}
	if hasRandom(g) {
		return nil, errSkip("the graph has random operations (each run draws new values)")
	}
	for i, w := range wrt {
		for _, u := range wrt[:i] {
			if u == w {
				return nil, errSkip("wrt node " + w.Name() + " is given twice (HessianVector takes each node once)")
			}
		}
	}
	rng := rand.New(rand.NewSource(cfg.seed))
	dirs := make([][]float64, len(wrt))
	for i, w := range wrt {
		dirs[i] = make([]float64, nodeSize(w))
		for j := range dirs[i] {
			dirs[i][j] = 2*rng.Float64() - 1
		}
	}
	ref, err := gradDifferences(tr, args, dirs)
	if err != nil {
		return nil, errors.Wrap(err, "differences of the float64 gradient")
	}
	hv, gg, err := bulkadSecond(g, cost, wrt, idx, dirs)
	if err != nil {
		return nil, errors.Wrap(err, "bulkad's second-order nodes")
	}
	var gor [][]float64
	gorMsg := "not run"
	if cfg.gorgonia {
		gor, gorMsg = gorgoniaSecond(g, cost, wrt, idx, dirs)
	}
	tol := secondOrderTol(f32)
	// A row whose H·v is 0 (a parameter the cost is invariant to, like a conv bias before a
	// batch norm) is compared at a thousandth of the largest row's scale: the differences of
	// the gradient carry noise of the gradient's size, not of the row's.
	global := 0.0
	for _, row := range ref {
		for _, x := range row {
			global = math.Max(global, math.Abs(x))
		}
	}
	var out []SecondOrderReport
	for i, w := range wrt {
		probes := make([]int, len(ref[i]))
		scale := 1e-3 * global
		for j := range probes {
			probes[j] = j
			scale = math.Max(scale, math.Abs(ref[i][j]))
		}
		c := config{atol: tol * math.Max(scale, 1e-12)}
		r := SecondOrderReport{Name: w.Name(), Shape: append([]int{}, w.Shape()...), Gorgonia: gorMsg}
		r.HessianVectorVsFD = compare(hv[i], ref[i], probes, c)
		r.GradOfGradVsFD = compare(gg[i], ref[i], probes, c)
		if gor != nil {
			s := compare(gor[i], ref[i], probes, c)
			r.GorgoniaVsFD = &s
			r.Gorgonia = "ok"
			if !s.OK {
				r.Gorgonia = "wrong"
			}
		}
		r.Verdict = "ok"
		if !r.HessianVectorVsFD.OK || !r.GradOfGradVsFD.OK {
			r.Verdict = "WRONG"
		}
		out = append(out, r)
	}
	return out, nil
}

func nodeSize(n *gorgonia.Node) int {
	if n.IsScalar() {
		return 1
	}
	return n.Shape().TotalSize()
}

// gradDifferences returns (∇f(x + εv) − ∇f(x − εv)) / 2ε per wrt parameter, with the
// translation promoted to float64 and its gradient evaluated by package kernel.
func gradDifferences(tr *adapter.Translation, args map[string]*tensor.Dense, dirs [][]float64) ([][]float64, error) {
	const eps = 1e-5
	p64, err := promote(tr.Program)
	if err != nil {
		return nil, err
	}
	// Interior wrt nodes stay parameters (perturbed like the others), bound to 0 ± εv.
	art, err := ad.GradWith(p64, ad.Options{Wrt: tr.Wrt})
	if err != nil {
		return nil, err
	}
	at := func(sign float64) (map[string]*tensor.Dense, error) {
		a := make(map[string]*tensor.Dense, len(args))
		for k, v := range args {
			a[k] = toF64Dense(v)
		}
		for i, name := range tr.Wrt {
			base, ok := a[name]
			if !ok {
				return nil, errors.Errorf("no value for wrt parameter %s", name)
			}
			xs := append([]float64(nil), toFloats(base)...)
			for j := range xs {
				xs[j] += sign * eps * dirs[i][j]
			}
			if base.Shape().IsScalar() {
				a[name] = tensor.New(tensor.FromScalar(xs[0]))
			} else {
				a[name] = tensor.New(tensor.WithShape(base.Shape().Clone()...), tensor.WithBacking(xs))
			}
		}
		_, gs, err := art.RunWith(kernel.EvalTuple, a)
		if err != nil {
			return nil, err
		}
		return gs, nil
	}
	plus, err := at(1)
	if err != nil {
		return nil, err
	}
	minus, err := at(-1)
	if err != nil {
		return nil, err
	}
	out := make([][]float64, len(tr.Wrt))
	for i, name := range tr.Wrt {
		p, m := toFloats(plus[name]), toFloats(minus[name])
		out[i] = make([]float64, len(p))
		for j := range p {
			out[i][j] = (p[j] - m[j]) / (2 * eps)
		}
	}
	return out, nil
}

// dirNode adds an input node holding direction d of w's shape and dtype to g2.
func dirNode(g2 *gorgonia.ExprGraph, w *gorgonia.Node, d []float64, i int) *gorgonia.Node {
	name := fmt.Sprintf("bulkad_check_direction_%d", i)
	if w.IsScalar() {
		var v gorgonia.Value = gorgonia.NewF64(d[0])
		if w.Dtype() == tensor.Float32 {
			v = gorgonia.NewF32(float32(d[0]))
		}
		return gorgonia.NewScalar(g2, w.Dtype(), gorgonia.WithName(name), gorgonia.WithValue(v))
	}
	var t *tensor.Dense
	if w.Dtype() == tensor.Float32 {
		f := make([]float32, len(d))
		for j, x := range d {
			f[j] = float32(x)
		}
		t = tensor.New(tensor.WithShape(w.Shape().Clone()...), tensor.WithBacking(f))
	} else {
		t = tensor.New(tensor.WithShape(w.Shape().Clone()...), tensor.WithBacking(append([]float64(nil), d...)))
	}
	return gorgonia.NewTensor(g2, w.Dtype(), w.Shape().Dims(), gorgonia.WithShape(w.Shape().Clone()...), gorgonia.WithName(name), gorgonia.WithValue(t))
}

// cloneWrt clones g and returns the clone's cost and wrt nodes and a direction node per wrt.
func cloneWrt(g *gorgonia.ExprGraph, cost *gorgonia.Node, wrt gorgonia.Nodes, idx map[*gorgonia.Node]int, dirs [][]float64) (*gorgonia.ExprGraph, *gorgonia.Node, gorgonia.Nodes, gorgonia.Nodes, error) {
	g2, all, wrt2, err := cloneWith(g, wrt, idx)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	vs := make(gorgonia.Nodes, len(wrt))
	for i := range wrt2 {
		vs[i] = dirNode(g2, wrt2[i], dirs[i], i)
	}
	return g2, all[idx[cost]], wrt2, vs, nil
}

// sumDot builds Σ_i Σ g_i ⊙ v_i.
func sumDot(gs, vs gorgonia.Nodes) (*gorgonia.Node, error) {
	var c *gorgonia.Node
	for i := range gs {
		p, err := gorgonia.HadamardProd(gs[i], vs[i])
		if err != nil {
			return nil, err
		}
		if !p.IsScalar() {
			if p, err = gorgonia.Sum(p); err != nil {
				return nil, err
			}
		}
		if c == nil {
			c = p
		} else if c, err = gorgonia.Add(c, p); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// runRead pins the nodes' values with Read, runs a TapeMachine once and returns them.
func runRead(g2 *gorgonia.ExprGraph, ns gorgonia.Nodes) ([][]float64, error) {
	slots := make([]*gorgonia.Value, len(ns))
	for i, n := range ns {
		slots[i] = new(gorgonia.Value)
		gorgonia.Read(n, slots[i])
	}
	vm := gorgonia.NewTapeMachine(g2)
	defer vm.Close()
	if err := vm.RunAll(); err != nil {
		return nil, err
	}
	out := make([][]float64, len(ns))
	for i, s := range slots {
		if *s == nil {
			return nil, errors.Errorf("node %v has no value after the run", ns[i])
		}
		out[i] = append([]float64(nil), toFloats(scalarOrDense(*s))...)
	}
	return out, nil
}

// bulkadSecond runs HessianVector and Grad applied twice on a clone of g.
func bulkadSecond(g *gorgonia.ExprGraph, cost *gorgonia.Node, wrt gorgonia.Nodes, idx map[*gorgonia.Node]int, dirs [][]float64) (hv, gg [][]float64, err error) {
	defer func() {
		if r := recover(); r != nil {
			hv, gg, err = nil, nil, errors.Errorf("panic: %v", r)
		}
	}()
	g2, cost2, wrt2, vs, err := cloneWrt(g, cost, wrt, idx, dirs)
	if err != nil {
		return nil, nil, err
	}
	h, err := bulkad.HessianVector(cost2, wrt2, vs)
	if err != nil {
		return nil, nil, err
	}
	gs, err := bulkad.Grad(cost2, wrt2...)
	if err != nil {
		return nil, nil, err
	}
	c2, err := sumDot(gs, vs)
	if err != nil {
		return nil, nil, err
	}
	gg2, err := bulkad.Grad(c2, wrt2...)
	if err != nil {
		return nil, nil, errors.Wrap(err, "grad of grad")
	}
	vals, err := runRead(g2, append(append(gorgonia.Nodes(nil), h...), gg2...))
	if err != nil {
		return nil, nil, err
	}
	return vals[:len(wrt)], vals[len(wrt):], nil
}

// gorgoniaSecond runs gorgonia.Grad applied twice on a clone of g; the message says what
// happened when there are no values.
func gorgoniaSecond(g *gorgonia.ExprGraph, cost *gorgonia.Node, wrt gorgonia.Nodes, idx map[*gorgonia.Node]int, dirs [][]float64) (vals [][]float64, msg string) {
	defer func() {
		if r := recover(); r != nil {
			vals, msg = nil, firstLine(fmt.Sprintf("panics: %v", r))
		}
	}()
	g2, cost2, wrt2, vs, err := cloneWrt(g, cost, wrt, idx, dirs)
	if err != nil {
		return nil, firstLine("refused: " + err.Error())
	}
	gs, err := gorgonia.Grad(cost2, wrt2...)
	if err != nil {
		return nil, firstLine("refused: " + err.Error())
	}
	c2, err := sumDot(gs, vs)
	if err != nil {
		return nil, firstLine("refused: " + err.Error())
	}
	before := countOps(g2, "gorgonia.col2imOp")
	hv, err := gorgonia.Grad(c2, wrt2...)
	if err != nil {
		return nil, firstLine("refused: " + err.Error())
	}
	if countOps(g2, "gorgonia.col2imOp") > before {
		// Seen with conv2d: its col2im kernel indexes out of range inside a goroutine of its
		// own, where no recover can catch the panic; running it would end the process.
		return nil, "panics: not run (the col2im of Gorgonia's second derivative of Im2Col panics in a goroutine)"
	}
	if vals, err = runRead(g2, hv); err != nil {
		return nil, firstLine("fails at run time: " + err.Error())
	}
	return vals, ""
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if len(s) > 120 {
		s = s[:117] + "..."
	}
	return s
}

// secondOrderTable prints the second-order rows of a report.
func secondOrderTable(b *strings.Builder, r *Report) {
	if !r.secondRun {
		return
	}
	fmt.Fprintf(b, "second order: H·v along a random direction vs central differences of the float64 gradient; |Δ| ≤ %.0e·max(max|fd| of the row, 1e-3·max|fd| of all rows)\n", r.SecondOrderTol)
	if r.SecondOrderError != "" {
		fmt.Fprintf(b, "second order: %s\n", r.SecondOrderError)
		return
	}
	w := tabwriter.NewWriter(b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "node\tshape\tHessianVector vs fd\tgrad of grad vs fd\tgorgonia vs fd\tgorgonia\tverdict")
	for _, n := range r.SecondOrder {
		fmt.Fprintf(w, "%s\t%v\t%s\t%s\t%s\t%s\t%s\n", n.Name, n.Shape, fmtStat(&n.HessianVectorVsFD), fmtStat(&n.GradOfGradVsFD),
			fmtStat(n.GorgoniaVsFD), n.Gorgonia, n.Verdict)
	}
	w.Flush()
}

// countOps counts the nodes of g whose op has the Go type typ (as %T prints it, without *).
func countOps(g *gorgonia.ExprGraph, typ string) int {
	n := 0
	for _, x := range g.AllNodes() {
		if x.Op() != nil && strings.TrimPrefix(fmt.Sprintf("%T", x.Op()), "*") == typ {
			n++
		}
	}
	return n
}
