package kernel

import (
	"fmt"
	"math"
	"math/rand"
	"runtime"
	"testing"
	"unsafe"
)

// dwwCase is a depthwise convolution's window access: x [b, c, h, w] (or channels last, [b,
// h, w, c]) over the domain [b, oh, ow, c, kh, kw], stride s, padding pd.
type dwwCase struct {
	b, c, h, w, k, s, pd int
	last                 bool
}

func (d dwwCase) access() (dom []int, acc WinAccess) {
	oh, ow := (d.h+2*d.pd-d.k)/d.s+1, (d.w+2*d.pd-d.k)/d.s+1
	dom = []int{d.b, oh, ow, d.c, d.k, d.k}
	s, p := int64(d.s), int64(-d.pd)
	if d.last {
		return dom, WinAccess{Shape: []int{d.b, d.h, d.w, d.c}, C0: []int64{0, p, p, 0}, Coef: [][]int64{
			{1, 0, 0, 0, 0, 0}, {0, s, 0, 0, 1, 0}, {0, 0, s, 0, 0, 1}, {0, 0, 0, 1, 0, 0}}}
	}
	return dom, WinAccess{Shape: []int{d.b, d.c, d.h, d.w}, C0: []int64{0, 0, p, p}, Coef: [][]int64{
		{1, 0, 0, 0, 0, 0}, {0, 0, 0, 1, 0, 0}, {0, s, 0, 0, 1, 0}, {0, 0, s, 0, 0, 1}}}
}

// dwWindow is the window element (p, c, t) of x: the gather's value, zero out of bounds.
func dwWindow[T floatT](dom []int, acc WinAccess, x []T, p, c, t int) T {
	if e, in := dwIndex(dom, acc, p, c, t); in {
		return x[e]
	}
	return 0
}

// TestDepthwiseWindows: the forward sums and the filter gradient equal, bit for bit, the
// reference's loops over the materialised windows (each product rounded, the taps, or the
// points, added in order from +0), float32 and float64, channels first and last, channel
// counts with and without a partial vector, the other factor read through several views,
// on one thread and three.
func TestDepthwiseWindows(t *testing.T) {
	testDepthwiseWindows[float64](t)
	testDepthwiseWindows[float32](t)
}

func testDepthwiseWindows[T floatT](t *testing.T) {
	rng := rand.New(rand.NewSource(4))
	for _, d := range []dwwCase{
		{2, 32, 6, 7, 3, 1, 1, false}, {1, 20, 5, 5, 3, 1, 1, false}, {2, 16, 9, 8, 3, 2, 1, false},
		{2, 24, 5, 6, 3, 1, 1, true}, {1, 3, 4, 4, 5, 1, 2, false}, {3, 40, 4, 5, 1, 1, 0, false},
		{3, 40, 8, 9, 3, 1, 1, false}, // several tiles of points (dwTile), channel blocks and a tail
	} {
		dom, acc := d.access()
		x := make([]T, d.b*d.c*d.h*d.w)
		for i := range x {
			x[i] = T(rng.NormFloat64())
		}
		P, C, K := dom[0]*dom[1]*dom[2], d.c, d.k*d.k
		for _, filter := range []bool{false, true} {
			for _, view := range []int{0, 1} {
				name := fmt.Sprintf("%+v filter %v view %d", d, filter, view)
				var m []T
				var mo, mp, mc, mt, outLen, outAt int
				if filter { // δ [P, C] (view 0) or [C, P] after 3 unused elements (view 1)
					m = make([]T, 3+P*C)
					mo, mp, mc = 0, C, 1
					if view == 1 {
						mo, mp, mc = 3, 1, P
					}
					outLen, outAt = 2*C*K, C*K
				} else { // F [C, T] (view 0) or [T, C] (view 1)
					m = make([]T, C*K)
					mc, mt = K, 1
					if view == 1 {
						mc, mt = 1, C
					}
				}
				for i := range m {
					m[i] = T(rng.NormFloat64())
				}
				k, err := NewDepthwiseWindows(dom, 3, acc, filter)
				if err != nil {
					t.Fatal(err)
				}
				if err := k.SetView(mo, mp, mc, mt, outLen, outAt); err != nil {
					t.Fatal(err)
				}
				var want []T
				if filter {
					want = make([]T, outLen)
					for c := range C {
						for tap := range K {
							var s T
							for p := range P {
								s += T(m[mo+p*mp+c*mc] * dwWindow(dom, acc, x, p, c, tap))
							}
							want[outAt+c*K+tap] = s
						}
					}
				} else {
					want = make([]T, P*C)
					for p := range P {
						for c := range C {
							var s T
							for tap := range K {
								s += T(dwWindow(dom, acc, x, p, c, tap) * m[mo+c*mc+tap*mt])
							}
							want[p*C+c] = s
						}
					}
				}
				for _, procs := range []int{1, 3} {
					prev := runtime.GOMAXPROCS(procs)
					got := make([]T, len(want))
					for i := range got {
						got[i] = 7 // overwritten
					}
					for run := range 2 {
						if err := k.Run(got, []any{x, m}); err != nil {
							runtime.GOMAXPROCS(prev)
							t.Fatal(err)
						}
						for i := range want {
							if math.Float64bits(float64(got[i])) != math.Float64bits(float64(want[i])) {
								runtime.GOMAXPROCS(prev)
								t.Fatalf("%s procs %d run %d: element %d = %v, want %v", name, procs, run, i, got[i], want[i])
							}
						}
					}
					runtime.GOMAXPROCS(prev)
				}
			}
		}
	}
}

