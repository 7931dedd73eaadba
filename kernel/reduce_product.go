package kernel

import (
	"github.com/bulkad/bulkad/core"
	"github.com/pkg/errors"
)

// ReduceProduct is the sum over the leading dimensions of a product of two strided views,
// into one block of shape [C, T]: out[c, t] = Σ_p x[p, c, t] · y[p, c, t], x spread over the
// last dimension (its stride there 0) and y read contiguously along [C, T] — a Gorgonia-built
// depthwise convolution's filter gradient, Σ over the points of δ (one value a channel,
// spread over the taps) times the windows (scatter [1, C, T] (δ ⊗ windows) \[p] -> [0]),
// whose product (9.4 MB float32 a layer of the zoo's MobileNet) was written by one step and
// read back by the next. Each product is rounded before it is added and the points are added
// in order from zero, as the scatter adds the materialised product's blocks: the same bits.
type ReduceProduct struct {
	Lead       []int // the summed dimensions
	C, T       int   // the block
	XS, YS     []int // per leading dimension: the factors' strides
	XC, YC     int   // the factors' strides along C (y's along T is 1, x's 0)
	XO, YO     int   // the factors' offsets
	Out, OutAt int   // the output's length and the block's offset in it
}

// Run implements Kernel: ins are x and y (flat slices of one float dtype).
func (k *ReduceProduct) Run(out any, ins []any) error {
	return floatPair("reduceProduct", out, ins, func(o, x, y []float64) error { return reduceProduct(k, o, x, y) },
		func(o, x, y []float32) error { return reduceProduct(k, o, x, y) })
}

func reduceProduct[T floatT](k *ReduceProduct, out, x, y []T) error {
	c, t := k.C, k.T
	if len(out) != k.Out || k.OutAt < 0 || k.OutAt+c*t > len(out) || len(k.XS) != len(k.Lead) || len(k.YS) != len(k.Lead) || k.XC < 0 || k.YC < 0 {
		return errors.Errorf("kernel: reduceProduct: output of %d elements for a block [%d %d] at %d of %d over %v", len(out), c, t, k.OutAt, k.Out, k.Lead)
	}
	if !fitsView(k.Lead, k.XS, k.XO, (c-1)*k.XC, len(x)) || !fitsView(k.Lead, k.YS, k.YO, (c-1)*k.YC+t-1, len(y)) {
		return errors.Errorf("kernel: reduceProduct: factors of %d and %d elements for %v × [%d %d]", len(x), len(y), k.Lead, c, t)
	}
	clear(out)
	o := out[k.OutAt : k.OutAt+c*t : k.OutAt+c*t]
	if core.Shape(k.Lead).Size() == 0 {
		return nil
	}
	// split over the channels: each output element is still summed by one goroutine, over
	// the points in order
	if work := costOf(core.Shape(k.Lead).Size()*c*t, wCheap); workers(c, work) > 1 {
		reduceProductSplit(k, o, x, y, work)
		return nil
	}
	reduceProductRange(k, o, x, y, 0, c)
	return nil
}

// reduceProductSplit runs reduceProductRange on ranges of channels across goroutines.
func reduceProductSplit[T floatT](k *ReduceProduct, o, x, y []T, work int) {
	inParallel(k.C, work, func(lo, hi int) { reduceProductRange(k, o, x, y, lo, hi) })
}

// reduceProductRange sums the channels [lo, hi) of the block over all the points.
func reduceProductRange[T floatT](k *ReduceProduct, o, x, y []T, lo, hi int) {
	t := k.T
	r := newRows(k.Lead, [3][]int{k.XS, k.YS}, [3]int{k.XO, k.YO})
	sx, sy := r.stride(0), r.stride(1)
	xc, yc := k.XC, k.YC
	for ; r.ok; r.next() {
		xo, yo := r.off[0], r.off[1]
		if t == 9 && xc == 1 && yc == 9 && reduceTaps9Vec(o[lo*9:hi*9], x[xo+lo:], y[yo+lo*9:], hi-lo, r.last, sx, sy) {
			continue // the row of points in one call: channels and taps contiguous
		}
		for range r.last {
			if t == 9 { // a 3×3 window written out: one bounds check a channel
				for ch := lo; ch < hi; ch++ {
					d := x[xo+ch*xc]
					w, a := (*[9]T)(y[yo+ch*yc:yo+ch*yc+9]), (*[9]T)(o[ch*9:ch*9+9])
					a[0] += T(d * w[0])
					a[1] += T(d * w[1])
					a[2] += T(d * w[2])
					a[3] += T(d * w[3])
					a[4] += T(d * w[4])
					a[5] += T(d * w[5])
					a[6] += T(d * w[6])
					a[7] += T(d * w[7])
					a[8] += T(d * w[8])
				}
				xo, yo = xo+sx, yo+sy
				continue
			}
			for ch := lo; ch < hi; ch++ {
				d := x[xo+ch*xc]
				w := y[yo+ch*yc : yo+ch*yc+t : yo+ch*yc+t]
				a := o[ch*t : ch*t+t : ch*t+t]
				for i, v := range w {
					a[i] += T(d * v)
				}
			}
			xo, yo = xo+sx, yo+sy
		}
	}
}

// fitsView reports whether a view with strides st over dom from off, plus up to extra more
// elements, reads within n elements (and not below 0).
func fitsView(dom, st []int, off, extra, n int) bool {
	lo, hi := off, off+extra
	for d, e := range dom {
		if e == 0 {
			return true // nothing is read
		}
		lo += min(0, (e-1)*st[d])
		hi += max(0, (e-1)*st[d])
	}
	return lo >= 0 && hi < n
}
