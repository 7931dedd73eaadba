package kernel

import (
	"math"
	"math/rand"
	"testing"

	"github.com/bulkad/bulkad/core"
)

// gorgoniaIm2col is the window function of Gorgonia's Im2Col: domain [b, oh, ow, c, kh, kw]
// over an image [b, c, h, w] (convPattern's layout), as its own case.
func gorgoniaIm2col(name string, b, c, h, w, k, s, d, pad int) clipCase {
	return conv(name, b, c, h, w, k, s, d, pad, true)
}

// acrossCases are index functions with and without across plans (clip_across.go): for a
// gather (across) and for a scatter (add).
func acrossCases() []struct {
	cc          clipCase
	across, add bool
} {
	return []struct {
		cc          clipCase
		across, add bool
	}{
		{gorgoniaIm2col("im2col 3x3 pad 1", 2, 3, 9, 10, 3, 1, 1, 1), true, true},
		{gorgoniaIm2col("im2col 3x3 pad 1 stride 2", 2, 3, 17, 18, 3, 2, 1, 1), true, true},
		{gorgoniaIm2col("im2col 3x3 pad 2 dilation 2", 1, 2, 8, 11, 3, 1, 2, 2), true, true},
		{gorgoniaIm2col("im2col 5x5 pad 2", 1, 2, 9, 12, 5, 1, 1, 2), true, true},
		{gorgoniaIm2col("im2col 3x3 pad 1, one row", 1, 2, 1, 16, 3, 1, 1, 1), true, true},
		{clipCase{name: "depthwise windows [n,c,oh,ow,3,3]", dom: []int{2, 3, 5, 9, 3, 3}, outer: []int{2, 3, 5, 9},
			c:  [][]int64{{1, 0, 0, 0, 0, 0}, {0, 1, 0, 0, 0, 0}, {0, 0, 1, 0, 1, 0}, {0, 0, 0, 1, 0, 1}},
			c0: []int64{0, 0, -1, -1}}, true, true},
		{clipCase{name: "im2col of a channels-last image", dom: []int{2, 5, 4, 9, 3, 3}, outer: []int{2, 5, 4, 9},
			c:  [][]int64{{1, 0, 0, 0, 0, 0}, {0, 1, 0, 0, 1, 0}, {0, 0, 1, 0, 0, 1}, {0, 0, 0, 1, 0, 0}},
			c0: []int64{0, -1, -1, 0}}, true, true},
		{clipCase{name: "reversed column", dom: []int{3, 10, 2}, outer: []int{3, 10},
			c: [][]int64{{1, 0, 0}, {0, -1, 1}}, c0: []int64{0, 9}}, true, true},
		{clipCase{name: "a variable in two outputs", dom: []int{2, 9, 3}, outer: []int{2, 3, 11},
			c: [][]int64{{1, 0, 0}, {0, 0, 1}, {0, 1, 1}}, c0: []int64{0, 0, -1}}, true, false},
		{clipCase{name: "groups met in another order", dom: []int{3, 3, 9, 3}, outer: []int{5, 11},
			c: [][]int64{{0, 1, 0, 1}, {1, 0, 1, 0}}, c0: []int64{-1, -1}}, true, false},
		{clipCase{name: "the across variable first", dom: []int{9, 3}, outer: []int{10}, c: [][]int64{{1, 1}}, c0: []int64{-1}}, true, true},
		{gorgoniaIm2col("im2col 3x3 pad 1 stride 3", 1, 2, 30, 30, 3, 3, 1, 1), false, false},
		{gorgoniaIm2col("im2col 3x3 pad 1, block too large", 1, 210, 1, 9, 3, 1, 1, 1), false, false},
		{clipCase{name: "shift, long rows", dom: []int{4, 12}, outer: []int{4, 12}, c: [][]int64{{1, 0}, {0, 1}}, c0: []int64{0, -1}}, false, false},
		{clipCase{name: "blocks of 2", dom: []int{2, 9, 3}, outer: []int{2, 10}, rest: []int{2},
			c: [][]int64{{1, 0, 0}, {0, 1, 1}}, c0: []int64{0, -1}}, true, true},
	}
}

// TestClipAcross: the gathers and scatters an across plan walks — Gorgonia's im2col and
// col2im at strides 1 and 2, dilation 2, a 5×5 window, the depthwise windows, a
// channels-last image, a reversed column — give core.Eval's result bit for bit in every
// dtype over a dirty output (the kernel must clear what it does not write), and so do the
// cases an across plan must not take (a variable in two outputs or groups met in another
// order for a scatter; long rows, a column read at stride 3, an output block too large to
// stay in cache; blocks of several elements).
func TestClipAcross(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	for _, c := range acrossCases() {
		t.Run(c.cc.name, func(t *testing.T) {
			p := acrossClipPlan(t, c.cc)
			if got := p.across != nil; got != c.across {
				t.Fatalf("gather's across plan %v, want %v", got, c.across)
			}
			if got := p.acrossAdd != nil; got != c.add {
				t.Fatalf("scatter's across plan %v, want %v", got, c.add)
			}
			checkClip(t, rng, c.cc, true)
		})
	}
}

