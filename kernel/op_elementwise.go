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
	dst, x := bufOver(out), bufOver(ins[0])
	if dst == nil || x == nil || dst.length() != x.length() {
		return typeErr("cast", out, ins)
	}
	castKernel(dst.dtype(), x.dtype(), dst, x)
	return nil
}

// ---- element-wise ----

// Unary applies a unary operation element-wise in Go (for what Gorgonia lacks).
type Unary struct {
	Op core.UnOp
	VK *Vulkan
}

// Run implements Kernel.
func (k Unary) Run(out any, ins []any) error {
	if k.device(out, ins) || unaryBuf(k.Op, bufOver(out), bufOver(ins[0])) {
		return nil
	}
	return typeErr(k.Op.String(), out, ins)
}

// Binary applies a binary operation element-wise; an operand shorter than the output is
// read cyclically (the fused x op replicate n y).
type Binary struct {
	Op core.BinOp
	VK *Vulkan
}

// Run implements Kernel.
func (k Binary) Run(out any, ins []any) error {
	if k.device(out, ins) || binaryCyclic(k.Op, bufOver(out), bufOver(ins[0]), bufOver(ins[1])) {
		return nil
	}
	n, lx, ly := SliceLen(out), SliceLen(ins[0]), SliceLen(ins[1])
	if n != lx && n != ly || lx == 0 || ly == 0 || n%lx != 0 || n%ly != 0 {
		return errors.Errorf("kernel: element-wise: operand lengths %d and %d do not fit output length %d", lx, ly, n)
	}
	return typeErr(k.Op.String(), out, ins)
}

// binaryCyclic applies op with binaryBuf over blocks of the output: an operand shorter
// than the output (its length dividing the output's) is read cyclically. A short period is
// first tiled into a block of at least cyclicBlock elements, so the loops stay long.
func binaryCyclic(op core.BinOp, out, x, y *buf) bool {
	if out == nil || x == nil || y == nil {
		return false
	}
	n := out.length()
	if x.length() == n && y.length() == n {
		return binaryBuf(op, out, x, y)
	}
	short, long, shortIsX := y, x, false
	if y.length() == n {
		short, long, shortIsX = x, y, true
	}
	p := short.length()
	if long.length() != n || p == 0 || n%p != 0 {
		return false
	}
	if p < cyclicBlock {
		reps := max(1, min(n/p, cyclicBlock/p+1))
		for n/p%reps != 0 {
			reps--
		}
		short = short.tiled(reps)
	}
	if long.dtype() != short.dtype() || !binaryFits(op, out.dtype(), long.dtype()) {
		return false
	}
	if work := costOf(n, binaryWeight(op)); workers(n, work) > 1 {
		c := &cyclic{op: op, out: *out, long: *long, short: *short, shortIsX: shortIsX}
		inParallel(n, work, c.run)
		return true
	}
	c := cyclic{op: op, out: *out, long: *long, short: *short, shortIsX: shortIsX} // on the stack
	c.run(0, n)
	return true
}

// cyclic is a binary operation with one operand (short) read cyclically along the output
// (copies of the buffers, so that a split run does not make the caller's escape).
type cyclic struct {
	op               core.BinOp
	out, long, short buf
	shortIsX         bool
}

// run computes the output positions [lo, hi), a period (or the part of one) at a time.
func (c *cyclic) run(lo, hi int) {
	p := c.short.length()
	for at := lo; at < hi; {
		s := at % p
		end := min(hi, at-s+p)
		o, l, sh := c.out.sub(at, end), c.long.sub(at, end), c.short.sub(s, s+end-at) // on the stack: binaryRun keeps no pointer
		xs, ys := &l, &sh
		if c.shortIsX {
			xs, ys = &sh, &l
		}
		binaryRun(c.op, &o, xs, ys)
		at = end
	}
}

// cyclicBlock is the shortest block binaryCyclic runs the element-wise loops on.
const cyclicBlock = 256

// sub is the storage of elements [lo, hi) of v (shared, not copied).
func (v *buf) sub(lo, hi int) buf {
	return buf{typ: core.Type{Dtype: v.dtype()}, f64: part(v.f64, lo, hi), f32: part(v.f32, lo, hi), i64: part(v.i64, lo, hi), b: part(v.b, lo, hi)}
}

