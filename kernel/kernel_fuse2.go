package kernel

import "github.com/bulkad/bulkad/core"

// Code generated for the element-wise fusion superinstructions; two binary operations in one
// loop, so the intermediate never leaves registers. Covers + - * / (float dtypes).

// bin2L computes d = (a op1 b) op2 c and reports whether it covers the operation pair.
func bin2L[T floatT](op1, op2 core.BinOp, d, a, b, c []T) bool {
	a, b, c = a[:len(d)], b[:len(d)], c[:len(d)]
	switch int(op1)*16 + int(op2) {
	case int(core.OpAdd)*16 + int(core.OpAdd):
		for i := range d {
			d[i] = (a[i] + b[i]) + c[i]
		}
	case int(core.OpAdd)*16 + int(core.OpSub):
		for i := range d {
			d[i] = (a[i] + b[i]) - c[i]
		}
	case int(core.OpAdd)*16 + int(core.OpMul):
		for i := range d {
			d[i] = (a[i] + b[i]) * c[i]
		}
	case int(core.OpAdd)*16 + int(core.OpDiv):
		for i := range d {
			d[i] = (a[i] + b[i]) / c[i]
		}
	case int(core.OpSub)*16 + int(core.OpAdd):
		for i := range d {
			d[i] = (a[i] - b[i]) + c[i]
		}
	case int(core.OpSub)*16 + int(core.OpSub):
		for i := range d {
			d[i] = (a[i] - b[i]) - c[i]
		}
	case int(core.OpSub)*16 + int(core.OpMul):
		for i := range d {
			d[i] = (a[i] - b[i]) * c[i]
		}
	case int(core.OpSub)*16 + int(core.OpDiv):
		for i := range d {
			d[i] = (a[i] - b[i]) / c[i]
		}
	case int(core.OpMul)*16 + int(core.OpAdd):
		for i := range d {
			d[i] = (a[i] * b[i]) + c[i]
		}
	case int(core.OpMul)*16 + int(core.OpSub):
		for i := range d {
			d[i] = (a[i] * b[i]) - c[i]
		}
	case int(core.OpMul)*16 + int(core.OpMul):
		for i := range d {
			d[i] = (a[i] * b[i]) * c[i]
		}
	case int(core.OpMul)*16 + int(core.OpDiv):
		for i := range d {
			d[i] = (a[i] * b[i]) / c[i]
		}
	case int(core.OpDiv)*16 + int(core.OpAdd):
		for i := range d {
			d[i] = (a[i] / b[i]) + c[i]
		}
	case int(core.OpDiv)*16 + int(core.OpSub):
		for i := range d {
			d[i] = (a[i] / b[i]) - c[i]
		}
	case int(core.OpDiv)*16 + int(core.OpMul):
		for i := range d {
			d[i] = (a[i] / b[i]) * c[i]
		}
	case int(core.OpDiv)*16 + int(core.OpDiv):
		for i := range d {
			d[i] = (a[i] / b[i]) / c[i]
		}
	default:
		return false
	}
	return true
}

// bin2R computes d = c op2 (a op1 b) and reports whether it covers the operation pair.
func bin2R[T floatT](op1, op2 core.BinOp, d, c, a, b []T) bool {
	a, b, c = a[:len(d)], b[:len(d)], c[:len(d)]
	switch int(op1)*16 + int(op2) {
	case int(core.OpAdd)*16 + int(core.OpAdd):
		for i := range d {
			d[i] = c[i] + (a[i] + b[i])
		}
	case int(core.OpAdd)*16 + int(core.OpSub):
		for i := range d {
			d[i] = c[i] - (a[i] + b[i])
		}
	case int(core.OpAdd)*16 + int(core.OpMul):
		for i := range d {
			d[i] = c[i] * (a[i] + b[i])
		}
	case int(core.OpAdd)*16 + int(core.OpDiv):
		for i := range d {
			d[i] = c[i] / (a[i] + b[i])
		}
	case int(core.OpSub)*16 + int(core.OpAdd):
		for i := range d {
			d[i] = c[i] + (a[i] - b[i])
		}
	case int(core.OpSub)*16 + int(core.OpSub):
		for i := range d {
			d[i] = c[i] - (a[i] - b[i])
		}
	case int(core.OpSub)*16 + int(core.OpMul):
		for i := range d {
			d[i] = c[i] * (a[i] - b[i])
		}
	case int(core.OpSub)*16 + int(core.OpDiv):
		for i := range d {
			d[i] = c[i] / (a[i] - b[i])
		}
	case int(core.OpMul)*16 + int(core.OpAdd):
		for i := range d {
			d[i] = c[i] + (a[i] * b[i])
		}
	case int(core.OpMul)*16 + int(core.OpSub):
		for i := range d {
			d[i] = c[i] - (a[i] * b[i])
		}
	case int(core.OpMul)*16 + int(core.OpMul):
		for i := range d {
			d[i] = c[i] * (a[i] * b[i])
		}
	case int(core.OpMul)*16 + int(core.OpDiv):
		for i := range d {
			d[i] = c[i] / (a[i] * b[i])
		}
	case int(core.OpDiv)*16 + int(core.OpAdd):
		for i := range d {
			d[i] = c[i] + (a[i] / b[i])
		}
	case int(core.OpDiv)*16 + int(core.OpSub):
		for i := range d {
			d[i] = c[i] - (a[i] / b[i])
		}
	case int(core.OpDiv)*16 + int(core.OpMul):
		for i := range d {
			d[i] = c[i] * (a[i] / b[i])
		}
	case int(core.OpDiv)*16 + int(core.OpDiv):
		for i := range d {
			d[i] = c[i] / (a[i] / b[i])
		}
	default:
		return false
	}
	return true
}

// bin2Covered reports whether bin2L and bin2R cover op.
func bin2Covered(op core.BinOp) bool {
	return op == core.OpAdd || op == core.OpSub || op == core.OpMul || op == core.OpDiv
}
