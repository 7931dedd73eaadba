package raise

import (
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas32"
	"gonum.org/v1/gonum/blas/blas64"
)

// gemmK is out[m,n] = op(a) · op(b) with op a transpose when the flag is set: a is stored as
// [m,k] (or [k,m] when transA), b as [k,n] (or [n,k] when transB).
type gemmK struct {
	transA, transB bool
	m, n, k        int
	vk             *Vulkan
}

func (g gemmK) run(out any, ins []any) error {
	if g.device(out, ins) {
		return nil
	}
	ta, tb := blas.NoTrans, blas.NoTrans
	ar, ac, br, bc := g.m, g.k, g.k, g.n
	if g.transA {
		ta, ar, ac = blas.Trans, g.k, g.m
	}
	if g.transB {
		tb, br, bc = blas.Trans, g.n, g.k
	}
	switch o := out.(type) {
	case []float64:
		a, ok1 := ins[0].([]float64)
		b, ok2 := ins[1].([]float64)
		if !ok1 || !ok2 || len(a) != ar*ac || len(b) != br*bc || len(o) != g.m*g.n {
			break
		}
		if g.k == 0 || g.m == 0 || g.n == 0 {
			for i := range o {
				o[i] = 0
			}
			return nil
		}
		blas64.Gemm(ta, tb, 1,
			blas64.General{Rows: ar, Cols: ac, Stride: max(ac, 1), Data: a},
			blas64.General{Rows: br, Cols: bc, Stride: max(bc, 1), Data: b},
			0, blas64.General{Rows: g.m, Cols: g.n, Stride: max(g.n, 1), Data: o})
		return nil
	case []float32:
		a, ok1 := ins[0].([]float32)
		b, ok2 := ins[1].([]float32)
		if !ok1 || !ok2 || len(a) != ar*ac || len(b) != br*bc || len(o) != g.m*g.n {
			break
		}
		if g.k == 0 || g.m == 0 || g.n == 0 {
			for i := range o {
				o[i] = 0
			}
			return nil
		}
		blas32.Gemm(ta, tb, 1,
			blas32.General{Rows: ar, Cols: ac, Stride: max(ac, 1), Data: a},
			blas32.General{Rows: br, Cols: bc, Stride: max(bc, 1), Data: b},
			0, blas32.General{Rows: g.m, Cols: g.n, Stride: max(g.n, 1), Data: o})
		return nil
	case []int64:
		a, ok1 := ins[0].([]int64)
		b, ok2 := ins[1].([]int64)
		if !ok1 || !ok2 || len(a) != ar*ac || len(b) != br*bc || len(o) != g.m*g.n {
			break
		}
		for i := 0; i < g.m; i++ {
			for j := 0; j < g.n; j++ {
				var s int64
				for l := 0; l < g.k; l++ {
					ai, bi := i*g.k+l, l*g.n+j
					if g.transA {
						ai = l*g.m + i
					}
					if g.transB {
						bi = j*g.k + l
					}
					s += a[ai] * b[bi]
				}
				o[i*g.n+j] = s
			}
		}
		return nil
	}
	return typeErr("matmul", out, ins)
}
