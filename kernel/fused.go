package kernel

import (
	"fmt"
	"strings"
	"sync"

	"github.com/bulkad/bulkad/core"
	"github.com/pkg/errors"
)

// Fused evaluates a tree of element-wise float operations in one pass over its output: the
// batch norms of a Gorgonia-built CNN (x − mean, times the inverse deviation, times γ, plus β;
// their gradients' chains of products, negations and sums) were one kernel and one array
// written and read back per operation. The tree is postfix code over leaves, each an input
// read through strides (0 along broadcast dimensions, contiguous or broadcast along the
// last); the output is walked in blocks of fusedBlock elements, each leaf's block read in
// place or copied into a small buffer, and the operations run on the blocks with the
// element-wise loops of the unfused kernels: every element is the same operations on the same
// values, so the result has the unfused plan's bits. A Fused kernel made by NewFusedSum sums
// the tree's rows instead of writing them (a batch norm's Σ (x − mean)²).
//
// A Fused kernel keeps its block buffers between runs (a concurrent run allocates its own).
type Fused struct {
	shape  []int // merged (see NewFused)
	code   []FusedIns
	leaves []FusedLeaf // merged strides
	kinds  []leafKind
	walked []int // the leaves whose row offsets the walk keeps (leafFill, leafRow)
	period []int // per leaf: the rows after which a leafPeriodic leaf's rows repeat
	depth  int   // most operands on the stack at once
	rows   int   // rows of the last dimension a block covers (0: a block is part of one row)
	weight int   // work weight of one output element (costOf)
	sum    bool  // the output is the sum of the tree's rows (NewFusedSum)
	rowSum bool  // the output is each row's sum (NewFusedRowSum)

	mu   sync.Mutex
	busy bool
	st32 *fusedState[float32]
	st64 *fusedState[float64]
}

// FusedKind is the kind of one instruction of a Fused kernel's code.
type FusedKind uint8

const (
	// FuseLeaf pushes the block of leaf Leaf (input Leaf read through Leaves[Leaf]).
	FuseLeaf FusedKind = iota
	// FuseUnary applies Un to the top operand.
	FuseUnary
	// FuseBinary applies Bin to the two top operands (the deeper one is the left operand).
	FuseBinary
	// FuseCmp is cast (a Bin b) to the float dtype: 1 where the comparison holds, else 0.
	FuseCmp
	// FuseMaskMul is z · cast (p Bin q) over the operands p, q, z (z pushed last): z times 1
	// or 0, so z's NaN and signed zeros are kept as the product keeps them.
	FuseMaskMul
	// FuseDup pushes the top operand again (a subterm read twice by one operation: the
	// derivative of a square, c·x + c·x).
	FuseDup
)

// FusedIns is one instruction of a Fused kernel's postfix code.
type FusedIns struct {
	Kind FusedKind
	Un   core.UnOp  // FuseUnary
	Bin  core.BinOp // FuseBinary's operation, FuseCmp's and FuseMaskMul's comparison
	Leaf int        // FuseLeaf
}

// FusedLeaf is how a Fused kernel reads one input: the element of the output at index
// (i_0, …, i_{n−1}) reads input element Off + Σ i_d·Strides[d].
type FusedLeaf struct {
	Strides []int
	Off     int
}

// fusedBlock is the number of output elements a Fused kernel computes an operation on at a
// time: its blocks stay in the L1 cache.
const fusedBlock = 1024

// fusedFillMin is the least row along which a leaf broadcast across rows is read (its value
// spread over the row once a block): shorter rows are a call a few elements.
const fusedFillMin = 256

// fusedRowMin is the least row a block of a Fused kernel is part of; shorter rows are
// grouped fusedBlock/row to a block.
const fusedRowMin = fusedBlock

// FusedMaxLeaves bounds the leaves (inputs) of a Fused kernel.
const FusedMaxLeaves = 16

