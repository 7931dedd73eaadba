package core

import (
	"testing"

	"gorgonia.org/tensor"
)

// Single-node programs run through RunInto allocate nothing per call once compiled (the raise
// package wraps such programs as Gorgonia ops).
func TestRunIntoNoAllocs(t *testing.T) {
	for _, d := range floatDtypes {
		type tc struct {
			name string
			mk   func(b *Builder, x, am, c Term) Term
		}
		iv := func(b *Builder, n string) *Var { return b.Var(n, Scalar(Int64)) }
		cases := []tc{
			{"gather affine", func(b *Builder, x, am, c Term) Term {
				i, j := iv(b, "i"), iv(b, "j")
				return b.Gather(Shape{4, 3}, x, b.IndexFn([]*Var{i, j}, j, i))
			}},
			{"gather by index", func(b *Builder, x, am, c Term) Term {
				j := iv(b, "j")
				return b.Gather(Shape{4}, x, b.IndexFn([]*Var{j}, b.Index(am, j), j))
			}},
			{"gather quot (closure)", func(b *Builder, x, am, c Term) Term {
				j := iv(b, "j")
				return b.Gather(Shape{6, 4}, x, b.IndexFn([]*Var{j}, b.Binary(OpQuot, j, ScalarI(2))))
			}},
			{"gather with let (fallback)", func(b *Builder, x, am, c Term) Term {
				j, u := iv(b, "j"), iv(b, "u")
				return b.Gather(Shape{3, 4}, x, b.IndexFn([]*Var{j}, b.Let(u, b.Sub(ScalarI(2), j), u)))
			}},
			{"scatter", func(b *Builder, x, am, c Term) Term {
				j := iv(b, "j")
				return b.Scatter(Shape{3, 3}, b.Transpose([]int{1, 0}, x), b.IndexFn([]*Var{j}, b.Index(am, j)))
			}},
			{"replicate", func(b *Builder, x, am, c Term) Term { return b.Replicate(2, x) }},
			{"index", func(b *Builder, x, am, c Term) Term { return b.Index(x, b.Index(am, ScalarI(1))) }},
			{"sumOuter", func(b *Builder, x, am, c Term) Term { return b.SumOuter(x) }},
			{"argmaxOuter", func(b *Builder, x, am, c Term) Term { return b.ArgmaxOuter(x) }},
			{"fromVector", func(b *Builder, x, am, c Term) Term { return b.FromVector(x, x) }},
			{"cast", func(b *Builder, x, am, c Term) Term { return b.Cast(Int64, x) }},
			{"cond", func(b *Builder, x, am, c Term) Term { return b.Cond(c, x, b.Unary(OpNeg, x)) }},
			{"iota", func(b *Builder, x, am, c Term) Term { return b.Iota(5) }},
			{"elementwise", func(b *Builder, x, am, c Term) Term { return b.Mul(b.Unary(OpExp, x), x) }},
			{"transpose", func(b *Builder, x, am, c Term) Term { return b.Transpose([]int{1, 0}, x) }},
			{"matmul", func(b *Builder, x, am, c Term) Term { return b.MatMul(b.Transpose([]int{1, 0}, x), x) }},
		}
		for _, c := range cases {
			var b Builder
			x := b.Var("x", ty(d, 3, 4))
			am := b.Var("am", ty(Int64, 4))
			cv := b.Var("c", Scalar(Bool))
			body := c.mk(&b, x, am, cv)
			p := mustProg(t, &b, []*Var{x, am, cv}, body)
			e, err := Compile(p)
			if err != nil {
				t.Fatal(err)
			}
			rt := body.Type()
			var out *tensor.Dense
			switch rt.Dtype {
			case Float64:
				out = tensor.New(tensor.WithShape(rt.Shape...), tensor.Of(tensor.Float64))
			case Float32:
				out = tensor.New(tensor.WithShape(rt.Shape...), tensor.Of(tensor.Float32))
			case Int64:
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
