package onnx

import (
	"github.com/bulkad/bulkad/core"
	"github.com/bulkad/bulkad/lower"
	"github.com/pkg/errors"
)

// opsNorm lowers the normalisation operators that are single ONNX operators from opset 17.
var opsNorm = map[string]opFn{
	"LayerNormalization": opLayerNorm,
}

// opLayerNorm is LayerNormalization (opset 17): X normalised over its axes axis … rank−1,
// Y = (X − Mean) · InvStdDev · Scale + B with Mean the mean over those axes,
// InvStdDev = 1/√(Var + epsilon) and Var the population variance (the mean of the squared
// deviations); Scale and the optional B broadcast to X (NumPy's rule). The optional outputs
// Mean and InvStdDev have X's shape with the normalised axes reduced to 1.
//
// stash_type (1, float, by default; 11, double) is the precision of the statistics in the
// specification's function body; they are computed in the model's float type, as
// onnxruntime and the ONNX reference implementation do (a float64 model exported by PyTorch
// leaves stash_type at 1 and is normalised in float64 by PyTorch). Other stash types are
// refused.
func opLayerNorm(c *ctx, n *Node, ins []value) ([]value, error) {
	xs, err := c.floatIns(ins, 2)
	if err != nil {
		return nil, err
	}
	x, scale := xs[0], xs[1]
	sh := shapeOf(x)
	axis, err := normAxis(n.attrInt("axis", -1), len(sh))
	if err != nil {
		return nil, err
	}
	if st := n.attrInt("stash_type", dtFloat); st != dtFloat && st != dtDouble {
		return nil, errors.Errorf("stash_type %d: supported are 1 (float) and 11 (double)", st)
	}
	eps := n.attrFloat("epsilon", 1e-5)
	axes := make([]int, 0, len(sh)-axis)
	keep := sh.Clone()
	for a := axis; a < len(sh); a++ {
		axes = append(axes, a)
		keep[a] = 1
	}
	// stat reduces t over the normalised axes to the shape keep.
	stat := func(t core.Term) (core.Term, error) {
		m, err := lower.Mean(t, axes...)
		if err != nil {
			return nil, err
		}
		return lower.Reshape(m, keep)
	}
	bcast := func(t core.Term) (core.Term, error) { return lower.Broadcast(t, sh) }
	var b core.Builder
	k := keepErr(&b)
	mean := k(stat(x))
	dev := b.Sub(x, k(bcast(mean)))
	variance := k(stat(b.Mul(dev, dev)))
	inv := k(lower.Unary("invSqrt", b.Add(variance, b.Full(core.Type{Shape: keep, Dtype: c.dt}, eps))))
	y := b.Mul(b.Mul(dev, k(bcast(inv))), k(bcastTo(scale, sh)))
	if len(ins) > 2 && (ins[2].t != nil || ins[2].isF || ins[2].isInt) {
		bias, err := c.term(ins[2])
		if err != nil {
			return nil, err
		}
		y = b.Add(y, k(bcastTo(bias, sh)))
	}
	if err := b.Err(); err != nil {
		return nil, errors.Wrapf(err, "layer normalisation of %v over axes %v", sh, axes)
	}
	return []value{{t: y}, {t: mean}, {t: inv}}, nil
}

// bcastTo broadcasts t to shape sh (NumPy's rule), with an error naming both shapes.
func bcastTo(t core.Term, sh core.Shape) (core.Term, error) {
	out, err := lower.Broadcast(t, sh)
	return out, errors.Wrapf(err, "%v does not broadcast to %v", shapeOf(t), sh)
}

// keepErr records the first error of a lower call in b and passes its term on.
func keepErr(b *core.Builder) func(core.Term, error) core.Term {
	return func(t core.Term, err error) core.Term {
		if err != nil {
			b.SetErr(err)
		}
		return t
	}
}
