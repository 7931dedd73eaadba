package lower

import (
	"fmt"
	"math"
	"math/rand"
	"strings"
	"testing"

	"github.com/bulkad/bulkad/core"
)

// Convolution, pooling and transposed convolution in 1, 2 and 3 spatial dimensions against
// direct loops written here from the definitions (PyTorch's documentation of Conv*d,
// MaxPool*d, AvgPool*d and ConvTranspose*d, and the ONNX operators), with the output sizes
// counted window by window rather than taken from WindowND.Out.

// ndWin is one window of the tests, given axis by axis.
type ndWin struct {
	k, s, d, pb, pe []int
	ceil            bool
}

func (w ndWin) lower() WindowND {
	return WindowND{Kernel: w.k, Strides: w.s, Dilations: w.d, PadBegin: w.pb, PadEnd: w.pe, Ceil: w.ceil}
}

// outSize counts the windows along axis k of an input of length in: window i starts at
// i·s − pb; without ceil it must end inside the input and its end padding; with ceil it must
// start inside the input or its begin padding, and the window before it must not already
// reach the end of the padded input.
func (w ndWin) outSize(k, in int) int {
	ext := w.d[k]*(w.k[k]-1) + 1
	n := 0
	for i := 0; ; i++ {
		start := i*w.s[k] - w.pb[k]
		if !w.ceil {
			if start+ext > in+w.pe[k] {
				return n
			}
		} else if i > 0 && (start >= in || start-w.s[k]+ext >= in+w.pe[k]) {
			return n
		}
		n++
	}
}

func (w ndWin) out(in []int) []int {
	o := make([]int, len(in))
	for k := range in {
		o[k] = w.outSize(k, in[k])
	}
	return o
}

// forEach calls f with every multi-index of shape sh, in row-major order.
func forEach(sh []int, f func(ix []int)) {
	ix := make([]int, len(sh))
	n := 1
	for _, d := range sh {
		n *= d
	}
	for i := 0; i < n; i++ {
		r := i
		for k := len(sh) - 1; k >= 0; k-- {
			ix[k] = r % sh[k]
			r /= sh[k]
		}
		f(ix)
	}
}

func cat(xs ...[]int) []int {
	var out []int
	for _, x := range xs {
		out = append(out, x...)
	}
	return out
}

func zeros(sh ...int) arr { return arr{core.Shape(sh), make([]float64, core.Shape(sh).Size())} }

func (a arr) set(v float64, ix ...int) { a.v[a.off(ix...)] = v }

// pos is the input position of window position r of output position o along axis k, and
// whether it is inside the input.
func (w ndWin) pos(k, o, r, in int) (int, bool) {
	p := o*w.s[k] - w.pb[k] + r*w.d[k]
	return p, p >= 0 && p < in
}

// index is the index lead ++ (the positions of window position r at positions o along the
// axes of lengths in), and whether every position is inside.
func (w ndWin) index(lead, o, r, in []int) ([]int, bool) {
	ix := append([]int{}, lead...)
	for k := range r {
		p, ok := w.pos(k, o[k], r[k], in[k])
		if !ok {
			return nil, false
		}
		ix = append(ix, p)
	}
	return ix, true
}

func loopConvND(x, f arr, groups int, w ndWin) arr {
	in := []int(x.sh[2:])
	out := w.out(in)
	b, c, o := x.sh[0], x.sh[1], f.sh[0]
	cg, og := c/groups, o/groups
	y := zeros(cat([]int{b, o}, out)...)
	forEach(cat([]int{b, o}, out), func(ix []int) {
		s := 0.0
		g := ix[1] / og
		for ci := 0; ci < cg; ci++ {
			forEach(w.k, func(r []int) {
				if xi, ok := w.index([]int{ix[0], g*cg + ci}, ix[2:], r, in); ok {
					s += x.at(xi...) * f.at(cat([]int{ix[1], ci}, r)...)
				}
			})
		}
		y.set(s, ix...)
	})
	return y
}

// loopPool is max-pooling (positions outside the input ignored, -MaxFloat64 for none) or
// average pooling: the sum over the positions inside the input divided by the number of
// positions inside the input, or with countPad inside the input and its pads, at least 1.
func loopPool(x arr, w ndWin, avg, countPad bool) arr {
	in := []int(x.sh[2:])
	out := w.out(in)
	y := zeros(cat(x.sh[:2], out)...)
	forEach(cat(x.sh[:2], out), func(ix []int) {
		m, s, cnt := -math.MaxFloat64, 0.0, 0
		forEach(w.k, func(r []int) {
			xi := []int{ix[0], ix[1]}
			inside, padded := true, true
			for k := range r {
				p, ok := w.pos(k, ix[2+k], r[k], in[k])
				inside = inside && ok
				padded = padded && p >= -w.pb[k] && p < in[k]+w.pe[k]
				xi = append(xi, p)
			}
			if inside {
				m = math.Max(m, x.at(xi...))
				s += x.at(xi...)
			}
			if inside || countPad && padded {
				cnt++
			}
		})
		if avg {
			y.set(s/math.Max(float64(cnt), 1), ix...)
		} else {
			y.set(m, ix...)
		}
	})
	return y
}

