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
