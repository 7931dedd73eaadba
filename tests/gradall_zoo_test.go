package tests

import (
	"testing"

	"github.com/bulkad/bulkad"
	"github.com/bulkad/bulkad/adapter"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// TestGradAllZoo: after GradAll, every intermediate node of every zoo model has a gradient
// equal to the one gorgonia.Grad gives it on an identical graph (Gorgonia is right on the
// zoo's ops; its values are read under TraceExec so no register reuse can clobber them).
func TestGradAllZoo(t *testing.T) {
	for _, z := range zoo(tensor.Float64) {
		m1, _ := z.mk()
		path, _ := adapter.Path(m1.Cost, m1.Wrt...)
		if _, err := bulkad.GradAll(m1.Cost, m1.Wrt...); err != nil {
			t.Errorf("%s: %v", z.name, err)
			continue
		}
		vm1, err := runOnce(m1.G, m1.Wrt)
		if err != nil {
			t.Errorf("%s: %v", z.name, err)
			continue
		}
		m2, _ := z.mk()
		if _, err := G.Grad(m2.Cost, m2.Wrt...); err != nil {
			t.Errorf("%s gorgonia: %v", z.name, err)
			continue
		}
		vm2, err := runOnce(m2.G, m2.Wrt, G.TraceExec())
		if err != nil {
			t.Errorf("%s gorgonia run: %v", z.name, err)
			continue
		}
		all2 := m2.G.AllNodes()
		bad, compared := 0, 0
		for _, n := range path {
			got, err := n.Grad()
			if err != nil {
				t.Errorf("%s %v: %v", z.name, n, err)
				continue
			}
			want, err := all2[n.ID()].Grad()
			if err != nil {
				continue
			}
			compared++
			if d := maxRelDiff([][]float64{valuesOf(got)}, [][]float64{valuesOf(want)}); d > 1e-9 {
				bad++
				t.Errorf("%s %v: Grad() differs from Gorgonia's by %g", z.name, n, d)
			}
		}
		if compared < len(path)*3/4 {
			t.Errorf("%s: only %d of %d path nodes compared", z.name, compared, len(path))
		}
		vm1.Close()
		vm2.Close()
	}
}
