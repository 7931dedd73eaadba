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

// deepCtors are the stacked-block models at tiny sizes with k blocks (layers, steps).
func deepCtors(dt tensor.Dtype, k int, seed int64) map[string]func() (*Model, error) {
	return map[string]func() (*Model, error){
		"resnet":      func() (*Model, error) { return ResNet(dt, 2, 4, 3, k, 3, seed) },
		"mobilenet":   func() (*Model, error) { return MobileNet(dt, 2, 4, 3, k, 3, seed) },
		"transformer": func() (*Model, error) { return Transformer(dt, 2, 3, 4, 2, 6, k, seed) },
		"lstm-seq":    func() (*Model, error) { return LSTMSeq(dt, 2, 3, 4, k, seed) },
	}
}

// TestDeepModels: the stacked-block models build in both dtypes, run to a finite cost,
// are deterministic per seed, and their graphs grow by the same number of nodes and
// learnables with every block.
func TestDeepModels(t *testing.T) {
	for _, dt := range []tensor.Dtype{tensor.Float64, tensor.Float32} {
		for name := range deepCtors(dt, 1, 1) {
			var nodes, wrt []int
			for k := 1; k <= 3; k++ {
				a, err := deepCtors(dt, k, 1)[name]()
				if err != nil {
					t.Fatalf("%s/%v/%d: %v", name, dt, k, err)
				}
				b, err := deepCtors(dt, k, 1)[name]()
				if err != nil {
					t.Fatal(err)
				}
				c, err := deepCtors(dt, k, 2)[name]()
				if err != nil {
					t.Fatal(err)
				}
				ca, cb, cc := costOf(t, a), costOf(t, b), costOf(t, c)
				if math.IsNaN(ca) || math.IsInf(ca, 0) || ca != cb || ca == cc {
					t.Errorf("%s/%v/%d: costs %v, %v (same seed), %v (other seed)", name, dt, k, ca, cb, cc)
				}
				if a.Cost.Dtype() != dt || !a.Cost.IsScalar() {
					t.Errorf("%s/%v: cost %v %v", name, dt, a.Cost.Shape(), a.Cost.Dtype())
				}
				nodes = append(nodes, len(a.G.AllNodes()))
				wrt = append(wrt, len(a.Wrt))
			}
			if nodes[2]-nodes[1] != nodes[1]-nodes[0] || nodes[1] <= nodes[0] {
				t.Errorf("%s/%v: nodes %v for 1, 2, 3 blocks: not growing by a constant", name, dt, nodes)
			}
			if name != "lstm-seq" && (wrt[2]-wrt[1] != wrt[1]-wrt[0] || wrt[1] <= wrt[0]) {
				t.Errorf("%s/%v: learnables %v for 1, 2, 3 blocks", name, dt, wrt)
			}
		}
	}
}

// TestGlobalPool: the models' global average pooling (head) is the mean over each image's
// pixels, checked against a loop on an image batch of 4×4 pixels (a shape on which
// gorgonia.Mean(x, 2, 3) is wrong).
func TestGlobalPool(t *testing.T) {
	b, err := newBuilder(G.Float64, 1)
	if err != nil {
		t.Fatal(err)
	}
	xv := b.values(1, 2, 3, 4, 4)
	x := b.node("x", xv, 2, 3, 4, 4)
	y := b.node("y", b.oneHot(2, 5), 2, 5)
	_, logits, wrt := b.head(x, y, 5)
	if b.err != nil {
		t.Fatal(b.err)
	}
	vm := G.NewTapeMachine(b.g)
	defer vm.Close()
	if err := vm.RunAll(); err != nil {
		t.Fatal(err)
	}
	xs := xv.Data().([]float64)
	w := wrt[0].Value().Data().([]float64)
	bias := wrt[1].Value().Data().([]float64)
	got := logits.Value().Data().([]float64)
	for n := 0; n < 2; n++ {
		for k := 0; k < 5; k++ {
			want := bias[k]
			for c := 0; c < 3; c++ {
				var s float64
				for p := 0; p < 16; p++ {
					s += xs[(n*3+c)*16+p]
				}
				want += s / 16 * w[c*5+k]
			}
			if math.Abs(got[n*5+k]-want) > 1e-12 {
				t.Errorf("logit [%d,%d] = %v, want %v", n, k, got[n*5+k], want)
			}
		}
	}
}

func TestDeepBadArguments(t *testing.T) {
	if _, err := Transformer(tensor.Float64, 1, 4, 6, 4, 8, 1, 1); err == nil {
		t.Error("width not divisible by heads: no error")
	}
	if _, err := ResNet(tensor.Float64, 1, 4, 3, 0, 3, 1); err == nil {
		t.Error("zero blocks: no error")
	}
	if _, err := LSTMSeq(tensor.Int, 1, 2, 3, 2, 1); err == nil {
		t.Error("int dtype: no error")
	}
}
