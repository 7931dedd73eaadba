//go:build (linux || darwin || freebsd) && (amd64 || arm64) && !novulkan

package vulkan

import (
	"runtime"
	"strconv"
	"sync"
	"time"
	"unsafe"

	"github.com/pkg/errors"
)

// loadLibrary opens the Vulkan loader once per process; every Device shares it.
var loadLibrary = sync.OnceValues(loadVK)

// numSlots is the number of storage buffer bindings every kernel's layout has.
const numSlots = 4

// pushBytes is the size of the push-constant range shared by all kernels (the minimum
// maxPushConstantsSize Vulkan guarantees).
const pushBytes = 128

// waitTimeout bounds one dispatch (lavapipe runs big matmuls slowly, real GPUs need far less).
const waitTimeout = 10 * time.Minute

// slot is a host-visible, host-coherent buffer, persistently mapped, and, when the device
// stages (discrete GPUs), a device-local twin that the shaders use; otherwise the shaders use
// the host-visible buffer directly.
type slot struct {
	buffer, memory       uintptr
	size                 uint64
	mapped               unsafe.Pointer
	devBuffer, devMemory uintptr
}

// shaderBuffer is the buffer the shaders bind.
func (s *slot) shaderBuffer() uintptr {
	if s.devBuffer != 0 {
		return s.devBuffer
	}
	return s.buffer
}

// Device is an open Vulkan logical device with one compute queue, its pipelines (created on
// first use of each kernel, then cached) and its buffers. A Device is safe for concurrent use;
// calls are serialised. Close it when done.
type Device struct {
	mu sync.Mutex
	v  *vk

	instance, physical, device, queue uintptr
	family                            uint32
	info                              Info
	needs                             int // feature bits (need*) the device satisfies
	fc                                floatControls
	// plainFloat32: run float32 element-wise kernels on the shaders without float64 even when
	// the device has float64 (set by tests, to run those shaders on lavapipe).
	plainFloat32 bool
	maxGroups    uint32
	// staging: buffers the shaders use live in device-local memory and are copied to and
	// from host-visible ones inside the submission (set when host-visible memory is not
	// device-local, i.e. discrete GPUs).
	staging bool

	dsLayout, pipeLayout, descPool, descSet, cmdPool, cmdBuf, fence uintptr
	slots                                                           [numSlots]slot
	pipelines                                                       map[string]uintptr

	timings Timings
	closed  bool
	broken  error // set when a dispatch timed out: the device may still use the buffers
}

// Open loads the Vulkan loader (once per process), picks the best physical device with a
// compute queue (discrete GPU > integrated > virtual > CPU) and creates a logical device on it.
// It returns an error when no Vulkan loader, driver or device is present.
func Open() (*Device, error) {
	v, err := loadLibrary()
	if err != nil {
		return nil, err
	}
	d := &Device{v: v, pipelines: map[string]uintptr{}}
	if err := d.init(); err != nil {
		d.destroy()
		return nil, err
	}
	return d, nil
}

func (d *Device) init() error {
	v := d.v
	instVersion := makeVersion(1, 0)
	if v.enumerateInstanceVersion != nil {
		var ver uint32
		if r := v.enumerateInstanceVersion(unsafe.Pointer(&ver)); r == vkSuccess {
			instVersion = ver
		}
	}
	api := makeVersion(1, 2)
	if instVersion < api {
		api = instVersion &^ 0xfff
	}
	app := &vkApplicationInfo{sType: stApplicationInfo, pApplicationName: cStr("bulkad"),
		pEngineName: cStr("bulkad"), apiVersion: api}
	ici := &vkInstanceCreateInfo{sType: stInstanceCreateInfo, pApplicationInfo: app}
	if r := v.createInstance(unsafe.Pointer(ici), nil, unsafe.Pointer(&d.instance)); r != vkSuccess {
		return vkError("open: create instance", r)
	}
	runtime.KeepAlive(ici)

	var count uint32
	if r := v.enumeratePhysicalDevices(d.instance, unsafe.Pointer(&count), nil); r != vkSuccess && r != vkIncomplete {
		return vkError("open: enumerate devices", r)
	}
	if count == 0 {
		return errors.New("vulkan: open: no Vulkan device (a driver is needed, e.g. mesa-vulkan-drivers for lavapipe)")
	}
	pds := make([]uintptr, count)
	if r := v.enumeratePhysicalDevices(d.instance, unsafe.Pointer(&count), unsafe.Pointer(&pds[0])); r != vkSuccess && r != vkIncomplete {
		return vkError("open: enumerate devices", r)
	}
	bestScore := -1
	var best vkPhysicalDeviceProperties
	for _, pd := range pds[:count] {
		var props vkPhysicalDeviceProperties
		v.getPhysicalDeviceProperties(pd, unsafe.Pointer(&props))
		fam, ok := computeFamily(v, pd)
		if !ok {
			continue
		}
		if _, ok := hostMemoryType(v, pd, ^uint32(0)); !ok {
			continue
		}
		score := typeScore(props.u32(propDeviceType))
		if score > bestScore {
			bestScore, best, d.physical, d.family = score, props, pd, fam
		}
	}
	if bestScore < 0 {
		return errors.Errorf("vulkan: open: none of %d devices has a compute queue and host-visible memory", count)
	}
	devAPI := best.u32(propAPIVersion)
	d.info = Info{
		Name:           best.name(),
		Type:           DeviceType(best.u32(propDeviceType)),
		APIVersion:     versionString(devAPI),
		MaxBufferBytes: uint64(best.u32(limMaxStorageBuffer)),
	}
	if d.info.Type > CPU {
		d.info.Type = Other
	}
	maxGroups := best.u32(limMaxComputeGroupCount)
	if maxGroups > 65535 {
		maxGroups = 65535
	}
	d.maxGroups = maxGroups
	d.info.MaxWorkgroups = maxGroups
	if best.u32(limMaxPushConstants) < pushBytes {
		return errors.Errorf("vulkan: open: %s allows %d push-constant bytes, need %d", d.info.Name, best.u32(limMaxPushConstants), pushBytes)
	}
	return d.createDevice(api, devAPI)
}

