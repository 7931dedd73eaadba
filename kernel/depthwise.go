package kernel

import (
	"slices"
	"unsafe"

	"github.com/bulkad/bulkad/core"
	"github.com/pkg/errors"
)

// DepthwiseWindows computes the two window products of a depthwise convolution built from
// an im2col — G = reshape [P, C, T] (gather dom x fn), fn affine, one window of T taps per
// point p and channel c (Gorgonia has no grouped convolution: a user builds one from
// Im2Col, a broadcast product and a sum) — without the windows:
//
//	forward:  out[p, c] = Σ_t G[p, c, t]·F[c, t]       (sumOuter over the taps)
//	filter:   out[c, t] = Σ_p δ[p, c]·G[p, c, t]       (the filter's gradient)
//
// Materialised, G is T times x's size (9.4 MB float32 a layer of the zoo's MobileNet), written
// by the gather and read by both. Here x is copied once per run into a staged array with its
// channel dimension innermost, zero-padded wherever the gather reads out of bounds (where it
// reads zeros), so that G[p, c, t] = Xs[U[p] + V[t] + c]: consecutive channels are
// consecutive elements, and the kernel runs vectors of channels as lanes (dwForward,
// dwFilter). Each lane is one destination, whose products are rounded and then added in the
// reference's order from +0 (the taps in order for the forward, the points in order for the
// filter), with the same terms (the padding's zeros are the gather's zeros): the results are
// core.Eval's (and the materialised plan's) bit for bit. Channels past the last whole vector,
// and CPUs without AVX2, run the same loops in Go.
//
// The other factor is read through a strided view of its input: the forward's filter at
// MO + c·MC + t·MT, the filter gradient's cotangent at MO + p·MP + c·MC.
type DepthwiseWindows struct {
	Src    []int   // x's shape
	Dc     int     // x's channel dimension
	Lo     []int   // zeros before x's elements along each dimension of the staged array
	Staged []int   // the staged array's shape: x's other dimensions padded, then the channels
	U, V   []int64 // the window's element (p, c, t) at U[p] + V[t] + c of the staged array
	C      int     // the channels
	Filter bool    // the filter's gradient (else the forward sums)
	Input  bool    // the input gradient (SetInput)
	// the other factor's view, and (Filter) the output's length and the block's offset in it
	MO, MP, MC, MT int
	Out, OutAt     int
	// Input: the filter's view, F[c, t] at FO + c·FC + t·FT (the cotangent's is M*)
	FO, FC, FT int
	buf        *padBuf
	acc        Scratch
	shared     bool              // buf is shared with the other product of the same x (ShareStaging)
	stager     *DepthwiseWindows // the forward kernel whose staged copy a filter kernel reads
}

// SharesStaging reports whether k shares its staged copy of x with another kernel
// (ShareStaging).
func (k *DepthwiseWindows) SharesStaging() bool { return k.shared }

// ShareStaging makes k and other — the forward sums and the filter gradient of one
// convolution, reading the same x through the same padding — use one staged copy of x: the
// forward kernel stages x at each run and records it, and the filter kernel, finding the
// record of the same x slice, reads that copy instead of staging its own, then clears the
// record (a record is read once: a filter kernel run without the forward before it stages x
// itself). Only for kernels of one plan, whose values do not change between its steps (a
// kernel.Plan's): the forward's step comes before the filter gradient's, which reads its
// output's cotangent; a plan that runs them the other way round gives the filter kernel a
// copy of its own (PlanBuilder.Build). It fails when the kernels are not such a pair.
func (k *DepthwiseWindows) ShareStaging(other *DepthwiseWindows) error {
	if k.Input || other.Input || k.Filter == other.Filter || k.Dc != other.Dc || !slices.Equal(k.Src, other.Src) ||
		!slices.Equal(k.Lo, other.Lo) || !slices.Equal(k.Staged, other.Staged) {
		return errors.Errorf("kernel: depthwiseWindows: staging of x %v (staged %v) shared with x %v (staged %v) (supported: a forward and a filter gradient of one x)", k.Src, k.Staged, other.Src, other.Staged)
	}
	k.buf, k.shared, other.shared = other.buf, true, true
	if k.Filter {
		k.stager = other
	} else {
		other.stager = k
	}
	return nil
}

func (k *DepthwiseWindows) stagingFrom() Kernel {
	if k.stager == nil {
		return nil
	}
	return k.stager
}

