package raise

import (
	"github.com/bulkad/bulkad/core"
	kern "github.com/bulkad/bulkad/kernel"
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
// definition then. The walk's multiply-adds are scalar, about 16 times a GEMM's: when S is
// not sparse enough for B's width (a 2×2 max-pooling's gradient is a quarter full) the op
// materialises S and runs a GEMM instead (kern.ScatterMatMul, scatterMatmulDense). The summation order differs from a GEMM's (as GEMMs differ among
// themselves); the value is otherwise the same.

// scatterMatmul plans matmul (tr [1,0] R) B (a, b are the stored operands after swapped) as
// a scatterMatmulK when R is such a scatter.
func (pl *plan) scatterMatmul(t *core.MatMul, a core.Term, ta bool, b core.Term, tb bool) (ref, bool, error) {
	if !ta || tb || !t.Type().Dtype.IsFloat() || len(t.Type().Shape) != 2 {
		return ref{}, false, nil // only the 2-D product (not a batched one)
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
	k := &kern.ScatterMatMul{Dom: xs, RowP: rowP, ColP: colP, N: as[0], C: as[1], K: bs[1], HasTable: arr != nil, WS: pl.gemmWS(), S: &kern.Scratch{}}
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
		prog, err := kern.CompileIndexFn(s.Fn)
		if err != nil {
			return nil, nil, err
		}
		for _, f := range prog.Frees { // every free is equal to arr (checked above)
			if v, isVar := f.(*core.Var); isVar {
				vars[v.Name] = vs[2]
			} else {
				terms[f] = vs[2]
			}
		}
		rp := &replacer{vars: vars, terms: terms, rewrites: prog.Rewrites}
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
	t, ok := pl.foldTranspose(t)
	if !ok {
		return nil, false
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
func (pl *plan) partPlan(fn *core.IndexFn, dom, outer []int) (l *kern.Lookup, arr core.Term, ok bool) {
	prog, err := kern.CompileIndexFn(fn)
	if err != nil {
		return nil, nil, false
	}
	if len(prog.Frees) == 0 {
		st, base, ok := prog.AffinePlan(dom, outer)
		if !ok {
			return nil, nil, false
		}
		return &kern.Lookup{St: st, Base: base}, nil, true
	}
	l, ok = kern.LookupPlan(fn, prog, dom, outer, pl.argmaxRange)
	if !ok {
		return nil, nil, false
	}
	return l, prog.Frees[0], true
}
