package raise

import (
	"fmt"
	"github.com/bulkad/bulkad/core"
	kern "github.com/bulkad/bulkad/kernel"
	"gorgonia.org/gorgonia"
	"math"
)

// Fusions that avoid materialising broadcasts and transposes. They look through top-level
// lets that are planned lazily (pl.lazy) and through shares, so a let bound to
// tr [1,0] (replicate 3 s) feeding only element-wise operations is never built as a node.

// peel returns the term a variable or share denotes when it is known (a lazily planned let),
// or t itself.
func (pl *plan) peel(t core.Term) core.Term { return pl.resolve(t, false) }

// resolve looks through shares and variables of lazily planned lets (and, with defs, of every
// top-level let) to the term they denote.
func (pl *plan) resolve(t core.Term, defs bool) core.Term {
	for i := 0; i < 1<<20; i++ { // bounded: a chain of lets cannot be longer than the program
		switch u := t.(type) {
		case *core.Share:
			t = u.Body
			continue
		case *core.Var:
			if b, ok := pl.lazy[u.Name]; ok {
				t = b
				continue
			}
			if b, ok := pl.defs[u.Name]; ok && defs {
				t = b
				continue
			}
		}
		return t
	}
	return t
}

// viewStep is one layer of a broadcast view: a replicate or a transpose (unary operations and
// casts are pushed onto the base instead).
type viewStep struct {
	rep    int          // replicate count (> 0), or
	perm   []int        // full permutation of a transpose, or
	gather *core.Gather // an affine in-bounds gather of the base, or
	shape  core.Shape   // target shape of a reshape
}

// view describes t as a strided read of a smaller or permuted base array.
type view struct {
	base    core.Term
	strides []int      // per dimension of t, into base's row-major layout
	offset  int        // element offset of t's first element in base
	steps   []viewStep // outermost first
	trivial bool       // t is its own base
}

func trivialView(t core.Term) view {
	return view{base: t, strides: t.Type().Shape.Strides(), trivial: true}
}

type unKey struct {
	op   core.UnOp
	cast core.Dtype
	base core.Term
}

