package kernel

import (
	"math/rand"
	"testing"
)

// TestClipTablePath: gathers and scatters of small domains with short rows run by offset
// table (clip_table.go) — a convolution's windows over 2×2 maps in torchvision's layout, a
// grouped one, stride 2 — giving core.Eval's result bit for bit in every dtype over a dirty
// output, the scatters also with operands of magnitudes 2^±30 (so that adding in another
// order would round differently); long rows and large domains get no table.
func TestClipTablePath(t *testing.T) {
	// torchvision's windows: domain [c, kh, kw, b, oh, ow] over an image [b, c, h, w]
	tvWindows := func(name string, c, b, h, s int) clipCase {
		o := (h+2-3)/s + 1
		return clipCase{name: name, dom: []int{c, 3, 3, b, o, o}, outer: []int{b, c, h, h},
			c:  [][]int64{{0, 0, 0, 1, 0, 0}, {1, 0, 0, 0, 0, 0}, {0, 1, 0, 0, int64(s), 0}, {0, 0, 1, 0, 0, int64(s)}},
			c0: []int64{0, 0, -1, -1}}
	}
	cases := []struct {
		cc    clipCase
		table bool
	}{
		{tvWindows("2x2 maps, 16 channels", 16, 2, 2, 1), true},
		{tvWindows("4x4 maps, stride 2", 8, 2, 4, 2), true},
		{clipCase{name: "grouped windows [g, cg, kh, kw, b, oh, ow]", dom: []int{3, 4, 3, 3, 2, 2, 2}, outer: []int{2, 12, 2, 2},
			c:  [][]int64{{0, 0, 0, 0, 1, 0, 0}, {4, 1, 0, 0, 0, 0, 0}, {0, 0, 1, 0, 0, 1, 0}, {0, 0, 0, 1, 0, 0, 1}},
			c0: []int64{0, 0, -1, -1}}, true},
		{tvWindows("16x16 maps (long rows)", 2, 2, 16, 1), false},
		{tvWindows("a domain too large", 1024, 8, 4, 1), false},
	}
	rng := rand.New(rand.NewSource(29))
	for _, c := range cases {
		t.Run(c.cc.name, func(t *testing.T) {
			k := scatterOf(t, c.cc)
			if got := k.Table != nil; got != c.table {
				t.Fatalf("table %v, want %v", got, c.table)
			}
			if !c.table {
				return
			}
			checkClip(t, rng, c.cc, true)
			checkScatterOrder(t, rng, c.cc, k)
		})
	}
}
