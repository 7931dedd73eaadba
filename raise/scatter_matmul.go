package raise

import (
	"github.com/bulkad/bulkad/core"
	"github.com/pkg/errors"
)

// Sparse product with a scatter: the filter gradient of a convolution followed by ReLU and
// max-pooling is matmul (tr [1,0] (reshape [N,C] S)) B with S a scatter to the argmax
// positions of the pooling windows (at most one element in KH·KW nonzero). Instead of
// materialising S and running a dense GEMM over all N rows, one op walks S's domain:
//
//	out[c, :] += y[p] · B[n, :]   for every domain point p, (n, c) the position f(p)
//
// which is the same sum without the zero terms. Those terms only matter when B holds an
// infinity or a NaN (0·Inf = NaN), so the op checks B first and falls back to the dense
// definition then. The summation order differs from a GEMM's (as GEMMs differ among
// themselves); the value is otherwise the same.

// scatterMatmulK computes out[C,K] = Sᵀ · B with S [N,C] the scatter of y [dom] by an index
// function whose row part (n) and column part (c) are each affine plus at most one
// looked-up argmax term (see lookupPlan).
type scatterMatmulK struct {
	dom      []int
	rowP     *lookupK // n: offset into the rows of B
	colP     *lookupK // c: offset into the rows of out
	n, c, k  int
	hasTable bool // input 2 is the looked-up argmax array
}

// scatterMatmul plans matmul (tr [1,0] R) B (a, b are the stored operands after isSwap) as
// a scatterMatmulK when R is such a scatter.
func (pl *plan) scatterMatmul(t *core.MatMul, a core.Term, ta bool, b core.Term, tb bool) (ref, bool, error) {
	if !ta || tb || !t.Type().Dtype.IsFloat() {
		return ref{}, false, nil
	}
	as := a.Type().Shape // [N, C]
	s, ok := pl.scatterOf(a)
	if !ok {
		return ref{}, false, nil
	}
	sh := s.Shape
	r := len(sh)
	xs := s.X.Type().Shape
	n := len(s.Fn.Vars)
	if r < 2 || len(s.Fn.Out) != r || n != len(xs) || sh[r-1] != as[1] || sh[:r-1].Size() != as[0] || xs.Size() == 0 {
		return ref{}, false, nil
	}
	rowFn, err1 := core.NewIndexFn(s.Fn.Vars, s.Fn.Out[:r-1])
	colFn, err2 := core.NewIndexFn(s.Fn.Vars, s.Fn.Out[r-1:])
	if err1 != nil || err2 != nil {
		return ref{}, false, nil
	}
	rowP, rowArr, ok1 := pl.partPlan(rowFn, xs, sh[:r-1])
	colP, colArr, ok2 := pl.partPlan(colFn, xs, sh[r-1:])
	if !ok1 || !ok2 {
		return ref{}, false, nil
	}
	arr := rowArr
	if arr == nil {
		arr = colArr
	} else if colArr != nil && !core.Equal(colArr, rowArr) {
		return ref{}, false, nil
	}
	bs := b.Type().Shape
	k := &scatterMatmulK{dom: xs, rowP: rowP, colP: colP, n: as[0], c: as[1], k: bs[1], hasTable: arr != nil}
	ins := []core.Term{s.X, b}
	if arr != nil {
		ins = append(ins, arr)
	}
	rebuilt := func(vs []*core.Var) (core.Term, []*core.Var, error) {
		// matmul (tr [1,0] (reshape [N,C] (scatter sh y f))) B over parameters for y, B and
		// the argmax array (substituted into f as in gatherScatter).
		terms := map[core.Term]core.Term{}
		vars := map[string]core.Term{}
		if arr != nil {
			if v, isVar := arr.(*core.Var); isVar {
				vars[v.Name] = vs[2]
			} else {
				terms[arr] = vs[2]
			}
		}
		prog, err := compileIndexFn(s.Fn)
		if err != nil {
			return nil, nil, err
		}
		for _, f := range prog.frees { // every free is equal to arr (checked above)
			if v, isVar := f.(*core.Var); isVar {
				vars[v.Name] = vs[2]
			} else {
				terms[f] = vs[2]
			}
		}
		rp := &replacer{vars: vars, terms: terms, rewrites: prog.rewrites}
		out := make([]core.Term, len(s.Fn.Out))
		for i, o := range s.Fn.Out {
			if out[i], err = rp.run(o, s.Fn.Vars); err != nil {
				return nil, nil, err
			}
		}
		fn, err := core.NewIndexFn(s.Fn.Vars, out)
		if err != nil {
			return nil, nil, err
		}
		sc, err := core.NewScatter(sh.Clone(), vs[0], fn)
		if err != nil {
			return nil, nil, err
		}
		rs, err := core.NewReshape(as.Clone(), sc)
		if err != nil {
			return nil, nil, err
		}
		tr, err := core.NewTranspose([]int{1, 0}, rs)
		if err != nil {
			return nil, nil, err
		}
		m, err := core.NewMatMul(tr, vs[1])
		return m, vs, err
	}
	res, err := pl.custom(t, "scatterMatmul", ins, rebuilt, k)
	return res, true, err
}

