package vulkan

import (
	"os"
	"sync"
	"testing"
)

func TestMain(m *testing.M) {
	// Mesa otherwise writes a shader cache under the home directory.
	if os.Getenv("MESA_SHADER_CACHE_DISABLE") == "" {
		os.Setenv("MESA_SHADER_CACHE_DISABLE", "true")
	}
	os.Exit(m.Run())
}

// shared is the device all tests and benchmarks use, opened once per test binary.
var shared = sync.OnceValues(Open)

// device returns the shared device, or skips (fails with VULKAN_REQUIRED=1) when there is none.
func device(tb testing.TB) *Device {
	tb.Helper()
	d, err := shared()
	if err != nil {
		if os.Getenv("VULKAN_REQUIRED") == "1" {
			tb.Fatalf("VULKAN_REQUIRED=1 but no Vulkan device: %v", err)
		}
		tb.Skipf("no Vulkan device (set VULKAN_REQUIRED=1 to make this a failure): %v", err)
	}
	return d
}