// TestDwWidths: both vector widths of dwForward, dwFilter and dwInput (AVX2, AVX-512), both dtypes,
// give the Go loops' bits; a width the CPU lacks reports it and is skipped.
func TestDwWidths(t *testing.T) {
	testDwWidths[float64](t)
	testDwWidths[float32](t)
}

func testDwWidths[T floatT](t *testing.T) {
	rng := rand.New(rand.NewSource(8))
	x := make([]T, 4000)
	for i := range x {
		x[i] = T(rng.NormFloat64())
	}
	utab := []int64{0, 17, 400, 1000, 3}
	lanes := 32 / int(unsafe.Sizeof(T(0)))
	ran := 0
	for _, c := range []struct {
		w  int
		vt []int64
	}{{lanes, []int64{0, 1, 40, 41, 200}}, {2 * lanes, []int64{0, 1, 40, 41, 200}},
		{lanes, []int64{0, 1, 2, 40, 41, 42, 80, 81, 82}}, {2 * lanes, []int64{0, 1, 2, 40, 41, 42, 80, 81, 82}}} { // nine taps: dwFilter9
		w, vt := c.w, c.vt
		ld := w + 5
		f := make([]T, len(vt)*ld)
		d := make([]T, len(utab)*ld)
		for i := range f {
			f[i] = T(rng.NormFloat64())
		}
		for i := range d {
			d[i] = T(rng.NormFloat64())
		}
		o := make([]T, len(utab)*ld)
		acc := make([]T, len(vt)*w)
		for i := range acc { // the sums go on from these
			acc[i] = T(i % 3)
		}
		if !dwForwardVec(utab, x, vt, f, ld, o, ld, w) {
			continue
		}
		if !dwFilterVec(utab, x, vt, d, ld, acc, w) {
			t.Fatalf("width %d: the forward ran, the filter did not", w)
		}
		// the input gradient into a copy of x: y[u + v …] += d[p …]·f[t …], points then taps
		y, wantY := append([]T(nil), x...), append([]T(nil), x...)
		if !dwInputVec(utab, y, vt, d, ld, f, ld, w) {
			t.Fatalf("width %d: the forward ran, the input gradient did not", w)
		}
		for p, u := range utab {
			for tap, v := range vt {
				for l := range w {
					wantY[u+v+int64(l)] += T(d[p*ld+l] * f[tap*ld+l])
				}
			}
		}
		for i := range wantY {
			if y[i] != wantY[i] {
				t.Fatalf("width %d input: element %d = %v, want %v", w, i, y[i], wantY[i])
			}
		}
		ran++
		for p, u := range utab {
			for l := range w {
				var s T
				for tap, v := range vt {
					s += T(x[u+v+int64(l)] * f[tap*ld+l])
				}
				if o[p*ld+l] != s {
					t.Fatalf("width %d forward: point %d lane %d = %v, want %v", w, p, l, o[p*ld+l], s)
				}
			}
		}
		for tap, v := range vt {
			for l := range w {
				s := T((tap*w + l) % 3)
				for p, u := range utab {
					s += T(d[p*ld+l] * x[u+v+int64(l)])
				}
				if acc[tap*w+l] != s {
					t.Fatalf("width %d filter: tap %d lane %d = %v, want %v", w, tap, l, acc[tap*w+l], s)
				}
			}
		}
	}
	if hasVec && ran == 0 {
		t.Errorf("no width ran on a CPU with AVX2")
	}
}

