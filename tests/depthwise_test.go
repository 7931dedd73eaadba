package tests

import (
	"fmt"
	"math/rand"
	"testing"

	"github.com/bulkad/bulkad/core"
	kern "github.com/bulkad/bulkad/kernel"
)

// TestDepthwiseWindows: a depthwise convolution built from an im2col as a Gorgonia user
// builds it — windows G = reshape [P, C, 9] (gather [b, oh, ow, c, 3, 3] x (\[b, oh, ow, c,
// kh, kw] -> [b, c, oh·s + kh − p, ow·s + kw − p])), the forward sumOuter (tr [2,0,1] (G *
// replicate P f)) and the filter gradient scatter [1, C, 9] (δ spread over the taps * G)
// \[p] -> [0] — raised coarsely equals core.Eval bit for bit, the windows read in place with
// the channels as lanes (kern.DepthwiseWindows: the test checks it runs), also with the
// factors swapped, with channel counts past whole vectors, with stride 2 and with x
// channels-last, transposed for the gather (read through the transposition); windows too
// few to expand x (a 1×1 window) stay materialised.
func TestDepthwiseWindows(t *testing.T) {
	cases := []struct {
		b, c, h, k, s, p    int
		filter, swap, trans bool
		fused               bool
	}{
		{2, 32, 9, 3, 1, 1, false, false, false, true},
		{2, 32, 9, 3, 1, 1, true, false, false, true},
		{2, 20, 8, 3, 1, 1, false, true, false, true},
		{2, 20, 8, 3, 1, 1, true, true, false, true},
		{1, 16, 12, 3, 2, 1, false, false, false, true},
		{1, 16, 12, 3, 2, 1, true, false, false, true},
		{2, 24, 7, 3, 1, 1, false, false, true, true}, // x channels-last, transposed for the gather
		{2, 24, 7, 3, 1, 1, true, false, true, true},
		{2, 8, 16, 1, 1, 0, false, false, false, false}, // 1×1: the gather does not expand x
	}
	r := rand.New(rand.NewSource(31))
	for _, c := range cases {
		for _, dt := range []core.Dtype{core.Float64, core.Float32} {
			what := fmt.Sprintf("%+v %v", c, dt)
			p := depthwiseProgram(t, dt, c.b, c.c, c.h, c.k, c.s, c.p, c.filter, c.swap, c.trans)
			g := coarseSameBits(t, r, what, p)
			fused := planSteps(g, func(k kern.Kernel) bool { _, ok := k.(*kern.DepthwiseWindows); return ok })
			if (fused > 0) != c.fused {
				t.Errorf("%s: %d DepthwiseWindows steps, want them %v", what, fused, c.fused)
			}
			if tr := planSteps(g, func(k kern.Kernel) bool { _, ok := k.(kern.Transpose); return ok }); c.trans && tr > 0 {
				t.Errorf("%s: x transposed in %d steps, want it read through the transposition", what, tr)
			}
		}
	}
}

// depthwiseProgram is x, f ↦ the depthwise forward (filter false) or x, δ ↦ the filter
// gradient (filter true) of a k×k window of stride s and padding p over x [b, c, h, h]; swap
// puts the windows second in the product; trans takes x channels-last, [b, h, h, c], and
// transposes it for the gather.
func depthwiseProgram(t *testing.T, dt core.Dtype, b, c, h, k, s, p int, filter, swap, trans bool) *core.Program {
	t.Helper()
	oh := (h+2*p-k)/s + 1
	pts := b * oh * oh
	x, _ := core.NewVar("x", core.Type{Shape: core.Shape{b, c, h, h}, Dtype: dt})
	var src core.Term = x
	if trans {
		x, _ = core.NewVar("x", core.Type{Shape: core.Shape{b, h, h, c}, Dtype: dt})
		var err error
		if src, err = core.NewTranspose([]int{0, 3, 1, 2}, x); err != nil {
			t.Fatal(err)
		}
	}
	fn := convWindowFn(t, s, 1, p)
	g, err := core.NewGather(core.Shape{b, oh, oh, c, k, k}, src, fn)
	if err != nil {
		t.Fatal(err)
	}
	var bd core.Builder
	win := bd.Reshape(core.Shape{pts, c, k * k}, g)
	var other, body core.Term
	var second *core.Var
	if filter {
		second, _ = core.NewVar("delta", core.Type{Shape: core.Shape{pts, c}, Dtype: dt})
		other = bd.Transpose([]int{1, 2, 0}, bd.Replicate(k*k, second))
	} else {
		second, _ = core.NewVar("f", core.Type{Shape: core.Shape{c, k * k}, Dtype: dt})
		other = bd.Replicate(pts, second)
	}
	prod := bd.Mul(win, other)
	if swap {
		prod = bd.Mul(other, win)
	}
	if bd.Err() != nil {
		t.Fatal(bd.Err())
	}
	if filter {
		v := indexVars(1)
		zero, err := core.NewIndexFn(v, []core.Term{litIndex(t, 0)})
		if err != nil {
			t.Fatal(err)
		}
		if body, err = core.NewScatter(core.Shape{1, c, k * k}, prod, zero); err != nil {
			t.Fatal(err)
		}
	} else {
		body = bd.SumOuter(bd.Transpose([]int{2, 0, 1}, prod))
	}
	if bd.Err() != nil {
		t.Fatal(bd.Err())
	}
	prog, err := core.NewProgram([]*core.Var{x, second}, body)
	if err != nil {
		t.Fatal(err)
	}
	return prog
}
