package bulkad

import (
	"fmt"
	"sort"
	"strings"

	"github.com/bulkad/bulkad/ad"
	"github.com/bulkad/bulkad/adapter"
	"github.com/bulkad/bulkad/core"
	"github.com/bulkad/bulkad/internal/graphargs"
	"github.com/bulkad/bulkad/raise"
	"github.com/pkg/errors"
	"gorgonia.org/gorgonia"
)

// Gradient is a differentiated Gorgonia cost: the translation of its graph into the core
// language and the gradient artifact. It is independent of the graph's values: build once,
// raise or evaluate many times.
type Gradient struct {
	// Translation is the cost's graph as a core program with its node bindings.
	Translation *adapter.Translation
	// Artifact is the gradient program: (value, ∂cost/∂wrt_1, …, ∂cost/∂wrt_k).
	Artifact *ad.Artifact
	// RaiseStats, when non-nil, receives where the time of the next Raise or RaiseOn went
	// (planning, building, and Gorgonia's own node constructors; see raise.Stats).
	RaiseStats *raise.Stats

	cost *gorgonia.Node
	wrt  gorgonia.Nodes // as given (may repeat a node)
	uniq gorgonia.Nodes // distinct wrt nodes, in order of first appearance (the artifact's order)
	pos  []int          // wrt[i] is uniq[pos[i]]
}

// Program returns the gradient program (printable with String).
func (d *Gradient) Program() *core.Program { return d.Artifact.Program() }

// String prints the gradient program in the core syntax.
func (d *Gradient) String() string { return d.Artifact.Program().String() }

// Cost returns the differentiated cost node.
func (d *Gradient) Cost() *gorgonia.Node { return d.cost }

// Wrt returns the nodes the gradient is taken with respect to, in order (as given).
func (d *Gradient) Wrt() gorgonia.Nodes { return append(gorgonia.Nodes(nil), d.wrt...) }

// Bindings maps every parameter and kept let of the gradient program to the Gorgonia node
// whose value it denotes.
func (d *Gradient) Bindings() map[string]*gorgonia.Node {
	m := make(map[string]*gorgonia.Node, len(d.Translation.Params)+len(d.Translation.Lets))
	for k, n := range d.Translation.Params {
		m[k] = n
	}
	for k, n := range d.Translation.Lets {
		m[k] = n
	}
	return m
}

// Differentiate returns the inspectable gradient of cost with respect to wrt (its core
// program, printable) without touching the graph.
func Differentiate(cost *gorgonia.Node, wrt ...*gorgonia.Node) (*Gradient, error) {
	if err := graphargs.Check(cost, wrt); err != nil {
		return nil, wrapOnce(err, "grad")
	}
	var uniq gorgonia.Nodes
	pos := make([]int, len(wrt))
	first := map[*gorgonia.Node]int{}
	for i, w := range wrt {
		k, ok := first[w]
		if !ok {
			k = len(uniq)
			first[w] = k
			uniq = append(uniq, w)
		}
		pos[i] = k
	}
	tr, opts, err := translateForAD("grad", cost, uniq)
	if err != nil {
		return nil, err
	}
	art, err := ad.GradWith(tr.Program, opts)
	if err != nil {
		return nil, wrapOnce(err, "grad")
	}
	if len(art.Wrt()) != len(uniq) {
		return nil, errors.Errorf("bulkad: grad: the artifact has %d gradients for %d wrt nodes", len(art.Wrt()), len(uniq))
	}
	return &Gradient{Translation: tr, Artifact: art, cost: cost, wrt: append(gorgonia.Nodes(nil), wrt...), uniq: uniq, pos: pos}, nil
}

// translateForAD translates cost with respect to wrt (for operation op, which errors name)
// and returns the options of the differentiation: the translation's wrt parameters, its zero
// perturbations, and every let kept (sorted by name), so that the derivative reads the nodes'
// values instead of recomputing them.
func translateForAD(op string, cost *gorgonia.Node, wrt gorgonia.Nodes) (*adapter.Translation, ad.Options, error) {
	tr, err := adapter.Translate(cost, wrt...)
	if err != nil {
		return nil, ad.Options{}, wrapOnce(err, op)
	}
	keep := make([]string, 0, len(tr.Lets)+len(tr.Slots))
	for k := range tr.Lets {
		keep = append(keep, k)
	}
	for k := range tr.Slots {
		keep = append(keep, k)
	}
	sort.Strings(keep)
	return tr, ad.Options{Wrt: tr.Wrt, Keep: keep, AtZero: tr.ZeroNames()}, nil
}