// loopConvTranspose scatters x[b, ch, i]·f[ch, m, r] to y[b, g·og+m, i·s − pb + r·d].
func loopConvTranspose(x, f arr, groups int, w ndWin, outPad []int) arr {
	in := []int(x.sh[2:])
	out := make([]int, len(in))
	for k := range in {
		out[k] = w.s[k]*(in[k]-1) + outPad[k] + w.d[k]*(w.k[k]-1) + 1 - w.pb[k] - w.pe[k]
	}
	b, c, og := x.sh[0], x.sh[1], f.sh[1]
	cg := c / groups
	y := zeros(cat([]int{b, groups * og}, out)...)
	forEach(cat([]int{b, c}, in), func(ix []int) {
		g := ix[1] / cg
		for m := 0; m < og; m++ {
			forEach(w.k, func(r []int) {
				if yi, ok := w.index([]int{ix[0], g*og + m}, ix[2:], r, out); ok {
					y.v[y.off(yi...)] += x.at(ix...) * f.at(cat([]int{ix[1], m}, r)...)
				}
			})
		}
	})
	return y
}

func TestConvNDAgainstLoops(t *testing.T) {
	rng := rand.New(rand.NewSource(21))
	cases := []struct {
		name      string
		x         []int
		o, groups int
		w         ndWin
	}{
		{"1-D pad 1", []int{2, 3, 10}, 4, 1, ndWin{k: []int{3}, s: []int{1}, d: []int{1}, pb: []int{1}, pe: []int{1}}},
		{"1-D groups 3 stride 2 dilation 2 uneven pads", []int{2, 6, 11}, 3, 3, ndWin{k: []int{3}, s: []int{2}, d: []int{2}, pb: []int{2}, pe: []int{1}}},
		{"1-D depthwise", []int{1, 4, 7}, 8, 4, ndWin{k: []int{2}, s: []int{1}, d: []int{1}, pb: []int{0}, pe: []int{1}}},
		{"2-D groups 2 stride 2", []int{2, 4, 5, 6}, 4, 2, ndWin{k: []int{3, 2}, s: []int{2, 1}, d: []int{1, 2}, pb: []int{1, 0}, pe: []int{0, 2}}},
		{"3-D pad 1", []int{2, 2, 4, 5, 3}, 3, 1, ndWin{k: []int{3, 3, 3}, s: []int{1, 1, 1}, d: []int{1, 1, 1}, pb: []int{1, 1, 1}, pe: []int{1, 1, 1}}},
		{"3-D groups 2 strides dilation", []int{1, 4, 5, 6, 4}, 6, 2, ndWin{k: []int{2, 3, 1}, s: []int{1, 2, 1}, d: []int{2, 1, 1}, pb: []int{1, 1, 0}, pe: []int{0, 1, 0}}},
		{"3-D depthwise", []int{2, 3, 3, 4, 3}, 3, 3, ndWin{k: []int{2, 2, 2}, s: []int{1, 1, 2}, d: []int{1, 1, 1}, pb: []int{0, 1, 1}, pe: []int{1, 0, 1}}},
	}
	for _, c := range cases {
		x := randArr(rng, c.x...)
		f := randArr(rng, cat([]int{c.o, c.x[1] / c.groups}, c.w.k)...)
		want := func(a []arr) arr { return loopConvND(a[0], a[1], c.groups, c.w) }
		for _, form := range []struct {
			name string
			fn   func(x, f core.Term, w WindowND, groups int) (core.Term, error)
		}{{"ConvND", ConvND}, {"generic", convGeneric}} {
			checkLayer(t, c.name+" "+form.name, func(v ...core.Term) (core.Term, error) {
				return form.fn(v[0], v[1], c.w.lower(), c.groups)
			}, want, []arr{x, f}, []bool{true, true}, 1e-3)
		}
	}
}

