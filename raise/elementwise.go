package raise

import (
	"slices"

	"github.com/bulkad/bulkad/core"
	kern "github.com/bulkad/bulkad/kernel"
	"gorgonia.org/gorgonia"
)

// Element-wise trees as one kernel (coarse plans on the CPU). A float binary or unary
// operation whose operands are themselves element-wise operations used nowhere else (inline,
// or lazily planned lets unless the plan packs its lets for a later program) is planned with
// them as one kern.Fused: the batch norms of a Gorgonia-built CNN and their gradients were
// chains of three to six kernels, each writing an array the next read back. The leaves are
// views (replicates, transposes, affine gathers of smaller arrays, read through strides) or
// planned terms; a ReLU mask times a cotangent, cast (p cmp q) · z, is one instruction that
// reads p and q; a subterm read twice by one operation (c·x + c·x) is computed once. A tree
// is fused only when it has at least two operations (one is what the other kernels already
// do) and every leaf reads its rows contiguously or broadcast (a transposed leaf keeps the
// tiled kernels). A sum of such a tree over its leading dimensions (a batch norm's Σ (x − m)²,
// its gradient's Σ c·x̂) runs with the tree (fusedSum), the tree's array never written. The
// kernel runs each operation with the unfused kernels' loops: the bits are the unfused
// plan's.

// binary plans a binary operation: the special forms first (a concatenation's sum of
// gathers, a ReLU mask times a scatter), then a fused tree, a mask product, operands read
// through strides, and the plain kernel.
func (pl *plan) binary(t *core.Binary) (ref, error) {
	if r, ok, err := pl.concatSum(t); ok {
		return r, err
	}
	if r, ok, err := pl.maskedScatter(t); ok {
		return r, err
	}
	if r, ok, err := pl.matmulAcc(t); ok {
		return r, err
	}
	if r, ok, err := pl.elementwise(t); ok {
		return r, err
	}
	if r, ok, err := pl.maskMul(t); ok {
		return r, err
	}
	// Fusion: operands that are replicates and transposes (of unary functions) of smaller
	// arrays are read through strides instead of being materialised.
	if vx, vy := pl.uniform(pl.view(t.X)), pl.uniform(pl.view(t.Y)); !vx.trivial || !vy.trivial {
		return pl.stridedBinary(t, vx, vy)
	}
	if f, ok := nativeFor(nativeBinary, t.Op, t.X.Type().Dtype); ok && !pl.coarse && !pl.vk.Wants(t.X.Type().Dtype, "binary", t.Op.String(), t.Type().Shape.Size()) {
		return pl.native(t, []core.Term{t.X, t.Y}, func(k []*gorgonia.Node) (*gorgonia.Node, error) { return f(k[0], k[1]) })
	}
	return pl.simple(t, t.Op.Word(), kern.Binary{Op: t.Op, VK: pl.vk})
}

// fuseMin is the least size of a fused tree: below it the arrays stay in the L2 cache, where
// the unfused kernels' vector loops, one call an operation, beat the fused kernel's block
// loop (torchvision densenet121 at batch 2, arrays of 4 Ki to 64 Ki elements, was 4% slower
// fused; the zoo's batch norms over 128 Ki and 256 Ki elements are faster).
const fuseMin = 1 << 17

// maxFusedCode bounds the instructions of a fused tree: operands past it are leaves, so
// that planning a long chain that is not fused in the end (a transposed leaf at its bottom)
// walks a bounded part of it at each of its operations, not the rest of the chain.
const maxFusedCode = 64

// fuseTree collects the tree of one fused kernel.
type fuseTree struct {
	pl    *plan
	dt    core.Dtype
	code  []kern.FusedIns
	views []view
	left  []bool // per instruction: a FuseMaskMul whose mask was the product's left operand
	ops   int
}