type leafKind uint8

const (
	leafFill      leafKind = iota // copied into a buffer row by row
	leafDirect                    // contiguous like the output: read in place
	leafInvariant                 // the same block everywhere (strides 0 but along the rows)
	leafRow                       // a block within one row, the row contiguous: in place
	leafScalar                    // one element for the whole block (the row's, or the array's)
	leafPeriodic                  // rows grouped, the leaf's rows repeating every period[i] rows: read in place from its rows written once a run
)

func (in FusedIns) arity() int {
	switch in.Kind {
	case FuseLeaf:
		return 0
	case FuseUnary, FuseDup:
		return 1
	case FuseMaskMul:
		return 3
	}
	return 2
}

// NewFused is the Fused kernel computing code over leaves (input i read through leaves[i])
// into an output of the given shape. It returns an error when the code does not leave exactly
// one operand, names a missing leaf, has a comparison outside FuseCmp and FuseMaskMul, or a
// leaf that FusedReadable rejects.
func NewFused(shape []int, code []FusedIns, leaves []FusedLeaf) (*Fused, error) {
	return newFused(shape, code, leaves, -1)
}

// NewFusedSum is the kernel summing the value of code over leaves (a tree of the given shape,
// as NewFused computes it) over its dimensions before split: out[j] = Σ_i tree[i, j] over the
// tree viewed as [size(shape[:split]), size(shape[split:])], each out[j] one addition chain
// from +0 in the order of i (the order of sumOuter and of a scatter into [1, …]), so the bits
// are those of the tree's array summed by the unfused kernels. The tree's array is never
// written. The kept dimensions must merge into one of two elements or more (FusedSumReadable).
func NewFusedSum(shape []int, code []FusedIns, leaves []FusedLeaf, split int) (*Fused, error) {
	if split < 0 || split > len(shape) {
		return nil, errors.Errorf("kernel: fused sum: split %d of shape %v", split, shape)
	}
	return newFused(shape, code, leaves, split)
}

// NewFusedRowSum is the kernel summing the value of code over leaves (a tree of the given
// shape, as NewFused computes it) along its last dimension: out[r] = Σ_j tree[r, j], each one
// addition chain from +0 in the order of j (the order of sumOuter along the last axis and of
// a scatter summing that axis into one element: Gorgonia's Repeat gradient), so the bits are
// those of the tree's array summed by the unfused kernels. The tree's array is never written.
// The last dimension must be 2 to fusedRowMin − 1 elements long (FusedRowSumReadable).
func NewFusedRowSum(shape []int, code []FusedIns, leaves []FusedLeaf) (*Fused, error) {
	return newFused(shape, code, leaves, rowSumSplit)
}

// rowSumSplit is newFused's split for NewFusedRowSum.
const rowSumSplit = -2

