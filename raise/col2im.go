package raise

import (
	"github.com/bulkad/bulkad/core"
	kern "github.com/bulkad/bulkad/kernel"
)

// Gorgonia's convolution gradient with respect to its input is col2im of a product: the
// scatter of δ·W, [b·oh·ow, c·kh·kw] viewed as [b, oh, ow, c, kh, kw], into the image
// [b, c, h, w]. Walked in that order, each point adds a 3×3 window (nine scalar additions
// into nine rows of the padded image, 0.64 ns an element). Computed transposed, (δ·W)ᵀ =
// Wᵀ·δᵀ is [c·kh·kw, b·oh·ow]: each of its rows is a whole output plane (oh, ow) of one tap,
// which the padded scatter adds a contiguous row of ow at a time (its rows mode, as for the
// ONNX importer's layout). The two walks visit the points of one image element in opposite
// orders of the taps (the original walk meets oh ascending, so kh descending), so the taps
// that move along with an output position are reversed — the rows of Wᵀ permuted by a small
// gather, the index function rewritten to match — and every element of the image receives
// its terms in the original order: the same bits.

// transposedScatter plans t, a scatter of reshape S (matmul A B) whose domain is S, as the
// scatter of the product computed transposed (see above), when the product's rows are the
// first dimensions of S and its columns the rest, the index function is affine, every
// dimension of the columns either moves along a dimension of the rows (the same single image
// dimension, both coefficients positive, in the same order: kh with oh, kw with ow) or is the
// only one to move its image dimensions (c), and the transposed scatter runs in the padded
// rows mode while the original does not. ok is false when it does not apply.
func (pl *plan) transposedScatter(t *core.Scatter) (r ref, ok bool, err error) {
	rs, ok := pl.peel(t.X).(*core.Reshape)
	if !ok || pl.vk != nil {
		return ref{}, false, nil
	}
	mm, ok := pl.peel(rs.X).(*core.MatMul)
	if !ok || !mm.Type().Dtype.IsFloat() || len(mm.X.Type().Shape) != 2 || len(mm.Y.Type().Shape) != 2 || !pl.onlyUse(t.X) || !pl.onlyUse(rs.X) {
		return ref{}, false, nil // (a product read elsewhere too is computed as it lies anyway)
	}
	sh, vars := rs.Shape, t.Fn.Vars
	rows, kk := mm.X.Type().Shape[0], mm.X.Type().Shape[1]
	split := -1
	for k := 1; k < len(sh); k++ {
		if sh[:k].Size() == rows {
			split = k
			break
		}
	}
	if split < 0 || len(vars) != len(sh) {
		return ref{}, false, nil
	}
	prog, err := kern.CompileIndexFn(t.Fn)
	if err != nil || len(prog.Frees) > 0 {
		return ref{}, false, nil
	}
	coef, _, ok := prog.AffineForm()
	if !ok {
		return ref{}, false, nil
	}
	rev, ok := tapPairs(coef, sh, split)
	if !ok || pl.scatterRows(t.Fn, sh, t.Shape) {
		return ref{}, false, nil
	}
	// the new domain: the columns' dimensions (taps reversed), then the rows'
	nvars := append(append([]*core.Var{}, vars[split:]...), vars[:split]...)
	nsh := append(append(core.Shape{}, sh[split:]...), sh[:split]...)
	sub := map[string]core.Term{}
	for j := range rev {
		if sub[vars[j].Name], err = reversed(vars[j], sh[j]); err != nil {
			return ref{}, false, err
		}
	}
	out := make([]core.Term, len(t.Fn.Out))
	for i, o := range t.Fn.Out {
		if out[i], err = core.Subst(o, sub); err != nil {
			return ref{}, false, err
		}
	}
	fn, err := core.NewIndexFn(nvars, out)
	if err != nil || !pl.scatterRows(fn, nsh, t.Shape) {
		return ref{}, false, err
	}
	// Wᵀ's rows in the new order: a gather of op(B)ᵀ viewed as [columns' dims…, K]
	var bt core.Term
	bt, err = core.NewTranspose([]int{1, 0}, mm.Y)
	if err != nil {
		return ref{}, false, err
	}
	if len(rev) > 0 {
		cols := sh[split:]
		gsh := append(append(core.Shape{}, cols...), kk)
		br, err := core.NewReshape(gsh, bt)
		if err != nil {
			return ref{}, false, err
		}
		gout := make([]core.Term, len(cols))
		for j := range cols {
			gout[j] = vars[split+j]
			if s, ok := sub[vars[split+j].Name]; ok {
				gout[j] = s
			}
		}
		gfn, err := core.NewIndexFn(vars[split:], gout)
		if err != nil {
			return ref{}, false, err
		}
		g, err := core.NewGather(gsh, br, gfn)
		if err != nil {
			return ref{}, false, err
		}
		if bt, err = core.NewReshape(core.Shape{cols.Size(), kk}, g); err != nil {
			return ref{}, false, err
		}
	}
	at, err := core.NewTranspose([]int{1, 0}, mm.X)
	if err != nil {
		return ref{}, false, err
	}
	prod, err := core.NewMatMul(bt, at)
	if err != nil {
		return ref{}, false, err
	}
	x, err := core.NewReshape(nsh, prod)
	if err != nil {
		return ref{}, false, err
	}
	s, err := core.NewScatter(t.Shape.Clone(), x, fn)
	if err != nil {
		return ref{}, false, err
	}
	r, err = pl.term(s)
	return r, true, err
}

