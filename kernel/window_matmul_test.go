package kernel

import (
	"math"
	"math/rand"
	"runtime"
	"testing"
	"unsafe"

	"github.com/bulkad/bulkad/core"
)

// convAccess is the access of x [b, c, h, w] by the im2col gather of a kh×kw convolution
// (stride s, padding pad) over the domain [b, oh, ow, c, kh, kw].
func convAccess(b, c, h, w, kh, kw, s, pad int) (dom []int, acc WinAccess) {
	oh, ow := (h+2*pad-kh)/s+1, (w+2*pad-kw)/s+1
	dom = []int{b, oh, ow, c, kh, kw}
	acc = WinAccess{Shape: []int{b, c, h, w}, C0: []int64{0, 0, int64(-pad), int64(-pad)}, Coef: [][]int64{
		{1, 0, 0, 0, 0, 0}, {0, 0, 0, 1, 0, 0}, {0, int64(s), 0, 0, 1, 0}, {0, 0, int64(s), 0, 0, 1}}}
	return dom, acc
}

// windowMatrix materialises G [P, J] of acc over dom split at q, zeros out of bounds.
func windowMatrix(dom []int, q int, acc WinAccess, x []float64) (g []float64, p, j int) {
	p, j = 1, 1
	for i, d := range dom {
		if i < q {
			p *= d
		} else {
			j *= d
		}
	}
	g = make([]float64, p*j)
	pt := make([]int, len(dom))
	for e := range g {
		r := e
		for i := len(dom) - 1; i >= 0; i-- {
			pt[i] = r % dom[i]
			r /= dom[i]
		}
		off, in := 0, true
		for d := range acc.Shape {
			v := acc.C0[d]
			for i, c := range acc.Coef[d] {
				v += c * int64(pt[i])
			}
			if v < 0 || v >= int64(acc.Shape[d]) {
				in = false
			}
			off = off*acc.Shape[d] + int(v)
		}
		if in {
			g[e] = x[off]
		}
	}
	return g, p, j
}

func TestWindowMatMul(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	for _, tc := range []struct {
		name                      string
		b, c, h, w, kh, kw, s, pd int
		n                         int
	}{
		{"3x3 pad1 n16", 2, 3, 6, 7, 3, 3, 1, 1, 16},
		{"3x3 pad1 n5", 2, 4, 5, 5, 3, 3, 1, 1, 5},
		{"5x5 n40", 1, 2, 9, 8, 5, 5, 1, 2, 40},
		{"stride2 n33", 3, 3, 8, 9, 3, 3, 2, 1, 33},
		{"1x3 no pad n8", 2, 2, 4, 6, 1, 3, 1, 0, 8},
	} {
		dom, acc := convAccess(tc.b, tc.c, tc.h, tc.w, tc.kh, tc.kw, tc.s, tc.pd)
		x := make([]float64, tc.b*tc.c*tc.h*tc.w)
		for i := range x {
			x[i] = rng.NormFloat64()
		}
		g, p, j := windowMatrix(dom, 3, acc, x)
		for _, cols := range []bool{false, true} {
			for _, trans := range []bool{false, true} {
				steps, other := j, p
				if cols {
					steps, other = p, j
				}
				m := make([]float64, steps*tc.n)
				for i := range m {
					m[i] = rng.NormFloat64()
				}
				// mAt(t, l): M's element at step t (j or p) and other index l (n)
				mAt := func(t, l int) float64 {
					if cols != trans { // stored [n, steps]
						return m[l*steps+t]
					}
					return m[t*tc.n+l]
				}
				want := make([]float64, other*tc.n)
				for o := range other {
					for l := range tc.n {
						s := 0.0
						for st := range steps {
							if cols {
								s += mAt(st, l) * g[st*j+o]
							} else {
								s += g[o*j+st] * mAt(st, l)
							}
						}
						if cols {
							want[l*j+o] = s
						} else {
							want[o*tc.n+l] = s
						}
					}
				}
				k, err := NewWindowMatMul(dom, 3, acc, tc.n, cols, trans)
				if err != nil {
					t.Fatal(err)
				}
				got := make([]float64, len(want))
				for run := 0; run < 2; run++ { // the second run reuses the padded copy
					if err := k.Run(got, []any{x, m}); err != nil {
						t.Fatal(err)
					}
					for i := range want {
						if math.Abs(got[i]-want[i]) > 1e-12*(1+math.Abs(want[i])) {
							t.Fatalf("%s cols %v trans %v run %d: element %d = %v, want %v", tc.name, cols, trans, run, i, got[i], want[i])
						}
					}
				}
				// float32 against the same sums
				x32, m32 := make([]float32, len(x)), make([]float32, len(m))
				for i := range x {
					x32[i] = float32(x[i])
				}
				for i := range m {
					m32[i] = float32(m[i])
				}
				got32 := make([]float32, len(want))
				if err := k.Run(got32, []any{x32, m32}); err != nil {
					t.Fatal(err)
				}
				for i := range want {
					if math.Abs(float64(got32[i])-want[i]) > 1e-4*(1+math.Abs(want[i])) {
						t.Fatalf("%s float32 cols %v trans %v: element %d = %v, want %v", tc.name, cols, trans, i, got32[i], want[i])
					}
				}
				// the same bits on more threads
				prev := runtime.GOMAXPROCS(3)
				again := make([]float32, len(want))
				err = k.Run(again, []any{x32, m32})
				runtime.GOMAXPROCS(prev)
				if err != nil {
					t.Fatal(err)
				}
				for i := range again {
					if math.Float32bits(again[i]) != math.Float32bits(got32[i]) {
						t.Fatalf("%s cols %v trans %v: element %d differs at 3 threads", tc.name, cols, trans, i)
					}
				}
			}
		}
	}
}