func TestPoolNDAgainstLoops(t *testing.T) {
	rng := rand.New(rand.NewSource(22))
	cases := []struct {
		name string
		x    []int
		w    ndWin
	}{
		{"1-D ceil", []int{2, 2, 10}, ndWin{k: []int{3}, s: []int{2}, d: []int{1}, pb: []int{0}, pe: []int{0}, ceil: true}},
		{"1-D ceil pads", []int{1, 3, 8}, ndWin{k: []int{3}, s: []int{2}, d: []int{1}, pb: []int{1}, pe: []int{1}, ceil: true}},
		{"2-D ceil pads", []int{2, 2, 5, 6}, ndWin{k: []int{3, 3}, s: []int{2, 2}, d: []int{1, 1}, pb: []int{1, 1}, pe: []int{1, 1}, ceil: true}},
		{"2-D dilation pads", []int{1, 2, 7, 6}, ndWin{k: []int{3, 2}, s: []int{2, 1}, d: []int{2, 2}, pb: []int{1, 1}, pe: []int{1, 0}}},
		{"2-D ceil, end pad as wide as the window", []int{1, 1, 4, 4}, ndWin{k: []int{2, 2}, s: []int{2, 2}, d: []int{1, 1}, pb: []int{0, 0}, pe: []int{2, 2}, ceil: true}},
		{"3-D ceil", []int{1, 2, 5, 4, 3}, ndWin{k: []int{2, 2, 2}, s: []int{2, 2, 2}, d: []int{1, 1, 1}, pb: []int{0, 0, 0}, pe: []int{0, 0, 0}, ceil: true}},
		{"3-D pads", []int{2, 1, 4, 3, 5}, ndWin{k: []int{3, 2, 3}, s: []int{1, 2, 2}, d: []int{1, 1, 1}, pb: []int{1, 1, 1}, pe: []int{1, 0, 1}}},
	}
	for _, c := range cases {
		x := randArr(rng, c.x...)
		for i := range x.v {
			x.v[i] -= 2 // all negative: padding must not win the maximum or count as 0 in it
		}
		w := c.w.lower()
		checkLayer(t, c.name+" MaxPoolND", func(v ...core.Term) (core.Term, error) { return MaxPoolND(v[0], w) },
			func(a []arr) arr { return loopPool(a[0], c.w, false, false) }, []arr{x}, []bool{true}, 1e-6)
		checkLayer(t, c.name+" max generic", func(v ...core.Term) (core.Term, error) { return maxPoolGeneric(v[0], w) },
			func(a []arr) arr { return loopPool(a[0], c.w, false, false) }, []arr{x}, []bool{true}, 1e-6)
		for _, countPad := range []bool{false, true} {
			checkLayer(t, fmt.Sprintf("%s AvgPoolND countPad=%v", c.name, countPad), func(v ...core.Term) (core.Term, error) { return AvgPoolND(v[0], w, countPad) },
				func(a []arr) arr { return loopPool(a[0], c.w, true, countPad) }, []arr{x}, []bool{true}, 1e-3)
		}
	}
}

func TestConvTransposeNDAgainstLoops(t *testing.T) {
	rng := rand.New(rand.NewSource(23))
	cases := []struct {
		name      string
		x         []int
		og, group int
		w         ndWin
		outPad    []int
	}{
		{"1-D stride 2", []int{2, 3, 5}, 2, 1, ndWin{k: []int{3}, s: []int{2}, d: []int{1}, pb: []int{0}, pe: []int{0}}, []int{0}},
		{"2-D stride 2 pad 1 output padding 1 groups 2 dilation 2", []int{2, 2, 4, 5}, 2, 2, ndWin{k: []int{3, 3}, s: []int{2, 2}, d: []int{2, 2}, pb: []int{1, 1}, pe: []int{1, 1}}, []int{1, 1}},
		{"2-D plain", []int{1, 4, 3, 3}, 3, 1, ndWin{k: []int{2, 2}, s: []int{2, 2}, d: []int{1, 1}, pb: []int{0, 0}, pe: []int{0, 0}}, []int{0, 0}},
		{"2-D uneven pads, stride 3", []int{2, 3, 3, 4}, 2, 1, ndWin{k: []int{2, 4}, s: []int{3, 1}, d: []int{1, 1}, pb: []int{0, 2}, pe: []int{1, 1}}, []int{2, 0}},
		{"2-D depthwise", []int{1, 3, 4, 4}, 1, 3, ndWin{k: []int{3, 3}, s: []int{1, 1}, d: []int{1, 1}, pb: []int{1, 1}, pe: []int{1, 1}}, []int{0, 0}},
		{"3-D", []int{1, 2, 2, 3, 2}, 2, 1, ndWin{k: []int{2, 2, 3}, s: []int{2, 1, 2}, d: []int{1, 1, 1}, pb: []int{0, 1, 1}, pe: []int{0, 0, 1}}, []int{1, 0, 0}},
	}
	for _, c := range cases {
		x := randArr(rng, c.x...)
		f := randArr(rng, cat([]int{c.x[1], c.og}, c.w.k)...)
		checkLayer(t, c.name+" ConvTransposeND", func(v ...core.Term) (core.Term, error) {
			return ConvTransposeND(v[0], v[1], c.w.lower(), c.group, c.outPad)
		}, func(a []arr) arr { return loopConvTranspose(a[0], a[1], c.group, c.w, c.outPad) }, []arr{x, f}, []bool{true, true}, 1e-3)
	}
}