// elementwise plans t (a float Binary or Unary, or a Cast of a comparison: a mask) as a fused
// tree when that applies.
func (pl *plan) elementwise(t core.Term) (ref, bool, error) {
	dt := t.Type().Dtype
	if !pl.coarse || pl.vk != nil || !dt.IsFloat() || t.Type().Shape.Size() < fuseMin {
		return ref{}, false, nil
	}
	ft := &fuseTree{pl: pl, dt: dt}
	if !ft.node(t) || ft.ops < 2 && !ft.maskOfRowBroadcast() && !ft.mask() {
		return ref{}, false, nil
	}
	sh := t.Type().Shape
	leaves := make([]kern.FusedLeaf, len(ft.views))
	for i, v := range ft.views {
		leaves[i] = kern.FusedLeaf{Strides: v.strides, Off: v.offset}
	}
	if !kern.FusedReadable(sh, leaves) {
		return ref{}, false, nil
	}
	k, err := kern.NewFused(sh, ft.code, leaves)
	if err != nil {
		return ref{}, true, termErr(t, "%v", err)
	}
	r, err := pl.custom(t, "fused", bases(ft.views), func(vs []*core.Var) (core.Term, []*core.Var, error) {
		w, err := wrapAll(ft.views, vs)
		if err != nil {
			return nil, nil, err
		}
		b, err := ft.program(w)
		return b, vs, err
	}, k)
	return r, true, err
}

// program rebuilds the tree's term over the leaves' terms w.
func (ft *fuseTree) program(w []core.Term) (core.Term, error) {
	var b core.Builder
	var stack []core.Term
	for pc, in := range ft.code {
		switch in.Kind {
		case kern.FuseLeaf:
			stack = append(stack, w[in.Leaf])
			continue
		case kern.FuseDup:
			stack = append(stack, stack[len(stack)-1])
			continue
		case kern.FuseUnary:
			n := len(stack) - 1
			stack[n] = b.Unary(in.Un, stack[n])
		case kern.FuseBinary:
			n := len(stack) - 2
			stack = append(stack[:n], b.Binary(in.Bin, stack[n], stack[n+1]))
		case kern.FuseCmp:
			n := len(stack) - 2
			stack = append(stack[:n], b.Cast(ft.dt, b.Binary(in.Bin, stack[n], stack[n+1])))
		case kern.FuseMaskMul:
			n := len(stack) - 3
			m := b.Cast(ft.dt, b.Binary(in.Bin, stack[n], stack[n+1]))
			x, y := m, stack[n+2]
			if !ft.left[pc] {
				x, y = y, x
			}
			stack = append(stack[:n], b.Mul(x, y))
		}
	}
	return stack[0], b.Err()
}

// maskOfRowBroadcast reports whether the tree is one mask product (FuseMaskMul) with a leaf
// that repeats one value along each row and varies across rows (a per-channel value over
// [b, c, h·w]): the fused kernel reads it once a run (leafPeriodic), where MaskMul's strided
// loops took 200 µs for [32, 16, 256] float32 (a ReLU's cotangent from a global average
// pool). Other single operations on such leaves keep StridedBinary (the zoo ResNet's ten
// were 0.18 ms a step so, 0.31 fused).
func (ft *fuseTree) maskOfRowBroadcast() bool {
	if ft.ops != 1 || ft.code[len(ft.code)-1].Kind != kern.FuseMaskMul {
		return false
	}
	for _, v := range ft.views {
		n := len(v.strides)
		if n > 1 && v.strides[n-1] == 0 && slices.ContainsFunc(v.strides[:n-1], func(s int) bool { return s != 0 }) {
			return true
		}
	}
	return false
}

// mask reports whether the tree is one comparison cast to its dtype (FuseCmp: a ReLU's
// mask, cast ρ (x ≥ 0)): one pass, where the unfused plan writes the comparison's bool array
// (StridedBinary or Binary) and casts it in a second step (the zoo MNIST convnet's three).
func (ft *fuseTree) mask() bool {
	return ft.ops == 1 && ft.code[len(ft.code)-1].Kind == kern.FuseCmp
}

// room reports whether the tree may grow by an operation and its operands.
func (ft *fuseTree) room() bool {
	return len(ft.views) < kern.FusedMaxLeaves && len(ft.code) < maxFusedCode
}

