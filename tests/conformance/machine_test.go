package conformance

import (
	"fmt"
	"reflect"

	"github.com/bulkad/bulkad/core"
	"github.com/bulkad/bulkad/internal/testutil"
	"github.com/bulkad/bulkad/raise"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Raised programs on Gorgonia's TapeMachine.

// raised raises p with opt into a fresh graph whose inputs hold the operand columns ins
// (bound as args binds them: scalar nodes for rank-0 parameters), runs a TapeMachine twice
// (the second run exercises the ops' preallocated outputs) and returns the results of both
// runs, in order, as one column.
func raised(p *core.Program, ins []any, opt raise.Options) (col any, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v", r)
		}
	}()
	g := gorgonia.NewGraph()
	bind := map[string]*gorgonia.Node{}
	vals := args(p, ins)
	for _, v := range p.Params {
		n, err := testutil.InputNode(g, v.Name, vals[v.Name])
		if err != nil {
			return nil, err
		}
		bind[v.Name] = n
	}
	outs, err := raise.RaiseWith(g, p, bind, opt)
	if err != nil {
		return nil, fmt.Errorf("RaiseWith: %w", err)
	}
	return runMachine(g, outs, 2)
}

// runMachine runs a TapeMachine on g runs times and returns the values of outs after each
// run, in order, as one column.
func runMachine(g *gorgonia.ExprGraph, outs []*gorgonia.Node, runs int) (any, error) {
	m := gorgonia.NewTapeMachine(g)
	defer m.Close()
	var cols []any
	for run := range runs {
		if err := m.RunAll(); err != nil {
			return nil, fmt.Errorf("TapeMachine run %d: %w", run+1, err)
		}
		for _, n := range outs {
			c, err := valueColumn(n.Value())
			if err != nil {
				return nil, fmt.Errorf("node %v: %w", n, err)
			}
			cols = append(cols, c)
		}
		m.Reset()
	}
	return concat(cols), nil
}

// valueColumn is a copy of a node's value as a column.
func valueColumn(v gorgonia.Value) (any, error) {
	if d, ok := v.(*tensor.Dense); ok {
		return flat(d)
	}
	if v == nil {
		return nil, fmt.Errorf("no value")
	}
	// a scalar: the one-element column of its type
	if x := reflect.ValueOf(v.Data()); x.IsValid() {
		if col := reflect.Append(reflect.MakeSlice(reflect.SliceOf(x.Type()), 0, 1), x).Interface(); dtypeOf(col) != core.InvalidDtype {
			return col, nil
		}
	}
	return nil, fmt.Errorf("value %T holding %T", v, v.Data())
}
