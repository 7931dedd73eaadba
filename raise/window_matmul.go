package raise

import (
	"github.com/bulkad/bulkad/core"
	kern "github.com/bulkad/bulkad/kernel"
)

// Window matrices read in place. Gorgonia's convolution (and the ONNX importer's) is
//
//	matmul (reshape [P, J] (gather dom x fn)) Wᵀ          (forward: the im2col times the filter)
//	matmul δᵀ (reshape [P, J] (gather dom x fn))          (the filter's gradient)
//
// with fn affine: the gather is the convolution's window matrix, each element of x copied
// into up to J of its entries (9× for a 3×3 filter). windowMatmul plans such a product as one
// kern.WindowMatMul, which reads x's elements where they lie (in a zero-padded copy) instead
// of the materialised matrix that a gather would write and the GEMM read back. When every
// product that reads a window matrix is planned so, the gather itself is never planned
// (a lazily planned let is planned at its first use).
//
// Only products of two matrices whose window factor is not transposed, on the CPU, where
// the gather expands x (its windows overlap: at least twice x's size, and 4096 elements);
// anything else is planned as before. The sums are taken in another order than the GEMM's,
// so results differ from the materialised product by rounding.

// windowGain: a window matrix is read in place only when it has at least this many times
// the elements of the other factor. The kernel packs the other factor into blocks of
// vector width at every run and passes over the window matrix once per block: fast where
// the window matrix is large and the other factor small (a filter of 16 channels: 8192×144
// against 144×16; the output's cotangent, 8192×16), slow where the other factor is the
// large one (torchvision's resnet18 at batch 2, layer 4: a 4608×8 window matrix against a
// 512×4608 filter, packed transposed element by element: 5.4 ms against 1.4 for the gather
// and the GEMM).
const windowGain = 4

// windowNarrow: a product of at most this many outputs per window row or column is read in
// place whatever the other factor's size: the kernel passes over the window matrix once or
// twice. The zoo ResNet's stem filter gradient ([16, 8192] cotangent times [8192, 27] windows
// of a 3-channel image, below windowGain) ran as a 0.10 ms gather and a 0.17 ms GEMM; in
// place, 0.09 ms.
const windowNarrow = 16

// windowFactor is a window matrix factor of a product: the gather's source as the op reads
// it (in, rebuilt by wrap), its access over the gather's domain, and the split of that
// domain into the matrix's rows (its first q dimensions) and columns.
type windowFactor struct {
	winOperand
	dom   core.Shape
	shape core.Shape // the matrix's [P, J]
	q     int
}

// windowFactor reports whether t (a matrix) is reshape [P, J] (gather dom x fn), through any
// reshapes, with fn affine with static constants, dom's leading dimensions making P, and the
// gather at least twice the size of x.
func (pl *plan) windowFactor(t core.Term) (windowFactor, bool) {
	rs, ok := pl.peel(t).(*core.Reshape)
	if !ok || len(rs.Shape) != 2 {
		return windowFactor{}, false
	}
	g, o, ok := pl.expandingGather(rs.X)
	if !ok {
		return windowFactor{}, false
	}
	dom := g.Shape
	q := 1
	for q < len(dom) && dom[:q].Size() < rs.Shape[0] {
		q++
	}
	if q >= len(dom) || dom[:q].Size() != rs.Shape[0] {
		return windowFactor{}, false
	}
	return windowFactor{winOperand: o, dom: dom, shape: rs.Shape, q: q}, true
}

// expandingGather reports whether t is, through any reshapes, a gather with an affine index
// function of static constants (its access o) that has at least twice the elements of its
// input, and 4096: the window matrix of a convolution.
func (pl *plan) expandingGather(t core.Term) (*core.Gather, winOperand, bool) {
	inner := pl.peel(t)
	for {
		r, isReshape := inner.(*core.Reshape)
		if !isReshape {
			break
		}
		inner = pl.peel(r.X)
	}
	g, ok := inner.(*core.Gather)
	if !ok {
		return nil, winOperand{}, false
	}
	o, ok := winGather(pl, g)
	if !ok {
		return nil, winOperand{}, false
	}
	if n := g.Shape.Size(); n < 4096 || n < 2*o.in.Type().Shape.Size() {
		return nil, winOperand{}, false
	}
	return g, o, true
}

