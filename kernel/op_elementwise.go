package kernel

import (
	"math"

	"github.com/bulkad/bulkad/core"
	"github.com/pkg/errors"
)

// Cast converts between dtypes with core's semantics (float→int truncates; NaN and
// out-of-range give 0).
type Cast struct{}

// Run implements Kernel.
func (Cast) Run(out any, ins []any) error {
	switch o := out.(type) {
	case []float64:
		switch x := ins[0].(type) {
		case []float64:
			copy(o, x)
		case []float32:
			convLoop(o, x)
		case []int64:
			convLoop(o, x)
		case []bool:
			boolToNum(o, x)
		}
	case []float32:
		switch x := ins[0].(type) {
		case []float64:
			convLoop(o, x)
		case []float32:
			copy(o, x)
		case []int64:
			convLoop(o, x)
		case []bool:
			boolToNum(o, x)
		}
	case []int64:
		switch x := ins[0].(type) {
		case []float64:
			for i, v := range x {
				o[i] = truncInt(v)
			}
		case []float32:
			for i, v := range x {
				o[i] = truncInt(float64(v))
			}
		case []int64:
			copy(o, x)
		case []bool:
			boolToNum(o, x)
		}
	case []bool:
		switch x := ins[0].(type) {
		case []float64:
			numToBool(o, x)
		case []float32:
			numToBool(o, x)
		case []int64:
			numToBool(o, x)
		case []bool:
			copy(o, x)
		}
	default:
		return typeErr("cast", out, ins)
	}
	return nil
}

func convLoop[T, U num](out []T, x []U) {
	for i, v := range x {
		out[i] = T(v)
	}
}

func boolToNum[T num](out []T, x []bool) {
	for i, v := range x {
		if v {
			out[i] = 1
		} else {
			out[i] = 0
		}
	}
}

func numToBool[T num](out []bool, x []T) {
	for i, v := range x {
		out[i] = v != 0
	}
}

// ---- element-wise ----

// Unary applies a unary operation element-wise in Go (for what Gorgonia lacks).
type Unary struct {
	Op core.UnOp
	VK *Vulkan
}

// Run implements Kernel.
func (k Unary) Run(out any, ins []any) error {
	if k.device(out, ins) {
		return nil
	}
	switch o := out.(type) {
	case []float64:
		x, ok := ins[0].([]float64)
		f := floatUnary(k.Op)
		if !ok || f == nil {
			break
		}
		for i, v := range x {
			o[i] = f(v)
		}
		return nil
	case []float32:
		x, ok := ins[0].([]float32)
		f := floatUnary(k.Op)
		if !ok || f == nil {
			break
		}
		for i, v := range x {
			o[i] = float32(f(float64(v)))
		}
		return nil
	case []int64:
		x, ok := ins[0].([]int64)
		if !ok {
			break
		}
		for i, v := range x {
			switch k.Op {
			case core.OpNeg:
				o[i] = -v
			case core.OpAbs:
				if v < 0 {
					v = -v
				}
				o[i] = v
			case core.OpSign:
				o[i] = b2i(v > 0) - b2i(v < 0)
			default:
				return typeErr(k.Op.String(), out, ins)
			}
		}
		return nil
	case []bool:
		x, ok := ins[0].([]bool)
		if !ok || k.Op != core.OpNot {
			break
		}
		for i, v := range x {
			o[i] = !v
		}
		return nil
	}
	return typeErr(k.Op.String(), out, ins)
}

func floatUnary(op core.UnOp) func(float64) float64 {
	switch op {
	case core.OpNeg:
		return func(x float64) float64 { return -x }
	case core.OpAbs:
		return math.Abs
	case core.OpSign:
		return func(x float64) float64 {
			switch {
			case x > 0:
				return 1
			case x < 0:
				return -1
			}
			return x // ±0 and NaN
		}
	case core.OpExp:
		return math.Exp
	case core.OpLog:
		return math.Log
	case core.OpSqrt:
		return math.Sqrt
	case core.OpSin:
		return math.Sin
	case core.OpCos:
		return math.Cos
	case core.OpTan:
		return math.Tan
	case core.OpTanh:
		return math.Tanh
	case core.OpSigmoid:
		return func(x float64) float64 { return 1 / (1 + math.Exp(-x)) }
	case core.OpRecip:
		return func(x float64) float64 { return 1 / x }
	case core.OpFloor:
		return math.Floor
	case core.OpCeil:
		return math.Ceil
	case core.OpLog1p:
		return math.Log1p
	case core.OpExpm1:
		return math.Expm1
	}
	return nil
}

