//go:build (linux || darwin || freebsd) && (amd64 || arm64) && !novulkan

package vulkan

import (
	"runtime"
	"strconv"
	"unsafe"

	"github.com/ebitengine/purego"
	"github.com/pkg/errors"
)

// This file holds the hand-written Vulkan 1.0 (+ two feature structs) binding: constants, the
// C structs as Go structs with the 64-bit layout of vulkan_core.h (sizes are checked by
// TestStructLayout against values printed from the header), and the entry points resolved
// with purego. Every handle is a uintptr (dispatchable handles are pointers and
// non-dispatchable ones are uint64 on 64-bit platforms, the only ones this file builds on).

const (
	vkSuccess    = 0
	vkTimeout    = 2
	vkIncomplete = 5

	stApplicationInfo                  = 0
	stInstanceCreateInfo               = 1
	stDeviceQueueCreateInfo            = 2
	stDeviceCreateInfo                 = 3
	stSubmitInfo                       = 4
	stMemoryAllocateInfo               = 5
	stFenceCreateInfo                  = 8
	stBufferCreateInfo                 = 12
	stShaderModuleCreateInfo           = 16
	stPipelineShaderStageCreateInfo    = 18
	stComputePipelineCreateInfo        = 29
	stPipelineLayoutCreateInfo         = 30
	stDescriptorSetLayoutCreateInfo    = 32
	stDescriptorPoolCreateInfo         = 33
	stDescriptorSetAllocateInfo        = 34
	stWriteDescriptorSet               = 35
	stCommandPoolCreateInfo            = 39
	stCommandBufferAllocateInfo        = 40
	stCommandBufferBeginInfo           = 42
	stMemoryBarrier                    = 46
	stPhysicalDeviceFeatures2          = 1000059000
	stPhysicalDeviceProperties2        = 1000059001
	stPhysicalDeviceFloatControlsProps = 1000197000
	stPhysicalDeviceAtomicInt64        = 1000180000
	stPhysicalDeviceAtomicFloatFeature = 1000260000

	queueComputeBit             = 0x2
	bufferUsageStorage          = 0x20
	bufferUsageTransferSrc      = 0x1
	bufferUsageTransferDst      = 0x2
	memoryDeviceLocal           = 0x1
	pipelineStageTransfer       = 0x1000
	accessTransferRead          = 0x800
	accessTransferWrite         = 0x1000
	memoryHostVisible           = 0x2
	memoryHostCoherent          = 0x4
	memoryHostCached            = 0x8
	descriptorStorageBuffer     = 7
	shaderStageCompute          = 0x20
	pipelineBindCompute         = 1
	commandPoolResetBuffer      = 0x2
	commandBufferOneTimeSubmit  = 0x1
	pipelineStageComputeShader  = 0x800
	pipelineStageHost           = 0x4000
	accessShaderRead            = 0x20
	accessShaderWrite           = 0x40
	accessHostRead              = 0x2000
	sharingModeExclusive        = 0
	commandBufferLevelPrimary   = 0
	physicalDeviceTypeOther     = 0
	physicalDeviceTypeIntegrate = 1
	physicalDeviceTypeDiscrete  = 2
	physicalDeviceTypeVirtual   = 3
	physicalDeviceTypeCPU       = 4

	// Offsets into VkPhysicalDeviceProperties (824 bytes) and its VkPhysicalDeviceLimits at 296.
	propAPIVersion          = 0
	propDeviceType          = 16
	propDeviceName          = 20
	propLimits              = 296
	limMaxStorageBuffer     = propLimits + 28
	limMaxPushConstants     = propLimits + 32
	limMaxComputeGroupCount = propLimits + 220

	// Indices of VkBool32 members of VkPhysicalDeviceFeatures.
	featShaderFloat64 = 156 / 4
	featShaderInt64   = 160 / 4
)

func makeVersion(major, minor uint32) uint32 { return major<<22 | minor<<12 }

type vkApplicationInfo struct {
	sType            uint32
	_                unsafe.Pointer // pNext (unused, C layout)
	pApplicationName *byte
	_                uint32 // applicationVersion (unused, C layout)
	pEngineName      *byte
	_                uint32 // engineVersion (unused, C layout)
	apiVersion       uint32
}

