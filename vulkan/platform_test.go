//go:build (linux || darwin || freebsd) && (amd64 || arm64) && !novulkan

package vulkan

import (
	"math/rand"
	"testing"
	"unsafe"
)

// TestStructLayout checks the Go mirrors of the Vulkan structs against sizeof values printed
// by a C program including vulkan_core.h (Vulkan headers 1.3.239, gcc, x86-64), and the
// offsets read out of VkPhysicalDeviceProperties.
func TestStructLayout(t *testing.T) {
	cases := []struct {
		name string
		got  uintptr
		want uintptr
	}{
		{"VkApplicationInfo", unsafe.Sizeof(vkApplicationInfo{}), 48},
		{"VkInstanceCreateInfo", unsafe.Sizeof(vkInstanceCreateInfo{}), 64},
		{"VkPhysicalDeviceProperties", unsafe.Sizeof(vkPhysicalDeviceProperties{}), 824},
		{"VkQueueFamilyProperties", unsafe.Sizeof(vkQueueFamilyProperties{}), 24},
		{"VkPhysicalDeviceMemoryProperties", unsafe.Sizeof(vkPhysicalDeviceMemoryProperties{}), 520},
		{"VkPhysicalDeviceMemoryProperties.memoryHeapCount", unsafe.Offsetof(vkPhysicalDeviceMemoryProperties{}.memoryHeapCount), 260},
		{"VkPhysicalDeviceMemoryProperties.memoryHeaps", unsafe.Offsetof(vkPhysicalDeviceMemoryProperties{}.memoryHeaps), 264},
		{"VkPhysicalDeviceFeatures", unsafe.Sizeof(vkPhysicalDeviceFeatures{}), 220},
		{"VkPhysicalDeviceFeatures2", unsafe.Sizeof(vkPhysicalDeviceFeatures2{}), 240},
		{"VkPhysicalDeviceShaderAtomicFloatFeaturesEXT", unsafe.Sizeof(vkPhysicalDeviceShaderAtomicFloatFeatures{}), 64},
		{"VkPhysicalDeviceShaderAtomicInt64Features", unsafe.Sizeof(vkPhysicalDeviceShaderAtomicInt64Features{}), 24},
		{"VkExtensionProperties", unsafe.Sizeof(vkExtensionProperties{}), 260},
		{"VkDeviceQueueCreateInfo", unsafe.Sizeof(vkDeviceQueueCreateInfo{}), 40},
		{"VkDeviceCreateInfo", unsafe.Sizeof(vkDeviceCreateInfo{}), 72},
		{"VkBufferCreateInfo", unsafe.Sizeof(vkBufferCreateInfo{}), 56},
		{"VkMemoryRequirements", unsafe.Sizeof(vkMemoryRequirements{}), 24},
		{"VkMemoryAllocateInfo", unsafe.Sizeof(vkMemoryAllocateInfo{}), 32},
		{"VkShaderModuleCreateInfo", unsafe.Sizeof(vkShaderModuleCreateInfo{}), 40},
		{"VkDescriptorSetLayoutBinding", unsafe.Sizeof(vkDescriptorSetLayoutBinding{}), 24},
		{"VkDescriptorSetLayoutCreateInfo", unsafe.Sizeof(vkDescriptorSetLayoutCreateInfo{}), 32},
		{"VkPushConstantRange", unsafe.Sizeof(vkPushConstantRange{}), 12},
		{"VkPipelineLayoutCreateInfo", unsafe.Sizeof(vkPipelineLayoutCreateInfo{}), 48},
		{"VkPipelineShaderStageCreateInfo", unsafe.Sizeof(vkPipelineShaderStageCreateInfo{}), 48},
		{"VkSpecializationMapEntry", unsafe.Sizeof(vkSpecializationMapEntry{}), 16},
		{"VkSpecializationInfo", unsafe.Sizeof(vkSpecializationInfo{}), 32},
		{"VkComputePipelineCreateInfo", unsafe.Sizeof(vkComputePipelineCreateInfo{}), 96},
		{"VkComputePipelineCreateInfo.stage", unsafe.Offsetof(vkComputePipelineCreateInfo{}.stage), 24},
		{"VkComputePipelineCreateInfo.layout", unsafe.Offsetof(vkComputePipelineCreateInfo{}.layout), 72},
		{"VkDescriptorPoolSize", unsafe.Sizeof(vkDescriptorPoolSize{}), 8},
		{"VkDescriptorPoolCreateInfo", unsafe.Sizeof(vkDescriptorPoolCreateInfo{}), 40},
		{"VkDescriptorSetAllocateInfo", unsafe.Sizeof(vkDescriptorSetAllocateInfo{}), 40},
		{"VkDescriptorBufferInfo", unsafe.Sizeof(vkDescriptorBufferInfo{}), 24},
		{"VkWriteDescriptorSet", unsafe.Sizeof(vkWriteDescriptorSet{}), 64},
		{"VkCommandPoolCreateInfo", unsafe.Sizeof(vkCommandPoolCreateInfo{}), 24},
		{"VkCommandBufferAllocateInfo", unsafe.Sizeof(vkCommandBufferAllocateInfo{}), 32},
		{"VkCommandBufferBeginInfo", unsafe.Sizeof(vkCommandBufferBeginInfo{}), 32},
		{"VkMemoryBarrier", unsafe.Sizeof(vkMemoryBarrier{}), 24},
		{"VkSubmitInfo", unsafe.Sizeof(vkSubmitInfo{}), 72},
		{"VkFenceCreateInfo", unsafe.Sizeof(vkFenceCreateInfo{}), 24},
		{"VkBufferCopy", unsafe.Sizeof(vkBufferCopy{}), 24},
		// Offsets from offsetof() in the same program.
		{"VkPhysicalDeviceProperties.deviceType", propDeviceType, 16},
		{"VkPhysicalDeviceProperties.deviceName", propDeviceName, 20},
		{"VkPhysicalDeviceLimits.maxStorageBufferRange", limMaxStorageBuffer, 296 + 28},
		{"VkPhysicalDeviceLimits.maxPushConstantsSize", limMaxPushConstants, 296 + 32},
		{"VkPhysicalDeviceLimits.maxComputeWorkGroupCount", limMaxComputeGroupCount, 296 + 220},
		{"VkPhysicalDeviceFeatures.shaderFloat64", featShaderFloat64 * 4, 156},
		{"VkPhysicalDeviceFeatures.shaderInt64", featShaderInt64 * 4, 160},
	}
	for _, c := range cases {
		if c.got != c.want {
			t.Errorf("%s: Go layout gives %d, vulkan_core.h gives %d", c.name, c.got, c.want)
		}
	}
}

