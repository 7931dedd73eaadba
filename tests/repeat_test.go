package tests

import (
	"testing"

	"github.com/bulkad/bulkad"
	G "gorgonia.org/gorgonia"
)

// TestGradRepeatedBindDual: calling Grad again for the same cost, in any order and with any
// other wrt nodes, registers nothing new: with BindDualValues, w.Grad() is ∂cost/∂w (central
// differences) whatever the sequence, and no node is added. Gradients of another cost add up
// (Σ w² adds 2w, hand derivation).
func TestGradRepeatedBindDual(t *testing.T) {
	g0, cost0, wrt0 := gradAllGraph()
	fd, _ := finiteDiff(t, built{g: g0, cost: cost0, wrt: wrt0[:1]}, 1e-6, 100)
	cases := []struct {
		seq       string // 1: Grad(cost, w); 2: Grad(cost, w, b); a: GradAll(cost, w, b); s: Grad(Σ w², w)
		plusTwoW  bool
		sameNodes bool // as many nodes as after the first call
	}{
		{"1", false, true}, {"11", false, true}, {"21", false, true}, {"12", false, false},
		{"22", false, true}, {"111", false, true}, {"a1", false, true}, {"1s", true, false}, {"s11", true, false},
	}
	for _, c := range cases {
		t.Run(c.seq, func(t *testing.T) {
			g, cost, wrt := gradAllGraph()
			w := wrt[0]
			sq := G.Must(G.Sum(G.Must(G.Square(w))))
			var first int
			for k, step := range c.seq {
				var err error
				switch step {
				case '1':
					_, err = bulkad.Grad(cost, w)
				case '2':
					_, err = bulkad.Grad(cost, wrt...)
				case 'a':
					_, err = bulkad.GradAll(cost, wrt...)
				case 's':
					_, err = bulkad.Grad(sq, w)
				}
				if err != nil {
					t.Fatal(err)
				}
				if k == 0 {
					first = len(g.AllNodes())
				}
			}
			if n := len(g.AllNodes()); c.sameNodes && n != first {
				t.Errorf("%d nodes after the first call, %d after all", first, n)
			}
			mustRunOnce(t, g, G.Nodes{w})
			gv, err := w.Grad()
			if err != nil {
				t.Fatal(err)
			}
			want := append([]float64(nil), fd[0]...)
			if c.plusTwoW {
				for i, v := range valuesOf(w.Value()) {
					want[i] += 2 * v
				}
			}
			if d := maxRelDiff([][]float64{valuesOf(gv)}, [][]float64{want}); d > 1e-6 {
				t.Errorf("w.Grad() = %v, want %v", valuesOf(gv), want)
			}
		})
	}
}