// TestWindowMatMulLayouts: cols with the output written through ScatterTo (c transposed into
// [J, N]) and M read through MatrixAt (M stored transposed, [P, N]) gives c's elements where
// the offsets put them.
func TestWindowMatMulLayouts(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	dom, acc := convAccess(2, 3, 5, 6, 3, 3, 1, 1)
	x := make([]float64, 2*3*5*6)
	for i := range x {
		x[i] = rng.NormFloat64()
	}
	g, p, j := windowMatrix(dom, 3, acc, x)
	n := 5
	m := make([]float64, p*n) // stored [P, N]
	for i := range m {
		m[i] = rng.NormFloat64()
	}
	k, err := NewWindowMatMul(dom, 3, acc, n, true, false)
	if err != nil {
		t.Fatal(err)
	}
	mOffs, outOffs := make([]int64, p), make([]int64, j)
	for i := range mOffs {
		mOffs[i] = int64(i * n)
	}
	for i := range outOffs {
		outOffs[i] = int64(i * n)
	}
	if err := k.MatrixAt(1, mOffs); err != nil {
		t.Fatal(err)
	}
	if err := k.ScatterTo(j*n, 1, outOffs); err != nil {
		t.Fatal(err)
	}
	got := make([]float64, j*n)
	if err := k.Run(got, []any{x, m}); err != nil {
		t.Fatal(err)
	}
	for col := range j {
		for l := range n {
			s := 0.0
			for st := range p {
				s += m[st*n+l] * g[st*j+col]
			}
			if e := got[col*n+l]; math.Abs(e-s) > 1e-12*(1+math.Abs(s)) {
				t.Fatalf("element (%d, %d) = %v, want %v", col, l, e, s)
			}
		}
	}
}

