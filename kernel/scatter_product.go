package kernel

import (
	"github.com/bulkad/bulkad/core"
	"github.com/pkg/errors"
)

// ScatterProduct is the scatter of a product of two strided views whose blocks are 3×3
// windows of a padded image: scatter sh (reshape Dom (x * y)) fn, each factor read through
// its strides (a broadcast filter, an activation gradient spread over the taps), with no
// materialised product. It is a depthwise convolution's input gradient as a
// Gorgonia-built graph has it — col2im of δ ⊗ w, [b, oh, ow, c, kh, kw] — whose product
// (9.4 MB a layer of the zoo's MobileNet, float32) was written by one step and read back by
// the next. Each product is rounded before it is added, and the window points are walked in
// the domain's order, as the padded scatter walks the materialised product: the same bits.
type ScatterProduct struct {
	// Scatter is the scatter of the product over its domain Dom; its index plan must run
	// in the padded windows mode (PaddedWindows).
	Scatter *Scatter
	// Shape is the product's shape, XS and YS the strides of its factors (0 along a
	// broadcast dimension), XO and YO their offsets: x*y at i is x[XO + Σ i_d·XS_d] ·
	// y[YO + Σ i_d·YS_d]. Its last dimension is the window's taps (kh·kw, row-major); its
	// leading dimensions merge consecutive dimensions of the domain's outer ones.
	Shape          []int
	XS, YS         []int
	XO, YO         int
	outer, xs, ys  []int // per outer dimension of the domain: its strides in x and y
	tapX, tapY, nt int   // the taps' strides in x and y, and their number
	// channels: the domain's last outer dimension (c) is contiguous in the image and x, x
	// is spread over the taps, y does not vary over the other outer dimensions and the taps
	// lie c apart: a window row's taps of all channels are one contiguous row of the image
	// (channels-last), added in one call per window row (scatterProductRows)
	channels bool
	// planes: the domain is [b, oh, ow, c, kh, kw] into a channels-first image (ow and kw
	// step 1 in it), x spread over the taps and y not varying over the points: for each
	// (b, c, oh), x's row of ow, transposed to [b, c, oh, ow] once a run, times each tap of
	// the filter is added into the image rows it reaches (scatterProductPlanes)
	planes bool
	wt     *Scratch // y's taps transposed to [tap, c] (channels), or [c, tap] (planes)
	xt     *Scratch // x transposed to [b, c, oh, ow] (planes)
}

// NewScatterProduct checks k's geometry and returns the kernel, or an error naming what does
// not fit: a domain whose window is not the product's last dimension, leading product
// dimensions that do not merge consecutive outer dimensions of the domain, or a scatter
// that does not run in the padded windows mode.
func NewScatterProduct(s *Scatter, shape, xs, ys []int, xo, yo int) (*ScatterProduct, error) {
	k := &ScatterProduct{Scatter: s, Shape: shape, XS: xs, YS: ys, XO: xo, YO: yo}
	dom, n, m := s.Dom, len(s.Dom), len(shape)
	if len(xs) != m || len(ys) != m {
		return nil, errors.Errorf("kernel: scatterProduct: strides %v and %v for a product %v", xs, ys, shape)
	}
	if s.Rest != 1 || !s.PaddedWindows() || n < 3 || m < 1 {
		return nil, errors.Errorf("kernel: scatterProduct: scatter of %v (rest %d) of a product %v: want one element a point, 3×3 windows of a padded image", dom, s.Rest, shape)
	}
	if shape[m-1] != dom[n-1]*dom[n-2] || core.Shape(shape).Size() != core.Shape(dom).Size() {
		return nil, errors.Errorf("kernel: scatterProduct: product %v over the domain %v: want its last dimension the window's %d taps", shape, dom, dom[n-1]*dom[n-2])
	}
	k.outer, k.tapX, k.tapY, k.nt = dom[:n-2], xs[m-1], ys[m-1], shape[m-1]
	k.xs, k.ys = make([]int, n-2), make([]int, n-2)
	// each leading product dimension is a run of consecutive outer dimensions (innermost
	// first): their strides step through it
	j := n - 3
	for d := m - 2; d >= 0; d-- {
		size, sx, sy := 1, xs[d], ys[d]
		for size < shape[d] && j >= 0 {
			k.xs[j], k.ys[j] = sx*size, sy*size
			size *= dom[j]
			j--
		}
		if size != shape[d] {
			return nil, errors.Errorf("kernel: scatterProduct: product %v over the domain %v: its dimension %d is no run of the domain's", shape, dom, d)
		}
	}
	for ; j >= 0; j-- {
		if dom[j] != 1 {
			return nil, errors.Errorf("kernel: scatterProduct: product %v over the domain %v: dimensions left over", shape, dom)
		}
	}
	pst := s.pad.st
	k.channels = pst[n-3] == 1 && pst[n-1] == dom[n-3] && k.tapX == 0 && k.xs[n-3] == 1
	for j := 0; j < n-3; j++ {
		k.channels = k.channels && k.ys[j] == 0
	}
	if k.channels {
		k.wt = &Scratch{}
	}
	k.planes = !k.channels && n == 6 && pst[2] == 1 && pst[5] == 1 && k.tapX == 0 && k.ys[0] == 0 && k.ys[1] == 0 && k.ys[2] == 0
	if k.planes {
		k.wt, k.xt = &Scratch{}, &Scratch{}
	}
	return k, nil
}

