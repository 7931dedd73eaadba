package tensors

import (
	"fmt"
	"testing"

	"github.com/bulkad/bulkad/core"
	"gorgonia.org/tensor"
)

func mustLit(l *core.Lit, err error) *core.Lit {
	if err != nil {
		panic(err)
	}
	return l
}

func TestEvalNonContiguousArgument(t *testing.T) {
	var b core.Builder
	x := b.Var("x", core.Type{Shape: core.Shape{3, 2}, Dtype: core.Float64})
	p, err := core.NewProgram([]*core.Var{x}, b.Reshape(core.Shape{6}, x))
	if err != nil {
		t.Fatal(err)
	}
	d := tensor.New(tensor.WithShape(2, 3), tensor.WithBacking([]float64{1, 2, 3, 4, 5, 6}))
	if err := d.T(); err != nil {
		t.Fatal(err)
	}
	r, err := Eval(p, map[string]*tensor.Dense{"x": d})
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(r.Float64s()); got != "[1 4 2 5 3 6]" {
		t.Fatalf("transposed view argument: got %s, want [1 4 2 5 3 6]", got)
	}
}

func TestConversions(t *testing.T) {
	l, err := core.NewLitF(core.Type{Shape: core.Shape{2, 2}, Dtype: core.Float32}, []float64{1, 2.5, -3, 4})
	if err != nil {
		t.Fatal(err)
	}
	d := FromLit(l)
	if d.Dtype() != tensor.Float32 || fmt.Sprint(d.Shape()) != "(2, 2)" || fmt.Sprint(d.Float32s()) != "[1 2.5 -3 4]" {
		t.Fatalf("FromLit: %v %v %v", d.Dtype(), d.Shape(), d.Float32s())
	}
	typ, err := TypeOf(d)
	if err != nil || !typ.Equal(core.Type{Shape: core.Shape{2, 2}, Dtype: core.Float32}) {
		t.Fatalf("TypeOf: %v %v", typ, err)
	}
	back, err := ToLit(d)
	if err != nil || !core.Equal(back, l) {
		t.Fatalf("ToLit: %v %v", back, err)
	}
	s := FromLit(core.ScalarI(7))
	if len(s.Shape()) != 0 || s.Int64s()[0] != 7 {
		t.Fatalf("scalar literal: shape %v data %v", s.Shape(), s.Int64s())
	}
	if FromLit(nil) != nil {
		t.Fatal("FromLit(nil) != nil")
	}
	if _, err := TypeOf(tensor.New(tensor.WithShape(2), tensor.WithBacking([]int32{1, 2}))); err == nil {
		t.Fatal("TypeOf accepted int32")
	}
	lb, err := ToLit(tensor.New(tensor.WithShape(2), tensor.WithBacking([]bool{true, false})))
	if err != nil || !core.Equal(lb, mustLit(core.NewLitB(core.Shape{2}, []bool{true, false}))) {
		t.Fatalf("ToLit bool: %v %v", lb, err)
	}
}
