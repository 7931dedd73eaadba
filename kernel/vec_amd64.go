//go:build amd64 && !purego

package kernel

import (
	"unsafe"

	"github.com/bulkad/bulkad/core"
	"golang.org/x/sys/cpu"
)

// hasVec reports whether the element-wise loops of gemm_amd64.s (AVX2) run on this CPU: read
// once when the package is initialised, never written after.
var hasVec = cpu.X86.HasAVX2

// vecMin is the length from which an element-wise loop calls the assembly.
const vecMin = 8

// simdBinary computes dst[i] = x[i] op y[i] (+ − · ÷ max min, float) for the leading elements that
// fill whole vectors, with the AVX2 loops, and returns how many it did (0 when it does not
// apply: another operation or dtype, a short slice, no AVX2, partly overlapping slices). The
// caller computes the rest. x and y hold at least len(dst) elements.
func simdBinary[T numT](op core.BinOp, dst, x, y []T) int {
	n := len(dst)
	if !hasVec || n < vecMin {
		return 0
	}
	switch d := any(dst).(type) {
	case []float32:
		xs, ys := any(x).([]float32)[:n], any(y).([]float32)[:n]
		if overlapsPartly(d, xs) || overlapsPartly(d, ys) {
			return 0
		}
		f := map4(op, vecAddVVF32, vecSubVVF32, vecMulVVF32, vecDivVVF32, vecMaxVVF32, vecMinVVF32)
		if f == nil {
			return 0
		}
		f(&d[0], &xs[0], &ys[0], n)
		return n &^ 7
	case []float64:
		xs, ys := any(x).([]float64)[:n], any(y).([]float64)[:n]
		if overlapsPartly(d, xs) || overlapsPartly(d, ys) {
			return 0
		}
		f := map4(op, vecAddVVF64, vecSubVVF64, vecMulVVF64, vecDivVVF64, vecMaxVVF64, vecMinVVF64)
		if f == nil {
			return 0
		}
		f(&d[0], &xs[0], &ys[0], n)
		return n &^ 3
	}
	return 0
}

// simdArgmax4 sets o[j] to the argmax of the 2×2 window (xs[a+2j], xs[a+2j+1], xs[b+2j],
// xs[b+2j+1]) as argmaxKeysRow does, for float32 and the leading j below len(o) rounded down
// to 4, and returns how many it did.
func simdArgmax4[T floatT](o []int64, xs []T, a, b int) int {
	n := len(o) &^ 3
	x, ok := any(xs).([]float32)
	if !hasVec || !ok || n == 0 {
		return 0
	}
	_, _ = x[a+2*n-1], x[b+2*n-1] // in bounds: the kernel reads 2n elements from each
	argmax4F32(&o[0], &x[a], &x[b], n)
	return n
}

// simdFill sets the leading elements of dst to v, as many as whole vectors hold, and
// returns how many.
func simdFill[T floatT](dst []T, v T) int {
	n := len(dst)
	if !hasVec || n < vecMin {
		return 0
	}
	switch d := any(dst).(type) {
	case []float32:
		vecFillF32(&d[0], any(v).(float32), n)
		return n &^ 7
	case []float64:
		vecFillF64(&d[0], any(v).(float64), n)
		return n &^ 3
	}
	return 0
}

// simdNeg computes dst[i] = -x[i] like simdBinary.
func simdNeg[T floatT](dst, x []T) int {
	n := len(dst)
	if !hasVec || n < vecMin {
		return 0
	}
	switch d := any(dst).(type) {
	case []float32:
		xs := any(x).([]float32)[:n]
		if overlapsPartly(d, xs) {
			return 0
		}
		vecNegF32(&d[0], &xs[0], n)
		return n &^ 7
	case []float64:
		xs := any(x).([]float64)[:n]
		if overlapsPartly(d, xs) {
			return 0
		}
		vecNegF64(&d[0], &xs[0], n)
		return n &^ 3
	}
	return 0
}