// emit appends an operation.
func (ft *fuseTree) emit(in kern.FusedIns, left bool) {
	ft.code = append(ft.code, in)
	ft.left = append(ft.left, left)
	ft.ops++
}

// node adds u, an operation of the tree, and reports false when it is not one the kernel
// computes (then nothing is fused).
func (ft *fuseTree) node(u core.Term) bool {
	switch u := u.(type) {
	case *core.Unary:
		if u.X.Type().Dtype != ft.dt || u.Type().Dtype != ft.dt {
			return false
		}
		if u.Op == core.OpStopGrad { // the identity in a forward pass
			return ft.operand(u.X)
		}
		if !ft.operand(u.X) {
			return false
		}
		ft.emit(kern.FusedIns{Kind: kern.FuseUnary, Un: u.Op}, false)
		return true
	case *core.Binary:
		if u.Op.IsComparison() || u.X.Type().Dtype != ft.dt || u.Type().Dtype != ft.dt {
			return false
		}
		if u.Op == core.OpMul {
			for side := 0; side < 2; side++ {
				mask, z := u.X, u.Y
				if side == 1 {
					mask, z = u.Y, u.X
				}
				if cmp, ok := ft.maskOf(mask); ok {
					if !ft.operand(cmp.X) || !ft.operand(cmp.Y) || !ft.operand(z) {
						return false
					}
					ft.emit(kern.FusedIns{Kind: kern.FuseMaskMul, Bin: cmp.Op}, side == 0)
					return true
				}
			}
		}
		if u.X == u.Y && ft.room() && ft.absorbsTwice(u.X) {
			if !ft.node(ft.pl.peel(u.X)) {
				return false
			}
			ft.code = append(ft.code, kern.FusedIns{Kind: kern.FuseDup})
			ft.left = append(ft.left, false)
		} else if !ft.operand(u.X) || !ft.operand(u.Y) {
			return false
		}
		ft.emit(kern.FusedIns{Kind: kern.FuseBinary, Bin: u.Op}, false)
		return true
	case *core.Cast:
		cmp, ok := ft.maskOf(u)
		if !ok {
			return false
		}
		if !ft.operand(cmp.X) || !ft.operand(cmp.Y) {
			return false
		}
		ft.emit(kern.FusedIns{Kind: kern.FuseCmp, Bin: cmp.Op}, false)
		return true
	}
	return false
}

// maskOf returns the comparison of t = cast ρ (p cmp q), p and q of the tree's dtype ρ.
func (ft *fuseTree) maskOf(t core.Term) (*core.Binary, bool) {
	c, ok := ft.pl.peel(t).(*core.Cast)
	if !ok || c.To != ft.dt {
		return nil, false
	}
	cmp, ok := ft.pl.peel(c.X).(*core.Binary)
	if !ok || !cmp.Op.IsComparison() || cmp.X.Type().Dtype != ft.dt {
		return nil, false
	}
	return cmp, true
}

// operand adds u, an operand of an operation of the tree: an operation of the tree itself
// when it can be (absorbed), else a leaf.
func (ft *fuseTree) operand(u core.Term) bool {
	pl := ft.pl
	v := pl.uniform(pl.view(u))
	if v.trivial && ft.room() {
		if ft.absorbs(u) {
			return ft.node(pl.peel(u))
		}
	}
	return ft.addLeaf(v)
}

// addLeaf adds the leaf v (once: an equal view is read again).
func (ft *fuseTree) addLeaf(v view) bool {
	for i, w := range ft.views {
		if w.base == v.base && w.offset == v.offset && slices.Equal(w.strides, v.strides) {
			ft.code = append(ft.code, kern.FusedIns{Kind: kern.FuseLeaf, Leaf: i})
			ft.left = append(ft.left, false)
			return true
		}
	}
	if len(ft.views) == kern.FusedMaxLeaves {
		return false
	}
	ft.code = append(ft.code, kern.FusedIns{Kind: kern.FuseLeaf, Leaf: len(ft.views)})
	ft.left = append(ft.left, false)
	ft.views = append(ft.views, v)
	return true
}

