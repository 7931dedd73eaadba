package tests

import (
	"fmt"
	"math/rand"
	"testing"

	"github.com/bulkad/bulkad/core"
	"github.com/bulkad/bulkad/core/tensors"
	kern "github.com/bulkad/bulkad/kernel"
	"github.com/bulkad/bulkad/raise"
)

// TestScatterProduct: a depthwise convolution's input gradient as a Gorgonia-built graph
// has it — scatter (reshape [b, oh, ow, c, 3, 3] (δ spread over the taps * the filter
// broadcast over the points)) into a padded image, channels-first or channels-last — raised
// coarsely equals core.Eval bit for bit, with the product computed inside the scatter
// (kern.ScatterProduct) and never materialised; so do the factors in the other order and
// two factors that both vary along the taps. A product used by another result too is
// materialised as before. ScatterProduct is checked with the window products off
// (raise.Options.Materialised); by default the larger cases run with the channels as vector
// lanes (kern.DepthwiseWindows' input gradient), to the same bits.
func TestScatterProduct(t *testing.T) {
	cases := []struct {
		name               string
		b, c, h            int
		channelsLast, swap bool
		tapsBoth, shared   bool
		fused              bool
	}{
		{"channels-first", 2, 3, 9, false, false, false, false, true},
		{"channels-first, short rows", 2, 3, 6, false, false, false, false, true},
		{"channels-first, vectors and a tail", 1, 2, 19, false, false, false, false, true},
		{"channels-last", 2, 5, 8, true, false, false, false, true},
		{"channels-last, whole vectors", 2, 16, 8, true, false, false, false, true},
		{"channels-last, vectors and a tail", 1, 11, 9, true, false, false, false, true},
		{"filter first", 1, 4, 6, true, true, false, false, true},
		{"both along the taps", 2, 3, 7, false, false, true, false, true},
		{"product shared", 2, 3, 9, false, false, false, true, false},
	}
	r := rand.New(rand.NewSource(17))
	for _, c := range cases {
		for _, dt := range []core.Dtype{core.Float64, core.Float32} {
			what := fmt.Sprintf("%s %v", c.name, dt)
			p := depthwiseGradProgram(t, dt, c.b, c.c, c.h, c.channelsLast, c.swap, c.tapsBoth, c.shared)
			args := randArgs(r, p)
			want, err := tensors.EvalTuple(p, args)
			if err != nil {
				t.Fatal(err)
			}
			// window products off: ScatterProduct's own plan
			g := raisedSameBits(t, what, p, args, want, raise.Options{Coarse: true, Materialised: true})
			fused := planSteps(g, func(k kern.Kernel) bool { _, ok := k.(*kern.ScatterProduct); return ok })
			if (fused > 0) != c.fused {
				t.Errorf("%s: %d ScatterProduct steps, want them %v", what, fused, c.fused)
			}
			// by default: the channels as lanes (kern.DepthwiseWindows) where the domain has
			// 4096 points and δ does not vary along the taps
			g = raisedSameBits(t, what+" (default)", p, args, want, raise.Options{Coarse: true})
			lanes := planSteps(g, func(k kern.Kernel) bool { dk, ok := k.(*kern.DepthwiseWindows); return ok && dk.Input })
			if wantLanes := c.fused && !c.tapsBoth && c.b*c.h*c.h*c.c*9 >= 4096; (lanes > 0) != wantLanes {
				t.Errorf("%s: %d DepthwiseWindows input steps, want them %v", what, lanes, wantLanes)
			}
		}
	}
}

// depthwiseGradProgram is (δ, w) ↦ col2im(δ ⊗ w) for a 3×3 depthwise convolution with
// padding 1 of [b, c, h, h] images (or [b, h, h, c] with channelsLast): δ : [b·h·h, c], w :
// [c, 9]; the product is [b·h·h, c, 9], δ read along the taps through a replicate and a
// transpose. swap multiplies the filter by δ; tapsBoth makes δ [b·h·h, c, 9] itself;
// shared adds the product as a second result.
func depthwiseGradProgram(t *testing.T, dt core.Dtype, b, c, h int, channelsLast, swap, tapsBoth, shared bool) *core.Program {
	t.Helper()
	pts := b * h * h
	dsh := core.Shape{pts, c}
	if tapsBoth {
		dsh = core.Shape{pts, c, 9}
	}
	delta, _ := core.NewVar("delta", core.Type{Shape: dsh, Dtype: dt})
	w, _ := core.NewVar("w", core.Type{Shape: core.Shape{c, 9}, Dtype: dt})
	var bd core.Builder
	var dx core.Term = delta
	if !tapsBoth {
		dx = bd.Transpose([]int{1, 2, 0}, bd.Replicate(9, delta)) // [pts, c, 9]
	}
	wx := bd.Replicate(pts, w) // [pts, c, 9]
	prod := bd.Mul(dx, wx)
	if swap {
		prod = bd.Mul(wx, dx)
	}
	cols := bd.Reshape(core.Shape{b, h, h, c, 3, 3}, prod)
	if bd.Err() != nil {
		t.Fatal(bd.Err())
	}
	iv := indexVars(6)
	pos := func(o, tap *core.Var) core.Term { // o + tap − 1
		one, _ := core.NewLitI(core.Shape{}, []int64{1})
		s, err := core.NewBinary(core.OpAdd, o, tap)
		if err != nil {
			t.Fatal(err)
		}
		d, err := core.NewBinary(core.OpSub, s, one)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	out := []core.Term{iv[0], iv[3], pos(iv[1], iv[4]), pos(iv[2], iv[5])}
	sh := core.Shape{b, c, h, h}
	if channelsLast {
		out = []core.Term{iv[0], pos(iv[1], iv[4]), pos(iv[2], iv[5]), iv[3]}
		sh = core.Shape{b, h, h, c}
	}
	fn, err := core.NewIndexFn(iv, out)
	if err != nil {
		t.Fatal(err)
	}
	img, err := core.NewScatter(sh, cols, fn)
	if err != nil {
		t.Fatal(err)
	}
	var body core.Term = img
	if shared {
		body = bd.Tuple(img, prod)
	}
	prog, err := core.NewProgram([]*core.Var{delta, w}, body)
	if err != nil {
		t.Fatal(err)
	}
	return prog
}