// Grad is a drop-in replacement for gorgonia.Grad: same arguments, same result order, gradient nodes
// added to cost's graph and registered with gorgonia.SetDerivOf so BindDualValues and solvers work.
//
// Unlike gorgonia.Grad, a wrt node need not be an input: bulkad differentiates with respect to
// any node the cost depends on without cutting the graph there (an intermediate node gets its
// adjoint, every other gradient stays the full derivative), and only the wrt nodes get a
// gradient node (GradAll gives one to every node on the path). A wrt node the cost does not
// depend on gets zeros. See the package documentation for the other differences. On error
// the graph is unchanged.
func Grad(cost *gorgonia.Node, wrt ...*gorgonia.Node) (gorgonia.Nodes, error) {
	return Options{}.Grad(cost, wrt...)
}

// Grad is the package-level Grad with the device and granularity of o.
func (o Options) Grad(cost *gorgonia.Node, wrt ...*gorgonia.Node) (gorgonia.Nodes, error) {
	d, err := Differentiate(cost, wrt...)
	if err != nil {
		return nil, err
	}
	return d.RaiseWith(o)
}

// GradAll is Grad, and every node on a path from a wrt node to the cost also gets its
// gradient node, registered with gorgonia.SetDerivOf, so n.Grad() and n.Deriv() work on
// intermediate nodes as after gorgonia.Grad (see adapter.Path for which nodes). It returns
// the gradients of wrt only. Each intermediate adjoint is a node the TapeMachine computes at
// every step, which the fused gradient of Grad avoids: use Grad, naming the few intermediate
// nodes whose gradients you read among wrt, when speed matters.
func GradAll(cost *gorgonia.Node, wrt ...*gorgonia.Node) (gorgonia.Nodes, error) {
	return Options{}.GradAll(cost, wrt...)
}

// GradAll is the package-level GradAll with the device and granularity of o.
func (o Options) GradAll(cost *gorgonia.Node, wrt ...*gorgonia.Node) (gorgonia.Nodes, error) {
	if err := graphargs.Check(cost, wrt); err != nil {
		return nil, wrapOnce(err, "grad")
	}
	path, err := adapter.Path(cost, wrt...)
	if err != nil {
		return nil, wrapOnce(err, "grad")
	}
	all := append(append(gorgonia.Nodes(nil), wrt...), path...)
	gs, err := o.Grad(cost, all...)
	if err != nil {
		return nil, err
	}
	return gs[:len(wrt)], nil
}

// Raise adds the gradient nodes to the cost's graph (as Grad does) and returns them in wrt
// order, registered with gorgonia.SetDerivOf. A wrt node given twice gets the same gradient
// node at both positions, registered once. Their kernels run where BULKAD_VULKAN says (see
// CurrentVulkan), at the granularity BULKAD_RAISE says: RaiseWith(Options{}).
func (d *Gradient) Raise() (gorgonia.Nodes, error) { return d.RaiseWith(Options{}) }

// RaiseOn is Raise with the float kernels of the gradient nodes trying the device of v (see
// raise.Vulkan) whatever BULKAD_VULKAN says; nil runs everything on the CPU. The raised nodes
// keep v: every run of the graph uses its device.
func (d *Gradient) RaiseOn(v *raise.Vulkan) (gorgonia.Nodes, error) {
	return d.RaiseWith(Options{Device: v, CPU: v == nil})
}

