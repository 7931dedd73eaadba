package kernel

import (
	"github.com/bulkad/bulkad/core"
	"github.com/pkg/errors"
)

// The op kernels' side of index functions: what the function reads that does not depend on
// its variables becomes an extra input of the op (IndexProgram.Frees), bound per run.

// opHost makes free variables and hoisted subterms extra inputs, in order of first use.
type opHost struct {
	prog   *IndexProgram
	byName map[string]int
	byTerm map[core.Term]int
}

func (h *opHost) hoist(t core.Term, array bool) (int, bool, error) {
	if v, ok := t.(*core.Var); ok {
		if k, ok := h.byName[v.Name]; ok {
			return k, true, nil
		}
		h.byName[v.Name] = len(h.prog.Frees)
		h.prog.Frees = append(h.prog.Frees, v)
		return len(h.prog.Frees) - 1, true, nil
	}
	if !array {
		switch t.(type) {
		case *core.Share, *core.Let, *core.Cond, *core.Unary, *core.Cast, *core.Binary, *core.Index:
			return 0, false, nil // scalar arithmetic: computed inside the function
		}
	}
	if k, ok := h.byTerm[t]; ok {
		return k, true, nil
	}
	h.byTerm[t] = len(h.prog.Frees)
	h.prog.Frees = append(h.prog.Frees, t)
	return len(h.prog.Frees) - 1, true, nil
}

// CompileIndexFn compiles fn for the op kernels (Gather, Scatter); the arrays it reads are
// listed in prog.Frees in order of first use and must be supplied, in that order, to each
// run. It returns an error when fn uses a construct the compiled closures do not cover (the
// caller then evaluates the whole op as a program).
func CompileIndexFn(fn *core.IndexFn) (*IndexProgram, error) {
	h := &opHost{byName: map[string]int{}, byTerm: map[core.Term]int{}}
	p := &IndexProgram{}
	h.prog = p
	q, err := compileIx(fn, h, core.NewFreeVarCache(), true)
	if err != nil {
		return nil, err
	}
	q.Frees = p.Frees
	return q, nil
}

// newEnv binds the extra inputs (flat slices in Frees order) into a fresh environment.
func (p *IndexProgram) newEnv(arrs []any) (*ixEnv, error) {
	if len(arrs) != len(p.Frees) {
		return nil, errors.Errorf("kernel: index function: %d extra inputs supplied, want %d", len(arrs), len(p.Frees))
	}
	bufs := make([]*buf, len(arrs))
	for k, a := range arrs {
		want := p.Frees[k].Type()
		b := bufOver(a)
		if b == nil || b.dtype() != want.Dtype || b.length() != want.Shape.Size() {
			return nil, errors.Errorf("kernel: index function: extra input %d is %s[%d], want %v", k, typeName(a), SliceLen(a), want)
		}
		bufs[k] = b
	}
	return p.newEnvWith(bufs), nil
}

// AffinePlan returns, for p over domain dom addressing the outer dims outer of an array (in
// blocks), the block stride of every index variable and the base block offset, when p is
// affine with static constants and every point of the domain is provably in bounds.
func (p *IndexProgram) AffinePlan(dom, outer []int) (strides []int, base int, ok bool) {
	return p.inBounds(dom, core.Shape(outer).Strides(), outer)
}