// Binary applies a binary operation element-wise; an operand shorter than the output is
// read cyclically (the fused x op replicate n y).
type Binary struct {
	Op core.BinOp
	VK *Vulkan
}

// Run implements Kernel.
func (k Binary) Run(out any, ins []any) error {
	if k.device(out, ins) {
		return nil
	}
	switch x := ins[0].(type) {
	case []float64:
		y, ok := ins[1].([]float64)
		if !ok {
			break
		}
		if f := floatBin(k.Op); f != nil {
			if o, ok := out.([]float64); ok {
				return binLoop(o, x, y, fastF64(k.Op, f))
			}
		}
		if f := floatCmp[float64](k.Op); f != nil {
			if o, ok := out.([]bool); ok {
				return binLoop(o, x, y, f)
			}
		}
	case []float32:
		y, ok := ins[1].([]float32)
		if !ok {
			break
		}
		if f := floatBin(k.Op); f != nil {
			if o, ok := out.([]float32); ok {
				return binLoop(o, x, y, func(a, b float32) float32 { return float32(f(float64(a), float64(b))) })
			}
		}
		if f := floatCmp[float32](k.Op); f != nil {
			if o, ok := out.([]bool); ok {
				return binLoop(o, x, y, f)
			}
		}
	case []int64:
		y, ok := ins[1].([]int64)
		f := intBinFunc(k.Op)
		if !ok || f == nil || k.Op == core.OpAnd || k.Op == core.OpOr {
			break
		}
		switch o := out.(type) {
		case []int64:
			if !k.Op.IsComparison() {
				return binLoop(o, x, y, f)
			}
		case []bool:
			if k.Op.IsComparison() {
				return binLoop(o, x, y, func(a, b int64) bool { return f(a, b) != 0 })
			}
		}
	case []bool:
		y, ok := ins[1].([]bool)
		o, ok2 := out.([]bool)
		if !ok || !ok2 {
			break
		}
		switch k.Op {
		case core.OpAnd:
			return binLoop(o, x, y, func(a, b bool) bool { return a && b })
		case core.OpOr:
			return binLoop(o, x, y, func(a, b bool) bool { return a || b })
		case core.OpEq:
			return binLoop(o, x, y, func(a, b bool) bool { return a == b })
		case core.OpNe:
			return binLoop(o, x, y, func(a, b bool) bool { return a != b })
		}
	}
	return typeErr(k.Op.String(), out, ins)
}

// fastF64 returns f; the common arithmetic operations are inlined by binLoop's callers
// through these small closures.
func fastF64(op core.BinOp, f func(a, b float64) float64) func(a, b float64) float64 {
	switch op {
	case core.OpAdd:
		return func(a, b float64) float64 { return a + b }
	case core.OpMul:
		return func(a, b float64) float64 { return a * b }
	}
	return f
}

func binLoop[T, U elem](out []U, x, y []T, f func(a, b T) U) error {
	n := len(out)
	switch {
	case len(x) == n && len(y) == n:
		for i := range out {
			out[i] = f(x[i], y[i])
		}
	case len(x) == n && len(y) > 0 && n%len(y) == 0:
		py := len(y)
		for b := 0; b < n; b += py {
			o, xs := out[b:b+py], x[b:b+py]
			for j := range o {
				o[j] = f(xs[j], y[j])
			}
		}
	case len(y) == n && len(x) > 0 && n%len(x) == 0:
		px := len(x)
		for b := 0; b < n; b += px {
			o, ys := out[b:b+px], y[b:b+px]
			for j := range o {
				o[j] = f(x[j], ys[j])
			}
		}
	default:
		return errors.Errorf("kernel: element-wise: operand lengths %d and %d do not fit output length %d", len(x), len(y), n)
	}
	return nil
}

func floatBin(op core.BinOp) func(a, b float64) float64 {
	switch op {
	case core.OpAdd:
		return func(a, b float64) float64 { return a + b }
	case core.OpSub:
		return func(a, b float64) float64 { return a - b }
	case core.OpMul:
		return func(a, b float64) float64 { return a * b }
	case core.OpDiv:
		return func(a, b float64) float64 { return a / b }
	case core.OpPow:
		return math.Pow
	case core.OpMax:
		// As core's evaluator: NaN propagates, +0 is above −0 (math.Max's rules).
		return math.Max
	case core.OpMin:
		return math.Min
	case core.OpAtan2:
		return math.Atan2
	}
	return nil
}

