package raise

import (
	"slices"

	"github.com/bulkad/bulkad/core"
)

// liveLets marks the lets of chain that the results depend on, walking every distinct
// subterm once (one pass, memoised by term pointer; linear in the program size). A let bound
// to an existing node does not make its definition's variables live.
//
// It over-approximates where a name is bound twice (an inner binder or two top-level lets of
// the same name): every occurrence of a name counts as a use of every let of that name, which
// only raises a let that is not needed. The gradient programs Grad raises have distinct
// binders, where it is exact.
func liveLets(chain []*core.Let, results []core.Term, bound func(string) bool) ([]bool, map[string]bool) {
	live := map[string]bool{}
	seen := map[core.Term]bool{}
	var stack []core.Term
	walk := func(t core.Term) {
		if t == nil || seen[t] {
			return
		}
		seen[t] = true
		stack = append(stack[:0], t)
		for len(stack) > 0 {
			u := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if v, ok := u.(*core.Var); ok {
				live[v.Name] = true
				continue
			}
			for _, k := range core.Children(u) {
				if k != nil && !seen[k] {
					seen[k] = true
					stack = append(stack, k)
				}
			}
		}
	}
	for _, r := range results {
		walk(r)
	}
	needed := make([]bool, len(chain))
	for i := len(chain) - 1; i >= 0; i-- {
		l := chain[i]
		if !live[l.Var.Name] {
			continue
		}
		needed[i] = true
		if bound(l.Var.Name) {
			continue // bound to an existing node: its definition is not raised
		}
		walk(l.Bound)
	}
	return needed, live
}

// plannedTerms returns what a plan computes as one tuple: the results and the bound terms of
// the needed lets not bound to existing nodes. A term's references are counted in it (onlyUse):
// a let that only an unselected result reads (a node value a lean machine drops) is read once.
func plannedTerms(chain []*core.Let, needed []bool, results []core.Term, bound func(string) bool) core.Term {
	elems := slices.Clone(results)
	for i, l := range chain {
		if needed[i] && !bound(l.Var.Name) {
			elems = append(elems, l.Bound)
		}
	}
	return &core.Tuple{Elems: elems}
}