// newFused is NewFused (split −1), NewFusedSum (split ≥ 0) or NewFusedRowSum (rowSumSplit).
func newFused(shape []int, code []FusedIns, leaves []FusedLeaf, split int) (*Fused, error) {
	if len(leaves) == 0 || len(leaves) > FusedMaxLeaves {
		return nil, errors.Errorf("kernel: fused: %d leaves (1 to %d supported)", len(leaves), FusedMaxLeaves)
	}
	for i, l := range leaves {
		if len(l.Strides) != len(shape) {
			return nil, errors.Errorf("kernel: fused: leaf %d has %d strides for shape %v", i, len(l.Strides), shape)
		}
	}
	sp, depth, weight := 0, 0, 0
	for pc, in := range code {
		switch in.Kind {
		case FuseLeaf:
			if in.Leaf < 0 || in.Leaf >= len(leaves) {
				return nil, errors.Errorf("kernel: fused: instruction %d reads leaf %d of %d", pc, in.Leaf, len(leaves))
			}
		case FuseUnary:
			weight += fusedWeight(unaryWeight(in.Un))
		case FuseBinary:
			if in.Bin.IsComparison() {
				return nil, errors.Errorf("kernel: fused: instruction %d: comparison %v outside a mask", pc, in.Bin)
			}
			weight += fusedWeight(binaryWeight(in.Bin))
		case FuseCmp, FuseMaskMul:
			if !in.Bin.IsComparison() {
				return nil, errors.Errorf("kernel: fused: instruction %d: %v is not a comparison", pc, in.Bin)
			}
			weight += 2 * wFused
		case FuseDup:
		default:
			return nil, errors.Errorf("kernel: fused: instruction %d of unknown kind %d", pc, in.Kind)
		}
		if sp < in.arity() {
			return nil, errors.Errorf("kernel: fused: instruction %d needs %d operands, %d on the stack", pc, in.arity(), sp)
		}
		sp += 1 - in.arity()
		if in.Kind == FuseDup {
			sp++ // it leaves its operand and a copy
		}
		depth = max(depth, sp)
	}
	if sp != 1 || len(code) < 2 {
		return nil, errors.Errorf("kernel: fused: code of %d instructions leaves %d operands", len(code), sp)
	}
	sh, ls := mergeFused(shape, leaves)
	switch {
	case split == rowSumSplit:
		var ok bool
		if sh, ls, ok = mergeRows(shape, leaves); !ok {
			return nil, errors.Errorf("kernel: fused row sum: shape %v (supported: rows of 2 to %d elements)", shape, fusedRowMin-1)
		}
	case split >= 0:
		var ok bool
		if sh, ls, ok = mergeSum(shape, leaves, split); !ok {
			return nil, errors.Errorf("kernel: fused sum: the dimensions %v of %v kept by the sum are not read as one row of two elements or more", shape[split:], shape)
		}
	}
	if !readable(sh, ls) {
		return nil, errors.Errorf("kernel: fused: a leaf is read across the rows of %v (supported: contiguous or broadcast rows)", sh)
	}
	k := &Fused{shape: sh, code: append([]FusedIns(nil), code...), leaves: ls, depth: depth, weight: max(weight, wFused), sum: split >= 0, rowSum: split == rowSumSplit}
	last := sh[len(sh)-1]
	if last < fusedRowMin {
		k.rows = fusedBlock / last
	}
	rm := core.Shape(sh).Strides()
	k.kinds = make([]leafKind, len(ls))
	k.period = make([]int, len(ls))
	for i, l := range ls {
		k.kinds[i] = k.kindOf(l, rm)
		if k.kinds[i] == leafFill {
			if p := k.periodOf(l); p > 0 {
				k.kinds[i], k.period[i] = leafPeriodic, p
			}
		}
		if kd := k.kinds[i]; kd == leafFill || kd == leafRow || kd == leafScalar && k.rows == 0 {
			k.walked = append(k.walked, i)
		}
	}
	return k, nil
}

// fusedPeriodMax bounds the elements of a leafPeriodic leaf's rows written once a run.
const fusedPeriodMax = 1 << 16

// periodOf is the number of rows after which the rows of leaf l repeat (rows grouped): the
// rows of the dimensions from the first along which l moves, when the rows of a period and
// of one block more fit in fusedPeriodMax elements (then a block of rows is a slice of them);
// else 0.
func (k *Fused) periodOf(l FusedLeaf) int {
	n := len(k.shape)
	q := 0
	for q < n-1 && l.Strides[q] == 0 {
		q++
	}
	p := core.Shape(k.shape[q : n-1]).Size()
	if p == 0 || k.periodRows(p)*k.shape[n-1] > fusedPeriodMax {
		return 0
	}
	return p
}

// periodRows is the number of rows a leafPeriodic leaf of period p keeps: a block starting
// anywhere in the period, or every row when the period is all of them.
func (k *Fused) periodRows(p int) int { return min(p+k.rows-1, k.outer()) }

