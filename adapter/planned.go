package adapter

import (
	"fmt"
	"strings"

	"github.com/bulkad/bulkad/core"
	"github.com/pkg/errors"
	"gorgonia.org/gorgonia"
)

// Planned is implemented by ops that compute a whole program into one packed vector: the plan
// nodes of package raise's coarse mode. Program is fn (params) => let … in (r_1, …, r_k);
// parameter i reads operand ParamOperands()[i] from element ParamOffsets()[i] on (offset 0
// and the operand's whole value, or a range of another plan node's packed value); result j
// lies at ResultOffsets()[j] in the packed vector, and the top-level lets named in PackedLets
// at the offsets given there.
type Planned interface {
	gorgonia.Op
	Program() *core.Program
	ParamOperands() []int
	ParamOffsets() []int
	ResultOffsets() []int
	PackedLets() map[string]int
}

// Part is implemented by ops that read a typed range of their one operand, the packed value
// of a Planned node: the result nodes of a coarse raise.
type Part interface {
	gorgonia.Op
	Part() (offset int, t core.Type)
}

// Slot is a range of a plan node's packed value: Offset is its first element, its type is
// the let's (see Translation.Slots).
type Slot struct {
	Node   *gorgonia.Node
	Offset int
}

// packKey names a typed range of a plan node's packed value.
type packKey struct {
	node int64
	off  int
	typ  string
}

// translatePlanned inlines a plan node's program: its lets become lets of the translation
// (renamed apart; those kept in the packed value are recorded as Slots, so a gradient reads
// them from the plan node instead of recomputing them), and its results become the terms of
// their ranges, which the Part nodes read. The plan node itself gets no term: only Part nodes
// and other plan nodes read it.
func (t *translator) translatePlanned(n *gorgonia.Node, op Planned, kids []*gorgonia.Node) error {
	p := op.Program()
	if p == nil {
		return errors.Errorf("adapter: translate: plan node %q (ID %d) carries no program", n.Name(), n.ID())
	}
	ops, offs := op.ParamOperands(), op.ParamOffsets()
	if len(ops) != len(p.Params) || len(offs) != len(p.Params) {
		return errors.Errorf("adapter: translate: plan node %q (ID %d): %d parameters, %d operand indices, %d offsets", n.Name(), n.ID(), len(p.Params), len(ops), len(offs))
	}
	sub := make(map[string]core.Term, len(p.Params))
	for i, v := range p.Params {
		if ops[i] < 0 || ops[i] >= len(kids) {
			return errors.Errorf("adapter: translate: plan node %q (ID %d): parameter %s reads operand %d of %d", n.Name(), n.ID(), v.Name, ops[i], len(kids))
		}
		a, err := t.rangeTerm(kids[ops[i]], offs[i], v.Type())
		if err != nil {
			return errors.Wrapf(err, "adapter: translate: plan node %q (ID %d): parameter %s", n.Name(), n.ID(), v.Name)
		}
		sub[v.Name] = a
	}
	chain, body := core.LetChain(p.Body)
	results := core.Results(body)
	roffs := op.ResultOffsets()
	if len(roffs) != len(results) {
		return errors.Errorf("adapter: translate: plan node %q (ID %d): %d results, %d result offsets", n.Name(), n.ID(), len(results), len(roffs))
	}
	// One substitution over every bound term and result (the lets' variables free in the
	// tuple are renamed to the translation's fresh variables), linear in the program's size.
	vars := make([]*core.Var, len(chain))
	elems := make([]core.Term, 0, len(chain)+len(results))
	for i, l := range chain {
		v, err := core.NewVar(t.fresh(l.Var.Name, n), l.Var.Type())
		if err != nil {
			return errors.Wrap(err, "adapter: translate")
		}
		vars[i] = v
		sub[l.Var.Name] = v
		elems = append(elems, l.Bound)
	}
	elems = append(elems, results...)
	all, err := core.Subst(&core.Tuple{Elems: elems}, sub)
	if err != nil {
		return errors.Wrapf(err, "adapter: translate: plan node %q (ID %d): substituting its operands", n.Name(), n.ID())
	}
	tu, ok := all.(*core.Tuple)
	if !ok || len(tu.Elems) != len(elems) {
		return errors.Errorf("adapter: translate: plan node %q (ID %d): substitution changed the program's shape (internal error)", n.Name(), n.ID())
	}
	lets := op.PackedLets()
	for i, l := range chain {
		t.lets = append(t.lets, vars[i])
		t.bounds = append(t.bounds, tu.Elems[i])
		if off, ok := lets[l.Var.Name]; ok {
			t.slots[vars[i].Name] = Slot{Node: n, Offset: off}
			t.packed[packKey{n.ID(), off, vars[i].Type().String()}] = vars[i]
		}
	}
	for j, r := range tu.Elems[len(chain):] {
		k := packKey{n.ID(), roffs[j], r.Type().String()}
		if _, isVar := r.(*core.Var); isVar {
			t.packed[k] = r
			continue
		}
		v, err := core.NewVar(t.fresh(fmt.Sprintf("result%d", j), n), r.Type())
		if err != nil {
			return errors.Wrap(err, "adapter: translate")
		}
		t.lets = append(t.lets, v)
		t.bounds = append(t.bounds, r)
		t.slots[v.Name] = Slot{Node: n, Offset: roffs[j]}
		t.packed[k] = v
	}
	return nil
}

