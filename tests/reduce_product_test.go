package tests

import (
	"fmt"
	"math/rand"
	"testing"

	"github.com/bulkad/bulkad/core"
	kern "github.com/bulkad/bulkad/kernel"
)

// TestReduceProduct: a depthwise convolution's filter gradient as a Gorgonia-built graph has
// it — scatter [1, C, 9] (δ spread over the taps * the windows) \[p] -> [0], the sum over
// the points — raised coarsely equals core.Eval bit for bit, summed as the products are
// computed (kern.ReduceProduct), also with the factors swapped and over two leading
// dimensions; windows read across their channels (not contiguous) and a product that is
// also a result are materialised as before.
func TestReduceProduct(t *testing.T) {
	cases := []struct {
		name                  string
		lead                  core.Shape
		c                     int
		swap, strided, shared bool
		block                 bool
		fused                 bool
	}{
		{"points", core.Shape{50}, 4, false, false, false, false, true},
		{"into the third block", core.Shape{30}, 4, false, false, false, true, true},
		{"windows first", core.Shape{37}, 3, true, false, false, false, true},
		{"two leading dimensions", core.Shape{3, 7}, 5, false, false, false, false, true},
		{"windows strided", core.Shape{20}, 4, false, true, false, false, false},
		{"product shared", core.Shape{20}, 4, false, false, true, false, false},
	}
	r := rand.New(rand.NewSource(23))
	for _, c := range cases {
		for _, dt := range []core.Dtype{core.Float64, core.Float32} {
			what := fmt.Sprintf("%s %v", c.name, dt)
			p := filterGradProgram(t, dt, c.lead, c.c, c.swap, c.strided, c.shared, c.block)
			fused := planSteps(coarseSameBits(t, r, what, p), func(k kern.Kernel) bool { _, ok := k.(*kern.ReduceProduct); return ok })
			if (fused > 0) != c.fused {
				t.Errorf("%s: %d ReduceProduct steps, want them %v", what, fused, c.fused)
			}
		}
	}
}

// filterGradProgram is (δ, win) ↦ Σ over lead of δ (spread over 9 taps) ⊙ win, as
// scatter [1, c, 9] … \[lead vars] -> [0]: δ : lead ++ [c], win : lead ++ [c, 9] (or, with
// strided, win : lead ++ [9, c] read transposed). swap multiplies win by δ; shared adds the
// product as a second result; block sums into the last of three blocks, [3, c, 9].
func filterGradProgram(t *testing.T, dt core.Dtype, lead core.Shape, c int, swap, strided, shared, block bool) *core.Program {
	t.Helper()
	dsh := append(lead.Clone(), c)
	delta, _ := core.NewVar("delta", core.Type{Shape: dsh, Dtype: dt})
	wsh := append(lead.Clone(), c, 9)
	if strided {
		wsh = append(lead.Clone(), 9, c)
	}
	win, _ := core.NewVar("win", core.Type{Shape: wsh, Dtype: dt})
	var bd core.Builder
	l := len(lead)
	perm := make([]int, l+2) // replicate puts the taps first: move them last
	for i := range l + 1 {
		perm[i] = i + 1
	}
	spread := bd.Transpose(perm, bd.Replicate(9, delta))
	var w core.Term = win
	if strided {
		tp := make([]int, l+2)
		for i := range l {
			tp[i] = i
		}
		tp[l], tp[l+1] = l+1, l
		w = bd.Transpose(tp, win)
	}
	prod := bd.Mul(spread, w)
	if swap {
		prod = bd.Mul(w, spread)
	}
	if bd.Err() != nil {
		t.Fatal(bd.Err())
	}
	iv := indexVars(l)
	at, blocks := int64(0), 1
	if block {
		at, blocks = 2, 3 // the sum lands in the third of three blocks, the others zero
	}
	target, _ := core.NewLitI(core.Shape{}, []int64{at})
	fn, err := core.NewIndexFn(iv, []core.Term{target})
	if err != nil {
		t.Fatal(err)
	}
	s, err := core.NewScatter(core.Shape{blocks, c, 9}, prod, fn)
	if err != nil {
		t.Fatal(err)
	}
	var body core.Term = s
	if shared {
		body = bd.Tuple(s, prod)
	}
	prog, err := core.NewProgram([]*core.Var{delta, win}, body)
	if err != nil {
		t.Fatal(err)
	}
	return prog
}
