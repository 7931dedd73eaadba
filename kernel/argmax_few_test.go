package kernel

import (
	"math"
	"math/rand"
	"runtime"
	"testing"
)

// naiveArgmax is argmaxOuter's definition on one column: the first maximum wins (-0 and +0
// tie), a NaN never wins against a number, an all-NaN column gives 0.
func naiveArgmax(col []float64) int64 {
	best := -1
	for i, v := range col {
		if v != v {
			continue
		}
		if best < 0 || v > col[best] {
			best = i
		}
	}
	if best < 0 {
		return 0
	}
	return int64(best)
}

// The branch-free argmax over pooling windows against the definition, on columns drawn from
// NaN, ±Inf, ±0 and ±1 (so ties, signed zeros and NaN columns are frequent), in f64 and f32
// (whose 2×2 windows of stride 2 run eight at a time in vector registers: simdArgmax4).
func TestArgmaxViewFew(t *testing.T) {
	levels := []float64{math.NaN(), math.Inf(-1), -1, math.Copysign(0, -1), 0, 1, math.Inf(1)}
	r := rand.New(rand.NewSource(4))
	// x : [3, 6, 36]; windows 2×3 at stride (2, 3): outer offsets over [6,36], inner [3,3,12];
	// rows of 18 2×2 windows cross the eight-window vector steps of the float32 pool
	const b, h, w = 3, 6, 36
	x := make([]float64, b*h*w)
	for i := range x {
		x[i] = levels[r.Intn(len(levels))]
	}
	x32 := make([]float32, len(x))
	for i, v := range x {
		x32[i] = float32(v)
	}
	// windows wr×wc at stride (wr, wc): 2×3 (the general few-window loop), 2×2 (its
	// unrolled four-window form), 3×3 and 1×1
	for _, win := range [][2]int{{2, 3}, {2, 2}, {3, 3}, {1, 1}} {
		wr, wc := win[0], win[1]
		k := &ArgmaxView{Inner: []int{b, h / wr, w / wc}, InnerSt: []int{h * w, wr * w, wc}}
		for rr := 0; rr < wr; rr++ {
			for ss := 0; ss < wc; ss++ {
				k.OuterOff = append(k.OuterOff, rr*w+ss)
			}
		}
		var want []int64
		for bb := 0; bb < b; bb++ {
			for i := 0; i < h/wr; i++ {
				for j := 0; j < w/wc; j++ {
					var col []float64
					for _, o := range k.OuterOff {
						col = append(col, x[bb*h*w+i*wr*w+j*wc+o])
					}
					want = append(want, naiveArgmax(col))
				}
			}
		}
		got := make([]int64, len(want))
		argmaxView(k, got, x)
		got32 := make([]int64, len(want))
		argmaxView(k, got32, x32)
		for i := range want {
			if got[i] != want[i] || got32[i] != want[i] {
				t.Fatalf("windows %dx%d, column %d: f64 %d, f32 %d, want %d (x %v)", wr, wc, i, got[i], got32[i], want[i], x)
			}
		}
	}
	// keys: order-preserving on numbers, ±0 equal, NaN lowest
	vals := []float64{math.Inf(-1), -math.MaxFloat64, -1, -math.SmallestNonzeroFloat64, 0, math.SmallestNonzeroFloat64, 1, math.MaxFloat64, math.Inf(1)}
	for i := 1; i < len(vals); i++ {
		if !(floatKey(vals[i-1]) < floatKey(vals[i])) || !(floatKey(float64(float32(vals[i-1]))) <= floatKey(float64(float32(vals[i])))) {
			t.Errorf("keys out of order at %v, %v", vals[i-1], vals[i])
		}
	}
	if floatKey(math.Copysign(0, -1)) != floatKey(0) || floatKey(float64(float32(math.Copysign(0, -1)))) != floatKey(0) {
		t.Errorf("-0 and +0 have different keys")
	}
	if floatKey(math.NaN()) >= floatKey(math.Inf(-1)) || floatKey(float64(float32(math.NaN()))) >= floatKey(float64(float32(math.Inf(-1)))) {
		t.Errorf("NaN is not below -Inf")
	}
}

