package raise

import (
	"github.com/bulkad/bulkad/core"
	kern "github.com/bulkad/bulkad/kernel"
)

// Depthwise convolutions built from an im2col. Gorgonia has no grouped convolution; a user
// builds a depthwise one from Im2Col, a reshape to [P, C, T] (points, channels, taps), a
// product with the filter broadcast over the points and a sum over the taps:
//
//	sumOuter (tr [2, 0, 1] (G * view F))              (forward: sumProdLast's form)
//	scatter [1, C, T] (view δ * G) (\[p] -> [0])      (the filter's gradient: productReduce's)
//
// with G = reshape [P, C, T] (gather dom x fn), fn affine. Both read the windows G (T times
// x's size). depthwiseSum and depthwiseFilter plan them as one kern.DepthwiseWindows each,
// which reads x where it lies (a channels-last staged copy) with the channels as vector
// lanes, adding in the reference's order: the results equal the materialised plan's bit for
// bit. When both products read the windows so, the gather is never planned.

// depthwiseFactor is a window factor of a depthwise product: the gather's source as the op
// reads it, its access over the gather's domain dom, the number q of dom's dimensions that
// make the points (dimension q is the channels), and the factor's shape [P, C, T].
type depthwiseFactor struct {
	winOperand
	dom, shape core.Shape
	q          int
}

// depthwiseFactor reports whether t, of shape [P, C, T], is reshape [P, C, T] (gather dom x fn)
// through any reshapes, fn affine with static constants, dom's leading dimensions making P,
// the next one C and the rest T, and the gather at least twice x's size. Not for a Vulkan
// device, nor with window products off (Options.Materialised).
func (pl *plan) depthwiseFactor(t core.Term) (depthwiseFactor, bool) {
	sh := t.Type().Shape
	if pl.vk != nil || pl.materialised || len(sh) != 3 || !t.Type().Dtype.IsFloat() {
		return depthwiseFactor{}, false
	}
	g, o, ok := pl.expandingGather(t)
	if !ok {
		return depthwiseFactor{}, false
	}
	o = pl.throughTranspose(o, g)
	dom := g.Shape
	q := 1
	for q < len(dom) && dom[:q].Size() < sh[0] {
		q++
	}
	if q+1 >= len(dom) || dom[:q].Size() != sh[0] || dom[q] != sh[1] || dom[q+1:].Size() != sh[2] {
		return depthwiseFactor{}, false
	}
	return depthwiseFactor{winOperand: o, dom: dom, shape: sh, q: q}, true
}

// rebuild is the factor over the variable v standing for its input.
func (f depthwiseFactor) rebuild(v core.Term) (core.Term, error) {
	g, err := f.wrap(v)
	if err != nil {
		return nil, err
	}
	return core.NewReshape(f.shape.Clone(), g)
}

// depthwiseSplit returns the window factor of prod (a product of floats of shape [P, C, T])
// and the other factor, or false when neither is one.
func (pl *plan) depthwiseSplit(prod *core.Binary) (depthwiseFactor, core.Term, bool) {
	if f, ok := pl.depthwiseFactor(prod.X); ok {
		return f, prod.Y, true
	}
	if f, ok := pl.depthwiseFactor(prod.Y); ok {
		return f, prod.X, true
	}
	return depthwiseFactor{}, nil, false
}

// depthwiseSum plans sumOuter (tr perm (G * F)), perm moving the last axis to the front, as a
// kern.DepthwiseWindows when G is a depthwise window factor and F a view of the filter
// constant over the points; ok is false otherwise.
func (pl *plan) depthwiseSum(t *core.SumOuter, perm []int, prod *core.Binary) (r ref, ok bool, err error) {
	f, other, ok := pl.depthwiseSplit(prod)
	if !ok {
		return ref{}, false, nil
	}
	v := pl.uniform(pl.view(other))
	if len(v.strides) != 3 || v.strides[0] != 0 || v.strides[1] < 0 || v.strides[2] < 0 {
		return ref{}, false, nil
	}
	k, err := kern.NewDepthwiseWindows(f.dom, f.q, f.acc, false)
	if err != nil || k.SetView(v.offset, 0, v.strides[1], v.strides[2], 0, 0) != nil {
		return ref{}, false, nil
	}
	pl.shareStaging(f.in, k)
	r, err = pl.customAvoid(t, "depthwiseSum", []core.Term{f.in, v.base}, winFns(f.winOperand), func(vs []*core.Var) (core.Term, []*core.Var, error) {
		g, err := f.rebuild(vs[0])
		if err != nil {
			return nil, nil, err
		}
		m, err := v.wrap(vs[1])
		if err != nil {
			return nil, nil, err
		}
		var b core.Builder
		x, y := g, m
		if prod.Y != other {
			x, y = m, g
		}
		s := b.SumOuter(b.Transpose(perm, b.Binary(prod.Op, x, y)))
		return s, vs, b.Err()
	}, k)
	return r, true, err
}