// createDevice queries the optional features, enables those the kernels use and creates the
// logical device and every per-device object except pipelines and buffers.
func (d *Device) createDevice(api, devAPI uint32) error {
	v := d.v
	exts := deviceExtensions(v, d.physical)
	useFeatures2 := v.getPhysicalDeviceFeatures2 != nil && api >= makeVersion(1, 1) && devAPI >= makeVersion(1, 1)
	hasAtomicFloat := useFeatures2 && exts["VK_EXT_shader_atomic_float"]
	hasAtomicInt64 := useFeatures2 && exts["VK_KHR_shader_atomic_int64"]

	var feats vkPhysicalDeviceFeatures
	has := newFeatureChain(hasAtomicFloat, hasAtomicInt64)
	if useFeatures2 {
		v.getPhysicalDeviceFeatures2(d.physical, unsafe.Pointer(&has.f2))
		feats = has.f2.features
	} else {
		v.getPhysicalDeviceFeatures(d.physical, unsafe.Pointer(&feats))
	}
	float64OK := feats[featShaderFloat64] != 0
	int64OK := feats[featShaderInt64] != 0
	atomicAdd := hasAtomicFloat && has.atomicFloat.flags[1] != 0
	// 64-bit atomics need 64-bit integers in shaders as well.
	int64Atomics := hasAtomicInt64 && has.atomicInt64.shaderBufferInt64Atomics != 0 && int64OK

	// Enable exactly what is used.
	var enable vkPhysicalDeviceFeatures
	if float64OK {
		enable[featShaderFloat64] = 1
	}
	if int64Atomics {
		enable[featShaderInt64] = 1
	}
	var extNames []*byte
	en := newFeatureChain(atomicAdd, int64Atomics)
	en.f2.features = enable
	dci := &vkDeviceCreateInfo{sType: stDeviceCreateInfo}
	if useFeatures2 {
		if atomicAdd {
			en.atomicFloat.flags[1] = 1
			extNames = append(extNames, cStr("VK_EXT_shader_atomic_float"))
		}
		if int64Atomics {
			en.atomicInt64.shaderBufferInt64Atomics = 1
			extNames = append(extNames, cStr("VK_KHR_shader_atomic_int64"))
		}
		dci.pNext = unsafe.Pointer(&en.f2)
	} else {
		dci.pEnabledFeatures = &enable
	}
	prio := float32(1)
	qci := &vkDeviceQueueCreateInfo{sType: stDeviceQueueCreateInfo, queueFamilyIndex: d.family, queueCount: 1, pQueuePriorities: &prio}
	dci.queueCreateInfoCount = 1
	dci.pQueueCreateInfos = qci
	if len(extNames) > 0 {
		dci.enabledExtensionCount = uint32(len(extNames))
		dci.ppEnabledExtensionNames = unsafe.Pointer(&extNames[0])
	}
	if r := v.createDevice(d.physical, unsafe.Pointer(dci), nil, unsafe.Pointer(&d.device)); r != vkSuccess {
		return vkError("open: create device on "+d.info.Name, r)
	}
	runtime.KeepAlive(dci)
	runtime.KeepAlive(qci)
	runtime.KeepAlive(en)
	runtime.KeepAlive(extNames)

	d.info.Float64 = float64OK
	d.info.AtomicFloat32Add = atomicAdd
	d.info.Int64Atomics = int64Atomics
	if float64OK {
		d.needs |= needFloat64
	}
	if atomicAdd {
		d.needs |= needAtomicFloat32
	}
	if float64OK && int64Atomics {
		d.needs |= needFloat64Atomics
	}
	d.fc = queryFloatControls(v, d.physical, api, devAPI)
	d.info.Float32Subnormals = d.fc.denorm[32] || d.info.Type == CPU
	d.info.SignedZeros = d.fc.signedZero[32]
	v.getDeviceQueue(d.device, d.family, 0, unsafe.Pointer(&d.queue))
	return d.createObjects()
}

