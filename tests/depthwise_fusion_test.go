package tests

import (
	"fmt"
	"math/rand"
	"testing"

	"github.com/bulkad/bulkad/ad"
	"github.com/bulkad/bulkad/core"
	"github.com/bulkad/bulkad/core/tensors"
	kern "github.com/bulkad/bulkad/kernel"
	"github.com/bulkad/bulkad/lower"
	"github.com/bulkad/bulkad/raise"
	"gorgonia.org/tensor"
)

// TestDepthwiseWindowFusion: the VJP of lower.GroupedConv2d's element-wise form (depthwise
// and channel multipliers, strides, paddings, dilations, 3×3 and 5×5, both float dtypes), as
// package ad builds it, raised per operation and coarsely: its forward value and both
// gradients equal core.Eval's bit for bit, and the three sums of products over the windows
// run as three kernel.WindowDot ops (per operation), no gather of the windows and no
// product of the windows' size left (coarsely). Guards the form raise's window fusion
// matches against changes of lower and ad.
func TestDepthwiseWindowFusion(t *testing.T) {
	type conv struct {
		name          string
		b, c, o, h, w int
		win           lower.Window
	}
	same := func(k, s int) lower.Window {
		return lower.Window{KH: k, KW: k, PadTop: k / 2, PadBottom: k / 2, PadLeft: k / 2, PadRight: k / 2, StrideH: s, StrideW: s}
	}
	cases := []conv{
		{name: "3x3 stride 1", b: 2, c: 4, o: 4, h: 6, w: 6, win: same(3, 1)},
		{name: "3x3 stride 2", b: 2, c: 3, o: 3, h: 7, w: 8, win: same(3, 2)},
		{name: "5x5 stride 1", b: 1, c: 3, o: 3, h: 7, w: 7, win: same(5, 1)},
		{name: "5x5 stride 2", b: 2, c: 2, o: 2, h: 9, w: 9, win: same(5, 2)},
		{name: "multiplier 2, dilation 2, uneven pads", b: 2, c: 3, o: 6, h: 7, w: 6,
			win: lower.Window{KH: 3, KW: 3, PadTop: 2, PadBottom: 1, PadLeft: 1, PadRight: 2, StrideH: 1, StrideW: 2, DilationH: 2, DilationW: 2}},
	}
	r := rand.New(rand.NewSource(4))
	for _, c := range cases {
		for _, dt := range []core.Dtype{core.Float64, core.Float32} {
			what := fmt.Sprintf("%s %v", c.name, dt)
			x, _ := core.NewVar("x", core.Type{Shape: core.Shape{c.b, c.c, c.h, c.w}, Dtype: dt})
			f, _ := core.NewVar("f", core.Type{Shape: core.Shape{c.o, 1, c.win.KH, c.win.KW}, Dtype: dt})
			y, err := lower.GroupedConv2d(x, f, c.win, c.c)
			if err != nil {
				t.Fatal(err)
			}
			p, err := core.NewProgram([]*core.Var{x, f}, y)
			if err != nil {
				t.Fatal(err)
			}
			art, err := ad.VJP(p, "x", "f")
			if err != nil {
				t.Fatal(err)
			}
			gp := art.Program()
			args := map[string]*tensor.Dense{}
			for _, v := range gp.Params {
				args[v.Name] = randFloats(r, dt, v.Type().Shape)
			}
			want, err := tensors.EvalTuple(gp, args)
			if err != nil {
				t.Fatal(err)
			}
			oh, ow := c.win.OutHW(c.h, c.w)
			windows := c.win.KH * c.win.KW * c.b * c.o * oh * ow
			for _, coarse := range []bool{false, true} {
				g := raisedSameBits(t, fmt.Sprintf("%s coarse=%v", what, coarse), gp, args, want, raise.Options{Coarse: coarse})
				fused, big := 0, 0
				for _, n := range g.AllNodes() {
					switch op := n.Op().(type) {
					case *raise.Op:
						if op.Kind() == "windowDot" {
							fused++
						}
						if n.Shape().TotalSize() == windows {
							big++
						}
					case interface{ Plan() *kern.Plan }:
						kp := op.Plan()
						for i := 0; i < kp.Steps(); i++ {
							if kp.StepTerm(i).Type().Shape.Size() == windows {
								big++
							}
							switch kp.StepTerm(i).(type) {
							case *core.SumOuter, *core.Scatter:
								fused++ // with no value of the windows' size: fused
							}
						}
					}
				}
				if fused != 3 || big != 0 {
					t.Errorf("%s coarse=%v: %d fused sums of products, %d values of the windows' size (%d elements); want 3 and 0", what, coarse, fused, big, windows)
				}
			}
		}
	}
}

// randFloats is a tensor of normal random values of dtype dt.
func randFloats(r *rand.Rand, dt core.Dtype, sh core.Shape) *tensor.Dense {
	if dt == core.Float32 {
		v := make([]float32, sh.Size())
		for i := range v {
			v[i] = float32(r.NormFloat64())
		}
		return tensor.New(tensor.WithShape(sh...), tensor.WithBacking(v))
	}
	v := make([]float64, sh.Size())
	for i := range v {
		v[i] = r.NormFloat64()
	}
	return tensor.New(tensor.WithShape(sh...), tensor.WithBacking(v))
}
