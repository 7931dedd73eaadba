package kernel

import "github.com/bulkad/bulkad/core"

// What the kernels take from core's op-facts table: the work weight of an operation (from
// its cost class) and, for an operation with no loop of its own, its reference function.

// costWeight is the work weight (see costOf) of one element of an operation of cost class c.
func costWeight(c core.Cost) int {
	switch c {
	case core.CostCheap:
		return wCheap
	case core.CostDivide:
		return wDiv
	}
	return wHeavy
}

// unaryWeight is the weight of a unary operation: neg, abs, sign and not are cheap, the
// float functions heavy (the op-facts table's Cost).
func unaryWeight(op core.UnOp) int { return costWeight(op.Facts().Cost) }

// binaryWeight is the weight of a binary operation (the op-facts table's Cost).
func binaryWeight(op core.BinOp) int { return costWeight(op.Facts().Cost) }

// tableFunc2 is op's reference function from the op-facts table on elements of T (a float32
// computed in float64 and rounded once, as core.Eval does); nil when op has none for T.
func tableFunc2[T numT](op core.BinOp) func(a, b T) T {
	f := op.Facts()
	var z T
	if isIntType(z) {
		if f.Int == nil {
			return nil
		}
		return func(a, b T) T { return T(f.Int(int64(a), int64(b))) }
	}
	if f.Float == nil {
		return nil
	}
	return func(a, b T) T { return T(f.Float(float64(a), float64(b))) }
}