// queryFloatControls reads VkPhysicalDeviceFloatControlsProperties where both the instance
// and the device speak Vulkan 1.2 (where it and SPV_KHR_float_controls are core); otherwise
// the device promises nothing and the shaders run without float-control modes.
func queryFloatControls(v *vk, pd uintptr, api, devAPI uint32) floatControls {
	fc := floatControls{denorm: map[uint32]bool{}, signedZero: map[uint32]bool{}, independence: fcIndependenceNone}
	if v.getPhysicalDeviceProperties2 == nil || api < makeVersion(1, 2) || devAPI < makeVersion(1, 2) {
		return fc
	}
	props := &vkPhysicalDeviceFloatControlsProperties{sType: stPhysicalDeviceFloatControlsProps}
	p2 := &vkPhysicalDeviceProperties2{sType: stPhysicalDeviceProperties2, pNext: unsafe.Pointer(props)}
	v.getPhysicalDeviceProperties2(pd, unsafe.Pointer(p2))
	runtime.KeepAlive(p2)
	runtime.KeepAlive(props)
	fc.independence = props.denormBehaviorIndependence
	fc.signedZero[32] = props.flags[fcSignedZero32] != 0
	fc.signedZero[64] = props.flags[fcSignedZero64] != 0
	fc.denorm[32] = props.flags[fcDenormPreserve32] != 0
	fc.denorm[64] = props.flags[fcDenormPreserve64] != 0
	return fc
}

// featureChain is a VkPhysicalDeviceFeatures2 and the extension feature structures the
// kernels use, the latter linked into its pNext chain when their extension is used: filled
// by the feature query, or set to what the logical device enables.
type featureChain struct {
	f2          vkPhysicalDeviceFeatures2
	atomicFloat vkPhysicalDeviceShaderAtomicFloatFeatures
	atomicInt64 vkPhysicalDeviceShaderAtomicInt64Features
}

func newFeatureChain(atomicFloat, atomicInt64 bool) *featureChain {
	c := &featureChain{
		f2:          vkPhysicalDeviceFeatures2{sType: stPhysicalDeviceFeatures2},
		atomicFloat: vkPhysicalDeviceShaderAtomicFloatFeatures{sType: stPhysicalDeviceAtomicFloatFeature},
		atomicInt64: vkPhysicalDeviceShaderAtomicInt64Features{sType: stPhysicalDeviceAtomicInt64},
	}
	if atomicInt64 {
		c.atomicInt64.pNext, c.f2.pNext = c.f2.pNext, unsafe.Pointer(&c.atomicInt64)
	}
	if atomicFloat {
		c.atomicFloat.pNext, c.f2.pNext = c.f2.pNext, unsafe.Pointer(&c.atomicFloat)
	}
	return c
}

func (d *Device) createObjects() error {
	v := d.v
	var binds [numSlots]vkDescriptorSetLayoutBinding
	for i := range binds {
		binds[i] = vkDescriptorSetLayoutBinding{binding: uint32(i), descriptorType: descriptorStorageBuffer, descriptorCount: 1, stageFlags: shaderStageCompute}
	}
	dslci := &vkDescriptorSetLayoutCreateInfo{sType: stDescriptorSetLayoutCreateInfo, bindingCount: numSlots, pBindings: &binds[0]}
	if err := d.create(v.createDescriptorSetLayout, unsafe.Pointer(dslci), &d.dsLayout, "open: create descriptor set layout"); err != nil {
		return err
	}
	pcr := &vkPushConstantRange{stageFlags: shaderStageCompute, size: pushBytes}
	plci := &vkPipelineLayoutCreateInfo{sType: stPipelineLayoutCreateInfo, setLayoutCount: 1, pSetLayouts: &d.dsLayout, pushConstantRangeCount: 1, pPushConstantRanges: pcr}
	if err := d.create(v.createPipelineLayout, unsafe.Pointer(plci), &d.pipeLayout, "open: create pipeline layout"); err != nil {
		return err
	}
	ps := &vkDescriptorPoolSize{typ: descriptorStorageBuffer, descriptorCount: numSlots}
	dpci := &vkDescriptorPoolCreateInfo{sType: stDescriptorPoolCreateInfo, maxSets: 1, poolSizeCount: 1, pPoolSizes: ps}
	if err := d.create(v.createDescriptorPool, unsafe.Pointer(dpci), &d.descPool, "open: create descriptor pool"); err != nil {
		return err
	}
	dsai := &vkDescriptorSetAllocateInfo{sType: stDescriptorSetAllocateInfo, descriptorPool: d.descPool, descriptorSetCount: 1, pSetLayouts: &d.dsLayout}
	if err := d.allocate(v.allocateDescriptorSets, unsafe.Pointer(dsai), &d.descSet, "open: allocate descriptor set"); err != nil {
		return err
	}
	cpci := &vkCommandPoolCreateInfo{sType: stCommandPoolCreateInfo, flags: commandPoolResetBuffer, queueFamilyIndex: d.family}
	if err := d.create(v.createCommandPool, unsafe.Pointer(cpci), &d.cmdPool, "open: create command pool"); err != nil {
		return err
	}
	cbai := &vkCommandBufferAllocateInfo{sType: stCommandBufferAllocateInfo, commandPool: d.cmdPool, level: commandBufferLevelPrimary, commandBufferCount: 1}
	if err := d.allocate(v.allocateCommandBuffers, unsafe.Pointer(cbai), &d.cmdBuf, "open: allocate command buffer"); err != nil {
		return err
	}
	if err := d.create(v.createFence, unsafe.Pointer(&vkFenceCreateInfo{sType: stFenceCreateInfo}), &d.fence, "open: create fence"); err != nil {
		return err
	}
	// Stage through device-local memory when host-visible memory is not device-local (and
	// some device-local memory exists): discrete GPUs.
	if mt, ok := hostMemoryType(v, d.physical, ^uint32(0)); ok {
		var mp vkPhysicalDeviceMemoryProperties
		v.getPhysicalDeviceMemoryProperties(d.physical, unsafe.Pointer(&mp))
		_, hasLocal := memoryTypeWith(v, d.physical, ^uint32(0), memoryDeviceLocal)
		d.staging = mp.memoryTypes[mt].propertyFlags&memoryDeviceLocal == 0 && hasLocal
	}
	d.info.Staging = d.staging
	for i := range d.slots {
		if err := d.ensureSlot(i, 256); err != nil {
			return err
		}
	}
	return nil
}