// TestGridStride runs kernels with far fewer workgroups than work items, so every shader's
// grid-stride loop takes several turns.
func TestGridStride(t *testing.T) {
	device(t)
	d, err := Open()
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	d.maxGroups = 3
	rng := rand.New(rand.NewSource(3))
	n := 100003
	src := uniform[float32](rng, n, -2, 2)
	dst := make([]float32, n)
	if err := Unary(d, "neg", dst, src); err != nil {
		t.Fatal(err)
	}
	for i := range src {
		if dst[i] != -src[i] {
			t.Fatalf("neg with 3 workgroups: out[%d] = %v, want %v", i, dst[i], -src[i])
		}
	}
	for _, mode := range []int{reduceThread, reduceGroup} {
		outer, m, inner := 7, 300, 33
		s := uniform[float32](rng, outer*m*inner, -1, 1)
		out := make([]float32, outer*inner)
		if err := sumAxis(d, out, s, outer, m, inner, mode); err != nil {
			t.Fatal(err)
		}
		want, mag := sumRef(s, outer, m, inner)
		if i := firstOff(out, want, mag, 1e-5); i >= 0 {
			t.Fatalf("sum mode %d with 3 workgroups: out[%d] = %v, want %v", mode, i, out[i], want[i])
		}
		am := make([]int64, outer*inner)
		if err := argmaxAxis(d, am, s, outer, m, inner, mode); err != nil {
			t.Fatal(err)
		}
		wantA := argmaxRef(s, outer, m, inner)
		for i := range am {
			if am[i] != wantA[i] {
				t.Fatalf("argmax mode %d with 3 workgroups: out[%d] = %v, want %v", mode, i, am[i], wantA[i])
			}
		}
	}
	a := uniform[float32](rng, 70*20, -1, 1)
	b := uniform[float32](rng, 20*90, -1, 1)
	c := make([]float32, 70*90)
	if err := MatMul(d, c, a, b, 70, 20, 90, false, false); err != nil {
		t.Fatal(err)
	}
	want, mag := matmulRef(a, b, 70, 20, 90, false, false)
	if i := firstOff(c, want, mag, 1e-5); i >= 0 {
		t.Fatalf("matmul with 3 workgroups: out[%d] = %v, want %v", i, c[i], want[i])
	}
	idx := make([]int32, n)
	for i := range idx {
		idx[i] = int32(rng.Intn(50))
	}
	acc := make([]float32, 50)
	if err := ScatterAdd(d, acc, src, idx, 1); err != nil {
		t.Fatal(err)
	}
	wantS, magS := scatterRef(make([]float32, 50), src, idx, 1)
	if i := firstOff(acc, wantS, magS, 1e-5); i >= 0 {
		t.Fatalf("scatter with 3 workgroups: out[%d] = %v, want %v", i, acc[i], wantS[i])
	}
}

