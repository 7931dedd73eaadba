package kernel

import "github.com/bulkad/bulkad/core"

// Short rows, two dimensions at a time: element-wise operations whose rows are shorter than
// pairRowMax (a depthwise filter's 9 taps, the 4×4 maps of a network's last stages) pay a call
// and a dispatch per row when run row by row; these loops run the rows of a whole block of
// the second-innermost dimension with the operation chosen once.

// pairRowMax: rows shorter than this run two dimensions at a time (stridedPairsRun).
const pairRowMax = 16

// rowScalarMax: rows of pairRowMax to this many elements against one element per row run a
// block at a time too (rowScalarsRun).
const rowScalarMax = 128

// stridedPairsRun runs k two dimensions at a time when its rows are short (fewer than
// pairRowMax elements: a depthwise filter's 9 taps times a broadcast activation, as a
// Gorgonia-built depthwise convolution multiplies them; a ReLU6's max over 4×4 maps) and its
// operation is + − · max min, each operand contiguous along the row or broadcast over it: the
// rows of one block of the second-innermost dimension run in one loop with no call per row,
// the walk of the outer dimensions once per block. It reports false (nothing done) otherwise.
func stridedPairsRun[T numT](k StridedBinary, out, x, y []T) bool {
	n := len(k.Shape)
	if n < 2 {
		return false
	}
	last, n2 := k.Shape[n-1], k.Shape[n-2]
	sx, sy := k.XS[n-1], k.YS[n-1]
	// rows of 16 to 128 against one element each (a batch norm's per-channel scale on 4×4 to
	// 8×16 maps): a block's rows with a vector call each and no walk per row (0.89 → 0.32 ns
	// an element on [2048, 16] float32)
	// (and shorter rows, written out for 4, 8 and 9: a batch norm's on 2×2 maps, a 3×3
	// depthwise filter's taps times a broadcast activation in the zoo MobileNet)
	scalars := last <= rowScalarMax && n2 >= 2 &&
		(sx == 1 && sy == 0 || sx == 0 && sy == 1) && (k.Op == core.OpAdd || k.Op == core.OpSub || k.Op == core.OpMul)
	if !scalars && (last >= pairRowMax || n2 < 2 || sx > 1 || sy > 1 || sx < 0 || sy < 0 || sx == 0 && sy == 0 ||
		k.Op != core.OpAdd && k.Op != core.OpSub && k.Op != core.OpMul && k.Op != core.OpMax && k.Op != core.OpMin) {
		return false
	}
	sx2, sy2 := k.XS[n-2], k.YS[n-2]
	r := newRows(k.Shape[:n-1], [3][]int{k.XS[:n-1], k.YS[:n-1]}, [3]int{k.XO, k.YO})
	block := n2 * last
	for p := 0; r.ok; p += block {
		if scalars {
			rowScalarsRun(k.Op, out[p:p+block], x, y, r.off[0], r.off[1], sx, sy, sx2, sy2, last)
		} else {
			pairRows(k.Op, out[p:p+block], x, y, r.off[0], r.off[1], sx, sy, sx2, sy2, last)
		}
		r.next()
	}
	return true
}

// pairRows is one block of stridedPairsRun: len(o)/last rows of last elements, row i of x
// (y) from xo + i·sx2 (yo + i·sy2), stepping sx (sy) ∈ {0, 1} along the row.
func pairRows[T numT](op core.BinOp, o, x, y []T, xo, yo, sx, sy, sx2, sy2, last int) {
	if op == core.OpMax || op == core.OpMin {
		pairMinMax(op == core.OpMax, o, x, y, xo, yo, sx, sy, sx2, sy2, last)
		return
	}
	// (a row against one element per row of + − · is rowScalarsRun's)
	for at := 0; at < len(o); at += last {
		d := o[at : at+last]
		xs, ys := x[xo:xo+last], y[yo:yo+last]
		switch op {
		case core.OpMul:
			for j, a := range xs {
				d[j] = a * ys[j]
			}
		case core.OpAdd:
			for j, a := range xs {
				d[j] = a + ys[j]
			}
		default:
			for j, a := range xs {
				d[j] = a - ys[j]
			}
		}
		xo += sx2
		yo += sy2
	}
}

// pairMinMax is pairRows for Go's built-in max (or min): a NaN wins and +0 > −0, both
// symmetric in their operands to the bit (the payload of two NaNs included), so the operand
// order of the row loops (scalarArith's v op s) does not matter.
func pairMinMax[T numT](isMax bool, o, x, y []T, xo, yo, sx, sy, sx2, sy2, last int) {
	for at := 0; at < len(o); at += last {
		d := o[at : at+last]
		xi, yi := xo, yo
		if isMax {
			for j := range d {
				d[j] = max(x[xi], y[yi])
				xi += sx
				yi += sy
			}
		} else {
			for j := range d {
				d[j] = min(x[xi], y[yi])
				xi += sx
				yi += sy
			}
		}
		xo += sx2
		yo += sy2
	}
}

