package machine

import (
	"fmt"
	"math"
	"testing"

	"github.com/bulkad/bulkad/examples/models"
	kern "github.com/bulkad/bulkad/kernel"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// leanZoo is the zoo with the stacked CNNs, whose Gorgonia-built layers have the most
// intermediate values.
func leanZoo() []struct {
	name string
	mk   build
} {
	return append(zoo[:len(zoo):len(zoo)], []struct {
		name string
		mk   build
	}{
		{"resnet", func(dt tensor.Dtype) (*models.Model, error) { return models.ResNet(dt, 2, 8, 4, 1, 3, 5) }}, // 8×8 maps: the transposed col2im
		{"mobilenet", func(dt tensor.Dtype) (*models.Model, error) { return models.MobileNet(dt, 2, 6, 4, 1, 3, 6) }},
	}...)
}

// TestLean: with Lean(cost) a run gives the cost and every learnable's gradient (dual values)
// bit for bit as the machine filling every value does, fills the kept node and the gradient
// nodes, and leaves the value of every other node with an op unset (they would all be set
// without Lean), in both float dtypes.
func TestLean(t *testing.T) {
	for _, z := range leanZoo() {
		for _, d := range dtypes {
			t.Run(fmt.Sprintf("%s %v", z.name, d.dt), func(t *testing.T) {
				full, err := z.mk(d.dt)
				if err != nil {
					t.Fatal(err)
				}
				lean, err := z.mk(d.dt)
				if err != nil {
					t.Fatal(err)
				}
				gradWith(t, full, false)
				gradWith(t, lean, false)
				vf, err := New(full.G, BindDualValues(full.Wrt...))
				if err != nil {
					t.Fatal(err)
				}
				vl, err := New(lean.G, BindDualValues(lean.Wrt...), Lean(lean.Cost))
				if err != nil {
					t.Fatal(err)
				}
				if err := vf.RunAll(); err != nil {
					t.Fatal(err)
				}
				if err := vl.RunAll(); err != nil {
					t.Fatal(err)
				}
				sameBits(t, "cost", floats(t, lean.Cost.Value()), floats(t, full.Cost.Value()))
				for i, w := range lean.Wrt {
					gl, err := w.Grad()
					if err != nil {
						t.Fatal(err)
					}
					gf, err := full.Wrt[i].Grad()
					if err != nil {
						t.Fatal(err)
					}
					sameBits(t, "gradient of "+w.Name(), floats(t, gl), floats(t, gf))
				}
				unset := 0
				fn := full.G.AllNodes()
				for i, n := range lean.G.AllNodes() {
					if n.Op() == nil || isConstant(n.Op()) || isStatement(n) || isPlanned(n.Op()) || isAux(n.Op()) {
						continue
					}
					switch {
					case n == lean.Cost || len(n.DerivOf()) > 0:
						if n.Value() == nil {
							t.Errorf("node %v (kept or a gradient) has no value", n)
						}
					case n.Value() == nil:
						unset++
						if fn[i].Value() == nil {
							t.Errorf("node %v has no value without Lean either", fn[i])
						}
					}
				}
				if unset == 0 {
					t.Errorf("Lean set the value of every node")
				}
			})
		}
	}
}

// sameBits fails unless got and want are equal element by element to the bit.
func sameBits(t *testing.T, what string, got, want []float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d elements, want %d", what, len(got), len(want))
	}
	for i := range want {
		if math.Float64bits(got[i]) != math.Float64bits(want[i]) {
			t.Fatalf("%s[%d] = %v, without Lean %v", what, i, got[i], want[i])
		}
	}
}