// kindOf classifies how a leaf's blocks are read.
func (k *Fused) kindOf(l FusedLeaf, rm []int) leafKind {
	n := len(k.shape)
	direct, invariant := true, true
	for d := range n {
		if l.Strides[d] != rm[d] {
			direct = false
		}
		if d < n-1 && l.Strides[d] != 0 {
			invariant = false
		}
	}
	switch {
	case direct:
		return leafDirect
	case k.rows == 0 && l.Strides[n-1] == 1:
		return leafRow
	case k.rows == 0 || invariant && l.Strides[n-1] == 0:
		return leafScalar // along the row (rows 0), or everywhere
	case invariant:
		return leafInvariant
	}
	return leafFill
}

// fusedState is the scratch of one run: per worker, the operand stack and the block buffers
// of the stack and of the leaves; and the invariant leaves' blocks, shared.
type fusedState[T floatT] struct {
	xs      [][]T // the run's inputs
	inv     [][]T // per leaf: its invariant block (nil for other leaves)
	workers []*fusedWorker[T]
}

type fusedWorker[T floatT] struct {
	tmp  [][]T             // depth stack buffers
	cur  []fusedOperand[T] // the operand stack
	leaf [][]T             // per leaf: its block buffer
	idx  []int             // the outer index of the current row
	off  []int             // per leaf: the offset of the current row
	lv   []fusedOperand[T] // per leaf: its block (a view of leaf or of the input) or scalar
	one  [4][]T            // slices of one element for operations on scalars
	q    []T               // one element: a mask's broadcast comparand
	ones []T               // fusedBlock ones: the factor of a comparison's mask (maskRow)
	res  []T               // a sum's block of the tree (NewFusedSum)
}

// fusedOperand is a block of values or one value standing for all of them.
type fusedOperand[T floatT] struct {
	s      []T
	v      T
	scalar bool
}

// state returns k's state for T with at least w workers, and whether it is k's own (then the
// caller gives it back with release); a run while another holds it gets a new one.
func fusedStateOf[T floatT](k *Fused, w int) (*fusedState[T], bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.busy {
		return newFusedState[T](k, w), false
	}
	var st *fusedState[T]
	switch p := any(&st).(type) {
	case **fusedState[float32]:
		if k.st32 == nil || len(k.st32.workers) < w {
			k.st32 = newFusedState[float32](k, w)
		}
		*p = k.st32
	case **fusedState[float64]:
		if k.st64 == nil || len(k.st64.workers) < w {
			k.st64 = newFusedState[float64](k, w)
		}
		*p = k.st64
	}
	k.busy = true
	return st, true
}

func (k *Fused) release() {
	k.mu.Lock()
	k.busy = false
	k.mu.Unlock()
}

func newFusedState[T floatT](k *Fused, w int) *fusedState[T] {
	st := &fusedState[T]{xs: make([][]T, len(k.leaves)), inv: make([][]T, len(k.leaves))}
	for i, kind := range k.kinds {
		switch kind {
		case leafInvariant:
			st.inv[i] = make([]T, min(k.rows, k.outer())*k.shape[len(k.shape)-1])
		case leafPeriodic:
			st.inv[i] = make([]T, k.periodRows(k.period[i])*k.shape[len(k.shape)-1])
		}
	}
	for range w {
		wk := &fusedWorker[T]{
			tmp: make([][]T, k.depth), cur: make([]fusedOperand[T], k.depth+1),
			leaf: make([][]T, len(k.leaves)), lv: make([]fusedOperand[T], len(k.leaves)),
			idx: make([]int, len(k.shape)), off: make([]int, len(k.leaves)),
		}
		for i := range wk.tmp {
			wk.tmp[i] = make([]T, fusedBlock)
		}
		for i := range wk.one {
			wk.one[i] = make([]T, 1)
		}
		if k.sum || k.rowSum {
			wk.res = make([]T, fusedBlock)
		}
		wk.q = make([]T, 1)
		wk.ones = make([]T, fusedBlock)
		for i := range wk.ones {
			wk.ones[i] = 1
		}
		for i, kind := range k.kinds {
			if kind == leafFill {
				wk.leaf[i] = make([]T, fusedBlock)
			}
		}
		st.workers = append(st.workers, wk)
	}
	return st
}

