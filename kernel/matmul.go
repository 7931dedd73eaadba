package kernel

import (
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas32"
	"gonum.org/v1/gonum/blas/blas64"
)

// MatMul is out[m,n] = op(a) · op(b) with op a transpose when the flag is set: a is stored as
// [m,k] (or [k,m] when transA), b as [k,n] (or [n,k] when transB).
type MatMul struct {
	TransA, TransB bool
	M, N, K        int
	VK             *Vulkan
}

// Run implements Kernel.
func (g MatMul) Run(out any, ins []any) error {
	if g.device(out, ins) {
		return nil
	}
	ta, tb := blas.NoTrans, blas.NoTrans
	ar, ac, br, bc := g.M, g.K, g.K, g.N
	if g.TransA {
		ta, ar, ac = blas.Trans, g.K, g.M
	}
	if g.TransB {
		tb, br, bc = blas.Trans, g.N, g.K
	}
	switch o := out.(type) {
	case []float64:
		a, ok1 := ins[0].([]float64)
		b, ok2 := ins[1].([]float64)
		if !ok1 || !ok2 || len(a) != ar*ac || len(b) != br*bc || len(o) != g.M*g.N {
			break
		}
		if g.K == 0 || g.M == 0 || g.N == 0 {
			for i := range o {
				o[i] = 0
			}
			return nil
		}
		blas64.Gemm(ta, tb, 1,
			blas64.General{Rows: ar, Cols: ac, Stride: max(ac, 1), Data: a},
			blas64.General{Rows: br, Cols: bc, Stride: max(bc, 1), Data: b},
			0, blas64.General{Rows: g.M, Cols: g.N, Stride: max(g.N, 1), Data: o})
		return nil
	case []float32:
		a, ok1 := ins[0].([]float32)
		b, ok2 := ins[1].([]float32)
		if !ok1 || !ok2 || len(a) != ar*ac || len(b) != br*bc || len(o) != g.M*g.N {
			break
		}
		if g.K == 0 || g.M == 0 || g.N == 0 {
			for i := range o {
				o[i] = 0
			}
			return nil
		}
		blas32.Gemm(ta, tb, 1,
			blas32.General{Rows: ar, Cols: ac, Stride: max(ac, 1), Data: a},
			blas32.General{Rows: br, Cols: bc, Stride: max(bc, 1), Data: b},
			0, blas32.General{Rows: g.M, Cols: g.N, Stride: max(g.N, 1), Data: o})
		return nil
	case []int64:
		a, ok1 := ins[0].([]int64)
		b, ok2 := ins[1].([]int64)
		if !ok1 || !ok2 || len(a) != ar*ac || len(b) != br*bc || len(o) != g.M*g.N {
			break
		}
		for i := 0; i < g.M; i++ {
			for j := 0; j < g.N; j++ {
				var s int64
				for l := 0; l < g.K; l++ {
					ai, bi := i*g.K+l, l*g.N+j
					if g.TransA {
						ai = l*g.M + i
					}
					if g.TransB {
						bi = j*g.K + l
					}
					s += a[ai] * b[bi]
				}
				o[i*g.N+j] = s
			}
		}
		return nil
	}
	return typeErr("matmul", out, ins)
}
