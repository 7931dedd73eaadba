package kernel

import (
	"math/rand"
	"testing"

	"github.com/bulkad/bulkad/core"
)

// gorgoniaIm2col is the window function of Gorgonia's Im2Col: domain [b, oh, ow, c, kh, kw]
// over an image [b, c, h, w] (convPattern's layout), as its own case.
func gorgoniaIm2col(name string, b, c, h, w, k, s, d, pad int) clipCase {
	return conv(name, b, c, h, w, k, s, d, pad, true)
}

// TestClipAcross: the gathers that an across plan walks (clip_across.go) — Gorgonia's
// im2col at strides 1 and 2, dilation 2, a 5×5 window, the depthwise windows
// [b, c, h, w, kh, kw], a reversed column — give core.Eval's result bit for bit in every
// dtype over a dirty output (the kernel must clear what it does not write), and the cases
// an across plan must not take (long rows already, a column read at stride 3, an output
// block too large to stay in cache, blocks of several elements) give it too.
func TestClipAcross(t *testing.T) {
	cases := []struct {
		cc     clipCase
		across bool
	}{
		{gorgoniaIm2col("im2col 3x3 pad 1", 2, 3, 9, 10, 3, 1, 1, 1), true},
		{gorgoniaIm2col("im2col 3x3 pad 1 stride 2", 2, 3, 17, 18, 3, 2, 1, 1), true},
		{gorgoniaIm2col("im2col 3x3 pad 2 dilation 2", 1, 2, 8, 11, 3, 1, 2, 2), true},
		{gorgoniaIm2col("im2col 5x5 pad 2", 1, 2, 9, 12, 5, 1, 1, 2), true},
		{gorgoniaIm2col("im2col 3x3 pad 1, one row", 1, 2, 1, 16, 3, 1, 1, 1), true},
		{clipCase{name: "depthwise windows [n,c,oh,ow,3,3]", dom: []int{2, 3, 5, 9, 3, 3}, outer: []int{2, 3, 5, 9},
			c:  [][]int64{{1, 0, 0, 0, 0, 0}, {0, 1, 0, 0, 0, 0}, {0, 0, 1, 0, 1, 0}, {0, 0, 0, 1, 0, 1}},
			c0: []int64{0, 0, -1, -1}}, true},
		{clipCase{name: "reversed column", dom: []int{3, 10, 2}, outer: []int{3, 10},
			c: [][]int64{{1, 0, 0}, {0, -1, 1}}, c0: []int64{0, 9}}, true},
		{gorgoniaIm2col("im2col 3x3 pad 1 stride 3", 1, 2, 30, 30, 3, 3, 1, 1), false},
		{gorgoniaIm2col("im2col 3x3 pad 1, block too large", 1, 210, 1, 9, 3, 1, 1, 1), false},
		{clipCase{name: "shift, long rows", dom: []int{4, 12}, outer: []int{4, 12}, c: [][]int64{{1, 0}, {0, 1}}, c0: []int64{0, -1}}, false},
		{clipCase{name: "blocks of 2", dom: []int{2, 9, 3}, outer: []int{2, 10}, rest: []int{2},
			c: [][]int64{{1, 0, 0}, {0, 1, 1}}, c0: []int64{0, -1}}, true},
	}
	rng := rand.New(rand.NewSource(3))
	for _, c := range cases {
		t.Run(c.cc.name, func(t *testing.T) {
			var b core.Builder
			prog, err := CompileIndexFn(c.cc.fn(&b))
			if err != nil {
				t.Fatal(err)
			}
			p := prog.ClipPlan(c.cc.dom, c.cc.outer)
			if p == nil {
				t.Fatal("no clipped plan")
			}
			if got := p.across != nil; got != c.across {
				t.Fatalf("across plan %v, want %v", got, c.across)
			}
			checkClip(t, rng, c.cc, true)
		})
	}
}

// TestClipAcrossSplit: an across gather large enough to be split across goroutines gives
// the serial result with GOMAXPROCS 2 and 3, and the definition's.
func TestClipAcrossSplit(t *testing.T) {
	cc := gorgoniaIm2col("im2col", 8, 12, 28, 28, 3, 1, 1, 1)
	s := cc.setup(t, rand.New(rand.NewSource(9)), core.Float32, false)
	p := s.plan.Clip
	if p == nil || p.across == nil {
		t.Fatal("not on the across path")
	}
	if work := costOf(p.across.points(), p.across.weight(1)); workers(p.across.dom[0], work) < 2 {
		t.Fatal("too small to be split: the test does not cover the split")
	}
	x := flatOf(s.x).([]float32)
	got := checkSplit(t, cc.name, runOp(t, s.k, make([]float32, core.Shape(cc.dom).Size()), x)).([]float32)
	x64 := make([]float64, len(x))
	for i, v := range x {
		x64[i] = float64(v)
	}
	want := clipDef(cc, x64, false)
	for i := range want {
		if float64(got[i]) != want[i] && !(got[i] != got[i] && want[i] != want[i]) {
			t.Fatalf("element %d: got %v, want %v", i, got[i], want[i])
		}
	}
}
