package core_test

import (
	"fmt"

	"github.com/bulkad/bulkad/core"
)

// ExampleParseProgram parses the §3.3 example of paper 000 and a program whose literal 2.0
// is broadcast to the shape of x.
func ExampleParseProgram() {
	p, err := core.ParseProgram(`fn (t : [9] f64) => scatter [6] t (\[i] -> [quot i 2])`)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(p.Body.Type())

	q, err := core.ParseProgram(`fn (x : [5] f32) => sumOuter (x * 2.0)`)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(q)

	_, err = core.ParseProgram("fn (x : [3,4] f64, y : [4,3] f64) =>\n  x + y")
	fmt.Println(err)
	_, err = core.ParseProgram(`fn (x : [3] f64) => let y = x x`)
	fmt.Println(err)
	// Output:
	// [6] f64
	// fn (x : [5] f32) => sumOuter (x * replicate 5 (lit [] f32 [2.0]))
	// core: parse: line 2:5: core: add: operand shapes [3 4] and [4 3] differ
	// core: parse: line 1:31: expected "in", found "x"
}

// ExampleParse parses a term with typed free variables.
func ExampleParse() {
	t, err := core.Parse(`build [2,3] (\[i,j] -> m ! [j, i] * 0.5)`, map[string]core.Type{
		"m": {Shape: core.Shape{3, 2}, Dtype: core.Float64},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(t.Type())
	fmt.Println(t)
	// Output:
	// [2,3] f64
	// build1 2 (\i -> build1 3 (\j -> index m [j, i] * 0.5))
}

// ExampleProgram_String prints a program built with the Builder: shared subterms print
// once, parentheses appear only where precedence needs them.
func ExampleProgram_String() {
	var b core.Builder
	x := b.Var("x", core.Type{Shape: core.Shape{3}, Dtype: core.Float64})
	y := b.Var("y", core.Type{Shape: core.Shape{3}, Dtype: core.Float64})
	s := b.Share(1, b.Add(x, y))
	body := b.Mul(s, b.Sub(s, b.Replicate(3, core.ScalarF(core.Float64, -1))))
	p, err := core.NewProgram([]*core.Var{x, y}, b.Tuple(body, b.SumOuter(x)))
	if err != nil || b.Err() != nil {
		fmt.Println(err, b.Err())
		return
	}
	fmt.Println(p)
	// Output:
	// fn (x : [3] f64, y : [3] f64) => (share 1 (x + y) * (share 1 - replicate 3 (-1.0)), sumOuter x)
}

// ExampleBuilder_Select is ReLU written with Select and Full: x where x > 0, else 0. The
// selection is a gather from [else, then], so a NaN in the branch not taken stays out.
func ExampleBuilder_Select() {
	var b core.Builder
	t := core.Type{Shape: core.Shape{4}, Dtype: core.Float64}
	x := b.Var("x", t)
	mask := b.Var("mask", core.Type{Shape: t.Shape, Dtype: core.Bool})
	relu := b.Let(mask, b.Binary(core.OpGt, x, b.Full(t, 0)), b.Select(core.NewNamer(x, mask), mask, x, b.Full(t, 0)))
	p, err := core.NewProgram([]*core.Var{x}, relu)
	if err != nil {
		fmt.Println(err)
		return
	}
	arg, _ := core.NewLitF(t, []float64{-1, 2, -3, 4})
	v, err := core.Eval(p, map[string]*core.Lit{"x": arg})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(v.F)
	// Output:
	// [0 2 0 4]
}
