package kernel

import "github.com/bulkad/bulkad/core"

// Element-wise fusion. A tree of float element-wise operations (unary, and non-comparison
// binary, all of one float dtype) whose inner nodes have a single parent and live in the same
// scope is run as one kernel: it walks the output in blocks of fuseBlock elements and
// evaluates the tree on each block with a small stack of block-sized temporaries, so the
// intermediate arrays are never written to memory. A replicate of a rank-0 term (the
// broadcasting the parser inserts) is read as a scalar instead of being materialised.

const fuseBlock = 1024

type fuseKind uint8

const (
	fLeaf fuseKind = iota
	fScalar
	fUnary
	fBinary
	fCmp   // cast (a cmp b): 1 or 0 in the float dtype
	fBin2L // (a op1 b) op2 leaf: bin is op1, bin2 is op2, leafKind/leaf is the third operand
	fBin2R // c op2 (a op1 b) with the three operands on the stack
)

type fuseIns struct {
	kind fuseKind
	un   core.UnOp
	bin  core.BinOp
	leaf int // fLeaf: index into leaves; fScalar: index into scalars
	// superinstructions
	bin2     core.BinOp
	leafKind fuseKind
}

// peephole merges two consecutive binary operations into one superinstruction.
func peephole(code []fuseIns) []fuseIns {
	var out []fuseIns
	for i := 0; i < len(code); i++ {
		in := code[i]
		if in.kind == fBinary && bin2Covered(in.bin) {
			if i+2 < len(code) && (code[i+1].kind == fLeaf || code[i+1].kind == fScalar) &&
				code[i+2].kind == fBinary && bin2Covered(code[i+2].bin) {
				out = append(out, fuseIns{kind: fBin2L, bin: in.bin, bin2: code[i+2].bin, leafKind: code[i+1].kind, leaf: code[i+1].leaf})
				i += 2
				continue
			}
			if i+1 < len(code) && code[i+1].kind == fBinary && bin2Covered(code[i+1].bin) {
				out = append(out, fuseIns{kind: fBin2R, bin: in.bin, bin2: code[i+1].bin})
				i++
				continue
			}
		}
		out = append(out, in)
	}
	return out
}

type fusePlan struct {
	code    []fuseIns
	leaves  []*buf
	scalars []*buf
	depth   int // maximal stack depth
	weight  int // work weight of one element (see costOf)
}

// fuseWeight is the work weight of one element of a fused chain: its instructions' weights,
// a cheap one's lower than for the kernel alone since the block stays in cache.
func fuseWeight(code []fuseIns) int {
	w := 0
	for _, in := range code {
		switch in.kind {
		case fUnary:
			w += fusedWeight(unaryWeight(in.un))
		case fBinary, fCmp:
			w += fusedWeight(binaryWeight(in.bin))
		case fBin2L, fBin2R:
			w += fusedWeight(binaryWeight(in.bin)) + fusedWeight(binaryWeight(in.bin2))
		}
	}
	return max(w, wFused)
}

// fusedWeight is the weight of an operation of weight w inside a fused chain.
func fusedWeight(w int) int {
	if w <= wCheap {
		return wFused
	}
	return w
}

// fusible reports whether t is an element-wise float operation with operands of its dtype.
func fusible(t core.Term) bool {
	d := t.Type().Dtype
	if !d.IsFloat() {
		return false
	}
	switch t := t.(type) {
	case *core.Unary:
		return t.X.Type().Dtype == d
	case *core.Binary:
		return !t.Op.IsComparison() && t.X.Type().Dtype == d
	case *core.Cast:
		// cast ρ (a cmp b) with a, b of dtype ρ: the 0/1 masks of relu and clamp derivatives
		c, ok := t.X.(*core.Binary)
		return ok && c.Op.IsComparison() && c.X.Type().Dtype == d
	}
	return false
}

// scalarOf returns the rank-0 term under a chain of replicates, or nil.
func scalarOf(t core.Term) core.Term {
	for {
		r, ok := t.(*core.Replicate)
		if !ok {
			break
		}
		t = r.X
	}
	if t.Type().IsScalar() {
		return t
	}
	return nil
}

