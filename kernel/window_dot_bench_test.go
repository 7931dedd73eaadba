package kernel

import (
	"fmt"
	"math/rand"
	"testing"

	"github.com/bulkad/bulkad/core"
)

// Benchmarks of WindowDot against the unfused sequence of op kernels that package raise
// plans for the same terms without it (the window gather clipped at the padding, the product
// with the broadcast filter or cotangent read through strides, then sumOuter or the scatter),
// on the depthwise layers of MobileNetV2 at batch 2 and 64×64 images (float32), forward and
// both gradient products:
//
//	go test -run xxx -bench WindowDot ./kernel
//
// fused is the loop order WindowDot chooses; rows and channels force one (see winRowMin).

func dwBenches() []dwCase {
	dw := func(ch, h, k, s int) dwCase {
		return dwCase{name: fmt.Sprintf("c%d_%dx%d_k%d_s%d", ch, h, h, k, s), b: 2, groups: ch, cg: 1, og: 1, h: h, w: h, kh: k, kw: k,
			sh: s, sw: s, dh: 1, dw: 1, pt: k / 2, pb: k / 2, pl: k / 2, pr: k / 2}
	}
	return []dwCase{
		dw(32, 32, 3, 1), dw(96, 32, 3, 2), dw(144, 16, 3, 1), dw(144, 16, 3, 2),
		dw(192, 8, 3, 1), dw(384, 4, 3, 1), dw(576, 4, 3, 1), dw(960, 2, 3, 1),
		dw(72, 16, 5, 2), dw(240, 8, 5, 1), dw(672, 4, 5, 1),
	}
}

// dwUnfused is the unfused sequence of one of the three terms: kernels run in order, each
// step's output the next one's first input (ins are the extra inputs of each step).
type dwUnfused struct {
	steps []Kernel
	outs  [][]float32
	ins   [][]int // per step: indices into the term's inputs (x, f, d), −1 for the previous output
}

func (u *dwUnfused) run(args map[int][]float32) error {
	var prev []float32
	for i, k := range u.steps {
		var ins []any
		for _, j := range u.ins[i] {
			if j < 0 {
				ins = append(ins, prev)
			} else {
				ins = append(ins, args[j])
			}
		}
		if err := k.Run(u.outs[i], ins); err != nil {
			return err
		}
		prev = u.outs[i]
	}
	return nil
}

// dwKernels builds the fused kernel and the unfused sequence of term which (forward, dx, df)
// of case c, with the index programs of its gathers and scatter.
func dwKernels(tb testing.TB, c dwCase, which string, mode int) (*WindowDot, *dwUnfused, []int) {
	tb.Helper()
	fwd, _, _ := c.programs(core.Float32)
	p, err := core.ParseProgram(fwd)
	if err != nil {
		tb.Fatal(err)
	}
	prod := p.Body.(*core.SumOuter).X.(*core.Reshape).X.(*core.Binary)
	gx, gf := prod.X.(*core.Gather), prod.Y.(*core.Gather)
	px, err1 := CompileIndexFn(gx.Fn)
	pf, err2 := CompileIndexFn(gf.Fn)
	if err1 != nil || err2 != nil {
		tb.Fatal(err1, err2)
	}
	sh := []int(gx.Shape)
	xs, fs := []int(gx.X.Type().Shape), []int(gf.X.Type().Shape)
	oh, ow := c.out()
	o := c.groups * c.og
	// the strided views of the product: the filter broadcast (an in-bounds gather) and the
	// cotangent replicated over the window
	fst, fbase, ok := pf.AffinePlan(sh, fs)
	if !ok {
		tb.Fatal("filter gather not in bounds")
	}
	dst := core.Shape{c.b, o, oh, ow}.Strides()
	cst := []int{0, 0, 0, dst[0], c.og * dst[1], dst[1], dst[2], dst[3]}
	gather := func(pr *IndexProgram, src []int) *Gather {
		g := &Gather{Dom: sh, Src: src, Rest: 1, IndexPlan: IndexPlan{Fn: pr}}
		g.AffineStrides, g.AffineBase, g.Affine = pr.AffinePlan(sh, src)
		g.Clip = pr.ClipPlan(sh, src)
		return g
	}
	scatter := func(pr *IndexProgram, dst []int) *Scatter {
		s := &Scatter{Dom: sh, Dst: dst, Rest: 1, IndexPlan: IndexPlan{Fn: pr}}
		s.AffineStrides, s.AffineBase, s.Affine = pr.AffinePlan(sh, dst)
		s.Clip = pr.ClipPlan(sh, dst)
		return s
	}
	n := core.Shape(sh).Size()
	dom, xa, fa, da := c.accesses()
	u := &dwUnfused{}
	var wk *WindowDot
	var ins []int // the fused kernel's inputs (0 x, 1 f, 2 d)
	switch which {
	case "forward":
		wk, err = newWindowDot(dom, da, xa, fa, mode)
		ins = []int{0, 1}
		u.steps = []Kernel{gather(px, xs), StridedBinary{Op: core.OpMul, Shape: sh, XS: core.Shape(sh).Strides(), YS: fst, YO: fbase}, SumOuter{}}
		u.outs = [][]float32{make([]float32, n), make([]float32, n), make([]float32, c.b*o*oh*ow)}
		u.ins = [][]int{{0}, {-1, 1}, {-1}}
	case "dx":
		wk, err = newWindowDot(dom, xa, da, fa, mode)
		ins = []int{2, 1}
		u.steps = []Kernel{StridedBinary{Op: core.OpMul, Shape: sh, XS: cst, YS: fst, YO: fbase}, scatter(px, xs)}
		u.outs = [][]float32{make([]float32, n), make([]float32, core.Shape(xs).Size())}
		u.ins = [][]int{{2, 1}, {-1}}
	case "df":
		wk, err = newWindowDot(dom, fa, da, xa, mode)
		ins = []int{2, 0}
		u.steps = []Kernel{gather(px, xs), StridedBinary{Op: core.OpMul, Shape: sh, XS: cst, YS: core.Shape(sh).Strides()}, scatter(pf, fs)}
		u.outs = [][]float32{make([]float32, n), make([]float32, n), make([]float32, core.Shape(fs).Size())}
		u.ins = [][]int{{0}, {2, -1}, {-1}}
	}
	if err != nil {
		tb.Fatal(err)
	}
	return wk, u, ins
}

