package kernel

import (
	"github.com/bulkad/bulkad/core"
	"github.com/pkg/errors"
)

// sumProdChunk is the scratch (elements) of SumProdLast's contiguous path.
const sumProdChunk = 576

// SumProdLast sums, along the last dimension of Shape, the products of two operands read
// through strides: out[q] = Σ_k x[XO + Σ_d q_d·XS_d + k·XS_last]·y[YO + …] over the points q
// of Shape without its last dimension (row-major). Each product is rounded to the element
// type and each output's products are added from zero in the order of k: the bits of the
// StridedBinary product followed by the sum along that axis (a Gorgonia-built depthwise
// convolution's taps: the windows times the broadcast filter, summed over the 9 taps),
// without writing the product array.
type SumProdLast struct {
	Shape  []int
	XS, YS []int
	XO, YO int
	// Scratch keeps the chunk of products between runs (nil: a new one each run)
	Scratch *Scratch
}

// Run implements Kernel.
func (k SumProdLast) Run(out any, ins []any) error {
	n := len(k.Shape)
	if n == 0 || len(k.XS) != n || len(k.YS) != n || len(ins) != 2 {
		return errors.Errorf("kernel: sumProdLast: shape %v with strides %v and %v and %d inputs", k.Shape, k.XS, k.YS, len(ins))
	}
	for _, d := range k.Shape {
		if d < 0 {
			return errors.Errorf("kernel: sumProdLast: shape %v", k.Shape)
		}
	}
	if want := sizeOf(k.Shape[:n-1]); SliceLen(out) != want {
		return errors.Errorf("kernel: sumProdLast: output of %d elements for shape %v summed along its last dimension (%d)", SliceLen(out), k.Shape, want)
	}
	switch o := out.(type) {
	case []float64:
		x, ok1 := ins[0].([]float64)
		y, ok2 := ins[1].([]float64)
		if ok1 && ok2 && k.fits(len(x), len(y)) {
			sumProdLast(k, o, x, y)
			return nil
		}
	case []float32:
		x, ok1 := ins[0].([]float32)
		y, ok2 := ins[1].([]float32)
		if ok1 && ok2 && k.fits(len(x), len(y)) {
			sumProdLast(k, o, x, y)
			return nil
		}
	}
	return typeErr("sumProdLast", out, ins)
}

// sizeOf is the number of elements of shape sh.
func sizeOf(sh []int) int {
	s := 1
	for _, d := range sh {
		s *= d
	}
	return s
}

// fits reports whether every offset k reads lies in operands of nx and ny elements.
func (k SumProdLast) fits(nx, ny int) bool {
	if sizeOf(k.Shape) == 0 {
		return true
	}
	span := func(st []int, off, lim int) bool {
		lo, hi := off, off
		for d, s := range st {
			if s > 0 {
				hi += s * (k.Shape[d] - 1)
			} else {
				lo += s * (k.Shape[d] - 1)
			}
		}
		return lo >= 0 && hi < lim
	}
	return span(k.XS, k.XO, nx) && span(k.YS, k.YO, ny)
}

// sumProdLast is SumProdLast for one float type, split across goroutines along the first
// output dimension of more than one value when large (each output is summed by one of them,
// in its order).
func sumProdLast[T floatT](k SumProdLast, out, x, y []T) {
	n := len(k.Shape)
	work := costOf(sizeOf(k.Shape), wCheap)
	if d, ok := splitDim(k.Shape[:n-1], work); ok && n > 1 {
		inParallel(k.Shape[d], work, func(lo, hi int) {
			part := k
			outer, p0, p1 := subDom(k.Shape[:n-1], d, lo, hi)
			part.Shape = append(outer, k.Shape[n-1])
			part.XS, part.YS = k.XS[d:], k.YS[d:]
			part.XO, part.YO = k.XO+lo*k.XS[d], k.YO+lo*k.YS[d]
			sumProdLastRun(part, out[p0:p1], x, y)
		})
		return
	}
	sumProdLastRun(k, out, x, y)
}

// sumProdLastRun is sumProdLast on the calling goroutine: four outputs at a time along the
// innermost output dimension, each its own addition chain.
func sumProdLastRun[T floatT](k SumProdLast, out, x, y []T) {
	n := len(k.Shape)
	kk, xk, yk := k.Shape[n-1], k.XS[n-1], k.YS[n-1]
	dot := func(xo, yo int) T {
		var a T
		for t := range kk {
			a += T(x[xo+t*xk] * y[yo+t*yk])
		}
		return a
	}
	if n == 1 {
		out[0] = dot(k.XO, k.YO)
		return
	}
	r := newRows(k.Shape[:n-1], [3][]int{k.XS[:n-1], k.YS[:n-1]}, [3]int{k.XO, k.YO})
	sx, sy := r.stride(0), r.stride(1)
	if xk == 1 && yk == 1 && sx == kk && sy == kk && kk > 0 && kk <= sumProdChunk {
		// a row's products are contiguous in both operands: multiplied a chunk at a time
		// with the vector loop into a scratch, then summed row by row (four rows at a time)
		scratch, kept := scratchOf[T](k.Scratch, sumProdChunk)
		if kept {
			defer k.Scratch.release()
		}
		per := sumProdChunk / kk
		for p := 0; r.ok; r.next() {
			xo, yo := r.off[0], r.off[1]
			for j := 0; j < r.last; j += per {
				c := min(per, r.last-j)
				tmp := scratch[:c*kk]
				sliceArith(core.OpMul, tmp, x[xo:xo+c*kk], y[yo:yo+c*kk])
				sumRows(out[p:p+c], tmp, kk)
				p += c
				xo += c * kk
				yo += c * kk
			}
		}
		return
	}
	for p := 0; r.ok; r.next() {
		xo, yo := r.off[0], r.off[1]
		j := 0
		for ; j+4 <= r.last; j += 4 {
			var a0, a1, a2, a3 T
			for t := range kk {
				a0 += T(x[xo+t*xk] * y[yo+t*yk])
				a1 += T(x[xo+sx+t*xk] * y[yo+sy+t*yk])
				a2 += T(x[xo+2*sx+t*xk] * y[yo+2*sy+t*yk])
				a3 += T(x[xo+3*sx+t*xk] * y[yo+3*sy+t*yk])
			}
			o := out[p : p+4 : p+4]
			o[0], o[1], o[2], o[3] = a0, a1, a2, a3
			p += 4
			xo += 4 * sx
			yo += 4 * sy
		}
		for ; j < r.last; j++ {
			out[p] = dot(xo, yo)
			p++
			xo += sx
			yo += sy
		}
	}
}