// TestArgmaxOuterAgainstDefinition: the argmax along the middle axis of [pre, n, post] (the
// Axis kernel: a max-pool's windows gathered first) against the definition, on values drawn
// from NaN, ±Inf, ±0 and ±1, in f64 and f32 (whose loop keeps the running maximum in 256-wide
// chunks: post of 3, 256 and 300 crosses them), one and two goroutines.
func TestArgmaxOuterAgainstDefinition(t *testing.T) {
	levels := []float64{math.NaN(), math.Inf(-1), -1, math.Copysign(0, -1), 0, 1, math.Inf(1)}
	r := rand.New(rand.NewSource(8))
	for _, sh := range [][3]int{{2, 9, 3}, {1, 4, 256}, {3, 9, 300}, {2, 1, 5}} {
		pre, n, post := sh[0], sh[1], sh[2]
		x := make([]float64, pre*n*post)
		for i := range x {
			x[i] = levels[r.Intn(len(levels))]
		}
		x32 := make([]float32, len(x))
		for i, v := range x {
			x32[i] = float32(v)
		}
		want := make([]int64, pre*post)
		for p := range pre {
			for c := range post {
				col := make([]float64, n)
				for i := range col {
					col[i] = x[(p*n+i)*post+c]
				}
				want[p*post+c] = naiveArgmax(col)
			}
		}
		for _, procs := range []int{1, 2} {
			old := runtime.GOMAXPROCS(procs)
			got, got32 := make([]int64, len(want)), make([]int64, len(want))
			argmaxOuterK(got, x, pre, n, post)
			argmaxOuterK(got32, x32, pre, n, post)
			runtime.GOMAXPROCS(old)
			for i := range want {
				if got[i] != want[i] || got32[i] != want[i] {
					t.Fatalf("%v, GOMAXPROCS %d, output %d: f64 %d, f32 %d, want %d", sh, procs, i, got[i], got32[i], want[i])
				}
			}
		}
	}
}

// TestArgmaxPoolRows: the 2×2 max-pool of stride 2 on rows of 3, 4, 7, 8, 13, 14 and 16 windows
// (the vector loop's eight- and four-window steps, the last four again for a rest, and the
// scalar loop for rows of 3) against the
// definition, in float32, on values drawn from NaN, ±Inf, ±0 and ±1.
func TestArgmaxPoolRows(t *testing.T) {
	levels := []float64{math.NaN(), math.Inf(-1), -1, math.Copysign(0, -1), 0, 1, math.Inf(1)}
	r := rand.New(rand.NewSource(9))
	for _, ow := range []int{3, 4, 7, 8, 13, 14, 16} {
		const b, oh = 3, 5
		w, h := 2*ow, 2*oh
		x := make([]float32, b*h*w)
		for i := range x {
			x[i] = float32(levels[r.Intn(len(levels))])
		}
		k := &ArgmaxView{Inner: []int{b, oh, ow}, InnerSt: []int{h * w, 2 * w, 2}, OuterOff: []int{0, 1, w, w + 1}}
		got := make([]int64, b*oh*ow)
		argmaxView(k, got, x)
		for p := range got {
			bb, i, j := p/(oh*ow), p/ow%oh, p%ow
			at := bb*h*w + 2*i*w + 2*j
			col := []float64{float64(x[at]), float64(x[at+1]), float64(x[at+w]), float64(x[at+w+1])}
			if want := naiveArgmax(col); got[p] != want {
				t.Fatalf("rows of %d windows, window %d: %d, want %d (%v)", ow, p, got[p], want, col)
			}
		}
	}
}

// TestArgmaxViewRows: an ArgmaxView whose positions are a contiguous row of each output (a
// softmax's argmax along its last axis, through a transpose) against the definition, on
// values drawn from NaN, ±Inf, ±0 and ±1, in f64 and f32, rows longer than argmaxFewOuter,
// with and without an offset, and (rows of 16384: enough work to split) on two goroutines.
func TestArgmaxViewRows(t *testing.T) {
	levels := []float64{math.NaN(), math.Inf(-1), -1, math.Copysign(0, -1), 0, 1, math.Inf(1)}
	r := rand.New(rand.NewSource(10))
	old := runtime.GOMAXPROCS(2)
	defer runtime.GOMAXPROCS(old)
	for _, n := range []int{17, 64, 100, 16384} {
		for _, off := range []int{0, 3} {
			const pre, m = 3, 5
			if n == 16384 && workers(pre, pre*m*n) < 2 {
				t.Fatalf("rows of %d: the argmax is not split", n)
			}
			x := make([]float64, off+pre*m*n)
			for i := range x {
				x[i] = levels[r.Intn(len(levels))]
			}
			if n == 64 {
				for i := off; i < off+n; i++ {
					x[i] = math.NaN() // an all-NaN row: position 0
				}
			}
			x32 := make([]float32, len(x))
			for i, v := range x {
				x32[i] = float32(v)
			}
			outer := make([]int, n)
			for i := range outer {
				outer[i] = off + i
			}
			k := &ArgmaxView{Inner: []int{pre, m}, InnerSt: []int{m * n, n}, OuterOff: outer}
			got, got32 := make([]int64, pre*m), make([]int64, pre*m)
			argmaxView(k, got, x)
			argmaxView(k, got32, x32)
			for j := range got {
				want := naiveArgmax(x[off+j*n : off+(j+1)*n])
				if got[j] != want || got32[j] != want {
					t.Fatalf("rows of %d at %d, output %d: f64 %d, f32 %d, want %d", n, off, j, got[j], got32[j], want)
				}
			}
		}
	}
}