// tapPairs checks the affine index function (coef[k][j]: image dimension k, domain variable
// j over sh, the product's rows the first split variables) for transposedScatter and returns
// the column variables to reverse: those paired with a row variable. Every variable of more
// than one value must either be the only one to move the image dimensions it moves, or be
// paired: the only two to move one image dimension, each moving no other, both positively, one
// a row variable, the other a column variable; the pairs must keep the same order on both
// sides.
func tapPairs(coef [][]int64, sh core.Shape, split int) (rev map[int]bool, ok bool) {
	moved := func(j int) []int {
		var ks []int
		for k := range coef {
			if coef[k][j] != 0 {
				ks = append(ks, k)
			}
		}
		return ks
	}
	rev = map[int]bool{}
	partner := map[int]int{}
	for j := range sh {
		if sh[j] == 1 {
			continue
		}
		ks := moved(j)
		var others []int
		for i := range sh {
			if i == j || sh[i] == 1 {
				continue
			}
			for _, k := range ks {
				if coef[k][i] != 0 {
					others = append(others, i)
					break
				}
			}
		}
		switch {
		case len(others) == 0:
		case len(others) == 1 && len(ks) == 1 && len(moved(others[0])) == 1 && (j < split) != (others[0] < split) && coef[ks[0]][j] > 0 && coef[ks[0]][others[0]] > 0:
			partner[j] = others[0]
			if j >= split {
				rev[j] = true
			}
		default:
			return nil, false
		}
	}
	last := -1 // the row partners of the reversed columns, in the columns' order
	for j := split; j < len(sh); j++ {
		if rev[j] {
			if partner[j] < last {
				return nil, false
			}
			last = partner[j]
		}
	}
	return rev, true
}

// reversed is the index term (n−1) − v.
func reversed(v *core.Var, n int) (core.Term, error) {
	l, err := core.NewLitI(core.Shape{}, []int64{int64(n - 1)})
	if err != nil {
		return nil, err
	}
	return core.NewBinary(core.OpSub, l, v)
}