// view analyses t as replicates and transposes (with element-wise unary operations and
// casts pushed through them) of a base term. A let bound to a transpose that is already
// materialised (a node value the machine fills, planned before t's reader) is read where it
// lies, contiguously, not through the transpose's strides: the zoo convnet's ReLU compared
// its channels-last convolution output read channels-first (stride 32, 2.6 ns an element)
// right after writing the channels-first copy.
func (pl *plan) view(t core.Term) view {
	if v, ok := t.(*core.Var); ok {
		if _, done := pl.env[v.Name]; done {
			if _, isTr := pl.peel(t).(*core.Transpose); isTr {
				return trivialView(t)
			}
		} else if tr, isTr := pl.peel(t).(*core.Transpose); isTr && pl.coarse && stridedRows(tr) && pl.stridedView(tr) {
			// A let bound to a transposition that moves the last axis, read element-wise,
			// is transposed once (tiled) and read contiguously: through its strides every
			// reader pays 2–3 ns an element (the zoo convnet's ReLU compared and masked its
			// channels-last convolution output read channels-first, 4 ms a step, once
			// machine.Lean stopped filling the transposed node's value).
			if _, err := pl.term(t); err == nil {
				return trivialView(t)
			}
		}
	}
	switch u := pl.peel(t).(type) {
	case *core.Replicate:
		v := pl.view(u.X)
		return view{base: v.base, strides: append([]int{0}, v.strides...), offset: v.offset,
			steps: append([]viewStep{{rep: u.N}}, v.steps...)}
	case *core.Transpose:
		v := pl.view(u.X)
		perm := fullPerm(u.Perm, len(u.X.Type().Shape))
		st := make([]int, len(perm))
		for p, q := range perm {
			st[p] = v.strides[q]
		}
		return view{base: v.base, strides: st, offset: v.offset, steps: append([]viewStep{{perm: perm}}, v.steps...)}
	case *core.Gather:
		// An affine gather proved in bounds (a broadcast or a window of the operand) is a
		// strided read of its operand.
		xv := pl.view(u.X)
		n, m := len(u.Fn.Vars), len(u.Fn.Out)
		xsh := u.X.Type().Shape
		prog, err := kern.CompileIndexFn(u.Fn)
		if err != nil || len(prog.Frees) > 0 {
			break
		}
		st, base, ok := prog.AffinePlan(u.Shape[:n], xsh[:m])
		if !ok {
			break
		}
		r := xsh[m:].Size()
		strides := make([]int, 0, len(u.Shape))
		for _, a := range st {
			strides = append(strides, a*r)
		}
		strides = append(strides, xsh[m:].Strides()...)
		if !xv.trivial {
			// A gather of a view (Gorgonia's Repeat along one axis after another: a batch
			// norm's γ [1, C, 1, 1] repeated over b, h and w as three gathers) is a view of
			// the inner base where each of its strides moves one coordinate of the operand
			// within its bounds.
			st, off, ok := composeStrides(u.Shape, strides, base*r, xsh, xv)
			if !ok {
				break
			}
			return view{base: xv.base, strides: st, offset: off, steps: append([]viewStep{{gather: u}}, xv.steps...)}
		}
		return view{base: u.X, strides: strides, offset: base * r, steps: []viewStep{{gather: u}}}
	case *core.Reshape:
		// A reshape of a cyclic read (outer replicates of a contiguous base, e.g. of a
		// scalar) stays cyclic when the new shape ends in dimensions covering the base.
		v := pl.view(u.X)
		if !v.trivial && (v.offset != 0 || !cyclic(v, u.X.Type().Shape)) {
			// A reshape that splits or merges dimensions the view steps through evenly is
			// a view with other strides, kept when its rows are broadcast (a ReLU's
			// cotangent from a global average pool, [b, c] spread over h·w and reshaped
			// [b, c, h, w], was transposed into an array to be read). Transposes with
			// contiguous rows stay arrays: torchvision mnasnet0_5's 62 convolution outputs
			// read through such views took as long in StridedBinary (0.39 → 0.59 ms) as
			// their transposes had (0.39 → 0.22).
			if st, ok := reshapeStrides(u.X.Type().Shape, v.strides, u.Shape); ok && len(st) > 0 && st[len(st)-1] == 0 {
				return view{base: v.base, strides: st, offset: v.offset, steps: append([]viewStep{{shape: u.Shape.Clone()}}, v.steps...)}
			}
			break
		}
		if v.trivial {
			break
		}
		p := v.base.Type().Shape.Size()
		sh := u.Shape
		for k := 0; k <= len(sh); k++ {
			if sh[k:].Size() != p {
				continue
			}
			st := make([]int, len(sh))
			copy(st[k:], sh[k:].Strides())
			return view{base: v.base, strides: st, steps: append([]viewStep{{shape: sh.Clone()}}, v.steps...)}
		}
	case *core.Unary:
		if v, ok := pl.pushThrough(u.X, unKey{op: u.Op}, func(b core.Term) (core.Term, error) { return core.NewUnary(u.Op, b) }); ok {
			return v
		}
	case *core.Cast:
		if v, ok := pl.pushThrough(u.X, unKey{cast: u.To}, func(b core.Term) (core.Term, error) { return core.NewCast(u.To, b) }); ok {
			return v
		}
	}
	return trivialView(t)
}

// stridedRowsMin is the least size of a transposition stridedRows copies out.
const stridedRowsMin = 1 << 14

// stridedRows reports whether tr moves its operand's last axis (its rows would be read with
// a stride) and has stridedRowsMin elements or more. Axes of one element do not count: a
// transpose moving only those moves no element (a batch norm's gradient reads its
// per-channel coefficients as tr [0,2,1] (reshape [b·h·w, 1, c] (replicate …)), a broadcast
// that was copied out, [b·h·w, c], to be read).
func stridedRows(tr *core.Transpose) bool {
	xs := tr.X.Type().Shape
	n := len(xs)
	if n < 2 || xs.Size() < stridedRowsMin {
		return false
	}
	perm := fullPerm(tr.Perm, n)
	j := n - 1 // the output's last axis of more than one element
	for j >= 0 && xs[perm[j]] == 1 {
		j--
	}
	if j < 0 {
		return false
	}
	last := perm[j]
	if last == n-1 {
		return false
	}
	for d := last + 1; d < n; d++ {
		if xs[d] > 1 {
			return true // the last output axis steps over the operand's later axes
		}
	}
	return false
}