type vkInstanceCreateInfo struct {
	sType                   uint32
	pNext                   unsafe.Pointer
	flags                   uint32
	pApplicationInfo        *vkApplicationInfo
	enabledLayerCount       uint32
	ppEnabledLayerNames     unsafe.Pointer
	enabledExtensionCount   uint32
	ppEnabledExtensionNames unsafe.Pointer
}

type vkPhysicalDeviceProperties [824 / 8]uint64

func (p *vkPhysicalDeviceProperties) u32(off int) uint32 {
	return *(*uint32)(unsafe.Add(unsafe.Pointer(p), off))
}

func (p *vkPhysicalDeviceProperties) name() string {
	b := unsafe.Slice((*byte)(unsafe.Add(unsafe.Pointer(p), propDeviceName)), 256)
	return cString(b)
}

type vkQueueFamilyProperties struct {
	queueFlags                  uint32
	queueCount                  uint32
	timestampValidBits          uint32
	minImageTransferGranularity [3]uint32
}

type vkMemoryType struct {
	propertyFlags uint32
	heapIndex     uint32
}

type vkMemoryHeap struct {
	size  uint64
	flags uint32
}

type vkPhysicalDeviceMemoryProperties struct {
	memoryTypeCount uint32
	memoryTypes     [32]vkMemoryType
	memoryHeapCount uint32
	memoryHeaps     [16]vkMemoryHeap
}

type vkPhysicalDeviceFeatures [55]uint32

type vkPhysicalDeviceFeatures2 struct {
	sType    uint32
	pNext    unsafe.Pointer
	features vkPhysicalDeviceFeatures
}

type vkPhysicalDeviceProperties2 struct {
	sType      uint32
	pNext      unsafe.Pointer
	properties vkPhysicalDeviceProperties
}

// vkPhysicalDeviceFloatControlsProperties is Vulkan 1.2's VkPhysicalDeviceFloatControlsProperties.
type vkPhysicalDeviceFloatControlsProperties struct {
	sType                      uint32
	pNext                      unsafe.Pointer
	denormBehaviorIndependence uint32
	roundingModeIndependence   uint32
	// shaderSignedZeroInfNanPreserveFloat16, 32, 64, shaderDenormPreserveFloat16, 32, 64,
	// then DenormFlushToZero, RoundingModeRTE and RoundingModeRTZ, each for 16, 32, 64.
	flags [15]uint32
}

// Indices into vkPhysicalDeviceFloatControlsProperties.flags, and its independence values.
const (
	fcSignedZero32       = 1
	fcSignedZero64       = 2
	fcDenormPreserve32   = 4
	fcDenormPreserve64   = 5
	fcIndependence32Only = 0
	fcIndependenceAll    = 1
	fcIndependenceNone   = 2
)

type vkPhysicalDeviceShaderAtomicFloatFeatures struct {
	sType uint32
	pNext unsafe.Pointer
	// shaderBufferFloat32Atomics, shaderBufferFloat32AtomicAdd, shaderBufferFloat64Atomics,
	// shaderBufferFloat64AtomicAdd, then shared/image/sparse variants.
	flags [12]uint32
}

type vkPhysicalDeviceShaderAtomicInt64Features struct {
	sType                    uint32
	pNext                    unsafe.Pointer
	shaderBufferInt64Atomics uint32
	shaderSharedInt64Atomics uint32
}

type vkExtensionProperties struct {
	extensionName [256]byte
	specVersion   uint32
}

type vkDeviceQueueCreateInfo struct {
	sType            uint32
	_                unsafe.Pointer // pNext (unused, C layout)
	_                uint32         // flags (unused, C layout)
	queueFamilyIndex uint32
	queueCount       uint32
	pQueuePriorities *float32
}

type vkDeviceCreateInfo struct {
	sType                   uint32
	pNext                   unsafe.Pointer
	flags                   uint32
	queueCreateInfoCount    uint32
	pQueueCreateInfos       *vkDeviceQueueCreateInfo
	enabledLayerCount       uint32
	ppEnabledLayerNames     unsafe.Pointer
	enabledExtensionCount   uint32
	ppEnabledExtensionNames unsafe.Pointer
	pEnabledFeatures        *vkPhysicalDeviceFeatures
}

type vkBufferCreateInfo struct {
	sType                 uint32
	pNext                 unsafe.Pointer
	flags                 uint32
	size                  uint64
	usage                 uint32
	sharingMode           uint32
	queueFamilyIndexCount uint32
	pQueueFamilyIndices   unsafe.Pointer
}

