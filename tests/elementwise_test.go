package tests

import (
	"fmt"
	"math/rand"
	"testing"

	"github.com/bulkad/bulkad/core"
	"github.com/bulkad/bulkad/core/tensors"
	kern "github.com/bulkad/bulkad/kernel"
	"github.com/bulkad/bulkad/raise"
)

// TestFusedElementwise: trees of element-wise operations raised coarsely equal core.Eval bit
// for bit, and run as one kern.Fused exactly when the tree has two operations or more whose
// inner ones nothing else reads and whose leaves are read along contiguous or broadcast rows:
// a batch norm's normalisation over [b, c, h·w] with per-channel broadcasts, a ReLU mask
// times a scaled cotangent, a unary root, a let read once (absorbed; planned on its own when
// the plan packs its lets for a later program, Options.Tape, or when it is also a result
// raised, but not when the result is one Options.Components leaves out) or twice (planned on its own,
// its readers fused around it), a product read twice by one sum (computed once: FuseDup) or
// also elsewhere (a let: planned on its own, fused, then the sum and the negation), and a
// transposed leaf (not fused), a factor broadcast by a chain of gathers (read through all
// of them), and a mask times a per-channel value spread over the image through a transpose and
// a reshape (one mask product, fused: read once a run).
func TestFusedElementwise(t *testing.T) {
	type build = func(b *core.Builder, x, y, c *core.Var) core.Term
	bc := func(b *core.Builder, c core.Term, sh core.Shape) core.Term { // [c] broadcast over [b, c, hw]
		return b.Replicate(sh[0], b.Transpose([]int{1, 0}, b.Replicate(sh[2], c)))
	}
	sh := core.Shape{4, 32, 1024} // fuseMin elements: smaller trees are not fused
	cases := []struct {
		name   string
		body   build
		fused  int // Fused steps
		others int // other element-wise steps (Binary, StridedBinary, MaskMul, Unary)
		tape   bool
		comps  []int // the results raised (Options.Components; nil: all)
	}{
		{"batch norm", func(b *core.Builder, x, y, c *core.Var) core.Term {
			return b.Add(b.Mul(b.Mul(b.Sub(x, bc(b, c, sh)), bc(b, b.Unary(core.OpRecip, c), sh)), y), bc(b, b.Unary(core.OpNeg, c), sh))
		}, 1, 2, false, nil},
		{"relu mask times scaled cotangent", func(b *core.Builder, x, y, c *core.Var) core.Term {
			zero := b.Replicate(sh[0], b.Replicate(sh[1], b.Replicate(sh[2], core.ScalarF(x.Type().Dtype, 0))))
			return b.Mul(b.Cast(x.Type().Dtype, b.Binary(core.OpGe, x, zero)), b.Mul(y, bc(b, c, sh)))
		}, 1, 0, false, nil},
		{"unary root", func(b *core.Builder, x, y, c *core.Var) core.Term {
			return b.Unary(core.OpNeg, b.Div(b.Unary(core.OpExp, x), y))
		}, 1, 0, false, nil},
		{"let read once", func(b *core.Builder, x, y, c *core.Var) core.Term {
			u := b.Var("u", x.Type())
			return b.Let(u, b.Mul(x, y), b.Sub(b.Unary(core.OpTanh, u), x))
		}, 1, 0, false, nil},
		{"let read once, lets packed for a later program", func(b *core.Builder, x, y, c *core.Var) core.Term {
			u := b.Var("u", x.Type())
			return b.Let(u, b.Mul(x, y), b.Sub(b.Unary(core.OpTanh, u), x))
		}, 1, 1, true, nil},
		{"let read once and a result", func(b *core.Builder, x, y, c *core.Var) core.Term {
			u := b.Var("u", x.Type())
			return b.Let(u, b.Mul(x, y), b.Tuple(b.Sub(b.Unary(core.OpTanh, u), x), u))
		}, 1, 1, false, nil},
		// a result not raised (a node value a lean machine drops) is no reader: the let is
		// absorbed
		{"let read once and an unselected result", func(b *core.Builder, x, y, c *core.Var) core.Term {
			u := b.Var("u", x.Type())
			return b.Let(u, b.Mul(x, y), b.Tuple(b.Sub(b.Unary(core.OpTanh, u), x), u))
		}, 1, 0, false, []int{0}},
		// Gorgonia's Repeat along one axis after another (γ [1, C, 1, 1] over b, then h, then
		// w) is three gathers: read through all three, γ is a leaf broadcast along rows of
		// h·w, not a materialised [b, C, h, 1] broadcast along rows of w
		{"scale by chained repeats", func(b *core.Builder, x, y, c *core.Var) core.Term {
			sh4 := core.Shape{sh[0], sh[1], 32, sh[2] / 32}
			i, j, k := b.Var("i", core.Scalar(core.Int64)), b.Var("j", core.Scalar(core.Int64)), b.Var("k", core.Scalar(core.Int64))
			g := b.Gather(core.Shape{sh[0], sh[1], 1, 1}, b.Reshape(core.Shape{1, sh[1], 1, 1}, c), b.IndexFn([]*core.Var{i}, core.ScalarI(0)))
			g = b.Gather(core.Shape{sh[0], sh[1], sh4[2], 1}, g, b.IndexFn([]*core.Var{i, j, k}, i, j, core.ScalarI(0)))
			g = b.Gather(sh4, g, b.IndexFn([]*core.Var{i, j, k, b.Var("l", core.Scalar(core.Int64))}, i, j, k, core.ScalarI(0)))
			return b.Add(b.Mul(g, b.Reshape(sh4, x)), b.Reshape(sh4, y))
		}, 1, 0, false, nil},
		// a ReLU's cotangent from a global average pool: [b, c] spread over h·w, transposed
		// and reshaped to the image's shape, read once a run, not transposed into an array
		{"mask times a pooled cotangent", func(b *core.Builder, x, y, c *core.Var) core.Term {
			sh4 := core.Shape{sh[0], sh[1], 32, sh[2] / 32}
			pooled := b.Reshape(core.Shape{sh[0], sh[1]}, b.Replicate(sh[0], c)) // [b, C]
			spread := b.Reshape(sh4, b.Transpose([]int{1, 2, 0}, b.Replicate(sh[2], pooled)))
			zero := b.Replicate(sh[0], b.Replicate(sh[1], b.Replicate(32, b.Replicate(sh[2]/32, core.ScalarF(x.Type().Dtype, 0)))))
			return b.Mul(spread, b.Cast(x.Type().Dtype, b.Binary(core.OpGe, b.Reshape(sh4, x), zero)))
		}, 1, 0, false, nil},
		{"let read twice", func(b *core.Builder, x, y, c *core.Var) core.Term {
			u := b.Var("u", x.Type())
			return b.Let(u, b.Mul(x, y), b.Tuple(b.Sub(b.Mul(u, u), x), b.Add(b.Unary(core.OpNeg, u), y)))
		}, 2, 1, false, nil},
		{"a product read twice by one sum", func(b *core.Builder, x, y, c *core.Var) core.Term {
			m := b.Mul(b.Sub(x, y), bc(b, c, sh))
			return b.Add(m, m)
		}, 1, 0, false, nil},
		{"a product read twice, once elsewhere", func(b *core.Builder, x, y, c *core.Var) core.Term {
			m := b.Mul(b.Sub(x, y), bc(b, c, sh))
			return b.Tuple(b.Add(m, m), b.Unary(core.OpNeg, m))
		}, 1, 2, false, nil},
		{"one operation", func(b *core.Builder, x, y, c *core.Var) core.Term {
			return b.Mul(x, bc(b, c, sh))
		}, 0, 1, false, nil},
		{"broadcast along short rows", func(b *core.Builder, x, y, c *core.Var) core.Term {
			short := core.Shape{sh[0] * sh[1] * sh[2] / 16, 16}
			xs, cs := b.Reshape(short, x), b.Transpose([]int{1, 0}, b.Replicate(16, b.Reshape(core.Shape{short[0]}, b.Replicate(short[0]/sh[1], c))))
			return b.Reshape(sh, b.Mul(b.Sub(xs, cs), xs))
		}, 0, 2, false, nil},
		{"transposed leaf", func(b *core.Builder, x, y, c *core.Var) core.Term {
			return b.Mul(b.Add(x, b.Transpose([]int{0, 2, 1}, y)), x)
		}, 0, 2, false, nil},
	}
	r := rand.New(rand.NewSource(13))
	elementwise := func(k kern.Kernel) bool {
		switch k.(type) {
		case kern.Binary, kern.StridedBinary, kern.MaskMul, kern.Unary:
			return true
		}
		return false
	}
	for _, c := range cases {
		for _, dt := range []core.Dtype{core.Float64, core.Float32} {
			what := fmt.Sprintf("%s %v", c.name, dt)
			ysh := sh
			if c.name == "transposed leaf" {
				ysh = core.Shape{sh[0], sh[2], sh[1]}
			}
			p := xycProgram(t, dt, sh, ysh, core.Shape{sh[1]}, c.body)
			args := randArgs(r, p)
			want, err := tensors.EvalTuple(p, args)
			if err != nil {
				t.Fatal(err)
			}
			g := raisedSameBits(t, what, p, args, want, raise.Options{Coarse: true, Tape: c.tape, Components: c.comps})
			fused := planSteps(g, func(k kern.Kernel) bool { _, ok := k.(*kern.Fused); return ok })
			others := planSteps(g, elementwise)
			if fused != c.fused || others != c.others {
				t.Errorf("%s: %d Fused and %d other element-wise steps, want %d and %d", what, fused, others, c.fused, c.others)
			}
		}
	}
}