// buildFused compiles the element-wise tree rooted at t (fusible) in scope sc.
func (c *compiler) buildFused(t core.Term, sc *scope) (*buf, *scope, error) {
	fp := &fusePlan{}
	leafIx := map[*buf]int{}
	depth := 0
	var walk func(u core.Term, root bool) error
	walk = func(u core.Term, root bool) error {
		if !root && fusible(u) && c.uses[u] == 1 {
			usc, ids, err := c.placement(u)
			if err != nil {
				return err
			}
			if _, done := lookup(c.memo[u], ids); !done && usc == sc {
				return c.fuseNode(u, fp, walk, &depth)
			}
		}
		if root {
			return c.fuseNode(u, fp, walk, &depth)
		}
		if s := scalarOf(u); s != nil && !u.Type().IsScalar() {
			v, _, err := c.compile(s)
			if err != nil {
				return err
			}
			fp.code = append(fp.code, fuseIns{kind: fScalar, leaf: len(fp.scalars)})
			fp.scalars = append(fp.scalars, v)
		} else {
			v, _, err := c.compile(u)
			if err != nil {
				return err
			}
			k, ok := leafIx[v]
			if !ok {
				k = len(fp.leaves)
				leafIx[v] = k
				fp.leaves = append(fp.leaves, v)
			}
			fp.code = append(fp.code, fuseIns{kind: fLeaf, leaf: k})
		}
		depth++
		if depth > fp.depth {
			fp.depth = depth
		}
		return nil
	}
	if err := walk(t, true); err != nil {
		return nil, nil, err
	}
	fp.code = peephole(fp.code)
	fp.weight = fuseWeight(fp.code)
	out := c.fresh(t.Type())
	n := t.Type().Shape.Size()
	switch t.Type().Dtype {
	case core.Float64:
		st := newFuseState[float64](fp)
		c.emit(sc, t, func() { st.run(fp, out.f64, n, leavesOf(fp, st)) })
	case core.Float32:
		st := newFuseState[float32](fp)
		c.emit(sc, t, func() { st.run(fp, out.f32, n, leavesOf(fp, st)) })
	}
	return out, sc, nil
}

func (c *compiler) fuseNode(u core.Term, fp *fusePlan, walk func(core.Term, bool) error, depth *int) error {
	switch u := u.(type) {
	case *core.Unary:
		if err := walk(u.X, false); err != nil {
			return err
		}
		fp.code = append(fp.code, fuseIns{kind: fUnary, un: u.Op})
	case *core.Binary:
		if err := walk(u.X, false); err != nil {
			return err
		}
		if err := walk(u.Y, false); err != nil {
			return err
		}
		fp.code = append(fp.code, fuseIns{kind: fBinary, bin: u.Op})
		*depth--
	case *core.Cast:
		cmp := u.X.(*core.Binary)
		if err := walk(cmp.X, false); err != nil {
			return err
		}
		if err := walk(cmp.Y, false); err != nil {
			return err
		}
		fp.code = append(fp.code, fuseIns{kind: fCmp, bin: cmp.Op})
		*depth--
	}
	return nil
}

// fuseState is the per-Exec scratch of a fused kernel.
type fuseState[T floatT] struct {
	tmp    [][]T // depth temporaries of fuseBlock elements
	cur    [][]T // operand stack (views of leaves, scalar blocks or temporaries)
	sblk   [][]T // one constant block per scalar leaf, filled at each run
	leaves [][]T // the leaves' data for this run
	// the stacks and temporaries of the other goroutines of a split run (grown on the first
	// run that needs them, then kept): they share sblk and leaves
	par []*fuseState[T]
}

func newFuseState[T floatT](fp *fusePlan) *fuseState[T] {
	st := &fuseState[T]{
		sblk:   make([][]T, len(fp.scalars)),
		leaves: make([][]T, len(fp.leaves)),
	}
	st.newStack(fp)
	for i := range st.sblk {
		st.sblk[i] = make([]T, fuseBlock)
	}
	return st
}

// newStack allocates st's operand stack and temporaries.
func (st *fuseState[T]) newStack(fp *fusePlan) {
	st.tmp = make([][]T, fp.depth+1)
	st.cur = make([][]T, fp.depth+1)
	for i := range st.tmp {
		st.tmp[i] = make([]T, fuseBlock)
	}
}

