package adapter

import (
	"fmt"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// randomGraph grows a random chain of operations from a [3,4] input, mixing shape-preserving
// element-wise ops (with scalars, fresh inputs and earlier nodes), reductions with
// broadcasting back, transposes, matrix products, reshapes, slices, concatenations and
// softmaxes; it returns the final node (a matrix).
func randomGraph(b *gen, steps int) (*G.Node, error) {
	x := b.in(-1, 1, 3, 4)
	pool := []*G.Node{x}
	cur := x
	pick := func() *G.Node {
		// an earlier node of the current shape, or a fresh input
		var same []*G.Node
		for _, n := range pool {
			if n.Shape().Eq(cur.Shape()) {
				same = append(same, n)
			}
		}
		if len(same) > 0 && b.rng.Intn(2) == 0 {
			return same[b.rng.Intn(len(same))]
		}
		return b.in(-1, 1, cur.Shape()...)
	}
	for i := 0; i < steps; i++ {
		var n *G.Node
		var err error
		sh := cur.Shape()
		switch b.rng.Intn(12) {
		case 0:
			n, err = G.Tanh(cur)
		case 1:
			n, err = G.Add(cur, pick())
		case 2:
			n, err = G.HadamardProd(cur, pick())
		case 3:
			n, err = G.Sub(cur, b.in(-1, 1))
		case 4:
			n, err = G.Transpose(cur)
		case 5:
			n, err = G.Mul(cur, b.in(-1, 1, sh[1], 1+b.rng.Intn(4)))
		case 6:
			n, err = G.SoftMax(cur)
		case 7:
			var s *G.Node
			if s, err = G.Sum(cur, 1); err == nil {
				n, err = G.BroadcastAdd(cur, s, nil, []byte{1})
			}
		case 8:
			n, err = G.Reshape(cur, tensor.Shape{sh[1], sh[0]})
		case 9:
			if sh[0] > 2 {
				n, err = G.Slice(cur, G.S(0, sh[0]-1))
			} else {
				n, err = G.Concat(0, cur, pick())
			}
		case 10:
			n, err = G.Concat(1, cur, b.in(-1, 1, sh[0], 2))
		case 11:
			n, err = G.Rectify(cur)
		}
		if err != nil {
			return nil, err
		}
		if n.Shape().TotalSize() > 200 { // keep the graphs small
			if n, err = G.Slice(n, G.S(0, 2)); err != nil {
				return nil, err
			}
		}
		pool = append(pool, n)
		cur = n
	}
	return cur, nil
}

// TestRandomGraphs: random compositions translate and evaluate to the TapeMachine's values.
func TestRandomGraphs(t *testing.T) {
	n := 60
	if testing.Short() {
		n = 15
	}
	for i := 0; i < n; i++ {
		for _, dt := range []tensor.Dtype{tensor.Float64, tensor.Float32} {
			seed := int64(5000 + i)
			b := newGen(dt, seed)
			out, err := randomGraph(b, 4+b.rng.Intn(8))
			if err != nil {
				t.Errorf("seed %d %v: building: %v", seed, dt, err)
				continue
			}
			cost := must(G.Sum(out))
			label := fmt.Sprintf("random/seed=%d/%v", seed, dt)
			checkNode(t, label, out, b.ins)
			checkCost(t, label, cost, b.ins)
		}
	}
}
