package core

import "github.com/pkg/errors"

// maxSynHeight bounds the height of the syntax tree (not counting the bodies of lets, which
// are elaborated iteratively). Operator chains such as x + x + … + x are parsed by a loop but
// make a left-deep tree, and the elaborator, the type checks and every later pass walk terms
// recursively; without a bound a flat sum of a few hundred thousand terms exhausts the stack,
// which Go cannot recover from.
const maxSynHeight = 100000

// checkHeight returns an error when the tree under root is higher than maxSynHeight. It
// walks the tree with an explicit stack, visiting each shared node once.
func checkHeight(root *syn) error {
	height := map[*syn]int{}
	type frame struct {
		s    *syn
		next int
	}
	stack := []frame{{s: root}}
	for len(stack) > 0 {
		top := &stack[len(stack)-1]
		if top.next < len(top.s.kids) {
			k := top.s.kids[top.next]
			top.next++
			if k != nil {
				if _, done := height[k]; !done {
					stack = append(stack, frame{s: k})
				}
			}
			continue
		}
		h := 0
		for i, k := range top.s.kids {
			if k == nil {
				continue
			}
			kh := height[k] + 1
			if top.s.kind == synLet && i == 1 {
				kh-- // let bodies do not nest
			}
			if kh > h {
				h = kh
			}
		}
		if h > maxSynHeight {
			at := top.s.at
			return errors.Errorf("core: parse: line %d:%d: term nested deeper than %d levels (a chain of infix operations this long must be split with lets)", at.line, at.col, maxSynHeight)
		}
		height[top.s] = h
		stack = stack[:len(stack)-1]
	}
	return nil
}