// acrossClipPlan is the clipped plan of a case.
func acrossClipPlan(t *testing.T, cc clipCase) *ClipPlan {
	t.Helper()
	var b core.Builder
	prog, err := CompileIndexFn(cc.fn(&b))
	if err != nil {
		t.Fatal(err)
	}
	p := prog.ClipPlan(cc.dom, cc.outer)
	if p == nil {
		t.Fatal("no clipped plan")
	}
	return p
}

// TestClipAcrossScatterOrder: a scatter walked across adds the points of each destination
// in the domain's order. Its operands have magnitudes from 2⁻³⁰ to 2³⁰, so that sums in
// another order round differently (checkClip's operands, small multiples of ¼, add
// exactly in any order); the results must equal core.Eval's bit for bit in float64 and
// float32. (Walking the im2col's column forwards, or accepting the case whose groups the
// walk meets in another order, fails it.)
func TestClipAcrossScatterOrder(t *testing.T) {
	rng := rand.New(rand.NewSource(11))
	for _, c := range acrossCases() {
		if !c.add || len(c.cc.rest) > 0 {
			continue
		}
		k := scatterOf(t, c.cc)
		if k.Clip == nil || k.Clip.acrossAdd == nil {
			t.Fatalf("%s: no across plan", c.cc.name)
		}
		checkScatterOrder(t, rng, c.cc, k)
	}
}

// scatterOf is the case's scatter kernel as package raise builds it (blocks of one element).
func scatterOf(t *testing.T, cc clipCase) *Scatter {
	t.Helper()
	var b core.Builder
	prog, err := CompileIndexFn(cc.fn(&b))
	if err != nil {
		t.Fatal(err)
	}
	k := &Scatter{Dom: cc.dom, Dst: cc.outer, Rest: 1, IndexPlan: IndexPlan{Fn: prog}}
	k.SetFastPaths(cc.dom, cc.outer)
	return k
}

// checkScatterOrder runs k, the case's scatter, in float64 and float32 on operands of
// magnitudes 2^±30 and both signs (sums of them in another order round differently) over a
// dirty output, against core.Eval (which adds in the domain's order) bit for bit.
func checkScatterOrder(t *testing.T, rng *rand.Rand, cc clipCase, k *Scatter) {
	t.Helper()
	for _, d := range []core.Dtype{core.Float64, core.Float32} {
		v := make([]float64, core.Shape(cc.dom).Size())
		for i := range v {
			v[i] = math.Ldexp(1+rng.Float64(), rng.Intn(61)-30)
			if rng.Intn(2) == 0 {
				v[i] = -v[i]
			}
			if d == core.Float32 {
				v[i] = float64(float32(v[i]))
			}
		}
		x, err := core.NewLitF(core.Type{Shape: cc.dom, Dtype: d}, v)
		if err != nil {
			t.Fatal(err)
		}
		var b core.Builder
		ref, err := core.EvalTerm(b.Scatter(cc.outer, x, cc.fn(&b)), nil)
		if err != nil {
			t.Fatal(err)
		}
		got := dirty(flatOf(ref), core.Shape(cc.outer).Size())
		if err := k.Run(got, []any{flatOf(x)}); err != nil {
			t.Fatal(err)
		}
		if err := sameAsLitFrom(got, flatOf(ref), 0); err != nil {
			t.Fatalf("%s, %v scatter, operands of 2^±30: %v", cc.name, d, err)
		}
	}
}

// TestClipAcrossSplit: an across gather and scatter (Gorgonia's im2col and col2im) large
// enough to be split across goroutines give the serial result with GOMAXPROCS 2 and 3, and
// the definition's (float64, the points of each destination added in the domain's order).
func TestClipAcrossSplit(t *testing.T) {
	cc := gorgoniaIm2col("im2col", 8, 12, 28, 28, 3, 1, 1, 1)
	for _, scatter := range []bool{false, true} {
		s := cc.setup(t, rand.New(rand.NewSource(9)), core.Float64, scatter)
		p := s.plan.Clip
		if p == nil || p.across == nil || p.acrossAdd == nil {
			t.Fatal("not on the across path")
		}
		q, outLen := p.across, core.Shape(cc.dom).Size()
		if scatter {
			q, outLen = p.acrossAdd, core.Shape(cc.outer).Size()
		}
		if work := costOf(q.points(), q.weight(1)); workers(q.dom[0], work) < 2 {
			t.Fatal("too small to be split: the test does not cover the split")
		}
		if d, ok := q.disjoint(); scatter && (!ok || d != 0) {
			t.Fatalf("scatter split along %d (%v), want 0", d, ok)
		}
		x := flatOf(s.x).([]float64)
		got := checkSplit(t, cc.name, runOp(t, s.k, make([]float64, outLen), x))
		if err := sameAsLitFrom(got, clipDef(cc, x, scatter), 0); err != nil {
			t.Fatalf("scatter %v: %v", scatter, err)
		}
	}
}