// stridedView reports whether tr read through its view steps over elements of its base
// along its last dimension of more than one element (a stride above 1): a broadcast (stride
// 0) is cheaper read where it lies than copied out.
func (pl *plan) stridedView(tr *core.Transpose) bool {
	v := pl.view(tr)
	sh := tr.Type().Shape
	j := len(v.strides) - 1 // the last dimension of more than one element
	for j >= 0 && j < len(sh) && sh[j] == 1 {
		j--
	}
	return !v.trivial && j >= 0 && (v.strides[j] > 1 || v.strides[j] < 0)
}

// pushThrough pushes an element-wise operation of x (apply, identified by k without its base)
// through x's view: the result is the same view of the operation applied to the view's base,
// built once per base. It reports false when x's view is trivial or apply fails.
func (pl *plan) pushThrough(x core.Term, k unKey, apply func(base core.Term) (core.Term, error)) (view, bool) {
	v := pl.view(x)
	if v.trivial {
		return v, false
	}
	k.base = v.base
	b, ok := pl.pushed[k]
	if !ok {
		var err error
		if b, err = apply(v.base); err != nil {
			return v, false
		}
		pl.pushed[k] = b
	}
	v.base = b
	return v, true
}

// wrap rebuilds the view's replicates and transposes over x (a variable standing for the base).
func (v view) wrap(x core.Term) (core.Term, error) {
	var err error
	for i := len(v.steps) - 1; i >= 0; i-- {
		s := v.steps[i]
		switch {
		case s.rep > 0:
			x, err = core.NewReplicate(s.rep, x)
		case s.perm != nil:
			x, err = core.NewTranspose(s.perm, x)
		case s.gather != nil:
			x, err = core.NewGather(s.gather.Shape, x, s.gather.Fn)
		default:
			x, err = core.NewReshape(s.shape, x)
		}
		if err != nil {
			return nil, err
		}
	}
	return x, nil
}

// cyclic reports whether the view reads its base contiguously and cyclically: zero strides on
// leading dimensions, the base's row-major strides on the trailing ones.
func cyclic(v view, sh core.Shape) bool {
	p := v.base.Type().Shape.Size()
	for k := 0; k <= len(sh); k++ {
		if sh[k:].Size() != p {
			continue
		}
		rm := sh[k:].Strides()
		ok := true
		for d := range sh {
			want := 0
			if d >= k {
				want = rm[d-k]
			}
			if v.strides[d] != want && sh[d] != 1 {
				ok = false
				break
			}
		}
		if ok {
			return true
		}
	}
	return false
}

func fullPerm(perm []int, rank int) []int {
	p := make([]int, rank)
	for i := range p {
		p[i] = i
		if i < len(perm) {
			p[i] = perm[i]
		}
	}
	return p
}

// axisPerm reports whether perm moves one axis a to the front and keeps the others in order
// (then sumOuter/argmaxOuter of the transpose reduce along axis a of the operand).
func axisPerm(perm []int) (int, bool) {
	prev := -1
	for _, q := range perm[1:] {
		if q == perm[0] {
			continue
		}
		if q < prev {
			return 0, false
		}
		prev = q
	}
	return perm[0], true
}

// uniform returns v reading the first element of its base everywhere (all strides 0) when
// the base is a literal of two or more elements all equal to the bit (the lowering's
// replicated [4] block of 1.0 in 1 − σ, of 0 in a ReLU mask): the kernel then sees a
// scalar operand, one row over the whole array, instead of rows of the literal's length.
// The view's steps (and so the op's program) are kept; only the strides change.
func (pl *plan) uniform(v view) view {
	l, ok := pl.peel(v.base).(*core.Lit)
	if !ok || l.Type().Shape.Size() < 2 || !uniformLit(l) {
		return v
	}
	v.strides, v.offset, v.trivial = make([]int, len(v.strides)), 0, false
	return v
}

// uniformLit reports whether every element of l has the first one's bits.
func uniformLit(l *core.Lit) bool {
	for _, f := range l.F {
		if math.Float64bits(f) != math.Float64bits(l.F[0]) {
			return false
		}
	}
	for _, i := range l.I {
		if i != l.I[0] {
			return false
		}
	}
	for _, b := range l.B {
		if b != l.B[0] {
			return false
		}
	}
	return true
}