// create calls one of the device's vkCreate* (or vkAllocateMemory) functions with info,
// storing the new handle in out; what names the call in the error.
func (d *Device) create(fn func(device uintptr, info, alloc, out unsafe.Pointer) int32, info unsafe.Pointer, out *uintptr, what string) error {
	r := fn(d.device, info, nil, unsafe.Pointer(out))
	runtime.KeepAlive(info)
	if r != vkSuccess {
		return vkError(what, r)
	}
	return nil
}

// allocate is create for the vkAllocate* functions of objects from pools (no allocator).
func (d *Device) allocate(fn func(device uintptr, info, out unsafe.Pointer) int32, info unsafe.Pointer, out *uintptr, what string) error {
	r := fn(d.device, info, unsafe.Pointer(out))
	runtime.KeepAlive(info)
	if r != vkSuccess {
		return vkError(what, r)
	}
	return nil
}

// release destroys (or frees) the device's object h with fn when it was created (h != 0).
func (d *Device) release(fn func(device, h uintptr, alloc unsafe.Pointer), h uintptr) {
	if h != 0 {
		fn(d.device, h, nil)
	}
}

func typeScore(t uint32) int {
	switch t {
	case physicalDeviceTypeDiscrete:
		return 4
	case physicalDeviceTypeIntegrate:
		return 3
	case physicalDeviceTypeVirtual:
		return 2
	case physicalDeviceTypeCPU:
		return 1
	}
	return 0
}

func versionString(v uint32) string {
	return strconv.Itoa(int(v>>22&0x7f)) + "." + strconv.Itoa(int(v>>12&0x3ff)) + "." + strconv.Itoa(int(v&0xfff))
}

func computeFamily(v *vk, pd uintptr) (uint32, bool) {
	var n uint32
	v.getPhysicalDeviceQueueFamilyProps(pd, unsafe.Pointer(&n), nil)
	if n == 0 {
		return 0, false
	}
	fams := make([]vkQueueFamilyProperties, n)
	v.getPhysicalDeviceQueueFamilyProps(pd, unsafe.Pointer(&n), unsafe.Pointer(&fams[0]))
	for i, f := range fams[:n] {
		if f.queueFlags&queueComputeBit != 0 && f.queueCount > 0 {
			return uint32(i), true
		}
	}
	return 0, false
}

// hostMemoryType picks a host-visible, host-coherent memory type among typeBits, preferring
// host-cached memory (fast read-back).
func hostMemoryType(v *vk, pd uintptr, typeBits uint32) (uint32, bool) {
	var mp vkPhysicalDeviceMemoryProperties
	v.getPhysicalDeviceMemoryProperties(pd, unsafe.Pointer(&mp))
	want := uint32(memoryHostVisible | memoryHostCoherent)
	for _, extra := range []uint32{memoryHostCached, 0} {
		for i := uint32(0); i < mp.memoryTypeCount && i < 32; i++ {
			if typeBits&(1<<i) == 0 {
				continue
			}
			f := mp.memoryTypes[i].propertyFlags
			if f&(want|extra) == want|extra {
				return i, true
			}
		}
	}
	return 0, false
}