// TestWindowMatMulScatterRows: rows with the output written through ScatterRows (c [P, N],
// the points of a [b, h, w] image, into the channels-first image [b, N, h, w] that the
// transpose of a channels-last convolution output makes) gives c's elements where the
// offsets put them: rows of the image 8 points long (the tile written in columns), 5 long
// (tiles across rows), float32 and float64, one thread and three, n of a partial vector.
func TestWindowMatMulScatterRows(t *testing.T) {
	for _, tc := range []struct{ b, c, h, w, n int }{{2, 3, 8, 8, 16}, {3, 2, 5, 5, 20}, {1, 4, 9, 16, 7}} {
		rng := rand.New(rand.NewSource(int64(tc.w)))
		dom, acc := convAccess(tc.b, tc.c, tc.h, tc.w, 3, 3, 1, 1)
		x := make([]float64, tc.b*tc.c*tc.h*tc.w)
		for i := range x {
			x[i] = rng.NormFloat64()
		}
		g, p, j := windowMatrix(dom, 3, acc, x)
		m := make([]float64, j*tc.n)
		for i := range m {
			m[i] = rng.NormFloat64()
		}
		hw := tc.h * tc.w
		offs := make([]int64, p)
		for pt := range offs {
			offs[pt] = int64(pt/hw*tc.n*hw + pt%hw)
		}
		want := make([]float64, p*tc.n)
		for pt := range p {
			for l := range tc.n {
				s := 0.0
				for st := range j {
					s += g[pt*j+st] * m[st*tc.n+l]
				}
				want[offs[pt]+int64(l*hw)] = s
			}
		}
		k, err := NewWindowMatMul(dom, 3, acc, tc.n, false, false)
		if err != nil {
			t.Fatal(err)
		}
		if err := k.ScatterRows(p*tc.n, hw, offs); err != nil {
			t.Fatal(err)
		}
		x32, m32 := make([]float32, len(x)), make([]float32, len(m))
		for i := range x {
			x32[i] = float32(x[i])
		}
		for i := range m {
			m32[i] = float32(m[i])
		}
		for _, procs := range []int{1, 3} {
			prev := runtime.GOMAXPROCS(procs)
			got := make([]float64, len(want))
			got32 := make([]float32, len(want))
			err64 := k.Run(got, []any{x, m})
			err32 := k.Run(got32, []any{x32, m32})
			runtime.GOMAXPROCS(prev)
			if err64 != nil || err32 != nil {
				t.Fatal(err64, err32)
			}
			for i, e := range want {
				if math.Abs(got[i]-e) > 1e-12*(1+math.Abs(e)) || math.Abs(float64(got32[i])-e) > 1e-4*(1+math.Abs(e)) {
					t.Fatalf("%+v procs %d: element %d = %v (float32 %v), want %v", tc, procs, i, got[i], got32[i], e)
				}
			}
		}
	}
}

// TestWindowMatMulErrors: malformed kernels and runs are errors, not panics.
func TestWindowMatMulErrors(t *testing.T) {
	dom, acc := convAccess(2, 3, 5, 6, 3, 3, 1, 1)
	for _, tc := range []struct {
		name string
		f    func() error
	}{
		{"split at 0", func() error { _, err := NewWindowMatMul(dom, 0, acc, 4, false, false); return err }},
		{"split past the end", func() error { _, err := NewWindowMatMul(dom, len(dom), acc, 4, false, false); return err }},
		{"no columns", func() error { _, err := NewWindowMatMul(dom, 3, acc, 0, false, false); return err }},
		{"short access row", func() error {
			a := acc.clone()
			a.Coef[1] = a.Coef[1][:3]
			_, err := NewWindowMatMul(dom, 3, a, 4, false, false)
			return err
		}},
		{"padding far out of bounds", func() error {
			a := acc.clone()
			a.C0[2] = -1 << 20
			_, err := NewWindowMatMul(dom, 3, a, 4, false, false)
			return err
		}},
		{"scatter twice into one element", func() error {
			k, _ := NewWindowMatMul(dom, 3, acc, 4, true, false)
			return k.ScatterTo(4*len(k.V), 0, make([]int64, len(k.V)))
		}},
		{"scatter on rows", func() error {
			k, _ := NewWindowMatMul(dom, 3, acc, 4, false, false)
			return k.ScatterTo(4*len(k.V), 1, make([]int64, len(k.V)))
		}},
		{"scatter rows on cols", func() error {
			k, _ := NewWindowMatMul(dom, 3, acc, 4, true, false)
			return k.ScatterRows(4*len(k.U), 1, make([]int64, len(k.U)))
		}},
		{"scatter rows twice into one element", func() error {
			k, _ := NewWindowMatMul(dom, 3, acc, 4, false, false)
			return k.ScatterRows(4*len(k.U), 0, make([]int64, len(k.U)))
		}},
		{"matrix out of bounds", func() error {
			k, _ := NewWindowMatMul(dom, 3, acc, 4, true, false)
			offs := make([]int64, len(k.U))
			offs[0] = int64(4 * len(k.U))
			return k.MatrixAt(1, offs)
		}},
		{"run with a short x", func() error {
			k, _ := NewWindowMatMul(dom, 3, acc, 4, false, false)
			return k.Run(make([]float64, len(k.U)*4), []any{make([]float64, 5), make([]float64, 4*len(k.V))})
		}},
		{"run with mixed dtypes", func() error {
			k, _ := NewWindowMatMul(dom, 3, acc, 4, false, false)
			return k.Run(make([]float64, len(k.U)*4), []any{make([]float32, 180), make([]float64, 4*len(k.V))})
		}},
	} {
		if err := tc.f(); err == nil {
			t.Errorf("%s: no error", tc.name)
		}
	}
}

