package kernel

import "github.com/bulkad/bulkad/core"

// WindowDot's loop nest merged where it can be, and its short rows (see window_dot.go).

// mergeInner merges the two innermost loop levels into one, as long as every access steps
// through them contiguously (the outer's stride is the inner's times its extent), no bounds
// check involves either and neither is one of the disjoint outer levels: a 2×2 map's rows of 2
// become one row of 4 (densenet121's gradients on 2×2 and 4×4 maps, scattered into their
// concatenation's slices, paid a walk step per row of 2). k.order keeps one variable per
// level of the unmerged nest.
func (k *WindowDot) mergeInner() {
	for {
		n := len(k.ldom)
		if n < 2 || n-2 < k.outer || len(k.chk[n-1]) > 0 || len(k.chk[n-2]) > 0 ||
			len(k.upd[n-1]) > 0 || len(k.upd[n-2]) > 0 {
			return
		}
		for _, c := range k.cons {
			if c.c[n-1] != 0 || c.c[n-2] != 0 {
				return
			}
		}
		for a := range 3 {
			if k.st[a][n-2] != k.st[a][n-1]*k.ldom[n-1] {
				return
			}
		}
		k.ldom[n-2] *= k.ldom[n-1]
		for a := range 3 {
			k.st[a][n-2] = k.st[a][n-1]
			k.st[a] = k.st[a][:n-1]
		}
		k.ldom, k.chk, k.upd = k.ldom[:n-1], k.chk[:n-1], k.upd[:n-1]
		for i := range k.cons {
			k.cons[i].c = k.cons[i].c[:n-1]
		}
	}
}

// axpyShortRows adds a[i·n + t]·b[i·sb] to d[i·n + t] (the product rounded first) for the
// len(d)/n rows of n < 8 elements, rows of 4 written out.
func axpyShortRows[T floatT](d, a, b []T, n, sb int) {
	a = a[:len(d)]
	if n == 4 {
		for i := 0; i+4 <= len(d); i += 4 {
			v := b[i/4*sb]
			dd, aa := (*[4]T)(d[i:]), (*[4]T)(a[i:])
			dd[0] += T(aa[0] * v)
			dd[1] += T(aa[1] * v)
			dd[2] += T(aa[2] * v)
			dd[3] += T(aa[3] * v)
		}
		return
	}
	for i, r := 0, 0; i < len(d); i, r = i+n, r+1 {
		v := b[r*sb]
		for t, x := range a[i : i+n] {
			d[i+t] += T(x * v)
		}
	}
}

// vecRowMin is the shortest row of element-wise products row adds with the vector loops.
const vecRowMin = 16

// mulAddUnit adds s[t]·u[t] to d[t] (the product rounded first, as d[t] += T(s[t]·u[t]))
// with the vector loops, through a stack buffer of products: densenet121's gradients scatter
// such rows of products into their concatenation's slices (593 kernels a step, 1.8 ns a
// product element by element).
func mulAddUnit[T floatT](d, s, u []T) {
	var buf [256]T
	for len(d) > 0 {
		c := min(len(d), len(buf))
		p := buf[:c]
		done := simdBinary(core.OpMul, p, s[:c], u[:c])
		for t := done; t < c; t++ {
			p[t] = s[t] * u[t]
		}
		addTo(d[:c], p)
		d, s, u = d[c:], s[c:], u[c:]
	}
}