// windowProduct is a matrix product planned as a kern.WindowMatMul: the kernel, the window
// factor, the other factor as stored (read transposed when trans), and whether the window
// factor is the second (cols).
type windowProduct struct {
	k     *kern.WindowMatMul
	w     windowFactor
	other core.Term
	cols  bool
	trans bool
}

// windowProductOf returns the plan of matmul x y (its factors a and b as matmul reads them,
// transposed when ta, tb) as a kern.WindowMatMul when a factor is a window matrix read
// untransposed and at least windowGain times the other, or the product at most windowNarrow
// wide; ok is false otherwise.
func (pl *plan) windowProductOf(t *core.MatMul, a core.Term, ta bool, b core.Term, tb bool) (wp windowProduct, ok bool) {
	if pl.vk != nil || pl.materialised || !t.Type().Dtype.IsFloat() || len(t.Type().Shape) != 2 {
		return windowProduct{}, false
	}
	if f, isWin := pl.windowFactor(a); isWin && !ta {
		wp = windowProduct{w: f, other: b, trans: tb}
	} else if f, isWin := pl.windowFactor(b); isWin && !tb {
		wp = windowProduct{w: f, other: a, trans: ta, cols: true}
	} else {
		return windowProduct{}, false
	}
	n := t.Type().Shape[1]
	if wp.cols {
		n = t.Type().Shape[0]
	}
	if wp.w.shape.Size() < windowGain*wp.other.Type().Shape.Size() && n > windowNarrow {
		return windowProduct{}, false
	}
	k, err := kern.NewWindowMatMul(wp.w.dom, wp.w.q, wp.w.acc, n, wp.cols, wp.trans)
	if err != nil {
		return windowProduct{}, false
	}
	wp.k = k
	return wp, true
}

// product is the product over the variables standing for the window factor's input and the
// other factor.
func (wp windowProduct) product(vs []*core.Var) (core.Term, error) {
	g, err := wp.w.wrap(vs[0])
	if err != nil {
		return nil, err
	}
	win, err := core.NewReshape(wp.w.shape.Clone(), g)
	if err != nil {
		return nil, err
	}
	var m core.Term = vs[1]
	if wp.trans {
		if m, err = core.NewTranspose([]int{1, 0}, m); err != nil {
			return nil, err
		}
	}
	if wp.cols {
		return core.NewMatMul(m, win)
	}
	return core.NewMatMul(win, m)
}

// windowMatmul plans matmul x y (its factors a and b as matmul reads them, transposed when
// ta, tb) as one kern.WindowMatMul when a factor is a window matrix read untransposed; ok
// is false when t is not of that form.
func (pl *plan) windowMatmul(t *core.MatMul, a core.Term, ta bool, b core.Term, tb bool) (r ref, ok bool, err error) {
	wp, ok := pl.windowProductOf(t, a, ta, b, tb)
	if !ok {
		return ref{}, false, nil
	}
	pl.shareWindowStaging(wp.w.in, wp.k)
	r, err = pl.customAvoid(t, "windowMatMul", []core.Term{wp.w.in, wp.other}, winFns(wp.w.winOperand), func(vs []*core.Var) (core.Term, []*core.Var, error) {
		p, err := wp.product(vs)
		return p, vs, err
	}, wp.k)
	return r, true, err
}