func deviceExtensions(v *vk, pd uintptr) map[string]bool {
	var n uint32
	if r := v.enumerateDeviceExtensionProperties(pd, nil, unsafe.Pointer(&n), nil); r != vkSuccess || n == 0 {
		return nil
	}
	props := make([]vkExtensionProperties, n)
	if r := v.enumerateDeviceExtensionProperties(pd, nil, unsafe.Pointer(&n), unsafe.Pointer(&props[0])); r != vkSuccess && r != vkIncomplete {
		return nil
	}
	m := make(map[string]bool, n)
	for _, p := range props[:n] {
		m[cString(p.extensionName[:])] = true
	}
	return m
}

// ensureSlot makes slot i at least bytes large (it never shrinks).
func (d *Device) ensureSlot(i int, bytes int) error {
	need := uint64(bytes)
	if need < 256 {
		need = 256
	}
	s := &d.slots[i]
	if s.size >= need {
		return nil
	}
	if need > d.info.MaxBufferBytes {
		return unsupported("vulkan: buffer of %d bytes exceeds %s's storage buffer limit of %d bytes", need, d.info.Name, d.info.MaxBufferBytes)
	}
	size := uint64(4096)
	for size < need {
		size *= 2
	}
	if size > d.info.MaxBufferBytes {
		size = need
	}
	d.freeSlot(i)
	usage := uint32(bufferUsageStorage | bufferUsageTransferSrc | bufferUsageTransferDst)
	buf, mem, flags, err := d.newBuffer(size, usage, true)
	if err != nil {
		return err
	}
	s.buffer, s.memory, s.size = buf, mem, size
	var p unsafe.Pointer
	if r := d.v.mapMemory(d.device, s.memory, 0, ^uint64(0), 0, unsafe.Pointer(&p)); r != vkSuccess {
		return vkError("map memory", r)
	}
	s.mapped = p
	d.info.HostCachedMemory = flags&memoryHostCached != 0
	if d.staging {
		if s.devBuffer, s.devMemory, _, err = d.newBuffer(size, usage, false); err != nil {
			return err
		}
	}
	return nil
}

// newBuffer creates a buffer with its own memory: host-visible coherent memory (host), or
// device-local memory when there is some (else any memory type the buffer accepts).
func (d *Device) newBuffer(size uint64, usage uint32, host bool) (buf, mem uintptr, flags uint32, err error) {
	v := d.v
	bci := &vkBufferCreateInfo{sType: stBufferCreateInfo, size: size, usage: usage, sharingMode: sharingModeExclusive}
	if err := d.create(v.createBuffer, unsafe.Pointer(bci), &buf, "create buffer of "+strconv.Itoa(int(size))+" bytes"); err != nil {
		return 0, 0, 0, err
	}
	var req vkMemoryRequirements
	v.getBufferMemoryRequirements(d.device, buf, unsafe.Pointer(&req))
	var mt uint32
	var ok bool
	if host {
		mt, ok = hostMemoryType(v, d.physical, req.memoryTypeBits)
	} else {
		mt, ok = memoryTypeWith(v, d.physical, req.memoryTypeBits, memoryDeviceLocal)
		if !ok {
			mt, ok = memoryTypeWith(v, d.physical, req.memoryTypeBits, 0)
		}
	}
	if !ok {
		v.destroyBuffer(d.device, buf, nil)
		return 0, 0, 0, errors.Errorf("vulkan: create buffer: %s has no suitable memory type for storage buffers (host-visible: %v)", d.info.Name, host)
	}
	mai := &vkMemoryAllocateInfo{sType: stMemoryAllocateInfo, allocationSize: req.size, memoryTypeIndex: mt}
	if err := d.create(v.allocateMemory, unsafe.Pointer(mai), &mem, "allocate "+strconv.Itoa(int(req.size))+" bytes"); err != nil {
		v.destroyBuffer(d.device, buf, nil)
		return 0, 0, 0, err
	}
	if r := v.bindBufferMemory(d.device, buf, mem, 0); r != vkSuccess {
		v.destroyBuffer(d.device, buf, nil)
		v.freeMemory(d.device, mem, nil)
		return 0, 0, 0, vkError("bind buffer memory", r)
	}
	var mp vkPhysicalDeviceMemoryProperties
	v.getPhysicalDeviceMemoryProperties(d.physical, unsafe.Pointer(&mp))
	return buf, mem, mp.memoryTypes[mt].propertyFlags, nil
}

// memoryTypeWith returns the first memory type among typeBits having all of flags.
func memoryTypeWith(v *vk, pd uintptr, typeBits, flags uint32) (uint32, bool) {
	var mp vkPhysicalDeviceMemoryProperties
	v.getPhysicalDeviceMemoryProperties(pd, unsafe.Pointer(&mp))
	for i := uint32(0); i < mp.memoryTypeCount && i < 32; i++ {
		if typeBits&(1<<i) != 0 && mp.memoryTypes[i].propertyFlags&flags == flags {
			return i, true
		}
	}
	return 0, false
}