// absorbs reports whether the tree computes u itself: an element-wise operation of its dtype
// that nothing else reads, is not planned yet, and is not a form another kernel plans better
// (a ReLU mask times a scatter, a concatenation's sum of gathers), or one that others read
// too but that is cheaper recomputed than written and read back (recomputes). Recomputing
// any operation read twice was tried (session 16): no faster on the zoo ResNet and MobileNet,
// whose element-wise kernels are bound by memory traffic; once the gradient's batch-norm
// terms became the forward's (core.CSE, session 22), x − mean was read by both, and
// recomputing it (never writing it) took the zoo ResNet float32 from 304 steps and 2.89 M
// buffer elements to 259 and 2.76 M.
func (ft *fuseTree) absorbs(u core.Term) bool {
	return ft.computable(u) && (ft.pl.onlyUse(u) || ft.recomputes(u))
}

// recomputes reports whether the tree computes u although other steps read it too: u is one
// binary operation of an array that exists anyway (a planned term, a parameter, a let, a step
// of its own) with a broadcast of a smaller array constant along the rows (constantRows),
// such as a batch norm's x − mean, which the forward's variance and normalisation and the
// gradient's terms all read once common subterms are one term (core.CSE). Each reader then
// reads x and the per-channel mean instead of an array of x's size, and that array is never
// written. Other operations read twice stay one step: recomputing a tanh or a product of two
// arrays costs more than reading it back.
func (ft *fuseTree) recomputes(u core.Term) bool {
	pl := ft.pl
	p, ok := pl.peel(u).(*core.Binary)
	if !ok {
		return false
	}
	size := p.Type().Shape.Size()
	broadcast := false
	for _, o := range []core.Term{p.X, p.Y} {
		v := pl.uniform(pl.view(o))
		if v.trivial && ft.computable(o) {
			return false // an element-wise operation the tree would compute too
		}
		if !v.trivial && v.base.Type().Shape.Size() < size && constantRows(o.Type().Shape, v.strides) {
			broadcast = true
		}
	}
	return broadcast
}

// constantRows reports whether a view of shape sh with strides st is constant along its last
// dimension (stride 0 or one element): one value a row of the fused loop, such as a per-channel
// mean over [b, c, h·w]. A vector repeated along the rows (a bias over a matrix's rows) makes
// every tree that recomputes the operation a loop over rows with a vector leaf, which measured
// slower than reading the operation's array back (the zoo transformer's GELU float64: its tanh
// tree 0.41 → 0.67 ms recomputing the bias addition).
func constantRows(sh core.Shape, st []int) bool {
	n := len(sh)
	return n == 0 || sh[n-1] == 1 || st[n-1] == 0
}

// absorbsTwice reports whether the tree computes u, read twice by one operation of the tree
// (x op x) and nowhere else, once (then FuseDup): the derivative of a square, c·x + c·x.
func (ft *fuseTree) absorbsTwice(u core.Term) bool {
	if _, shared := u.(*core.Share); shared || !ft.computable(u) || ft.pl.onlyUse(u) {
		return false
	}
	if v, isVar := u.(*core.Var); isVar && ft.pl.varUses[v.Name] != 2 {
		return false // the let is read elsewhere too (by another variable of its name)
	}
	return ft.pl.uses[u] == 2 // counted by onlyUse
}

// computable reports whether the tree can compute u itself: an element-wise operation of its
// dtype (inline or a lazily planned let, the plan not packing its lets), not planned yet, and
// not a form another kernel plans better.
func (ft *fuseTree) computable(u core.Term) bool {
	return ft.pl.unplanned(u) && ft.absorbable(ft.pl.peel(u))
}