// unshareStaging gives the filter kernel a staged copy of its own (its plan runs it before
// the forward kernel).
func (k *DepthwiseWindows) unshareStaging() {
	k.buf, k.shared, k.stager = &padBuf{}, false, nil
}

// SetInput makes k the input gradient of its convolution, the scatter of δ ⊗ F into x's
// shape (the access then being the scatter's): out[a(p, c, t)] += δ[p, c]·F[c, t] over the
// points, channels and taps in the domain's order (out of bounds dropped), δ[p, c] at dO +
// p·dP + c·dC and F[c, t] at fO + c·fC + t·fT of the two inputs. The products land in a
// zeroed channels-last staged image, each channel a lane, in the reference's order for every
// element, whose interior is then copied out: the reference's bits.
func (k *DepthwiseWindows) SetInput(dO, dP, dC, fO, fC, fT int) error {
	if k.Filter || dO < 0 || dP < 0 || dC < 0 || fO < 0 || fC < 0 || fT < 0 {
		return errors.Errorf("kernel: depthwiseWindows: input gradient views at %d (%d, %d) and %d (%d, %d) (supported: nonnegative, not a filter gradient)", dO, dP, dC, fO, fC, fT)
	}
	k.Input = true
	k.MO, k.MP, k.MC, k.FO, k.FC, k.FT = dO, dP, dC, fO, fC, fT
	return nil
}

// NewDepthwiseWindows returns the kernel of the window products over the window domain dom
// (P its first q dimensions, then the channel dimension q, then the taps) with the gather's
// access acc of x. It fails unless the channel variable alone moves one dimension of x, with
// coefficient 1 from 0, within its bounds, or when the staged array would be more than twice
// x's size plus 64 Ki elements.
func NewDepthwiseWindows(dom []int, q int, acc WinAccess, filter bool) (*DepthwiseWindows, error) {
	r := len(acc.Shape)
	if q <= 0 || q >= len(dom) || r == 0 || r > 8 || len(acc.Coef) != r || len(acc.C0) != r {
		return nil, errors.Errorf("kernel: depthwiseWindows: domain %v with channels at %d, access of %v (supported: points, a channel dimension, taps; x of rank 1 to 8)", dom, q, acc.Shape)
	}
	dc := -1
	for d := range r {
		if len(acc.Coef[d]) != len(dom) {
			return nil, errors.Errorf("kernel: depthwiseWindows: access row %d has %d coefficients for a domain %v", d, len(acc.Coef[d]), dom)
		}
		if acc.Coef[d][q] != 0 {
			if dc >= 0 || acc.Coef[d][q] != 1 {
				return nil, errors.Errorf("kernel: depthwiseWindows: the channel variable moves x's dimensions %d and %d or with a coefficient other than 1", dc, d)
			}
			dc = d
		}
	}
	if dc < 0 || acc.C0[dc] != 0 || dom[q] > acc.Shape[dc] {
		return nil, errors.Errorf("kernel: depthwiseWindows: the channel variable (%d values) does not index a dimension of x %v from 0", dom[q], acc.Shape)
	}
	for j, c := range acc.Coef[dc] {
		if j != q && c != 0 && dom[j] > 1 {
			return nil, errors.Errorf("kernel: depthwiseWindows: variable %d moves x's channel dimension too", j)
		}
	}
	w, err := NewWindowMatMul(dom, q, acc, 1, false, false) // the padding of the other dimensions
	if err != nil {
		return nil, err
	}
	k := &DepthwiseWindows{Src: append([]int(nil), acc.Shape...), Dc: dc, Lo: w.Lo, C: dom[q], Filter: filter, buf: &padBuf{}}
	for d := range r {
		if d != dc {
			k.Staged = append(k.Staged, w.Pad[d])
		}
	}
	k.Staged = append(k.Staged, acc.Shape[dc])
	// the staged strides of x's dimensions
	st := make([]int64, r)
	s := int64(acc.Shape[dc])
	st[dc] = 1
	for d := r - 1; d >= 0; d-- {
		if d != dc {
			st[d], s = s, s*int64(w.Pad[d])
		}
	}
	step := func(j int) int64 {
		var s int64
		for d := range r {
			if d != dc {
				s += st[d] * acc.Coef[d][j]
			}
		}
		return s
	}
	var c0 int64
	for d := range r {
		if d != dc {
			c0 += st[d] * (acc.C0[d] + int64(k.Lo[d]))
		}
	}
	k.U = AffineOffsets(dom[:q], step, c0)
	k.V = AffineOffsets(dom[q+1:], func(i int) int64 { return step(q + 1 + i) }, 0)
	return k, nil
}