// TestWinDotWidths: every width of the assembly (one AVX2 vector, one or two AVX-512
// vectors), float32 and float64, gives the sums of the Go loop to rounding. Where the CPU
// lacks a form the call reports it and the width is skipped (none is on amd64 with
// AVX-512; all are elsewhere).
func TestWinDotWidths(t *testing.T) {
	testWinDotWidths[float64](t, 1e-12)
	testWinDotWidths[float32](t, 1e-5)
}

func testWinDotWidths[T floatT](t *testing.T, tol float64) {
	rng := rand.New(rand.NewSource(5))
	steps, ldv := 37, 40
	x := make([]T, 500)
	for i := range x {
		x[i] = T(rng.NormFloat64())
	}
	tab := make([]int64, steps)
	for i := range tab {
		tab[i] = int64(rng.Intn(200))
	}
	idx := [8]int64{0, 7, 30, 31, 100, 250, 299, 3}
	v := make([]T, steps*ldv)
	for i := range v {
		v[i] = T(rng.NormFloat64())
	}
	lanes := 32 / int(unsafe.Sizeof(T(0)))
	ran := 0
	for _, w := range []int{lanes, 2 * lanes, 4 * lanes} {
		if w > ldv {
			continue
		}
		ldo := w + 3
		o := make([]T, 7*ldo+w)
		if !winDotVec(steps, tab, x, &idx, v, ldv, o, ldo, w) {
			continue
		}
		ran++
		for i := range 8 {
			for l := range w {
				s := 0.0
				for st := range steps {
					s += float64(x[tab[st]+idx[i]]) * float64(v[st*ldv+l])
				}
				if g := float64(o[i*ldo+l]); math.Abs(g-s) > tol*(1+math.Abs(s)) {
					t.Fatalf("width %d, row %d, element %d = %v, want %v", w, i, l, g, s)
				}
			}
		}
	}
	if hasVec && ran == 0 {
		t.Errorf("no width of winDotVec ran on a CPU with AVX2")
	}
}

// TestWindowMatMulInfiniteScatter: a scatter (ScatterTo) whose M holds an infinity leaves out
// the products with the window's padding, as the scatter it stands for has none: NaN and
// infinities only where the in-bounds terms make them; M stored [N, P] and transposed.
func TestWindowMatMulInfiniteScatter(t *testing.T) {
	rng := rand.New(rand.NewSource(9))
	dom, acc := convAccess(2, 3, 5, 6, 3, 3, 1, 1)
	x := make([]float64, 2*3*5*6)
	for i := range x {
		x[i] = rng.NormFloat64()
	}
	g, p, j := windowMatrix(dom, 3, acc, x)
	// in-bounds mask of the window matrix: the same walk with x all ones
	ones := make([]float64, len(x))
	for i := range ones {
		ones[i] = 1
	}
	in, _, _ := windowMatrix(dom, 3, acc, ones)
	n := 4
	for _, trans := range []bool{false, true} {
		m := make([]float64, p*n)
		for i := range m {
			m[i] = rng.NormFloat64()
		}
		m[5] = math.Inf(1)
		mAt := func(l, st int) float64 {
			if trans {
				return m[st*n+l]
			}
			return m[l*p+st]
		}
		k := col2imKernel(t, dom, acc, n, trans)
		got := make([]float64, n*j)
		if err := k.Run(got, []any{x, m}); err != nil {
			t.Fatal(err)
		}
		nonFinite := 0
		for l := range n {
			for col := range j {
				s := 0.0
				for st := range p {
					if in[st*j+col] != 0 {
						s += mAt(l, st) * g[st*j+col]
					}
				}
				e := got[l*j+col]
				if math.IsNaN(s) || math.IsInf(s, 0) {
					nonFinite++
				}
				if math.IsNaN(s) != math.IsNaN(e) || (math.IsInf(s, 0) || math.IsInf(e, 0)) && s != e || !math.IsNaN(s) && !math.IsInf(s, 0) && math.Abs(e-s) > 1e-12*(1+math.Abs(s)) {
					t.Fatalf("trans %v: element (%d, %d) = %v, want %v", trans, l, col, e, s)
				}
			}
		}
		if nonFinite == 0 || nonFinite == n*j {
			t.Fatalf("trans %v: %d of %d elements not finite: the case does not test the padding", trans, nonFinite, n*j)
		}
	}
}

