package kernel

import "github.com/bulkad/bulkad/core"

// Comparisons of a StridedBinary whose rows are contiguous or broadcast (ReLU's and
// max-pool's masks, x ≥ 0 with the 0 broadcast): each row is one loop with the comparison
// inlined, instead of a call through a function value per element (5–8× faster on the
// masks of densenet121's gradient).

// stridedCmpRows runs a comparison StridedBinary row by row (rowsContiguous holds for its
// innermost strides), split across goroutines like stridedRows.
func stridedCmpRows[T numT](k StridedBinary, out []bool, x, y []T) {
	work := costOf(len(out), binaryWeight(k.Op))
	if d, ok := splitDim(k.Shape, work); ok {
		inParallel(k.Shape[d], work, func(lo, hi int) {
			kp, p0, p1 := k.part(d, lo, hi)
			stridedCmpRowsRun(kp, out[p0:p1], x, y)
		})
		return
	}
	stridedCmpRowsRun(k, out, x, y)
}

// stridedCmpRowsRun is stridedCmpRows on the calling goroutine.
func stridedCmpRowsRun[T numT](k StridedBinary, out []bool, x, y []T) {
	r := newRows(k.Shape, [3][]int{k.XS, k.YS}, [3]int{k.XO, k.YO})
	last, sx, sy := r.last, r.stride(0), r.stride(1)
	for p := 0; r.ok; p += last {
		o := out[p : p+last]
		xi, yi := r.off[0], r.off[1]
		switch {
		case sx == 0 && sy == 0:
			c := cmpFunc[T](k.Op)(x[xi], y[yi])
			for j := range o {
				o[j] = c
			}
		case sy == 0:
			cmpRow(k.Op, o, x[xi:xi+last], y[yi:yi+1], true)
		case sx == 0: // x cmp y[j] is y[j] (converse cmp) x
			cmpRow(k.Op.Converse(), o, y[yi:yi+last], x[xi:xi+1], true)
		default:
			cmpRow(k.Op, o, x[xi:xi+last], y[yi:yi+last], false)
		}
		r.next()
	}
}

// cmpRow is o[j] = x[j] op y[j] (y[0] for every j when bcast).
func cmpRow[T numT](op core.BinOp, o []bool, x, y []T, bcast bool) {
	x = x[:len(o)]
	if bcast {
		b := y[0]
		if done := simdCmp(op, o, x, b); done > 0 {
			o, x = o[done:], x[done:]
		}
		switch op {
		case core.OpLt:
			for j, a := range x {
				o[j] = a < b
			}
		case core.OpLe:
			for j, a := range x {
				o[j] = a <= b
			}
		case core.OpGt:
			for j, a := range x {
				o[j] = a > b
			}
		case core.OpGe:
			for j, a := range x {
				o[j] = a >= b
			}
		case core.OpEq:
			for j, a := range x {
				o[j] = a == b
			}
		case core.OpNe:
			for j, a := range x {
				o[j] = a != b
			}
		}
		return
	}
	y = y[:len(o)]
	switch op {
	case core.OpLt:
		for j, a := range x {
			o[j] = a < y[j]
		}
	case core.OpLe:
		for j, a := range x {
			o[j] = a <= y[j]
		}
	case core.OpGt:
		for j, a := range x {
			o[j] = a > y[j]
		}
	case core.OpGe:
		for j, a := range x {
			o[j] = a >= y[j]
		}
	case core.OpEq:
		for j, a := range x {
			o[j] = a == y[j]
		}
	case core.OpNe:
		for j, a := range x {
			o[j] = a != y[j]
		}
	}
}