// stridedBinary plans x op y where at least one operand is a non-trivial view: one custom op
// reading both bases through strides.
func (pl *plan) stridedBinary(t *core.Binary, vx, vy view) (ref, error) {
	vx, vy = pl.uniform(vx), pl.uniform(vy)
	k := kern.StridedBinary{Op: t.Op, Shape: t.X.Type().Shape, XS: vx.strides, YS: vy.strides, XO: vx.offset, YO: vy.offset, VK: pl.vk, Scratch: &kern.Scratch{}}.Merged()
	views := []view{vx, vy}
	return pl.custom(t, t.Op.Word(), bases(views), func(vs []*core.Var) (core.Term, []*core.Var, error) {
		w, err := wrapAll(views, vs)
		if err != nil {
			return nil, nil, err
		}
		b, err := core.NewBinary(t.Op, w[0], w[1])
		return b, vs, err
	}, k)
}

// bases are the bases of views.
func bases(views []view) []core.Term {
	out := make([]core.Term, len(views))
	for i, v := range views {
		out[i] = v.base
	}
	return out
}

// wrapAll wraps the variables standing for the bases of views (in order) in their views.
func wrapAll(views []view, vs []*core.Var) ([]core.Term, error) {
	out := make([]core.Term, len(views))
	for i, v := range views {
		w, err := v.wrap(vs[i])
		if err != nil {
			return nil, err
		}
		out[i] = w
	}
	return out, nil
}

// sumOuter plans sumOuter x; sumOuter (tr perm y) becomes Gorgonia's Sum along one axis of y.
func (pl *plan) sumOuter(t *core.SumOuter) (ref, error) {
	if r, ok, err := pl.windowSum(t); ok {
		return r, err
	}
	xt := t.X.Type()
	if !xt.Dtype.IsFloat() {
		return pl.simple(t, "sumOuter", kern.SumOuter{})
	}
	dev := pl.vk.Wants(xt.Dtype, "sum", "", xt.Shape.Size())
	if pl.coarse && !dev {
		if r, ok, err := pl.sumAround(t); ok {
			return r, err
		}
	}
	if tr, ok := pl.peel(t.X).(*core.Transpose); ok {
		perm := fullPerm(tr.Perm, len(xt.Shape))
		if a, ok := axisPerm(perm); ok && pl.coarse && !dev && a == len(perm)-1 {
			if r, ok, err := pl.sumProdLast(t, tr, perm); ok {
				return r, err
			}
		}
		if a, ok := axisPerm(perm); ok && (dev || pl.coarse) {
			// Bulkad's own sum along axis a (Gorgonia's Sum cannot use the device).
			ysh := tr.X.Type().Shape
			k := kern.Axis{Pre: ysh[:a].Size(), N: ysh[a], Post: ysh[a+1:].Size(), VK: pl.vk}
			return pl.custom(t, "sumOuter", []core.Term{tr.X}, func(vs []*core.Var) (core.Term, []*core.Var, error) {
				b, err := sumTransposed(perm, vs)
				return b, vs, err
			}, k)
		}
		if a, ok := axisPerm(perm); ok {
			r, err := pl.native(t, []core.Term{tr.X}, func(k []*gorgonia.Node) (*gorgonia.Node, error) { return gorgonia.Sum(k[0], a) })
			if err == nil {
				pl.steps[r.step].fallback = func(vs []*core.Var) (core.Term, error) { return sumTransposed(perm, vs) }
			}
			return r, err
		}
	}
	if dev || pl.coarse {
		return pl.simple(t, "sumOuter", kern.SumOuter{VK: pl.vk})
	}
	return pl.native(t, []core.Term{t.X}, func(k []*gorgonia.Node) (*gorgonia.Node, error) { return gorgonia.Sum(k[0], 0) })
}

