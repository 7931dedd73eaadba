package machine

import (
	"fmt"
	"hash"

	"github.com/chewxy/hm"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// opaqueOp is an op the adapter has no translation for (the identity).
type opaqueOp struct{}

func (opaqueOp) Arity() int { return 1 }
func (opaqueOp) Type() hm.Type {
	a := hm.TypeVariable('a')
	return hm.NewFnType(a, a)
}
func (opaqueOp) InferShape(ds ...G.DimSizer) (tensor.Shape, error) {
	return ds[0].(tensor.Shape).Clone(), nil
}
func (opaqueOp) Do(vs ...G.Value) (G.Value, error) { return vs[0], nil }
func (opaqueOp) ReturnsPtr() bool                  { return false }
func (opaqueOp) CallsExtern() bool                 { return false }
func (opaqueOp) OverwritesInput() int              { return -1 }
func (opaqueOp) WriteHash(h hash.Hash)             { fmt.Fprint(h, "opaque") }
func (opaqueOp) Hashcode() uint32                  { return 42 }
func (opaqueOp) String() string                    { return "opaque" }
