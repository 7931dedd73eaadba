//go:build (linux || darwin || freebsd) && (amd64 || arm64) && !novulkan

package vulkan

import (
	"math/rand"
	"reflect"
	"testing"
	"unsafe"
)

// TestStructLayout checks the Go mirrors of the Vulkan structs against sizeof and offsetof
// values printed by a C program including vulkan_core.h (Vulkan headers 1.3.239, gcc, x86-64),
// among them the offsets read out of VkPhysicalDeviceProperties. Each mirror is named as in
// the header but for the case of the prefix (vkFoo for VkFoo; the EXT suffix is dropped).
func TestStructLayout(t *testing.T) {
	sizes := []struct {
		mirror any
		want   uintptr
	}{
		{vkApplicationInfo{}, 48},
		{vkInstanceCreateInfo{}, 64},
		{vkPhysicalDeviceProperties{}, 824},
		{vkQueueFamilyProperties{}, 24},
		{vkPhysicalDeviceMemoryProperties{}, 520},
		{vkPhysicalDeviceFeatures{}, 220},
		{vkPhysicalDeviceFeatures2{}, 240},
		{vkPhysicalDeviceShaderAtomicFloatFeatures{}, 64},
		{vkPhysicalDeviceShaderAtomicInt64Features{}, 24},
		{vkExtensionProperties{}, 260},
		{vkDeviceQueueCreateInfo{}, 40},
		{vkDeviceCreateInfo{}, 72},
		{vkBufferCreateInfo{}, 56},
		{vkMemoryRequirements{}, 24},
		{vkMemoryAllocateInfo{}, 32},
		{vkShaderModuleCreateInfo{}, 40},
		{vkDescriptorSetLayoutBinding{}, 24},
		{vkDescriptorSetLayoutCreateInfo{}, 32},
		{vkPushConstantRange{}, 12},
		{vkPipelineLayoutCreateInfo{}, 48},
		{vkPipelineShaderStageCreateInfo{}, 48},
		{vkSpecializationMapEntry{}, 16},
		{vkSpecializationInfo{}, 32},
		{vkComputePipelineCreateInfo{}, 96},
		{vkDescriptorPoolSize{}, 8},
		{vkDescriptorPoolCreateInfo{}, 40},
		{vkDescriptorSetAllocateInfo{}, 40},
		{vkDescriptorBufferInfo{}, 24},
		{vkWriteDescriptorSet{}, 64},
		{vkCommandPoolCreateInfo{}, 24},
		{vkCommandBufferAllocateInfo{}, 32},
		{vkCommandBufferBeginInfo{}, 32},
		{vkMemoryBarrier{}, 24},
		{vkSubmitInfo{}, 72},
		{vkFenceCreateInfo{}, 24},
		{vkBufferCopy{}, 24},
	}
	for _, c := range sizes {
		if typ := reflect.TypeOf(c.mirror); typ.Size() != c.want {
			t.Errorf("sizeof %s: Go layout gives %d, vulkan_core.h gives %d", typ.Name(), typ.Size(), c.want)
		}
	}
	offsets := []struct {
		name      string
		got, want uintptr
	}{
		{"VkPhysicalDeviceMemoryProperties.memoryHeapCount", unsafe.Offsetof(vkPhysicalDeviceMemoryProperties{}.memoryHeapCount), 260},
		{"VkPhysicalDeviceMemoryProperties.memoryHeaps", unsafe.Offsetof(vkPhysicalDeviceMemoryProperties{}.memoryHeaps), 264},
		{"VkComputePipelineCreateInfo.stage", unsafe.Offsetof(vkComputePipelineCreateInfo{}.stage), 24},
		{"VkComputePipelineCreateInfo.layout", unsafe.Offsetof(vkComputePipelineCreateInfo{}.layout), 72},
		{"VkPhysicalDeviceProperties.deviceType", propDeviceType, 16},
		{"VkPhysicalDeviceProperties.deviceName", propDeviceName, 20},
		{"VkPhysicalDeviceLimits.maxStorageBufferRange", limMaxStorageBuffer, 296 + 28},
		{"VkPhysicalDeviceLimits.maxPushConstantsSize", limMaxPushConstants, 296 + 32},
		{"VkPhysicalDeviceLimits.maxComputeWorkGroupCount", limMaxComputeGroupCount, 296 + 220},
		{"VkPhysicalDeviceFeatures.shaderFloat64", featShaderFloat64 * 4, 156},
		{"VkPhysicalDeviceFeatures.shaderInt64", featShaderInt64 * 4, 160},
	}
	for _, c := range offsets {
		if c.got != c.want {
			t.Errorf("offsetof %s: Go layout gives %d, vulkan_core.h gives %d", c.name, c.got, c.want)
		}
	}
}

// ownDevice opens a device of the test's own, closed when the test ends, for tests that
// change its settings (it skips without Vulkan, as device does).
func ownDevice(t *testing.T) *Device {
	device(t)
	d, err := Open()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

// TestGridStride runs kernels with far fewer workgroups than work items, so every shader's
// grid-stride loop takes several turns.
func TestGridStride(t *testing.T) {
	d := ownDevice(t)
	d.maxGroups = 3
	eitherType(t, d, func() { gridStrideNegArgmax[float32](t, d) }, func() { gridStrideNegArgmax[float64](t, d) })
	rng := rand.New(rand.NewSource(3))
	n := 100003
	src := uniform[float32](rng, n, -2, 2)
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

// gridStrideNegArgmax runs neg and argmax on d (set to few workgroups) over several turns of
// the grid-stride loop.
func gridStrideNegArgmax[T Float](t *testing.T, d *Device) {
	rng := rand.New(rand.NewSource(3))
	n := 100003
	src := uniform[T](rng, n, -2, 2)
	dst := make([]T, n)
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
		s := uniform[T](rng, outer*m*inner, -1, 1)
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
}

// TestStagingPath forces the discrete-GPU path (device-local buffers filled and drained by
// copies inside the submission) on whatever device there is.
func TestStagingPath(t *testing.T) {
	d := ownDevice(t)
	d.mu.Lock()
	d.staging = true
	for i := range d.slots {
		d.freeSlot(i)
	}
	d.mu.Unlock()
	rng := rand.New(rand.NewSource(11))
	n := 10007
	x := uniform[float32](rng, n, -2, 2)
	eitherType(t, d, func() { stagedMultiply[float32](t, d) }, func() { stagedMultiply[float64](t, d) })
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

// stagedMultiply multiplies on d (set to stage through device-local buffers).
func stagedMultiply[T Float](t *testing.T, d *Device) {
	rng := rand.New(rand.NewSource(12))
	n := 10007
	x := uniform[T](rng, n, -2, 2)
	y := uniform[T](rng, n, -2, 2)
	dst := make([]T, n)
	if err := Binary(d, "*", dst, x, y); err != nil {
		t.Fatal(err)
	}
	for i := range dst {
		if dst[i] != x[i]*y[i] {
			t.Fatalf("staged multiply: out[%d] = %v, want %v", i, dst[i], x[i]*y[i])
		}
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