// Run implements Kernel.
func (k *Fused) Run(out any, ins []any) error {
	if len(ins) != len(k.leaves) {
		return errors.Errorf("kernel: fused: %d inputs for %d leaves", len(ins), len(k.leaves))
	}
	switch o := out.(type) {
	case []float32:
		return fusedRun(k, o, ins)
	case []float64:
		return fusedRun(k, o, ins)
	}
	return typeErr("fused", out, ins)
}

func fusedRun[T floatT](k *Fused, out []T, ins []any) error {
	n := core.Shape(k.shape).Size()
	if want := k.outLen(); len(out) != want {
		return errors.Errorf("kernel: fused: output of %d elements for %d (shape %v, sum %v)", len(out), want, k.shape, k.sum)
	}
	for i, in := range ins {
		x, ok := in.([]T)
		if !ok {
			return typeErr("fused", out, ins)
		}
		if lo, hi := k.span(i); n > 0 && (lo < 0 || hi >= len(x)) {
			return errors.Errorf("kernel: fused: leaf %d reads elements %d to %d of %d (shape %v, strides %v)", i, lo, hi, len(x), k.shape, k.leaves[i].Strides)
		}
	}
	if n == 0 {
		return nil
	}
	nb := k.blocks()
	work := costOf(n, k.weight)
	w := workers(nb, work)
	if k.sum {
		w = 1 // one addition chain an output element, in order
		clear(out)
	}
	st, own := fusedStateOf[T](k, w)
	if own {
		defer k.release()
	}
	for i, in := range ins {
		st.xs[i] = in.([]T)
	}
	for i, inv := range st.inv {
		if inv != nil {
			fillInvariant(k, inv, st.xs[i], i)
		}
	}
	if w > 1 {
		fusedSplit(k, st, out, nb, w, work)
	} else {
		fusedBlocks(k, st, st.workers[0], out, 0, nb)
	}
	clear(st.xs) // the state keeps no input alive
	return nil
}

// fusedSplit runs the blocks across w goroutines (each with its own buffers).
func fusedSplit[T floatT](k *Fused, st *fusedState[T], out []T, nb, w, work int) {
	inParallel(w, work, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			fusedBlocks(k, st, st.workers[i], out, nb*i/w, nb*(i+1)/w)
		}
	})
}

// reach is the largest input element leaf i reads.
func (k *Fused) reach(i int) int {
	_, hi := k.span(i)
	return hi
}

// span is the least and the largest input element leaf i reads (negative strides, a reversed
// view, read below Off).
func (k *Fused) span(i int) (lo, hi int) {
	l := k.leaves[i]
	lo, hi = l.Off, l.Off
	for d, s := range l.Strides {
		if s > 0 {
			hi += s * (k.shape[d] - 1)
		} else {
			lo += s * (k.shape[d] - 1)
		}
	}
	return lo, hi
}

// Sums reports whether k sums its tree's rows (NewFusedSum) rather than writing the tree.
func (k *Fused) Sums() bool { return k.sum }

// RowSums reports whether k sums each row of its tree (NewFusedRowSum).
func (k *Fused) RowSums() bool { return k.rowSum }

// outLen is the number of elements k writes: the tree's, for a sum its last dimension's, for
// row sums its rows'.
func (k *Fused) outLen() int {
	switch {
	case k.sum:
		return k.shape[len(k.shape)-1]
	case k.rowSum:
		return k.outer()
	}
	return core.Shape(k.shape).Size()
}

