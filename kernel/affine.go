package kernel

import "github.com/bulkad/bulkad/core"

// Affine index functions (window extraction for convolution and pooling, shifts, strided
// slices, broadcasts) are recognised at build time: when every output is an affine function of
// the bound variables and interval arithmetic proves it in bounds for the whole domain, a
// gather or scatter becomes a strided copy (or accumulation) with no per-element closure calls
// and no bounds checks.

// affineOf returns t as c + Σ coef[v]·var_v over the bound variables (vars gives each
// variable's position), or false.
func affineOf(t core.Term, vars map[string]int, n int) (coef []int64, c int64, ok bool) {
	switch u := t.(type) {
	case *core.Var:
		k, bound := vars[u.Name]
		if !bound {
			return nil, 0, false
		}
		coef = make([]int64, n)
		coef[k] = 1
		return coef, 0, true
	case *core.Lit:
		if u.I == nil {
			return nil, 0, false
		}
		return make([]int64, n), u.I[0], true
	case *core.Share:
		return affineOf(u.Body, vars, n)
	case *core.Unary:
		if u.Op != core.OpNeg {
			return nil, 0, false
		}
		a, ac, ok := affineOf(u.X, vars, n)
		if !ok {
			return nil, 0, false
		}
		for i := range a {
			a[i] = -a[i]
		}
		return a, -ac, true
	case *core.Binary:
		a, ac, ok1 := affineOf(u.X, vars, n)
		b, bc, ok2 := affineOf(u.Y, vars, n)
		if !ok1 || !ok2 {
			return nil, 0, false
		}
		switch u.Op {
		case core.OpAdd, core.OpSub:
			sign := int64(1)
			if u.Op == core.OpSub {
				sign = -1
			}
			for i := range a {
				a[i] += sign * b[i]
			}
			return a, ac + sign*bc, true
		case core.OpMul:
			if isZero(a) {
				for i := range b {
					b[i] *= ac
				}
				return b, ac * bc, true
			}
			if isZero(b) {
				for i := range a {
					a[i] *= bc
				}
				return a, ac * bc, true
			}
		}
	}
	return nil, 0, false
}

func isZero(a []int64) bool {
	for _, v := range a {
		if v != 0 {
			return false
		}
	}
	return true
}

// AffinePlan returns, for an index function over domain dom addressing the outer dims outer
// of an array (in blocks), the flat block stride of every bound variable and the base
// offset, when every output is affine and provably in bounds.
func AffinePlan(fn *core.IndexFn, dom, outer []int) (strides []int, base int, ok bool) {
	n := len(fn.Vars)
	vars := make(map[string]int, n)
	for i, v := range fn.Vars {
		vars[v.Name] = i
	}
	for _, d := range dom {
		if d == 0 {
			return nil, 0, false // empty domain: the general loop handles it
		}
	}
	ost := core.Shape(outer).Strides()
	strides = make([]int, n)
	for d, o := range fn.Out {
		coef, c, ok := affineOf(o, vars, n)
		if !ok {
			return nil, 0, false
		}
		lo, hi := c, c
		for v, a := range coef {
			m := a * int64(dom[v]-1)
			if m < 0 {
				lo += m
			} else {
				hi += m
			}
		}
		if lo < 0 || hi >= int64(outer[d]) {
			return nil, 0, false
		}
		base += int(c) * ost[d]
		for v, a := range coef {
			strides[v] += int(a) * ost[d]
		}
	}
	return strides, base, true
}

// affineLoop visits the domain in row-major order and calls f(p, off) with the output
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
