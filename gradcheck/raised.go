package gradcheck

import (
	"fmt"
	"math"
	"strings"

	"github.com/bulkad/bulkad"

	"github.com/pkg/errors"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// validate checks the options Check was given (after they were applied to cfg).
func (c *config) validate() error {
	if c.nilOption >= 0 {
		return errors.Errorf("option %d is nil", c.nilOption)
	}
	if !(c.step > 0) || math.IsInf(c.step, 0) {
		return errors.Errorf("finite-difference step %g: want a finite number > 0", c.step)
	}
	if c.tolSet && (!(c.atol >= 0) || !(c.rtol >= 0)) {
		return errors.Errorf("tolerance atol %g, rtol %g: want numbers ≥ 0 (not NaN)", c.atol, c.rtol)
	}
	return nil
}

// raisedGrads does what a user of Grad does, on a clone of g (the caller's graph is left
// unchanged): bulkad.Grad, then one run of a TapeMachine. It returns the values of the
// gradient nodes (as float64s, in wrt order) and the values the run gave the needed nodes (by
// index in g.AllNodes()). It runs the machine twice (see below). Panics become errors.
func raisedGrads(g *gorgonia.ExprGraph, cost *gorgonia.Node, wrt gorgonia.Nodes, idx map[*gorgonia.Node]int, need []int, random bool) (grads [][]float64, vals map[int]gorgonia.Value, err error) {
	defer func() {
		if r := recover(); r != nil {
			grads, vals, err = nil, nil, errors.Errorf("panic: %v", r)
		}
	}()
	g2, all, wrt2, err := cloneWith(g, wrt, idx)
	if err != nil {
		return nil, nil, err
	}
	slots := readAll(g2, need)
	gs, err := bulkad.Grad(all[idx[cost]], wrt2...)
	if err != nil {
		return nil, nil, err
	}
	vm := gorgonia.NewTapeMachine(g2)
	defer vm.Close()
	values := func() ([]*tensor.Dense, [][]float64, error) {
		var ds []*tensor.Dense
		var fs [][]float64
		for i, n := range gs {
			v := n.Value()
			if v == nil {
				return nil, nil, errors.Errorf("the gradient node of %s has no value after the run", wrt[i].Name())
			}
			d, ok := v.(*tensor.Dense)
			if !ok {
				var err error
				if d, err = scalarDense(v); err != nil {
					return nil, nil, err
				}
			}
			ds = append(ds, d)
			fs = append(fs, append([]float64(nil), toFloats(d)...))
		}
		return ds, fs, nil
	}
	// Two runs, as a training loop does: the gradient values of the first must survive the
	// second (a user may keep them), and without random operations both runs must agree.
	if err := vm.RunAll(); err != nil {
		return nil, nil, err
	}
	kept, first, err := values()
	if err != nil {
		return nil, nil, err
	}
	if vals, err = collect(all, need, slots); err != nil {
		return nil, nil, err
	}
	vm.Reset()
	if err := vm.RunAll(); err != nil {
		return nil, nil, errors.Wrap(err, "second run")
	}
	if _, grads, err = values(); err != nil {
		return nil, nil, errors.Wrap(err, "second run")
	}
	for i, d := range kept {
		if !sameFloats(toFloats(d), first[i]) {
			return nil, nil, errors.Errorf("the gradient value of %s kept from one run was changed by the next run", wrt[i].Name())
		}
		if !random && !sameFloats(grads[i], first[i]) {
			return nil, nil, errors.Errorf("the gradient of %s differs between two runs of the same graph", wrt[i].Name())
		}
	}
	return first, vals, nil
}

// sameFloats reports whether a and b are equal entry by entry (NaNs equal).
func sameFloats(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] && !(math.IsNaN(a[i]) && math.IsNaN(b[i])) {
			return false
		}
	}
	return true
}

// hasRandom reports whether g has an operation whose value changes from run to run
// (random ops, dropout).
func hasRandom(g *gorgonia.ExprGraph) bool {
	for _, n := range g.AllNodes() {
		if n != nil && n.Op() != nil {
			op := strings.ToLower(fmt.Sprintf("%T", n.Op()))
			if strings.Contains(op, "random") || strings.Contains(op, "dropout") {
				return true
			}
		}
	}
	return false
}
