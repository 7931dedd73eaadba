package gradcheck

import (
	"math"

	"github.com/bulkad/bulkad/adapter"
	"github.com/bulkad/bulkad/kernel"
	"github.com/pkg/errors"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// fdEval computes central finite differences of the cost by one of two methods (see Check).
type fdEval struct {
	// Gorgonia forward on a clone.
	vm    gorgonia.VM
	cost2 *gorgonia.Node
	wrt2  gorgonia.Nodes
	// Translation promoted to float64.
	exec   *kernel.Exec
	args64 map[string]*tensor.Dense
	names  []string
	// The float64 values and shapes of the wrt nodes (perturbed one entry at a time).
	base   [][]float64
	shapes []tensor.Shape
}

func newFD(g *gorgonia.ExprGraph, cost *gorgonia.Node, wrt gorgonia.Nodes, idx map[*gorgonia.Node]int, vals map[int]gorgonia.Value, tr *adapter.Translation, args map[string]*tensor.Dense, f32 bool) (*fdEval, string, error) {
	allInputs := true
	for _, n := range wrt {
		if n.Op() != nil {
			allInputs = false
		}
	}
	random := hasRandom(g)
	if !f32 && allInputs && !random {
		fd, err := gorgoniaFD(g, cost, wrt, idx, vals)
		if err == nil {
			return fd, "gorgonia forward, float64", nil
		}
		if tr == nil {
			return nil, "", err
		}
	}
	if tr == nil || args == nil {
		return nil, "", errors.New("bulkad cannot translate the graph and Gorgonia's forward pass cannot be used for finite differences (float32 graph, non-input wrt node or random operations)")
	}
	p64, err := promote(tr.Program)
	if err != nil {
		return nil, "", errors.Wrap(err, "promoting to float64")
	}
	exec, err := kernel.Compile(p64)
	if err != nil {
		return nil, "", errors.Wrap(err, "compiling the promoted program")
	}
	fd := &fdEval{exec: exec, args64: map[string]*tensor.Dense{}, names: tr.Wrt}
	for name, d := range args {
		fd.args64[name] = toF64Dense(d)
	}
	for _, name := range tr.Wrt {
		d := fd.args64[name]
		fd.base = append(fd.base, append([]float64{}, toFloats(d)...))
		fd.shapes = append(fd.shapes, d.Shape().Clone())
	}
	return fd, "bulkad translation promoted to float64", nil
}

func gorgoniaFD(g *gorgonia.ExprGraph, cost *gorgonia.Node, wrt gorgonia.Nodes, idx map[*gorgonia.Node]int, vals map[int]gorgonia.Value) (fd *fdEval, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = errors.Errorf("panic in Gorgonia's forward pass: %v", r)
		}
	}()
	g2 := g.Clone().(*gorgonia.ExprGraph)
	all := g2.AllNodes()
	fd = &fdEval{cost2: all[idx[cost]]}
	for _, n := range wrt {
		fd.wrt2 = append(fd.wrt2, all[idx[n]])
		v := vals[idx[n]]
		if v == nil {
			return nil, errors.Errorf("wrt node %s has no value", n.Name())
		}
		d, ok := v.(*tensor.Dense)
		if !ok {
			if d, err = scalarDense(v); err != nil {
				return nil, err
			}
		}
		fd.base = append(fd.base, append([]float64{}, toFloats(d)...))
		fd.shapes = append(fd.shapes, d.Shape().Clone())
	}
	// Gorgonia's forward pass, protected from its in-place ops on views (which would make the
	// differences those of another function; found by FuzzGrad: Σ (reshape(tanh x) ⊙ x4) ⊙ …).
	if err := protectNeeded(g2, fd.cost2); err != nil {
		return nil, err
	}
	fd.vm = gorgonia.NewTapeMachine(g2)
	return fd, nil
}

// valueAt evaluates the cost with entry e of wrt node k set to x (all else at the base point).
func (f *fdEval) valueAt(k, e int, x float64) (v float64, err error) {
	vals := append([]float64{}, f.base[k]...)
	vals[e] = x
	var d *tensor.Dense
	if f.shapes[k].IsScalar() {
		d = tensor.New(tensor.FromScalar(vals[0]))
	} else {
		d = tensor.New(tensor.WithShape(f.shapes[k].Clone()...), tensor.WithBacking(vals))
	}
	if f.exec != nil {
		old := f.args64[f.names[k]]
		f.args64[f.names[k]] = d
		out, err := f.exec.Run(f.args64)
		f.args64[f.names[k]] = old
		if err != nil {
			return 0, err
		}
		return toFloats(out[0])[0], nil
	}
	defer func() {
		if r := recover(); r != nil {
			err = errors.Errorf("panic in Gorgonia's forward pass: %v", r)
		}
	}()
	// Fresh copies every run: Gorgonia ops may reshape or overwrite their inputs in place.
	for i, n := range f.wrt2 {
		if i != k && n == f.wrt2[k] {
			continue // a wrt node named twice: its perturbed value must not be reset by the copy
		}
		var val interface{}
		switch {
		case i == k && f.shapes[i].IsScalar():
			val = gorgonia.NewF64(vals[0])
		case i == k:
			val = d
		case f.shapes[i].IsScalar():
			val = gorgonia.NewF64(f.base[i][0])
		default:
			val = tensor.New(tensor.WithShape(f.shapes[i].Clone()...), tensor.WithBacking(append([]float64{}, f.base[i]...)))
		}
		if err := gorgonia.Let(n, val); err != nil {
			return 0, err
		}
	}
	if err := f.vm.RunAll(); err != nil {
		return 0, err
	}
	v = toFloats(scalarOrDense(f.cost2.Value()))[0]
	f.vm.Reset()
	return v, nil
}

// derivative is the central difference of the cost along entry e of wrt node k.
func (f *fdEval) derivative(k, e int, step float64) (float64, error) {
	orig := f.base[k][e]
	h := step * math.Max(1, math.Abs(orig))
	fp, err := f.valueAt(k, e, orig+h)
	if err != nil {
		return 0, err
	}
	fm, err := f.valueAt(k, e, orig-h)
	if err != nil {
		return 0, err
	}
	return (fp - fm) / (2 * h), nil
}
