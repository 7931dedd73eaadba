package kernel

import (
	"fmt"
	"math/rand"
	"testing"

	"github.com/bulkad/bulkad/core"

	"gorgonia.org/tensor"
)

// randAffineCase describes an index function e_k = c0[k] + k·dyn[k] + Σ_j c[k][j]·i_j and
// is checked against a naive loop written from the description.
type randAffineCase struct {
	dom  []int     // domain dims (index variables)
	c    [][]int64 // m × n coefficients
	c0   []int64
	dyn  []bool // add the scalar parameter k to component k
	form int    // 0: affine terms, 1: wrapped in quot (2·e) 2 (closure path), 2: via let (fallback)
}

func (rc randAffineCase) eval(pt []int, kval int64) []int64 {
	out := make([]int64, len(rc.c))
	for k := range rc.c {
		v := rc.c0[k]
		if rc.dyn[k] {
			v += kval
		}
		for j, cj := range rc.c[k] {
			v += cj * int64(pt[j])
		}
		out[k] = v
	}
	return out
}

func (rc randAffineCase) fn(b *core.Builder, kv core.Term) *core.IndexFn {
	vars := make([]*core.Var, len(rc.dom))
	for j := range vars {
		vars[j] = b.Var(fmt.Sprintf("i%d", j), core.Scalar(core.Int64))
	}
	outs := make([]core.Term, len(rc.c))
	for k := range rc.c {
		var e core.Term = core.ScalarI(rc.c0[k])
		if rc.dyn[k] {
			e = b.Add(kv, e)
		}
		for j, cj := range rc.c[k] {
			switch cj {
			case 0:
			case 1:
				e = b.Add(e, vars[j])
			case -1:
				e = b.Sub(e, vars[j])
			default:
				e = b.Add(b.Mul(core.ScalarI(cj), vars[j]), e)
			}
		}
		switch rc.form {
		case 1:
			e = b.Binary(core.OpQuot, b.Mul(e, core.ScalarI(2)), core.ScalarI(2))
		case 2:
			u := b.Var("u_", core.Scalar(core.Int64))
			e = b.Let(u, e, b.Add(u, core.ScalarI(0)))
		}
		outs[k] = e
	}
	return b.IndexFn(vars, outs...)
}

func each(dims []int, f func(pt []int)) {
	n := 1
	for _, d := range dims {
		n *= d
	}
	pt := make([]int, len(dims))
	for p := 0; p < n; p++ {
		q := p
		for j := len(dims) - 1; j >= 0; j-- {
			pt[j] = q % dims[j]
			q /= dims[j]
		}
		f(pt)
	}
}

func randCase(rng *rand.Rand, m int) randAffineCase {
	n := rng.Intn(4)
	rc := randAffineCase{form: rng.Intn(3)}
	for j := 0; j < n; j++ {
		rc.dom = append(rc.dom, rng.Intn(5))
	}
	for k := 0; k < m; k++ {
		row := make([]int64, n)
		for j := range row {
			row[j] = int64(rng.Intn(5) - 2)
		}
		rc.c = append(rc.c, row)
		rc.c0 = append(rc.c0, int64(rng.Intn(7)-3))
		rc.dyn = append(rc.dyn, rng.Intn(3) == 0)
	}
	return rc
}

func TestEvalGatherScatterRandomAffine(t *testing.T) {
	seed := int64(20261122)
	rng := rand.New(rand.NewSource(seed))
	for iter := 0; iter < 400; iter++ {
		d := floatDtypes[iter%2]
		// operand shape
		rank := 1 + rng.Intn(3)
		xs := make([]int, rank)
		for i := range xs {
			xs[i] = rng.Intn(4) + 1
		}
		m := rng.Intn(rank + 1)
		rc := randCase(rng, m)
		kval := int64(rng.Intn(5) - 2)
		rest := xs[m:]
		sz := core.Shape(xs).Size()
		vals := make([]float64, sz)
		for i := range vals {
			vals[i] = float64(rng.Intn(100))
		}
		// gather sh x f, sh = dom ++ rest
		sh := append(append(core.Shape{}, rc.dom...), rest...)
		var b core.Builder
		x := b.Var("x", core.Type{Shape: core.Shape(xs), Dtype: d})
		kv := b.Var("k", core.Scalar(core.Int64))
		p := mustProg(t, &b, []*core.Var{x, kv}, b.Gather(sh, x, rc.fn(&b, kv)))
		got := evalF(t, p, map[string]*tensor.Dense{"x": fd(d, xs, vals...), "k": id(nil, kval)})
		xstr := core.Shape(xs).Strides()
		rsz := core.Shape(rest).Size()
		var want []float64
		each(rc.dom, func(pt []int) {
			off, ok := flatOffset(rc.eval(pt, kval), xs, xstr)
			for r := 0; r < rsz; r++ {
				if ok {
					want = append(want, vals[off+r])
				} else {
					want = append(want, 0)
				}
			}
		})
		if want == nil {
			want = []float64{}
		}
		checkFloats(t, fmt.Sprintf("seed %d iter %d: %s with k=%d", seed, iter, p, kval), got, want, 0)

		// scatter: operand y of shape dom ++ rest into target xs (m computed indices)
		ysh := append(append(core.Shape{}, rc.dom...), rest...)
		ysz := ysh.Size()
		yvals := make([]float64, ysz)
		for i := range yvals {
			yvals[i] = float64(rng.Intn(100))
		}
		var b2 core.Builder
		y := b2.Var("y", core.Type{Shape: ysh, Dtype: d})
		kv2 := b2.Var("k", core.Scalar(core.Int64))
		p2 := mustProg(t, &b2, []*core.Var{y, kv2}, b2.Scatter(core.Shape(xs), y, rc.fn(&b2, kv2)))
		got2 := evalF(t, p2, map[string]*tensor.Dense{"y": fd(d, ysh, yvals...), "k": id(nil, kval)})
		want2 := make([]float64, sz)
		src := 0
		each(rc.dom, func(pt []int) {
			off, ok := flatOffset(rc.eval(pt, kval), xs, xstr)
			for r := 0; r < rsz; r++ {
				if ok {
					want2[off+r] += yvals[src+r]
				}
			}
			src += rsz
		})
		checkFloats(t, fmt.Sprintf("seed %d iter %d: %s with k=%d", seed, iter, p2, kval), got2, want2, 0)
	}
}

// flatOffset is the element offset of index ix into an array of outer dims xs (strides xstr),
// and false when an index is out of bounds.
func flatOffset(ix []int64, xs []int, xstr []int) (int, bool) {
	off := 0
	for k, v := range ix {
		if v < 0 || v >= int64(xs[k]) {
			return 0, false
		}
		off += int(v) * xstr[k]
	}
	return off, true
}