// depthwiseFilter plans scatter sh (δ * G) fn, whose product is [P, C, T] and whose index
// function sends every point to one block [C, T] at offset base·C·T of the output, as a
// kern.DepthwiseWindows when G is a depthwise window factor and δ a view constant over the
// taps; ok is false otherwise.
func (pl *plan) depthwiseFilter(t *core.Scatter, prod *core.Binary, base int) (r ref, ok bool, err error) {
	f, other, ok := pl.depthwiseSplit(prod)
	if !ok {
		return ref{}, false, nil
	}
	v := pl.uniform(pl.view(other))
	if len(v.strides) != 3 || v.strides[2] != 0 || v.strides[0] < 0 || v.strides[1] < 0 {
		return ref{}, false, nil
	}
	c, tt := f.shape[1], f.shape[2]
	k, err := kern.NewDepthwiseWindows(f.dom, f.q, f.acc, true)
	if err != nil || k.SetView(v.offset, v.strides[0], v.strides[1], 0, t.Shape.Size(), base*c*tt) != nil {
		return ref{}, false, nil
	}
	pl.shareStaging(f.in, k)
	r, err = pl.customAvoid(t, "depthwiseFilter", []core.Term{f.in, v.base}, append(winFns(f.winOperand), t.Fn), func(vs []*core.Var) (core.Term, []*core.Var, error) {
		g, err := f.rebuild(vs[0])
		if err != nil {
			return nil, nil, err
		}
		m, err := v.wrap(vs[1])
		if err != nil {
			return nil, nil, err
		}
		x, y := g, m
		if prod.Y != other {
			x, y = m, g
		}
		p, err := core.NewBinary(prod.Op, x, y)
		if err != nil {
			return nil, nil, err
		}
		s, err := core.NewScatter(t.Shape.Clone(), p, t.Fn)
		return s, vs, err
	}, k)
	return r, true, err
}

// shareStaging lets the forward sums and the filter gradient of one depthwise convolution in a
// coarse plan — kernels reading the same x — share one staged copy of x (ShareStaging): the
// zoo MobileNet staged each layer's input twice a step (≈ 0.1 ms a layer in float32) and kept
// two padded copies. Kernels that cannot share (another padding) keep their own.
func (pl *plan) shareStaging(x core.Term, k *kern.DepthwiseWindows) {
	if !pl.coarse {
		return
	}
	if pl.dwStaging == nil {
		pl.dwStaging = map[core.Term]*kern.DepthwiseWindows{}
	}
	if o, ok := pl.dwStaging[x]; ok && o.Filter != k.Filter {
		if k.ShareStaging(o) == nil {
			delete(pl.dwStaging, x)
		}
		return
	}
	pl.dwStaging[x] = k
}

// throughTranspose reads a window factor's gather through a transposition of its input, x =
// tr perm y: the access's rows move to y's dimensions (x's dimension i is y's perm[i]), so
// that the kernel reads y where it lies and the transposition is not planned for it (the
// zoo's MobileNet transposes each block's channels-last output to [b, c, h, w] for Im2Col;
// DepthwiseWindows then stages it channels-last again). o is returned as it is when x is
// not a transposition (or a reshape was already looked through).
func (pl *plan) throughTranspose(o winOperand, g *core.Gather) winOperand {
	tr, ok := pl.peel(o.in).(*core.Transpose)
	if !ok || o.in != g.X {
		return o
	}
	r := len(tr.Perm)
	acc := kern.WinAccess{Shape: make([]int, r), Coef: make([][]int64, r), C0: make([]int64, r)}
	for i, p := range tr.Perm {
		acc.Shape[p], acc.Coef[p], acc.C0[p] = o.acc.Shape[i], o.acc.Coef[i], o.acc.C0[i]
	}
	perm := append([]int(nil), tr.Perm...)
	return winOperand{in: tr.X, acc: acc, gather: g, wrap: func(v core.Term) (core.Term, error) {
		x, err := core.NewTranspose(perm, v)
		if err != nil {
			return nil, err
		}
		return core.NewGather(g.Shape.Clone(), x, g.Fn)
	}}
}

// depthwiseInput plans scatter sh (reshape dom (δ * F)) fn — a depthwise convolution's input
// gradient, the products [P, C, T] scattered by the im2col's index function into the image
// — as a kern.DepthwiseWindows (SetInput) when δ is a view constant over the taps and F one
// constant over the points, the channel variable alone moves one image dimension, and the
// domain has 4096 points; ok is false otherwise (productScatter's plan then applies).
func (pl *plan) depthwiseInput(t *core.Scatter, prod *core.Binary, dom core.Shape, reshaped bool) (r ref, ok bool, err error) {
	ps := prod.Type().Shape
	if pl.vk != nil || pl.materialised || len(ps) != 3 || dom.Size() < 4096 {
		return ref{}, false, nil
	}
	q := 1
	for q < len(dom) && dom[:q].Size() < ps[0] {
		q++
	}
	if q+1 >= len(dom) || dom[:q].Size() != ps[0] || dom[q] != ps[1] || dom[q+1:].Size() != ps[2] {
		return ref{}, false, nil
	}
	acc, ok := affineAccess(t.Fn, t.Shape, len(dom))
	if !ok {
		return ref{}, false, nil
	}
	vd, vf := pl.uniform(pl.view(prod.X)), pl.uniform(pl.view(prod.Y))
	swapped := vd.strides[2] != 0 // δ is the second factor
	if swapped {
		vd, vf = vf, vd
	}
	if vd.strides[2] != 0 || vf.strides[0] != 0 || vd.strides[0] < 0 || vd.strides[1] < 0 || vf.strides[1] < 0 || vf.strides[2] < 0 {
		return ref{}, false, nil
	}
	k, err := kern.NewDepthwiseWindows(dom, q, acc, false)
	if err != nil || k.SetInput(vd.offset, vd.strides[0], vd.strides[1], vf.offset, vf.strides[1], vf.strides[2]) != nil {
		return ref{}, false, nil
	}
	views := []view{vd, vf}
	r, err = pl.customAvoid(t, "depthwiseInput", bases(views), []*core.IndexFn{t.Fn}, func(vs []*core.Var) (core.Term, []*core.Var, error) {
		w, err := wrapAll(views, vs)
		if err != nil {
			return nil, nil, err
		}
		x, y := w[0], w[1]
		if swapped {
			x, y = y, x
		}
		s, err := scatterOfProduct(t, x, y, reshaped, dom)
		return s, vs, err
	}, k)
	return r, true, err
}
