package raise

import (
	"github.com/bulkad/bulkad/core"
	kern "github.com/bulkad/bulkad/kernel"
)

// matmulAcc plans x + matmul a b (or matmul a b + x) of a coarse plan as one accumulating
// MatMul step (kern.MatMul with Acc), x its first input: the product is added to x as it is
// computed and, when x is a temporary no later step reads, into x's own buffer (the plan's
// InPlace reuse). A recurrent network's weight gradient is such a chain, Σ_t h_tᵀ·δ_t summed
// one time step after another: the zoo LSTM's two chains of 15 sums (float64 [128, 512] and
// [64, 512], 28 and 15 µs an addition) wrote each product and read it back to add it. The
// value is the sum's, rounded once, with the product's bits: core.Eval's (NaN payloads aside).
// ok is false unless the product is a two-dimensional one that only this sum reads, not
// planned yet and not a window or scatter product (which have kernels of their own), and x
// an array of the sum's shape (not a broadcast view).
func (pl *plan) matmulAcc(t *core.Binary) (ref, bool, error) {
	if !pl.coarse || pl.vk != nil || t.Op != core.OpAdd || !t.Type().Dtype.IsFloat() || len(t.Type().Shape) != 2 {
		return ref{}, false, nil
	}
	x, mm, first := t.X, pl.accProduct(t.Y), false
	if mm == nil {
		x, mm, first = t.Y, pl.accProduct(t.X), true
	}
	if mm == nil || !x.Type().Shape.Equal(t.Type().Shape) || !pl.uniform(pl.view(x)).trivial {
		// a broadcast x (a dense layer's bias) is read through strides by the strided
		// addition; materialising it for the product to add into gains nothing
		return ref{}, false, nil
	}
	a, ta := pl.swapped(mm.X)
	b, tb := pl.swapped(mm.Y)
	if _, win := pl.windowProductOf(mm, a, ta, b, tb); win {
		return ref{}, false, nil
	}
	if _, sc := pl.scatterOf(a); sc {
		return ref{}, false, nil
	}
	m, n, k := mm.Type().Shape[0], mm.Type().Shape[1], mm.X.Type().Shape[1]
	kk := kern.MatMul{M: m, N: n, K: k, TransA: ta, TransB: tb, WS: pl.gemmWS(), Acc: true, S: &kern.Scratch{}}
	r, err := pl.custom(t, "matmulAcc", []core.Term{x, a, b}, func(vs []*core.Var) (core.Term, []*core.Var, error) {
		p, err := opProduct(vs[1], vs[2], ta, tb)
		if err != nil {
			return nil, nil, err
		}
		if first {
			s, err := core.NewBinary(core.OpAdd, p, vs[0])
			return s, vs, err
		}
		s, err := core.NewBinary(core.OpAdd, vs[0], p)
		return s, vs, err
	}, kk)
	return r, true, err
}

// accProduct is u as a two-dimensional product that matmulAcc may fold into a sum: read only
// there and not planned yet; nil otherwise.
func (pl *plan) accProduct(u core.Term) *core.MatMul {
	if !pl.unplanned(u) || !pl.onlyUse(u) {
		return nil
	}
	mm, ok := pl.peel(u).(*core.MatMul)
	if !ok || len(mm.Type().Shape) != 2 || (u != core.Term(mm) && (!pl.unplanned(mm) || !pl.onlyUse(mm))) {
		return nil
	}
	return mm
}

// opProduct is matmul op(x) op(y), op transposing the last two dimensions when ta (for x)
// or tb (for y) is set: a product kernel's program over its inputs as stored.
func opProduct(x, y core.Term, ta, tb bool) (*core.MatMul, error) {
	var err error
	if ta {
		if x, err = core.NewTranspose(core.SwapLastTwo(len(x.Type().Shape)), x); err != nil {
			return nil, err
		}
	}
	if tb {
		if y, err = core.NewTranspose(core.SwapLastTwo(len(y.Type().Shape)), y); err != nil {
			return nil, err
		}
	}
	return core.NewMatMul(x, y)
}
