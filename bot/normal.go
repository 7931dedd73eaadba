package bot

import (
	"fmt"

	"github.com/bulkad/bulkad/core"
	"github.com/pkg/errors"
)

// CheckNormalForm reports whether t is in the normal form of Theorem 5.1: build1 does not
// occur, and every index u ix has a non-empty ix and is index x ix (x a variable),
// index c ix (c a literal), index [..] [v] (exactly one component), or
// index (scatter ..) ix.
//
// The check covers every subterm, including the terms inside index functions of gather and
// scatter. The paper remarks (after Thm. 5.1) that index left inside index functions is
// harmless, because those are discrete and never differentiated; but the theorem's
// characterisation is about all occurrences, and the rewrite rules apply under index
// functions too, so Vectorize normalises them as well and this checker holds it to that.
func CheckNormalForm(t core.Term) error {
	if t == nil {
		return errors.New("bot: normal form: nil term")
	}
	var err error
	core.PostOrder(t, func(n core.Term) {
		if err != nil {
			return
		}
		switch x := n.(type) {
		case *core.Build1:
			err = errors.Errorf("bot: normal form: build1 remains: %s", clip(x.String()))
		case *core.Index:
			if len(x.Ix) == 0 {
				err = errors.Errorf("bot: normal form: index with an empty index: %s", clip(x.String()))
				return
			}
			switch a := x.X.(type) {
			case *core.Var, *core.Lit, *core.Scatter:
			case *core.FromVector:
				if len(x.Ix) != 1 {
					err = errors.Errorf("bot: normal form: index [..] with %d components, want 1: %s", len(x.Ix), clip(x.String()))
				}
			default:
				err = errors.Errorf("bot: normal form: index of %s: %s", kind(a), clip(x.String()))
			}
		}
	})
	return err
}

func kind(t core.Term) string { return fmt.Sprintf("%T", t)[len("*core."):] }

func clip(s string) string {
	if len(s) > 300 {
		return s[:300] + "…"
	}
	return s
}