// sumAround plans sumOuter (reshape [P, …] (tr perm z)) where the transpose's leading axes
// (merged into P by the reshape) are summed and the rest are z's kept axes in their order,
// lying together in z between summed ones (unit axes aside): z is then [Pre, N, Post] summed
// around its middle, one kern.SumAround reading z where it lies instead of a transposed
// copy (a batch norm's per-channel sums, Sum(x, 0, 2) of [b, c, h·w], and the same sums of
// its gradient). ok is false for any other form.
func (pl *plan) sumAround(t *core.SumOuter) (r ref, ok bool, err error) {
	rs, isRs := pl.peel(t.X).(*core.Reshape)
	if !isRs || len(rs.Shape) == 0 || !t.Type().Dtype.IsFloat() {
		return ref{}, false, nil
	}
	tr, isTr := pl.peel(rs.X).(*core.Transpose)
	if !isTr {
		return ref{}, false, nil
	}
	zs := tr.X.Type().Shape
	perm := fullPerm(tr.Perm, len(zs))
	p, k := 1, 0 // the leading transposed axes perm[:k] merged into the summed dimension
	for ; k < len(perm) && p < rs.Shape[0]; k++ {
		p *= zs[perm[k]]
	}
	if p != rs.Shape[0] {
		return ref{}, false, nil
	}
	// both the summed and the kept axes in z's order (unit axes aside): the merged summed
	// index then runs through z's summed positions in z's row-major order, as SumAround adds
	// them, and the result lies as z's kept axes do
	if !increasing(perm[:k], zs) || !increasing(perm[k:], zs) {
		return ref{}, false, nil
	}
	kept := make([]bool, len(zs))
	for _, q := range perm[k:] {
		kept[q] = true
	}
	// z's non-unit axes: summed ones, then the kept ones, then summed ones
	dims := [3]int{1, 1, 1}
	part := 0
	for a, n := range zs {
		if n == 1 {
			continue
		}
		switch {
		case kept[a] && part == 0:
			part = 1
		case !kept[a] && part == 1:
			part = 2
		case kept[a] && part == 2:
			return ref{}, false, nil // kept axes apart
		}
		dims[part] *= n
	}
	shape := rs.Shape.Clone()
	if dims[2] == 1 { // the kept axes last: z's column sums, computed with z when z is a tree
		split := 0
		for zs[split:].Size() != dims[1] {
			split++
		}
		r, ok, err := pl.fusedSum(t, tr.X, split, func(b *core.Builder, z core.Term) core.Term {
			return b.SumOuter(b.Reshape(shape, b.Transpose(perm, z)))
		})
		if ok || err != nil {
			return r, true, err
		}
	}
	kk := kern.SumAround{Pre: dims[0], N: dims[1], Post: dims[2]}
	r, err = pl.custom(t, "sumAround", []core.Term{tr.X}, func(vs []*core.Var) (core.Term, []*core.Var, error) {
		var b core.Builder
		s := b.SumOuter(b.Reshape(shape, b.Transpose(perm, vs[0])))
		return s, vs, b.Err()
	}, kk)
	return r, true, err
}

// increasing reports whether the axes of shape sh listed in axes that have more than one
// element come in increasing order.
func increasing(axes []int, sh core.Shape) bool {
	prev := -1
	for _, a := range axes {
		if sh[a] == 1 {
			continue
		}
		if a < prev {
			return false
		}
		prev = a
	}
	return true
}

// sumProdLast plans sumOuter (tr perm (x * y)) with perm moving the last axis to the front
// (a sum along the last axis of a product of floats) as one kern.SumProdLast reading x and y
// through their views (a Gorgonia-built depthwise convolution's windows times its broadcast
// filter, summed over the taps: the product array is never written); ok is false for any
// other form.
func (pl *plan) sumProdLast(t *core.SumOuter, tr *core.Transpose, perm []int) (r ref, ok bool, err error) {
	prod, isBin := pl.peel(tr.X).(*core.Binary)
	if !isBin || prod.Op != core.OpMul || !prod.Type().Dtype.IsFloat() {
		return ref{}, false, nil
	}
	if r, ok, err := pl.depthwiseSum(t, perm, prod); ok {
		return r, true, err
	}
	vx, vy := pl.uniform(pl.view(prod.X)), pl.uniform(pl.view(prod.Y))
	k := kern.SumProdLast{Shape: prod.Type().Shape.Clone(), XS: vx.strides, YS: vy.strides, XO: vx.offset, YO: vy.offset, Scratch: &kern.Scratch{}}
	views := []view{vx, vy}
	r, err = pl.custom(t, "sumProdLast", bases(views), func(vs []*core.Var) (core.Term, []*core.Var, error) {
		w, err := wrapAll(views, vs)
		if err != nil {
			return nil, nil, err
		}
		var b core.Builder
		s := b.SumOuter(b.Transpose(perm, b.Binary(prod.Op, w[0], w[1])))
		return s, vs, b.Err()
	}, k)
	return r, true, err
}