// unplanned reports whether a step may compute u itself (inline, or a lazily planned let):
// it is not planned yet, and not a let bound to a node or packed for a later program.
func (pl *plan) unplanned(u core.Term) bool {
	if _, done := pl.memo[u]; done {
		return false
	}
	if v, isVar := u.(*core.Var); isVar {
		// A let's value may be read by a later program when the plan packs its lets
		// (Options.Tape: a gradient reads the forward's lets), which this program's counts
		// of uses do not see: absorbing lets read once there had torchvision resnet18's
		// gradient recompute the forward's convolutions (9 → 14 window products).
		if _, done := pl.env[v.Name]; done || pl.tape || pl.isBound(v.Name) {
			return false
		}
	}
	_, done := pl.memo[pl.peel(u)]
	return !done
}

// absorbable reports whether the tree can compute p (see absorbs).
func (ft *fuseTree) absorbable(p core.Term) bool {
	pl := ft.pl
	if p.Type().Dtype != ft.dt {
		return false
	}
	switch p := p.(type) {
	case *core.Unary:
		if p.X.Type().Dtype != ft.dt {
			return false
		}
	case *core.Binary:
		if p.Op.IsComparison() || p.X.Type().Dtype != ft.dt {
			return false
		}
		if _, ok := pl.maskedScatterTerm(p); ok {
			return false
		}
		var leaves []core.Term
		if p.Op == core.OpAdd && pl.addLeaves(p, &leaves) {
			return false
		}
	case *core.Cast:
		if _, ok := ft.maskOf(p); !ok {
			return false
		}
	default:
		return false
	}
	return true
}

// fusedSum plans t, the sum of z over z's dimensions before split (sumOuter of a reshape, or
// a scatter into [1, …]) or with split rowSums along z's last dimension (a scatter summing it:
// Gorgonia's Repeat gradient), as one kern.Fused summing z when z is an element-wise tree
// nothing else reads: z's array (a batch norm's (x − mean)², its gradient's c·x̂) is never
// written. wrap rebuilds t around the tree's term (the op's program).
func (pl *plan) fusedSum(t, z core.Term, split int, wrap func(b *core.Builder, z core.Term) core.Term) (ref, bool, error) {
	dt := t.Type().Dtype
	if !pl.coarse || pl.vk != nil || !dt.IsFloat() || z.Type().Dtype != dt || z.Type().Shape.Size() < fuseMin {
		return ref{}, false, nil
	}
	ft := &fuseTree{pl: pl, dt: dt}
	if !ft.absorbs(z) || !ft.node(pl.peel(z)) {
		return ref{}, false, nil
	}
	zs := z.Type().Shape
	leaves := make([]kern.FusedLeaf, len(ft.views))
	for i, v := range ft.views {
		leaves[i] = kern.FusedLeaf{Strides: v.strides, Off: v.offset}
	}
	var k *kern.Fused
	var err error
	switch {
	case split == rowSums && kern.FusedRowSumReadable(zs, leaves):
		k, err = kern.NewFusedRowSum(zs, ft.code, leaves)
	case split != rowSums && kern.FusedSumReadable(zs, leaves, split):
		k, err = kern.NewFusedSum(zs, ft.code, leaves, split)
	default:
		return ref{}, false, nil
	}
	if err != nil {
		return ref{}, true, termErr(t, "%v", err)
	}
	r, err := pl.custom(t, "fusedSum", bases(ft.views), func(vs []*core.Var) (core.Term, []*core.Var, error) {
		w, err := wrapAll(ft.views, vs)
		if err != nil {
			return nil, nil, err
		}
		tree, err := ft.program(w)
		if err != nil {
			return nil, nil, err
		}
		var b core.Builder
		s := wrap(&b, tree)
		return s, vs, b.Err()
	}, k)
	return r, true, err
}