// simdScalar computes dst[i] = v[i] op s (s op v[i] when left) like simdBinary.
func simdScalar[T numT](op core.BinOp, dst, v []T, s T, left bool) int {
	n := len(dst)
	if !hasVec || n < vecMin {
		return 0
	}
	switch d := any(dst).(type) {
	case []float32:
		vs := any(v).([]float32)[:n]
		if overlapsPartly(d, vs) {
			return 0
		}
		f := map6(op, left, vecAddVSF32, vecSubVSF32, vecRsubVSF32, vecMulVSF32, vecDivVSF32, vecRdivVSF32, vecMaxVSF32, vecMinVSF32)
		if f == nil {
			return 0
		}
		f(&d[0], &vs[0], any(s).(float32), n)
		return n &^ 7
	case []float64:
		vs := any(v).([]float64)[:n]
		if overlapsPartly(d, vs) {
			return 0
		}
		f := map6(op, left, vecAddVSF64, vecSubVSF64, vecRsubVSF64, vecMulVSF64, vecDivVSF64, vecRdivVSF64, vecMaxVSF64, vecMinVSF64)
		if f == nil {
			return 0
		}
		f(&d[0], &vs[0], any(s).(float64), n)
		return n &^ 3
	}
	return 0
}

// map4 picks the loop of op among + − · ÷ max min; nil for another operation.
func map4[F any](op core.BinOp, add, sub, mul, div, mx, mn F) F {
	switch op {
	case core.OpMax:
		return mx
	case core.OpMin:
		return mn
	case core.OpAdd:
		return add
	case core.OpSub:
		return sub
	case core.OpMul:
		return mul
	case core.OpDiv:
		return div
	}
	var none F
	return none
}

// map6 picks the loop of v op s (s op v when left) among + − · ÷ max min (which commute, as
// scalarArith has them: v op s on either side); nil for another operation.
func map6[F any](op core.BinOp, left bool, add, sub, rsub, mul, div, rdiv, mx, mn F) F {
	switch {
	case op == core.OpMax:
		return mx
	case op == core.OpMin:
		return mn
	case op == core.OpAdd:
		return add
	case op == core.OpMul:
		return mul
	case op == core.OpSub && left:
		return rsub
	case op == core.OpSub:
		return sub
	case op == core.OpDiv && left:
		return rdiv
	case op == core.OpDiv:
		return div
	}
	var none F
	return none
}

// simdBool sets dst[i] = 1 where src[i] and 0 elsewhere (float32, float64) for the leading
// elements that fill whole vectors, and returns how many it did (0: another dtype, a short
// slice, no AVX2). src holds at least len(dst) elements.
func simdBool[T numT](dst []T, src []bool) int {
	n := len(dst)
	if !hasVec || n < vecMin {
		return 0
	}
	src = src[:n]
	switch d := any(dst).(type) {
	case []float32:
		vecBoolF32(&d[0], &src[0], n)
		return n &^ 7
	case []float64:
		vecBoolF64(&d[0], &src[0], n)
		return n &^ 3
	}
	return 0
}

// simdMask sets o[j] = z[j] · (1 if p[j] cmp q else 0) (cmp one of > ≥ < ≤; p, z and o of one
// float dtype) for the leading elements that fill whole vectors, and returns how many it did
// (0 when it does not apply). p and z hold at least len(o) elements; o may be z or p itself
// but must not overlap them otherwise.
func simdMask[T num, F ~float64 | ~float32](cmp core.BinOp, o []F, p []T, q T, z []F) int {
	n := len(o)
	if !hasVec || n < vecMin {
		return 0
	}
	switch d := any(o).(type) {
	case []float32:
		ps, ok := any(p).([]float32)
		if !ok {
			return 0
		}
		ps, zs := ps[:n], any(z).([]float32)[:n]
		f := mapCmp(cmp, vecMaskGtF32, vecMaskGeF32, vecMaskLtF32, vecMaskLeF32)
		if f == nil || overlapsPartly(d, ps) || overlapsPartly(d, zs) {
			return 0
		}
		f(&d[0], &ps[0], &zs[0], any(q).(float32), n)
		return n &^ 7
	case []float64:
		ps, ok := any(p).([]float64)
		if !ok {
			return 0
		}
		ps, zs := ps[:n], any(z).([]float64)[:n]
		f := mapCmp(cmp, vecMaskGtF64, vecMaskGeF64, vecMaskLtF64, vecMaskLeF64)
		if f == nil || overlapsPartly(d, ps) || overlapsPartly(d, zs) {
			return 0
		}
		f(&d[0], &ps[0], &zs[0], any(q).(float64), n)
		return n &^ 3
	}
	return 0
}

// mapCmp picks the loop of cmp among > ≥ < ≤; nil for another comparison.
func mapCmp[F any](cmp core.BinOp, gt, ge, lt, le F) F {
	switch cmp {
	case core.OpGt:
		return gt
	case core.OpGe:
		return ge
	case core.OpLt:
		return lt
	case core.OpLe:
		return le
	}
	var none F
	return none
}