type vkMemoryRequirements struct {
	size           uint64
	alignment      uint64
	memoryTypeBits uint32
}

type vkMemoryAllocateInfo struct {
	sType           uint32
	pNext           unsafe.Pointer
	allocationSize  uint64
	memoryTypeIndex uint32
}

type vkShaderModuleCreateInfo struct {
	sType    uint32
	pNext    unsafe.Pointer
	flags    uint32
	codeSize uintptr
	pCode    *uint32
}

type vkDescriptorSetLayoutBinding struct {
	binding         uint32
	descriptorType  uint32
	descriptorCount uint32
	stageFlags      uint32
	_               unsafe.Pointer // pImmutableSamplers (unused, C layout)
}

type vkDescriptorSetLayoutCreateInfo struct {
	sType        uint32
	pNext        unsafe.Pointer
	flags        uint32
	bindingCount uint32
	pBindings    *vkDescriptorSetLayoutBinding
}

type vkPushConstantRange struct {
	stageFlags uint32
	_          uint32 // offset (unused, C layout)
	size       uint32
}

type vkPipelineLayoutCreateInfo struct {
	sType                  uint32
	pNext                  unsafe.Pointer
	flags                  uint32
	setLayoutCount         uint32
	pSetLayouts            *uintptr
	pushConstantRangeCount uint32
	pPushConstantRanges    *vkPushConstantRange
}

type vkPipelineShaderStageCreateInfo struct {
	sType               uint32
	pNext               unsafe.Pointer
	flags               uint32
	stage               uint32
	module              uintptr
	pName               *byte
	pSpecializationInfo *vkSpecializationInfo
}

type vkSpecializationMapEntry struct {
	constantID uint32
	offset     uint32
	size       uintptr
}

type vkSpecializationInfo struct {
	mapEntryCount uint32
	pMapEntries   *vkSpecializationMapEntry
	dataSize      uintptr
	pData         unsafe.Pointer
}

type vkComputePipelineCreateInfo struct {
	sType              uint32
	pNext              unsafe.Pointer
	flags              uint32
	stage              vkPipelineShaderStageCreateInfo
	layout             uintptr
	basePipelineHandle uintptr
	basePipelineIndex  int32
}

type vkDescriptorPoolSize struct {
	typ             uint32
	descriptorCount uint32
}

type vkDescriptorPoolCreateInfo struct {
	sType         uint32
	pNext         unsafe.Pointer
	flags         uint32
	maxSets       uint32
	poolSizeCount uint32
	pPoolSizes    *vkDescriptorPoolSize
}

type vkDescriptorSetAllocateInfo struct {
	sType              uint32
	pNext              unsafe.Pointer
	descriptorPool     uintptr
	descriptorSetCount uint32
	pSetLayouts        *uintptr
}

type vkDescriptorBufferInfo struct {
	buffer uintptr
	_      uint64 // offset (unused, C layout)
	rng    uint64
}

type vkWriteDescriptorSet struct {
	sType            uint32
	pNext            unsafe.Pointer
	dstSet           uintptr
	dstBinding       uint32
	dstArrayElement  uint32
	descriptorCount  uint32
	descriptorType   uint32
	pImageInfo       unsafe.Pointer
	pBufferInfo      *vkDescriptorBufferInfo
	pTexelBufferView unsafe.Pointer
}

type vkCommandPoolCreateInfo struct {
	sType            uint32
	pNext            unsafe.Pointer
	flags            uint32
	queueFamilyIndex uint32
}

type vkCommandBufferAllocateInfo struct {
	sType              uint32
	pNext              unsafe.Pointer
	commandPool        uintptr
	level              uint32
	commandBufferCount uint32
}

type vkCommandBufferBeginInfo struct {
	sType            uint32
	pNext            unsafe.Pointer
	flags            uint32
	pInheritanceInfo unsafe.Pointer
}

type vkMemoryBarrier struct {
	sType         uint32
	pNext         unsafe.Pointer
	srcAccessMask uint32
	dstAccessMask uint32
}

type vkSubmitInfo struct {
	sType                uint32
	pNext                unsafe.Pointer
	waitSemaphoreCount   uint32
	pWaitSemaphores      unsafe.Pointer
	pWaitDstStageMask    unsafe.Pointer
	commandBufferCount   uint32
	pCommandBuffers      *uintptr
	signalSemaphoreCount uint32
	pSignalSemaphores    unsafe.Pointer
}