// negatedScatter plans scatter sh (neg x) fn, in a coarse plan, as 0 − scatter sh x fn: the
// negation moves from every element of x (a whole pass over an activation, where a batch
// norm's gradient sums a negated product per channel) onto the scatter's outputs, and the
// scatter itself may then fuse or read x in place. The bits are the scatter's, NaN's sign
// apart: round-to-nearest is symmetric, and a running sum from +0 is never −0, so each
// running sum of the negated elements is the negated running sum where that is not zero and
// +0 where it is, which is what 0 − s gives (0 − (+0) = +0, where neg would give −0). ok is
// false for any other scatter.
func (pl *plan) negatedScatter(t *core.Scatter) (ref, bool, error) {
	u, isNeg := pl.peel(t.X).(*core.Unary)
	if !pl.coarse || !isNeg || u.Op != core.OpNeg || !t.Type().Dtype.IsFloat() {
		return ref{}, false, nil
	}
	var b core.Builder
	s := b.Sub(b.Full(t.Type(), 0), b.Scatter(t.Shape.Clone(), u.X, t.Fn))
	if err := b.Err(); err != nil {
		return ref{}, true, termErr(t, "%v", err)
	}
	r, err := pl.term(s)
	return r, true, err
}

// rowSums is fusedSum's split for a sum along the last dimension.
const rowSums = -1

// scatterSum plans scatter [1, …, 1, rest] x (\[i…] -> [0, …, 0]), the sum of x over its
// leading dimensions, as fusedSum when that applies.
func (pl *plan) scatterSum(t *core.Scatter) (ref, bool, error) {
	n, m := len(t.Fn.Vars), len(t.Fn.Out)
	xs := t.X.Type().Shape
	if n == 0 || n > len(xs) || !t.Shape[m:].Equal(xs[n:]) {
		return ref{}, false, nil
	}
	for i, o := range t.Fn.Out {
		if l, ok := o.(*core.Lit); !ok || len(l.I) != 1 || l.I[0] != 0 || t.Shape[i] != 1 {
			return ref{}, false, nil
		}
	}
	return pl.fusedSum(t, t.X, n, func(b *core.Builder, z core.Term) core.Term {
		return b.Scatter(t.Shape.Clone(), z, t.Fn)
	})
}

// sumScatter plans a scatter that sums x along its leading dimensions (leadingSum) or one
// axis (axisScatter).
func (pl *plan) sumScatter(t *core.Scatter) (ref, bool, error) {
	if r, ok, err := pl.leadingSum(t); ok {
		return r, true, err
	}
	return pl.axisScatter(t)
}

// leadingSum plans scatter sh x (\[i_0, …, i_{n−1}] -> [i_p, …, i_{n−1}]), x summed over its
// leading p dimensions into the rest (a batch norm's gradient Σ_b dy·x̂ over [b·h·w, c, 1], its
// per-channel sums), as fusedSum when x is an element-wise tree nothing else reads: the
// product is never written (the zoo MobileNet's float32 gradient wrote and read it, 113 µs,
// then summed it). The scatter adds each output's terms in the domain's order, which is
// fusedSum's (rows in order from +0): its bits. Another x, in a coarse or device plan, is
// summed as the column sums of [N, rest] (kern.Axis, the same order). ok is false for any
// other scatter.
func (pl *plan) leadingSum(t *core.Scatter) (ref, bool, error) {
	n, m := len(t.Fn.Vars), len(t.Fn.Out)
	xs := t.X.Type().Shape
	p := n - m
	if p < 1 || n > len(xs) || !t.Shape.Equal(xs[p:]) {
		return ref{}, false, nil
	}
	for j, o := range t.Fn.Out {
		if v, ok := o.(*core.Var); !ok || v.Name != t.Fn.Vars[p+j].Name {
			return ref{}, false, nil
		}
	}
	if r, ok, err := pl.fusedSum(t, t.X, p, func(b *core.Builder, z core.Term) core.Term {
		return b.Scatter(t.Shape.Clone(), z, t.Fn)
	}); ok {
		return r, true, err
	}
	if !t.Type().Dtype.IsFloat() || !pl.coarse && !pl.vk.Wants(t.Type().Dtype, "sum", "", xs.Size()) {
		return ref{}, false, nil
	}
	k := kern.Axis{Pre: 1, N: xs[:p].Size(), Post: xs[p:].Size(), VK: pl.vk}
	r, err := pl.custom(t, "scatter", []core.Term{t.X}, func(vs []*core.Var) (core.Term, []*core.Var, error) {
		s, err := core.NewScatter(t.Shape, vs[0], t.Fn)
		return s, vs, err
	}, k)
	return r, true, err
}

