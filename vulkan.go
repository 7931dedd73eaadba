package bulkad

import (
	"log"
	"os"
	"sync"

	"github.com/bulkad/bulkad/raise"
	"github.com/bulkad/bulkad/vulkan"
	"github.com/pkg/errors"
)

// VulkanEnv is the environment variable that selects where the kernels of the gradient
// nodes Grad (and Gradient.Raise) add run: unset, "" or "0" on the CPU; "1" on the Vulkan
// device where vulkan.Device.Worthwhile expects a gain; "force" on the device for every
// supported kernel, however small (tests on CPU devices such as lavapipe). It is read at each
// Grad call, as the default of Options whose Device is nil and CPU false; a program chooses
// with Options (Options{Device: v} with v from VulkanAuto or VulkanForce, Options{CPU: true}).
const VulkanEnv = "BULKAD_VULKAN"

// vulkanProcess is the process-wide Vulkan device with the two raise.Vulkan configurations
// (where worthwhile, forced) that every graph raised through Grad shares, so a device error
// is reported once per process and mode.
type vulkanProcess struct {
	dev         *vulkan.Device
	auto, force *raise.Vulkan
}

// openVulkan opens the process-wide device on first use (the only package-level state).
var openVulkan = sync.OnceValues(func() (*vulkanProcess, error) {
	dev, err := vulkan.Open()
	if err != nil {
		return nil, errors.Wrap(err, "bulkad: vulkan: no usable device, kernels stay on the CPU")
	}
	return &vulkanProcess{dev: dev, auto: &raise.Vulkan{Device: dev}, force: &raise.Vulkan{Device: dev, Force: true}}, nil
})

// warnNoDevice reports once that BULKAD_VULKAN asks for a device that cannot be opened.
var warnNoDevice sync.Once

// VulkanDevice returns the process-wide Vulkan device, opened on the first call (later calls
// return the same device or the same error). It is safe for concurrent use; do not close it.
func VulkanDevice() (*vulkan.Device, error) {
	p, err := openVulkan()
	if err != nil {
		return nil, err
	}
	return p.dev, nil
}

// VulkanAuto returns the process-wide device configuration that runs a raised node's float
// kernels on the Vulkan device where vulkan.Device.Worthwhile expects a gain (large matrix
// products and transcendental functions on a GPU; never on a CPU device such as lavapipe):
// pass it as Options.Device. Without a usable device it returns an error saying why.
func VulkanAuto() (*raise.Vulkan, error) {
	return vulkanConfig(func(p *vulkanProcess) *raise.Vulkan { return p.auto })
}

// VulkanForce is VulkanAuto for every kernel the device supports, however small: for tests
// of the device path, e.g. on lavapipe.
func VulkanForce() (*raise.Vulkan, error) {
	return vulkanConfig(func(p *vulkanProcess) *raise.Vulkan { return p.force })
}

// vulkanConfig is one of the process-wide device configurations, chosen by pick, once the
// device is open.
func vulkanConfig(pick func(*vulkanProcess) *raise.Vulkan) (*raise.Vulkan, error) {
	p, err := openVulkan()
	if err != nil {
		return nil, err
	}
	return pick(p), nil
}

// CurrentVulkan returns the device configuration Grad uses now, as BULKAD_VULKAN selects it:
// nil for the CPU (also when a device is requested but none can be opened: that is reported
// once with the standard logger), or the process-wide raise.Vulkan of the mode, whose Err,
// Calls and Fallbacks tell what happened on the device. An unknown value is an error.
func CurrentVulkan() (*raise.Vulkan, error) {
	mode := os.Getenv(VulkanEnv)
	switch mode {
	case "", "0":
		return nil, nil
	case "1", "force":
	default:
		return nil, errors.Errorf("bulkad: vulkan: %s=%q, want 0, 1 or force", VulkanEnv, mode)
	}
	p, err := openVulkan()
	if err != nil {
		warnNoDevice.Do(func() { log.Printf("%s=%s: %v", VulkanEnv, mode, err) })
		return nil, nil
	}
	if mode == "force" {
		return p.force, nil
	}
	return p.auto, nil
}
