package tests

import (
	"testing"

	"github.com/bulkad/bulkad"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// TestByIndicesForwardByHand checks Gorgonia's ByIndices kernel against selection by hand
// (x holds 0, 1, 2, … so each value names its position), which decides what bulkad translates
// (it must compute what the graph computes) and what it refuses (where the kernel is wrong):
// right on the first axis, on the last axis and on a middle axis of length 2 (an index ≥ the
// axis length reads position 0 of that axis); wrong on a middle axis of another length, where
// bulkad.Grad must refuse.
func TestByIndicesForwardByHand(t *testing.T) {
	cases := []struct {
		shape, ix []int
		axis      int
		right     bool
	}{
		{[]int{3, 4}, []int{3, 0, 3}, 1, true},
		{[]int{3, 4}, []int{4, 1, 7}, 1, true},
		{[]int{4, 3}, []int{5, 2}, 0, true},
		{[]int{3, 2, 2}, []int{1, 1, 0}, 1, true},
		{[]int{2, 3, 4}, []int{2, 3}, 2, true},
		{[]int{2, 4, 3}, []int{1, 2}, 1, false},
		{[]int{2, 3, 2}, []int{2, 0, 1, 1}, 1, false},
	}
	for _, c := range cases {
		g := G.NewGraph()
		size := 1
		for _, d := range c.shape {
			size *= d
		}
		v := make([]float64, size)
		for i := range v {
			v[i] = float64(i)
		}
		x := G.NewTensor(g, tensor.Float64, len(c.shape), G.WithShape(c.shape...), G.WithName("x"),
			G.WithValue(tensor.New(tensor.WithShape(c.shape...), tensor.WithBacking(v))))
		ix := G.NewVector(g, tensor.Int, G.WithShape(len(c.ix)), G.WithName("ix"),
			G.WithValue(tensor.New(tensor.WithShape(len(c.ix)), tensor.WithBacking(append([]int(nil), c.ix...)))))
		y := G.Must(G.ByIndices(x, ix, c.axis))
		cost := G.Must(G.Sum(y))
		m, err := runOnce(g, nil)
		if err != nil {
			t.Fatalf("%v axis %d: %v", c.shape, c.axis, err)
		}
		got := valuesOf(y.Value())
		m.Close()
		// By hand: out[o, i, j] = x[o, k_i, j] with k ≥ A read as 0.
		outer, A, J := 1, c.shape[c.axis], 1
		for _, d := range c.shape[:c.axis] {
			outer *= d
		}
		for _, d := range c.shape[c.axis+1:] {
			J *= d
		}
		var want []float64
		for o := 0; o < outer; o++ {
			for _, k := range c.ix {
				if k >= A {
					k = 0
				}
				for j := 0; j < J; j++ {
					want = append(want, float64(o*A*J+k*J+j))
				}
			}
		}
		same := len(got) == len(want)
		for i := range want {
			same = same && got[i] == want[i]
		}
		if same != c.right {
			t.Errorf("%v axis %d indices %v: Gorgonia %v, by hand %v (expected the kernel to be right: %v)", c.shape, c.axis, c.ix, got, want, c.right)
		}
		_, err = bulkad.Grad(cost, x)
		if c.right && err != nil {
			t.Errorf("%v axis %d: bulkad refuses a case Gorgonia computes right: %v", c.shape, c.axis, err)
		}
		if !c.right && err == nil {
			t.Errorf("%v axis %d: bulkad translates a case Gorgonia computes wrong", c.shape, c.axis)
		}
	}
}