type vkBufferCopy struct {
	srcOffset uint64
	dstOffset uint64
	size      uint64
}

type vkFenceCreateInfo struct {
	sType uint32
	pNext unsafe.Pointer
	flags uint32
}

// vk holds the entry points of one loaded libvulkan. Pointer arguments are unsafe.Pointer;
// the caller keeps the pointed-to Go values alive (runtime.KeepAlive) until the call returns.
type vk struct {
	lib uintptr

	enumerateInstanceVersion           func(version unsafe.Pointer) int32 // nil before Vulkan 1.1
	createInstance                     func(info, alloc, out unsafe.Pointer) int32
	destroyInstance                    func(instance uintptr, alloc unsafe.Pointer)
	enumeratePhysicalDevices           func(instance uintptr, count, out unsafe.Pointer) int32
	getPhysicalDeviceProperties        func(pd uintptr, out unsafe.Pointer)
	getPhysicalDeviceQueueFamilyProps  func(pd uintptr, count, out unsafe.Pointer)
	getPhysicalDeviceMemoryProperties  func(pd uintptr, out unsafe.Pointer)
	getPhysicalDeviceFeatures          func(pd uintptr, out unsafe.Pointer)
	getPhysicalDeviceFeatures2         func(pd uintptr, out unsafe.Pointer) // nil before Vulkan 1.1
	getPhysicalDeviceProperties2       func(pd uintptr, out unsafe.Pointer) // nil before Vulkan 1.1
	enumerateDeviceExtensionProperties func(pd uintptr, layer, count, out unsafe.Pointer) int32
	createDevice                       func(pd uintptr, info, alloc, out unsafe.Pointer) int32
	destroyDevice                      func(device uintptr, alloc unsafe.Pointer)
	getDeviceQueue                     func(device uintptr, family, index uint32, out unsafe.Pointer)
	deviceWaitIdle                     func(device uintptr) int32
	createBuffer                       func(device uintptr, info, alloc, out unsafe.Pointer) int32
	destroyBuffer                      func(device, buffer uintptr, alloc unsafe.Pointer)
	getBufferMemoryRequirements        func(device, buffer uintptr, out unsafe.Pointer)
	allocateMemory                     func(device uintptr, info, alloc, out unsafe.Pointer) int32
	freeMemory                         func(device, memory uintptr, alloc unsafe.Pointer)
	bindBufferMemory                   func(device, buffer, memory uintptr, offset uint64) int32
	mapMemory                          func(device, memory uintptr, offset, size uint64, flags uint32, out unsafe.Pointer) int32
	unmapMemory                        func(device, memory uintptr)
	createShaderModule                 func(device uintptr, info, alloc, out unsafe.Pointer) int32
	destroyShaderModule                func(device, module uintptr, alloc unsafe.Pointer)
	createDescriptorSetLayout          func(device uintptr, info, alloc, out unsafe.Pointer) int32
	destroyDescriptorSetLayout         func(device, layout uintptr, alloc unsafe.Pointer)
	createPipelineLayout               func(device uintptr, info, alloc, out unsafe.Pointer) int32
	destroyPipelineLayout              func(device, layout uintptr, alloc unsafe.Pointer)
	createComputePipelines             func(device, cache uintptr, count uint32, infos, alloc, out unsafe.Pointer) int32
	destroyPipeline                    func(device, pipeline uintptr, alloc unsafe.Pointer)
	createDescriptorPool               func(device uintptr, info, alloc, out unsafe.Pointer) int32
	destroyDescriptorPool              func(device, pool uintptr, alloc unsafe.Pointer)
	allocateDescriptorSets             func(device uintptr, info, out unsafe.Pointer) int32
	updateDescriptorSets               func(device uintptr, writeCount uint32, writes unsafe.Pointer, copyCount uint32, copies unsafe.Pointer)
	createCommandPool                  func(device uintptr, info, alloc, out unsafe.Pointer) int32
	destroyCommandPool                 func(device, pool uintptr, alloc unsafe.Pointer)
	allocateCommandBuffers             func(device uintptr, info, out unsafe.Pointer) int32
	beginCommandBuffer                 func(cb uintptr, info unsafe.Pointer) int32
	endCommandBuffer                   func(cb uintptr) int32
	resetCommandBuffer                 func(cb uintptr, flags uint32) int32
	cmdBindPipeline                    func(cb uintptr, bindPoint uint32, pipeline uintptr)
	cmdBindDescriptorSets              func(cb uintptr, bindPoint uint32, layout uintptr, first, count uint32, sets unsafe.Pointer, dynCount uint32, dyn unsafe.Pointer)
	cmdPushConstants                   func(cb, layout uintptr, stages, offset, size uint32, values unsafe.Pointer)
	cmdDispatch                        func(cb uintptr, x, y, z uint32)
	cmdCopyBuffer                      func(cb, src, dst uintptr, count uint32, regions unsafe.Pointer)
	cmdPipelineBarrier                 func(cb uintptr, src, dst, deps, memCount uint32, mem unsafe.Pointer, bufCount uint32, buf unsafe.Pointer, imgCount uint32, img unsafe.Pointer)
	queueSubmit                        func(queue uintptr, count uint32, submits unsafe.Pointer, fence uintptr) int32
	createFence                        func(device uintptr, info, alloc, out unsafe.Pointer) int32
	destroyFence                       func(device, fence uintptr, alloc unsafe.Pointer)
	waitForFences                      func(device uintptr, count uint32, fences unsafe.Pointer, waitAll uint32, timeout uint64) int32
	resetFences                        func(device uintptr, count uint32, fences unsafe.Pointer) int32
}