// Run implements Kernel: ins are x and y (flat slices of one float dtype).
func (k *ScatterProduct) Run(out any, ins []any) error {
	return floatPair("scatterProduct", out, ins, func(o, x, y []float64) error { return scatterProduct(k, o, x, y) },
		func(o, x, y []float32) error { return scatterProduct(k, o, x, y) })
}

// floatPair runs f64 or f32 on out and the two inputs when all three are slices of that
// float type; a type error naming what otherwise.
func floatPair(what string, out any, ins []any, f64 func(o, x, y []float64) error, f32 func(o, x, y []float32) error) error {
	if len(ins) == 2 {
		switch o := out.(type) {
		case []float64:
			x, ok1 := ins[0].([]float64)
			y, ok2 := ins[1].([]float64)
			if ok1 && ok2 {
				return f64(o, x, y)
			}
		case []float32:
			x, ok1 := ins[0].([]float32)
			y, ok2 := ins[1].([]float32)
			if ok1 && ok2 {
				return f32(o, x, y)
			}
		}
	}
	return typeErr(what, out, ins)
}

func scatterProduct[T floatT](k *ScatterProduct, out, x, y []T) error {
	s := k.Scatter
	pp := s.pad
	if err := s.Clip.check("pad", core.Shape(s.Dom).Size(), len(out), 1); err != nil {
		return err
	}
	if core.Shape(k.Shape).Size() > 0 && (!k.fits(k.XO, k.XS, len(x)) || !k.fits(k.YO, k.YS, len(y))) {
		return errors.Errorf("kernel: scatterProduct: factors of %d and %d elements for a product %v (strides %v, %v)", len(x), len(y), k.Shape, k.XS, k.YS)
	}
	buf, kept := scratchOf[T](s.padS, pp.size)
	if kept {
		defer s.padS.release()
	}
	if k.planes {
		scatterProductPlanes(k, buf, x, y)
		copyPadded(pp, buf, out, true)
		return nil
	}
	n := len(s.Dom)
	walked := k.outer // the points walked: without the channels with channels (rows)
	if k.channels {
		walked = k.outer[:n-3]
	}
	var wt []T
	if k.channels {
		var kept bool
		if wt, kept = scratchOf[T](k.wt, 9*s.Dom[n-3]); kept {
			defer k.wt.release()
		}
		transposeTaps(k, wt, y)
	}
	// Parts along the first dimension walked whose slices reach disjoint parts of the padded
	// image (pp.disjoint): each image element still receives its terms from one goroutine,
	// in the domain's order.
	work := costOf(core.Shape(k.Shape).Size(), wCheap)
	if d, ok := splitDim(walked, work); ok && pp.disjoint(s.Dom, d) {
		scatterProductSplit(k, buf, x, y, wt, walked, d, work)
	} else {
		scatterProductPart(k, buf, x, y, wt, walked, 0, pp.base, k.XO, k.YO)
	}
	copyPadded(pp, buf, out, true)
	return nil
}

// scatterProductSplit runs the parts of walked along d across goroutines (its closure is
// made only here: the serial path allocates nothing).
func scatterProductSplit[T floatT](k *ScatterProduct, buf, x, y, wt []T, walked []int, d, work int) {
	pp := k.Scatter.pad
	productParts(walked, d, work, func(dom []int, lo int) {
		scatterProductPart(k, buf, x, y, wt, dom, d, pp.base+lo*pp.st[d], k.XO+lo*k.xs[d], k.YO+lo*k.ys[d])
	})
}

