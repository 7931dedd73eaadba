package adapter

import (
	"fmt"
	"testing"

	"github.com/bulkad/bulkad/core"
	"github.com/bulkad/bulkad/examples/models"
	"gorgonia.org/tensor"
)

// deepSizes is [w, w, …, w] for an MLP with the given number of layers.
func deepSizes(layers, w int) []int {
	s := make([]int, layers+1)
	for i := range s {
		s[i] = w
	}
	return s
}

// TestDeepMLPTranslationSize: a 1000-layer MLP translates (no recursion limits) into one let
// per op node and a program whose size is proportional to the graph's.
func TestDeepMLPTranslationSize(t *testing.T) {
	layers := 1000
	if testing.Short() {
		layers = 200
	}
	m, err := models.MLP(tensor.Float64, 2, deepSizes(layers, 4), 1)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := Translate(m.Cost, m.Wrt...)
	if err != nil {
		t.Fatal(err)
	}
	ops := reachableOps(m.Cost)
	if len(tr.Lets) != ops {
		t.Errorf("%d lets for %d op nodes", len(tr.Lets), ops)
	}
	if size := core.Size(tr.Program.Body); size > 40*ops {
		t.Errorf("program has %d distinct terms for %d op nodes: not linear", size, ops)
	}
	// core.Check is quadratic on long let chains: check a 100-layer prefix-sized model only.
	small, err := models.MLP(tensor.Float64, 2, deepSizes(100, 4), 1)
	if err != nil {
		t.Fatal(err)
	}
	str, err := Translate(small.Cost, small.Wrt...)
	if err != nil {
		t.Fatal(err)
	}
	if err := core.Check(str.Program); err != nil {
		t.Error(err)
	}
}

// BenchmarkTranslateZoo measures Translate on every model of the zoo.
func BenchmarkTranslateZoo(b *testing.B) {
	zoo, err := models.Zoo(tensor.Float64, 1)
	if err != nil {
		b.Fatal(err)
	}
	mnist, err := models.MLP(tensor.Float64, 128, []int{784, 512, 10}, 1)
	if err != nil {
		b.Fatal(err)
	}
	zoo = append(zoo, mnist)
	for _, m := range zoo {
		m := m
		name := m.Name
		if m == mnist {
			name = "mlp784-512-10"
		}
		b.Run(name, func(b *testing.B) {
			nodes := len(m.G.AllNodes())
			for i := 0; i < b.N; i++ {
				if _, err := Translate(m.Cost, m.Wrt...); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(nodes), "nodes")
		})
	}
}

// BenchmarkTranslateDeepMLP measures Translate on MLPs of 10 to 1000 layers (width 4): the
// time per node (ns/node) must stay flat.
func BenchmarkTranslateDeepMLP(b *testing.B) {
	for _, layers := range []int{10, 100, 1000} {
		m, err := models.MLP(tensor.Float64, 2, deepSizes(layers, 4), 1)
		if err != nil {
			b.Fatal(err)
		}
		nodes := len(m.G.AllNodes())
		b.Run(fmt.Sprintf("layers=%d", layers), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				if _, err := Translate(m.Cost, m.Wrt...); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(nodes), "nodes")
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(nodes), "ns/node")
		})
	}
}