// dwIndex is the element of x's shape the window access reaches at (p, c, t), or false out of
// bounds.
func dwIndex(dom []int, acc WinAccess, p, c, t int) (int, bool) {
	pt := []int{p / (dom[1] * dom[2]), p / dom[2] % dom[1], p % dom[2], c, t / dom[5], t % dom[5]}
	off := 0
	for d := range acc.Shape {
		v := acc.C0[d]
		for j, co := range acc.Coef[d] {
			v += co * int64(pt[j])
		}
		if v < 0 || v >= int64(acc.Shape[d]) {
			return 0, false
		}
		off = off*acc.Shape[d] + int(v)
	}
	return off, true
}

// TestDepthwiseInput: the input gradient (SetInput) equals, bit for bit, the reference's
// scatter of δ[p, c]·F[c, t] over the domain in order (out of bounds dropped), float32 and
// float64, channels first and last, partial vectors, δ read across its channels (no
// vectors), on one thread.
func TestDepthwiseInput(t *testing.T) {
	testDepthwiseInput[float64](t)
	testDepthwiseInput[float32](t)
}

func testDepthwiseInput[T floatT](t *testing.T) {
	rng := rand.New(rand.NewSource(12))
	for _, d := range []dwwCase{
		{2, 32, 6, 7, 3, 1, 1, false}, {1, 20, 5, 5, 3, 1, 1, true}, {2, 16, 9, 8, 3, 2, 1, false}, {1, 3, 4, 4, 5, 1, 2, false},
		{3, 40, 8, 9, 3, 1, 1, false}, // several tiles of points (dwTile), channel blocks and a tail
	} {
		for _, dview := range []int{0, 1} {
			dom, acc := d.access()
			P, C, K := dom[0]*dom[1]*dom[2], d.c, d.k*d.k
			dl := make([]T, 2+P*C)
			f := make([]T, C*K)
			for i := range dl {
				dl[i] = T(rng.NormFloat64())
			}
			for i := range f {
				f[i] = T(rng.NormFloat64())
			}
			dO, dP, dC := 2, C, 1 // δ [P, C] after two unused elements, or [C, P]
			if dview == 1 {
				dO, dP, dC = 2, 1, P
			}
			want := make([]T, d.b*d.c*d.h*d.w)
			for p := range P {
				for c := range C {
					for tap := range K {
						if e, in := dwIndex(dom, acc, p, c, tap); in {
							want[e] += T(dl[dO+p*dP+c*dC] * f[c*K+tap])
						}
					}
				}
			}
			k, err := NewDepthwiseWindows(dom, 3, acc, false)
			if err != nil {
				t.Fatal(err)
			}
			if err := k.SetInput(dO, dP, dC, 0, K, 1); err != nil {
				t.Fatal(err)
			}
			got := make([]T, len(want))
			for run := range 2 {
				if err := k.Run(got, []any{dl, f}); err != nil {
					t.Fatal(err)
				}
				for i := range want {
					if math.Float64bits(float64(got[i])) != math.Float64bits(float64(want[i])) {
						t.Fatalf("%+v δ view %d run %d: element %d = %v, want %v", d, dview, run, i, got[i], want[i])
					}
				}
			}
		}
	}
}