// scatterProductPart walks the points of dom, the walked dimensions from d on, from the
// offsets o, xo and yo.
func scatterProductPart[T floatT](k *ScatterProduct, buf, x, y, wt []T, dom []int, d, o, xo, yo int) {
	pst := k.Scatter.pad.st
	if k.channels {
		scatterProductRows(k, buf, x, wt, dom, pst[d:], k.xs[d:], o, xo)
		return
	}
	scatterProductWindows(k, buf, x, y, dom, pst[d:], k.xs[d:], k.ys[d:], o, xo, yo)
}

// productParts runs f on the parts of dom along d across goroutines: each part's dims (those
// before d dropped) and its first index along d.
func productParts(dom []int, d, work int, f func(dom []int, lo int)) {
	inParallel(dom[d], work, func(lo, hi int) {
		part, _, _ := subDom(dom, d, lo, hi)
		f(part, lo)
	})
}

// scatterProductWindows adds the windows of the points of dom (strides pst in the padded
// image, xs and ys in the factors, from o, xo and yo) into buf.
func scatterProductWindows[T floatT](k *ScatterProduct, buf, x, y []T, dom, pst, xs, ys []int, o0, xo0, yo0 int) {
	s := k.Scatter
	pp := s.pad
	n := len(s.Dom)
	rs, t := pp.st[n-2], pp.st[n-1]
	w := 2*t + 1
	xt, yt := k.tapX, k.tapY
	r := newRows(dom, [3][]int{pst[:len(dom)], xs[:len(dom)], ys[:len(dom)]}, [3]int{o0, xo0, yo0})
	so, sx, sy := r.stride(0), r.stride(1), r.stride(2)
	for r.ok {
		o, xo, yo := r.off[0], r.off[1], r.off[2]
		for range r.last {
			var v [9]T // each product rounded to T, as the materialised product
			switch {
			case xt == 0 && yt == 1: // a value spread over the taps, times a filter
				d, f := x[xo], y[yo:yo+9:yo+9]
				v = [9]T{T(d * f[0]), T(d * f[1]), T(d * f[2]), T(d * f[3]), T(d * f[4]), T(d * f[5]), T(d * f[6]), T(d * f[7]), T(d * f[8])}
			case xt == 1 && yt == 0:
				f, d := x[xo:xo+9:xo+9], y[yo]
				v = [9]T{T(f[0] * d), T(f[1] * d), T(f[2] * d), T(f[3] * d), T(f[4] * d), T(f[5] * d), T(f[6] * d), T(f[7] * d), T(f[8] * d)}
			default:
				for i := range v {
					v[i] = T(x[xo+i*xt] * y[yo+i*yt])
				}
			}
			r0, r1, r2 := buf[o:o+w:o+w], buf[o+rs:o+rs+w:o+rs+w], buf[o+2*rs:o+2*rs+w:o+2*rs+w]
			r0[0] += v[0] // as scatterPaddedRun adds a materialised window
			r0[t] += v[1]
			r0[2*t] += v[2]
			r1[0] += v[3]
			r1[t] += v[4]
			r1[2*t] += v[5]
			r2[0] += v[6]
			r2[t] += v[7]
			r2[2*t] += v[8]
			o, xo, yo = o+so, xo+sx, yo+sy
		}
		r.next()
	}
}

// scatterProductPlanes is scatterProduct for planes (see ScatterProduct.planes): for each
// image b, channel c and output row oh, x's row of outputs (transposed to [b, c, oh, ow] once
// a run) times each of the nine taps of c's filter is added into the three image rows it
// reaches, the taps of a window row from the last (axpyTaps): an image element receives its
// terms by ascending output row, then ascending output column, as the domain's walk adds
// them. Split over the images across goroutines when their slices reach disjoint parts of
// the padded image.
func scatterProductPlanes[T floatT](k *ScatterProduct, buf, x, y []T) {
	s := k.Scatter
	pp := s.pad
	d := s.Dom // [b, oh, ow, c, 3, 3]
	b, oh, ow, c := d[0], d[1], d[2], d[3]
	wt, kept := scratchOf[T](k.wt, 9*c)
	if kept {
		defer k.wt.release()
	}
	for ch := range c { // [c, tap]
		for tap := range 9 {
			wt[ch*9+tap] = y[k.YO+ch*k.ys[3]+tap*k.tapY]
		}
	}
	xt, kept := scratchOf[T](k.xt, b*c*oh*ow)
	if kept {
		defer k.xt.release()
	}
	work := costOf(core.Shape(k.Shape).Size(), wCheap)
	if workers(b, work) > 1 && pp.disjoint(d, 0) {
		scatterProductPlanesSplit(k, buf, x, xt, wt, work)
		return
	}
	scatterProductPlanesRange(k, buf, x, xt, wt, 0, b)
}

