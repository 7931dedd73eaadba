package vulkan

import (
	"os"
	"sync"
	"testing"

	"github.com/bulkad/bulkad/vulkan/vulkantest"
)

func TestMain(m *testing.M) {
	vulkantest.NoShaderCache()
	os.Exit(m.Run())
}

// shared is the device all tests and benchmarks use, opened once per test binary.
var shared = sync.OnceValues(Open)

// device returns the shared device, or skips (fails with VULKAN_REQUIRED=1) when there is none.
func device(tb testing.TB) *Device {
	tb.Helper()
	d, err := shared()
	if err != nil {
		vulkantest.NoDevice(tb, err)
	}
	return d
}

// eitherType runs f32 where d runs float32's element-wise kernels and argmax, else f64 where
// the device has float64 (a device that may flush float32 subnormals declines float32's), else
// skips: for tests of the machinery (grid stride, staging, concurrency, strides) that need one
// element type the device runs those kernels on.
func eitherType(t *testing.T, d *Device, f32, f64 func()) {
	t.Helper()
	switch {
	case d.Info().Float32Subnormals:
		f32()
	case d.SupportsFloat64():
		t.Logf("%s declines float32 element-wise kernels and argmax (it may flush subnormals): float64 instead", d.Name())
		f64()
	default:
		t.Skipf("%s runs element-wise kernels on neither float32 (it may flush subnormals) nor float64", d.Name())
	}
}
