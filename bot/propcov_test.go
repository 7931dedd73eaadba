package bot

import (
	"math/rand"
	"testing"

	"github.com/bulkad/bulkad/core"
	"github.com/bulkad/bulkad/core/coretest"
)

// buildDepth is the deepest nesting of build1 in t (memoised; DAG-linear).
func buildDepth(t core.Term, memo map[core.Term]int) int {
	if d, ok := memo[t]; ok {
		return d
	}
	d := 0
	for _, c := range core.Children(t) {
		d = max(d, buildDepth(c, memo))
	}
	if _, ok := t.(*core.Build1); ok {
		d++
	}
	memo[t] = d
	return d
}

// coverage describes what one generated program contains.
type coverage struct {
	depth     int
	sharedLet bool // a let whose variable occurs at least twice in its body
	nonAffine bool // quot or rem inside the index function of a gather
	kinds     map[string]bool
}

func coverageOf(p *core.Program) coverage {
	cv := coverage{kinds: map[string]bool{}}
	cv.depth = buildDepth(p.Body, map[core.Term]int{})
	core.PostOrder(p.Body, func(n core.Term) {
		cv.kinds[kind(n)] = true
		switch x := n.(type) {
		case *core.Let:
			// the number of parent nodes (distinct, each child slot counted) that use x
			uses := 0
			core.PostOrder(x.Body, func(u core.Term) {
				for _, c := range core.Children(u) {
					if v, ok := c.(*core.Var); ok && v.Name == x.Var.Name {
						uses++
					}
				}
			})
			if uses >= 2 {
				cv.sharedLet = true
			}
		case *core.Gather:
			for _, e := range x.Fn.Out {
				if hasQuotRem(e) {
					cv.nonAffine = true
				}
			}
		}
	})
	return cv
}

func hasQuotRem(t core.Term) bool {
	found := false
	core.PostOrder(t, func(n core.Term) {
		if b, ok := n.(*core.Binary); ok && (b.Op == core.OpQuot || b.Op == core.OpRem) {
			found = true
		}
	})
	return found
}

// TestPropertyCoverage checks that the programs of the property tests cover what the issue
// asks for: build1 nested 3 deep, lets whose variable is used more than once, gathers with
// non-affine (quot/rem) index functions, and every construct but Tuple.
func TestPropertyCoverage(t *testing.T) {
	var deep, shared, nonAff int
	depths := map[int]int{}
	kinds := map[string]int{}
	for seed := int64(0); seed < propPrograms; seed++ {
		rng := rand.New(rand.NewSource(seed))
		p := coretest.RandomProgram(rng, propConfig(seed))
		cv := coverageOf(p)
		depths[cv.depth]++
		if cv.depth >= 3 {
			deep++
		}
		if cv.sharedLet {
			shared++
		}
		if cv.nonAffine {
			nonAff++
		}
		for k := range cv.kinds {
			kinds[k]++
		}
	}
	t.Logf("%d programs; build1 depth histogram %v; depth >= 3: %d; shared lets: %d; non-affine gathers: %d",
		propPrograms, depths, deep, shared, nonAff)
	t.Logf("programs containing each construct: %v", kinds)
	for what, n := range map[string]int{"build1 nested >= 3 deep": deep, "lets used more than once": shared, "non-affine gathers": nonAff} {
		if n < propPrograms/20 {
			t.Errorf("only %d programs with %s", n, what)
		}
	}
	for _, k := range []string{"Var", "Lit", "Let", "Share", "Cond", "Unary", "Cast", "Binary", "Index", "SumOuter",
		"ArgmaxOuter", "Gather", "Scatter", "FromVector", "Replicate", "Transpose", "Reshape", "Build1", "Iota", "MatMul"} {
		if kinds[k] < propPrograms/50 {
			t.Errorf("only %d programs contain %s", kinds[k], k)
		}
	}
}
