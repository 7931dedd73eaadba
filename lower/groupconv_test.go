package lower

import (
	"fmt"
	"math/rand"
	"strings"
	"testing"

	"github.com/bulkad/bulkad/ad"
	"github.com/bulkad/bulkad/core"
	"github.com/bulkad/bulkad/internal/testutil"
	"gorgonia.org/tensor"
)

// Grouped convolution is checked against a direct loop written from the definition (output
// channel o of group g = o / (o/groups) sums x[n, g·cg + c', row, col] · f[o, c', r, s] over
// the group's input channels c' and the window, zero outside the image), and its gradients
// against central differences of that loop's Σ y·r.

type gconvCase struct {
	name              string
	b, c, o, groups   int
	h, w              int
	win               Window
	elementwiseByRule bool // which form GroupedConv2d picks
}

func gconvCases() []gconvCase {
	same := func(k int) Window {
		return Window{KH: k, KW: k, PadTop: k / 2, PadBottom: k / 2, PadLeft: k / 2, PadRight: k / 2, StrideH: 1, StrideW: 1}
	}
	return []gconvCase{
		{"depthwise 3x3", 2, 4, 4, 4, 5, 5, same(3), true},
		{"depthwise multiplier 2, stride 2, uneven pads", 1, 3, 6, 3, 6, 5,
			Window{KH: 3, KW: 2, PadTop: 1, PadBottom: 0, PadLeft: 2, PadRight: 1, StrideH: 2, StrideW: 2}, true},
		{"depthwise 3x3 dilation 2", 2, 3, 3, 3, 7, 6,
			Window{KH: 3, KW: 3, PadTop: 2, PadBottom: 2, PadLeft: 1, PadRight: 2, StrideH: 1, StrideW: 2, DilationH: 2, DilationW: 2}, true},
		{"depthwise 1x1", 2, 5, 5, 5, 3, 4, Window{KH: 1, KW: 1, StrideH: 1, StrideW: 1}, true},
		{"2 channels per group, 16 groups", 1, 32, 32, 16, 4, 4, same(3), false},
		{"2 channels in, 1 out per group, 64 groups", 1, 128, 64, 64, 3, 3, same(3), false},
		{"2 channels in, 3 out per group, 3 groups", 2, 6, 9, 3, 5, 4, same(3), false},
		{"3 channels in, 2 out per group, 2 groups, dilation 2, stride 2", 2, 6, 4, 2, 7, 6,
			Window{KH: 2, KW: 3, PadTop: 1, PadBottom: 0, PadLeft: 2, PadRight: 1, StrideH: 2, StrideW: 1, DilationH: 2, DilationW: 2}, false},
		{"4 channels in, 1 out per group, 2 groups, stride 2", 1, 8, 2, 2, 6, 6,
			Window{KH: 3, KW: 3, PadTop: 1, PadBottom: 1, PadLeft: 1, PadRight: 1, StrideH: 2, StrideW: 2}, false},
		{"1x1, 3 groups", 2, 9, 6, 3, 3, 3, Window{KH: 1, KW: 1, StrideH: 1, StrideW: 1}, false},
		{"one group", 1, 3, 4, 1, 4, 4, same(3), false},
	}
}

// loopGConv is the direct loop: x : [b,c,h,w], f : [o,c/groups,KH,KW] → [b,o,oh,ow].
func loopGConv(x, f arr, groups int, w Window) arr {
	b, c, h, wd := x.sh[0], x.sh[1], x.sh[2], x.sh[3]
	o := f.sh[0]
	cg, og := c/groups, o/groups
	oh, ow := w.OutHW(h, wd)
	dh, dw := w.dil()
	y := arr{core.Shape{b, o, oh, ow}, make([]float64, b*o*oh*ow)}
	k := 0
	for n := 0; n < b; n++ {
		for oc := 0; oc < o; oc++ {
			g := oc / og
			for i := 0; i < oh; i++ {
				for j := 0; j < ow; j++ {
					s := 0.0
					for ci := 0; ci < cg; ci++ {
						for r := 0; r < w.KH; r++ {
							for q := 0; q < w.KW; q++ {
								row := i*w.StrideH - w.PadTop + r*dh
								col := j*w.StrideW - w.PadLeft + q*dw
								if row < 0 || row >= h || col < 0 || col >= wd {
									continue
								}
								s += x.at(n, g*cg+ci, row, col) * f.at(oc, ci, r, q)
							}
						}
					}
					y.v[k] = s
					k++
				}
			}
		}
	}
	return y
}

type gconvForm struct {
	name string
	fn   func(x, f core.Term, w Window, groups int) (core.Term, error)
}

var gconvForms = []gconvForm{
	{"GroupedConv2d", GroupedConv2d},
	{"element-wise", groupedConvElementwise},
	{"batched", groupedConvBatched},
}