// TestDepthwiseSplits: the three depthwise products split across goroutines (points for the
// forward, channel blocks for the two gradients) give the bits of one goroutine.
func TestDepthwiseSplits(t *testing.T) {
	d := dwwCase{16, 64, 12, 12, 3, 1, 1, false} // enough work to split (parallelMin)
	dom, acc := d.access()
	rng := rand.New(rand.NewSource(13))
	P, C, K := dom[0]*dom[1]*dom[2], d.c, 9
	x := make([]float32, d.b*d.c*d.h*d.w)
	m := make([]float32, P*C)
	f := make([]float32, C*K)
	for _, s := range [][]float32{x, m, f} {
		for i := range s {
			s[i] = float32(rng.NormFloat64())
		}
	}
	fwd, _ := NewDepthwiseWindows(dom, 3, acc, false)
	fwd.SetView(0, 0, K, 1, 0, 0)
	filt, _ := NewDepthwiseWindows(dom, 3, acc, true)
	filt.SetView(0, C, 1, 0, C*K, 0)
	in, _ := NewDepthwiseWindows(dom, 3, acc, false)
	in.SetInput(0, C, 1, 0, K, 1)
	for _, c := range []struct {
		name string
		k    *DepthwiseWindows
		n    int
		ins  []any
	}{{"forward", fwd, P * C, []any{x, f}}, {"filter", filt, C * K, []any{x, m}}, {"input", in, len(x), []any{m, f}}} {
		sameBitsAcrossProcs(t, c.name, c.n, func(out []float32) error { return c.k.Run(out, c.ins) })
	}
}

// TestDepthwiseSharedStaging: a forward and a filter-gradient kernel sharing x's staged copy
// give the filter gradient of a kernel staging its own, bit for bit: after the forward on the
// same x; run again without the forward after x changed in place (the record was read once:
// the filter stages x itself); after the forward on another x. Kernels that are not such a
// pair refuse to share.
func TestDepthwiseSharedStaging(t *testing.T) {
	d := dwwCase{4, 16, 6, 6, 3, 1, 1, false}
	dom, acc := d.access()
	rng := rand.New(rand.NewSource(31))
	P, C, K := dom[0]*dom[1]*dom[2], d.c, 9
	fill := func(s []float32) {
		for i := range s {
			s[i] = float32(rng.NormFloat64())
		}
	}
	x, x2 := make([]float32, d.b*d.c*d.h*d.w), make([]float32, d.b*d.c*d.h*d.w)
	m, f := make([]float32, P*C), make([]float32, C*K)
	fill(x)
	fill(x2)
	fill(m)
	fill(f)
	fwd, _ := NewDepthwiseWindows(dom, 3, acc, false)
	fwd.SetView(0, 0, K, 1, 0, 0)
	filt, _ := NewDepthwiseWindows(dom, 3, acc, true)
	filt.SetView(0, C, 1, 0, C*K, 0)
	own, _ := NewDepthwiseWindows(dom, 3, acc, true)
	own.SetView(0, C, 1, 0, C*K, 0)
	if err := filt.ShareStaging(fwd); err != nil {
		t.Fatal(err)
	}
	out := make([]float32, P*C)
	check := func(what string, xs []float32) {
		t.Helper()
		got, want := make([]float32, C*K), make([]float32, C*K)
		if err := filt.Run(got, []any{xs, m}); err != nil {
			t.Fatal(err)
		}
		if err := own.Run(want, []any{xs, m}); err != nil {
			t.Fatal(err)
		}
		for i := range want {
			if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
				t.Fatalf("%s: element %d = %v, want %v", what, i, got[i], want[i])
			}
		}
	}
	if err := fwd.Run(out, []any{x, f}); err != nil {
		t.Fatal(err)
	}
	check("after the forward", x)
	fill(x) // the same slice, other values, no forward run
	check("x changed, no forward", x)
	if err := fwd.Run(out, []any{x2, f}); err != nil {
		t.Fatal(err)
	}
	check("the forward on another x", x)
	in, _ := NewDepthwiseWindows(dom, 3, acc, false)
	in.SetInput(0, C, 1, 0, K, 1)
	odom, oacc := dwwCase{4, 16, 7, 6, 3, 1, 1, false}.access()
	other, _ := NewDepthwiseWindows(odom, 3, oacc, false)
	for _, c := range []struct {
		name string
		a, b *DepthwiseWindows
	}{{"two filters", own, filt}, {"an input gradient", in, fwd}, {"another x", other, own}} {
		if c.a != nil && c.a.ShareStaging(c.b) == nil {
			t.Errorf("%s: shared", c.name)
		}
	}
}