// hasCmp reports whether the comparison loops (AVX2 and BMI2's PDEP) run on this CPU: read
// once when the package is initialised, never written after.
var hasCmp = cpu.X86.HasAVX2 && cpu.X86.HasBMI2

// simdCmp sets o[j] = x[j] cmp s (float32, float64; any comparison) for the leading elements
// that fill whole vectors, and returns how many it did (0 when it does not apply).
func simdCmp[T numT](op core.BinOp, o []bool, x []T, s T) int {
	n := len(o)
	if !hasCmp || n < vecMin {
		return 0
	}
	switch xs := any(x).(type) {
	case []float32:
		xs = xs[:n]
		f := mapCmp6(op, vecCmpLtVSF32, vecCmpLeVSF32, vecCmpGtVSF32, vecCmpGeVSF32, vecCmpEqVSF32, vecCmpNeVSF32)
		if f == nil {
			return 0
		}
		f(&o[0], &xs[0], any(s).(float32), n)
		return n &^ 7
	case []float64:
		xs = xs[:n]
		f := mapCmp6(op, vecCmpLtVSF64, vecCmpLeVSF64, vecCmpGtVSF64, vecCmpGeVSF64, vecCmpEqVSF64, vecCmpNeVSF64)
		if f == nil {
			return 0
		}
		f(&o[0], &xs[0], any(s).(float64), n)
		return n &^ 3
	}
	return 0
}

// mapCmp6 picks the loop of a comparison; nil for another operation.
func mapCmp6[F any](op core.BinOp, lt, le, gt, ge, eq, ne F) F {
	switch op {
	case core.OpLt:
		return lt
	case core.OpLe:
		return le
	case core.OpGt:
		return gt
	case core.OpGe:
		return ge
	case core.OpEq:
		return eq
	case core.OpNe:
		return ne
	}
	var none F
	return none
}

// simdAxpy sets dst[i] += x[i]·s (the product rounded before the sum, as Go's scalar d += x*s)
// for the leading elements that fill whole vectors, and returns how many it did (0 when it does
// not apply). x holds at least len(dst) elements and must not overlap dst.
func simdAxpy[T floatT](dst, x []T, s T) int {
	n := len(dst)
	if !hasVec || n < vecMin {
		return 0
	}
	switch d := any(dst).(type) {
	case []float32:
		xs := any(x).([]float32)[:n]
		if overlapsPartly(d, xs) || &d[0] == &xs[0] {
			return 0
		}
		vecAxpyF32(&d[0], &xs[0], any(s).(float32), n)
		return n &^ 7
	case []float64:
		xs := any(x).([]float64)[:n]
		if overlapsPartly(d, xs) || &d[0] == &xs[0] {
			return 0
		}
		vecAxpyF64(&d[0], &xs[0], any(s).(float64), n)
		return n &^ 3
	}
	return 0
}

// addRowsVec adds h rows of w float elements of src (one after another) into xp, s apart
// from offset o, in one assembly call (addRows: the whole vectors of every row, then the
// rest one element at a time; xp[o+i·s+j] + src[i·w+j]: the bits of Go's d += v); false when
// it does not apply (no AVX2, another dtype, rows shorter than a vector). xp and src must not
// overlap.
func addRowsVec[T floatT](xp, src []T, o, h, s, w int) bool {
	return rowsVec(xp, src, o, h, s, w, true)
}

// copyRowsVec is addRowsVec copying the rows (copyRows) instead of adding them.
func copyRowsVec[T floatT](xp, src []T, o, h, s, w int) bool {
	return rowsVec(xp, src, o, h, s, w, false)
}

// rowsVec is addRowsVec (add) or copyRowsVec.
func rowsVec[T floatT](xp, src []T, o, h, s, w int, add bool) bool {
	if !hasVec || w < vecMin || h == 0 {
		return h == 0
	}
	switch d := any(xp).(type) {
	case []float32:
		x := any(src).([]float32)
		n := w &^ 7
		_, _ = d[o+(h-1)*s+w-1], x[h*w-1]
		if add { // direct calls, not a function value: the slices do not escape
			addRowsF32(&d[o], s, &x[0], w, h, n/8, w-n) // every row in one call
		} else {
			copyRowsF32(&d[o], s, &x[0], w, h, n/8, w-n)
		}
	case []float64:
		x := any(src).([]float64)
		n := w &^ 3
		_, _ = d[o+(h-1)*s+w-1], x[h*w-1]
		if add {
			addRowsF64(&d[o], s, &x[0], w, h, n/4, w-n)
		} else {
			copyRowsF64(&d[o], s, &x[0], w, h, n/4, w-n)
		}
	default:
		return false
	}
	return true
}