// libraryNames lists the names tried, in order, when loading the Vulkan loader.
func libraryNames() []string {
	switch runtime.GOOS {
	case "darwin":
		return []string{"libvulkan.1.dylib", "libvulkan.dylib", "libMoltenVK.dylib"}
	default:
		return []string{"libvulkan.so.1", "libvulkan.so"}
	}
}

// loadVK opens the Vulkan loader and resolves the entry points. It never panics: a missing
// symbol is an error (purego.RegisterLibFunc would panic, so symbols are looked up first).
func loadVK() (*vk, error) { return loadVKFrom(libraryNames()) }

// loadVKFrom tries the library names in order.
func loadVKFrom(names []string) (*vk, error) {
	var lib uintptr
	var firstErr error
	for _, name := range names {
		h, err := purego.Dlopen(name, purego.RTLD_NOW|purego.RTLD_LOCAL)
		if err == nil {
			lib = h
			break
		}
		if firstErr == nil {
			firstErr = err
		}
	}
	if lib == 0 {
		return nil, errors.Errorf("vulkan: open: %s not found: %v", names[0], firstErr)
	}
	v := &vk{lib: lib}
	fns := []struct {
		fptr     any
		name     string
		optional bool
	}{
		{&v.enumerateInstanceVersion, "vkEnumerateInstanceVersion", true},
		{&v.createInstance, "vkCreateInstance", false},
		{&v.destroyInstance, "vkDestroyInstance", false},
		{&v.enumeratePhysicalDevices, "vkEnumeratePhysicalDevices", false},
		{&v.getPhysicalDeviceProperties, "vkGetPhysicalDeviceProperties", false},
		{&v.getPhysicalDeviceQueueFamilyProps, "vkGetPhysicalDeviceQueueFamilyProperties", false},
		{&v.getPhysicalDeviceMemoryProperties, "vkGetPhysicalDeviceMemoryProperties", false},
		{&v.getPhysicalDeviceFeatures, "vkGetPhysicalDeviceFeatures", false},
		{&v.getPhysicalDeviceFeatures2, "vkGetPhysicalDeviceFeatures2", true},
		{&v.getPhysicalDeviceProperties2, "vkGetPhysicalDeviceProperties2", true},
		{&v.enumerateDeviceExtensionProperties, "vkEnumerateDeviceExtensionProperties", false},
		{&v.createDevice, "vkCreateDevice", false},
		{&v.destroyDevice, "vkDestroyDevice", false},
		{&v.getDeviceQueue, "vkGetDeviceQueue", false},
		{&v.deviceWaitIdle, "vkDeviceWaitIdle", false},
		{&v.createBuffer, "vkCreateBuffer", false},
		{&v.destroyBuffer, "vkDestroyBuffer", false},
		{&v.getBufferMemoryRequirements, "vkGetBufferMemoryRequirements", false},
		{&v.allocateMemory, "vkAllocateMemory", false},
		{&v.freeMemory, "vkFreeMemory", false},
		{&v.bindBufferMemory, "vkBindBufferMemory", false},
		{&v.mapMemory, "vkMapMemory", false},
		{&v.unmapMemory, "vkUnmapMemory", false},
		{&v.createShaderModule, "vkCreateShaderModule", false},
		{&v.destroyShaderModule, "vkDestroyShaderModule", false},
		{&v.createDescriptorSetLayout, "vkCreateDescriptorSetLayout", false},
		{&v.destroyDescriptorSetLayout, "vkDestroyDescriptorSetLayout", false},
		{&v.createPipelineLayout, "vkCreatePipelineLayout", false},
		{&v.destroyPipelineLayout, "vkDestroyPipelineLayout", false},
		{&v.createComputePipelines, "vkCreateComputePipelines", false},
		{&v.destroyPipeline, "vkDestroyPipeline", false},
		{&v.createDescriptorPool, "vkCreateDescriptorPool", false},
		{&v.destroyDescriptorPool, "vkDestroyDescriptorPool", false},
		{&v.allocateDescriptorSets, "vkAllocateDescriptorSets", false},
		{&v.updateDescriptorSets, "vkUpdateDescriptorSets", false},
		{&v.createCommandPool, "vkCreateCommandPool", false},
		{&v.destroyCommandPool, "vkDestroyCommandPool", false},
		{&v.allocateCommandBuffers, "vkAllocateCommandBuffers", false},
		{&v.beginCommandBuffer, "vkBeginCommandBuffer", false},
		{&v.endCommandBuffer, "vkEndCommandBuffer", false},
		{&v.resetCommandBuffer, "vkResetCommandBuffer", false},
		{&v.cmdBindPipeline, "vkCmdBindPipeline", false},
		{&v.cmdBindDescriptorSets, "vkCmdBindDescriptorSets", false},
		{&v.cmdPushConstants, "vkCmdPushConstants", false},
		{&v.cmdDispatch, "vkCmdDispatch", false},
		{&v.cmdCopyBuffer, "vkCmdCopyBuffer", false},
		{&v.cmdPipelineBarrier, "vkCmdPipelineBarrier", false},
		{&v.queueSubmit, "vkQueueSubmit", false},
		{&v.createFence, "vkCreateFence", false},
		{&v.destroyFence, "vkDestroyFence", false},
		{&v.waitForFences, "vkWaitForFences", false},
		{&v.resetFences, "vkResetFences", false},
	}
	for _, f := range fns {
		addr, err := purego.Dlsym(lib, f.name)
		if err != nil || addr == 0 {
			if f.optional {
				continue
			}
			return nil, errors.Errorf("vulkan: open: %s has no symbol %s: %v", names[0], f.name, err)
		}
		purego.RegisterFunc(f.fptr, addr)
	}
	return v, nil
}