// outer is the number of rows of the output.
func (k *Fused) outer() int { return core.Shape(k.shape[:len(k.shape)-1]).Size() }

// blocks is the number of blocks of the output: groups of k.rows rows, or the parts of each
// row.
func (k *Fused) blocks() int {
	n := len(k.shape)
	last := k.shape[n-1]
	outer := core.Shape(k.shape[:n-1]).Size()
	if k.rows > 0 {
		return (outer + k.rows - 1) / k.rows
	}
	return outer * ((last + fusedBlock - 1) / fusedBlock)
}

// fillInvariant writes leaf i's block (k.rows rows) once a run, or a leafPeriodic leaf's rows
// (its period and the rows of a block more, repeating).
func fillInvariant[T floatT](k *Fused, dst, x []T, i int) {
	l := k.leaves[i]
	n := len(k.shape)
	last := k.shape[n-1]
	s := l.Strides[n-1]
	for r := range len(dst) / last {
		o, q := l.Off, r // the row's offset (the dimensions before the period move nothing)
		for d := n - 2; d >= 0 && q > 0; d-- {
			o += q % k.shape[d] * l.Strides[d]
			q /= k.shape[d]
		}
		rowRead(dst[r*last:(r+1)*last], x, o, s)
	}
}

// rowRead copies a row of a leaf (stride s: 1 contiguous, 0 one element repeated).
func rowRead[T floatT](dst, x []T, off, s int) {
	if s == 0 {
		fillWith(dst, x[off])
		return
	}
	copy(dst, x[off:off+len(dst)])
}

// fillWith sets every element of dst to v.
func fillWith[T floatT](dst []T, v T) {
	done := simdFill(dst, v)
	for j := range dst[done:] {
		dst[done+j] = v
	}
}

// seek positions wk at row r of the output (the row's outer index and every leaf's offset).
func (wk *fusedWorker[T]) seek(k *Fused, r int) {
	n := len(k.shape)
	for d := n - 2; d >= 0; d-- {
		wk.idx[d] = r % k.shape[d]
		r /= k.shape[d]
	}
	for _, i := range k.walked {
		l := k.leaves[i]
		o := l.Off
		for d := 0; d < n-1; d++ {
			o += wk.idx[d] * l.Strides[d]
		}
		wk.off[i] = o
	}
}

// next moves wk to the next row.
func (wk *fusedWorker[T]) next(k *Fused) {
	for d := len(k.shape) - 2; d >= 0; d-- {
		wk.idx[d]++
		if wk.idx[d] < k.shape[d] {
			for _, i := range k.walked {
				wk.off[i] += k.leaves[i].Strides[d]
			}
			return
		}
		wk.idx[d] = 0
		for _, i := range k.walked {
			wk.off[i] -= k.leaves[i].Strides[d] * (k.shape[d] - 1)
		}
	}
}

