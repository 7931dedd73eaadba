package vulkan

import (
	"testing"

	"github.com/bulkad/bulkad/core"
)

// TestOpNamesInFacts: the shaders' op names are core's (core's op-facts table), so a
// kernel that asks the device for an operation by core's name finds exactly that operation;
// an operation the table does not know cannot hide here.
func TestOpNamesInFacts(t *testing.T) {
	for _, name := range unaryOps {
		op, ok := core.ParseUnOp(name)
		if !ok {
			t.Errorf("unary shader op %q is not a core operation", name)
			continue
		}
		if !op.Facts().Dtypes.Has(core.Float32) {
			t.Errorf("unary shader op %q: core's table does not accept f32", name)
		}
	}
	for _, b := range binaryOps {
		op, ok := core.ParseBinOp(b.sym)
		if !ok || op.Word() != b.word {
			t.Errorf("binary shader op %q/%q: core has %v (%v)", b.sym, b.word, op, ok)
		}
	}
}
