package bulkad

import (
	"fmt"

	"github.com/bulkad/bulkad/ad"
	"github.com/bulkad/bulkad/internal/graphargs"
	"github.com/bulkad/bulkad/raise"
	"github.com/pkg/errors"
	"gorgonia.org/gorgonia"
)

// HessianVector adds to cost's graph the nodes of the Hessian-vector product H·v of the
// scalar cost with respect to wrt along the direction v (one node per wrt node, same shape
// and dtype), and returns them in wrt order: result i is Σ_j ∂²cost/∂wrt_i∂wrt_j · v_j.
//
// It builds one program, forward over reverse (the forward derivative of bulkad's gradient
// program along v), so a product costs a small constant times one gradient; Grad applied to
// Sum(g ⊙ v) for g from Grad gives the same numbers through two reverse passes. The v nodes
// are read like any other node (inputs, or nodes computed from them); they are not
// differentiated. The results are not registered as derivatives (w.Grad() is unaffected).
// wrt nodes must be distinct; like Grad, they may be intermediate nodes. The value at
// non-smooth points follows the package documentation (second derivative 0 at kinks).
func HessianVector(cost *gorgonia.Node, wrt, v gorgonia.Nodes) (gorgonia.Nodes, error) {
	return Options{}.HessianVector(cost, wrt, v)
}

// HessianVector is the package-level HessianVector with the device and granularity of o.
func (o Options) HessianVector(cost *gorgonia.Node, wrt, v gorgonia.Nodes) (gorgonia.Nodes, error) {
	const op = "hessian-vector"
	if err := graphargs.Check(cost, wrt); err != nil {
		return nil, wrapOnce(err, op)
	}
	if len(v) != len(wrt) {
		return nil, errors.Errorf("bulkad: %s: %d direction nodes for %d wrt nodes", op, len(v), len(wrt))
	}
	seen := map[*gorgonia.Node]int{}
	for i, w := range wrt {
		if j, ok := seen[w]; ok {
			return nil, errors.Errorf("bulkad: %s: wrt node %d (%v) repeats wrt node %d; give each node once", op, i, w, j)
		}
		seen[w] = i
		d := v[i]
		if d == nil {
			return nil, errors.Errorf("bulkad: %s: direction node %d is nil", op, i)
		}
		if d.Graph() != cost.Graph() {
			return nil, errors.Errorf("bulkad: %s: direction node %d (%v) belongs to another graph than the cost", op, i, d)
		}
		if d.Dtype() != w.Dtype() || !d.Shape().Eq(w.Shape()) {
			return nil, errors.Errorf("bulkad: %s: direction node %d (%v) is %v %v, wrt node %v is %v %v", op, i, d, d.Dtype(), d.Shape(), w, w.Dtype(), w.Shape())
		}
	}
	tr, opts, err := translateForAD(op, cost, wrt)
	if err != nil {
		return nil, err
	}
	prog, err := ad.HVP(tr.Program, opts)
	if err != nil {
		return nil, wrapOnce(err, op)
	}
	bind := make(map[string]*gorgonia.Node, len(tr.Params)+len(tr.Lets)+len(wrt))
	for k, n := range tr.Params {
		bind[k] = n
	}
	for k, n := range tr.Lets {
		bind[k] = n
	}
	k := len(wrt)
	comps := make([]int, k)
	salts := make([]string, k)
	for i, name := range tr.Wrt {
		bind[ad.TangentPrefix+name] = v[i]
		comps[i] = k + 2 + i // (value, g_1…g_k, ⟨∇value, v⟩, (H·v)_1…(H·v)_k)
		salts[i] = fmt.Sprintf("hessian-vector of node %d along node %d", wrt[i].ID(), v[i].ID())
	}
	dev, coarse, err := o.resolve()
	if err != nil {
		return nil, wrapOnce(err, op)
	}
	outs, err := raise.RaiseWith(cost.Graph(), prog, bind, raise.Options{
		FreshResults: true, Components: comps, Vulkan: dev, Salts: salts, Coarse: coarse, Slots: slotsOf(tr, coarse)})
	if err != nil {
		return nil, wrapOnce(err, op)
	}
	gd := &Gradient{Translation: tr}
	if err := raise.AddGuards(gd.Translation.Mutable); err != nil {
		return nil, wrapOnce(err, op)
	}
	return outs, nil
}