// scatterOf returns the scatter a [N,C] operand denotes: a scatter, or a reshape of one that
// merges all dimensions but the last, seen through transposes folded into the scatter and a
// 0/1 mask fused into it (maskedScatterTerm).
func (pl *plan) scatterOf(a core.Term) (*core.Scatter, bool) {
	t := pl.peel(a)
	if rs, ok := t.(*core.Reshape); ok {
		t = pl.peel(rs.X)
	}
	if tr, ok := t.(*core.Transpose); ok {
		u, ok := pl.transposeOf(tr)
		if !ok {
			return nil, false
		}
		t = u
	}
	if bin, ok := t.(*core.Binary); ok {
		s, ok := pl.maskedScatterTerm(bin)
		if !ok {
			return nil, false
		}
		t = s
	}
	s, ok := t.(*core.Scatter)
	return s, ok
}

// partPlan plans one part of an index function: affine (no table) or affine plus one
// looked-up argmax (arr is then the array).
func (pl *plan) partPlan(fn *core.IndexFn, dom, outer []int) (l *lookupK, arr core.Term, ok bool) {
	prog, err := compileIndexFn(fn)
	if err != nil {
		return nil, nil, false
	}
	if len(prog.frees) == 0 {
		st, base, ok := affinePlan(fn, dom, outer)
		if !ok {
			return nil, nil, false
		}
		return &lookupK{st: st, base: base}, nil, true
	}
	l, ok = lookupPlan(fn, prog, dom, outer, pl.argmaxRange)
	if !ok {
		return nil, nil, false
	}
	return l, prog.frees[0], true
}

func (k *scatterMatmulK) run(out any, ins []any) error {
	var lk []int64
	if k.hasTable {
		if len(ins) != 3 {
			return errors.Errorf("raise: scatterMatmul: %d inputs, want 3", len(ins))
		}
		var ok bool
		lk, ok = ins[2].([]int64)
		if !ok || len(lk) != core.Shape(k.dom).Size() {
			return typeErr("scatterMatmul", out, ins)
		}
		if (k.rowP.table != nil && !lookupCheck(lk, len(k.rowP.table))) || (k.colP.table != nil && !lookupCheck(lk, len(k.colP.table))) {
			return errors.Errorf("raise: scatterMatmul: looked-up value out of range")
		}
	}
	switch o := out.(type) {
	case []float64:
		y, ok1 := ins[0].([]float64)
		b, ok2 := ins[1].([]float64)
		if ok1 && ok2 && len(b) == k.n*k.k && len(o) == k.c*k.k {
			scatterMatmulRun(k, o, y, b, lk)
			return nil
		}
	case []float32:
		y, ok1 := ins[0].([]float32)
		b, ok2 := ins[1].([]float32)
		if ok1 && ok2 && len(b) == k.n*k.k && len(o) == k.c*k.k {
			scatterMatmulRun(k, o, y, b, lk)
			return nil
		}
	}
	return typeErr("scatterMatmul", out, ins)
}