// TestConvTransposeIsAdjoint: ⟨ConvND(x, f), y⟩ = ⟨x, ConvTransposeND(y, f)⟩ for the filters
// read as [c_out, c_in] by the transposed convolution (its definition as the adjoint).
func TestConvTransposeIsAdjoint(t *testing.T) {
	rng := rand.New(rand.NewSource(24))
	w := ndWin{k: []int{3, 2}, s: []int{2, 1}, d: []int{1, 2}, pb: []int{1, 0}, pe: []int{1, 1}}
	x := randArr(rng, 2, 4, 7, 6)
	f := randArr(rng, 6, 2, 3, 2) // [o, c/groups, …] with 2 groups
	out := w.out([]int{7, 6})
	y := randArr(rng, 2, 6, out[0], out[1])
	cx, _ := evalOn(t, func(v ...core.Term) (core.Term, error) { return ConvND(v[0], v[1], w.lower(), 2) }, x, f)
	// output padding makes the transposed output as large as x
	op := []int{(7 + 2 - 3) % 2, 0}
	ty, sh := evalOn(t, func(v ...core.Term) (core.Term, error) { return ConvTransposeND(v[0], v[1], w.lower(), 2, op) }, y, f)
	if !sh.Equal(x.sh) {
		t.Fatalf("transposed shape %v, want %v", sh, x.sh)
	}
	if l, r, ok := adjoint(cx, y.v, ty, x.v); !ok {
		t.Errorf("⟨conv x, y⟩ = %v, ⟨x, convT y⟩ = %v", l, r)
	}
}

func TestWindowNDErrors(t *testing.T) {
	v := func(sh ...int) core.Term { return f64Var(t, sh...) }
	w3 := WindowND{Kernel: []int{3, 3, 3}}
	for _, c := range []struct {
		name string
		run  func() (core.Term, error)
		want string
	}{
		{"conv rank", func() (core.Term, error) { return ConvND(v(1, 2, 4, 4), v(2, 2, 3, 3, 3), w3, 1) }, "for a 3-D window"},
		{"conv groups", func() (core.Term, error) { return ConvND(v(1, 4, 4, 4, 4), v(3, 2, 3, 3, 3), w3, 2) }, "2 groups do not divide"},
		{"conv ceil", func() (core.Term, error) {
			return ConvND(v(1, 2, 4, 4, 4), v(2, 2, 3, 3, 3), WindowND{Kernel: []int{3, 3, 3}, Ceil: true}, 1)
		}, "never rounded up"},
		{"conv kernel", func() (core.Term, error) { return ConvND(v(1, 2, 4, 4, 4), v(2, 2, 3, 2, 3), w3, 1) }, "do not match the kernel"},
		{"pool too large", func() (core.Term, error) { return MaxPoolND(v(1, 2, 2, 4, 4), w3) }, "does not fit"},
		{"pool strides", func() (core.Term, error) {
			return AvgPoolND(v(1, 2, 4, 4, 4), WindowND{Kernel: []int{3, 3, 3}, Strides: []int{1, 1}}, true)
		}, "need 3 entries"},
		{"pool negative pad", func() (core.Term, error) {
			return MaxPoolND(v(1, 2, 4, 4, 4), WindowND{Kernel: []int{3, 3, 3}, PadBegin: []int{0, -1, 0}})
		}, "invalid window"},
		{"transpose output padding", func() (core.Term, error) {
			return ConvTransposeND(v(1, 2, 4, 4), v(2, 2, 3, 3), WindowND{Kernel: []int{3, 3}, Strides: []int{2, 2}}, 1, []int{2, 0})
		}, "output padding below the stride"},
		{"transpose filters", func() (core.Term, error) {
			return ConvTransposeND(v(1, 2, 4, 4), v(3, 2, 3, 3), WindowND{Kernel: []int{3, 3}}, 1, nil)
		}, "groups do not divide"},
	} {
		_, err := c.run()
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "lower: ") {
			t.Errorf("%s: %v, want an error containing %q", c.name, err, c.want)
		}
	}
}