func (d *Device) freeSlot(i int) {
	s := &d.slots[i]
	v := d.v
	if s.mapped != nil {
		v.unmapMemory(d.device, s.memory)
	}
	d.release(v.destroyBuffer, s.buffer)
	d.release(v.freeMemory, s.memory)
	d.release(v.destroyBuffer, s.devBuffer)
	d.release(v.freeMemory, s.devMemory)
	*s = slot{}
}

// floatControlled adds the float-control execution modes the device allows for the module's
// float widths (floatModes): float32 subnormals kept and the signs of zeros respected where
// the driver would otherwise flush or ignore them.
func (d *Device) floatControlled(code []uint32) ([]uint32, error) {
	ins, err := spvInstructions(code)
	if err != nil {
		return nil, err
	}
	return withFloatControls(code, floatModes(floatWidths(ins), d.fc))
}

// pipeline returns the cached compute pipeline of a shader with the given specialization
// constants (ids 0, 1, …), creating it on first use.
func (d *Device) pipeline(shader string, spec []uint32) (uintptr, error) {
	key := shader
	for _, c := range spec {
		key += "/" + strconv.Itoa(int(c))
	}
	if p, ok := d.pipelines[key]; ok {
		return p, nil
	}
	code, err := shaderWords(shader)
	if err != nil {
		return 0, err
	}
	if code, err = d.floatControlled(code); err != nil {
		return 0, errors.Wrapf(err, "vulkan: shader %s", shader)
	}
	v := d.v
	smci := &vkShaderModuleCreateInfo{sType: stShaderModuleCreateInfo, codeSize: uintptr(4 * len(code)), pCode: &code[0]}
	var module uintptr
	err = d.create(v.createShaderModule, unsafe.Pointer(smci), &module, "create shader module "+shader)
	runtime.KeepAlive(code)
	if err != nil {
		return 0, err
	}
	defer v.destroyShaderModule(d.device, module, nil)
	cpci := &vkComputePipelineCreateInfo{
		sType: stComputePipelineCreateInfo,
		stage: vkPipelineShaderStageCreateInfo{sType: stPipelineShaderStageCreateInfo, stage: shaderStageCompute,
			module: module, pName: cStr("main")},
		layout:            d.pipeLayout,
		basePipelineIndex: -1,
	}
	var entries []vkSpecializationMapEntry
	var si *vkSpecializationInfo
	if len(spec) > 0 {
		data := append([]uint32(nil), spec...)
		entries = make([]vkSpecializationMapEntry, len(spec))
		for i := range entries {
			entries[i] = vkSpecializationMapEntry{constantID: uint32(i), offset: uint32(4 * i), size: 4}
		}
		si = &vkSpecializationInfo{mapEntryCount: uint32(len(spec)), pMapEntries: &entries[0],
			dataSize: uintptr(4 * len(data)), pData: unsafe.Pointer(&data[0])}
		cpci.stage.pSpecializationInfo = si
	}
	var p uintptr
	if r := v.createComputePipelines(d.device, 0, 1, unsafe.Pointer(cpci), nil, unsafe.Pointer(&p)); r != vkSuccess {
		return 0, vkError("create pipeline "+shader, r)
	}
	runtime.KeepAlive(cpci)
	runtime.KeepAlive(si)
	runtime.KeepAlive(entries)
	d.pipelines[key] = p
	return p, nil
}

// check reports whether the device can run a shader (nil) or why not.
func (d *Device) check(op, shader string) error {
	if d == nil {
		return errors.Errorf("vulkan: %s: no device", op)
	}
	needs, ok := shaderNeeds(shader)
	if !ok {
		return errors.Errorf("vulkan: %s: unknown shader %q", op, shader)
	}
	missing := needs &^ d.needs
	switch {
	case missing&needFloat64 != 0:
		return unsupported("vulkan: %s: %s has no shaderFloat64", op, d.info.Name)
	case missing&needAtomicFloat32 != 0:
		return unsupported("vulkan: %s: %s has no float32 atomic add", op, d.info.Name)
	case missing&needFloat64Atomics != 0:
		return unsupported("vulkan: %s: %s lacks shaderFloat64, shaderInt64 or 64-bit buffer atomics", op, d.info.Name)
	}
	if d.closed {
		return errors.Errorf("vulkan: %s: device closed", op)
	}
	return nil
}

