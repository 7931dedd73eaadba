package tests

import (
	"testing"

	"github.com/bulkad/bulkad/examples/opgraphs"
	"gorgonia.org/tensor"
)

const seed = 20261122

func caseCtor(c opgraphs.Case) ctor {
	return func() (built, error) {
		gr, err := c.Build(tensor.Float64, seed)
		if err != nil {
			return built{}, err
		}
		return built{g: gr.G, cost: gr.Cost, wrt: gr.Wrt}, nil
	}
}

// TestEveryOp runs the acceptance checks on the single-op graph of every operation the
// adapter translates (examples/opgraphs).
func TestEveryOp(t *testing.T) {
	for _, c := range opgraphs.Cases() {
		c := c
		t.Run(c.Name, func(t *testing.T) {
			checkAll(t, caseCtor(c), c.GorgoniaWrong)
		})
	}
}

// The operations whose gradient Gorgonia v0.9.18 gets wrong or cannot compute: bulkad matches
// finite differences (asserted by checkAll) and Gorgonia does not (asserted as well).
func gorgoniaWrong(t *testing.T, name string) {
	c, ok := opgraphs.Lookup(name)
	if !ok {
		t.Fatalf("no op case %q", name)
	}
	if !c.GorgoniaWrong {
		t.Fatalf("case %q is not marked as one Gorgonia gets wrong", name)
	}
	checkAll(t, caseCtor(c), true)
}

func TestLog2GorgoniaWrongBulkadMatchesFD(t *testing.T)          { gorgoniaWrong(t, "log2") }
func TestInverseSqrtGorgoniaWrongBulkadMatchesFD(t *testing.T)   { gorgoniaWrong(t, "inverseSqrt") }
func TestAveragePool2DGorgoniaWrongBulkadMatchesFD(t *testing.T) { gorgoniaWrong(t, "averagePool2D") }
func TestOuterProdGorgoniaFailsBulkadMatchesFD(t *testing.T)     { gorgoniaWrong(t, "outerProd") }
func TestGlobalAveragePool2DGorgoniaFailsBulkadMatchesFD(t *testing.T) {
	gorgoniaWrong(t, "globalAveragePool2D")
}
