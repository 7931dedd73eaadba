package gorgoniasuite

import (
	"fmt"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// binOpValue is one value of Gorgonia's binOpTests table: a scalar or a vector, float32 or
// float64.
type binOpValue struct {
	Dt     int       `json:"dt"`
	Data   []float64 `json:"data"`
	Scalar bool      `json:"scalar"`
}

// node makes an input node holding the value.
func (v binOpValue) node(g *G.ExprGraph, name string) *G.Node {
	dt := tensor.Float64
	if v.Dt == 32 {
		dt = tensor.Float32
	}
	if v.Scalar {
		return G.NewScalar(g, dt, G.WithName(name), G.WithValue(scalarOf(dt, v.Data[0])))
	}
	return inputNode(g, dt, tensor.Shape{len(v.Data)}, v.Data, name)
}

// TestBasicArithmetic is op_math_test.go's TestBasicArithmetic (its TapeMachine half): for
// each row of binOpTests, cost = Σ op(x, y), with the result and both gradients compared
// exactly, as Gorgonia's test does. The 32 rows of scalars and vectors are kept in
// testdata/binop_tests.json; the last row (BatchedMatMul on [2,3,4]×[2,4,1]) is written here.
func TestBasicArithmetic(t *testing.T) {
	var rows []struct {
		Op                    string
		A, B, Correct, DA, DB binOpValue
	}
	readTable(t, "binop_tests.json", &rows)
	if len(rows) != 32 {
		t.Fatalf("testdata has %d rows, want 32", len(rows))
	}
	ops := map[string]func(a, b *G.Node) (*G.Node, error){
		"Add": G.Add, "Sub": G.Sub, "HadamardProd": G.HadamardProd, "Mul": G.Mul,
		"HadamardDiv": G.HadamardDiv, "Div": G.Div,
	}
	for i, r := range rows {
		t.Run(fmt.Sprintf("%d %s f%d scalars %v,%v", i, r.Op, r.A.Dt, r.A.Scalar, r.B.Scalar), func(t *testing.T) {
			op, ok := ops[r.Op]
			if !ok {
				t.Fatalf("op %q not in the table", r.Op)
			}
			g := G.NewGraph()
			x := r.A.node(g, "x")
			y := r.B.node(g, "y")
			ret, err := op(x, y)
			grads := gradOfSum(t, ret, err, x, y)
			if got := floats(ret.Value()); maxAbsDiff(got, r.Correct.Data) != 0 {
				t.Errorf("result %v, Gorgonia's table %v", got, r.Correct.Data)
			}
			if maxAbsDiff(grads[0], r.DA.Data) != 0 || maxAbsDiff(grads[1], r.DB.Data) != 0 {
				t.Errorf("∂/∂x = %v, ∂/∂y = %v; Gorgonia's table %v, %v", grads[0], grads[1], r.DA.Data, r.DB.Data)
			}
		})
	}
	t.Run("32 BatchedMatMul", func(t *testing.T) {
		g := G.NewGraph()
		a := inputNode(g, tensor.Float64, tensor.Shape{2, 3, 4}, []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, "x")
		b := inputNode(g, tensor.Float64, tensor.Shape{2, 4, 1}, []float64{1, 2, 3, 4, 1, 2, 3, 4}, "y")
		ret, err := G.BatchedMatMul(a, b, false, false)
		grads := gradOfSum(t, ret, err, a, b)
		wantRet := []float64{30, 70, 110, 30, 70, 110}
		wantA := []float64{1, 2, 3, 4, 1, 2, 3, 4, 1, 2, 3, 4, 1, 2, 3, 4, 1, 2, 3, 4, 1, 2, 3, 4}
		wantB := []float64{15, 18, 21, 24, 15, 18, 21, 24}
		if !ret.Shape().Eq(tensor.Shape{2, 3, 1}) || maxAbsDiff(floats(ret.Value()), wantRet) != 0 {
			t.Errorf("result %v %v, Gorgonia's table [2 3 1] %v", ret.Shape(), floats(ret.Value()), wantRet)
		}
		if maxAbsDiff(grads[0], wantA) != 0 || maxAbsDiff(grads[1], wantB) != 0 {
			t.Errorf("∂/∂x = %v, ∂/∂y = %v; Gorgonia's table %v, %v", grads[0], grads[1], wantA, wantB)
		}
	})
}