// axisScatter plans scatter sh x (\[i…] -> [i_0, …, 0, …, i_{m−1}]), x summed along one
// axis a into a dimension of one element (the gradient of Gorgonia's Repeat, rows of w summed
// for a batch norm's γ and β), as the sum along that axis (kern.Axis) in a coarse or device
// plan, or along the last axis of an element-wise tree (c·x̂) as a fused row sum (fusedSum):
// each output the axis's elements added in order from +0, the scatter's order, so the bits are
// the scatter's. ok is false for any other scatter.
func (pl *plan) axisScatter(t *core.Scatter) (ref, bool, error) {
	xt := t.X.Type()
	xs := xt.Shape
	n := len(t.Fn.Vars)
	if !xt.Dtype.IsFloat() || n == 0 || n != len(t.Fn.Out) || len(t.Shape) != len(xs) || !t.Shape[n:].Equal(xs[n:]) {
		return ref{}, false, nil
	}
	if !pl.coarse && !pl.vk.Wants(xt.Dtype, "sum", "", xs.Size()) {
		return ref{}, false, nil
	}
	a := -1
	for d, o := range t.Fn.Out {
		if v, ok := o.(*core.Var); ok && v.Name == t.Fn.Vars[d].Name && t.Shape[d] == xs[d] {
			continue
		}
		if l, ok := o.(*core.Lit); ok && a < 0 && len(l.I) == 1 && l.I[0] == 0 && t.Shape[d] == 1 {
			a = d
			continue
		}
		return ref{}, false, nil
	}
	if a < 0 {
		return ref{}, false, nil
	}
	if a == n-1 && n == len(xs) {
		if r, ok, err := pl.fusedSum(t, t.X, rowSums, func(b *core.Builder, z core.Term) core.Term {
			return b.Scatter(t.Shape.Clone(), z, t.Fn)
		}); ok {
			return r, true, err
		}
	}
	k := kern.Axis{Pre: xs[:a].Size(), N: xs[a], Post: xs[a+1:].Size(), VK: pl.vk}
	r, err := pl.custom(t, "scatter", []core.Term{t.X}, func(vs []*core.Var) (core.Term, []*core.Var, error) {
		s, err := core.NewScatter(t.Shape, vs[0], t.Fn)
		return s, vs, err
	}, k)
	return r, true, err
}

// gatherOfMask rewrites gather sh (cast ρ (p cmp q)) f — a ReLU's mask read at a max-pool's
// argmax in the pool's gradient — as cast ρ ((gather sh p f) cmp q′) when q is one value
// everywhere (q′: that value replicated to sh): the mask of the pooled positions only.
func (pl *plan) gatherOfMask(t *core.Gather) (core.Term, bool) {
	if !pl.coarse {
		return nil, false
	}
	c, ok := pl.peel(t.X).(*core.Cast)
	if !ok || !c.To.IsFloat() {
		return nil, false
	}
	cmp, ok := pl.peel(c.X).(*core.Binary)
	if !ok || !cmp.Op.IsComparison() || !cmp.X.Type().Shape.Equal(c.Type().Shape) {
		return nil, false
	}
	v := pl.uniform(pl.view(cmp.Y))
	if v.trivial || v.base.Type().Shape.Size() != 1 || slices.ContainsFunc(v.strides, func(s int) bool { return s != 0 }) {
		return nil, false // q is not one value broadcast everywhere
	}
	var b core.Builder
	q := core.Term(v.base)
	if len(v.base.Type().Shape) > 0 {
		q = b.Reshape(core.Shape{}, q)
	}
	for d := len(t.Shape) - 1; d >= 0; d-- {
		q = b.Replicate(t.Shape[d], q)
	}
	r := b.Cast(c.To, b.Binary(cmp.Op, b.Gather(t.Shape, cmp.X, t.Fn), q))
	return r, b.Err() == nil
}