// tiled is a new buffer holding reps copies of v's elements.
func (v *buf) tiled(reps int) *buf {
	return &buf{typ: core.Type{Dtype: v.dtype()}, f64: repeat(v.f64, reps), f32: repeat(v.f32, reps), i64: repeat(v.i64, reps), b: repeat(v.b, reps)}
}

// part is s[lo:hi], or nil for a nil s (the unused storage slices of a buf).
func part[T any](s []T, lo, hi int) []T {
	if s == nil {
		return nil
	}
	return s[lo:hi]
}

// repeat is reps copies of s, or nil for a nil s.
func repeat[T any](s []T, reps int) []T {
	if s == nil {
		return nil
	}
	out := make([]T, 0, len(s)*reps)
	for range reps {
		out = append(out, s...)
	}
	return out
}

// arithFunc is op on one pair of elements of T, with the semantics of the slice loops
// (binaryArith, binaryFloat, binaryInt); nil when op is not an arithmetic operation of T.
// The common operations are static functions (staticArith): a kernel picks one per run.
func arithFunc[T numT](op core.BinOp) func(a, b T) T {
	var f func(a, b T) T
	switch op {
	case core.OpAdd:
		f = staticArith[T](addT[float64], addT[float32], addT[int64])
	case core.OpSub:
		f = staticArith[T](subT[float64], subT[float32], subT[int64])
	case core.OpMul:
		f = staticArith[T](mulT[float64], mulT[float32], mulT[int64])
	case core.OpMax:
		f = staticArith[T](maxOf[float64], maxOf[float32], maxOf[int64])
	case core.OpMin:
		f = staticArith[T](minOf[float64], minOf[float32], minOf[int64])
	case core.OpDiv:
		f = staticArith[T](divT[float64], divT[float32], nil) // ints: arithFuncRest
	}
	if f != nil {
		return f
	}
	return arithFuncRest[T](op)
}

// arithFuncRest is arithFunc for the operations that have no static function, and for a T
// that is not one of the three element types.
func arithFuncRest[T numT](op core.BinOp) func(a, b T) T {
	switch op {
	case core.OpAdd:
		return func(a, b T) T { return a + b }
	case core.OpSub:
		return func(a, b T) T { return a - b }
	case core.OpMul:
		return func(a, b T) T { return a * b }
	case core.OpMax:
		return maxOf[T]
	case core.OpMin:
		return minOf[T]
	}
	var z T
	if isIntType(z) {
		switch op {
		case core.OpQuot:
			return func(a, b T) T { return T(quotI(int64(a), int64(b))) }
		case core.OpRem:
			return func(a, b T) T { return T(remI(int64(a), int64(b))) }
		}
		return tableFunc2[T](op)
	}
	switch op {
	case core.OpDiv:
		return func(a, b T) T { return a / b }
	case core.OpPow:
		return func(a, b T) T { return T(math.Pow(float64(a), float64(b))) }
	case core.OpAtan2:
		return func(a, b T) T { return T(math.Atan2(float64(a), float64(b))) }
	}
	return tableFunc2[T](op)
}

// staticArith is the one of f64, f32 and i64 that is a function of T, or nil for another T.
// An instantiation with a concrete type is a static closure, where a function literal (or a
// generic function instantiated with T) inside a generic function captures its dictionary
// and allocates each time it is made.
func staticArith[T numT](f64 func(a, b float64) float64, f32 func(a, b float32) float32, i64 func(a, b int64) int64) func(a, b T) T {
	return staticFunc[T, func(a, b T) T](f64, f32, i64)
}

// staticCmp is staticArith for comparisons.
func staticCmp[T numT](f64 func(a, b float64) bool, f32 func(a, b float32) bool, i64 func(a, b int64) bool) func(a, b T) bool {
	return staticFunc[T, func(a, b T) bool](f64, f32, i64)
}

// staticFunc is the one of f64, f32 and i64 (functions of float64, float32 and int64) that is
// an F, chosen by T; the zero F for another T.
func staticFunc[T numT, F any](f64, f32, i64 any) F {
	var f any
	switch any(*new(T)).(type) {
	case float64:
		f = f64
	case float32:
		f = f32
	case int64:
		f = i64
	}
	g, _ := f.(F)
	return g
}

