package opgraphs

import (
	"fmt"
	"hash"
	"hash/fnv"

	"github.com/chewxy/hm"
	"github.com/pkg/errors"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// UserOp is the common part of a user-defined Gorgonia op — an op outside bulkad's table,
// which bulkad.Grad refuses, naming it: an elementwise op of Inputs arguments of one type
// and shape. A test embeds it in a type that adds Do (and DiffWRT and SymDiff for
// gorgonia.Grad).
type UserOp struct {
	Name   string
	Inputs int
}

// Arity is the number of inputs.
func (o UserOp) Arity() int { return o.Inputs }

// Type is a → … → a: every input and the output have one type.
func (o UserOp) Type() hm.Type {
	a := hm.TypeVariable('a')
	ts := make([]hm.Type, o.Inputs+1)
	for i := range ts {
		ts[i] = a
	}
	return hm.NewFnType(ts...)
}

// InferShape is the first input's shape.
func (o UserOp) InferShape(ds ...G.DimSizer) (tensor.Shape, error) {
	s, ok := ds[0].(tensor.Shape)
	if !ok {
		return nil, errors.Errorf("%s: no shape", o.Name)
	}
	return s.Clone(), nil
}

// ReturnsPtr is false: Do returns a new value.
func (o UserOp) ReturnsPtr() bool { return false }

// CallsExtern is false: the op runs on the CPU.
func (o UserOp) CallsExtern() bool { return false }

// OverwritesInput is -1: no input is overwritten.
func (o UserOp) OverwritesInput() int { return -1 }

// WriteHash writes the name.
func (o UserOp) WriteHash(h hash.Hash) { fmt.Fprint(h, o.Name) }

// Hashcode is the FNV-1a hash of the name.
func (o UserOp) Hashcode() uint32 {
	h := fnv.New32a()
	o.WriteHash(h)
	return h.Sum32()
}

// String is the name.
func (o UserOp) String() string { return o.Name }