// worker is the state goroutine i of a split run uses (0: st itself), allocated once.
func (st *fuseState[T]) worker(fp *fusePlan, i int) *fuseState[T] {
	if i == 0 {
		return st
	}
	for len(st.par) < i {
		w := &fuseState[T]{sblk: st.sblk, leaves: st.leaves}
		w.newStack(fp)
		st.par = append(st.par, w)
	}
	return st.par[i-1]
}

// leavesOf points the fused loop at its leaves' storage and fills the blocks of its scalars.
func leavesOf[T floatT](fp *fusePlan, st *fuseState[T]) [][]T {
	for i, l := range fp.leaves {
		st.leaves[i] = floatsOf[T](l)
	}
	for i, s := range fp.scalars {
		v := floatsOf[T](s)[0]
		for j := range st.sblk[i] {
			st.sblk[i][j] = v
		}
	}
	return st.leaves
}

// run evaluates the fused tree into dst[:n], its blocks split across goroutines when the
// work (elements times instructions) is large: each goroutine has its own stack and
// temporaries, and every output element is computed as on one goroutine.
func (st *fuseState[T]) run(fp *fusePlan, dst []T, n int, leaves [][]T) {
	nb := (n + fuseBlock - 1) / fuseBlock
	work := costOf(n, fp.weight)
	if w := workers(nb, work); w > 1 {
		for i := range w {
			st.worker(fp, i) // before the goroutines start: they only read st.par
		}
		inParallel(w, work, func(lo, hi int) {
			for i := lo; i < hi; i++ {
				from, to := nb*i/w*fuseBlock, min(n, nb*(i+1)/w*fuseBlock)
				st.worker(fp, i).runBlocks(fp, dst, from, to, leaves)
			}
		})
		return
	}
	st.runBlocks(fp, dst, 0, n, leaves)
}

// runBlocks evaluates the fused tree into dst[from:to] (from a multiple of fuseBlock) on the
// calling goroutine.
func (st *fuseState[T]) runBlocks(fp *fusePlan, dst []T, from, to int, leaves [][]T) {
	last := len(fp.code) - 1
	for off := from; off < to; off += fuseBlock {
		m := min(fuseBlock, to-off)
		sp := 0
		for pc, in := range fp.code {
			switch in.kind {
			case fLeaf:
				st.cur[sp] = leaves[in.leaf][off : off+m]
				sp++
			case fScalar:
				st.cur[sp] = st.sblk[in.leaf][:m]
				sp++
			default:
				// An operation on the top ar values, writing into the slot of the first
				// (or into dst for the last instruction).
				ar := in.arity()
				d := st.tmp[sp-ar][:m]
				if pc == last {
					d = dst[off : off+m]
				}
				args := st.cur[sp-ar : sp]
				switch in.kind {
				case fUnary:
					unaryFloat(in.un, d, args[0])
				case fBinary:
					binaryFloat(in.bin, d, args[0], args[1])
				case fCmp:
					cmpMask(in.bin, d, args[0], args[1])
				case fBin2L:
					var c []T
					if in.leafKind == fLeaf {
						c = leaves[in.leaf][off : off+m]
					} else {
						c = st.sblk[in.leaf][:m]
					}
					bin2L(in.bin, in.bin2, d, args[0], args[1], c)
				case fBin2R:
					bin2R(in.bin, in.bin2, d, args[0], args[1], args[2])
				}
				st.cur[sp-ar] = d
				sp -= ar - 1
			}
		}
	}
}

// arity is the number of stack values an operation instruction consumes.
func (in fuseIns) arity() int {
	switch in.kind {
	case fUnary:
		return 1
	case fBin2R:
		return 3
	}
	return 2
}

// cmpMask writes 1 where a cmp b holds and 0 elsewhere (NaN compares false except for !=).
func cmpMask[T floatT](op core.BinOp, d, a, b []T) {
	switch op {
	case core.OpLt:
		zip(d, a, b, func(x, y T) T { return b2n[T](x < y) })
	case core.OpLe:
		zip(d, a, b, func(x, y T) T { return b2n[T](x <= y) })
	case core.OpGt:
		zip(d, a, b, func(x, y T) T { return b2n[T](x > y) })
	case core.OpGe:
		zip(d, a, b, func(x, y T) T { return b2n[T](x >= y) })
	case core.OpEq:
		zip(d, a, b, func(x, y T) T { return b2n[T](x == y) })
	case core.OpNe:
		zip(d, a, b, func(x, y T) T { return b2n[T](x != y) })
	}
}