func addT[T numT](a, b T) T   { return a + b }
func subT[T numT](a, b T) T   { return a - b }
func mulT[T numT](a, b T) T   { return a * b }
func divT[T numT](a, b T) T   { return a / b }
func ltT[T numT](a, b T) bool { return a < b }
func leT[T numT](a, b T) bool { return a <= b }
func gtT[T numT](a, b T) bool { return a > b }
func geT[T numT](a, b T) bool { return a >= b }
func eqT[T numT](a, b T) bool { return a == b }
func neT[T numT](a, b T) bool { return a != b }

// cmpFunc is the comparison op on one pair of elements (NaN compares unequal); nil when op is
// not a comparison.
func cmpFunc[T numT](op core.BinOp) func(a, b T) bool {
	var f func(a, b T) bool
	switch op {
	case core.OpLt:
		f = staticCmp[T](ltT[float64], ltT[float32], ltT[int64])
	case core.OpLe:
		f = staticCmp[T](leT[float64], leT[float32], leT[int64])
	case core.OpGt:
		f = staticCmp[T](gtT[float64], gtT[float32], gtT[int64])
	case core.OpGe:
		f = staticCmp[T](geT[float64], geT[float32], geT[int64])
	case core.OpEq:
		f = staticCmp[T](eqT[float64], eqT[float32], eqT[int64])
	case core.OpNe:
		f = staticCmp[T](neT[float64], neT[float32], neT[int64])
	default:
		return nil
	}
	if f != nil {
		return f
	}
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

// boolFunc is a binary operation of booleans (and, or, ==, !=); nil for another.
func boolFunc(op core.BinOp) func(a, b bool) bool {
	switch op {
	case core.OpAnd:
		return func(a, b bool) bool { return a && b }
	case core.OpOr:
		return func(a, b bool) bool { return a || b }
	case core.OpEq:
		return func(a, b bool) bool { return a == b }
	case core.OpNe:
		return func(a, b bool) bool { return a != b }
	}
	return op.Facts().Bool
}

// StridedBinary is an element-wise binary operation whose operands are read through strides
// (0 along broadcast dimensions): the fused x op tr (replicate … y) and friends.
type StridedBinary struct {
	Op     core.BinOp
	Shape  []int
	XS, YS []int
	XO, YO int // offsets of the first element
	VK     *Vulkan
	// Scratch keeps the repeated rows of a short row operand between runs (nil: a new one
	// each run)
	Scratch *Scratch
}

// Merged is k over fewer, longer rows: dimensions of one element dropped, and each
// dimension merged into the next where both operands are contiguous across them (a
// broadcast operand, stride 0 along both, included), so a scalar broadcast over a whole array
// is one row. It computes the same elements in the same order.
func (k StridedBinary) Merged() StridedBinary {
	var d, xs, ys []int
	for i, n := range k.Shape {
		if n == 1 {
			continue
		}
		if m := len(d); m > 0 && xs[m-1] == k.XS[i]*n && ys[m-1] == k.YS[i]*n {
			d[m-1] *= n
			xs[m-1], ys[m-1] = k.XS[i], k.YS[i]
			continue
		}
		d, xs, ys = append(d, n), append(xs, k.XS[i]), append(ys, k.YS[i])
	}
	if len(d) == 0 && len(k.Shape) > 0 {
		d, xs, ys = []int{core.Shape(k.Shape).Size()}, []int{0}, []int{0}
	}
	m := k
	m.Shape, m.XS, m.YS = d, xs, ys
	return m
}

// Run implements Kernel.
func (k StridedBinary) Run(out any, ins []any) error {
	if err := checkOutLen(k.Op.String(), out, k.Shape); err != nil {
		return err
	}
	if k.device(out, ins) {
		return nil
	}
	var err error
	ok := true
	switch x := ins[0].(type) {
	case []float64:
		ok, err = stridedNum(k, out, x, ins[1])
	case []float32:
		ok, err = stridedNum(k, out, x, ins[1])
	case []int64:
		ok, err = stridedNum(k, out, x, ins[1])
	case []bool:
		y, ok1 := ins[1].([]bool)
		o, ok2 := out.([]bool)
		f := boolFunc(k.Op)
		if ok = ok1 && ok2 && f != nil; ok {
			err = stridedLoop(k, o, x, y, f)
		}
	default:
		ok = false
	}
	if !ok {
		return typeErr(k.Op.String(), out, ins)
	}
	return err
}

// stridedNum runs a numeric StridedBinary; false when the types do not fit the operation.
func stridedNum[T numT](k StridedBinary, out any, x []T, yv any) (bool, error) {
	y, ok := yv.([]T)
	if !ok {
		return false, nil
	}
	if k.Op.IsComparison() {
		o, ok := out.([]bool)
		if !ok {
			return false, nil
		}
		if n := len(k.Shape); n > 0 && rowsContiguous(k.XS[n-1], k.YS[n-1]) {
			stridedCmpRows(k, o, x, y)
			return true, nil
		}
		return true, stridedLoop(k, o, x, y, cmpFunc[T](k.Op))
	}
	o, ok := out.([]T)
	f := arithFunc[T](k.Op)
	if !ok || f == nil {
		return false, nil
	}
	if n := len(k.Shape); n > 0 && rowsContiguous(k.XS[n-1], k.YS[n-1]) {
		return true, stridedRows(k, o, x, y)
	}
	if stridedTiles(k, o, x, y, f) {
		return true, nil
	}
	return true, stridedLoop(k, o, x, y, f)
}

// rowsContiguous reports whether the innermost strides read each operand either as a
// contiguous row or as one element broadcast along the row.
func rowsContiguous(sx, sy int) bool { return (sx == 0 || sx == 1) && (sy == 0 || sy == 1) }

// stridedRows runs an arithmetic StridedBinary row by row with the element-wise slice loops
// (the operation chosen once per row, not called per element; this replaced a call through
// a function value per element, 17% of the attention step): a broadcast operand's element is
// first spread over a scratch row.
func stridedRows[T numT](k StridedBinary, out, x, y []T) error {
	work := costOf(len(out), binaryWeight(k.Op))
	if d, ok := splitDim(k.Shape, work); ok {
		inParallel(k.Shape[d], work, func(lo, hi int) {
			kp, p0, p1 := k.part(d, lo, hi)
			stridedRowsRun(kp, out[p0:p1], x, y)
		})
		return nil
	}
	stridedRowsRun(k, out, x, y)
	return nil
}

// part is k restricted to [lo, hi) along dimension d of its shape (see splitDim) and the
// range of output positions that part writes.
func (k StridedBinary) part(d, lo, hi int) (kp StridedBinary, p0, p1 int) {
	kp = k
	kp.Shape, p0, p1 = subDom(k.Shape, d, lo, hi)
	kp.XS, kp.YS = k.XS[d:], k.YS[d:]
	kp.XO += lo * k.XS[d]
	kp.YO += lo * k.YS[d]
	return kp, p0, p1
}

// stridedRowsRun is stridedRows on the calling goroutine.
func stridedRowsRun[T numT](k StridedBinary, out, x, y []T) {
	n := len(k.Shape)
	last := k.Shape[n-1]
	if last == 0 || stridedPairsRun(k, out, x, y) || repeatedRowsRun(k, out, x, y) {
		return
	}
	sx, sy := k.XS[n-1], k.YS[n-1]
	var spread []T
	row := func(v []T, off, s int) []T {
		if s == 1 {
			return v[off : off+last]
		}
		if spread == nil {
			spread = make([]T, last)
		}
		for j := range spread {
			spread[j] = v[off]
		}
		return spread
	}
	r := newRows(k.Shape, [3][]int{k.XS, k.YS}, [3]int{k.XO, k.YO})
	for p := 0; r.ok; p += last {
		o := out[p : p+last]
		xo, yo := r.off[0], r.off[1]
		switch {
		case sx == 0 && sy == 0:
			v := arithFunc[T](k.Op)(x[xo], y[yo])
			for j := range o {
				o[j] = v
			}
		case sy == 0 && scalarArith(k.Op, o, x[xo:xo+last], y[yo], false):
		case sx == 0 && scalarArith(k.Op, o, y[yo:yo+last], x[xo], true):
		default:
			sliceArith(k.Op, o, row(x, xo, sx), row(y, yo, sy))
		}
		r.next()
	}
}

// repRows is the length of the scratch row repeatedRowsRun repeats a short row into.
const repRows = 512

// repeatedRowsRun runs k when one operand is a row repeated along the second-innermost
// dimension (stride 0 there, contiguous along the row) and the other contiguous across those
// rows, with rows shorter than repRows/2 (a batch norm's per-channel scale of channels-last
// rows [b·h·w, c]): the row is repeated into a scratch of about repRows elements once per
// block, and the block runs in calls of the element-wise loop over that many elements (0.12 ns
// an element on [8192, 32] float32, hot, against 0.66 as one call per row of 32). It reports
// false (nothing done) otherwise.
func repeatedRowsRun[T numT](k StridedBinary, out, x, y []T) bool {
	n := len(k.Shape)
	if n < 2 {
		return false
	}
	last, n2 := k.Shape[n-1], k.Shape[n-2]
	if last < pairRowMax || 2*last > repRows || n2 < 2 || k.XS[n-1] != 1 || k.YS[n-1] != 1 {
		return false
	}
	xRep := k.XS[n-2] == 0 && k.YS[n-2] == last
	if !xRep && (k.YS[n-2] != 0 || k.XS[n-2] != last) {
		return false
	}
	per := repRows / last // rows a call
	rep, kept := numScratch[T](k.Scratch, per*last)
	if kept {
		defer k.Scratch.release()
	}
	r := newRows(k.Shape[:n-1], [3][]int{k.XS[:n-1], k.YS[:n-1]}, [3]int{k.XO, k.YO})
	block := n2 * last
	at := -1 // the offset of the row in rep
	for p := 0; r.ok; p += block {
		ro, co := r.off[1], r.off[0] // the repeated row's offset, the contiguous operand's
		src, con := y, x
		if xRep {
			ro, co, src, con = r.off[0], r.off[1], x, y
		}
		if ro != at {
			for i := 0; i < len(rep); i += last {
				copy(rep[i:i+last], src[ro:ro+last])
			}
			at = ro
		}
		for i := 0; i < block; i += len(rep) {
			m := min(len(rep), block-i)
			o, c := out[p+i:p+i+m], con[co+i:co+i+m]
			if xRep {
				sliceArith(k.Op, o, rep[:m], c)
			} else {
				sliceArith(k.Op, o, c, rep[:m])
			}
		}
		r.next()
	}
	return true
}

// scalarArith is dst = v op b (or b op v when left) for + - * / max min, reporting false for
// another operation (/ of integers is quot, with its own zero rule).
func scalarArith[T numT](op core.BinOp, dst, v []T, b T, left bool) bool {
	if op == core.OpDiv && isIntType(T(0)) {
		return false
	}
	v = v[:len(dst)]
	if done := simdScalar(op, dst, v, b, left); done > 0 {
		dst, v = dst[done:], v[done:]
	}
	switch {
	case op == core.OpAdd:
		for i, a := range v {
			dst[i] = a + b
		}
	case op == core.OpMul:
		for i, a := range v {
			dst[i] = a * b
		}
	case op == core.OpSub && !left:
		for i, a := range v {
			dst[i] = a - b
		}
	case op == core.OpSub:
		for i, a := range v {
			dst[i] = b - a
		}
	case op == core.OpDiv && !left:
		for i, a := range v {
			dst[i] = a / b
		}
	case op == core.OpDiv:
		for i, a := range v {
			dst[i] = b / a
		}
	case op == core.OpMax: // max and min commute (Go's: NaN wins, -0 < +0), so left does not matter
		for i, a := range v {
			dst[i] = maxOf(a, b)
		}
	case op == core.OpMin:
		for i, a := range v {
			dst[i] = minOf(a, b)
		}
	default:
		return false
	}
	return true
}

// sliceArith is dst = x op y for an arithmetic operation of T (equal lengths).
func sliceArith[T numT](op core.BinOp, dst, x, y []T) {
	switch d := any(dst).(type) {
	case []float64:
		binaryFloat(op, d, any(x).([]float64), any(y).([]float64))
	case []float32:
		binaryFloat(op, d, any(x).([]float32), any(y).([]float32))
	case []int64:
		binaryInt(op, d, any(x).([]int64), any(y).([]int64))
	}
}

func stridedLoop[T, U elem](k StridedBinary, out []U, x, y []T, f func(a, b T) U) error {
	// a call of f per element, and reads across rows unless both operands are rows
	w := max(wStrided, binaryWeight(k.Op))
	work := costOf(len(out), w)
	if d, ok := splitDim(k.Shape, work); ok {
		inParallel(k.Shape[d], work, func(lo, hi int) {
			kp, p0, p1 := k.part(d, lo, hi)
			stridedLoopRun(kp, out[p0:p1], x, y, f)
		})
		return nil
	}
	stridedLoopRun(k, out, x, y, f)
	return nil
}

// stridedLoopRun is stridedLoop on the calling goroutine.
func stridedLoopRun[T, U elem](k StridedBinary, out []U, x, y []T, f func(a, b T) U) {
	r := newRows(k.Shape, [3][]int{k.XS, k.YS}, [3]int{k.XO, k.YO})
	last, sx, sy := r.last, r.stride(0), r.stride(1)
	for p := 0; r.ok; p += last {
		o := out[p : p+last]
		xi, yi := r.off[0], r.off[1]
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
		r.next()
	}
}

// checkOutLen reports an error unless out holds exactly the elements of shape (the strided
// kernels walk the shape and write out row by row).
func checkOutLen(what string, out any, shape []int) error {
	if n, want := SliceLen(out), core.Shape(shape).Size(); n != want {
		return errors.Errorf("kernel: %s: output of %d elements for shape %v (%d elements)", what, n, shape, want)
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

// Merged is k with its dimensions of one element dropped and each dimension merged into the
// one before it where every operand steps through both as through one (what StridedBinary's
// Merged does): a contiguous mask over [32,32,28,28] runs as one row of 802816 elements
// instead of 32768 rows of 28. k is returned as it is when an operand has no strides.
func (k MaskMul) Merged() MaskMul {
	for _, st := range k.St {
		if len(st) != len(k.Shape) {
			return k
		}
	}
	var d []int
	var st [3][]int
	for i, n := range k.Shape {
		if n == 1 {
			continue
		}
		m := len(d)
		if m > 0 && st[0][m-1] == k.St[0][i]*n && st[1][m-1] == k.St[1][i]*n && st[2][m-1] == k.St[2][i]*n {
			d[m-1] *= n
			for o := range st {
				st[o][m-1] = k.St[o][i]
			}
			continue
		}
		d = append(d, n)
		for o := range st {
			st[o] = append(st[o], k.St[o][i])
		}
	}
	if len(d) == 0 && len(k.Shape) > 0 {
		d, st = []int{core.Shape(k.Shape).Size()}, [3][]int{{0}, {0}, {0}}
	}
	m := k
	m.Shape, m.St = d, st
	return m
}

// Run implements Kernel.
func (k MaskMul) Run(out any, ins []any) error {
	if err := checkOutLen("maskMul", out, k.Shape); err != nil {
		return err
	}
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
			return maskLoop(k, out, a, b, z, cmpFunc[int64](k.Cmp))
		}
	case []float64:
		if b, ok := q.([]float64); ok {
			return maskLoop(k, out, a, b, z, cmpFunc[float64](k.Cmp))
		}
	case []float32:
		if b, ok := q.([]float32); ok {
			return maskLoop(k, out, a, b, z, cmpFunc[float32](k.Cmp))
		}
	}
	return errors.Errorf("kernel: maskMul: operand types %s and %s", typeName(p), typeName(q))
}

func maskLoop[T num, F ~float64 | ~float32](k MaskMul, out []F, p, q []T, z []F, cmp func(a, b T) bool) error {
	if cmp == nil {
		return errors.Errorf("kernel: maskMul: comparison %v", k.Cmp)
	}
	work := costOf(len(out), wStrided) // a call of cmp per element
	if d, ok := splitDim(k.Shape, work); ok {
		kc := k // a copy: captured, k would escape on every call
		inParallel(k.Shape[d], work, func(lo, hi int) {
			kp, p0, p1 := kc.part(d, lo, hi)
			maskRun(kp, out[p0:p1], p, q, z, cmp)
		})
		return nil
	}
	maskRun(k, out, p, q, z, cmp)
	return nil
}

// part is k restricted to [lo, hi) along dimension d of its shape (see splitDim) and the
// range of output positions that part writes.
func (k MaskMul) part(d, lo, hi int) (kp MaskMul, p0, p1 int) {
	kp = k
	kp.Shape, p0, p1 = subDom(k.Shape, d, lo, hi)
	for i, st := range k.St {
		if st != nil {
			kp.St[i] = st[d:]
			kp.Off[i] += lo * st[d]
		}
	}
	return kp, p0, p1
}

// maskRun is maskLoop on the calling goroutine.
func maskRun[T num, F ~float64 | ~float32](k MaskMul, out []F, p, q []T, z []F, cmp func(a, b T) bool) {
	if maskPairs(k, out, p, q, z) {
		return
	}
	r := newRows(k.Shape, k.St, k.Off)
	sp, sq, sz := r.stride(0), r.stride(1), r.stride(2)
	contiguous := sp == 1 && sz == 1 && (sq == 0 || sq == 1)
	for at := 0; r.ok; at += r.last {
		pi, qi, zi := r.off[0], r.off[1], r.off[2]
		o := out[at : at+r.last]
		if contiguous && maskRow(k.Cmp, o, p[pi:pi+len(o)], q[qi:], sq == 0, z[zi:zi+len(o)]) ||
			!contiguous && maskRowStrided(k.Cmp, o, p, q, z, pi, qi, zi, sp, sq, sz) {
			r.next()
			continue
		}
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
		r.next()
	}
}

// maskRow is one contiguous row of a MaskMul, o[j] = z[j] · (p[j] cmp q[j]) (q[0] for every j
// when bcast), without a call or a data-dependent branch per element: the comparison becomes
// an index (a flag set, not a jump: ReLU masks are unpredictable) into {0, 1}, which multiplies z, keeping
// z·0's NaN and signed zero. It reports false for a comparison it has no loop for.
func maskRow[T num, F ~float64 | ~float32](cmp core.BinOp, o []F, p, q []T, bcast bool, z []F) bool {
	sel := [2]F{0, 1}
	if bcast {
		b := q[0]
		if done := simdMask(cmp, o, p, b, z); done > 0 {
			o, p, z = o[done:], p[done:], z[done:]
		}
		switch cmp {
		case core.OpGt:
			for j, x := range p {
				o[j] = z[j] * sel[b2i(x > b)]
			}
		case core.OpGe:
			for j, x := range p {
				o[j] = z[j] * sel[b2i(x >= b)]
			}
		case core.OpLt:
			for j, x := range p {
				o[j] = z[j] * sel[b2i(x < b)]
			}
		case core.OpLe:
			for j, x := range p {
				o[j] = z[j] * sel[b2i(x <= b)]
			}
		default:
			return false
		}
		return true
	}
	q = q[:len(p)]
	switch cmp {
	case core.OpGt:
		for j, x := range p {
			o[j] = z[j] * sel[b2i(x > q[j])]
		}
	case core.OpGe:
		for j, x := range p {
			o[j] = z[j] * sel[b2i(x >= q[j])]
		}
	case core.OpLt:
		for j, x := range p {
			o[j] = z[j] * sel[b2i(x < q[j])]
		}
	case core.OpLe:
		for j, x := range p {
			o[j] = z[j] * sel[b2i(x <= q[j])]
		}
	default:
		return false
	}
	return true
}

// maskRowStrided is maskRow for operands read through strides (a transposed view: Gorgonia's
// channels-last convolution output read channels-first), the comparison inlined and no branch
// per element; false for a comparison it has no loop for.
func maskRowStrided[T num, F ~float64 | ~float32](cmp core.BinOp, o []F, p, q []T, z []F, pi, qi, zi, sp, sq, sz int) bool {
	sel := [2]F{0, 1}
	switch cmp {
	case core.OpGt:
		for j := range o {
			o[j] = z[zi] * sel[b2i(p[pi] > q[qi])]
			pi, qi, zi = pi+sp, qi+sq, zi+sz
		}
	case core.OpGe:
		for j := range o {
			o[j] = z[zi] * sel[b2i(p[pi] >= q[qi])]
			pi, qi, zi = pi+sp, qi+sq, zi+sz
		}
	case core.OpLt:
		for j := range o {
			o[j] = z[zi] * sel[b2i(p[pi] < q[qi])]
			pi, qi, zi = pi+sp, qi+sq, zi+sz
		}
	case core.OpLe:
		for j := range o {
			o[j] = z[zi] * sel[b2i(p[pi] <= q[qi])]
			pi, qi, zi = pi+sp, qi+sq, zi+sz
		}
	default:
		return false
	}
	return true
}