// run executes one job: upload, dispatch with a COMPUTE→HOST barrier, wait, download.
func (d *Device) run(j job) error {
	if d == nil {
		return errors.Errorf("vulkan: %s: no device", j.op)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if err := d.check(j.op, j.shader); err != nil {
		return err
	}
	if d.broken != nil {
		return errors.Wrapf(d.broken, "vulkan: %s: device unusable", j.op)
	}
	if len(j.args) > numSlots {
		return errors.Errorf("vulkan: %s: %d buffers exceed the layout's %d", j.op, len(j.args), numSlots)
	}
	for _, p := range j.passes {
		if len(p.push)*4 > pushBytes {
			return errors.Errorf("vulkan: %s: %d push-constant words exceed the layout's %d bytes", j.op, len(p.push), pushBytes)
		}
	}
	pipe, err := d.pipeline(j.shader, j.spec)
	if err != nil {
		return errors.WithMessage(err, "vulkan: "+j.op)
	}
	v := d.v
	t0 := time.Now()
	for i, a := range j.args {
		if err := d.ensureSlot(i, a.bytes); err != nil {
			return errors.WithMessage(err, "vulkan: "+j.op)
		}
		if a.upload && a.bytes > 0 {
			copy(unsafe.Slice((*byte)(d.slots[i].mapped), a.bytes), unsafe.Slice((*byte)(a.ptr), a.bytes))
		}
	}
	t1 := time.Now()

	var infos [numSlots]vkDescriptorBufferInfo
	var writes [numSlots]vkWriteDescriptorSet
	for i := range infos {
		infos[i] = vkDescriptorBufferInfo{buffer: d.slots[i].shaderBuffer(), rng: d.slots[i].size}
		writes[i] = vkWriteDescriptorSet{sType: stWriteDescriptorSet, dstSet: d.descSet, dstBinding: uint32(i),
			descriptorCount: 1, descriptorType: descriptorStorageBuffer, pBufferInfo: &infos[i]}
	}
	v.updateDescriptorSets(d.device, numSlots, unsafe.Pointer(&writes[0]), 0, nil)
	runtime.KeepAlive(&infos)

	cb := d.cmdBuf
	if r := v.resetCommandBuffer(cb, 0); r != vkSuccess {
		return vkError(j.op+": reset command buffer", r)
	}
	cbbi := &vkCommandBufferBeginInfo{sType: stCommandBufferBeginInfo, flags: commandBufferOneTimeSubmit}
	toShader := &vkMemoryBarrier{sType: stMemoryBarrier, srcAccessMask: accessTransferWrite, dstAccessMask: accessShaderRead | accessShaderWrite}
	toTransfer := &vkMemoryBarrier{sType: stMemoryBarrier, srcAccessMask: accessShaderWrite, dstAccessMask: accessTransferRead}
	transferToHost := &vkMemoryBarrier{sType: stMemoryBarrier, srcAccessMask: accessTransferWrite, dstAccessMask: accessHostRead}
	var back [numSlots]vkBufferCopy
	if r := v.beginCommandBuffer(cb, unsafe.Pointer(cbbi)); r != vkSuccess {
		return vkError(j.op+": begin command buffer", r)
	}
	var regions [numSlots]vkBufferCopy
	if d.staging {
		copied := false
		for i, a := range j.args {
			if a.upload && a.bytes > 0 {
				regions[i] = vkBufferCopy{size: uint64(a.bytes)}
				v.cmdCopyBuffer(cb, d.slots[i].buffer, d.slots[i].devBuffer, 1, unsafe.Pointer(&regions[i]))
				copied = true
			}
		}
		if copied {
			v.cmdPipelineBarrier(cb, pipelineStageTransfer, pipelineStageComputeShader, 0, 1, unsafe.Pointer(toShader), 0, nil, 0, nil)
		}
	}
	v.cmdBindPipeline(cb, pipelineBindCompute, pipe)
	v.cmdBindDescriptorSets(cb, pipelineBindCompute, d.pipeLayout, 0, 1, unsafe.Pointer(&d.descSet), 0, nil)
	between := &vkMemoryBarrier{sType: stMemoryBarrier, srcAccessMask: accessShaderWrite, dstAccessMask: accessShaderRead | accessShaderWrite}
	var push [pushBytes / 4]uint32
	for pi, p := range j.passes {
		if pi > 0 {
			v.cmdPipelineBarrier(cb, pipelineStageComputeShader, pipelineStageComputeShader, 0, 1, unsafe.Pointer(between), 0, nil, 0, nil)
		}
		groups := (p.items + p.perGroup - 1) / p.perGroup
		if groups > int(d.maxGroups) {
			groups = int(d.maxGroups)
		}
		if groups < 1 {
			groups = 1
		}
		clear(push[:])
		copy(push[:], p.push)
		v.cmdPushConstants(cb, d.pipeLayout, shaderStageCompute, 0, pushBytes, unsafe.Pointer(&push[0]))
		v.cmdDispatch(cb, uint32(groups), 1, 1)
	}
	mb := &vkMemoryBarrier{sType: stMemoryBarrier, srcAccessMask: accessShaderWrite, dstAccessMask: accessHostRead}
	if d.staging {
		v.cmdPipelineBarrier(cb, pipelineStageComputeShader, pipelineStageTransfer, 0, 1, unsafe.Pointer(toTransfer), 0, nil, 0, nil)
		for i, a := range j.args {
			if a.download && a.bytes > 0 {
				back[i] = vkBufferCopy{size: uint64(a.bytes)}
				v.cmdCopyBuffer(cb, d.slots[i].devBuffer, d.slots[i].buffer, 1, unsafe.Pointer(&back[i]))
			}
		}
		v.cmdPipelineBarrier(cb, pipelineStageTransfer, pipelineStageHost, 0, 1, unsafe.Pointer(transferToHost), 0, nil, 0, nil)
	} else {
		v.cmdPipelineBarrier(cb, pipelineStageComputeShader, pipelineStageHost, 0, 1, unsafe.Pointer(mb), 0, nil, 0, nil)
	}
	if r := v.endCommandBuffer(cb); r != vkSuccess {
		return vkError(j.op+": end command buffer", r)
	}
	si := &vkSubmitInfo{sType: stSubmitInfo, commandBufferCount: 1, pCommandBuffers: &d.cmdBuf}
	if r := v.queueSubmit(d.queue, 1, unsafe.Pointer(si), d.fence); r != vkSuccess {
		return vkError(j.op+": submit", r)
	}
	r := v.waitForFences(d.device, 1, unsafe.Pointer(&d.fence), 1, uint64(waitTimeout))
	runtime.KeepAlive(cbbi)
	runtime.KeepAlive(mb)
	runtime.KeepAlive(between)
	runtime.KeepAlive(toShader)
	runtime.KeepAlive(toTransfer)
	runtime.KeepAlive(transferToHost)
	runtime.KeepAlive(&regions)
	runtime.KeepAlive(&back)
	runtime.KeepAlive(si)
	runtime.KeepAlive(&push)
	if r != vkSuccess {
		d.broken = vkError(j.op+": wait for dispatch", r)
		return d.broken
	}
	if r := v.resetFences(d.device, 1, unsafe.Pointer(&d.fence)); r != vkSuccess {
		return vkError(j.op+": reset fence", r)
	}
	t2 := time.Now()
	for i, a := range j.args {
		if a.download && a.bytes > 0 {
			copy(unsafe.Slice((*byte)(a.ptr), a.bytes), unsafe.Slice((*byte)(d.slots[i].mapped), a.bytes))
		}
	}
	t3 := time.Now()
	d.timings.Calls += len(j.passes)
	d.timings.Upload += t1.Sub(t0)
	d.timings.Compute += t2.Sub(t1)
	d.timings.Download += t3.Sub(t2)
	return nil
}

// Name is the physical device's name, e.g. "llvmpipe (LLVM 15.0.6, 256 bits)".
func (d *Device) Name() string {
	if d == nil {
		return ""
	}
	return d.info.Name
}

// Type is the physical device's kind; CPU for lavapipe (its timings are no speed claims).
func (d *Device) Type() DeviceType {
	if d == nil {
		return Other
	}
	return d.info.Type
}

// Info describes the device and the optional features enabled on it.
func (d *Device) Info() Info {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.info
}

// plainFloat32Shaders reports whether tests asked for the float32 shaders without float64.
func (d *Device) plainFloat32Shaders() bool { return d != nil && d.plainFloat32 }

// SupportsFloat64 reports whether float64 arithmetic kernels run on the device.
func (d *Device) SupportsFloat64() bool { return d != nil && d.needs&needFloat64 != 0 }

// Timings returns the time spent by the kernel calls since Open or ResetTimings.
func (d *Device) Timings() Timings {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.timings
}

// ResetTimings zeroes the accumulated Timings.
func (d *Device) ResetTimings() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.timings = Timings{}
}