// rangeTerm is the term of elements off … off+size(want)-1 of node k's value, as want: the
// node's own term for its whole value, or a range of a plan node's packed value that an
// earlier translatePlanned recorded.
func (t *translator) rangeTerm(k *gorgonia.Node, off int, want core.Type) (core.Term, error) {
	if term, ok := t.packed[packKey{k.ID(), off, want.String()}]; ok {
		return term, nil
	}
	if _, planned := k.Op().(Planned); planned {
		return nil, errors.Errorf("node %q (ID %d) is a plan node whose elements %d… (%v) no translated term denotes", k.Name(), k.ID(), off, want)
	}
	kt, err := coreType(k)
	if err != nil {
		return nil, err
	}
	if off != 0 || kt.Dtype != want.Dtype || kt.Shape.Size() != want.Shape.Size() {
		return nil, errors.Errorf("reads elements %d… as %v of node %q (ID %d), which is %v", off, want, k.Name(), k.ID(), kt)
	}
	a := t.terms[k.ID()]
	if a == nil {
		if a, err = t.param(k); err != nil {
			return nil, err
		}
	}
	if !kt.Shape.Equal(want.Shape) {
		return core.NewReshape(want.Shape, a)
	}
	return a, nil
}

// fresh derives a fresh, valid let name from a plan's let name and the plan node's ID.
func (t *translator) fresh(base string, n *gorgonia.Node) string {
	var sb strings.Builder
	for _, r := range base {
		if sb.Len() >= 24 {
			break
		}
		if r == '_' || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9') {
			sb.WriteRune(r)
		}
	}
	s := sb.String()
	if s == "" || (s[0] >= '0' && s[0] <= '9') {
		s = "v" + s
	}
	name := fmt.Sprintf("%s_p%d", s, n.ID())
	for k := 2; t.used[name] || !core.ValidName(name); k++ {
		name = fmt.Sprintf("%s_p%d_%d", s, n.ID(), k)
	}
	t.used[name] = true
	return name
}

// translatePart gives a Part node the term of its range of the plan node it reads.
func (t *translator) translatePart(n *gorgonia.Node, op Part) error {
	kids, err := t.children(n)
	if err != nil {
		return err
	}
	if len(kids) != 1 {
		return errors.Errorf("adapter: translate: part node %q (ID %d) has %d operands, want 1", n.Name(), n.ID(), len(kids))
	}
	off, typ := op.Part()
	term, err := t.rangeTerm(kids[0], off, typ)
	if err != nil {
		return errors.Wrapf(err, "adapter: translate: part node %q (ID %d)", n.Name(), n.ID())
	}
	want, err := coreType(n)
	if err != nil {
		return err
	}
	if term, err = fit(term, want); err != nil {
		return errors.Wrapf(err, "adapter: translate: part node %q (ID %d)", n.Name(), n.ID())
	}
	if d := t.delta[n.ID()]; d != nil {
		// as in translate: let n_pre = <the range> in let n = n_pre + δ
		pre, err := t.let(n, "part", "_pre", term)
		if err != nil {
			return err
		}
		if term, err = core.NewBinary(core.OpAdd, pre, d); err != nil {
			return errors.Wrapf(err, "adapter: translate: node %q (ID %d): perturbation", n.Name(), n.ID())
		}
	}
	v, err := t.let(n, "part", "", term)
	if err != nil {
		return err
	}
	t.terms[n.ID()] = v
	return nil
}