// scatterRows reports whether a scatter by fn of an array over the domain dom into shape sh
// runs in the padded rows mode (kern.IndexPlan.PaddedRows).
func (pl *plan) scatterRows(fn *core.IndexFn, dom, sh core.Shape) bool {
	prog, err := kern.CompileIndexFn(fn)
	if err != nil || len(prog.Frees) > 0 || len(fn.Out) > len(sh) {
		return false
	}
	ip := kern.IndexPlan{Fn: prog}
	ip.SetFastPaths(dom, sh[:len(fn.Out)])
	return ip.PaddedRows()
}

// onlyUse reports whether t, and each share and lazily planned let variable peel looks
// through from it, is referenced once in the program (by the term being planned).
func (pl *plan) onlyUse(t core.Term) bool {
	if pl.body == nil {
		return false // no program to count in
	}
	if pl.uses == nil {
		pl.uses, pl.varUses = map[core.Term]int{}, map[string]int{}
		var kb [4]core.Term
		core.PostOrder(pl.body, func(u core.Term) {
			for _, c := range core.AppendChildren(kb[:0], u) {
				pl.uses[c]++
				if v, ok := c.(*core.Var); ok {
					pl.varUses[v.Name]++
				}
			}
		})
	}
	for i := 0; i < 1<<20; i++ {
		if pl.uses[t] > 1 {
			return false
		}
		switch u := t.(type) {
		case *core.Share:
			t = u.Body
			continue
		case *core.Var:
			if pl.varUses[u.Name] > 1 {
				return false
			}
			if b, ok := pl.lazy[u.Name]; ok {
				t = b
				continue
			}
		}
		return true
	}
	return false
}

// productScatter plans t, a scatter of (a reshape of) a product x * y used nowhere else,
// as kern.ScatterProduct when the scatter runs in the padded windows mode: each window's
// nine products are computed as they are added, from x and y read through their strides
// (a Gorgonia-built depthwise convolution's input gradient: δ spread over the taps times the
// broadcast filter), instead of materialising the product. ok is false when it does not
// apply.
func (pl *plan) productScatter(t *core.Scatter) (r ref, ok bool, err error) {
	if pl.vk != nil || !pl.onlyUse(t.X) {
		return ref{}, false, nil
	}
	x := pl.peel(t.X)
	dom := x.Type().Shape
	rs, reshaped := x.(*core.Reshape)
	if reshaped {
		if !pl.onlyUse(rs.X) {
			return ref{}, false, nil
		}
		x = pl.peel(rs.X)
	}
	prod, ok := x.(*core.Binary)
	if !ok || prod.Op != core.OpMul || !prod.Type().Dtype.IsFloat() || len(t.Fn.Vars) != len(dom) {
		return ref{}, false, nil
	}
	if r, ok, err := pl.depthwiseInput(t, prod, dom, reshaped); ok {
		return r, true, err
	}
	prog, err := kern.CompileIndexFn(t.Fn)
	if err != nil || len(prog.Frees) > 0 || len(t.Fn.Out) > len(t.Shape) {
		return ref{}, false, nil
	}
	sk := &kern.Scatter{Dom: dom, Dst: t.Shape[:len(t.Fn.Out)], Rest: 1}
	sk.Fn = prog
	sk.SetFastPaths(sk.Dom, sk.Dst)
	if !sk.PaddedWindows() {
		return ref{}, false, nil
	}
	vx, vy := pl.uniform(pl.view(prod.X)), pl.uniform(pl.view(prod.Y))
	k, err := kern.NewScatterProduct(sk, prod.Type().Shape, vx.strides, vy.strides, vx.offset, vy.offset)
	if err != nil {
		return ref{}, false, nil // another geometry: the product is materialised
	}
	views := []view{vx, vy}
	r, err = pl.customAvoid(t, "scatterProduct", bases(views), []*core.IndexFn{t.Fn}, func(vs []*core.Var) (core.Term, []*core.Var, error) {
		w, err := wrapAll(views, vs)
		if err != nil {
			return nil, nil, err
		}
		s, err := scatterOfProduct(t, w[0], w[1], reshaped, dom)
		return s, vs, err
	}, k)
	return r, true, err
}