// fusedBlocks computes blocks [lo, hi) on the calling goroutine.
func fusedBlocks[T floatT](k *Fused, st *fusedState[T], wk *fusedWorker[T], out []T, lo, hi int) {
	xs := st.xs
	n := len(k.shape)
	last := k.shape[n-1]
	if k.rows > 0 {
		outer := k.outer()
		wk.seek(k, lo*k.rows)
		for b := lo; b < hi; b++ {
			r0 := b * k.rows
			nr := min(k.rows, outer-r0)
			p, m := r0*last, nr*last
			for i, kind := range k.kinds {
				l := &k.leaves[i]
				switch kind {
				case leafDirect:
					wk.lv[i] = fusedOperand[T]{s: xs[i][l.Off+p : l.Off+p+m]}
				case leafInvariant:
					wk.lv[i] = fusedOperand[T]{s: st.inv[i][:m]}
				case leafPeriodic:
					at := r0 % k.period[i] * last
					wk.lv[i] = fusedOperand[T]{s: st.inv[i][at : at+m]}
				case leafScalar:
					wk.lv[i] = fusedOperand[T]{v: xs[i][l.Off], scalar: true}
				default:
					wk.lv[i] = fusedOperand[T]{s: wk.leaf[i][:m]}
				}
			}
			for r := 0; r < nr && len(k.walked) > 0; r++ {
				for _, i := range k.walked {
					rowRead(wk.leaf[i][r*last:(r+1)*last], xs[i], wk.off[i], k.leaves[i].Strides[n-1])
				}
				wk.next(k)
			}
			switch {
			case k.sum:
				fusedCode(k, wk, wk.res[:m])
				colSums(out, wk.res[:m], last, nr)
			case k.rowSum:
				fusedCode(k, wk, wk.res[:m])
				sumRows(out[r0:r0+nr], wk.res[:m], last)
			default:
				fusedCode(k, wk, out[p:p+m])
			}
		}
		return
	}
	per := (last + fusedBlock - 1) / fusedBlock // blocks a row
	wk.seek(k, lo/per)
	for b := lo; b < hi; b++ {
		r, c := b/per, b%per*fusedBlock
		m := min(fusedBlock, last-c)
		p := r*last + c
		for i, kind := range k.kinds {
			switch kind {
			case leafDirect:
				o := k.leaves[i].Off + p
				wk.lv[i] = fusedOperand[T]{s: xs[i][o : o+m]}
			case leafRow:
				o := wk.off[i] + c
				wk.lv[i] = fusedOperand[T]{s: xs[i][o : o+m]}
			default: // broadcast along the row
				wk.lv[i] = fusedOperand[T]{v: xs[i][wk.off[i]], scalar: true}
			}
		}
		if k.sum {
			fusedCode(k, wk, wk.res[:m])
			colSums(out[c:c+m], wk.res[:m], m, 1)
		} else {
			fusedCode(k, wk, out[p:p+m])
		}
		if c+m == last && len(k.walked) > 0 {
			wk.next(k)
		}
	}
}

// fusedCode runs k's code on one block, the leaves' blocks in wk.lv, the result into dst.
// An operation on scalars only is a scalar, computed by the same loops on one element.
func fusedCode[T floatT](k *Fused, wk *fusedWorker[T], dst []T) {
	m := len(dst)
	sp := 0
	lastPC := len(k.code) - 1
	for pc, in := range k.code {
		switch in.Kind {
		case FuseLeaf:
			wk.cur[sp] = wk.lv[in.Leaf]
			sp++
			continue
		case FuseDup:
			wk.cur[sp] = wk.cur[sp-1]
			sp++
			continue
		}
		ar := in.arity()
		base := sp - ar
		a := wk.cur[base:sp]
		allScalar := true
		for _, o := range a {
			allScalar = allScalar && o.scalar
		}
		if allScalar {
			wk.cur[base] = fusedOperand[T]{v: fusedScalar(in, a, &wk.one, wk.ones[:1]), scalar: true}
		} else {
			d := dst
			if pc != lastPC {
				d = wk.tmp[base][:m]
			}
			fusedBlock1(in, d, a, wk.tmp[base:], wk, m)
			wk.cur[base] = fusedOperand[T]{s: d}
		}
		sp = base + 1
	}
	if r := wk.cur[0]; r.scalar {
		fillWith(dst, r.v)
	}
}

// fusedScalar is instruction in on scalar operands (the block loops on one element).
func fusedScalar[T floatT](in FusedIns, a []fusedOperand[T], one *[4][]T, ones []T) T {
	for i, o := range a {
		one[i][0] = o.v
	}
	fusedSlices(in, one[3], one[0], one[1], one[2], ones)
	return one[3][0]
}