// maskPairs runs k two dimensions at a time when its rows are short (fewer than pairRowMax
// elements: a ReLU6's masks over 4×4 maps, [4608, 4]), p and z contiguous along them and q
// contiguous or broadcast, for > ≥ < ≤: the rows of a block of the second-innermost dimension
// in one loop, the comparison chosen once (a call of maskRow per row of 4 cost 20 ns). It
// reports false (nothing done) otherwise.
func maskPairs[T num, F ~float64 | ~float32](k MaskMul, out []F, p, q []T, z []F) bool {
	n := len(k.Shape)
	if n < 2 {
		return false
	}
	last, n2 := k.Shape[n-1], k.Shape[n-2]
	sp, sq, sz := k.St[0][n-1], k.St[1][n-1], k.St[2][n-1]
	if last >= pairRowMax || n2 < 2 || sp != 1 || sz != 1 || sq != 0 && sq != 1 ||
		k.Cmp != core.OpGt && k.Cmp != core.OpGe && k.Cmp != core.OpLt && k.Cmp != core.OpLe {
		return false
	}
	sp2, sq2, sz2 := k.St[0][n-2], k.St[1][n-2], k.St[2][n-2]
	r := newRows(k.Shape[:n-1], [3][]int{k.St[0][:n-1], k.St[1][:n-1], k.St[2][:n-1]}, k.Off)
	block := n2 * last
	sel := [2]F{0, 1}
	for at := 0; r.ok; at += block {
		pi, qi, zi := r.off[0], r.off[1], r.off[2]
		for row := at; row < at+block; row += last {
			o := out[row : row+last]
			ps, zs := p[pi:pi+last], z[zi:zi+last]
			qs := q[qi : qi+1+(last-1)*sq]
			switch k.Cmp {
			case core.OpGt:
				for j := range o {
					o[j] = zs[j] * sel[b2i(ps[j] > qs[j*sq])]
				}
			case core.OpGe:
				for j := range o {
					o[j] = zs[j] * sel[b2i(ps[j] >= qs[j*sq])]
				}
			case core.OpLt:
				for j := range o {
					o[j] = zs[j] * sel[b2i(ps[j] < qs[j*sq])]
				}
			default:
				for j := range o {
					o[j] = zs[j] * sel[b2i(ps[j] <= qs[j*sq])]
				}
			}
			pi, qi, zi = pi+sp2, qi+sq2, zi+sz2
		}
		r.next()
	}
	return true
}

// rowScalarsRun computes the rows of a block when one operand is contiguous along them and
// the other one element per row, for + − ·, and reports whether it did: with one vector call a
// row when they are whole vectors, written out for rows of 4, 8 or 16, else row by row.
// (Rows of other short lengths stay with pairRows' loops: a call per row of 9, the zoo
// MobileNet's depthwise taps, cost 50% more.)
func rowScalarsRun[T numT](op core.BinOp, o, x, y []T, xo, yo, sx, sy, sx2, sy2, last int) bool {
	if last == 0 || op != core.OpAdd && op != core.OpSub && op != core.OpMul {
		return false
	}
	v, s, vo, so, sv2, ss2, left := x, y, xo, yo, sx2, sy2, false
	switch {
	case sx == 1 && sy == 0:
	case sx == 0 && sy == 1:
		v, s, vo, so, sv2, ss2, left = y, x, yo, xo, sy2, sx2, true
	default:
		return false
	}
	switch {
	case rowScalarsVec(op, o, v, s, vo, so, sv2, ss2, last, left):
	case last == 4 || last == 8 || last == 9 || last == 16:
		rowScalars(op, o, v, s, vo, so, sv2, ss2, last, left)
	case last < pairRowMax:
		rowScalarsShort(op, o, v, s, vo, so, sv2, ss2, last, left)
	default:
		for i := range len(o) / last {
			scalarArith(op, o[i*last:(i+1)*last], v[vo+i*sv2:vo+i*sv2+last], s[so+i*ss2], left)
		}
	}
	return true
}

// rowScalarsShort is rowScalars for other rows shorter than pairRowMax: a loop per row with
// the operation chosen once for the block.
func rowScalarsShort[T numT](op core.BinOp, o, v, s []T, vo, so, sv2, ss2, last int, left bool) {
	for i, at := 0, 0; at < len(o); i, at = i+1, at+last {
		d, a, b := o[at:at+last], v[vo+i*sv2:vo+i*sv2+last], s[so+i*ss2]
		switch {
		case op == core.OpMul:
			for j, x := range a {
				d[j] = x * b
			}
		case op == core.OpAdd:
			for j, x := range a {
				d[j] = x + b
			}
		case left:
			for j, x := range a {
				d[j] = b - x
			}
		default:
			for j, x := range a {
				d[j] = x - b
			}
		}
	}
}

