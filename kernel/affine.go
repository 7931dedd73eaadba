package kernel

import "github.com/bulkad/bulkad/core"

// Affine index functions (window extraction for convolution and pooling, shifts, strided
// slices, broadcasts) are recognised when they are compiled (index.go): when every output is
// an affine function of the bound variables and interval arithmetic proves it in bounds for
// the whole domain (IndexProgram.AffinePlan), a gather or scatter of the op kernels becomes a
// strided copy (or accumulation) with no per-element closure calls and no bounds checks.

func isZero(a []int64) bool {
	for _, v := range a {
		if v != 0 {
			return false
		}
	}
	return true
}

// affineWalk visits the domain in row-major order and calls f(p, off) with the output
// position p (in blocks) and the affine offset off (in blocks), innermost dimension inlined.
func affineWalk(dom, st []int, base int, f func(p, off, count, stride int)) {
	n := len(dom)
	if n == 0 {
		f(0, base, 1, 0)
		return
	}
	var idxBuf [8]int
	var idx []int
	if n-1 <= len(idxBuf) {
		idx = idxBuf[:n-1]
	} else {
		idx = make([]int, n-1)
	}
	total := core.Shape(dom).Size()
	last, sl := dom[n-1], st[n-1]
	off := base
	for p := 0; p < total; p += last {
		f(p, off, last, sl)
		for d := n - 2; d >= 0; d-- {
			idx[d]++
			off += st[d]
			if idx[d] < dom[d] {
				break
			}
			off -= st[d] * dom[d]
			idx[d] = 0
		}
	}
}

func gatherAffine[T elem](out, x []T, dom, st []int, base, r int) {
	if r == 1 {
		affineWalk(dom, st, base, func(p, off, count, stride int) {
			o := out[p : p+count]
			for j := range o {
				o[j] = x[off]
				off += stride
			}
		})
		return
	}
	affineWalk(dom, st, base, func(p, off, count, stride int) {
		for j := 0; j < count; j++ {
			copy(out[(p+j)*r:(p+j+1)*r], x[off*r:off*r+r])
			off += stride
		}
	})
}

func scatterAffine[T elem](out, x []T, dom, st []int, base, r int, add func(a, b T) T) {
	var zero T
	for i := range out {
		out[i] = zero
	}
	affineWalk(dom, st, base, func(p, off, count, stride int) {
		for j := 0; j < count; j++ {
			dst := out[off*r : off*r+r]
			for i, v := range x[(p+j)*r : (p+j+1)*r] {
				dst[i] = add(dst[i], v)
			}
			off += stride
		}
	})
}
