// Package vulkantest holds what the tests of packages that run Vulkan kernels share: Mesa's
// shader cache turned off, and one rule for a machine without a Vulkan device (skip, or fail
// when VULKAN_REQUIRED=1, as CI sets it after installing lavapipe).
//
// It does not import package vulkan, so that package's own tests can use it too.
package vulkantest

import (
	"os"
	"testing"
)

// NoShaderCache turns Mesa's on-disk shader cache off (Mesa would otherwise write one under
// the home directory), unless MESA_SHADER_CACHE_DISABLE is set already. Call it before the
// device is opened.
func NoShaderCache() {
	if os.Getenv("MESA_SHADER_CACHE_DISABLE") == "" {
		os.Setenv("MESA_SHADER_CACHE_DISABLE", "true")
	}
}

// NoDevice ends tb, which needs a Vulkan device that could not be opened (err): it skips, or
// fails when VULKAN_REQUIRED=1.
func NoDevice(tb testing.TB, err error) {
	tb.Helper()
	if os.Getenv("VULKAN_REQUIRED") == "1" {
		tb.Fatalf("VULKAN_REQUIRED=1 but no Vulkan device: %v", err)
	}
	tb.Skipf("no Vulkan device (set VULKAN_REQUIRED=1 to make this a failure): %v", err)
}