// windowTransposed plans tr perm (reshape R (matmul G M)) — a window product c [P, N] viewed
// as R (its last dimension N) and transposed: Gorgonia's convolution output, channels last,
// made [b, C, h, w] — as the window product writing each element of c where the transpose
// puts it (kern.WindowMatMul.ScatterRows): the channels-last array is never written and the
// transpose never run. The values are the product's, moved: the bits of the two steps. Only
// for float64: the zoo ResNet's 3×3 convolutions' transposes took 1.29 ms a step in float64
// and 0.47 writing transposed, for 0.35 ms more in the window products; in float32 the
// transposes took 0.54 ms and writing transposed 0.25 ms more, for 0.36 ms more in the
// products (the tiles' block transpositions cost about the same per convolution in both
// dtypes, the separate transposes of float32 half as much). ok is false when t is not of
// that form, the product or its reshape is read elsewhere or planned already, or the product
// is not read in place.
func (pl *plan) windowTransposed(t *core.Transpose, perm []int) (ref, bool, error) {
	if !pl.coarse || pl.vk != nil || t.Type().Dtype != core.Float64 || !pl.unplanned(t.X) || !pl.onlyUse(t.X) {
		return ref{}, false, nil
	}
	rs, ok := pl.peel(t.X).(*core.Reshape)
	if !ok || !pl.unplanned(rs.X) || !pl.onlyUse(rs.X) {
		return ref{}, false, nil
	}
	mm, ok := pl.peel(rs.X).(*core.MatMul)
	if !ok || len(mm.Type().Shape) != 2 {
		return ref{}, false, nil
	}
	P, N := mm.Type().Shape[0], mm.Type().Shape[1]
	R := rs.Shape
	last := len(R) - 1
	if last < 1 || R[last] != N || R[:last].Size() != P {
		return ref{}, false, nil
	}
	a, ta := pl.swapped(mm.X)
	b, tb := pl.swapped(mm.Y)
	wp, ok := pl.windowProductOf(mm, a, ta, b, tb)
	if !ok || wp.cols {
		return ref{}, false, nil
	}
	// S[d]: the output's stride of R's dimension d
	os := t.Type().Shape.Strides()
	S := make([]int, len(R))
	for j, d := range perm {
		S[d] = os[j]
	}
	offs := make([]int64, P)
	idx := make([]int, last)
	for p := range offs {
		var o int
		for d := range last {
			o += idx[d] * S[d]
		}
		offs[p] = int64(o)
		for d := last - 1; d >= 0; d-- {
			if idx[d]++; idx[d] < R[d] {
				break
			}
			idx[d] = 0
		}
	}
	if err := wp.k.ScatterRows(P*N, S[last], offs); err != nil {
		return ref{}, false, nil
	}
	pl.shareWindowStaging(wp.w.in, wp.k)
	r, err := pl.customAvoid(t, "windowMatMul", []core.Term{wp.w.in, wp.other}, winFns(wp.w.winOperand), func(vs []*core.Var) (core.Term, []*core.Var, error) {
		p, err := wp.product(vs)
		if err != nil {
			return nil, nil, err
		}
		rp, err := core.NewReshape(R.Clone(), p)
		if err != nil {
			return nil, nil, err
		}
		tp, err := core.NewTranspose(perm, rp)
		return tp, vs, err
	}, wp.k)
	return r, true, err
}

// shareWindowStaging lets the forward product (rows) and the filter gradient (cols) of one
// convolution in a coarse plan — window products of the same x — share one padded copy of x
// (kern.WindowMatMul.ShareStaging): the zoo ResNet copied each layer's input twice a step,
// ≈ 64 µs a copy in float32, bound by memory. The first window product of x planned waits
// in pl.winStaging for one of the other form.
func (pl *plan) shareWindowStaging(x core.Term, k *kern.WindowMatMul) {
	if !pl.coarse {
		return
	}
	if pl.winStaging == nil {
		pl.winStaging = map[core.Term]*kern.WindowMatMul{}
	}
	o, ok := pl.winStaging[x]
	if !ok {
		pl.winStaging[x] = k
		return
	}
	if o.Cols == k.Cols {
		return
	}
	stager, reader := o, k
	if o.Cols {
		stager, reader = k, o
	}
	if stager.ShareStaging(reader) == nil {
		delete(pl.winStaging, x)
	}
}

// sharePadding lets the input gradients of a coarse plan's convolutions of one shape pad
// their cotangents in one buffer (kern.WindowMatMul.SharePadding): the zoo ResNet's four
// kept four padded copies (663 KB each in float32), each written from cold at its step.
func (pl *plan) sharePadding(k *kern.WindowMatMul) {
	if !pl.coarse {
		return
	}
	for _, o := range pl.winPads {
		if k.SharePadding(o) == nil {
			return
		}
	}
	pl.winPads = append(pl.winPads, k)
}