// fusedBlock1 is instruction in on operands a of which at least one is a block: a scalar
// operand of an arithmetic operation is read as a scalar, one of a comparison as its
// broadcast (the comparison flipped when the scalar is on the left: 0 >= x as x <= 0, the
// same for NaN); any other is spread over tmp[i] (the free buffer of its stack slot). d may
// be tmp[0].
func fusedBlock1[T floatT](in FusedIns, d []T, a []fusedOperand[T], tmp [][]T, wk *fusedWorker[T], m int) {
	q, ones := wk.q, wk.ones[:m]
	switch {
	case in.Kind == FuseBinary && a[1].scalar && scalarArith(in.Bin, d, a[0].s, a[1].v, false):
		return
	case in.Kind == FuseBinary && a[0].scalar && scalarArith(in.Bin, d, a[1].s, a[0].v, true):
		return
	case in.Kind == FuseCmp || in.Kind == FuseMaskMul:
		z := ones
		if in.Kind == FuseMaskMul {
			if a[2].scalar {
				break
			}
			z = a[2].s
		}
		switch {
		case !a[0].scalar && a[1].scalar:
			q[0] = a[1].v
			if maskRow(in.Bin, d, a[0].s, q, true, z) {
				return
			}
		case a[0].scalar && !a[1].scalar:
			q[0] = a[0].v
			if maskRow(flipCmp(in.Bin), d, a[1].s, q, true, z) {
				return
			}
		}
	}
	var s [3][]T
	for i, o := range a {
		s[i] = o.s
		if o.scalar {
			t := tmp[i][:m] // i = 0: d itself, which the operation reads element by element
			fillWith(t, o.v)
			s[i] = t
		}
	}
	fusedSlices(in, d, s[0], s[1], s[2], ones)
}

// flipCmp is the comparison with its operands swapped: a op b is b flipCmp(op) a.
func flipCmp(op core.BinOp) core.BinOp {
	switch op {
	case core.OpLt:
		return core.OpGt
	case core.OpGt:
		return core.OpLt
	case core.OpLe:
		return core.OpGe
	case core.OpGe:
		return core.OpLe
	}
	return op // == and != are symmetric
}

// fusedSlices is instruction in on blocks (y and z unused by the operations that take
// fewer); ones holds len(d) ones (a comparison's mask is 1 or 0 times one).
func fusedSlices[T floatT](in FusedIns, d, x, y, z, ones []T) {
	switch in.Kind {
	case FuseUnary:
		unaryFloat(in.Un, d, x)
	case FuseBinary:
		binaryFloat(in.Bin, d, x, y)
	case FuseCmp:
		if !maskRow(in.Bin, d, x, y, false, ones[:len(d)]) {
			cmpMask(in.Bin, d, x, y)
		}
	case FuseMaskMul:
		if !maskRow(in.Bin, d, x, y, false, z) {
			cmpMask(in.Bin, d, x, y)
			binaryFloat(core.OpMul, d, d, z)
		}
	}
}

// String describes k: its merged shape, each leaf's strides and offset, and its code.
func (k *Fused) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "fused %v rows %d:", k.shape, k.rows)
	if k.sum {
		b.WriteString(" (column sums)")
	}
	if k.rowSum {
		b.WriteString(" (row sums)")
	}
	for i, l := range k.leaves {
		fmt.Fprintf(&b, " leaf%d%v+%d/%d", i, l.Strides, l.Off, k.kinds[i])
	}
	b.WriteString(" code")
	for _, in := range k.code {
		switch in.Kind {
		case FuseLeaf:
			fmt.Fprintf(&b, " %d", in.Leaf)
		case FuseUnary:
			fmt.Fprintf(&b, " %v", in.Un)
		case FuseBinary:
			fmt.Fprintf(&b, " %v", in.Bin)
		case FuseCmp:
			fmt.Fprintf(&b, " cmp%v", in.Bin)
		case FuseMaskMul:
			fmt.Fprintf(&b, " mask%v", in.Bin)
		case FuseDup:
			b.WriteString(" dup")
		}
	}
	return b.String()
}