// cString returns the NUL-terminated prefix of b.
func cString(b []byte) string {
	for i, c := range b {
		if c == 0 {
			return string(b[:i])
		}
	}
	return string(b)
}

// cStr returns a NUL-terminated copy of s for passing to C.
func cStr(s string) *byte {
	b := make([]byte, len(s)+1)
	copy(b, s)
	return &b[0]
}

// vkError turns a negative VkResult into an error naming the operation.
func vkError(op string, r int32) error {
	return errors.Errorf("vulkan: %s: %s", op, resultName(r))
}

func resultName(r int32) string {
	switch r {
	case vkTimeout:
		return "VK_TIMEOUT"
	case -1:
		return "VK_ERROR_OUT_OF_HOST_MEMORY"
	case -2:
		return "VK_ERROR_OUT_OF_DEVICE_MEMORY"
	case -3:
		return "VK_ERROR_INITIALIZATION_FAILED"
	case -4:
		return "VK_ERROR_DEVICE_LOST"
	case -5:
		return "VK_ERROR_MEMORY_MAP_FAILED"
	case -6:
		return "VK_ERROR_LAYER_NOT_PRESENT"
	case -7:
		return "VK_ERROR_EXTENSION_NOT_PRESENT"
	case -8:
		return "VK_ERROR_FEATURE_NOT_PRESENT"
	case -9:
		return "VK_ERROR_INCOMPATIBLE_DRIVER (no Vulkan driver installed?)"
	case -10:
		return "VK_ERROR_TOO_MANY_OBJECTS"
	case -13:
		return "VK_ERROR_UNKNOWN"
	case -1000069000:
		return "VK_ERROR_OUT_OF_POOL_MEMORY"
	case -1000012000:
		return "VK_ERROR_INVALID_SHADER_NV"
	}
	return "VkResult " + strconv.Itoa(int(r))
}
