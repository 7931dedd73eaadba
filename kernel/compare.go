package kernel

import (
	"github.com/bulkad/bulkad/core"
	"github.com/pkg/errors"
)

// oneIf maps a comparison's outcome to 0 or 1 through a table: a branch per element costs a
// misprediction on data of mixed signs (7× slower on a ReLU's input).
func oneIf[T ~float32 | ~float64](b bool) T {
	var i uint8
	if b {
		i = 1
	}
	return [2]T{0, 1}[i]
}

// CompareScalar writes 1 where x[i] op s holds and 0 elsewhere (NaN compares false), for op
// one of <, <=, >, >= (core.OpLt, OpLe, OpGt, OpGe); out and x have equal lengths and may be
// the same slice. It is the float-valued comparison of Gorgonia's ReLU (x >= 0). Large
// inputs are split across goroutines.
func CompareScalar[T ~float32 | ~float64](out, x []T, s T, op core.BinOp) error {
	if len(out) != len(x) {
		return errors.Errorf("kernel: compare with a scalar: output of %d for %d elements", len(out), len(x))
	}
	switch op {
	case core.OpGe, core.OpGt, core.OpLe, core.OpLt:
	default:
		return errors.Errorf("kernel: compare with a scalar: operation %v, want one of < <= > >=", op)
	}
	inParallel(len(x), costOf(len(x), wCheap), func(lo, hi int) { compareRange(out[lo:hi], x[lo:hi], s, op) })
	return nil
}

func compareRange[T ~float32 | ~float64](out, x []T, s T, op core.BinOp) {
	out = out[:len(x)]
	switch op {
	case core.OpGe:
		for i, v := range x {
			out[i] = oneIf[T](v >= s)
		}
	case core.OpGt:
		for i, v := range x {
			out[i] = oneIf[T](v > s)
		}
	case core.OpLe:
		for i, v := range x {
			out[i] = oneIf[T](v <= s)
		}
	case core.OpLt:
		for i, v := range x {
			out[i] = oneIf[T](v < s)
		}
	}
}