// TestWindowMatMulSplits: rows, columns and a col2im-like scatter (ScatterTo) split across
// goroutines (row or column blocks) give the bits of one goroutine.
func TestWindowMatMulSplits(t *testing.T) {
	rng := rand.New(rand.NewSource(14))
	dom, acc := convAccess(8, 16, 16, 16, 3, 3, 1, 1) // enough work to split (parallelMin)
	x := make([]float32, 8*16*16*16)
	for i := range x {
		x[i] = float32(rng.NormFloat64())
	}
	rows, _ := NewWindowMatMul(dom, 3, acc, 16, false, false)
	cols, _ := NewWindowMatMul(dom, 3, acc, 16, true, true)
	scat, _ := NewWindowMatMul(dom, 3, acc, 16, true, false)
	offs := make([]int64, len(scat.V))
	for i := range offs {
		offs[i] = int64(i)
	}
	if err := scat.ScatterTo(16*len(offs), len(offs), offs); err != nil {
		t.Fatal(err)
	}
	p, j := len(rows.U), len(rows.V)
	mRows, mCols := make([]float32, j*16), make([]float32, p*16)
	for _, s := range [][]float32{mRows, mCols} {
		for i := range s {
			s[i] = float32(rng.NormFloat64())
		}
	}
	for _, c := range []struct {
		name string
		k    *WindowMatMul
		m    []float32
		n    int
	}{{"rows", rows, mRows, p * 16}, {"cols", cols, mCols, 16 * j}, {"scatter", scat, mCols, 16 * j}} {
		sameBitsAcrossProcs(t, c.name, c.n, func(out []float32) error { return c.k.Run(out, []any{x, c.m}) })
	}
}

// TestWindowMatMulSharedStaging: a filter gradient reading the forward product's padded copy
// of x (ShareStaging) computes what one padding its own copy does, to the bit: after the
// forward, after x changed in place with no forward run since (the record is read once),
// and after a forward on another x. Kernels padding x otherwise, or already sharing, are
// refused.
func TestWindowMatMulSharedStaging(t *testing.T) {
	dom, acc := convAccess(2, 3, 6, 7, 3, 3, 1, 1)
	rng := rand.New(rand.NewSource(41))
	fill := func(s []float32) {
		for i := range s {
			s[i] = float32(rng.NormFloat64())
		}
	}
	P, J, n := 2*6*7, 3*9, 8
	x, x2 := make([]float32, 2*3*6*7), make([]float32, 2*3*6*7)
	w, d := make([]float32, n*J), make([]float32, P*n)
	fill(x)
	fill(x2)
	fill(w)
	fill(d)
	fwd, _ := NewWindowMatMul(dom, 3, acc, n, false, true) // G·Wᵀ
	filt, _ := NewWindowMatMul(dom, 3, acc, n, true, true) // δᵀ·G, δ [P, n]
	own, _ := NewWindowMatMul(dom, 3, acc, n, true, true)
	if err := fwd.ShareStaging(filt); err != nil {
		t.Fatal(err)
	}
	out := make([]float32, P*n)
	check := func(what string, xs []float32) {
		t.Helper()
		got, want := make([]float32, n*J), make([]float32, n*J)
		if err := filt.Run(got, []any{xs, d}); err != nil {
			t.Fatal(err)
		}
		if err := own.Run(want, []any{xs, d}); err != nil {
			t.Fatal(err)
		}
		for i := range want {
			if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
				t.Fatalf("%s: element %d = %v, want %v", what, i, got[i], want[i])
			}
		}
	}
	if err := fwd.Run(out, []any{x, w}); err != nil {
		t.Fatal(err)
	}
	check("after the forward", x)
	fill(x) // the same slice, other values, no forward run
	check("x changed, no forward", x)
	if err := fwd.Run(out, []any{x2, w}); err != nil {
		t.Fatal(err)
	}
	check("the forward on another x", x)
	odom, oacc := convAccess(2, 3, 6, 7, 3, 3, 1, 0)
	other, _ := NewWindowMatMul(odom, 3, oacc, n, true, true)
	fresh, _ := NewWindowMatMul(dom, 3, acc, n, false, true)
	for _, c := range []struct {
		name string
		a, b *WindowMatMul
	}{{"itself", own, own}, {"another padding", fresh, other}, {"a stager again", fwd, own}, {"a reader again", own, filt}} {
		if c.a.ShareStaging(c.b) == nil {
			t.Errorf("%s: shared", c.name)
		}
	}
}