// sumTransposed is sumOuter (tr perm y) over the variable y = vs[0].
func sumTransposed(perm []int, vs []*core.Var) (core.Term, error) {
	var b core.Builder
	s := b.SumOuter(b.Transpose(perm, vs[0]))
	return s, b.Err()
}

// argmaxOuter plans argmaxOuter x; argmaxOuter (tr perm y) reduces along one axis of y.
func (pl *plan) argmaxOuter(t *core.ArgmaxOuter) (ref, error) {
	if r, ok := pl.argmaxOf[t.X]; ok {
		return r, nil
	}
	r, err := pl.argmaxOuter1(t)
	if err == nil {
		pl.argmaxOf[t.X] = r
	}
	return r, err
}

// argmaxOuter1 is argmaxOuter for an operand not planned before.
func (pl *plan) argmaxOuter1(t *core.ArgmaxOuter) (ref, error) {
	// With a device, an argmax along one axis of a float array (a transpose moving it to the
	// front) is argmaxK, which can dispatch; the strided view kernel stays on the CPU.
	axisOfFloat := false
	if tr, ok := pl.peel(t.X).(*core.Transpose); ok && pl.vk.Wants(tr.X.Type().Dtype, "argmax", "", tr.X.Type().Shape.Size()) {
		_, axisOfFloat = axisPerm(fullPerm(tr.Perm, len(t.X.Type().Shape)))
	}
	if !axisOfFloat {
		if r, ok, err := pl.argmaxOfView(t); ok {
			return r, err
		}
	}
	x := t.X
	axis := 0
	if tr, ok := pl.peel(t.X).(*core.Transpose); ok {
		perm := fullPerm(tr.Perm, len(t.X.Type().Shape))
		if a, ok := axisPerm(perm); ok {
			x, axis = tr.X, a
		}
	}
	sh := x.Type().Shape
	k := kern.Axis{Argmax: true, Pre: sh[:axis].Size(), N: sh[axis], Post: sh[axis+1:].Size(), VK: pl.vk}
	if x == t.X {
		return pl.simple(t, "argmaxOuter", k)
	}
	return pl.custom(t, "argmaxOuter", []core.Term{x}, func(vs []*core.Var) (core.Term, []*core.Var, error) {
		perm := make([]int, len(sh))
		perm[0] = axis
		j := 1
		for i := range sh {
			if i != axis {
				perm[j] = i
				j++
			}
		}
		var b core.Builder
		a := b.ArgmaxOuter(b.Transpose(perm, vs[0]))
		return a, vs, b.Err()
	}, k)
}

// transpose plans tr perm x: x itself for the identity, a reshape when only axes of one
// element move, a rewrite by transposeOf where one applies, else a transposition step.
func (pl *plan) transpose(t *core.Transpose) (ref, error) {
	xt := t.X.Type()
	perm := make([]int, len(xt.Shape))
	identity := true
	for i := range perm {
		perm[i] = i
		if i < len(t.Perm) {
			perm[i] = t.Perm[i]
		}
		if perm[i] != i {
			identity = false
		}
	}
	if identity {
		return pl.term(t.X)
	}
	if increasing(perm, xt.Shape) {
		// only axes of one element move: the elements keep their order, a reshape (the
		// zoo MobileNet's batch norms on [b·h·w, c] rows transposed [b·h·w, c, 1] → [b·h·w,
		// 1, c], a copy of the activation each)
		if rs, err := core.NewReshape(t.Type().Shape, t.X); err == nil {
			return pl.term(rs)
		}
	}
	if r, ok, err := pl.windowTransposed(t, perm); ok {
		return r, err
	}
	if u, ok := pl.transposeOf(t); ok {
		return pl.term(u)
	}
	if xt.Dtype.IsFloat() && !pl.coarse && !pl.vk.Wants(xt.Dtype, "gather", "", xt.Shape.Size()) {
		return pl.native(t, []core.Term{t.X}, func(k []*gorgonia.Node) (*gorgonia.Node, error) {
			return gorgonia.Transpose(k[0], perm...)
		})
	}
	return pl.simple(t, "tr", kern.Transpose{Perm: perm, Shape: xt.Shape, VK: pl.vk})
}

