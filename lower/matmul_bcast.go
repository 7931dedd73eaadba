package lower

import (
	"github.com/bulkad/bulkad/core"
	"github.com/pkg/errors"
)

// BroadcastMatMul is NumPy's matmul (ONNX's MatMul, PyTorch's @) for operands of any rank ≥ 1:
// a vector operand is a matrix of one row (first operand) or one column (second operand),
// whose unit dimension the result drops; the batch dimensions (all but the last two) are
// broadcast (aligned at the end, a dimension of 1 repeated). The product is core's batched
// matmul over the broadcast batch, each operand replicated (a gather) to it where its batch
// is smaller; an operand without batch dimensions is instead folded into one matrix product
// with the other's batch (no copies): [B…, m, k] × [k, n] multiplies the [B·m, k] matrix, and
// [m, k] × [B…, k, n] the [k, B·n] matrix of the second operand's columns.
func BroadcastMatMul(a, b core.Term) (core.Term, error) {
	if err := checkTerm("broadcast matmul", a, b); err != nil {
		return nil, err
	}
	as, bs := a.Type().Shape, b.Type().Shape
	if as.Rank() == 0 || bs.Rank() == 0 {
		return nil, errors.Errorf("lower: broadcast matmul: operand shapes %v and %v, want rank ≥ 1", as, bs)
	}
	var bl core.Builder
	vecA, vecB := as.Rank() == 1, bs.Rank() == 1
	if vecA {
		as = core.Shape{1, as[0]}
		a = bl.Reshape(as, a)
	}
	if vecB {
		bs = core.Shape{bs[0], 1}
		b = bl.Reshape(bs, b)
	}
	ra, rb := as.Rank(), bs.Rank()
	m, k, k2, n := as[ra-2], as[ra-1], bs[rb-2], bs[rb-1]
	if k != k2 {
		return nil, errors.Errorf("lower: broadcast matmul: operand shapes %v and %v do not match (inner dimensions %d and %d)", a.Type().Shape, b.Type().Shape, k, k2)
	}
	batchA, batchB := as[:ra-2], bs[:rb-2]
	batch, err := BroadcastShapes(batchA, batchB)
	if err != nil {
		return nil, errors.Wrapf(err, "lower: broadcast matmul: operand shapes %v and %v, batch dimensions", a.Type().Shape, b.Type().Shape)
	}
	var t core.Term
	switch {
	case len(batchB) == 0 || batchB.Size() == 1 && batchA.Equal(batch):
		// [B…, m, k] × [k, n]: one product of a's rows
		b2 := reshapeIfNeeded(&bl, core.Shape{k, n}, b)
		rows := reshapeIfNeeded(&bl, core.Shape{batch.Size() * m, k}, a)
		t = bl.Reshape(append(batch.Clone(), m, n), bl.MatMul(rows, b2))
	case len(batchA) == 0 || batchA.Size() == 1 && batchB.Equal(batch):
		// [m, k] × [B…, k, n]: b's batch moved into its columns, [k, B·n]
		a2 := reshapeIfNeeded(&bl, core.Shape{m, k}, a)
		nb := batch.Size()
		b3 := reshapeIfNeeded(&bl, core.Shape{nb, k, n}, b)
		cols := bl.Reshape(core.Shape{k, nb * n}, bl.Transpose([]int{1, 0, 2}, b3))
		p := bl.Reshape(core.Shape{m, nb, n}, bl.MatMul(a2, cols))
		t = bl.Reshape(append(batch.Clone(), m, n), bl.Transpose([]int{1, 0, 2}, p))
	default:
		if err := wrap("broadcast matmul", &bl); err != nil {
			return nil, err
		}
		if a, err = Broadcast(a, append(batch.Clone(), m, k)); err != nil {
			return nil, err
		}
		if b, err = Broadcast(b, append(batch.Clone(), k, n)); err != nil {
			return nil, err
		}
		t = bl.MatMul(a, b)
	}
	if vecA || vecB {
		sh := batch.Clone()
		if !vecA {
			sh = append(sh, m)
		}
		if !vecB {
			sh = append(sh, n)
		}
		t = bl.Reshape(sh, t)
	}
	return result("broadcast matmul", &bl, t)
}

// BroadcastShapes is the NumPy (multidirectional) broadcast of two shapes: aligned at their
// last dimensions, each pair of dimensions equal or one of them 1 (the missing leading
// dimensions of the shorter shape count as 1).
func BroadcastShapes(x, y core.Shape) (core.Shape, error) {
	r := max(x.Rank(), y.Rank())
	out := make(core.Shape, r)
	for i := range out {
		p, q := 1, 1
		if j := i - (r - x.Rank()); j >= 0 {
			p = x[j]
		}
		if j := i - (r - y.Rank()); j >= 0 {
			q = y[j]
		}
		switch {
		case p == q || q == 1:
			out[i] = p
		case p == 1:
			out[i] = q
		default:
			return nil, errors.Errorf("lower: broadcast shapes: %v and %v do not broadcast", x, y)
		}
	}
	return out, nil
}