// rowScalarsVec is rowScalars (rows of last elements of v, row i from vo + i·sv2, against
// s[so + i·ss2]; s op v when left) with one call of the AVX2 loop per row, for float rows
// that are whole vectors (a multiple of 8 float32s or 4 float64s); false when it does not
// apply (no AVX2, another dtype or length, o and v sharing memory other than row for row).
func rowScalarsVec[T numT](op core.BinOp, o, v, s []T, vo, so, sv2, ss2, last int, left bool) bool {
	if !hasVec || last == 0 {
		return false
	}
	switch d := any(o).(type) {
	case []float32:
		f := map6(op, left, vecAddVSF32, vecSubVSF32, vecRsubVSF32, vecMulVSF32, vecDivVSF32, vecRdivVSF32, vecMaxVSF32, vecMinVSF32)
		return rowScalarsWith(f, 8, d, any(v).([]float32), any(s).([]float32), vo, so, sv2, ss2, last)
	case []float64:
		f := map6(op, left, vecAddVSF64, vecSubVSF64, vecRsubVSF64, vecMulVSF64, vecDivVSF64, vecRdivVSF64, vecMaxVSF64, vecMinVSF64)
		return rowScalarsWith(f, 4, d, any(v).([]float64), any(s).([]float64), vo, so, sv2, ss2, last)
	}
	return false
}

// rowScalarsWith is rowScalarsVec with the vector loop f (rows a multiple of lanes).
func rowScalarsWith[F float32 | float64](f func(dst, v *F, s F, n int), lanes int, d, vs, ss []F, vo, so, sv2, ss2, last int) bool {
	if last%lanes != 0 || f == nil || !rowsApart(d, vs, vo, sv2, last) {
		return false
	}
	for i := range len(d) / last {
		r, a := d[i*last:(i+1)*last], vs[vo+i*sv2:vo+i*sv2+last]
		f(&r[0], &a[0], ss[so+i*ss2], last)
	}
	return true
}

// rowsApart reports whether writing rows of o (one after another) never overwrites a later
// row of v (row i from vo + i·sv2) before it is read: o and v do not share memory, or o is v
// row for row (an operation in place).
func rowsApart[T floatT](o, v []T, vo, sv2, last int) bool {
	if len(o) == 0 || len(v) == 0 {
		return true
	}
	size := unsafe.Sizeof(o[0])
	po, pv := uintptr(unsafe.Pointer(unsafe.SliceData(o))), uintptr(unsafe.Pointer(unsafe.SliceData(v)))
	if po+uintptr(len(o))*size <= pv || pv+uintptr(len(v))*size <= po {
		return true
	}
	return po == pv && vo == 0 && sv2 == last
}

// axpyPlane is axpyUnit (d[t] += s[t]·v, the product rounded first) for slices the caller
// knows do not share memory (a depthwise plane's padded and dense buffers), calling the AVX2
// loop directly: 25 taps on a 4×4 map spent as long in simdAxpy's checks as in the loop.
func axpyPlane[T floatT](d, s []T, v T) {
	s = s[:len(d)]
	t := 0
	if hasVec {
		switch dd := any(d).(type) {
		case []float32:
			if t = len(d) &^ 7; t > 0 {
				vecAxpyF32(&dd[0], &any(s).([]float32)[0], any(v).(float32), t)
			}
		case []float64:
			if t = len(d) &^ 3; t > 0 {
				vecAxpyF64(&dd[0], &any(s).([]float64)[0], any(v).(float64), t)
			}
		}
	}
	for ; t < len(d); t++ {
		d[t] += T(s[t] * v)
	}
}

