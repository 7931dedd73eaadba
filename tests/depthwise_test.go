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
// factors swapped, with channel counts past whole vectors and with stride 2; windows too few
// to expand x (a 1×1 window) stay materialised.
func TestDepthwiseWindows(t *testing.T) {
	cases := []struct {
		b, c, h, k, s, p int
		filter, swap     bool
		fused            bool
	}{
		{2, 32, 9, 3, 1, 1, false, false, true},
		{2, 32, 9, 3, 1, 1, true, false, true},
		{2, 20, 8, 3, 1, 1, false, true, true},
		{2, 20, 8, 3, 1, 1, true, true, true},
		{1, 16, 12, 3, 2, 1, false, false, true},
		{1, 16, 12, 3, 2, 1, true, false, true},
		{2, 8, 16, 1, 1, 0, false, false, false}, // 1×1: the gather does not expand x
	}
	r := rand.New(rand.NewSource(31))
	for _, c := range cases {
		for _, dt := range []core.Dtype{core.Float64, core.Float32} {
			what := fmt.Sprintf("%+v %v", c, dt)
			p := depthwiseProgram(t, dt, c.b, c.c, c.h, c.k, c.s, c.p, c.filter, c.swap)
			fused := planSteps(coarseSameBits(t, r, what, p), func(k kern.Kernel) bool { _, ok := k.(*kern.DepthwiseWindows); return ok })
			if (fused > 0) != c.fused {
				t.Errorf("%s: %d DepthwiseWindows steps, want them %v", what, fused, c.fused)
			}
		}
	}
}

// depthwiseProgram is x, f ↦ the depthwise forward (filter false) or x, δ ↦ the filter
// gradient (filter true) of a k×k window of stride s and padding p over x [b, c, h, h]; swap
// puts the windows second in the product.
func depthwiseProgram(t *testing.T, dt core.Dtype, b, c, h, k, s, p int, filter, swap bool) *core.Program {
	t.Helper()
	oh := (h+2*p-k)/s + 1
	pts := b * oh * oh
	x, _ := core.NewVar("x", core.Type{Shape: core.Shape{b, c, h, h}, Dtype: dt})
	iv := indexVars(6)
	lit := func(v int) core.Term {
		l, err := core.NewLitI(core.Shape{}, []int64{int64(v)})
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	bin := func(op core.BinOp, x, y core.Term) core.Term {
		z, err := core.NewBinary(op, x, y)
		if err != nil {
			t.Fatal(err)
		}
		return z
	}
	pos := func(o, tap *core.Var) core.Term {
		return bin(core.OpSub, bin(core.OpAdd, bin(core.OpMul, o, lit(s)), tap), lit(p))
	}
	fn, err := core.NewIndexFn(iv, []core.Term{iv[0], iv[3], pos(iv[1], iv[4]), pos(iv[2], iv[5])})
	if err != nil {
		t.Fatal(err)
	}
	g, err := core.NewGather(core.Shape{b, oh, oh, c, k, k}, x, fn)
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
		zero, err := core.NewIndexFn(v, []core.Term{lit(0)})
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