// SetView sets the other factor's view: the forward's filter F[c, t] at mo + c·mc + t·mt, or
// the filter gradient's cotangent δ[p, c] at mo + p·mp + c·mc; out and outAt (Filter) are
// the output's length and the offset of the [C, T] block in it.
func (k *DepthwiseWindows) SetView(mo, mp, mc, mt, out, outAt int) error {
	if mo < 0 || mp < 0 || mc < 0 || mt < 0 || k.Filter && (outAt < 0 || outAt+k.C*len(k.V) > out) {
		return errors.Errorf("kernel: depthwiseWindows: view at %d with strides %d, %d, %d, output block at %d of %d (supported: nonnegative, the block within the output)", mo, mp, mc, mt, outAt, out)
	}
	k.MO, k.MP, k.MC, k.MT, k.Out, k.OutAt = mo, mp, mc, mt, out, outAt
	return nil
}

// Run implements Kernel: ins are x and the other factor's input (flat slices of one float
// dtype); for the input gradient, the cotangent's input and the filter's.
func (k *DepthwiseWindows) Run(out any, ins []any) error {
	if k.Input {
		return floatPair("depthwiseWindows", out, ins, func(o, d, f []float64) error { return depthwiseInput(k, o, d, f) },
			func(o, d, f []float32) error { return depthwiseInput(k, o, d, f) })
	}
	return floatPair("depthwiseWindows", out, ins, func(o, x, m []float64) error { return depthwiseWindows(k, o, x, m) },
		func(o, x, m []float32) error { return depthwiseWindows(k, o, x, m) })
}

func depthwiseInput[T floatT](k *DepthwiseWindows, out, d, f []T) error {
	p, c, t := len(k.U), k.C, len(k.V)
	lastD, lastF := k.MO+(p-1)*k.MP+(c-1)*k.MC, k.FO+(c-1)*k.FC+(t-1)*k.FT
	if len(out) != core.Shape(k.Src).Size() || lastD >= len(d) || lastF >= len(f) {
		return errors.Errorf("kernel: depthwiseWindows: input gradient of %d elements (shape %v) from a cotangent of %d (read up to %d) and a filter of %d (up to %d)", len(out), k.Src, len(d), lastD, len(f), lastF)
	}
	ys, kept := scratchOf[T](&k.acc, core.Shape(k.Staged).Size()) // zeroed
	if kept {
		defer k.acc.release()
	}
	ft, fkept := scratchOf[T](&k.buf.pack, t*c)
	if fkept {
		defer k.buf.pack.release()
	}
	for ch := range c {
		for tap := range t {
			ft[tap*c+ch] = f[k.FO+ch*k.FC+tap*k.FT]
		}
	}
	w := dwWidth[T]()
	whole := 0
	if w > 0 && k.MC == 1 {
		whole = c - c%w
	}
	if blocks := whole / max(w, 1); blocks > 0 {
		// channel blocks split across goroutines: each writes its own lanes of ys
		if work := costOf(p*whole*t, wFused); workers(blocks, work) > 1 {
			inParallel(blocks, work, func(lo, hi int) { dwInputBlocks(k, ys, d, ft, w, lo, hi) })
		} else {
			dwInputBlocks(k, ys, d, ft, w, 0, blocks)
		}
	}
	if whole < c {
		for pt, u := range k.U {
			for ch := whole; ch < c; ch++ {
				dv := d[k.MO+pt*k.MP+ch*k.MC]
				for tap, v := range k.V {
					ys[u+v+int64(ch)] += T(dv * ft[tap*c+ch])
				}
			}
		}
	}
	moveChannels(k, ys, out, true)
	return nil
}