// simdColSum adds the column sums of x's rows (rows of them, ldx elements apart) into dst for
// the leading columns that fill whole vectors (dst[j] += x[j] + x[ldx+j] + …, each column
// summed in the order of the rows, as the scalar loop), four vectors of columns a pass over
// the rows, and returns how many columns it did (0 when it does not apply: no AVX2, another
// dtype, fewer columns than a vector). x holds at least (rows-1)·ldx + len(dst) elements and
// must not overlap dst.
func simdColSum[T numT](dst, x []T, ldx, rows int) int {
	if !hasVec || rows <= 0 {
		return 0
	}
	switch d := any(dst).(type) {
	case []float32:
		xs := any(x).([]float32)
		return colSumVec(d, xs, ldx, rows, 8, [8]func(*float32, *float32, int, int){colSum1F32, colSum2F32, colSum3F32, colSum4F32, colSum5F32, colSum6F32, colSum7F32, colSum8F32})
	case []float64:
		xs := any(x).([]float64)
		return colSumVec(d, xs, ldx, rows, 4, [8]func(*float64, *float64, int, int){colSum1F64, colSum2F64, colSum3F64, colSum4F64, colSum5F64, colSum6F64, colSum7F64, colSum8F64})
	}
	return 0
}

// colSumVec is simdColSum for one float type: lanes elements a vector, f[k-1] the kernel of k
// vectors (up to eight in one pass over the rows: 32 float64 channels of a batch norm were
// two passes, 110 µs a sum of 8192 rows, four times float32's).
func colSumVec[F float32 | float64](d, x []F, ldx, rows, lanes int, f [8]func(*F, *F, int, int)) int {
	n := len(d) - len(d)%lanes
	if n == 0 || len(x) < (rows-1)*ldx+len(d) {
		return 0
	}
	for j := 0; j < n; {
		k := min((n-j)/lanes, 8)
		f[k-1](&d[j], &x[j], ldx, rows)
		j += k * lanes
	}
	return n
}

// transposeTileVec writes out[oo + i·oa + j] = x[xo + i + j·sb] for i < ni, j < nj (a tile of a
// transposition: x's rows sb apart, out's rows oa apart) with the AVX block transpositions,
// 8×8 float32 or 4×4 float64 at a time, the edges element by element; false (nothing done)
// without AVX2, for another dtype, or when the tile does not lie within out and x.
func transposeTileVec[T elem](out []T, oo, oa int, x []T, xo, sb, ni, nj int) bool {
	if !hasVec || ni <= 0 || nj <= 0 || oa <= 0 || sb <= 0 || oo < 0 || xo < 0 ||
		oo+(ni-1)*oa+nj > len(out) || xo+(nj-1)*sb+ni > len(x) {
		return false
	}
	switch o := any(out).(type) {
	case []float32:
		transposeBlocks(o, oo, oa, any(x).([]float32), xo, sb, ni, nj, 8)
	case []float64:
		transposeBlocks(o, oo, oa, any(x).([]float64), xo, sb, ni, nj, 4)
	default:
		return false
	}
	return true
}

// transposeBlocks is transposeTileVec for one float type: b×b blocks by transposeBlock*,
// the rest one by one (the tile was checked to lie within out and x). The block kernels are
// called directly, not through a function value, so that x and out do not escape (a tile on
// the caller's stack stays there).
func transposeBlocks[F float32 | float64](out []F, oo, oa int, x []F, xo, sb, ni, nj, b int) {
	bi, bj := ni-ni%b, nj-nj%b
	for i := 0; i < bi; i += b {
		for j := 0; j < bj; j += b {
			d, s := &out[oo+i*oa+j], &x[xo+j*sb+i]
			switch d := any(d).(type) {
			case *float32:
				transposeBlockF32(d, oa, any(s).(*float32), sb)
			case *float64:
				transposeBlockF64(d, oa, any(s).(*float64), sb)
			}
		}
		for j := bj; j < nj; j++ {
			for ii := i; ii < i+b; ii++ {
				out[oo+ii*oa+j] = x[xo+ii+j*sb]
			}
		}
	}
	for i := bi; i < ni; i++ {
		for j := 0; j < nj; j++ {
			out[oo+i*oa+j] = x[xo+i+j*sb]
		}
	}
}

// mulAddRepVec adds x[j]·y[r·n + j] (rounded, then added) into dst[r·n + j] for r < reps and
// j < n: the whole vectors of every row in one assembly call, the rest of each row here. It
// reports false (nothing done) without AVX2 or for a T it has no kernel for.
func mulAddRepVec[T floatT](dst, x, y []T, n, reps int) bool {
	if !hasVec || n < vecMin || reps <= 0 {
		return false
	}
	_, _, _ = dst[reps*n-1], x[n-1], y[reps*n-1]
	var lanes int
	switch d := any(dst).(type) {
	case []float32:
		lanes = 8
		mulAddRepF32(&d[0], &any(x).([]float32)[0], &any(y).([]float32)[0], n, reps)
	case []float64:
		lanes = 4
		mulAddRepF64(&d[0], &any(x).([]float64)[0], &any(y).([]float64)[0], n, reps)
	default:
		return false
	}
	for r := 0; n%lanes != 0 && r < reps; r++ {
		for j := n - n%lanes; j < n; j++ {
			dst[r*n+j] += T(x[j] * y[r*n+j])
		}
	}
	return true
}

