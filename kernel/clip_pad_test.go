package kernel

import (
	"math/rand"
	"testing"

	"github.com/bulkad/bulkad/core"
)

// TestClipPadPath checks the padded path of clipped 3×3 windows (ClipPlan.padded) where it
// applies, and that it does not apply elsewhere: Gorgonia's im2col layouts [b, oh, ow, c, kh,
// kw] over [b, c, h, w] with padding 1 (stride 1 and 2), padding 2, and an asymmetric crop,
// and over a channels-last [b, h, w, c] (taps c apart), the ONNX importer's [c, kh, kw, b, oh,
// ow] (rows of ow, at least padRowMin long, copied or added whole),
// against core.Eval in every dtype (checkClip: gathers and scatters over dirty outputs; bool
// and int64 take the clipped walk), scatters of operands of magnitudes 2^±30 (whose sums in
// another order round differently), and split runs (GOMAXPROCS 2 and 3 against 1). A 2×2
// window has no padded plan, and blocks of several elements take the clipped walk.
func TestClipPadPath(t *testing.T) {
	// im2col: dom [b, oh, ow, c, kh, kw], index [b, c, s·oh + d·kh − p, s·ow + d·kw − p]
	im2col := func(name string, b, c, h, w, k, s, d, pad int) clipCase {
		oh := (h+2*pad-d*(k-1)-1)/s + 1
		ow := (w+2*pad-d*(k-1)-1)/s + 1
		return clipCase{name: name, dom: []int{b, oh, ow, c, k, k}, outer: []int{b, c, h, w},
			c: [][]int64{{1, 0, 0, 0, 0, 0}, {0, 0, 0, 1, 0, 0}, {0, int64(s), 0, 0, int64(d), 0},
				{0, 0, int64(s), 0, 0, int64(d)}},
			c0: []int64{0, 0, int64(-pad), int64(-pad)}}
	}
	crop := im2col("asymmetric: padding 1 before, 0 after", 2, 3, 9, 9, 3, 1, 1, 1)
	crop.dom = []int{2, 8, 8, 3, 3, 3}
	// channels-last im2col: dom [b, oh, ow, c, kh, kw], index [b, oh + kh − 1, ow + kw − 1, c]
	nhwc := clipCase{name: "channels-last 3x3 pad 1", dom: []int{2, 7, 7, 5, 3, 3}, outer: []int{2, 7, 7, 5},
		c:  [][]int64{{1, 0, 0, 0, 0, 0}, {0, 1, 0, 0, 1, 0}, {0, 0, 1, 0, 0, 1}, {0, 0, 0, 1, 0, 0}},
		c0: []int64{0, -1, -1, 0}}
	// the ONNX importer's im2col: dom [c, kh, kw, b, oh, ow], index [b, c, oh + kh − 1, ow + kw − 1]
	onnx := clipCase{name: "ONNX layout, rows of ow", dom: []int{3, 3, 3, 2, 9, 9}, outer: []int{2, 3, 9, 9},
		c:  [][]int64{{0, 0, 0, 1, 0, 0}, {1, 0, 0, 0, 0, 0}, {0, 1, 0, 0, 1, 0}, {0, 0, 1, 0, 0, 1}},
		c0: []int64{0, 0, -1, -1}}
	short := onnx
	short.name, short.dom, short.outer = "ONNX layout, rows of 5", []int{3, 3, 3, 2, 5, 5}, []int{2, 3, 5, 5}
	rows16, rows8, rows32 := onnx, onnx, onnx // the fixed-width row moves
	rows16.name, rows16.dom, rows16.outer = "ONNX layout, rows of 16", []int{2, 3, 3, 2, 16, 16}, []int{2, 2, 16, 16}
	rows8.name, rows8.dom, rows8.outer = "ONNX layout, rows of 8", []int{3, 3, 3, 2, 8, 8}, []int{2, 3, 8, 8}
	rows32.name, rows32.dom, rows32.outer = "ONNX layout, rows of 32", []int{1, 3, 3, 1, 32, 32}, []int{1, 1, 32, 32}
	cases := []struct {
		cc  clipCase
		pad bool
	}{
		{nhwc, true},
		{onnx, true},
		{rows16, true},
		{rows8, true},
		{rows32, true},
		{short, false},
		{im2col("3x3 pad 1 on 4x4 maps (padded rows of 4)", 2, 3, 4, 4, 3, 1, 1, 1), true},
		{im2col("3x3 pad 1 stride 1", 2, 3, 8, 8, 3, 1, 1, 1), true},
		{im2col("3x3 pad 1 stride 2", 3, 2, 9, 7, 3, 2, 1, 1), true},
		{im2col("3x3 pad 2 stride 1", 2, 2, 6, 6, 3, 1, 1, 2), true},
		{crop, true},
		{im2col("dilation 2 (taps two apart)", 2, 3, 8, 8, 3, 1, 2, 2), true},
		{im2col("2x2 window", 2, 3, 8, 8, 2, 1, 1, 1), false},
	}
	rng := rand.New(rand.NewSource(31))
	for _, c := range cases {
		t.Run(c.cc.name, func(t *testing.T) {
			k := scatterOf(t, c.cc)
			if got := k.pad != nil; got != c.pad {
				t.Fatalf("padded plan %v, want %v", got, c.pad)
			}
			checkClip(t, rng, c.cc, true)
			if !c.pad {
				return
			}
			checkScatterOrder(t, rng, c.cc, k)
		})
	}
	t.Run("blocks of two elements", func(t *testing.T) {
		cc := im2col("rest 2", 2, 3, 8, 8, 3, 1, 1, 1)
		cc.rest = []int{2}
		checkClip(t, rng, cc, true)
	})
	t.Run("split", func(t *testing.T) {
		// the gather's windows split; the copy into the padded image split by planes (an
		// image of 2^19 elements); the scatter split by images (each image's blocks add into
		// its own part of the padded array), in the window and the rows layout
		onnxLarge := onnx
		onnxLarge.dom, onnxLarge.outer = []int{8, 3, 3, 16, 16, 16}, []int{16, 8, 16, 16}
		// one channel: the first dimension split would be kh, whose slices overlap
		onnxOne := onnx
		onnxOne.dom, onnxOne.outer = []int{1, 3, 3, 16, 64, 64}, []int{16, 1, 64, 64}
		for i, cc := range []clipCase{im2col("large", 16, 16, 16, 16, 3, 1, 1, 1), im2col("large image", 16, 32, 32, 32, 3, 1, 1, 1), onnxLarge, onnxOne} {
			g, sc := gatherOf(t, cc), scatterOf(t, cc)
			if g.pad == nil || sc.pad == nil {
				t.Fatalf("%v: no padded plan", cc.dom)
			}
			d, _ := splitDim(cc.dom[:len(cc.dom)-2], 0)
			if want := i < 2; sc.pad.disjoint(cc.dom, d) != want {
				t.Fatalf("%v: slices along %d disjoint %v, want %v", cc.dom, d, !want, want)
			}
			img, pts := core.Shape(cc.outer).Size(), core.Shape(cc.dom).Size()
			x, y := make([]float32, img), make([]float32, pts)
			for i := range x {
				x[i] = float32(rng.NormFloat64())
			}
			for i := range y {
				y[i] = float32(rng.NormFloat64())
			}
			checkSplit(t, "padded gather", func() any {
				out := make([]float32, pts)
				if err := g.Run(out, []any{x}); err != nil {
					t.Fatal(err)
				}
				return out
			})
			checkSplit(t, "padded scatter", func() any {
				out := make([]float32, img)
				if err := sc.Run(out, []any{y}); err != nil {
					t.Fatal(err)
				}
				return out
			})
		}
	})
}

// gatherOf is the case's gather kernel of single elements with its fast paths.
func gatherOf(t *testing.T, cc clipCase) *Gather {
	t.Helper()
	var b core.Builder
	prog, err := CompileIndexFn(cc.fn(&b))
	if err != nil {
		t.Fatal(err)
	}
	k := &Gather{Dom: cc.dom, Src: cc.outer, Rest: 1, IndexPlan: IndexPlan{Fn: prog}}
	k.SetFastPaths(cc.dom, cc.outer)
	return k
}
