package raise

import (
	"github.com/bulkad/bulkad/core"
	kern "github.com/bulkad/bulkad/kernel"
)

// Window matrices read in place. Gorgonia's convolution (and the ONNX importer's) is
//
//	matmul (reshape [P, J] (gather dom x fn)) Wᵀ          (forward: the im2col times the filter)
//	matmul δᵀ (reshape [P, J] (gather dom x fn))          (the filter's gradient)
//
// with fn affine: the gather is the convolution's window matrix, each element of x copied
// into up to J of its entries (9× for a 3×3 filter). windowMatmul plans such a product as one
// kern.WindowMatMul, which reads x's elements where they lie (in a zero-padded copy) instead
// of the materialised matrix that a gather would write and the GEMM read back. When every
// product that reads a window matrix is planned so, the gather itself is never planned
// (a lazily planned let is planned at its first use).
//
// Only products of two matrices whose window factor is not transposed, on the CPU, where
// the gather expands x (its windows overlap: at least twice x's size, and 4096 elements);
// anything else is planned as before. The sums are taken in another order than the GEMM's,
// so results differ from the materialised product by rounding.

// windowGain: a window matrix is read in place only when it has at least this many times
// the elements of the other factor. The kernel holds a block of the other factor's columns
// in registers and passes over the window matrix once per block: fast where the window
// matrix is large and the other factor small (a filter of 16 channels: 8192×144 against
// 144×16; the output's cotangent, 8192×16), slow where the other factor is the large one
// (torchvision's resnet18 at batch 2, layer 4: a 4608×8 window matrix against a 512×4608
// filter read transposed, 5.4 ms against 1.4 for the gather and the GEMM).
const windowGain = 4

// windowFactor is a window matrix factor of a product: the gather's source as the op reads
// it (in, rebuilt by wrap), its access over the gather's domain, and the split of that
// domain into the matrix's rows (its first q dimensions) and columns.
type windowFactor struct {
	winOperand
	dom   core.Shape
	shape core.Shape // the matrix's [P, J]
	q     int
}

// windowFactor reports whether t (a matrix) is reshape [P, J] (gather dom x fn), through any
// reshapes, with fn
// affine with static constants, dom's leading dimensions making P, and the gather at least
// twice the size of x.
func (pl *plan) windowFactor(t core.Term) (windowFactor, bool) {
	rs, ok := pl.peel(t).(*core.Reshape)
	if !ok || len(rs.Shape) != 2 {
		return windowFactor{}, false
	}
	inner := pl.peel(rs.X)
	for {
		r, isReshape := inner.(*core.Reshape)
		if !isReshape {
			break
		}
		inner = pl.peel(r.X)
	}
	g, ok := inner.(*core.Gather)
	if !ok {
		return windowFactor{}, false
	}
	o, ok := winGather(pl, g)
	if !ok {
		return windowFactor{}, false
	}
	dom := g.Shape
	if n := dom.Size(); n < 4096 || n < 2*o.in.Type().Shape.Size() {
		return windowFactor{}, false
	}
	q := 1
	for q < len(dom) && dom[:q].Size() < rs.Shape[0] {
		q++
	}
	if q >= len(dom) || dom[:q].Size() != rs.Shape[0] {
		return windowFactor{}, false
	}
	return windowFactor{winOperand: o, dom: dom, shape: rs.Shape, q: q}, true
}

// windowMatmul plans matmul x y (its factors a and b as matmul reads them, transposed when
// ta, tb) as one kern.WindowMatMul when a factor is a window matrix read untransposed; ok
// is false when t is not of that form.
func (pl *plan) windowMatmul(t *core.MatMul, a core.Term, ta bool, b core.Term, tb bool) (r ref, ok bool, err error) {
	if pl.vk != nil || !t.Type().Dtype.IsFloat() || len(t.Type().Shape) != 2 {
		return ref{}, false, nil
	}
	w, cols := windowFactor{}, false
	var other core.Term
	var trans bool
	if f, isWin := pl.windowFactor(a); isWin && !ta {
		w, other, trans = f, b, tb
	} else if f, isWin := pl.windowFactor(b); isWin && !tb {
		w, other, trans, cols = f, a, ta, true
	} else {
		return ref{}, false, nil
	}
	n := t.Type().Shape[1]
	if cols {
		n = t.Type().Shape[0]
	}
	if w.shape.Size() < windowGain*other.Type().Shape.Size() {
		return ref{}, false, nil
	}
	k, err := kern.NewWindowMatMul(w.dom, w.q, w.acc, n, cols, trans)
	if err != nil {
		return ref{}, false, nil
	}
	r, err = pl.customAvoid(t, "windowMatMul", []core.Term{w.in, other}, winFns(w.winOperand), func(vs []*core.Var) (core.Term, []*core.Var, error) {
		g, err := w.wrap(vs[0])
		if err != nil {
			return nil, nil, err
		}
		win, err := core.NewReshape(w.shape.Clone(), g)
		if err != nil {
			return nil, nil, err
		}
		var m core.Term = vs[1]
		if trans {
			if m, err = core.NewTranspose([]int{1, 0}, m); err != nil {
				return nil, nil, err
			}
		}
		var p core.Term
		if cols {
			p, err = core.NewMatMul(m, win)
		} else {
			p, err = core.NewMatMul(win, m)
		}
		return p, vs, err
	}, k)
	return r, true, err
}