func floatCmp[T ~float64 | ~float32](op core.BinOp) func(a, b T) bool {
	switch op {
	case core.OpLt:
		return func(a, b T) bool { return a < b }
	case core.OpLe:
		return func(a, b T) bool { return a <= b }
	case core.OpGt:
		return func(a, b T) bool { return a > b }
	case core.OpGe:
		return func(a, b T) bool { return a >= b }
	case core.OpEq:
		return func(a, b T) bool { return a == b }
	case core.OpNe:
		return func(a, b T) bool { return a != b }
	}
	return nil
}

// StridedBinary is an element-wise binary operation whose operands are read through strides
// (0 along broadcast dimensions): the fused x op tr (replicate … y) and friends.
type StridedBinary struct {
	Op     core.BinOp
	Shape  []int
	XS, YS []int
	XO, YO int // offsets of the first element
	VK     *Vulkan
}

// Run implements Kernel.
func (k StridedBinary) Run(out any, ins []any) error {
	if k.device(out, ins) {
		return nil
	}
	switch x := ins[0].(type) {
	case []float64:
		y, ok := ins[1].([]float64)
		if !ok {
			break
		}
		if o, ok := out.([]float64); ok {
			switch k.Op {
			case core.OpAdd:
				return stridedLoop(k, o, x, y, func(a, b float64) float64 { return a + b })
			case core.OpSub:
				return stridedLoop(k, o, x, y, func(a, b float64) float64 { return a - b })
			case core.OpMul:
				return stridedLoop(k, o, x, y, func(a, b float64) float64 { return a * b })
			case core.OpDiv:
				return stridedLoop(k, o, x, y, func(a, b float64) float64 { return a / b })
			}
			if f := floatBin(k.Op); f != nil {
				return stridedLoop(k, o, x, y, f)
			}
		}
		if o, ok := out.([]bool); ok {
			if f := floatCmp[float64](k.Op); f != nil {
				return stridedLoop(k, o, x, y, f)
			}
		}
	case []float32:
		y, ok := ins[1].([]float32)
		if !ok {
			break
		}
		if o, ok := out.([]float32); ok {
			switch k.Op {
			case core.OpAdd:
				return stridedLoop(k, o, x, y, func(a, b float32) float32 { return a + b })
			case core.OpSub:
				return stridedLoop(k, o, x, y, func(a, b float32) float32 { return a - b })
			case core.OpMul:
				return stridedLoop(k, o, x, y, func(a, b float32) float32 { return a * b })
			case core.OpDiv:
				return stridedLoop(k, o, x, y, func(a, b float32) float32 { return a / b })
			}
			if f := floatBin(k.Op); f != nil {
				return stridedLoop(k, o, x, y, func(a, b float32) float32 { return float32(f(float64(a), float64(b))) })
			}
		}
		if o, ok := out.([]bool); ok {
			if f := floatCmp[float32](k.Op); f != nil {
				return stridedLoop(k, o, x, y, f)
			}
		}
	case []int64:
		y, ok := ins[1].([]int64)
		f := intBinFunc(k.Op)
		if !ok || f == nil || k.Op == core.OpAnd || k.Op == core.OpOr {
			break
		}
		switch o := out.(type) {
		case []int64:
			if !k.Op.IsComparison() {
				return stridedLoop(k, o, x, y, f)
			}
		case []bool:
			if k.Op.IsComparison() {
				return stridedLoop(k, o, x, y, func(a, b int64) bool { return f(a, b) != 0 })
			}
		}
	case []bool:
		y, ok := ins[1].([]bool)
		o, ok2 := out.([]bool)
		if !ok || !ok2 {
			break
		}
		switch k.Op {
		case core.OpAnd:
			return stridedLoop(k, o, x, y, func(a, b bool) bool { return a && b })
		case core.OpOr:
			return stridedLoop(k, o, x, y, func(a, b bool) bool { return a || b })
		case core.OpEq:
			return stridedLoop(k, o, x, y, func(a, b bool) bool { return a == b })
		case core.OpNe:
			return stridedLoop(k, o, x, y, func(a, b bool) bool { return a != b })
		}
	}
	return typeErr(k.Op.String(), out, ins)
}