// rowScalars is pairRows for rows of 4, 8, 9 or 16 of v (contiguous, row i from vo + i·sv2) against
// one element of s per row (so + i·ss2), s op v when left (v op s otherwise), for + − ·: the
// rows written out whole, with the operation chosen once for the block (a batch norm's
// per-channel scale over 2×2 and 4×4 maps).
func rowScalars[T numT](op core.BinOp, o, v, s []T, vo, so, sv2, ss2, last int, left bool) {
	if left && op == core.OpSub {
		op = core.OpDiv // marks s − v below (÷ never reaches pairRows)
	}
	rows := len(o) / last
	if last == 4 {
		for i := range rows {
			d, a, b := (*[4]T)(o[i*4:]), (*[4]T)(v[vo+i*sv2:]), s[so+i*ss2]
			switch op {
			case core.OpMul:
				d[0], d[1], d[2], d[3] = a[0]*b, a[1]*b, a[2]*b, a[3]*b
			case core.OpAdd:
				d[0], d[1], d[2], d[3] = a[0]+b, a[1]+b, a[2]+b, a[3]+b
			case core.OpSub:
				d[0], d[1], d[2], d[3] = a[0]-b, a[1]-b, a[2]-b, a[3]-b
			default: // s − v
				d[0], d[1], d[2], d[3] = b-a[0], b-a[1], b-a[2], b-a[3]
			}
		}
		return
	}
	if last == 9 {
		for i := range rows {
			d, a, b := (*[9]T)(o[i*9:]), (*[9]T)(v[vo+i*sv2:]), s[so+i*ss2]
			switch op {
			case core.OpMul:
				d[0], d[1], d[2], d[3], d[4], d[5], d[6], d[7], d[8] = a[0]*b, a[1]*b, a[2]*b, a[3]*b, a[4]*b, a[5]*b, a[6]*b, a[7]*b, a[8]*b
			case core.OpAdd:
				d[0], d[1], d[2], d[3], d[4], d[5], d[6], d[7], d[8] = a[0]+b, a[1]+b, a[2]+b, a[3]+b, a[4]+b, a[5]+b, a[6]+b, a[7]+b, a[8]+b
			case core.OpSub:
				d[0], d[1], d[2], d[3], d[4], d[5], d[6], d[7], d[8] = a[0]-b, a[1]-b, a[2]-b, a[3]-b, a[4]-b, a[5]-b, a[6]-b, a[7]-b, a[8]-b
			default: // s − v
				d[0], d[1], d[2], d[3], d[4], d[5], d[6], d[7], d[8] = b-a[0], b-a[1], b-a[2], b-a[3], b-a[4], b-a[5], b-a[6], b-a[7], b-a[8]
			}
		}
		return
	}
	if last == 16 {
		for i := range rows {
			d, a, b := (*[16]T)(o[i*16:]), (*[16]T)(v[vo+i*sv2:]), s[so+i*ss2]
			switch op {
			case core.OpMul:
				for j := range d {
					d[j] = a[j] * b
				}
			case core.OpAdd:
				for j := range d {
					d[j] = a[j] + b
				}
			case core.OpSub:
				for j := range d {
					d[j] = a[j] - b
				}
			default: // s − v
				for j := range d {
					d[j] = b - a[j]
				}
			}
		}
		return
	}
	for i := range rows {
		d, a, b := (*[8]T)(o[i*8:]), (*[8]T)(v[vo+i*sv2:]), s[so+i*ss2]
		switch op {
		case core.OpMul:
			d[0], d[1], d[2], d[3], d[4], d[5], d[6], d[7] = a[0]*b, a[1]*b, a[2]*b, a[3]*b, a[4]*b, a[5]*b, a[6]*b, a[7]*b
		case core.OpAdd:
			d[0], d[1], d[2], d[3], d[4], d[5], d[6], d[7] = a[0]+b, a[1]+b, a[2]+b, a[3]+b, a[4]+b, a[5]+b, a[6]+b, a[7]+b
		case core.OpSub:
			d[0], d[1], d[2], d[3], d[4], d[5], d[6], d[7] = a[0]-b, a[1]-b, a[2]-b, a[3]-b, a[4]-b, a[5]-b, a[6]-b, a[7]-b
		default: // s − v
			d[0], d[1], d[2], d[3], d[4], d[5], d[6], d[7] = b-a[0], b-a[1], b-a[2], b-a[3], b-a[4], b-a[5], b-a[6], b-a[7]
		}
	}
}
