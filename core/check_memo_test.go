package core_test

import (
	"testing"

	"github.com/bulkad/bulkad/core"
)

// TestCheckAfterNewProgram: Check skips the walk of a program NewProgram checked only while
// its body and parameters are the ones it was given; any change is checked again.
func TestCheckAfterNewProgram(t *testing.T) {
	src, err := core.ParseProgram(`fn (x : [3] f64, y : [3] f64) => let a = x * y in sumOuter a`)
	if err != nil {
		t.Fatal(err)
	}
	p, err := core.NewProgram(src.Params, src.Body)
	if err != nil {
		t.Fatal(err)
	}
	if err := core.Check(p); err != nil {
		t.Fatal(err)
	}
	// A parameter dropped: y is free.
	q := *p
	q.Params = q.Params[:1]
	if err := core.Check(&q); err == nil {
		t.Error("dropped parameter not caught")
	}
	// A parameter replaced in place by one of another type.
	r := *p
	r.Params = append([]*core.Var{}, p.Params...)
	y4, err := core.NewVar("y", core.Type{Shape: core.Shape{4}, Dtype: core.Float64})
	if err != nil {
		t.Fatal(err)
	}
	p.Params[1] = y4
	if err := core.Check(p); err == nil {
		t.Error("parameter replaced in place not caught")
	}
	if err := core.Check(&r); err != nil {
		t.Errorf("copy with the original parameters: %v", err)
	}
	// Another body: a struct literal without a type.
	s := r
	s.Body = &core.Unary{Op: core.OpNeg, X: r.Params[0]}
	if err := core.Check(&s); err == nil {
		t.Error("new untyped body not caught")
	}
}