func depthwiseWindows[T floatT](k *DepthwiseWindows, out, x, m []T) error {
	p, c, t := len(k.U), k.C, len(k.V)
	last := k.MO + (c-1)*k.MC + (t-1)*k.MT
	want := p * c
	if k.Filter {
		last, want = k.MO+(p-1)*k.MP+(c-1)*k.MC, k.Out
	}
	if len(x) != core.Shape(k.Src).Size() || len(out) != want || last >= len(m) {
		return errors.Errorf("kernel: depthwiseWindows: x of %d elements (shape %v), factor of %d (read up to %d), output of %d for %d points, %d channels, %d taps", len(x), k.Src, len(m), last, len(out), p, c, t)
	}
	xs, kept := padOf[T](k.buf, k.Staged)
	if kept {
		defer k.buf.release()
	}
	id, n := unsafe.Pointer(unsafe.SliceData(x)), len(x)
	if !(k.shared && k.Filter && kept && k.buf.staged == id && k.buf.stagedLen == n) {
		stageChannels(k, xs, x)
	}
	if k.shared && kept {
		if k.Filter {
			k.buf.staged, k.buf.stagedLen = nil, 0
		} else {
			k.buf.staged, k.buf.stagedLen = id, n
		}
	}
	if k.Filter {
		clear(out)
		dwFilterRun(k, out[k.OutAt:k.OutAt+c*t], xs, m)
		return nil
	}
	// the filter as [T, C]
	ft, fkept := scratchOf[T](&k.buf.pack, t*c)
	if fkept {
		defer k.buf.pack.release()
	}
	for ch := range c {
		for tap := range t {
			ft[tap*c+ch] = m[k.MO+ch*k.MC+tap*k.MT]
		}
	}
	if work := costOf(p*c*t, wFused); workers(p, work) > 1 {
		inParallel(p, work, func(lo, hi int) { dwForwardRange(k, out, xs, ft, lo, hi) })
		return nil
	}
	dwForwardRange(k, out, xs, ft, 0, p)
	return nil
}

// dwForwardRange computes the forward sums of the points [lo, hi).
func dwForwardRange[T floatT](k *DepthwiseWindows, out, xs, ft []T, lo, hi int) {
	c := k.C
	w := dwWidth[T]()
	whole := 0
	if w > 0 {
		whole = c - c%w
	}
	for p0 := lo; p0 < hi && whole > 0; p0 += dwTile {
		p1 := min(p0+dwTile, hi)
		for c0 := 0; c0 < whole; c0 += w {
			dwForwardVec(k.U[p0:p1], xs[c0:], k.V, ft[c0:], c, out[p0*c+c0:], c, w)
		}
	}
	for p := lo; p < hi; p++ {
		for ch := whole; ch < c; ch++ {
			var s T
			for tap, v := range k.V {
				s += T(xs[k.U[p]+v+int64(ch)] * ft[tap*c+ch])
			}
			out[p*c+ch] = s
		}
	}
}

// dwFilterRun computes the filter gradient's block o [C, T] from the staged x and the
// cotangent's input m.
func dwFilterRun[T floatT](k *DepthwiseWindows, o, xs, m []T) {
	c, t := k.C, len(k.V)
	w := dwWidth[T]()
	whole := 0
	if w > 0 && k.MC == 1 {
		whole = c - c%w
	}
	if blocks := whole / max(w, 1); blocks > 0 {
		// the sums of every block, [blocks][T][w]
		acc, kept := scratchOf[T](&k.acc, whole*t)
		if kept {
			defer k.acc.release()
		}
		// channel blocks split across goroutines: each block's sums are its own
		if work := costOf(len(k.U)*whole*t, wFused); workers(blocks, work) > 1 {
			inParallel(blocks, work, func(lo, hi int) { dwFilterBlocks(k, o, xs, m, acc, w, lo, hi) })
		} else {
			dwFilterBlocks(k, o, xs, m, acc, w, 0, blocks)
		}
	}
	for ch := whole; ch < c; ch++ {
		for tap, v := range k.V {
			var s T
			for p, u := range k.U {
				s += T(m[k.MO+p*k.MP+ch*k.MC] * xs[u+v+int64(ch)])
			}
			o[ch*t+tap] = s
		}
	}
}

// dwInputBlocks scatters the products of the channel blocks [lo, hi) (w channels each) into
// the staged image ys.
func dwInputBlocks[T floatT](k *DepthwiseWindows, ys, d, ft []T, w, lo, hi int) {
	for p0 := 0; p0 < len(k.U); p0 += dwTile {
		p1 := min(p0+dwTile, len(k.U))
		for c0 := lo * w; c0 < hi*w; c0 += w {
			dwInputVec(k.U[p0:p1], ys[c0:], k.V, d[k.MO+p0*k.MP+c0:], k.MP, ft[c0:], k.C, w)
		}
	}
}