func denseOf(a arr, d core.Dtype) *tensor.Dense {
	if d == core.Float32 {
		v := make([]float32, len(a.v))
		for i, x := range a.v {
			v[i] = float32(x)
		}
		return tensor.New(tensor.WithShape([]int(a.sh)...), tensor.WithBacking(v))
	}
	return tensor.New(tensor.WithShape([]int(a.sh)...), tensor.WithBacking(append([]float64{}, a.v...)))
}

// floatsOf is d's elements as float64s, failing t on data testutil.DenseFloats does not read.
func floatsOf(t *testing.T, d *tensor.Dense) []float64 {
	t.Helper()
	out, err := testutil.DenseFloats(d)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// gconvProgram is fn (x, f, r) => Σ conv(x, f) · r (and the convolution alone).
func gconvProgram(t *testing.T, c gconvCase, d core.Dtype, form gconvForm) (loss, fwd *core.Program) {
	t.Helper()
	x, _ := core.NewVar("x", core.Type{Shape: core.Shape{c.b, c.c, c.h, c.w}, Dtype: d})
	f, _ := core.NewVar("f", core.Type{Shape: core.Shape{c.o, c.c / c.groups, c.win.KH, c.win.KW}, Dtype: d})
	oh, ow := c.win.OutHW(c.h, c.w)
	r, _ := core.NewVar("r", core.Type{Shape: core.Shape{c.b, c.o, oh, ow}, Dtype: d})
	y, err := form.fn(x, f, c.win, c.groups)
	if err != nil {
		t.Fatalf("%s %s: %v", c.name, form.name, err)
	}
	var b core.Builder
	l := b.SumOuter(b.Reshape(core.Shape{c.b * c.o * oh * ow}, b.Mul(y, r)))
	lp, err := core.NewProgram([]*core.Var{x, f, r}, l)
	if err != nil {
		t.Fatal(err, b.Err())
	}
	fp, err := core.NewProgram([]*core.Var{x, f}, y)
	if err != nil {
		t.Fatal(err)
	}
	return lp, fp
}

func TestGroupedConv2dRule(t *testing.T) {
	for _, c := range gconvCases() {
		x, _ := core.NewVar("x", core.Type{Shape: core.Shape{c.b, c.c, c.h, c.w}, Dtype: core.Float64})
		f, _ := core.NewVar("f", core.Type{Shape: core.Shape{c.o, c.c / c.groups, c.win.KH, c.win.KW}, Dtype: core.Float64})
		y, err := GroupedConv2d(x, f, c.win, c.groups)
		if err != nil {
			t.Fatal(err)
		}
		// the element-wise form has no matrix product; the other two have one
		hasMatMul := strings.Contains(y.String(), "matmul")
		if hasMatMul == c.elementwiseByRule {
			t.Errorf("%s: matmul in %v, want the element-wise form = %v", c.name, y, c.elementwiseByRule)
		}
	}
}

// TestGroupedConv2dForward: every form against the direct loop, float64 and float32, by the
// reference evaluator and by the kernels.
func TestGroupedConv2dForward(t *testing.T) {
	rng := rand.New(rand.NewSource(11))
	for _, c := range gconvCases() {
		xa := randArr(rng, c.b, c.c, c.h, c.w)
		fa := randArr(rng, c.o, c.c/c.groups, c.win.KH, c.win.KW)
		want := loopGConv(xa, fa, c.groups, c.win)
		for _, form := range gconvForms {
			for _, d := range []core.Dtype{core.Float64, core.Float32} {
				_, fp := gconvProgram(t, c, d, form)
				args := map[string]*tensor.Dense{"x": denseOf(xa, d), "f": denseOf(fa, d)}
				tol := 1e-13
				if d == core.Float32 {
					tol = 1e-5
				}
				for _, ev := range evaluators() {
					got, err := ev.run(fp, args)
					if err != nil {
						t.Fatalf("%s %s %v: %v", c.name, form.name, d, err)
					}
					if !core.Shape(got.Shape()).Equal(want.sh) {
						t.Fatalf("%s %s: shape %v, want %v", c.name, form.name, got.Shape(), want.sh)
					}
					near(t, fmt.Sprintf("%s %s %v %s", c.name, form.name, d, ev.name), floatsOf(t, got), want.v, tol)
				}
			}
		}
	}
}

// TestGroupedConv2dGradFD: ad.Grad of Σ conv(x, f)·r with respect to x and f, run by the
// reference evaluator and the kernels, against central differences (float64) of the direct
// loop; float32 gradients against the same float64 differences.
func TestGroupedConv2dGradFD(t *testing.T) {
	rng := rand.New(rand.NewSource(12))
	for _, c := range gconvCases() {
		xa := randArr(rng, c.b, c.c, c.h, c.w)
		fa := randArr(rng, c.o, c.c/c.groups, c.win.KH, c.win.KW)
		oh, ow := c.win.OutHW(c.h, c.w)
		ra := randArr(rng, c.b, c.o, oh, ow)
		loss := func(x, f arr) float64 {
			y := loopGConv(x, f, c.groups, c.win)
			s := 0.0
			for i, v := range y.v {
				s += v * ra.v[i]
			}
			return s
		}
		fd := func(a arr, l func(arr) float64) []float64 {
			g := make([]float64, len(a.v))
			const h = 1e-3 // the loss is linear in each argument: the difference is exact but for rounding
			for i := range a.v {
				p := arr{a.sh, append([]float64{}, a.v...)}
				m := arr{a.sh, append([]float64{}, a.v...)}
				p.v[i] += h
				m.v[i] -= h
				g[i] = (l(p) - l(m)) / (2 * h)
			}
			return g
		}
		wantX := fd(xa, func(x arr) float64 { return loss(x, fa) })
		wantF := fd(fa, func(f arr) float64 { return loss(xa, f) })
		for _, form := range gconvForms {
			for _, d := range []core.Dtype{core.Float64, core.Float32} {
				lp, _ := gconvProgram(t, c, d, form)
				art, err := ad.Grad(lp, "x", "f")
				if err != nil {
					t.Fatalf("%s %s: grad: %v", c.name, form.name, err)
				}
				args := map[string]*tensor.Dense{"x": denseOf(xa, d), "f": denseOf(fa, d), "r": denseOf(ra, d)}
				tol := 1e-9
				if d == core.Float32 {
					tol = 2e-5
				}
				for _, ev := range evaluators() {
					v, gs, err := art.RunWith(ev.tuple, args)
					if err != nil {
						t.Fatalf("%s %s %v %s: %v", c.name, form.name, d, ev.name, err)
					}
					label := fmt.Sprintf("%s %s %v %s", c.name, form.name, d, ev.name)
					near(t, label+" value", floatsOf(t, v), []float64{loss(xa, fa)}, tol)
					near(t, label+" ∂x", floatsOf(t, gs["x"]), wantX, tol)
					near(t, label+" ∂f", floatsOf(t, gs["f"]), wantF, tol)
				}
			}
		}
	}
}

// TestGroupedConv2dSizeIndependentOfGroups: the program and its gradient program have the
// same size for 2 groups as for 64 (the same channels per group): no per-group structure.
func TestGroupedConv2dSizeIndependentOfGroups(t *testing.T) {
	for _, form := range gconvForms[1:] {
		for _, per := range []struct{ cg, og int }{{1, 1}, {1, 2}, {3, 2}} {
			var sizes, gsizes []int
			for _, g := range []int{2, 8, 64} {
				c := gconvCase{b: 2, c: per.cg * g, o: per.og * g, groups: g, h: 6, w: 6,
					win: Window{KH: 3, KW: 3, PadTop: 1, PadBottom: 1, PadLeft: 1, PadRight: 1, StrideH: 1, StrideW: 1}}
				lp, _ := gconvProgram(t, c, core.Float64, form)
				art, err := ad.Grad(lp, "x", "f")
				if err != nil {
					t.Fatal(err)
				}
				sizes = append(sizes, core.Size(lp.Body))
				gsizes = append(gsizes, core.Size(art.Program().Body))
			}
			for i := range sizes {
				if sizes[i] != sizes[0] || gsizes[i] != gsizes[0] {
					t.Errorf("%s cg=%d og=%d: program sizes %v and gradient sizes %v for 2, 8, 64 groups, want equal",
						form.name, per.cg, per.og, sizes, gsizes)
					break
				}
			}
		}
	}
}

func TestGroupedConv2dErrors(t *testing.T) {
	v := func(name string, sh ...int) core.Term {
		x, err := core.NewVar(name, core.Type{Shape: core.Shape(sh), Dtype: core.Float64})
		if err != nil {
			t.Fatal(err)
		}
		return x
	}
	w3 := Window{KH: 3, KW: 3, StrideH: 1, StrideW: 1}
	for _, c := range []struct {
		name   string
		x, f   core.Term
		w      Window
		groups int
		want   string
	}{
		{"zero groups", v("x", 1, 4, 5, 5), v("f", 4, 4, 3, 3), w3, 0, "0 groups do not divide"},
		{"groups not dividing c", v("x", 1, 4, 5, 5), v("f", 3, 1, 3, 3), w3, 3, "3 groups do not divide"},
		{"filter channels", v("x", 1, 4, 5, 5), v("f", 4, 2, 3, 3), w3, 4, "4 groups do not divide"},
		{"window", v("x", 1, 4, 5, 5), v("f", 4, 1, 2, 2), w3, 4, "do not match the window 3x3"},
		{"rank", v("x", 4, 5, 5), v("f", 4, 1, 3, 3), w3, 4, "want [b,c,h,w]"},
		{"window too large", v("x", 1, 4, 2, 2), v("f", 4, 1, 3, 3), w3, 4, "does not fit"},
		{"nil", nil, v("f", 4, 1, 3, 3), w3, 4, "operand 0 is nil"},
	} {
		_, err := GroupedConv2d(c.x, c.f, c.w, c.groups)
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "lower: grouped conv2d") {
			t.Errorf("%s: %v, want an error containing %q", c.name, err, c.want)
		}
	}
}