// A convolution's input gradient is col2im of a product (Gorgonia's: the scatter of δ·W,
// [b·oh·ow, c·kh·kw] viewed as [b, oh, ow, c, kh, kw], into the image [b, c, h, w]; raise's
// transposedScatter computes it transposed). Read from the image's side, it is itself a
// convolution, of the cotangent δ with the filter: dx[b, c, h, w] = Σ_{kh, kw, m}
// W[(c, kh, kw), m] · δ[b, h − kh + 1, w − kw + 1, m], δ read as zero outside its positions —
// a product of the filter, [c, kh·kw·m], with a window matrix of δ, [kh·kw·m, b·h·w], whose
// column (b, h, w) lands in the image at b·C·H·W + h·W + w and row c C·H·W further on.
// windowCol2im plans the scatter so, as one kern.WindowMatMul (cols, ScatterTo), when:
//
//   - the scatter's domain is the product's [rows…, cols…] and its index function affine
//     with static constants, one output per dimension of the image;
//   - every variable of more than one value either alone moves the image dimensions it moves
//     (b, c), or is one of a pair, a row variable and a column variable that are the only two
//     to move one image dimension and move no other (oh with kh, ow with kw);
//   - on one side (the cotangent's: the one whose paired variables span more positions)
//     every paired variable moves its dimension with coefficient 1, and on the other (the
//     filter's) at most one variable is unpaired (the filter, however stored, is read as
//     [C, taps·K]: kern.WindowMatMul.MatrixAt);
//   - every element of the image is written once (its dimensions are all reached), and the
//     window matrix has at least windowGain times the filter's elements and twice the
//     cotangent's.
//
// ok is false otherwise (transposedScatter and the other scatter plans then apply).
func (pl *plan) windowCol2im(t *core.Scatter) (r ref, ok bool, err error) {
	if pl.vk != nil || pl.materialised || !t.Type().Dtype.IsFloat() {
		return ref{}, false, nil
	}
	rs, ok := pl.peel(t.X).(*core.Reshape)
	if !ok {
		return ref{}, false, nil
	}
	mm, ok := pl.peel(rs.X).(*core.MatMul)
	if !ok || len(mm.X.Type().Shape) != 2 || len(mm.Y.Type().Shape) != 2 || !pl.onlyUse(t.X) || !pl.onlyUse(rs.X) {
		return ref{}, false, nil
	}
	a, ta := pl.swapped(mm.X)
	b, tb := pl.swapped(mm.Y)
	c, ok := analyseCol2im(t, rs.Shape, mm, ta, tb)
	if !ok {
		return ref{}, false, nil
	}
	k, ok := c.kernel()
	if !ok {
		return ref{}, false, nil
	}
	pl.sharePadding(k)
	ins := []core.Term{b, a} // the cotangent's factor (x of the kernel), then the filter's
	if c.d.isRows {
		ins = []core.Term{a, b}
	}
	sh, img := rs.Shape, t.Shape
	r, err = pl.custom(t, "windowCol2im", ins, func(vs []*core.Var) (core.Term, []*core.Var, error) {
		var x, y core.Term = vs[1], vs[0]
		if c.d.isRows {
			x, y = vs[0], vs[1]
		}
		p, err := opProduct(x, y, ta, tb)
		if err != nil {
			return nil, nil, err
		}
		v, err := core.NewReshape(sh.Clone(), p)
		if err != nil {
			return nil, nil, err
		}
		s, err := core.NewScatter(img.Clone(), v, t.Fn)
		return s, vs, err
	}, k)
	return r, true, err
}

// col2imSide is one side of the product of windowCol2im: its variables [lo, hi) of the
// scatter's domain, whether its factor is stored [K, side…] (else [side…, K]), and whether it
// is the product's rows (matmul's first factor).
type col2imSide struct {
	lo, hi int
	kFirst bool
	isRows bool
}

// col2im is windowCol2im's analysis of a scatter: the domain sh, the image img, the index
// function's coefficients and constants, the variables' pairs, the summed dimension's size,
// the cotangent's side d and the filter's side f with its unpaired variable n (−1: none) and
// paired variables taps (in order).
type col2im struct {
	sh, img core.Shape
	coef    [][]int64
	c0      []int64
	vars    col2imVars
	kk      int
	d, f    col2imSide
	n       int
	taps    []int
}