// axpyTapsVec adds w[3·kh + kw]·x[j] (rounded, then added) into dst[kh·rs + kw + j] for the
// nine taps (kh = 0…2, kw = 2…0) and j < n in one assembly call (axpyTaps); false (nothing
// done) without AVX2 or for rows shorter than a vector.
func axpyTapsVec[T floatT](dst []T, rs int, x, w []T, n int) bool {
	if !hasVec || n < vecMin {
		return false
	}
	_, _, _ = dst[2*rs+2+n-1], x[n-1], w[8]
	switch d := any(dst).(type) {
	case []float32:
		axpyTapsF32(&d[0], rs, &any(x).([]float32)[0], &any(w).([]float32)[0], n)
	case []float64:
		axpyTapsF64(&d[0], rs, &any(x).([]float64)[0], &any(w).([]float64)[0], n)
	default:
		return false
	}
	return true
}

// reduceTaps9Vec adds x[p·xs + ch]·y[p·ys + 9·ch + t] (rounded, then added) into o[9·ch + t]
// for p < points, ch < c and the nine taps t, point after point, in one assembly call
// (reduceTaps9); false (nothing done) without AVX2, for negative strides or no work.
func reduceTaps9Vec[T floatT](o, x, y []T, c, points, xs, ys int) bool {
	if !hasVec || c <= 0 || points <= 0 || xs < 0 || ys < 0 {
		return false
	}
	_, _, _ = o[9*c-1], x[(points-1)*xs+c-1], y[(points-1)*ys+9*c-1]
	switch d := any(o).(type) {
	case []float32:
		reduceTaps9F32(&d[0], &any(x).([]float32)[0], &any(y).([]float32)[0], c, points, xs, ys)
	case []float64:
		reduceTaps9F64(&d[0], &any(x).([]float64)[0], &any(y).([]float64)[0], c, points, xs, ys)
	default:
		return false
	}
	return true
}

// winDotWidth is the number of elements of a row winDotVec computes for a product whose
// other dimension is n: two AVX-512 vectors when n needs more than one, else one; one AVX2
// vector without AVX-512; 0 without either (winDotVec does nothing: the caller loops in Go).
func winDotWidth[T floatT](n int) int {
	lanes := 32 / int(unsafe.Sizeof(T(0)))
	switch {
	case cpu.X86.HasAVX512F:
		if n > 2*lanes {
			return 4 * lanes
		}
		return 2 * lanes
	case hasVec && cpu.X86.HasFMA:
		return lanes
	}
	return 0
}

// winDotVec stores into the 8 rows of o (ldo apart) the w-element sums over t < steps of
// x[tab[t]+idx[i]]·v[t·ldv : t·ldv+w] (winDot*: fused multiply-adds in order of t), w from
// winDotWidth; false (nothing done) when w is not a width it has. The caller has checked that
// every tab[t]+idx[i] is an index of x.
func winDotVec[T floatT](steps int, tab []int64, x []T, idx *[8]int64, v []T, ldv int, o []T, ldo, w int) bool {
	if steps <= 0 || w <= 0 {
		return false
	}
	_, _, _ = tab[steps-1], v[(steps-1)*ldv+w-1], o[7*ldo+w-1]
	lanes := 32 / int(unsafe.Sizeof(T(0)))
	switch x := any(x).(type) {
	case []float32:
		v, o := any(v).([]float32), any(o).([]float32)
		switch w {
		case lanes:
			winDotF32Y1(steps, &tab[0], &x[0], idx, &v[0], ldv, &o[0], ldo)
		case 2 * lanes:
			winDotF32Z1(steps, &tab[0], &x[0], idx, &v[0], ldv, &o[0], ldo)
		case 4 * lanes:
			winDotF32Z2(steps, &tab[0], &x[0], idx, &v[0], ldv, &o[0], ldo)
		default:
			return false
		}
	case []float64:
		v, o := any(v).([]float64), any(o).([]float64)
		switch w {
		case lanes:
			winDotF64Y1(steps, &tab[0], &x[0], idx, &v[0], ldv, &o[0], ldo)
		case 2 * lanes:
			winDotF64Z1(steps, &tab[0], &x[0], idx, &v[0], ldv, &o[0], ldo)
		case 4 * lanes:
			winDotF64Z2(steps, &tab[0], &x[0], idx, &v[0], ldv, &o[0], ldo)
		default:
			return false
		}
	default:
		return false
	}
	return true
}