// gatherOfTranspose rewrites gather sh (tr perm y) f, when f indexes every dimension, as a
// gather from y with f's outputs permuted.
func (pl *plan) gatherOfTranspose(t *core.Gather) (core.Term, bool) {
	tr, ok := pl.peel(t.X).(*core.Transpose)
	if !ok || len(t.Fn.Out) != len(t.X.Type().Shape) {
		return nil, false
	}
	_, planned := pl.memo[t.X]
	if _, done := pl.memo[pl.peel(t.X)]; pl.coarse && (planned || done) {
		return nil, false // the transpose is written anyway: read it in its order
	}
	perm := fullPerm(tr.Perm, len(t.X.Type().Shape))
	out := make([]core.Term, len(perm))
	for p, q := range perm {
		out[q] = t.Fn.Out[p]
	}
	var b core.Builder
	g := b.Gather(t.Shape, tr.X, b.IndexFn(t.Fn.Vars, out...))
	return g, b.Err() == nil
}

// transposeOf rewrites a transpose so that it is never materialised by itself:
//
//	tr p (tr q z)          = tr (q∘p) z (or z)
//	tr [1,0] (matmul a b)  = matmul (tr [1,0] b) (tr [1,0] a)   (GEMM flags; batched alike
//	                         with the transpose of the last two dimensions)
//	tr p (x op y)          = (tr p x) op (tr p y)               (a strided element-wise op)
//	tr p (scatter …), tr p (gather …) with full index functions: permuted index functions.
func (pl *plan) transposeOf(t *core.Transpose) (core.Term, bool) {
	rank := len(t.X.Type().Shape)
	perm := fullPerm(t.Perm, rank)
	var b core.Builder
	var x core.Term
	switch u := pl.peel(t.X).(type) {
	case *core.Transpose:
		q := fullPerm(u.Perm, rank)
		r := make([]int, rank)
		for i := range r {
			r[i] = q[perm[i]]
		}
		x = b.Transpose(r, u.X)
	case *core.MatMul:
		if !core.IsSwapLastTwo(perm, rank) {
			return nil, false
		}
		x = b.MatMul(b.Transpose(perm, u.Y), b.Transpose(perm, u.X))
	case *core.Binary:
		x = b.Binary(u.Op, b.Transpose(perm, u.X), b.Transpose(perm, u.Y))
	case *core.Scatter:
		if len(u.Fn.Out) != rank {
			return nil, false
		}
		out := make([]core.Term, rank)
		sh := make(core.Shape, rank)
		for p, q := range perm {
			out[p] = u.Fn.Out[q]
			sh[p] = u.Shape[q]
		}
		x = b.Scatter(sh, u.X, b.IndexFn(u.Fn.Vars, out...))
	case *core.Gather:
		if len(u.Fn.Vars) != rank {
			return nil, false
		}
		vars := make([]*core.Var, rank)
		sh := make(core.Shape, rank)
		for p, q := range perm {
			vars[p] = u.Fn.Vars[q]
			sh[p] = u.Shape[q]
		}
		x = b.Gather(sh, u.X, b.IndexFn(vars, u.Fn.Out...))
	default:
		return nil, false
	}
	return x, b.Err() == nil
}

