package raise

import (
	"math/rand"
	"strings"
	"sync"
	"testing"

	kern "github.com/bulkad/bulkad/kernel"

	"github.com/bulkad/bulkad/core"
	"github.com/bulkad/bulkad/vulkan"
	"github.com/bulkad/bulkad/vulkan/vulkantest"
	"gorgonia.org/tensor"
)

// testDevice is the Vulkan device of this test binary, opened once.
var testDevice = sync.OnceValues(func() (*vulkan.Device, error) {
	vulkantest.NoShaderCache()
	return vulkan.Open()
})

// device returns the test device, or skips (fails with VULKAN_REQUIRED=1) when there is none.
func device(t *testing.T) *vulkan.Device {
	t.Helper()
	d, err := testDevice()
	if err != nil {
		vulkantest.NoDevice(t, err)
	}
	return d
}

// vkCase is one term, raised on the CPU and with Vulkan forced. dev32/dev64: whether the
// device must have run at least one kernel for float32/float64 (-1: not checked).
type vkCase struct {
	src          string
	dev32, dev64 int
}

// The terms use X [37,29], Y [29], Z [29,37], V [50], R [5,6,7], S [], O [1,7], P [7,1] of
// the dtype T, am [37] i64 (some entries out of range). Sizes are not multiples of any workgroup size.
var vkCases = []vkCase{
	// unary (Gorgonia's native ops are replaced by bulkad's when the device runs them)
	{"neg X", 1, 1}, {"abs X", 1, 1}, {"sign X", 1, 1}, {"floor X", 1, 1}, {"ceil X", 1, 1},
	{"recip X", 1, 1}, {"sqrt (abs X)", 1, 1},
	{"exp X", 1, 0}, {"sin X", 1, 0}, {"cos X", 1, 0}, {"tan X", 1, 0}, {"tanh X", 1, 0},
	{"sigmoid X", 1, 0}, {"expm1 X", 1, 0},
	{"log (abs X)", 1, 1}, {"log1p (abs X)", 1, 1}, // abs on the device for f64
	// binary: plain, cyclic, strided (offsets and broadcasts), and what stays on the CPU
	{"X + X", 1, 1}, {"X - neg X", 1, 1}, {"X * X", 1, 1}, {"X / (abs X + abs X)", 1, 1},
	{"max X (neg X)", 1, 1}, {"min X (sign X)", 1, 1},
	{"pow (abs X) X", 1, -1},
	{"X - tr [1,0] Z", 1, 1}, {"X * replicate 37 Y", 1, 1}, {"replicate 37 Y / X", 1, 1},
	{"max X (tr [1,0] Z)", 1, 1},
	{"gather [30,20] X (\\[i,j] -> [i + 3, j + 5]) + gather [30,20] X (\\[i,j] -> [i + 7, j])", 1, 1},
	{"atan2 X X", 0, 0},
	{"cast T (X > tr [1,0] Z)", 0, 0},
	// reductions
	{"sumOuter X", 1, 1}, {"sumOuter (tr [1,0] X)", 1, 1}, {"sumOuter (tr [1,0,2] R)", 1, 1},
	{"sumOuter (tr [2,0,1] R)", 1, 1}, {"sumOuter V", 1, 1},
	{"cast T (argmaxOuter X)", 1, 1}, {"cast T (argmaxOuter (tr [1,0] X))", 1, 1},
	{"cast T (argmaxOuter (tr [1,0,2] R))", 1, 1},
	// matmul with every transpose combination
	{"matmul X Z", 1, 1}, {"matmul (tr [1,0] Z) (tr [1,0] X)", 1, 1},
	{"matmul X (tr [1,0] X)", 1, 1}, {"matmul (tr [1,0] X) X", 1, 1},
	// batched: the device declines (no batched GEMM there), the CPU runs it with the flags
	{"matmul R (tr [0,2,1] R)", 0, 0}, {"matmul (tr [0,2,1] R) R", 0, 0},
	// gathers and scatters: affine windows, tables (out of range, repeated, run-time indices)
	{"gather [2,2,18,14] X (\\[a,b,i,j] -> [2 * i + a, 2 * j + b])", 1, 1},
	{"scatter [37,29] (gather [2,2,18,14] X (\\[a,b,i,j] -> [2 * i + a, 2 * j + b])) (\\[a,b,i,j] -> [2 * i + a, 2 * j + b])", 1, -1},
	{"scatter [37,29] (gather [3,3,35,27] X (\\[a,b,i,j] -> [i + a, j + b])) (\\[a,b,i,j] -> [i + a, j + b])", 1, -1},
	{"gather [37,29] X (\\[i,j] -> [i - 1, j + 1])", 1, 1},
	{"gather [40] Y (\\[i] -> [quot i 2 - 3])", 1, 1},
	{"scatter [25] V (\\[i] -> [quot i 2])", 1, -1},
	{"scatter [20] V (\\[i] -> [rem (i * 7) 23 - 1])", 1, -1},
	{"gather [37] Y (\\[i] -> [index am [i]])", 1, 1},
	{"gather [37,29] X (\\[i,j] -> [index am [i], j])", 1, 1},
	{"scatter [40,29] X (\\[i,j] -> [index am [i] + 2, j])", 1, -1},
	// moves
	{"replicate 5 Y", 1, 1}, {"replicate 3 X", 1, 1},
	{"tr [1,0] X", 1, 1}, {"tr [2,0,1] R", 1, 1},
	{"cond (sumOuter V > sumOuter (neg V)) X (neg X)", 1, 1},
	{"reshape [29,37] X", 0, 0},
	// rank 0 and extents of 1
	{"exp S", 1, 0}, {"S * S", 1, 1}, {"replicate 7 S", 1, 1}, {"sumOuter (reshape [1] S)", 1, 1},
	{"matmul O P", 1, 1}, {"matmul P O", 1, 1}, {"sumOuter O", 1, 1}, {"cast T (argmaxOuter P)", 1, 1},
	{"O * tr [1,0] P", 1, 1}, {"scatter [3,7] O (\\[i] -> [i + 1])", 1, -1},
}

