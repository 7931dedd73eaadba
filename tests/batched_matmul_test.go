package tests

import (
	"testing"

	"github.com/bulkad/bulkad"
	"github.com/bulkad/bulkad/core"
	G "gorgonia.org/gorgonia"
)

// Gorgonia's BatchedMatMul (A ××× B, multi-head attention's products), with and without
// transposes, in float64: bulkad.Grad's nodes on a TapeMachine against central finite
// differences (and Gorgonia's own Grad, Artifact.Run, BindDualValues: checkAll), H·v against
// differences of the gradient, and the gradient program made of batched matmuls only (no
// product or scatter of rank 4).
func batchedCases() []extraCase {
	bmm := func(name string, as, bs []int, ta, tb bool) extraCase {
		return extraCase{name, false, func(g *G.ExprGraph, in func(string, float64, float64, ...int) *G.Node) (*G.Node, G.Nodes, error) {
			a, b := in("a", -1, 1, as...), in("b", -1, 1, bs...)
			y, err := G.BatchedMatMul(a, b, ta, tb)
			return y, G.Nodes{a, b}, err
		}}
	}
	return []extraCase{
		bmm("plain", []int{2, 3, 4}, []int{2, 4, 5}, false, false),
		bmm("transA", []int{3, 4, 2}, []int{3, 4, 5}, true, false),
		bmm("transB", []int{2, 3, 4}, []int{2, 5, 4}, false, true),
		bmm("both", []int{2, 4, 3}, []int{2, 5, 4}, true, true),
		// attention: softmax(q kᵀ) v per head, q, k, v : [heads, seq, d]
		{"attention", false, func(g *G.ExprGraph, in func(string, float64, float64, ...int) *G.Node) (*G.Node, G.Nodes, error) {
			q, k, v := in("q", -1, 1, 4, 5, 3), in("k", -1, 1, 4, 5, 3), in("v", -1, 1, 4, 5, 3)
			s, err := G.BatchedMatMul(q, k, false, true)
			if err != nil {
				return nil, nil, err
			}
			a, err := G.SoftMax(s)
			if err != nil {
				return nil, nil, err
			}
			o, err := G.BatchedMatMul(a, v)
			return o, G.Nodes{q, k, v}, err
		}},
	}
}

func TestBatchedMatMulGrad(t *testing.T) {
	for _, c := range batchedCases() {
		t.Run(c.name, func(t *testing.T) { checkAll(t, extraCtor(c), c.gorgoniaWrong) })
	}
}

func TestBatchedMatMulGradOfGrad(t *testing.T) {
	for _, c := range batchedCases() {
		t.Run(c.name, func(t *testing.T) {
			b := mustBuild(t, extraCtor(c))
			checkGradOfGrad(t, b.g, b.cost, b.wrt, 13)
		})
	}
}

// The gradient of a batched product is batched products: no term of rank 4 anywhere in the
// gradient program (every input is of rank 3; the former lowering summed a [k,batch,m,n]
// product and scattered into one), and the products are matmuls.
func TestBatchedMatMulGradientProgram(t *testing.T) {
	for _, c := range batchedCases() {
		t.Run(c.name, func(t *testing.T) {
			b := mustBuild(t, extraCtor(c))
			d, err := bulkad.Differentiate(b.cost, b.wrt...)
			if err != nil {
				t.Fatal(err)
			}
			matmuls := 0
			core.PostOrder(d.Program().Body, func(u core.Term) {
				if _, ok := u.(*core.Tuple); !ok && len(u.Type().Shape) > 3 {
					t.Errorf("term of rank %d in the gradient: %v", len(u.Type().Shape), u)
				}
				if m, ok := u.(*core.MatMul); ok && len(m.Type().Shape) == 3 {
					matmuls++
				}
			})
			// the forward product(s) and two per product for the gradients
			want := 3
			if c.name == "attention" {
				want = 6
			}
			if matmuls < want {
				t.Errorf("%d batched matmuls in the gradient program, want at least %d:\n%v", matmuls, want, d)
			}
		})
	}
}