// maskMul plans cast ρ (p cmp q) * z (either operand order) as one op reading p, q and z
// through their views: out = z · (1 if p cmp q else 0), with no mask array materialised.
// The gradient of max, max-pooling and argmax-style selections has this form.
func (pl *plan) maskMul(t *core.Binary) (ref, bool, error) {
	if t.Op != core.OpMul || !t.Type().Dtype.IsFloat() {
		return ref{}, false, nil
	}
	for side := 0; side < 2; side++ {
		mask, z := t.X, t.Y
		if side == 1 {
			mask, z = t.Y, t.X
		}
		c, ok := pl.peel(mask).(*core.Cast)
		if !ok || c.To != t.Type().Dtype {
			continue
		}
		cmp, ok := pl.peel(c.X).(*core.Binary)
		if !ok || !cmp.Op.IsComparison() || !cmp.X.Type().Dtype.IsNumeric() {
			continue
		}
		vp, vq, vz := pl.uniform(pl.view(cmp.X)), pl.uniform(pl.view(cmp.Y)), pl.uniform(pl.view(z))
		k := kern.MaskMul{Cmp: cmp.Op, Shape: t.Type().Shape,
			St: [3][]int{vp.strides, vq.strides, vz.strides}, Off: [3]int{vp.offset, vq.offset, vz.offset}}.Merged()
		views := []view{vp, vq, vz}
		r, err := pl.custom(t, "maskMul", bases(views), func(vs []*core.Var) (core.Term, []*core.Var, error) {
			w, err := wrapAll(views, vs)
			if err != nil {
				return nil, nil, err
			}
			var b core.Builder
			m := b.Cast(c.To, b.Binary(cmp.Op, w[0], w[1]))
			x, y := m, w[2]
			if side == 1 {
				x, y = y, x
			}
			prod := b.Mul(x, y)
			return prod, vs, b.Err()
		}, k)
		return r, true, err
	}
	return ref{}, false, nil
}

// argmaxOfView plans argmaxOuter v where v is a strided view (e.g. the windows of a pooling
// layer gathered from the feature map), possibly reshaped so that its first k dimensions are
// merged into the reduced one: the argmax reads the base through strides, and the window
// array is never materialised.
func (pl *plan) argmaxOfView(t *core.ArgmaxOuter) (ref, bool, error) {
	x := pl.peel(t.X)
	k := 1
	var reshape core.Shape
	if r, ok := x.(*core.Reshape); ok {
		ysh := r.X.Type().Shape
		// [d0 … dk-1] ++ rest  →  [d0·…·dk-1] ++ rest
		for k = 1; k <= len(ysh); k++ {
			if ysh[:k].Size() == r.Shape[0] && ysh[k:].Equal(r.Shape[1:]) {
				break
			}
		}
		if k > len(ysh) || len(r.Shape) == 0 {
			return ref{}, false, nil
		}
		reshape = r.Shape
		x = r.X
	}
	v := pl.view(x)
	if v.trivial || !v.base.Type().Dtype.IsNumeric() {
		return ref{}, false, nil
	}
	sh := x.Type().Shape
	if len(sh) < k {
		return ref{}, false, nil
	}
	// The same argmax over the same windows of the same base is one step, however its
	// index functions name their variables (the pooling's forward and its gradients).
	bases, err := pl.terms(v.base)
	if err != nil {
		return ref{}, true, err
	}
	key := fmt.Sprintf("%v|%v|%v|%d|%v|%v", bases[0], sh, v.strides, v.offset, reshape, t.Type())
	if r, ok := pl.argmaxViews[key]; ok {
		return r, true, nil
	}
	ak := &kern.ArgmaxView{Inner: sh[k:], InnerSt: v.strides[k:], Off: v.offset}
	outer := sh[:k]
	idx := make([]int, k)
	for i := 0; i < outer.Size(); i++ {
		o := 0
		for d := range idx {
			o += idx[d] * v.strides[d]
		}
		ak.OuterOff = append(ak.OuterOff, o)
		for d := k - 1; d >= 0; d-- {
			idx[d]++
			if idx[d] < outer[d] {
				break
			}
			idx[d] = 0
		}
	}
	r, err := pl.custom(t, "argmaxOuter", []core.Term{v.base}, func(vs []*core.Var) (core.Term, []*core.Var, error) {
		w, err := v.wrap(vs[0])
		if err != nil {
			return nil, nil, err
		}
		if reshape != nil {
			if w, err = core.NewReshape(reshape, w); err != nil {
				return nil, nil, err
			}
		}
		a, err := core.NewArgmaxOuter(w)
		return a, vs, err
	}, ak)
	if err == nil {
		pl.argmaxViews[key] = r
	}
	return r, true, err
}
