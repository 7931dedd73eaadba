package lower

import (
	"github.com/bulkad/bulkad/core"
	"github.com/pkg/errors"
)

// Resample maps the axis of x to n positions by fixed taps: result position j along axis is
//
//	Σ_k weight[k][j] · x[…, index[k][j], …]
//
// (index[k] and weight[k] have n entries each; an index outside the axis reads 0). A nil
// weight is one tap of weight 1: nearest-neighbour resampling, a gather; with integer
// repetition (index[0][j] = j / s) it is Repeat. Interpolation (linear, cubic) is one gather
// of x per tap, times the tap's weights broadcast along the other axes, summed. The
// derivative scatters the weighted cotangent back to the taps. The caller computes the taps
// (package onnx from the coordinate transformation of ONNX's Resize).
func Resample(x core.Term, axis int, index [][]int, weight [][]float64) (core.Term, error) {
	const op = "resample"
	if err := checkTerm(op, x); err != nil {
		return nil, err
	}
	xs := x.Type().Shape
	if axis < 0 || axis >= xs.Rank() {
		return nil, errors.Errorf("lower: %s: axis %d out of range for shape %v", op, axis, xs)
	}
	if len(index) == 0 || (weight != nil && len(weight) != len(index)) || (weight == nil && len(index) != 1) {
		return nil, errors.Errorf("lower: %s: %d index taps and %d weight taps (want at least one, as many weights, or one tap without weights)", op, len(index), len(weight))
	}
	n := len(index[0])
	for k := range index {
		if len(index[k]) != n || weight != nil && len(weight[k]) != n {
			return nil, errors.Errorf("lower: %s: taps of different lengths (%d positions in tap 0)", op, n)
		}
	}
	if n < 1 {
		return nil, errors.Errorf("lower: %s: no output positions", op)
	}
	out := xs.Clone()
	out[axis] = n
	if err := checkBytes(op, out); err != nil {
		return nil, err
	}
	if weight == nil {
		idx := index[0]
		if n == xs[axis] && isIota(idx) {
			return x, nil
		}
		if s := n / xs[axis]; n%xs[axis] == 0 && s > 1 && repeats(idx, s) {
			return Repeat(x, axis, s)
		}
		return take(x, idx, axis)
	}
	var b core.Builder
	var acc core.Term
	for k := range index {
		allZero, allOne := true, true
		for _, v := range weight[k] {
			allZero = allZero && v == 0
			allOne = allOne && v == 1
		}
		if allZero {
			continue
		}
		g, err := take(x, index[k], axis)
		if err != nil {
			return nil, err
		}
		if !allOne {
			wl, err := core.NewLitF(core.Type{Shape: core.Shape{n}, Dtype: x.Type().Dtype}, weight[k])
			if err != nil {
				return nil, errors.Wrapf(err, "lower: %s", op)
			}
			// [n] → [n, 1, …, 1] (the axes after axis) → the output shape
			sh := append(core.Shape{n}, ones(xs.Rank()-axis-1)...)
			wb, err := Broadcast(b.Reshape(sh, wl), out)
			if err != nil {
				return nil, err
			}
			g = b.Mul(g, wb)
		}
		if acc == nil {
			acc = g
		} else {
			acc = b.Add(acc, g)
		}
	}
	if acc == nil {
		return FullLike(core.Type{Shape: out, Dtype: x.Type().Dtype}, 0)
	}
	return result(op, &b, acc)
}

// take gathers positions idx of x along axis (a literal index vector).
func take(x core.Term, idx []int, axis int) (core.Term, error) {
	v := make([]int64, len(idx))
	for i, k := range idx {
		v[i] = int64(k)
	}
	l, err := core.NewLitI(core.Shape{len(idx)}, v)
	if err != nil {
		return nil, errors.Wrap(err, "lower: resample")
	}
	return Take(x, l, axis)
}

func isIota(idx []int) bool {
	for i, k := range idx {
		if k != i {
			return false
		}
	}
	return true
}

// repeats reports whether idx[j] = j / s for every j.
func repeats(idx []int, s int) bool {
	for j, k := range idx {
		if k != j/s {
			return false
		}
	}
	return true
}

func ones(n int) core.Shape {
	sh := make(core.Shape, n)
	for i := range sh {
		sh[i] = 1
	}
	return sh
}