func TestVulkanKernelsMatchCPU(t *testing.T) {
	dev := device(t)
	t.Logf("device %s (%v), float64 %v", dev.Name(), dev.Type(), dev.SupportsFloat64())
	for _, dt := range []string{"f32", "f64"} {
		r := rand.New(rand.NewSource(11))
		params := strings.ReplaceAll("X : [37,29] T, Y : [29] T, Z : [29,37] T, V : [50] T, R : [5,6,7] T, S : [] T, O : [1,7] T, P : [7,1] T, am : [37] i64", "T", dt)
		args := map[string]*tensor.Dense{
			"X": randDense(r, dt, 37, 29), "Y": randDense(r, dt, 29), "Z": randDense(r, dt, 29, 37),
			"V": randDense(r, dt, 50), "R": randDense(r, dt, 5, 6, 7),
			"S": randDense(r, dt), "O": randDense(r, dt, 1, 7), "P": randDense(r, dt, 7, 1),
		}
		am := make([]int64, 37)
		for i := range am {
			am[i] = int64(r.Intn(33)) - 2 // -2 … 30: some out of range for Y and X
		}
		args["am"] = tensor.New(tensor.WithShape(37), tensor.WithBacking(am))
		for _, c := range vkCases {
			src := strings.ReplaceAll(c.src, " T ", " "+dt+" ")
			want := c.dev32
			if dt == "f64" {
				want = c.dev64
			} else if !dev.Info().Float32Subnormals {
				want = -1 // float32 element-wise kernels and argmax are declined: maybe nothing runs there
			}
			t.Run(dt+"/"+src, func(t *testing.T) {
				p, err := core.ParseProgram("fn (" + params + ") => " + src)
				if err != nil {
					t.Fatalf("parse: %v", err)
				}
				cpu := raiseRun(t, p, args, nil)
				v := &kern.Vulkan{Device: dev, Force: true, Report: func(err error) { t.Errorf("device error: %v", err) }}
				gpu := raiseRun(t, p, args, v)
				if v.Err() != nil || v.Fallbacks() != 0 {
					t.Fatalf("device errors: %v (%d fallbacks)", v.Err(), v.Fallbacks())
				}
				switch {
				case want == 1 && v.Calls() == 0:
					t.Errorf("no kernel ran on the device")
				case want == 0 && v.Calls() != 0:
					t.Errorf("%d kernels ran on the device, want none", v.Calls())
				}
				tol := 1e-10
				if dt == "f32" {
					tol = 1e-5
				}
				if msg := compareScaled(gpu, cpu, tol); msg != "" {
					t.Errorf("%s\nVulkan vs CPU: %s", p, msg)
				}
			})
		}
	}
}

// TestVulkanAutoOnCPUDevice: without Force, a CPU device (lavapipe) is never worth it, so the
// raised graph is the CPU one and nothing runs on the device.
func TestVulkanAutoOnCPUDevice(t *testing.T) {
	dev := device(t)
	if dev.Type() != vulkan.CPU {
		t.Skipf("device %s is a %v, not a CPU device", dev.Name(), dev.Type())
	}
	r := rand.New(rand.NewSource(3))
	p, err := core.ParseProgram("fn (X : [37,29] f32, Z : [29,37] f32) => sumOuter (exp (matmul X Z))")
	if err != nil {
		t.Fatal(err)
	}
	args := map[string]*tensor.Dense{"X": randDense(r, "f32", 37, 29), "Z": randDense(r, "f32", 29, 37)}
	v := &kern.Vulkan{Device: dev}
	got := raiseRun(t, p, args, v)
	want := raiseRun(t, p, args, nil)
	if v.Calls() != 0 {
		t.Errorf("%d device calls on a CPU device without Force", v.Calls())
	}
	if msg := compareScaled(got, want, 0); msg != "" {
		t.Errorf("auto mode differs from the CPU: %s", msg)
	}
}