// TestStagingPath forces the discrete-GPU path (device-local buffers filled and drained by
// copies inside the submission) on whatever device there is.
func TestStagingPath(t *testing.T) {
	device(t)
	d, err := Open()
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	d.mu.Lock()
	d.staging = true
	for i := range d.slots {
		d.freeSlot(i)
	}
	d.mu.Unlock()
	rng := rand.New(rand.NewSource(11))
	n := 10007
	x := uniform[float32](rng, n, -2, 2)
	y := uniform[float32](rng, n, -2, 2)
	dst := make([]float32, n)
	if err := Binary(d, "*", dst, x, y); err != nil {
		t.Fatal(err)
	}
	for i := range dst {
		if dst[i] != x[i]*y[i] {
			t.Fatalf("staged multiply: out[%d] = %v, want %v", i, dst[i], x[i]*y[i])
		}
	}
	if d.slots[0].devBuffer == 0 {
		t.Fatal("staging requested but the slot has no device-local buffer")
	}
	// ScatterAdd both uploads and downloads dst.
	idx := make([]int32, n)
	for i := range idx {
		idx[i] = int32(rng.Intn(40) - 3)
	}
	acc := uniform[float32](rng, 37, -1, 1)
	want, mag := scatterRef(acc, x, idx, 1)
	if err := ScatterAdd(d, acc, x, idx, 1); err != nil {
		t.Fatal(err)
	}
	if i := firstOff(acc, want, mag, 1e-5); i >= 0 {
		t.Fatalf("staged scatter: out[%d] = %v, want %v", i, acc[i], want[i])
	}
	// A matmul in several accumulating dispatches.
	a := uniform[float32](rng, 40*300, -1, 1)
	b := uniform[float32](rng, 300*24, -1, 1)
	c := make([]float32, 40*24)
	if err := matmulWith(d, c, a, b, 40, 300, 24, false, true, 3, 64); err != nil {
		t.Fatal(err)
	}
	wantC, magC := matmulRef(a, b, 40, 300, 24, false, true)
	if i := firstOff(c, wantC, magC, 1e-5); i >= 0 {
		t.Fatalf("staged matmul: out[%d] = %v, want %v", i, c[i], wantC[i])
	}
}

func TestMissingLibrary(t *testing.T) {
	_, err := loadVKFrom([]string{"libvulkan-missing.so.9"})
	if err == nil {
		t.Fatal("loading a missing library: no error")
	}
	const want = "vulkan: open: libvulkan-missing.so.9 not found: "
	if got := err.Error(); len(got) < len(want) || got[:len(want)] != want {
		t.Errorf("error %q does not start with %q", got, want)
	}
}
