package kernel

import (
	"testing"

	"github.com/bulkad/bulkad/core"

	"gorgonia.org/tensor"
)

// Single-node programs run through RunInto allocate nothing per call once compiled (the raise
// package wraps such programs as Gorgonia ops).
func TestRunIntoNoAllocs(t *testing.T) {
	for _, d := range floatDtypes {
		type tc struct {
			name string
			mk   func(b *core.Builder, x, am, c core.Term) core.Term
		}
		iv := func(b *core.Builder, n string) *core.Var { return b.Var(n, core.Scalar(core.Int64)) }
		cases := []tc{
			{"gather affine", func(b *core.Builder, x, am, c core.Term) core.Term {
				i, j := iv(b, "i"), iv(b, "j")
				return b.Gather(core.Shape{4, 3}, x, b.IndexFn([]*core.Var{i, j}, j, i))
			}},
			{"gather clipped", func(b *core.Builder, x, am, c core.Term) core.Term {
				i, j := iv(b, "i"), iv(b, "j")
				return b.Gather(core.Shape{3, 4}, x, b.IndexFn([]*core.Var{i, j}, i, b.Sub(j, core.ScalarI(1))))
			}},
			{"scatter clipped", func(b *core.Builder, x, am, c core.Term) core.Term {
				i, j := iv(b, "i"), iv(b, "j")
				return b.Scatter(core.Shape{3, 4}, x, b.IndexFn([]*core.Var{i, j}, b.Sub(i, core.ScalarI(1)), b.Add(j, core.ScalarI(1))))
			}},
			{"gather by index", func(b *core.Builder, x, am, c core.Term) core.Term {
				j := iv(b, "j")
				return b.Gather(core.Shape{4}, x, b.IndexFn([]*core.Var{j}, b.Index(am, j), j))
			}},
			{"gather quot (closure)", func(b *core.Builder, x, am, c core.Term) core.Term {
				j := iv(b, "j")
				return b.Gather(core.Shape{6, 4}, x, b.IndexFn([]*core.Var{j}, b.Binary(core.OpQuot, j, core.ScalarI(2))))
			}},
			{"gather with let (fallback)", func(b *core.Builder, x, am, c core.Term) core.Term {
				j, u := iv(b, "j"), iv(b, "u")
				return b.Gather(core.Shape{3, 4}, x, b.IndexFn([]*core.Var{j}, b.Let(u, b.Sub(core.ScalarI(2), j), u)))
			}},
			{"scatter", func(b *core.Builder, x, am, c core.Term) core.Term {
				j := iv(b, "j")
				return b.Scatter(core.Shape{3, 3}, b.Transpose([]int{1, 0}, x), b.IndexFn([]*core.Var{j}, b.Index(am, j)))
			}},
			{"replicate", func(b *core.Builder, x, am, c core.Term) core.Term { return b.Replicate(2, x) }},
			{"index", func(b *core.Builder, x, am, c core.Term) core.Term { return b.Index(x, b.Index(am, core.ScalarI(1))) }},
			{"sumOuter", func(b *core.Builder, x, am, c core.Term) core.Term { return b.SumOuter(x) }},
			{"argmaxOuter", func(b *core.Builder, x, am, c core.Term) core.Term { return b.ArgmaxOuter(x) }},
			{"fromVector", func(b *core.Builder, x, am, c core.Term) core.Term { return b.FromVector(x, x) }},
			{"cast", func(b *core.Builder, x, am, c core.Term) core.Term { return b.Cast(core.Int64, x) }},
			{"cond", func(b *core.Builder, x, am, c core.Term) core.Term { return b.Cond(c, x, b.Unary(core.OpNeg, x)) }},
			{"iota", func(b *core.Builder, x, am, c core.Term) core.Term { return b.Iota(5) }},
			{"elementwise", func(b *core.Builder, x, am, c core.Term) core.Term { return b.Mul(b.Unary(core.OpExp, x), x) }},
			{"transpose", func(b *core.Builder, x, am, c core.Term) core.Term { return b.Transpose([]int{1, 0}, x) }},
			{"matmul", func(b *core.Builder, x, am, c core.Term) core.Term { return b.MatMul(b.Transpose([]int{1, 0}, x), x) }},
		}
		for _, c := range cases {
			var b core.Builder
			x := b.Var("x", ty(d, 3, 4))
			am := b.Var("am", ty(core.Int64, 4))
			cv := b.Var("c", core.Scalar(core.Bool))
			body := c.mk(&b, x, am, cv)
			p := mustProg(t, &b, []*core.Var{x, am, cv}, body)
			e, err := Compile(p)
			if err != nil {
				t.Fatal(err)
			}
			rt := body.Type()
			var out *tensor.Dense
			switch rt.Dtype {
			case core.Float64:
				out = tensor.New(tensor.WithShape(rt.Shape...), tensor.Of(tensor.Float64))
			case core.Float32:
				out = tensor.New(tensor.WithShape(rt.Shape...), tensor.Of(tensor.Float32))
			case core.Int64:
				out = tensor.New(tensor.WithShape(rt.Shape...), tensor.Of(tensor.Int64))
			}
			if len(rt.Shape) == 0 {
				t.Fatalf("%s: scalar result not expected here", c.name)
			}
			args := []*tensor.Dense{fd(d, []int{3, 4}, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12), id([]int{4}, 2, 0, 1, 5), tensor.New(tensor.FromScalar(true))}
			outs := []*tensor.Dense{out}
			if err := e.RunInto(outs, args...); err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
			want, err := Eval(p, map[string]*tensor.Dense{"x": args[0], "am": args[1], "c": args[2]})
			if err != nil {
				t.Fatal(err)
			}
			if !want.Eq(out) {
				t.Fatalf("%s: RunInto gave %v, Eval gave %v", c.name, out, want)
			}
			allocs := testing.AllocsPerRun(10, func() {
				if err := e.RunInto(outs, args...); err != nil {
					t.Fatal(err)
				}
			})
			if allocs != 0 {
				t.Fatalf("%s (%v): RunInto allocates %v times per call, want 0", c.name, d, allocs)
			}
		}
	}
}