// Close waits for the device to be idle and releases every Vulkan object. Closing twice, or
// a nil Device, is a no-op; kernels on a closed device return an error.
func (d *Device) Close() error {
	if d == nil {
		return nil
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return nil
	}
	d.destroy()
	return nil
}

// destroy releases whatever init created (it tolerates a partial init).
func (d *Device) destroy() {
	d.closed = true
	v := d.v
	if d.device != 0 {
		v.deviceWaitIdle(d.device)
		for _, p := range d.pipelines {
			v.destroyPipeline(d.device, p, nil)
		}
		d.pipelines = map[string]uintptr{}
		for i := range d.slots {
			d.freeSlot(i)
		}
		d.release(v.destroyFence, d.fence)
		d.release(v.destroyCommandPool, d.cmdPool)
		d.release(v.destroyDescriptorPool, d.descPool)
		d.release(v.destroyPipelineLayout, d.pipeLayout)
		d.release(v.destroyDescriptorSetLayout, d.dsLayout)
		v.destroyDevice(d.device, nil)
	}
	if d.instance != 0 {
		v.destroyInstance(d.instance, nil)
	}
	d.device, d.instance, d.fence, d.cmdPool, d.descPool, d.pipeLayout, d.dsLayout = 0, 0, 0, 0, 0, 0, 0
}