// dwArgs are random x, f and d of case c (float32).
func dwArgs(c dwCase) map[int][]float32 {
	r := rand.New(rand.NewSource(1))
	oh, ow := c.out()
	rnd := func(n int) []float32 {
		v := make([]float32, n)
		for i := range v {
			v[i] = float32(r.NormFloat64())
		}
		return v
	}
	return map[int][]float32{
		0: rnd(c.b * c.groups * c.cg * c.h * c.w),
		1: rnd(c.groups * c.og * c.cg * c.kh * c.kw),
		2: rnd(c.b * c.groups * c.og * oh * ow),
	}
}

func BenchmarkWindowDot(b *testing.B) {
	for _, c := range dwBenches() {
		args := dwArgs(c)
		for _, which := range []string{"forward", "dx", "df"} {
			for _, m := range []struct {
				name string
				mode int
			}{{"fused", winAuto}, {"rows", winRows}, {"channels", winChannels}} {
				b.Run(c.name+"/"+which+"/"+m.name, func(b *testing.B) {
					wk, u, ins := dwKernels(b, c, which, m.mode)
					out := u.outs[len(u.outs)-1]
					in := []any{args[ins[0]], args[ins[1]]}
					for range b.N {
						if err := wk.Run(out, in); err != nil {
							b.Fatal(err)
						}
					}
				})
			}
			b.Run(c.name+"/"+which+"/unfused", func(b *testing.B) {
				_, u, _ := dwKernels(b, c, which, winAuto)
				for range b.N {
					if err := u.run(args); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// The unfused sequence the benchmark compares with computes what the fused kernel does
// (bit for bit: the same products added in the same order).
func TestWindowDotBenchSequence(t *testing.T) {
	for _, c := range dwBenches()[:3] {
		args := dwArgs(c)
		for _, which := range []string{"forward", "dx", "df"} {
			wk, u, ins := dwKernels(t, c, which, winAuto)
			if err := u.run(args); err != nil {
				t.Fatal(err)
			}
			want := u.outs[len(u.outs)-1]
			got := make([]float32, len(want))
			if err := wk.Run(got, []any{args[ins[0]], args[ins[1]]}); err != nil {
				t.Fatal(err)
			}
			if i, ok := sameBits(got, want); !ok {
				t.Errorf("%s %s: fused and unfused differ at %d", c.name, which, i)
			}
		}
	}
}