// dwWidth is the number of channels dwForwardVec and dwFilterVec take at once: an AVX-512
// vector, an AVX2 vector without AVX-512, 0 without either.
func dwWidth[T floatT]() int {
	lanes := 32 / int(unsafe.Sizeof(T(0)))
	switch {
	case cpu.X86.HasAVX512F:
		return 2 * lanes
	case hasVec:
		return lanes
	}
	return 0
}

// dwForwardVec is dwForward* for w channels (an AVX2 vector, or with AVX-512 two): o[p·ldo …] = Σ_t x[utab[p]+vt[t] …]·
// f[t·ldf …] for p < len(utab); false (nothing done) for another width. The caller has
// checked every index.
func dwForwardVec[T floatT](utab []int64, x []T, vt []int64, f []T, ldf int, o []T, ldo, w int) bool {
	avx512, ok := dwVecWidth[T](w)
	if !ok || len(utab) == 0 || len(vt) == 0 {
		return false
	}
	switch x := any(x).(type) {
	case []float32:
		f, o := any(f).([]float32), any(o).([]float32)
		if avx512 {
			dwForwardF32Z(len(utab), &utab[0], &x[0], &vt[0], len(vt), &f[0], ldf, &o[0], ldo)
		} else {
			dwForwardF32Y(len(utab), &utab[0], &x[0], &vt[0], len(vt), &f[0], ldf, &o[0], ldo)
		}
	case []float64:
		f, o := any(f).([]float64), any(o).([]float64)
		if avx512 {
			dwForwardF64Z(len(utab), &utab[0], &x[0], &vt[0], len(vt), &f[0], ldf, &o[0], ldo)
		} else {
			dwForwardF64Y(len(utab), &utab[0], &x[0], &vt[0], len(vt), &f[0], ldf, &o[0], ldo)
		}
	default:
		return false
	}
	return true
}

// dwVecWidth reports whether the depthwise kernels have a loop for w channels of T (one AVX2
// vector, or two with AVX-512) and whether it is the AVX-512 one.
func dwVecWidth[T floatT](w int) (avx512, ok bool) {
	lanes := 32 / int(unsafe.Sizeof(T(0)))
	switch {
	case !hasVec:
		return false, false
	case w == lanes:
		return false, true
	case w == 2*lanes && cpu.X86.HasAVX512F:
		return true, true
	}
	return false, false
}

// dwFilterVec is dwFilter* (dwFilter9* for nine taps) for w channels (an AVX2 vector, or
// with AVX-512 two): acc[t·w …] += d[p·ldd …]·x[utab[p]+vt[t]
// …] for p < len(utab) in order; false (nothing done) for another width. The caller has
// checked every index.
func dwFilterVec[T floatT](utab []int64, x []T, vt []int64, d []T, ldd int, acc []T, w int) bool {
	avx512, ok := dwVecWidth[T](w)
	if !ok || len(utab) == 0 || len(vt) == 0 {
		return false
	}
	if len(vt) == 9 {
		vt9 := (*[9]int64)(vt)
		switch x := any(x).(type) {
		case []float32:
			d, acc := any(d).([]float32), any(acc).([]float32)
			if avx512 {
				dwFilter9F32Z(len(utab), &utab[0], &x[0], vt9, &d[0], ldd, &acc[0])
			} else {
				dwFilter9F32Y(len(utab), &utab[0], &x[0], vt9, &d[0], ldd, &acc[0])
			}
		case []float64:
			d, acc := any(d).([]float64), any(acc).([]float64)
			if avx512 {
				dwFilter9F64Z(len(utab), &utab[0], &x[0], vt9, &d[0], ldd, &acc[0])
			} else {
				dwFilter9F64Y(len(utab), &utab[0], &x[0], vt9, &d[0], ldd, &acc[0])
			}
		default:
			return false
		}
		return true
	}
	switch x := any(x).(type) {
	case []float32:
		d, acc := any(d).([]float32), any(acc).([]float32)
		if avx512 {
			dwFilterF32Z(len(utab), &utab[0], &x[0], &vt[0], len(vt), &d[0], ldd, &acc[0])
		} else {
			dwFilterF32Y(len(utab), &utab[0], &x[0], &vt[0], len(vt), &d[0], ldd, &acc[0])
		}
	case []float64:
		d, acc := any(d).([]float64), any(acc).([]float64)
		if avx512 {
			dwFilterF64Z(len(utab), &utab[0], &x[0], &vt[0], len(vt), &d[0], ldd, &acc[0])
		} else {
			dwFilterF64Y(len(utab), &utab[0], &x[0], &vt[0], len(vt), &d[0], ldd, &acc[0])
		}
	default:
		return false
	}
	return true
}