func scatterMatmulRun[T ~float64 | ~float32](k *scatterMatmulK, out, y, b []T, lk []int64) {
	clear(out)
	// v - v is 0 for a number and NaN for an infinity or a NaN, and NaN stays in the sum.
	var n0, n1, n2, n3 T
	i := 0
	for ; i+4 <= len(b); i += 4 {
		n0 += b[i] - b[i]
		n1 += b[i+1] - b[i+1]
		n2 += b[i+2] - b[i+2]
		n3 += b[i+3] - b[i+3]
	}
	for ; i < len(b); i++ {
		n0 += b[i] - b[i]
	}
	nonFinite := n0 + n1 + n2 + n3
	kk := k.k
	if nonFinite != 0 {
		// The dense definition: S materialised, every row of B enters the sum.
		s := make([]T, k.n*k.c)
		scatterPairs(k, lk, func(p, row, col int) { s[row*k.c+col] += y[p] })
		for row := 0; row < k.n; row++ {
			br := b[row*kk : row*kk+kk]
			for col := 0; col < k.c; col++ {
				v := s[row*k.c+col]
				o := out[col*kk : col*kk+kk]
				for j, bv := range br {
					o[j] += v * bv
				}
			}
		}
		return
	}
	// Walk the domain; along the innermost dimension the output row usually stays the same
	// (the column part does not depend on it), so the products of a run are summed in acc
	// and added to the row once.
	dom := k.dom
	nd := len(dom)
	last := dom[nd-1]
	rs, cs := k.rowP.st, k.colP.st
	rt, ct := k.rowP.table, k.colP.table
	runConst := cs[nd-1] == 0 && ct == nil
	offs := make([]int, last)
	idx := make([]int, nd)
	total := core.Shape(dom).Size()
	row, col := k.rowP.base, k.colP.base
	for p := 0; p < total; p += last {
		if runConst {
			// The row offsets of the run, then the columns of B four at a time with the
			// sums in registers.
			r := row
			for q := range offs {
				rr := r
				if rt != nil {
					rr += rt[lk[p+q]]
				}
				offs[q] = rr * kk
				r += rs[nd-1]
			}
			ys := y[p : p+last]
			o := out[col*kk : col*kk+kk]
			j := 0
			for ; j+8 <= kk; j += 8 {
				var a0, a1, a2, a3, a4, a5, a6, a7 T
				for q, v := range ys {
					bq := b[offs[q]+j : offs[q]+j+8 : offs[q]+j+8]
					a0 += v * bq[0]
					a1 += v * bq[1]
					a2 += v * bq[2]
					a3 += v * bq[3]
					a4 += v * bq[4]
					a5 += v * bq[5]
					a6 += v * bq[6]
					a7 += v * bq[7]
				}
				o[j] += a0
				o[j+1] += a1
				o[j+2] += a2
				o[j+3] += a3
				o[j+4] += a4
				o[j+5] += a5
				o[j+6] += a6
				o[j+7] += a7
			}
			for ; j+4 <= kk; j += 4 {
				var a0, a1, a2, a3 T
				for q, v := range ys {
					bq := b[offs[q]+j : offs[q]+j+4 : offs[q]+j+4]
					a0 += v * bq[0]
					a1 += v * bq[1]
					a2 += v * bq[2]
					a3 += v * bq[3]
				}
				o[j] += a0
				o[j+1] += a1
				o[j+2] += a2
				o[j+3] += a3
			}
			for ; j < kk; j++ {
				var a T
				for q, v := range ys {
					a += v * b[offs[q]+j]
				}
				o[j] += a
			}
		} else {
			r, c := row, col
			for q := p; q < p+last; q++ {
				rr, cc := r, c
				if rt != nil {
					rr += rt[lk[q]]
				}
				if ct != nil {
					cc += ct[lk[q]]
				}
				v := y[q]
				br := b[rr*kk : rr*kk+kk]
				o := out[cc*kk : cc*kk+kk]
				for j, bv := range br {
					o[j] += v * bv
				}
				r += rs[nd-1]
				c += cs[nd-1]
			}
		}
		for d := nd - 2; d >= 0; d-- {
			idx[d]++
			row += rs[d]
			col += cs[d]
			if idx[d] < dom[d] {
				break
			}
			row -= rs[d] * dom[d]
			col -= cs[d] * dom[d]
			idx[d] = 0
		}
	}
}

// scatterPairs calls f(p, row, col) for every domain point p in row-major order with the
// row and column the scatter sends it to.
func scatterPairs(k *scatterMatmulK, lk []int64, f func(p, row, col int)) {
	dom := k.dom
	nd := len(dom)
	idx := make([]int, nd)
	total := core.Shape(dom).Size()
	rs, cs := k.rowP.st, k.colP.st
	row, col := k.rowP.base, k.colP.base
	rt, ct := k.rowP.table, k.colP.table
	for p := 0; p < total; p++ {
		r, c := row, col
		if rt != nil {
			r += rt[lk[p]]
		}
		if ct != nil {
			c += ct[lk[p]]
		}
		f(p, r, c)
		for d := nd - 1; d >= 0; d-- {
			idx[d]++
			row += rs[d]
			col += cs[d]
			if idx[d] < dom[d] {
				break
			}
			row -= rs[d] * dom[d]
			col -= cs[d] * dom[d]
			idx[d] = 0
		}
	}
}
