package bulkad_test

import (
	"math"
	"os"
	"testing"

	"github.com/bulkad/bulkad"
	"github.com/bulkad/bulkad/examples/models"
	"github.com/bulkad/bulkad/raise"
	"github.com/bulkad/bulkad/vulkan"
	"github.com/bulkad/bulkad/vulkan/vulkantest"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// vulkanDevice returns the process-wide device, or skips (fails with VULKAN_REQUIRED=1).
func vulkanDevice(t testing.TB) *vulkan.Device {
	t.Helper()
	vulkantest.NoShaderCache()
	d, err := bulkad.VulkanDevice()
	if err != nil {
		vulkantest.NoDevice(t, err)
	}
	return d
}

// gradStep builds a model, differentiates it, raises the gradient with v (nil: CPU), runs
// one training step's forward and backward pass on a TapeMachine and returns the gradients.
func gradStep(t *testing.T, build func() (*models.Model, error), v *raise.Vulkan) [][]float32 {
	t.Helper()
	m, err := build()
	if err != nil {
		t.Fatal(err)
	}
	d, err := bulkad.Differentiate(m.Cost, m.Wrt...)
	if err != nil {
		t.Fatal(err)
	}
	grads, err := d.RaiseOn(v)
	if err != nil {
		t.Fatal(err)
	}
	runGraph(t, m.G, gorgonia.BindDualValues(m.Wrt...))
	out := make([][]float32, len(grads))
	for i, g := range grads {
		dd, ok := g.Value().(*tensor.Dense)
		if !ok {
			out[i] = []float32{float32(g.Value().Data().(float32))}
			continue
		}
		out[i] = append([]float32(nil), dd.Data().([]float32)...)
	}
	return out
}

// relErr is max |a-b| / max |b| over one gradient.
func relErr(a, b []float32) float64 {
	var d, s float64
	for i := range b {
		d = math.Max(d, math.Abs(float64(a[i])-float64(b[i])))
		s = math.Max(s, math.Abs(float64(b[i])))
	}
	if s == 0 {
		return d
	}
	return d / s
}

// TestVulkanTrainingStep is the end-to-end check: a training step of the MLP and of the
// convnet (float32) with every supported gradient kernel forced onto the Vulkan device gives
// the CPU path's gradients within 1e-4 relative, and the device really ran kernels.
func TestVulkanTrainingStep(t *testing.T) {
	dev := vulkanDevice(t)
	cases := []struct {
		name  string
		build func() (*models.Model, error)
	}{
		{"mlp", func() (*models.Model, error) { return models.MLP(gorgonia.Float32, 16, []int{64, 32, 10}, 7) }},
		{"convnet", func() (*models.Model, error) {
			return models.ConvNet(gorgonia.Float32, 4, 8, 8, 4, 5, 0, 7)
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cpu := gradStep(t, c.build, nil)
			before := dev.Timings().Calls
			v := &raise.Vulkan{Device: dev, Force: true, Report: func(err error) { t.Errorf("device error: %v", err) }}
			gpu := gradStep(t, c.build, v)
			if calls := dev.Timings().Calls - before; calls == 0 || v.Calls() == 0 {
				t.Fatalf("no kernel ran on the device (device dispatches %d, raise calls %d)", calls, v.Calls())
			}
			if v.Fallbacks() != 0 {
				t.Errorf("%d device calls failed: %v", v.Fallbacks(), v.Err())
			}
			t.Logf("%s: %d kernel calls on %s", c.name, v.Calls(), dev.Name())
			for i := range cpu {
				if len(cpu[i]) != len(gpu[i]) {
					t.Fatalf("gradient %d: %d vs %d elements", i, len(gpu[i]), len(cpu[i]))
				}
				if e := relErr(gpu[i], cpu[i]); !(e <= 1e-4) {
					t.Errorf("gradient %d: Vulkan differs from the CPU by %g relative (> 1e-4)", i, e)
				}
			}
		})
	}
}

// TestVulkanEnvironment checks the switch Grad reads: BULKAD_VULKAN=force raises onto the
// device, 0 onto the CPU, and a bad value is an error that leaves the graph unchanged.
func TestVulkanEnvironment(t *testing.T) {
	vulkanDevice(t)
	build := func() *models.Model {
		m, err := models.MLP(gorgonia.Float32, 4, []int{6, 5, 3}, 1)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	runGrad := func(m *models.Model) {
		t.Helper()
		if _, err := bulkad.Grad(m.Cost, m.Wrt...); err != nil {
			t.Fatal(err)
		}
		runGraph(t, m.G)
	}

	t.Setenv(bulkad.VulkanEnv, "force")
	v, err := bulkad.CurrentVulkan()
	if err != nil || v == nil || !v.Force {
		t.Fatalf("BULKAD_VULKAN=force: CurrentVulkan = %v, %v", v, err)
	}
	before := v.Calls()
	runGrad(build())
	if v.Calls() == before {
		t.Errorf("BULKAD_VULKAN=force: no kernel ran on the device")
	}

	t.Setenv(bulkad.VulkanEnv, "0")
	before = v.Calls()
	runGrad(build())
	if v.Calls() != before {
		t.Errorf("BULKAD_VULKAN=0: %d kernels ran on the device", v.Calls()-before)
	}

	t.Setenv(bulkad.VulkanEnv, "yes")
	m := build()
	n := len(m.G.AllNodes())
	if _, err := bulkad.Grad(m.Cost, m.Wrt...); err == nil {
		t.Errorf("BULKAD_VULKAN=yes: Grad succeeded")
	}
	if len(m.G.AllNodes()) != n {
		t.Errorf("BULKAD_VULKAN=yes: the failed Grad added nodes")
	}

	// Options override the environment, which they never write.
	t.Setenv(bulkad.VulkanEnv, "0")
	force, err := bulkad.VulkanForce()
	if err != nil {
		t.Fatal(err)
	}
	auto, err := bulkad.VulkanAuto()
	if err != nil {
		t.Fatal(err)
	}
	if !force.Force || auto.Force {
		t.Errorf("VulkanForce().Force = %v, VulkanAuto().Force = %v; want true, false", force.Force, auto.Force)
	}
	before = force.Calls()
	m = build()
	gs, err := bulkad.Options{Device: force}.Grad(m.Cost, m.Wrt...)
	if err != nil {
		t.Fatal(err)
	}
	runGraph(t, m.G)
	if force.Calls() == before || gs[0].Value() == nil {
		t.Errorf("Options{Device: VulkanForce()}: no kernel ran on the device")
	}
	if got := os.Getenv(bulkad.VulkanEnv); got != "0" {
		t.Errorf("Options changed BULKAD_VULKAN to %q", got)
	}
	t.Setenv(bulkad.VulkanEnv, "force")
	before = force.Calls()
	m = build()
	if _, err := (bulkad.Options{CPU: true}).Grad(m.Cost, m.Wrt...); err != nil {
		t.Fatal(err)
	}
	runGraph(t, m.G)
	if force.Calls() != before {
		t.Errorf("Options{CPU: true} with BULKAD_VULKAN=force: %d kernels ran on the device", force.Calls()-before)
	}
	if _, err := (bulkad.Options{CPU: true, Device: force}).Grad(m.Cost, m.Wrt...); err == nil {
		t.Errorf("Options with both CPU and Device: no error")
	}
}

// TestVulkanWithoutDevice: with no usable device (e.g. `go test -tags novulkan`), VulkanAuto
// and VulkanForce return an error saying why, and BULKAD_VULKAN=1 keeps Grad on the CPU.
func TestVulkanWithoutDevice(t *testing.T) {
	if _, err := bulkad.VulkanDevice(); err == nil {
		t.Skip("a Vulkan device exists; run `go test -tags novulkan` to cover the no-device path")
	}
	t.Setenv(bulkad.VulkanEnv, "")
	for _, use := range []func() (*raise.Vulkan, error){bulkad.VulkanAuto, bulkad.VulkanForce} {
		if v, err := use(); err == nil || v != nil {
			t.Fatalf("VulkanAuto/VulkanForce without a device: %v, %v; want nil and an error", v, err)
		} else {
			t.Logf("no device: %v", err)
		}
	}
	t.Setenv(bulkad.VulkanEnv, "1")
	if v, err := bulkad.CurrentVulkan(); v != nil || err != nil {
		t.Errorf("BULKAD_VULKAN=1 without a device: CurrentVulkan = %v, %v; want nil, nil (CPU)", v, err)
	}
	m, err := models.MLP(gorgonia.Float32, 4, []int{6, 5, 3}, 1)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := bulkad.Grad(m.Cost, m.Wrt...); err != nil {
		t.Fatalf("Grad with BULKAD_VULKAN=1 and no device: %v", err)
	}
	runGraph(t, m.G)
}

// BenchmarkVulkanMLPStep times a training step (forward + gradient) of an MLP with the
// gradient kernels on the CPU and forced onto the Vulkan device, with the device's upload,
// compute and download time per step. On a CPU device (lavapipe) the device numbers are
// correctness runs only, never a speed claim.
func BenchmarkVulkanMLPStep(b *testing.B) {
	const batch = 64
	sizes := []int{784, 128, 10}
	for _, mode := range []string{"cpu", "vulkan-auto", "vulkan-force"} {
		b.Run(mode, func(b *testing.B) {
			var v *raise.Vulkan
			var dev *vulkan.Device
			if mode != "cpu" {
				dev = vulkanDevice(b)
				v = &raise.Vulkan{Device: dev, Force: mode == "vulkan-force"}
				if dev.Type() == vulkan.CPU {
					b.Logf("device %q is a CPU implementation (lavapipe): %s numbers are correctness runs only, not a speed claim", dev.Name(), mode)
				}
			}
			m, err := models.MLP(gorgonia.Float32, batch, sizes, 1)
			if err != nil {
				b.Fatal(err)
			}
			d, err := bulkad.Differentiate(m.Cost, m.Wrt...)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := d.RaiseOn(v); err != nil {
				b.Fatal(err)
			}
			vm := gorgonia.NewTapeMachine(m.G, gorgonia.BindDualValues(m.Wrt...))
			defer vm.Close()
			step := func() {
				if err := vm.RunAll(); err != nil {
					b.Fatal(err)
				}
				vm.Reset()
			}
			step()
			var t0 vulkan.Timings
			if dev != nil {
				t0 = dev.Timings()
			}
			calls := v.Calls()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				step()
			}
			b.StopTimer()
			if dev != nil {
				t1 := dev.Timings()
				n := float64(b.N)
				b.ReportMetric(float64(v.Calls()-calls)/n, "devcalls/op")
				b.ReportMetric(float64((t1.Upload-t0.Upload).Microseconds())/n, "upload-µs/op")
				b.ReportMetric(float64((t1.Compute-t0.Compute).Microseconds())/n, "compute-µs/op")
				b.ReportMetric(float64((t1.Download-t0.Download).Microseconds())/n, "download-µs/op")
			}
		})
	}
}