// dwTile is the number of points the depthwise kernels take through every block of channels
// before the next points: the windows of a tile, read for each block, stay in the L1 cache
// (x, and the cotangent, are read from memory once, not once per block).
const dwTile = 64

// dwFilterBlocks computes the filter gradient of the channel blocks [lo, hi) (w channels
// each), block b's sums in acc[b·T·w …] (zeroed), the points a tile at a time.
func dwFilterBlocks[T floatT](k *DepthwiseWindows, o, xs, m, acc []T, w, lo, hi int) {
	t := len(k.V)
	for p0 := 0; p0 < len(k.U); p0 += dwTile {
		p1 := min(p0+dwTile, len(k.U))
		for b := lo; b < hi; b++ {
			c0 := b * w
			dwFilterVec(k.U[p0:p1], xs[c0:], k.V, m[k.MO+p0*k.MP+c0:], k.MP, acc[b*t*w:(b+1)*t*w], w)
		}
	}
	for b := lo; b < hi; b++ {
		c0 := b * w
		for tap := range t {
			for l := range w {
				o[(c0+l)*t+tap] = acc[b*t*w+tap*w+l]
			}
		}
	}
}

// stageChannels copies x into the interior of the staged array xs (x's dimensions but the
// channels', each from Lo on, then the channels); the rest of xs is left as it is (zero).
func stageChannels[T floatT](k *DepthwiseWindows, xs, x []T) { moveChannels(k, xs, x, false) }

// moveChannels copies x into the interior of the staged array xs, or with back the interior
// of xs into x.
func moveChannels[T floatT](k *DepthwiseWindows, xs, x []T, back bool) {
	r, dc, c := len(k.Src), k.Dc, k.Src[k.Dc]
	xst := core.Shape(k.Src).Strides()
	// the staged strides of x's dimensions
	var sst [8]int
	s := c
	sst[dc] = 1
	for d := r - 1; d >= 0; d-- {
		if d != dc {
			sst[d] = s
			s *= k.Staged[stagedDim(d, dc)]
		}
	}
	inner := r - 1 // the dimension walked by the tiles: the last, or the one before the channels'
	if inner == dc {
		inner--
	}
	var idx [8]int
	for {
		xo, so := 0, 0
		for d := range r {
			if d != dc && d != inner {
				xo += idx[d] * xst[d]
				so += (idx[d] + k.Lo[d]) * sst[d]
			}
		}
		if inner < 0 { // x is the channels only
			if back {
				copy(x[:c], xs[:c])
			} else {
				copy(xs[:c], x[:c])
			}
			return
		}
		so += k.Lo[inner] * sst[inner]
		n := k.Src[inner]
		// xs[so + i·sst[inner] + ch] = x[xo + i·xst[inner] + ch·xst[dc]]
		switch {
		case dc == r-1 && xst[inner] == c && sst[inner] == c: // channels last already: one row
			if back {
				copy(x[xo:xo+n*c], xs[so:so+n*c])
			} else {
				copy(xs[so:so+n*c], x[xo:xo+n*c])
			}
		case xst[inner] == 1 && sst[inner] == c && !back:
			if !transposeTileVec(xs, so, c, x, xo, xst[dc], n, c) {
				for i := range n {
					for ch := range c {
						xs[so+i*c+ch] = x[xo+i+ch*xst[dc]]
					}
				}
			}
		case xst[inner] == 1 && sst[inner] == c:
			if !transposeTileVec(x, xo, xst[dc], xs, so, c, c, n) {
				for i := range n {
					for ch := range c {
						x[xo+i+ch*xst[dc]] = xs[so+i*c+ch]
					}
				}
			}
		default:
			for i := range n {
				for ch := range c {
					if back {
						x[xo+i*xst[inner]+ch*xst[dc]] = xs[so+i*sst[inner]+ch]
					} else {
						xs[so+i*sst[inner]+ch] = x[xo+i*xst[inner]+ch*xst[dc]]
					}
				}
			}
		}
		d := r - 1
		for ; d >= 0; d-- {
			if d == dc || d == inner {
				continue
			}
			if idx[d]++; idx[d] < k.Src[d] {
				break
			}
			idx[d] = 0
		}
		if d < 0 {
			return
		}
	}
}

// stagedDim is the staged array's dimension holding x's dimension d (≠ dc).
func stagedDim(d, dc int) int {
	if d > dc {
		return d - 1
	}
	return d
}
