package adapter

import (
	"fmt"
	"testing"

	"github.com/bulkad/bulkad/examples/opgraphs"
	"gorgonia.org/tensor"
)

// TestOpgraphs: every single-op graph of examples/opgraphs (the gradient-check cases)
// translates, and its cost evaluates to the TapeMachine's value in both dtypes.
func TestOpgraphs(t *testing.T) {
	for _, c := range opgraphs.Cases() {
		for _, dt := range []tensor.Dtype{tensor.Float64, tensor.Float32} {
			label := fmt.Sprintf("%s/%v", c.Name, dt)
			gr, err := c.Build(dt, 11)
			if err != nil {
				t.Errorf("%s: build: %v", label, err)
				continue
			}
			if err := runGraph(gr.G); err != nil {
				t.Errorf("%s: gorgonia: %v", label, err)
				continue
			}
			checkCost(t, label, gr.Cost, gr.Wrt)
		}
	}
}