// rowSumsRows is the number of rows rowSumsVec sums at once for T (0: none, T not a float).
func rowSumsRows[T numT]() int {
	switch any(T(0)).(type) {
	case float32:
		return 16
	case float64:
		return 8
	}
	return 0
}

// rowSumsVec adds to acc[i] the elements x[i·ldx + j], j < n, in order, for the
// rowSumsRows rows i (rowSums*; n a multiple of the vector's lanes); false (nothing done)
// without AVX2 or for another type.
func rowSumsVec[T numT](acc, x []T, ldx, n int) bool {
	rows := rowSumsRows[T]()
	if !hasVec || rows == 0 || n <= 0 || len(acc) < rows || n%(rows/2) != 0 {
		return false
	}
	_ = x[(rows-1)*ldx+n-1]
	switch a := any(acc).(type) {
	case []float32:
		rowSumsF32(&a[0], &any(x).([]float32)[0], ldx, n)
	case []float64:
		rowSumsF64(&a[0], &any(x).([]float64)[0], ldx, n)
	}
	return true
}

// dwInputVec is dwInput* for w channels (an AVX2 vector, or with AVX-512 two): y[utab[p] +
// vt[t] …] += d[p·ldd …]·f[t·ldf …] for p < len(utab), t < len(vt), in order; false (nothing
// done) for another width. The caller has checked every index.
func dwInputVec[T floatT](utab []int64, y []T, vt []int64, d []T, ldd int, f []T, ldf, w int) bool {
	avx512, ok := dwVecWidth[T](w)
	if !ok || len(utab) == 0 || len(vt) == 0 {
		return false
	}
	switch y := any(y).(type) {
	case []float32:
		d, f := any(d).([]float32), any(f).([]float32)
		if avx512 {
			dwInputF32Z(len(utab), &utab[0], &y[0], &vt[0], len(vt), &d[0], ldd, &f[0], ldf)
		} else {
			dwInputF32Y(len(utab), &utab[0], &y[0], &vt[0], len(vt), &d[0], ldd, &f[0], ldf)
		}
	case []float64:
		d, f := any(d).([]float64), any(f).([]float64)
		if avx512 {
			dwInputF64Z(len(utab), &utab[0], &y[0], &vt[0], len(vt), &d[0], ldd, &f[0], ldf)
		} else {
			dwInputF64Y(len(utab), &utab[0], &y[0], &vt[0], len(vt), &d[0], ldd, &f[0], ldf)
		}
	default:
		return false
	}
	return true
}

// gatherAxpyVec adds to out[j] the sum over q < len(v) of v[q]·b[offs[q] + j] (each product
// rounded, the sum from +0 in the order of q, then added to out[j]) for the columns j of the
// whole AVX2 vectors in the first cols (gatherAxpy*), and returns how many columns it did: 0
// without AVX2, for another type, fewer columns than a vector or an offset reading outside b.
func gatherAxpyVec[T floatT](v []T, offs []int, b, out []T, cols int) int {
	lanes := 32 / int(unsafe.Sizeof(T(0)))
	vecs := cols / lanes
	w := vecs * lanes
	if !hasVec || vecs <= 0 || len(v) == 0 || len(offs) < len(v) || len(out) < w {
		return 0
	}
	for _, o := range offs[:len(v)] {
		if o < 0 || o+w > len(b) {
			return 0
		}
	}
	switch x := any(v).(type) {
	case []float32:
		gatherAxpyF32(len(x), &x[0], &offs[0], &any(b).([]float32)[0], &any(out).([]float32)[0], vecs)
	case []float64:
		gatherAxpyF64(len(x), &x[0], &offs[0], &any(b).([]float64)[0], &any(out).([]float64)[0], vecs)
	default:
		return 0
	}
	return w
}