// scatterProductPlanesSplit runs scatterProductPlanesRange on ranges of images across
// goroutines.
func scatterProductPlanesSplit[T floatT](k *ScatterProduct, buf, x, xt, wt []T, work int) {
	inParallel(k.Scatter.Dom[0], work, func(lo, hi int) { scatterProductPlanesRange(k, buf, x, xt, wt, lo, hi) })
}

// scatterProductPlanesRange is scatterProductPlanes for the images [lo, hi).
func scatterProductPlanesRange[T floatT](k *ScatterProduct, buf, x, xt, wt []T, lo, hi int) {
	d, pst := k.Scatter.Dom, k.Scatter.pad.st
	oh, ow, c := d[1], d[2], d[3]
	xs := k.xs
	for bi := lo; bi < hi; bi++ { // x's rows of outputs for each channel of these images
		for ch := range c {
			for r := range oh {
				row := xt[((bi*c+ch)*oh+r)*ow : ((bi*c+ch)*oh+r+1)*ow]
				off := k.XO + bi*xs[0] + r*xs[1] + ch*xs[3]
				for j := range row {
					row[j] = x[off+j*xs[2]]
				}
			}
		}
	}
	rs := pst[4]
	for bi := lo; bi < hi; bi++ {
		for ch := range c {
			f := wt[ch*9 : ch*9+9 : ch*9+9]
			for r := range oh {
				o := k.Scatter.pad.base + bi*pst[0] + r*pst[1] + ch*pst[3]
				row := xt[((bi*c+ch)*oh+r)*ow : ((bi*c+ch)*oh+r+1)*ow]
				if axpyTapsVec(buf[o:], rs, row, f, ow) {
					continue
				}
				for kh := range 3 {
					for kw := 2; kw >= 0; kw-- {
						dr, v := buf[o+kh*rs+kw:o+kh*rs+kw+ow], f[3*kh+kw]
						for j, e := range row {
							dr[j] += T(v * e)
						}
					}
				}
			}
		}
	}
}

// transposeTaps writes y's taps transposed, [tap, c], into wt (channels).
func transposeTaps[T floatT](k *ScatterProduct, wt, y []T) {
	n := len(k.Scatter.Dom)
	c, yc, yo, yt := k.Scatter.Dom[n-3], k.ys[n-3], k.YO, k.tapY
	for tap := range 9 {
		for ch := range c {
			wt[tap*c+ch] = y[yo+ch*yc+tap*yt]
		}
	}
}

// scatterProductRows is scatterProduct for channels (see ScatterProduct.channels): for each
// point of dom (the domain but the channels and the taps; strides pst in the padded image
// and xs in x, from o and xo), each window row of the image, its three taps of every channel
// contiguous, receives x's row of channels times the filter's taps of that window row (wt:
// transposed to [tap, c] once a run) in one call. Each image element gets at most one term
// from a point, so it receives its terms in the domain's order still.
func scatterProductRows[T floatT](k *ScatterProduct, buf, x, wt []T, dom, pst, xs []int, o0, xo0 int) {
	s := k.Scatter
	n := len(s.Dom)
	c, rs := s.Dom[n-3], s.pad.st[n-2]
	r := newRows(dom, [3][]int{pst[:len(dom)], xs[:len(dom)]}, [3]int{o0, xo0})
	so, sx := r.stride(0), r.stride(1)
	for ; r.ok; r.next() {
		o, xo := r.off[0], r.off[1]
		for range r.last {
			xr := x[xo : xo+c : xo+c]
			for kh := range 3 {
				d, f := buf[o+kh*rs:o+kh*rs+3*c:o+kh*rs+3*c], wt[kh*3*c:(kh+1)*3*c:(kh+1)*3*c]
				if !mulAddRepVec(d, xr, f, c, 3) {
					for kw := range 3 {
						dr, fr := d[kw*c:(kw+1)*c], f[kw*c:(kw+1)*c]
						for j, v := range xr {
							dr[j] += T(v * fr[j])
						}
					}
				}
			}
			o, xo = o+so, xo+sx
		}
	}
}

// reach is the least and the largest offset a factor with offset off and strides st reads
// over the product.
func (k *ScatterProduct) reach(off int, st []int) (lo, hi int) {
	lo, hi = off, off
	for d, e := range k.Shape {
		if e > 0 {
			lo += min(0, (e-1)*st[d])
			hi += max(0, (e-1)*st[d])
		}
	}
	return lo, hi
}

// fits reports whether a factor of n elements covers every offset the product reads.
func (k *ScatterProduct) fits(off int, st []int, n int) bool {
	lo, hi := k.reach(off, st)
	return lo >= 0 && hi < n
}