// RaiseWith is Raise with the device and granularity of o.
func (d *Gradient) RaiseWith(o Options) (gorgonia.Nodes, error) {
	v, coarse, err := o.resolve()
	if err != nil {
		return nil, wrapOnce(err, "grad")
	}
	salts := make([]string, len(d.uniq))
	for i, w := range d.uniq {
		salts[i] = fmt.Sprintf("grad of node %d of cost %d", w.ID(), d.cost.ID())
	}
	registered := func(i int, n *gorgonia.Node) bool {
		for _, of := range n.DerivOf() {
			if of == d.uniq[i] {
				return true
			}
		}
		return false
	}
	// A wrt node whose gradient another autodiff registered (gorgonia.Grad on the same graph)
	// would get both gradients added by BindDualValues: refuse instead of a silent sum. Every
	// gradient node bulkad registers is a node of one of raise's ops (per operation too:
	// Options.Marked wraps a native result in a copy), so the others are another autodiff's.
	index := make(map[*gorgonia.Node]int, len(d.uniq))
	for i, w := range d.uniq {
		index[w] = i
	}
	for _, n := range d.cost.Graph().AllNodes() {
		if n == nil || raise.IsRaised(n.Op()) {
			continue
		}
		for _, of := range n.DerivOf() {
			if _, ok := index[of]; ok {
				return nil, errors.Errorf("bulkad: grad: node %q already has a gradient node registered by another autodiff (node %q, op %v; gorgonia.Grad?): BindDualValues would add both gradients; differentiate the graph with one of them", of.Name(), n.Name(), n.Op())
			}
		}
	}
	outs := make(gorgonia.Nodes, len(d.uniq))
	if coarse {
		// A gradient of the same cost raised by an earlier Grad is reused (Gorgonia's
		// deduplication finds per-operation nodes again, but a coarse plan node depends on
		// all the wrt nodes it was raised for): registering a second node would make
		// BindDualValues add both.
		bySalt := map[string]*gorgonia.Node{}
		for _, n := range d.cost.Graph().AllNodes() {
			if n == nil {
				continue
			}
			if s, ok := raise.PartSalt(n.Op()); ok {
				bySalt[s] = n
			}
		}
		for i := range d.uniq {
			if n := bySalt[salts[i]]; n != nil && registered(i, n) {
				outs[i] = n
			}
		}
	}
	var comps []int
	var want []int // positions in uniq of the components raised
	var wantSalts []string
	for i := range d.uniq {
		if outs[i] == nil {
			comps = append(comps, i+1) // component 0 is the value: the cost node already computes it
			want = append(want, i)
			wantSalts = append(wantSalts, salts[i])
		}
	}
	if len(comps) > 0 {
		raised, err := raise.RaiseWith(d.cost.Graph(), d.Artifact.Program(), d.Bindings(), raise.Options{
			FreshResults: true, Marked: true, Components: comps, Vulkan: v, Stats: d.RaiseStats,
			Reuse:  func(k int, n *gorgonia.Node) bool { return registered(want[k], n) },
			Salts:  wantSalts,
			Coarse: coarse, Slots: slotsOf(d.Translation, coarse)})
		if err != nil {
			return nil, wrapOnce(err, "grad")
		}
		for k, n := range raised {
			outs[want[k]] = n
		}
	}
	if err := raise.AddGuards(d.Translation.Mutable); err != nil {
		return nil, wrapOnce(err, "grad")
	}
	for i, n := range outs {
		// Raising a gradient that is already in the graph gives back its node (Gorgonia
		// deduplicates equal nodes; copies are salted by the wrt node): registered once.
		if !registered(i, n) {
			gorgonia.SetDerivOf(n, d.uniq[i])
		}
	}
	res := make(gorgonia.Nodes, len(d.wrt))
	for i, k := range d.pos {
		res[i] = outs[k]
	}
	return res, nil
}

// slotsOf converts a translation's slots (lets read from plan nodes) for package raise, which
// reads them when it raises coarsely (otherwise the kept lets are computed from their
// definitions, which the artifact keeps).
func slotsOf(tr *adapter.Translation, coarse bool) map[string]raise.Slot {
	if len(tr.Slots) == 0 || !coarse {
		return nil
	}
	m := make(map[string]raise.Slot, len(tr.Slots))
	for k, s := range tr.Slots {
		m[k] = raise.Slot{Node: s.Node, Offset: s.Offset}
	}
	return m
}

// wrapOnce prefixes err with "bulkad: <op>: " so that each layer is named once: a leading
// "bulkad: " of err's message is dropped (CurrentVulkan's errors, an error of Grad re-wrapped),
// and so is the operation when the next layer repeats it: "ad: grad: x" under "bulkad: grad"
// reads "bulkad: grad: ad: x". errors.Cause and errors.Unwrap still reach err.
func wrapOnce(err error, op string) error {
	if err == nil {
		return nil
	}
	msg := strings.TrimPrefix(err.Error(), "bulkad: ")
	msg = strings.TrimPrefix(msg, op+": ")
	if i := strings.Index(msg, ": "); i > 0 && !strings.ContainsAny(msg[:i], " \n") && strings.HasPrefix(msg[i+2:], op+": ") {
		msg = msg[:i+2] + msg[i+2+len(op)+2:]
	}
	return &layered{msg: "bulkad: " + op + ": " + msg, cause: err}
}

// layered is an error with its own message over a cause.
type layered struct {
	msg   string
	cause error
}

func (e *layered) Error() string { return e.msg }
func (e *layered) Cause() error  { return e.cause }
func (e *layered) Unwrap() error { return e.cause }
