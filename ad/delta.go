package ad

import (
	"fmt"
	"strings"

	"github.com/bulkad/bulkad/core"
)

// DeltaKind names a Delta constructor.
type DeltaKind uint8

// The Delta constructors (paper 000, Fig. 12, extended to bulkad's core language). A Delta
// is a symbolic linear map from the tangents of the inputs to the tangent of one array; the
// primal pieces it embeds (scaling factors, index terms, index functions, matrices,
// conditions) are core terms over the primal program's variables.
const (
	// DZero is the zero tangent.
	DZero DeltaKind = iota + 1
	// DInput is the tangent of the input parameter Name.
	DInput
	// DAdd is A + B.
	DAdd
	// DNeg is -A.
	DNeg
	// DScale is Factor * A (element-wise; Factor has A's type).
	DScale
	// DShare marks A as shared with identity ID (global sharing, §2.5).
	DShare
	// DIndex is index A Ix.
	DIndex
	// DSumOuter is sumOuter A.
	DSumOuter
	// DGather is gather Shape A Fn.
	DGather
	// DScatter is scatter Shape A Fn.
	DScatter
	// DFromVector is [Elems...].
	DFromVector
	// DReplicate is replicate N A.
	DReplicate
	// DTranspose is tr Perm A.
	DTranspose
	// DReshape is reshape Shape A.
	DReshape
	// DMatMulL is matmul A Other (the tangent on the left).
	DMatMulL
	// DMatMulR is matmul Other A (the tangent on the right).
	DMatMulR
	// DCast converts A to the float dtype of the Delta's type.
	DCast
	// DSelect is cond Cond A B (Cond a [] bool primal term).
	DSelect
)

var deltaKindNames = [...]string{
	DZero: "Zero", DInput: "Input", DAdd: "Add", DNeg: "Neg", DScale: "Scale", DShare: "Share",
	DIndex: "Index", DSumOuter: "SumOuter", DGather: "Gather", DScatter: "Scatter",
	DFromVector: "FromVector", DReplicate: "Replicate", DTranspose: "Transpose",
	DReshape: "Reshape", DMatMulL: "MatMulL", DMatMulR: "MatMulR", DCast: "Cast", DSelect: "Select",
}

// String returns the constructor's name.
func (k DeltaKind) String() string {
	if int(k) < len(deltaKindNames) && deltaKindNames[k] != "" {
		return deltaKindNames[k]
	}
	return fmt.Sprintf("DeltaKind(%d)", uint8(k))
}

// Delta is a symbolic forward derivative (paper 000 §6.1, Fig. 12): a term of the linear
// language whose constructors mirror the core language's linear operations. Type is the type
// of the tangent it computes (always a float dtype). Deltas form a DAG; Share nodes carry IDs
// that grow monotonically within one differentiation, so a reverse pass that visits shared
// nodes in decreasing ID order visits each once (§2.5).
type Delta struct {
	Kind   DeltaKind
	Type   core.Type
	Name   string        // DInput
	ID     int           // DShare
	A, B   *Delta        // operands
	Elems  []*Delta      // DFromVector
	Factor core.Term     // DScale
	Ix     []core.Term   // DIndex
	Fn     *core.IndexFn // DGather, DScatter
	Shape  core.Shape    // DGather, DScatter, DReshape: the result shape
	N      int           // DReplicate
	Perm   []int         // DTranspose
	Other  core.Term     // DMatMulL, DMatMulR: the primal matrix (or stack of matrices)
	Cond   core.Term     // DSelect
}

// IsZero reports whether d is the Zero constructor.
func (d *Delta) IsZero() bool { return d == nil || d.Kind == DZero }

// String prints the Delta as a constructor tree; a Share whose ID was printed before prints
// only its ID.
func (d *Delta) String() string {
	var b strings.Builder
	seen := map[int]bool{}
	var rec func(d *Delta)
	rec = func(d *Delta) {
		if d == nil {
			b.WriteString("<nil>")
			return
		}
		b.WriteString(d.Kind.String())
		switch d.Kind {
		case DZero:
			return
		case DInput:
			fmt.Fprintf(&b, " %s", d.Name)
			return
		case DShare:
			fmt.Fprintf(&b, " %d", d.ID)
			if seen[d.ID] {
				return
			}
			seen[d.ID] = true
		case DScale:
			fmt.Fprintf(&b, " (%v)", d.Factor)
		case DIndex:
			b.WriteString(" [")
			for k, e := range d.Ix {
				if k > 0 {
					b.WriteString(", ")
				}
				b.WriteString(e.String())
			}
			b.WriteString("]")
		case DGather, DScatter:
			fmt.Fprintf(&b, " %v (%v)", []int(d.Shape), d.Fn)
		case DReplicate:
			fmt.Fprintf(&b, " %d", d.N)
		case DTranspose:
			fmt.Fprintf(&b, " %v", d.Perm)
		case DReshape:
			fmt.Fprintf(&b, " %v", []int(d.Shape))
		case DMatMulL, DMatMulR:
			fmt.Fprintf(&b, " (%v)", d.Other)
		case DCast:
			fmt.Fprintf(&b, " %v", d.Type.Dtype)
		case DSelect:
			fmt.Fprintf(&b, " (%v)", d.Cond)
		}
		for _, k := range d.kids() {
			b.WriteString(" (")
			rec(k)
			b.WriteString(")")
		}
	}
	rec(d)
	return b.String()
}

func (d *Delta) kids() []*Delta {
	switch d.Kind {
	case DFromVector:
		return d.Elems
	case DAdd, DSelect:
		return []*Delta{d.A, d.B}
	case DZero, DInput:
		return nil
	}
	return []*Delta{d.A}
}

// deltaBuilder makes Delta nodes and owns the ID counter of one differentiation (no global
// state). The smart constructors drop Zero operands; op wraps every non-trivial result in a
// Share with a fresh ID, as Figs. 14–15 do.
type deltaBuilder struct {
	nextID int
}

func zeroDelta(t core.Type) *Delta { return &Delta{Kind: DZero, Type: t} }

// share wraps d in a Share with a fresh ID unless it is Zero, an Input or already a Share.
func (g *deltaBuilder) share(d *Delta) *Delta {
	switch d.Kind {
	case DZero, DInput, DShare:
		return d
	}
	g.nextID++
	return &Delta{Kind: DShare, Type: d.Type, ID: g.nextID, A: d}
}

func (g *deltaBuilder) add(a, b *Delta) *Delta {
	if a.IsZero() {
		return b
	}
	if b.IsZero() {
		return a
	}
	return &Delta{Kind: DAdd, Type: a.Type, A: a, B: b}
}

func (g *deltaBuilder) neg(a *Delta) *Delta {
	if a.IsZero() {
		return a
	}
	return &Delta{Kind: DNeg, Type: a.Type, A: a}
}

func (g *deltaBuilder) scale(f core.Term, a *Delta) *Delta {
	if a.IsZero() {
		return a
	}
	return &Delta{Kind: DScale, Type: a.Type, Factor: f, A: a}
}

// unary makes a one-operand constructor whose result has type t; Zero stays Zero.
func (g *deltaBuilder) unary(kind DeltaKind, t core.Type, a *Delta) *Delta {
	if a.IsZero() {
		return zeroDelta(t)
	}
	return &Delta{Kind: kind, Type: t, A: a}
}