// analyseCol2im checks the conditions of windowCol2im on the scatter t of reshape sh (mm),
// mm reading its factors transposed when ta, tb.
func analyseCol2im(t *core.Scatter, sh core.Shape, mm *core.MatMul, ta, tb bool) (col2im, bool) {
	c := col2im{sh: sh, img: t.Shape, kk: mm.X.Type().Shape[1], n: -1}
	rows := mm.X.Type().Shape[0]
	split := 1
	for split < len(sh) && sh[:split].Size() < rows {
		split++
	}
	if split >= len(sh) || sh[:split].Size() != rows || len(t.Fn.Vars) != len(sh) || len(t.Fn.Out) != len(c.img) {
		return col2im{}, false
	}
	prog, err := kern.CompileIndexFn(t.Fn)
	if err != nil || len(prog.Frees) > 0 {
		return col2im{}, false
	}
	var ok bool
	if c.coef, c.c0, ok = prog.AffineForm(); !ok {
		return col2im{}, false
	}
	if c.vars, ok = col2imPairs(c.coef, sh, split); !ok {
		return col2im{}, false
	}
	span := func(lo, hi int) int {
		s := 1
		for j := lo; j < hi; j++ {
			if c.vars.partner[j] >= 0 {
				s *= sh[j]
			}
		}
		return s
	}
	rowsSide, colsSide := col2imSide{0, split, ta, true}, col2imSide{split, len(sh), !tb, false}
	c.d, c.f = colsSide, rowsSide
	switch sr, sc := span(0, split), span(split, len(sh)); {
	case sr > sc:
		c.d, c.f = rowsSide, colsSide
	case sr == sc:
		return col2im{}, false
	}
	for j := c.f.lo; j < c.f.hi; j++ {
		switch {
		case sh[j] == 1:
		case c.vars.partner[j] >= 0:
			c.taps = append(c.taps, j)
		case c.n >= 0:
			return col2im{}, false // two unpaired variables: c would not be a matrix
		default:
			c.n = j
		}
	}
	for j := c.d.lo; j < c.d.hi; j++ {
		if c.vars.partner[j] >= 0 && c.coef[c.vars.dim[j]][j] != 1 {
			return col2im{}, false
		}
	}
	return c, true
}

// kernel is the WindowMatMul of c, its output laid out as the image; ok is false when the
// window matrix is too small for it to pay or the image is not written exactly once.
func (c col2im) kernel() (*kern.WindowMatMul, bool) {
	dom, q, acc := c.access()
	nn := 1
	if c.n >= 0 {
		nn = c.sh[c.n]
	}
	// the window matrix must have windowGain times the filter's elements and expand the
	// cotangent (at least twice its size): where the maps are smaller than the filter's taps
	// (torchvision's resnet18 at batch 2, layer 4: 2×2 maps, 3×3 taps) the sides' spans
	// mistake the filter for the cotangent, which this rejects
	if dom.Size() < windowGain*nn*dom[:q].Size() || dom.Size() < 2*core.Shape(acc.Shape).Size() {
		return nil, false
	}
	k, err := kern.NewWindowMatMul(dom, q, acc, nn, true, false)
	if err != nil {
		return nil, false
	}
	strideN, offs := c.offsets(dom[q:])
	if err := k.ScatterTo(c.img.Size(), strideN, offs); err != nil {
		return nil, false
	}
	if err := k.MatrixAt(c.filterAt()); err != nil {
		return nil, false
	}
	return k, true
}

// filterAt is where the filter's element (n, (taps…, k)) lies in its factor, stored [K,
// side…] or [side…, K]: at strideN·n + offs[(taps…, k)].
func (c col2im) filterAt() (strideN int, offs []int64) {
	// the strides of the side's variables and of K in the factor as stored
	st := make(map[int]int64, c.f.hi-c.f.lo)
	s := int64(1)
	var sk int64
	if !c.f.kFirst {
		sk, s = 1, int64(c.kk)
	}
	for j := c.f.hi - 1; j >= c.f.lo; j-- {
		st[j], s = s, s*int64(c.sh[j])
	}
	if c.f.kFirst {
		sk = s
	}
	dims := make(core.Shape, 0, len(c.taps)+1)
	for _, j := range c.taps {
		dims = append(dims, c.sh[j])
	}
	dims = append(dims, c.kk)
	offs = kern.AffineOffsets(dims, func(i int) int64 {
		if i == len(c.taps) {
			return sk
		}
		return st[c.taps[i]]
	}, 0)
	if c.n >= 0 {
		strideN = int(st[c.n])
	}
	return strideN, offs
}