// TestPlanUnsharesLateReader: a plan whose steps run a kernel reading a staged copy before
// its stager gives the reader a copy of its own (else the reader of a second run would read
// the first run's copy of an x changed in place since); in the other order it keeps sharing.
func TestPlanUnsharesLateReader(t *testing.T) {
	dom, acc := convAccess(1, 2, 5, 5, 3, 3, 1, 1)
	P, J, n := 25, 18, 4
	f32 := func(s ...int) core.Type { return core.Type{Dtype: core.Float32, Shape: core.Shape(s)} }
	for _, readerFirst := range []bool{true, false} {
		fwd, _ := NewWindowMatMul(dom, 3, acc, n, false, true)
		filt, _ := NewWindowMatMul(dom, 3, acc, n, true, true)
		own, _ := NewWindowMatMul(dom, 3, acc, n, true, true)
		if err := fwd.ShareStaging(filt); err != nil {
			t.Fatal(err)
		}
		b := NewPlanBuilder(3)
		xs := b.Input(0, 0, f32(1, 2, 5, 5))
		ws := b.Input(1, 0, f32(n, J))
		ds := b.Input(2, 0, f32(P, n))
		var layout []Slot
		if readerFirst {
			g := b.Step(filt, nil, f32(n, J), xs, ds)
			layout = []Slot{g, b.Step(fwd, nil, f32(P, n), xs, ws)}
		} else {
			f := b.Step(fwd, nil, f32(P, n), xs, ws)
			layout = []Slot{b.Step(filt, nil, f32(n, J), xs, ds), f}
		}
		p, _, err := b.Build(core.Float32, layout)
		if err != nil {
			t.Fatal(err)
		}
		if shares := filt.stagingFrom() != nil; shares == readerFirst {
			t.Errorf("reader first %v: still shares %v", readerFirst, shares)
		}
		rng := rand.New(rand.NewSource(5))
		x, w, d := make([]float32, 50), make([]float32, n*J), make([]float32, P*n)
		for _, s := range [][]float32{x, w, d} {
			for i := range s {
				s[i] = float32(rng.NormFloat64())
			}
		}
		out := make([]float32, p.OutLen())
		for run := range 2 {
			for i := range x {
				x[i] = float32(rng.NormFloat64()) // x changed in place between the runs
			}
			if err := p.Run(out, []any{x, w, d}); err != nil {
				t.Fatal(err)
			}
			want := make([]float32, n*J)
			if err := own.Run(want, []any{x, d}); err != nil {
				t.Fatal(err)
			}
			for i, v := range want {
				if math.Float32bits(out[i]) != math.Float32bits(v) {
					t.Fatalf("reader first %v, run %d: element %d = %v, want %v", readerFirst, run, i, out[i], v)
				}
			}
		}
	}
}

// TestWindowMatMulScatterToTiles: cols written through ScatterTo with consecutive offsets (a
// col2im into the image: each tile of eight points lands as rows of eight contiguous
// elements, transposed in registers) gives c's elements where the offsets put them, in both
// dtypes, for n below, at and around the vector widths and a partial last tile of points.
func TestWindowMatMulScatterToTiles(t *testing.T) {
	testScatterToTiles[float32](t, 1e-4)
	testScatterToTiles[float64](t, 1e-12)
}