// TestLeanFiniteDifferences: a lean machine's gradients of a ResNet block stack and of a
// MobileNet (float64) agree with central finite differences of the cost, run on the same lean
// machine. On 9×9 maps the ResNet's input gradients (col2im) run as products of the filter
// with the cotangent's windows (raise's windowCol2im), the MobileNet's depthwise forward
// sums and input and filter gradients with the channels as vector lanes
// (kern.DepthwiseWindows), and the ResNet's forward convolutions and filter gradients read
// their window matrices in place (kern.WindowMatMul): the test checks that they do, so the
// differences check them too.
func TestLeanFiniteDifferences(t *testing.T) {
	cases := []struct {
		name string
		mk   func() (*models.Model, error)
		uses func(k kern.Kernel) bool
	}{
		{"resnet input gradients", func() (*models.Model, error) { return models.ResNet(G.Float64, 2, 9, 3, 1, 3, 9) }, func(k kern.Kernel) bool {
			wk, ok := k.(*kern.WindowMatMul)
			return ok && wk.OutJ != nil
		}},
		{"resnet forward windows", func() (*models.Model, error) { return models.ResNet(G.Float64, 2, 9, 3, 1, 3, 9) }, func(k kern.Kernel) bool {
			wk, ok := k.(*kern.WindowMatMul)
			return ok && !wk.Cols
		}},
		{"resnet filter gradients", func() (*models.Model, error) { return models.ResNet(G.Float64, 2, 9, 3, 1, 3, 9) }, func(k kern.Kernel) bool {
			wk, ok := k.(*kern.WindowMatMul)
			return ok && wk.Cols
		}},
		// the filter gradient reading the padded copy of x the forward product made
		{"resnet shared padding", func() (*models.Model, error) { return models.ResNet(G.Float64, 2, 9, 3, 1, 3, 9) }, func(k kern.Kernel) bool {
			wk, ok := k.(*kern.WindowMatMul)
			return ok && wk.Cols && wk.SharesStaging()
		}},
		// the input gradients of the block's two convolutions padding in one buffer
		{"resnet shared input-gradient padding", func() (*models.Model, error) { return models.ResNet(G.Float64, 2, 9, 3, 1, 3, 9) }, func(k kern.Kernel) bool {
			wk, ok := k.(*kern.WindowMatMul)
			return ok && wk.OutJ != nil && wk.SharesPadding()
		}},
		{"mobilenet", func() (*models.Model, error) { return models.MobileNet(G.Float64, 2, 9, 4, 1, 3, 9) }, func(k kern.Kernel) bool {
			dk, ok := k.(*kern.DepthwiseWindows)
			return ok && dk.Input
		}},
		{"mobilenet filter gradients", func() (*models.Model, error) { return models.MobileNet(G.Float64, 2, 9, 4, 1, 3, 9) }, func(k kern.Kernel) bool {
			dk, ok := k.(*kern.DepthwiseWindows)
			return ok && dk.Filter
		}},
		{"mobilenet forward depthwise", func() (*models.Model, error) { return models.MobileNet(G.Float64, 2, 9, 4, 1, 3, 9) }, func(k kern.Kernel) bool {
			dk, ok := k.(*kern.DepthwiseWindows)
			return ok && !dk.Filter
		}},
		// the filter gradient reading the copy of x the forward staged
		{"mobilenet shared staging", func() (*models.Model, error) { return models.MobileNet(G.Float64, 2, 9, 4, 1, 3, 9) }, func(k kern.Kernel) bool {
			dk, ok := k.(*kern.DepthwiseWindows)
			return ok && dk.Filter && dk.SharesStaging()
		}},
		// batch norms over 16·16·16·32 elements: their element-wise trees and sums fused
		{"mobilenet fused element-wise trees", func() (*models.Model, error) { return models.MobileNet(G.Float64, 16, 16, 32, 1, 3, 9) }, func(k kern.Kernel) bool {
			fk, ok := k.(*kern.Fused)
			return ok && !fk.Sums()
		}},
		{"mobilenet fused sums", func() (*models.Model, error) { return models.MobileNet(G.Float64, 16, 16, 32, 1, 3, 9) }, func(k kern.Kernel) bool {
			fk, ok := k.(*kern.Fused)
			return ok && fk.Sums()
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m, err := c.mk()
			if err != nil {
				t.Fatal(err)
			}
			gradWith(t, m, false)
			vm, err := New(m.G, BindDualValues(m.Wrt...), Lean(m.Cost))
			if err != nil {
				t.Fatal(err)
			}
			used := false
			for _, pr := range vm.plans {
				for i := 0; i < pr.kp.Steps(); i++ {
					used = used || c.uses(pr.kp.StepKernel(i))
				}
			}
			if !used {
				t.Errorf("the lean plan does not run the kernel the test is meant to check")
			}
			checkFiniteDifferences(t, m, vm, 1e-6)
		})
	}
}