// access is the window domain — the filter's taps and K (the window matrix's rows), then one
// dimension per variable of the cotangent's side (its columns: the variable's range, or for a
// paired one its image dimension's) — split at q, and the access of the cotangent's factor
// over it: position = image index − c0 − coef·tap along a paired dimension.
func (c col2im) access() (dom core.Shape, q int, acc kern.WinAccess) {
	tapAt := map[int]int{} // filter variable → its dimension of dom
	for i, j := range c.taps {
		tapAt[j] = i
		dom = append(dom, c.sh[j])
	}
	dom = append(dom, c.kk)
	q = len(dom)
	for j := c.d.lo; j < c.d.hi; j++ {
		if c.vars.partner[j] >= 0 {
			dom = append(dom, c.img[c.vars.dim[j]])
		} else {
			dom = append(dom, c.sh[j])
		}
	}
	add := func(n int, row []int64, c0 int64) {
		acc.Shape, acc.Coef, acc.C0 = append(acc.Shape, n), append(acc.Coef, row), append(acc.C0, c0)
	}
	kRow := make([]int64, len(dom))
	kRow[q-1] = 1
	if c.d.kFirst {
		add(c.kk, kRow, 0)
	}
	for i := range c.d.hi - c.d.lo {
		j := c.d.lo + i
		row := make([]int64, len(dom))
		row[q+i] = 1
		var k0 int64
		if p := c.vars.partner[j]; p >= 0 {
			d := c.vars.dim[j]
			row[tapAt[p]] = -c.coef[d][p]
			k0 = -c.c0[d]
		}
		add(c.sh[j], row, k0)
	}
	if !c.d.kFirst {
		add(c.kk, kRow, 0)
	}
	return dom, q, acc
}

// offsets is where the window product's element (n, column) lands in the image: n·strideN
// + offs[column], over the columns cols (the cotangent side's variables).
func (c col2im) offsets(cols core.Shape) (strideN int, offs []int64) {
	st := make([]int64, len(c.img))
	for d, s := len(c.img)-1, int64(1); d >= 0; d-- {
		st[d], s = s, s*int64(c.img[d])
	}
	paired := make([]bool, len(c.img))
	for j := range c.sh {
		if c.vars.partner[j] >= 0 {
			paired[c.vars.dim[j]] = true
		}
	}
	var sn, base int64
	for d := range c.img {
		if !paired[d] {
			base += st[d] * c.c0[d]
		}
		if c.n >= 0 {
			sn += st[d] * c.coef[d][c.n]
		}
	}
	offs = kern.AffineOffsets(cols, func(i int) int64 {
		j := c.d.lo + i
		if c.vars.partner[j] >= 0 {
			return st[c.vars.dim[j]]
		}
		var s int64
		for d := range c.img {
			s += st[d] * c.coef[d][j]
		}
		return s
	}, base)
	return int(sn), offs
}

// col2imVars is, for each variable of windowCol2im's domain, its partner (−1: none) and,
// when paired, the image dimension the pair moves.
type col2imVars struct {
	partner []int
	dim     []int
}

// col2imPairs analyses windowCol2im's index function (coef[d][j]: image dimension d, domain
// variable j over sh; the rows the first split variables). ok is false when a variable of
// more than one value neither moves its dimensions alone nor is one of a pair.
func col2imPairs(coef [][]int64, sh core.Shape, split int) (col2imVars, bool) {
	c := col2imVars{partner: make([]int, len(sh)), dim: make([]int, len(sh))}
	moves := func(j int) []int {
		var ds []int
		for d := range coef {
			if coef[d][j] != 0 {
				ds = append(ds, d)
			}
		}
		return ds
	}
	for j := range sh {
		c.partner[j], c.dim[j] = -1, -1
		if sh[j] == 1 {
			continue
		}
		ds := moves(j)
		var others []int
		for i := range sh {
			if i == j || sh[i] == 1 {
				continue
			}
			for _, d := range ds {
				if coef[d][i] != 0 {
					others = append(others, i)
					break
				}
			}
		}
		switch {
		case len(others) == 0:
		case len(others) == 1 && len(ds) == 1 && len(moves(others[0])) == 1 && (j < split) != (others[0] < split):
			c.partner[j], c.dim[j] = others[0], ds[0]
		default:
			return col2imVars{}, false
		}
	}
	return c, true
}