func testScatterToTiles[T floatT](t *testing.T, tol float64) {
	rng := rand.New(rand.NewSource(17))
	dom, acc := convAccess(2, 3, 5, 6, 3, 3, 1, 1)
	xf := make([]float64, 2*3*5*6)
	for i := range xf {
		xf[i] = rng.NormFloat64()
	}
	g, p, j := windowMatrix(dom, 3, acc, xf)
	x := make([]T, len(xf))
	for i, v := range xf {
		x[i] = T(v)
	}
	for _, n := range []int{5, 8, 16, 20, 40} {
		m := make([]T, n*p) // [N, P] read transposed (stored [P, N])
		for i := range m {
			m[i] = T(rng.NormFloat64())
		}
		k := col2imKernel(t, dom, acc, n, true)
		got := make([]T, n*j)
		if err := k.Run(got, []any{x, m}); err != nil {
			t.Fatal(err)
		}
		for l := range n {
			for col := range j {
				s := 0.0
				for st := range p {
					s += float64(m[st*n+l]) * float64(T(g[st*j+col]))
				}
				if e := float64(got[l*j+col]); math.Abs(e-s) > tol*(1+math.Abs(s)) {
					t.Fatalf("%T n %d: element (%d, %d) = %v, want %v", x[0], n, l, col, e, s)
				}
			}
		}
	}
}

// TestWindowMatMulSharePadding: two col2im-like products padding their inputs in one buffer
// (SharePadding), run in turn on different inputs, give the bits of products with buffers of
// their own; a kernel padding otherwise, or one sharing a staged copy, is refused (and one
// sharing a padded buffer cannot then share staging).
func TestWindowMatMulSharePadding(t *testing.T) {
	dom, acc := convAccess(2, 3, 6, 7, 3, 3, 1, 1)
	rng := rand.New(rand.NewSource(43))
	n := 5
	mk := func() *WindowMatMul { return col2imKernel(t, dom, acc, n, true) }
	a, b, ownA, ownB := mk(), mk(), mk(), mk()
	if err := a.SharePadding(b); err != nil {
		t.Fatal(err)
	}
	if !a.SharesPadding() || !b.SharesPadding() || ownA.SharesPadding() {
		t.Fatal("SharesPadding does not report the sharing")
	}
	P, J := len(a.U), len(a.V)
	for round := range 3 {
		for _, pair := range [][2]*WindowMatMul{{a, ownA}, {b, ownB}} {
			x, m := make([]float32, 2*3*6*7), make([]float32, P*n)
			for _, s := range [][]float32{x, m} {
				for i := range s {
					s[i] = float32(rng.NormFloat64())
				}
			}
			got, want := make([]float32, n*J), make([]float32, n*J)
			if err := pair[0].Run(got, []any{x, m}); err != nil {
				t.Fatal(err)
			}
			if err := pair[1].Run(want, []any{x, m}); err != nil {
				t.Fatal(err)
			}
			for i := range want {
				if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
					t.Fatalf("round %d: element %d = %v, want %v", round, i, got[i], want[i])
				}
			}
		}
	}
	odom, oacc := convAccess(2, 3, 6, 7, 3, 3, 1, 0)
	other, _ := NewWindowMatMul(odom, 3, oacc, n, true, true)
	fwd, _ := NewWindowMatMul(dom, 3, acc, n, false, true)
	filt, _ := NewWindowMatMul(dom, 3, acc, n, true, true)
	if err := fwd.ShareStaging(filt); err != nil {
		t.Fatal(err)
	}
	if ownA.SharePadding(other) == nil || ownA.SharePadding(ownA) == nil || ownA.SharePadding(fwd) == nil || filt.SharePadding(ownA) == nil {
		t.Error("a kernel padding otherwise, itself, or one sharing staging was accepted")
	}
	fresh, _ := NewWindowMatMul(dom, 3, acc, n, false, true)
	if fresh.ShareStaging(a) == nil {
		t.Error("a kernel sharing its padded buffer was made to read a staged copy")
	}
}

// col2imKernel is the cols product of the window matrix of acc over dom (split at 3) with an
// n-row matrix (stored transposed when trans), its output c [n, J] written through ScatterTo
// at consecutive offsets (as a col2im writes an image's points).
func col2imKernel(t *testing.T, dom []int, acc WinAccess, n int, trans bool) *WindowMatMul {
	t.Helper()
	k, err := NewWindowMatMul(dom, 3, acc, n, true, trans)
	if err != nil {
		t.Fatal(err)
	}
	offs := make([]int64, len(k.V))
	for i := range offs {
		offs[i] = int64(i)
	}
	if err := k.ScatterTo(n*len(offs), len(offs), offs); err != nil {
		t.Fatal(err)
	}
	return k
}