// TestFusedSums: sums of element-wise trees over their leading dimensions — a batch norm's
// variance Σ (x − mean)² as lower.Sum writes it (sumOuter of a reshaped transpose) and its
// gradient's Σ c·x̂ as a scatter into [1, C] — raised coarsely equal core.Eval bit for bit and
// run as one summing kern.Fused exactly where the kept axes are last and the tree is read
// nowhere else; channels-first sums (kept axes in the middle) keep SumAround. Scatters that
// sum one axis into a dimension of one (Gorgonia's Repeat gradient) run as the sum along that
// axis (kern.Axis), or, along the last axis of a tree, as a fused row sum.
func TestFusedSums(t *testing.T) {
	type build = func(b *core.Builder, x, y, c *core.Var) core.Term
	sh := core.Shape{8, 256, 64} // fuseMin elements
	bcl := func(b *core.Builder, c core.Term) core.Term { return b.Replicate(sh[0], b.Replicate(sh[1], c)) }
	lastSum := func(b *core.Builder, z core.Term) core.Term { // Gorgonia's Repeat gradient along the last axis
		i, j, k := b.Var("i", core.Scalar(core.Int64)), b.Var("j", core.Scalar(core.Int64)), b.Var("k", core.Scalar(core.Int64))
		return b.Scatter(core.Shape{sh[0], sh[1], 1}, z, b.IndexFn([]*core.Var{i, j, k}, i, j, core.ScalarI(0)))
	}
	cases := []struct {
		name  string
		body  build
		fused int // summing Fused steps (column or row sums)
		axis  int // Axis steps
	}{
		{"variance, channels last", func(b *core.Builder, x, y, c *core.Var) core.Term {
			d := b.Sub(x, bcl(b, c))
			return b.SumOuter(b.Reshape(core.Shape{sh[0] * sh[1], sh[2]}, b.Transpose([]int{0, 1, 2}, b.Mul(d, d))))
		}, 1, 0},
		{"scatter of a product", func(b *core.Builder, x, y, c *core.Var) core.Term {
			flat := core.Shape{sh[0] * sh[1], sh[2]}
			i := b.Var("i", core.Scalar(core.Int64))
			return b.Scatter(core.Shape{1, sh[2]}, b.Mul(b.Reshape(flat, x), b.Reshape(flat, y)), b.IndexFn([]*core.Var{i}, core.ScalarI(0)))
		}, 1, 0},
		{"product read elsewhere", func(b *core.Builder, x, y, c *core.Var) core.Term {
			m := b.Mul(x, y)
			return b.Tuple(b.SumOuter(b.Reshape(core.Shape{sh[0] * sh[1], sh[2]}, b.Transpose([]int{0, 1, 2}, m))), b.Unary(core.OpNeg, m))
		}, 0, 0},
		{"channels first", func(b *core.Builder, x, y, c *core.Var) core.Term {
			return b.SumOuter(b.Reshape(core.Shape{sh[0] * sh[2], sh[1]}, b.Transpose([]int{0, 2, 1}, b.Mul(x, y))))
		}, 0, 0},
		{"last axis of a product", func(b *core.Builder, x, y, c *core.Var) core.Term {
			return lastSum(b, b.Mul(x, y))
		}, 1, 0},
		{"last axis of an operand", func(b *core.Builder, x, y, c *core.Var) core.Term {
			return lastSum(b, x)
		}, 0, 1},
		{"middle axis of an operand", func(b *core.Builder, x, y, c *core.Var) core.Term {
			i, j, k := b.Var("i", core.Scalar(core.Int64)), b.Var("j", core.Scalar(core.Int64)), b.Var("k", core.Scalar(core.Int64))
			return b.Scatter(core.Shape{sh[0], 1, sh[2]}, x, b.IndexFn([]*core.Var{i, j, k}, i, core.ScalarI(0), k))
		}, 0, 1},
	}
	r := rand.New(rand.NewSource(17))
	for _, c := range cases {
		for _, dt := range []core.Dtype{core.Float64, core.Float32} {
			what := fmt.Sprintf("%s %v", c.name, dt)
			p := xycProgram(t, dt, sh, sh, core.Shape{sh[2]}, c.body)
			g := coarseSameBits(t, r, what, p)
			if n := planSteps(g, func(k kern.Kernel) bool { f, ok := k.(*kern.Fused); return ok && (f.Sums() || f.RowSums()) }); n != c.fused {
				t.Errorf("%s: %d summing Fused steps, want %d", what, n, c.fused)
			}
			if n := planSteps(g, func(k kern.Kernel) bool { _, ok := k.(kern.Axis); return ok }); n != c.axis {
				t.Errorf("%s: %d Axis steps, want %d", what, n, c.axis)
			}
		}
	}
}

// xycProgram is the program x, y, c ↦ body(x, y, c) over arrays of the shapes xs, ys, cs.
func xycProgram(t *testing.T, dt core.Dtype, xs, ys, cs core.Shape, body func(b *core.Builder, x, y, c *core.Var) core.Term) *core.Program {
	t.Helper()
	var b core.Builder
	x := b.Var("x", core.Type{Shape: xs, Dtype: dt})
	y := b.Var("y", core.Type{Shape: ys, Dtype: dt})
	c := b.Var("c", core.Type{Shape: cs, Dtype: dt})
	e := body(&b, x, y, c)
	if b.Err() != nil {
		t.Fatal(b.Err())
	}
	p, err := core.NewProgram([]*core.Var{x, y, c}, e)
	if err != nil {
		t.Fatal(err)
	}
	return p
}
