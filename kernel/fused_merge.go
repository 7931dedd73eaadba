package kernel

import (
	"slices"

	"github.com/bulkad/bulkad/core"
)

// The shapes a Fused kernel walks: its dimensions merged where every leaf steps through two
// as through one, and which leaves it reads (contiguous or broadcast rows).

// FusedReadable reports whether NewFused accepts leaves read through these strides over
// shape: every leaf contiguous or broadcast along the last dimension that is not merged away,
// and, where those rows are shorter than fusedFillMin, none broadcast along them but not
// everywhere (each row would be a call filling a few elements: StridedBinary's pair and tile
// loops are faster there).
func FusedReadable(shape []int, leaves []FusedLeaf) bool {
	return readable(mergeFused(shape, leaves))
}

// FusedSumReadable is FusedReadable for NewFusedSum: the dimensions from split on also merge
// into one.
func FusedSumReadable(shape []int, leaves []FusedLeaf, split int) bool {
	sh, ls, ok := mergeSum(shape, leaves, split)
	return ok && readable(sh, ls)
}

// FusedRowSumReadable is FusedReadable for NewFusedRowSum: the last dimension is also 2 to
// fusedRowMin − 1 elements long.
func FusedRowSumReadable(shape []int, leaves []FusedLeaf) bool {
	sh, ls, ok := mergeRows(shape, leaves)
	return ok && readable(sh, ls)
}

func readable(sh []int, ls []FusedLeaf) bool {
	n := len(sh)
	for _, l := range ls {
		s := l.Strides[n-1]
		if s != 0 && s != 1 {
			return false
		}
		if s == 0 && sh[n-1] < fusedFillMin && slices.ContainsFunc(l.Strides[:n-1], func(v int) bool { return v != 0 }) {
			return false
		}
	}
	return true
}

// mergeSum merges shape for a sum over its dimensions before split: those merged among
// themselves, and the kept ones into exactly one last dimension; ok is false when the kept
// ones do not merge into one or hold one element.
func mergeSum(shape []int, leaves []FusedLeaf, split int) ([]int, []FusedLeaf, bool) {
	if split < 0 || split > len(shape) {
		return nil, nil, false
	}
	sh, ls := mergeFusedAt(shape, leaves, split)
	lead := 0 // merged dimensions from before split
	for i, p := 0, 1; i < len(sh) && p < core.Shape(shape[:split]).Size(); i++ {
		p *= sh[i]
		lead = i + 1
	}
	if len(sh)-lead != 1 || sh[len(sh)-1] < 2 {
		return nil, nil, false // a total sum is one chain: nothing to vectorise
	}
	return sh, ls, true
}

// mergeRows merges shape for a sum along its last dimension, which stays a dimension of its
// own; ok is false unless it is 2 to fusedRowMin − 1 elements long (rows grouped in blocks).
func mergeRows(shape []int, leaves []FusedLeaf) ([]int, []FusedLeaf, bool) {
	n := len(shape)
	if n == 0 || shape[n-1] < 2 || shape[n-1] >= fusedRowMin {
		return nil, nil, false
	}
	sh, ls := mergeFusedAt(shape, leaves, n-1)
	return sh, ls, sh[len(sh)-1] == shape[n-1]
}

// mergeFused drops the dimensions of one element and merges each dimension into the one
// before it where every leaf steps through both as through one (as StridedBinary.Merged); a
// rank-0 or all-ones shape becomes one dimension of one element.
func mergeFused(shape []int, leaves []FusedLeaf) ([]int, []FusedLeaf) {
	return mergeFusedAt(shape, leaves, len(shape))
}

// mergeFusedAt is mergeFused where no dimension from split on merges into one before split.
func mergeFusedAt(shape []int, leaves []FusedLeaf, split int) ([]int, []FusedLeaf) {
	var d []int
	st := make([][]int, len(leaves))
	keptFrom := -1 // the merged index of the first dimension from split on (once reached)
	for i, n := range shape {
		if i == split {
			keptFrom = len(d)
		}
		if n == 1 {
			continue
		}
		m := len(d)
		sameSide := keptFrom < 0 || m-1 >= keptFrom
		if m > 0 && sameSide && mergeable(leaves, st, m-1, i, n) {
			d[m-1] *= n
			for l := range leaves {
				st[l][m-1] = leaves[l].Strides[i]
			}
			continue
		}
		d = append(d, n)
		for l := range leaves {
			st[l] = append(st[l], leaves[l].Strides[i])
		}
	}
	if len(d) == 0 {
		d = []int{core.Shape(shape).Size()}
		for l := range st {
			st[l] = []int{0}
		}
	}
	out := make([]FusedLeaf, len(leaves))
	for l := range leaves {
		out[l] = FusedLeaf{Strides: st[l], Off: leaves[l].Off}
	}
	return d, out
}

func mergeable(leaves []FusedLeaf, st [][]int, prev, i, n int) bool {
	for l := range leaves {
		if st[l][prev] != leaves[l].Strides[i]*n {
			return false
		}
	}
	return true
}
