package models

import (
	"fmt"
	"math"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

func costOf(t *testing.T, m *Model) float64 {
	t.Helper()
	vm := G.NewTapeMachine(m.G)
	defer vm.Close()
	if err := vm.RunAll(); err != nil {
		t.Fatalf("%s: %v", m.Name, err)
	}
	switch v := m.Cost.Value().Data().(type) {
	case float64:
		return v
	case float32:
		return float64(v)
	}
	t.Fatalf("%s: cost value %v", m.Name, m.Cost.Value())
	return 0
}

// TestZooRunsAndIsDeterministic: every model builds in both dtypes, runs to a finite cost,
// has wrt and input nodes, and the same seed gives the same cost (dropout aside).
func TestZooRunsAndIsDeterministic(t *testing.T) {
	for _, dt := range []tensor.Dtype{tensor.Float64, tensor.Float32} {
		a, err := Zoo(dt, 3)
		if err != nil {
			t.Fatal(err)
		}
		b, err := Zoo(dt, 3)
		if err != nil {
			t.Fatal(err)
		}
		c, err := Zoo(dt, 4)
		if err != nil {
			t.Fatal(err)
		}
		for i := range a {
			label := fmt.Sprintf("%s/%v", a[i].Name, dt)
			if len(a[i].Wrt) == 0 || len(a[i].Inputs) == 0 || !a[i].Cost.IsScalar() || a[i].Cost.Dtype() != dt {
				t.Errorf("%s: %d wrt, %d inputs, cost %v %v", label, len(a[i].Wrt), len(a[i].Inputs), a[i].Cost.Shape(), a[i].Cost.Dtype())
			}
			ca, cb, cc := costOf(t, a[i]), costOf(t, b[i]), costOf(t, c[i])
			if math.IsNaN(ca) || math.IsInf(ca, 0) {
				t.Errorf("%s: cost %v", label, ca)
			}
			if a[i].Name == "convnet" {
				continue // dropout draws its own mask
			}
			if ca != cb {
				t.Errorf("%s: same seed, costs %v and %v", label, ca, cb)
			}
			if ca == cc {
				t.Errorf("%s: different seeds, same cost %v", label, ca)
			}
		}
	}
}

func TestMNISTSizes(t *testing.T) {
	m, err := MLP(tensor.Float32, 2, []int{784, 512, 10}, 1)
	if err != nil {
		t.Fatal(err)
	}
	if s := m.Wrt[0].Shape(); s[0] != 784 || s[1] != 512 || m.Out.Shape()[1] != 10 {
		t.Errorf("shapes: w0 %v, out %v", s, m.Out.Shape())
	}
	costOf(t, m)
}

func TestBadArguments(t *testing.T) {
	if _, err := MLP(tensor.Int, 2, []int{3, 2}, 1); err == nil {
		t.Error("int dtype: no error")
	}
	if _, err := MLP(tensor.Float64, 2, []int{3}, 1); err == nil {
		t.Error("one size: no error")
	}
	if _, err := ConvNet(tensor.Float64, 1, 5, 6, 2, 3, 0, 1); err == nil {
		t.Error("odd image: no error")
	}
}

func TestConvNetMNIST(t *testing.T) {
	m, err := ConvNetMNIST(tensor.Float32, 2, [4]float64{0.2, 0.2, 0.2, 0.55}, 1)
	if err != nil {
		t.Fatal(err)
	}
	if c := costOf(t, m); math.IsNaN(c) || c <= 0 {
		t.Errorf("cost %v", c)
	}
	if s := m.Out.Shape(); s[0] != 2 || s[1] != 10 {
		t.Errorf("output shape %v", s)
	}
}