// productReduce plans t, a scatter of a product x * y (used nowhere else) of shape
// [lead…, C, T] whose index function sends every point to one block — the sum over the
// leading dimensions, a Gorgonia-built depthwise convolution's filter gradient — as
// kern.ReduceProduct, when x is spread over T (stride 0) and y is contiguous along [C, T]:
// each product is added as it is computed instead of being materialised. ok is false when it
// does not apply.
func (pl *plan) productReduce(t *core.Scatter) (r ref, ok bool, err error) {
	if pl.vk != nil || !pl.onlyUse(t.X) {
		return ref{}, false, nil
	}
	prod, ok := pl.peel(t.X).(*core.Binary)
	if !ok || prod.Op != core.OpMul || !prod.Type().Dtype.IsFloat() {
		return ref{}, false, nil
	}
	ps := prod.Type().Shape
	n, m := len(t.Fn.Vars), len(t.Fn.Out)
	if len(ps) != n+2 || m > len(t.Shape) || len(t.Shape)-m != 2 || t.Shape[m] != ps[n] || t.Shape[m+1] != ps[n+1] {
		return ref{}, false, nil
	}
	prog, err := kern.CompileIndexFn(t.Fn)
	if err != nil || len(prog.Frees) > 0 {
		return ref{}, false, nil
	}
	ip := kern.IndexPlan{Fn: prog}
	ip.SetFastPaths(ps[:n], t.Shape[:m])
	if !ip.Affine {
		return ref{}, false, nil
	}
	for _, s := range ip.AffineStrides {
		if s != 0 {
			return ref{}, false, nil
		}
	}
	if n == 1 {
		if r, ok, err := pl.depthwiseFilter(t, prod, ip.AffineBase); ok {
			return r, true, err
		}
	}
	vx, vy := pl.uniform(pl.view(prod.X)), pl.uniform(pl.view(prod.Y))
	c, tt := ps[n], ps[n+1]
	if vx.strides[n+1] != 0 || vy.strides[n+1] != 1 || vy.strides[n] != tt || vx.strides[n] < 0 {
		if vy.strides[n+1] == 0 && vx.strides[n+1] == 1 && vx.strides[n] == tt && vy.strides[n] >= 0 {
			vx, vy = vy, vx // the spread factor first
		} else {
			return ref{}, false, nil
		}
	}
	k := &kern.ReduceProduct{Lead: ps[:n].Clone(), C: c, T: tt, XS: vx.strides[:n], YS: vy.strides[:n], XC: vx.strides[n], YC: vy.strides[n],
		XO: vx.offset, YO: vy.offset, Out: t.Shape.Size(), OutAt: ip.AffineBase * c * tt}
	views := []view{vx, vy}
	r, err = pl.customAvoid(t, "reduceProduct", bases(views), []*core.IndexFn{t.Fn}, func(vs []*core.Var) (core.Term, []*core.Var, error) {
		w, err := wrapAll(views, vs)
		if err != nil {
			return nil, nil, err
		}
		p, err := core.NewBinary(core.OpMul, w[0], w[1])
		if err != nil {
			return nil, nil, err
		}
		s, err := core.NewScatter(t.Shape.Clone(), p, t.Fn)
		return s, vs, err
	}, k)
	return r, true, err
}

// scatterOfProduct is t's scatter (its shape and index function) of x * y, reshaped to dom
// first when reshaped: the program of an op that computes such a scatter without the product.
func scatterOfProduct(t *core.Scatter, x, y core.Term, reshaped bool, dom core.Shape) (core.Term, error) {
	var p core.Term
	p, err := core.NewBinary(core.OpMul, x, y)
	if err != nil {
		return nil, err
	}
	if reshaped {
		if p, err = core.NewReshape(dom.Clone(), p); err != nil {
			return nil, err
		}
	}
	return core.NewScatter(t.Shape.Clone(), p, t.Fn)
}
