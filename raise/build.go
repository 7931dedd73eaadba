package raise

import (
	"fmt"
	"strings"
	"time"

	"github.com/bulkad/bulkad/core"
	kern "github.com/bulkad/bulkad/kernel"
	"github.com/pkg/errors"
	"gorgonia.org/gorgonia"
)

// build adds the planned steps to the graph as nodes (see Raise) and returns the results.
func (pl *plan) build(opt Options) (out []*gorgonia.Node, err error) {
	pre := pl.existing()
	salt := len(pre)
	defer func() {
		if pl.undo(pre, recover(), &err) {
			out = nil
		}
	}()
	nodes := make([]*gorgonia.Node, len(pl.steps))
	made := map[*gorgonia.Node]bool{}
	get := func(r ref) *gorgonia.Node {
		if r.node != nil {
			return r.node
		}
		return nodes[r.step]
	}
	for i, s := range pl.steps {
		kids := make([]*gorgonia.Node, len(s.ins))
		for j, r := range s.ins {
			kids[j] = get(r)
			if _, isDS := kids[j].Op().(gorgonia.DimSizer); isDS && s.native {
				// e.g. a SizeOf node: Gorgonia's ops would read its op as the child's shape.
				nt, _ := nodeType(kids[j])
				op, err := copyOp(nt, "dimsizer")
				if err != nil {
					return nil, err
				}
				if kids[j], err = gorgonia.ApplyOp(op, kids[j]); err != nil {
					return nil, termErr(s.term, "copying a DimSizer child: %v", err)
				}
			}
		}
		tm := time.Now()
		n, err := s.make(kids)
		pl.inGorgonia += time.Since(tm)
		if err != nil {
			return nil, termErr(s.term, "building the node: %v", err)
		}
		if s.native && (pre[n] || made[n]) && !sameChildren(pl.g, n, kids) {
			// Gorgonia returned an existing node built on other children: a 32-bit hash
			// collision (or a stabilising rewrite that met an existing node). Build the step
			// as a custom op instead, which is checked and salted.
			if n, err = pl.nativeFallback(s, kids); err != nil {
				return nil, err
			}
		}
		made[n] = true
		if nt, ok := nodeType(n); !ok || !nt.Equal(s.typ) {
			return nil, termErr(s.term, "Gorgonia built a node of dtype %v shape %v, want %v", n.Dtype(), n.Shape(), s.typ)
		}
		nodes[i] = n
	}
	out = make([]*gorgonia.Node, len(pl.outs))
	seen := map[*gorgonia.Node]bool{}
	// A result that other raised nodes read is copied too: the TapeMachine may run a reader
	// in place on its register, and a gradient node must keep its value after the run.
	read := map[*gorgonia.Node]bool{}
	if opt.FreshResults {
		for i, s := range pl.steps {
			for _, r := range s.ins {
				if k := get(r); k != nodes[i] {
					read[k] = true
				}
			}
		}
	}
	for i, r := range pl.outs {
		n := get(r)
		reuse := opt.Reuse != nil && pre[n] && !seen[n] && !read[n] && n.Graph() == pl.g && !isConstantNode(n) && opt.Reuse(i, n)
		marked := !opt.Marked || IsRaised(n.Op())
		if opt.FreshResults && !reuse && (!marked || pre[n] || seen[n] || read[n] || n.Graph() != pl.g || isConstantNode(n)) {
			nt, _ := nodeType(n)
			name := fmt.Sprintf("%d.%d", salt, i)
			if i < len(opt.Salts) {
				name = fmt.Sprintf("%d/%s", n.ID(), opt.Salts[i])
			}
			op, err := copyOp(nt, name)
			if err != nil {
				return nil, err
			}
			if n, err = applyChecked(pl.g, op, []*gorgonia.Node{n}); err != nil {
				return nil, errors.Wrapf(err, "raise: result %d: copying", i)
			}
		}
		seen[n] = true
		out[i] = n
	}
	if err := protectViews(pl.g, out); err != nil {
		return nil, err
	}
	if err := markFresh(pl.g, out); err != nil {
		return nil, err
	}
	return out, nil
}

// existing is the set of the graph's nodes before a build.
func (pl *plan) existing() map[*gorgonia.Node]bool {
	pre := map[*gorgonia.Node]bool{}
	for _, n := range pl.g.AllNodes() {
		pre[n] = true
	}
	return pre
}

// undo, deferred by a build with the value of recover(), turns a panic of Gorgonia into *err
// and, when the build failed, removes every node added since pre (the graph is left as it
// was); it reports whether it failed.
func (pl *plan) undo(pre map[*gorgonia.Node]bool, panicked any, err *error) bool {
	if panicked != nil {
		*err = errors.Errorf("raise: build: Gorgonia panicked: %v", panicked)
	}
	if *err == nil {
		return false
	}
	var added []*gorgonia.Node
	for _, n := range pl.g.AllNodes() {
		if n != nil && !pre[n] {
			added = append(added, n)
		}
	}
	for i := len(added) - 1; i >= 0; i-- {
		pl.g.RemoveNode(added[i])
	}
	return true
}

// nativeFallback builds a native step as a custom op evaluated by package core.
func (pl *plan) nativeFallback(s step, kids []*gorgonia.Node) (*gorgonia.Node, error) {
	if s.fallback == nil {
		return nil, termErr(s.term, "Gorgonia returned an unrelated existing node and no fallback exists")
	}
	types := make([]core.Type, len(kids))
	for i, k := range kids {
		t, ok := nodeType(k)
		if !ok {
			return nil, termErr(s.term, "child %d has unsupported dtype %v", i, k.Dtype())
		}
		types[i] = t
	}
	vs, err := inVars(nil, types...)
	if err != nil {
		return nil, termErr(s.term, "%v", err)
	}
	body, err := s.fallback(vs)
	if err != nil {
		return nil, termErr(s.term, "%v", err)
	}
	p, err := core.NewProgram(vs, body)
	if err != nil {
		return nil, termErr(s.term, "%v", err)
	}
	ex, err := kern.Compile(p)
	if err != nil {
		return nil, termErr(s.term, "%v", err)
	}
	op, err := newOp("fallback", vs, body, &kern.ExecKernel{Ex: ex, Args: types, Out: body.Type()})
	if err != nil {
		return nil, termErr(s.term, "%v", err)
	}
	return applyChecked(pl.g, op, kids)
}

func isConstantNode(n *gorgonia.Node) bool {
	if n.Op() == nil {
		return false
	}
	_, ok := n.Op().(interface{ Value() gorgonia.Value })
	return ok && strings.HasPrefix(fmt.Sprintf("%T", n.Op()), "gorgonia.constant")
}

// copyOp is the identity as a fresh node; salt distinguishes copies that must not be
// deduplicated (it is part of the hash and of the printed form).
func copyOp(t core.Type, salt string) (*Op, error) {
	v, err := core.NewVar("x0", t)
	if err != nil {
		return nil, err
	}
	o, err := newOp("copy", []*core.Var{v}, v, kern.Concat{Copies: 1})
	if err != nil {
		return nil, err
	}
	o.text += " #" + salt
	return o, nil
}