func stridedLoop[T, U elem](k StridedBinary, out []U, x, y []T, f func(a, b T) U) error {
	n := len(k.Shape)
	if n == 0 {
		out[0] = f(x[k.XO], y[k.YO])
		return nil
	}
	last := k.Shape[n-1]
	sx, sy := k.XS[n-1], k.YS[n-1]
	var idxBuf [8]int
	idx := idxBuf[:0]
	if n-1 > len(idxBuf) {
		idx = make([]int, n-1)
	} else {
		idx = idxBuf[:n-1]
	}
	xo, yo := k.XO, k.YO
	for p := 0; p+last <= len(out) && last > 0; p += last {
		o := out[p : p+last]
		xi, yi := xo, yo
		switch {
		case sx == 1 && sy == 0:
			b := y[yi]
			for j, a := range x[xi : xi+last] {
				o[j] = f(a, b)
			}
		case sx == 0 && sy == 1:
			a := x[xi]
			for j, b := range y[yi : yi+last] {
				o[j] = f(a, b)
			}
		case sx == 1 && sy == 1:
			xs, ys := x[xi:xi+last], y[yi:yi+last]
			for j := range o {
				o[j] = f(xs[j], ys[j])
			}
		default:
			for j := range o {
				o[j] = f(x[xi], y[yi])
				xi += sx
				yi += sy
			}
		}
		for d := n - 2; d >= 0; d-- {
			idx[d]++
			xo += k.XS[d]
			yo += k.YS[d]
			if idx[d] < k.Shape[d] {
				break
			}
			xo -= k.XS[d] * k.Shape[d]
			yo -= k.YS[d] * k.Shape[d]
			idx[d] = 0
		}
	}
	return nil
}

// MaskMul is out = z · (1 if p cmp q else 0) with p, q, z read through strides.
type MaskMul struct {
	Cmp   core.BinOp
	Shape []int
	St    [3][]int
	Off   [3]int
}

// Run implements Kernel.
func (k MaskMul) Run(out any, ins []any) error {
	switch o := out.(type) {
	case []float64:
		z, ok := ins[2].([]float64)
		if !ok {
			break
		}
		return maskDispatch(k, o, ins[0], ins[1], z)
	case []float32:
		z, ok := ins[2].([]float32)
		if !ok {
			break
		}
		return maskDispatch(k, o, ins[0], ins[1], z)
	}
	return typeErr("maskMul", out, ins)
}

func maskDispatch[F ~float64 | ~float32](k MaskMul, out []F, p, q any, z []F) error {
	switch a := p.(type) {
	case []int64:
		if b, ok := q.([]int64); ok {
			return maskLoop(k, out, a, b, z, numCmp[int64](k.Cmp))
		}
	case []float64:
		if b, ok := q.([]float64); ok {
			return maskLoop(k, out, a, b, z, numCmp[float64](k.Cmp))
		}
	case []float32:
		if b, ok := q.([]float32); ok {
			return maskLoop(k, out, a, b, z, numCmp[float32](k.Cmp))
		}
	}
	return errors.Errorf("kernel: maskMul: operand types %s and %s", typeName(p), typeName(q))
}

func numCmp[T num](op core.BinOp) func(a, b T) bool {
	switch op {
	case core.OpLt:
		return func(a, b T) bool { return a < b }
	case core.OpLe:
		return func(a, b T) bool { return a <= b }
	case core.OpGt:
		return func(a, b T) bool { return a > b }
	case core.OpGe:
		return func(a, b T) bool { return a >= b }
	case core.OpEq:
		return func(a, b T) bool { return a == b }
	}
	return func(a, b T) bool { return a != b }
}

func maskLoop[T num, F ~float64 | ~float32](k MaskMul, out []F, p, q []T, z []F, cmp func(a, b T) bool) error {
	if cmp == nil {
		return errors.Errorf("kernel: maskMul: comparison %v", k.Cmp)
	}
	n := len(k.Shape)
	if n == 0 {
		out[0] = z[k.Off[2]] * b2f[F](cmp(p[k.Off[0]], q[k.Off[1]]))
		return nil
	}
	last := k.Shape[n-1]
	sp, sq, sz := k.St[0][n-1], k.St[1][n-1], k.St[2][n-1]
	idx := make([]int, n-1)
	po, qo, zo := k.Off[0], k.Off[1], k.Off[2]
	for at := 0; at+last <= len(out) && last > 0; at += last {
		pi, qi, zi := po, qo, zo
		o := out[at : at+last]
		for j := range o {
			if cmp(p[pi], q[qi]) {
				o[j] = z[zi]
			} else {
				o[j] = z[zi] * 0
			}
			pi += sp
			qi += sq
			zi += sz
		}
		for d := n - 2; d >= 0; d-- {
			idx[d]++
			po += k.St[0][d]
			qo += k.St[1][d]
			zo += k.St[2][d]
			if idx[d] < k.Shape[d] {
				break
			}
			po -= k.St[0][d] * k.Shape[d]
			qo -= k.St[1][d] * k.Shape[d]
			zo -= k.St[2][d] * k.Shape[d]
			idx[d] = 0
		}
	}
	return nil
}

func b2f[F ~float64 | ~float32](b bool) F {
	if b {
		return 1
	}
	return 0
}
