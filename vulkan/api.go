package vulkan

import (
	"fmt"
	"math"
	"slices"
	"time"
	"unsafe"

	"github.com/pkg/errors"
)

// Float is the element type of the float kernels.
type Float interface{ ~float32 | ~float64 }

// Index is the element type of ArgmaxAxis results.
type Index interface{ ~int32 | ~int64 }

// ErrUnsupported is matched (errors.Is) by the errors of kernels this device cannot run; the
// caller should run its CPU kernel instead. Other errors are real failures.
var ErrUnsupported = errors.New("vulkan: unsupported")

// unsupportedError is an ErrUnsupported with its own message.
type unsupportedError struct{ msg string }

func (e *unsupportedError) Error() string        { return e.msg }
func (e *unsupportedError) Is(target error) bool { return target == ErrUnsupported }

func unsupported(format string, args ...any) error {
	return errors.WithStack(&unsupportedError{msg: fmt.Sprintf(format, args...)})
}

// DeviceType is the kind of physical device, in Vulkan's terms.
type DeviceType int

// Physical device kinds (VkPhysicalDeviceType).
const (
	Other DeviceType = iota
	IntegratedGPU
	DiscreteGPU
	VirtualGPU
	CPU
)

// String names the device type.
func (t DeviceType) String() string {
	switch t {
	case IntegratedGPU:
		return "integrated GPU"
	case DiscreteGPU:
		return "discrete GPU"
	case VirtualGPU:
		return "virtual GPU"
	case CPU:
		return "CPU"
	}
	return "other"
}

// Info describes an open device.
type Info struct {
	Name       string
	Type       DeviceType
	APIVersion string // e.g. "1.3.230"
	Float64    bool   // shaderFloat64 enabled: float64 arithmetic kernels run on the device
	// AtomicFloat32Add is VK_EXT_shader_atomic_float's buffer add; without it float32
	// ScatterAdd uses a compare-and-swap loop.
	AtomicFloat32Add bool
	// Int64Atomics (with Float64 and shaderInt64) lets float64 ScatterAdd run on the device.
	Int64Atomics     bool
	MaxBufferBytes   uint64 // maxStorageBufferRange
	MaxWorkgroups    uint32 // workgroups per dispatch used (grid-stride beyond that)
	HostCachedMemory bool   // the host-visible buffers live in host-cached memory
	// Staging: the shaders use device-local buffers, filled from and copied back to the
	// host-visible ones inside each submission (discrete GPUs); transfers then count as
	// Compute time in Timings, except the host-side copies.
	Staging bool
	// Float32Subnormals: float32 subnormal operands and results are kept, not flushed to
	// zero — the shaders run with SPV_KHR_float_controls' DenormPreserve, or the device is a
	// CPU implementation (lavapipe keeps them). Without it the float32 element-wise kernels,
	// which promise core.Eval's results, are declined (ErrUnsupported) and run on the CPU.
	Float32Subnormals bool
	// SignedZeros: the shaders run with SignedZeroInfNanPreserve, so the driver keeps the
	// signs of zeros and does not assume NaN and infinities away. The kernels do not rely on
	// it (max and min combine the signs of zeros bitwise).
	SignedZeros bool
}

// Timings accumulates where a device's kernel calls spent their time.
type Timings struct {
	Calls    int           // kernel dispatches
	Upload   time.Duration // copying inputs from Go slices into the device buffers
	Compute  time.Duration // recording, submitting and waiting for the dispatch
	Download time.Duration // copying results back into Go slices
}

// Total is Upload + Compute + Download.
func (t Timings) Total() time.Duration { return t.Upload + t.Compute + t.Download }

// arg is one storage buffer binding of a dispatch (binding i = args[i]).
type arg struct {
	ptr      unsafe.Pointer
	bytes    int
	upload   bool // copy the Go memory into the buffer before the dispatch
	download bool // copy the buffer back into the Go memory after it
}

func argOf[E any](s []E, upload, download bool) arg {
	var z E
	return arg{unsafe.Pointer(unsafe.SliceData(s)), len(s) * int(unsafe.Sizeof(z)), upload, download}
}

// job is one submission: a shader, its buffers, and one or more dispatches (passes) of it,
// separated by compute-to-compute barriers.
type job struct {
	op     string
	shader string
	spec   []uint32 // specialization constants 0, 1, … (a pipeline per distinct value)
	args   []arg
	passes []pass
}

// pass is one dispatch: its push constants and the number of work items, of which one
// workgroup covers perGroup before the shader's grid-stride loop takes over.
type pass struct {
	push     []uint32
	items    int
	perGroup int
}

func onePass(items, perGroup int, push ...uint32) []pass {
	return []pass{{push: push, items: items, perGroup: perGroup}}
}

// maxElements bounds every length so indices fit the shaders' uint arithmetic.
const maxElements = math.MaxInt32

func is64[T Float]() bool {
	var z T
	return unsafe.Sizeof(z) == 8
}

// elementwiseShader is the unary or binary (kind) shader for T on d: float64's, or for float32
// the variant that divides and takes square roots in float64 where the device has float64.
// Rounding a correctly rounded double quotient or root to float gives the correctly rounded
// float one (53 >= 2·24 + 2 bits), and devices round double division and square roots
// correctly, while Vulkan lets float division be 2.5 ulp off and GPUs use that (the H100's
// driver gives 1/x and sqrt 1 ulp off).
func elementwiseShader[T Float](d *Device, kind string) string {
	switch {
	case is64[T]():
		return kind + "_f64"
	case d.SupportsFloat64() && !d.plainFloat32Shaders():
		return kind + "_f32x"
	}
	return kind + "_f32"
}

// exactCheck declines (ErrUnsupported) the float32 kernels that promise core.Eval's exact
// results where d could not give them: the element-wise kernels and argmax wherever the
// device may flush float32 subnormals (Info.Float32Subnormals), and division, reciprocal and
// square root on the shaders without float64 (elementwiseShader).
func exactCheck[T Float](d *Device, name, op string) error {
	if d == nil || is64[T]() {
		return nil
	}
	info := d.Info()
	if !info.Float32Subnormals {
		return unsupported("vulkan: %s: %s may flush float32 subnormals (no DenormPreserve for float32)", name, info.Name)
	}
	if (op == "/" || op == "recip" || op == "sqrt") && elementwiseShader[T](d, "unary") == "unary_f32" {
		return unsupported("vulkan: %s: float32 %s is rounded correctly through float64, which %s lacks (or its float64 shaders are turned off)", name, op, info.Name)
	}
	return nil
}

func suffix[T Float]() string {
	if is64[T]() {
		return "_f64"
	}
	return "_f32"
}

func dtypeName[T Float]() string {
	if is64[T]() {
		return "float64"
	}
	return "float32"
}

func checkLen(op string, lens ...int) error {
	for _, n := range lens {
		if n > maxElements {
			return unsupported("vulkan: %s: %d elements exceed the kernels' 2^31-1 limit", op, n)
		}
	}
	return nil
}

// unaryOps are the op names (core's names) Unary accepts, indexed by the shader's op code;
// the float64 shader has the first unaryF64 of them (GLSL has no double exp, log or
// trigonometric functions).
var unaryOps = []string{"neg", "abs", "sign", "floor", "ceil", "recip", "sqrt", "exp", "log", "sin",
	"cos", "tan", "tanh", "sigmoid", "log1p", "expm1"}

const unaryF64 = 7

// binaryOps are the op symbols Binary accepts and their words (core's names), indexed by the
// shader's op code; the float64 shader has the first binaryF64 of them.
var binaryOps = []binaryOp{{"+", "add"}, {"-", "sub"}, {"*", "mul"}, {"/", "div"},
	{"max", "max"}, {"min", "min"}, {"pow", "pow"}}

const binaryF64 = 6

type binaryOp struct{ sym, word string }

// unaryCode maps an op name to the shader's op code; f64 says whether the float64 shader has it.
func unaryCode(op string) (code uint32, f64, ok bool) {
	i := slices.Index(unaryOps, op)
	if i < 0 {
		return 0, false, false
	}
	return uint32(i), i < unaryF64, true
}

// binaryCode maps an op symbol or word to the shader's op code; f64 as for unaryCode.
func binaryCode(op string) (code uint32, f64, ok bool) {
	i := slices.IndexFunc(binaryOps, func(b binaryOp) bool { return op == b.sym || op == b.word })
	if i < 0 {
		return 0, false, false
	}
	return uint32(i), i < binaryF64, true
}

// UnaryOps lists the op names Unary accepts (float32; see Supports for float64).
func UnaryOps() []string { return slices.Clone(unaryOps) }

// BinaryOps lists the op names Binary accepts (float32; see Supports for float64).
func BinaryOps() []string {
	ops := make([]string, len(binaryOps))
	for i, b := range binaryOps {
		ops[i] = b.sym
	}
	return ops
}

// Supports reports whether kernel ("unary", "binary", "sum", "argmax", "matmul", "gather",
// "scatter", "replicate"; binary covers BinaryStrided, gather and scatter their affine forms)
// with op (unary and binary only) runs on d for element type T. A nil
// or closed device supports nothing. Sizes are not considered (see Info.MaxBufferBytes).
func Supports[T Float](d *Device, kernel, op string) bool {
	if d == nil {
		return false
	}
	var shader string
	switch kernel {
	case "unary":
		_, f64, ok := unaryCode(op)
		if !ok || (is64[T]() && !f64) {
			return false
		}
		if exactCheck[T](d, "unary "+op, op) != nil {
			return false
		}
		shader = elementwiseShader[T](d, "unary")
	case "binary":
		_, f64, ok := binaryCode(op)
		if !ok || (is64[T]() && !f64) {
			return false
		}
		if exactCheck[T](d, "binary "+op, op) != nil {
			return false
		}
		shader = elementwiseShader[T](d, "binary")
	case "sum":
		shader = "sum_thread" + suffix[T]()
	case "argmax":
		if exactCheck[T](d, "argmax", "argmax") != nil {
			return false
		}
		shader = "argmax_thread" + suffix[T]()
	case "matmul":
		shader = "matmul" + suffix[T]()
	case "gather":
		shader = "gather"
	case "replicate":
		shader = "replicate"
	case "scatter":
		shader = scatterShader[T](d)
	default:
		return false
	}
	return d.check("supports", shader) == nil
}

// Unary sets dst[i] = op(src[i]) for op in UnaryOps. On float64 only neg, abs, sign, floor,
// ceil, recip and sqrt exist (ErrUnsupported otherwise). sqrt and log of negative numbers
// give NaN and log(0) gives -Inf, as in Go; other out-of-domain inputs follow the device.
func Unary[T Float](d *Device, op string, dst, src []T) error {
	code, f64, ok := unaryCode(op)
	if !ok {
		return errors.Errorf("vulkan: unary: unknown op %q", op)
	}
	name := "unary " + op
	if len(dst) != len(src) {
		return errors.Errorf("vulkan: %s: dst has %d elements, src %d", name, len(dst), len(src))
	}
	if is64[T]() && !f64 {
		return unsupported("vulkan: %s: no float64 shader (GLSL has no double %s)", name, op)
	}
	if err := checkLen(name, len(dst)); err != nil {
		return err
	}
	if len(dst) == 0 {
		return nil
	}
	if err := exactCheck[T](d, name, op); err != nil {
		return err
	}
	return d.run(job{op: name, shader: elementwiseShader[T](d, "unary"), spec: []uint32{code}, passes: onePass(len(dst), 256, uint32(len(dst))),
		args: []arg{argOf(dst, false, true), argOf(src, true, false)}})
}

// Binary sets dst[i] = x[i % len(x)] op y[i % len(y)] for op in BinaryOps: operands shorter
// than dst (a broadcast scalar, or core's fused x op replicate n y) are read cyclically, so
// len(x) and len(y) must divide len(dst). On float64, pow is ErrUnsupported. As in bulkad's
// core evaluator, max and min return NaN when an operand is NaN and order +0 above -0, and
// pow follows math.Pow on x <= 0, y = 0 and x = 1.
func Binary[T Float](d *Device, op string, dst, x, y []T) error {
	code, name, err := binaryPlan[T](op)
	if err != nil {
		return err
	}
	n := len(dst)
	if n == 0 {
		return nil
	}
	if len(x) == 0 || len(y) == 0 || n%len(x) != 0 || n%len(y) != 0 {
		return errors.Errorf("vulkan: %s: operands of %d and %d elements for a result of %d (lengths must divide it)", name, len(x), len(y), n)
	}
	if err := checkLen(name, n); err != nil {
		return err
	}
	if err := exactCheck[T](d, name, op); err != nil {
		return err
	}
	mode := uint32(0)
	if len(x) != n || len(y) != n {
		mode = 1
	}
	return d.run(job{op: name, shader: elementwiseShader[T](d, "binary"), spec: []uint32{code, mode},
		passes: onePass(n, 256, uint32(n), uint32(len(x)), uint32(len(y)), 0),
		args:   []arg{argOf(dst, false, true), argOf(x, true, false), argOf(y, true, false)}})
}

func binaryPlan[T Float](op string) (code uint32, name string, err error) {
	code, f64, ok := binaryCode(op)
	if !ok {
		return 0, "", errors.Errorf("vulkan: binary: unknown op %q", op)
	}
	name = "binary " + op
	if is64[T]() && !f64 {
		return 0, "", unsupported("vulkan: %s: no float64 shader (GLSL has no double %s)", name, op)
	}
	return code, name, nil
}

// maxStridedRank is the rank BinaryStrided handles after merging dimensions.
const maxStridedRank = 4

// BinaryStrided sets dst (row-major over shape) to x op y where the operands are read
// through strides: element (i1..ir) of dst is x[Σ ik·xStrides[k]] op y[Σ ik·yStrides[k]]
// (stride 0 along a broadcast dimension). Dimensions that are contiguous in both operands
// are merged; more than 4 remaining dimensions are ErrUnsupported.
func BinaryStrided[T Float](d *Device, op string, dst, x, y []T, shape, xStrides, yStrides []int) error {
	code, name, err := binaryPlan[T](op)
	if err != nil {
		return err
	}
	if len(xStrides) != len(shape) || len(yStrides) != len(shape) {
		return errors.Errorf("vulkan: %s: shape %v with strides %v and %v", name, shape, xStrides, yStrides)
	}
	n := 1
	maxX, maxY := 0, 0
	for k, e := range shape {
		if e < 0 || xStrides[k] < 0 || yStrides[k] < 0 {
			return errors.Errorf("vulkan: %s: negative extent or stride in shape %v, strides %v and %v", name, shape, xStrides, yStrides)
		}
		n *= e
		if e > 0 {
			maxX += (e - 1) * xStrides[k]
			maxY += (e - 1) * yStrides[k]
		}
	}
	if len(dst) != n {
		return errors.Errorf("vulkan: %s: dst of %d elements for shape %v", name, len(dst), shape)
	}
	if n == 0 {
		return nil
	}
	if maxX >= len(x) || maxY >= len(y) {
		return errors.Errorf("vulkan: %s: shape %v with strides %v and %v reads past operands of %d and %d elements",
			name, shape, xStrides, yStrides, len(x), len(y))
	}
	if err := checkLen(name, n, len(x), len(y)); err != nil {
		return err
	}
	if err := exactCheck[T](d, name, op); err != nil {
		return err
	}
	sh, xs, ys := mergeDims(shape, xStrides, yStrides)
	if len(sh) > maxStridedRank {
		return unsupported("vulkan: %s: %d dimensions after merging (shape %v), the shader takes %d", name, len(sh), shape, maxStridedRank)
	}
	push := make([]uint32, 4+3*maxStridedRank)
	push[0], push[1], push[2], push[3] = uint32(n), 1, 1, uint32(len(sh))
	for k := range sh {
		push[4+k], push[4+maxStridedRank+k], push[4+2*maxStridedRank+k] = uint32(sh[k]), uint32(xs[k]), uint32(ys[k])
	}
	return d.run(job{op: name, shader: elementwiseShader[T](d, "binary"), spec: []uint32{code, 2}, passes: []pass{{push: push, items: n, perGroup: 256}},
		args: []arg{argOf(dst, false, true), argOf(x, true, false), argOf(y, true, false)}})
}

// mergeDims drops dimensions of extent 1 and merges neighbours that are contiguous in both
// operands (stride of the outer = extent × stride of the inner).
func mergeDims(shape, xs, ys []int) (sh, mx, my []int) {
	for k, e := range shape {
		if e == 1 {
			continue
		}
		last := len(sh) - 1
		if last >= 0 && mx[last] == e*xs[k] && my[last] == e*ys[k] {
			sh[last] *= e
			mx[last], my[last] = xs[k], ys[k]
			continue
		}
		sh, mx, my = append(sh, e), append(mx, xs[k]), append(my, ys[k])
	}
	return sh, mx, my
}

// reduction strategies for SumAxis and ArgmaxAxis
const (
	reduceAuto = iota
	reduceThread
	reduceGroup
)

// Longest axis segment one invocation (thread strategy) or one workgroup (group strategy)
// reduces in one dispatch; longer axes are reduced per segment and the segments combined on
// the host. This bounds the loop iterations per invocation (see shaders/common.glsl).
const (
	segThread = 16384
	segGroup  = 256 * 4096
)

// groupReduce chooses a workgroup per output (long axes, few outputs) over an invocation per
// output.
func groupReduce(outs, n int) bool { return n >= 1024 || (outs < 4096 && n >= 64) }

func checkAxis(name string, lenDst, lenSrc, outer, n, inner int) error {
	if outer < 0 || n < 0 || inner < 0 {
		return errors.Errorf("vulkan: %s: negative extent in [%d %d %d]", name, outer, n, inner)
	}
	if lenSrc != outer*n*inner || lenDst != outer*inner {
		return errors.Errorf("vulkan: %s: src of %d and dst of %d elements do not fit [%d %d %d] -> [%d %d]",
			name, lenSrc, lenDst, outer, n, inner, outer, inner)
	}
	return checkLen(name, lenSrc, lenDst)
}

// reducePlan picks the shader variant and the segment length of a reduction.
func reducePlan(prefix, sfx string, outs, n, mode int) (shader string, perGroup, seg, segs int) {
	group := mode == reduceGroup || (mode == reduceAuto && groupReduce(outs, n))
	shader, perGroup, seg = prefix+"_thread"+sfx, 256, segThread
	if group {
		shader, perGroup, seg = prefix+"_group"+sfx, 1, segGroup
	}
	if n <= seg {
		seg = n
	}
	return shader, perGroup, seg, (n + seg - 1) / seg
}

// SumAxis views src as [outer, n, inner] (row-major) and sets dst (viewed as [outer, inner])
// to the sum over the middle axis. sumOuter is SumAxis(d, dst, src, 1, n, len(dst)).
func SumAxis[T Float](d *Device, dst, src []T, outer, n, inner int) error {
	return sumAxis(d, dst, src, outer, n, inner, reduceAuto)
}

// SumOuter sums src viewed as [len(src)/len(dst), len(dst)] over its first axis into dst.
func SumOuter[T Float](d *Device, dst, src []T) error {
	if len(dst) == 0 || len(src)%len(dst) != 0 {
		return errors.Errorf("vulkan: sumOuter: src of %d elements is not a multiple of dst's %d", len(src), len(dst))
	}
	return sumAxis(d, dst, src, 1, len(src)/len(dst), len(dst), reduceAuto)
}

// axisJob checks a reduction of src, viewed as [outer, n, inner], over its middle axis into
// dst and plans its dispatch with the shaders named prefix; the caller adds the buffers. segs
// (the number of results per output) is 0 when there is nothing to dispatch: no outputs, or
// an empty axis, for which dst is cleared (the sum and the argmax of nothing are 0, as in
// core's evaluator).
func axisJob[E any, T Float](d *Device, name, prefix string, dst []E, src []T, outer, n, inner, mode int) (j job, segs int, err error) {
	if err := checkAxis(name, len(dst), len(src), outer, n, inner); err != nil {
		return job{}, 0, err
	}
	outs := outer * inner
	if outs == 0 {
		return job{}, 0, nil
	}
	if n == 0 {
		clear(dst)
		return job{}, 0, nil
	}
	if mode == reduceAuto && d.Type() == CPU {
		mode = reduceThread // no workgroup barriers on CPU devices; long axes still split
	}
	shader, perGroup, seg, segs := reducePlan(prefix, suffix[T](), outs, n, mode)
	return job{op: name, shader: shader,
		passes: onePass(outs*segs, perGroup, uint32(outer), uint32(n), uint32(inner), uint32(seg))}, segs, nil
}

func sumAxis[T Float](d *Device, dst, src []T, outer, n, inner, mode int) error {
	j, segs, err := axisJob(d, "sumAxis", "sum", dst, src, outer, n, inner, mode)
	if err != nil || segs == 0 {
		return err
	}
	out := dst
	if segs > 1 {
		out = make([]T, outer*inner*segs)
	}
	j.args = []arg{argOf(out, false, true), argOf(src, true, false)}
	if err := d.run(j); err != nil || segs == 1 {
		return err
	}
	for a := 0; a < outer; a++ {
		for b := 0; b < inner; b++ {
			var acc float64
			for s := 0; s < segs; s++ {
				acc += float64(out[(a*segs+s)*inner+b])
			}
			dst[a*inner+b] = T(acc)
		}
	}
	return nil
}

// ArgmaxAxis views src as [outer, n, inner] and sets dst (viewed as [outer, inner]) to the
// smallest index along the middle axis at which the maximum occurs. As in bulkad's core
// evaluator, NaNs are skipped and an axis of NaNs only (or an empty axis) gives 0.
func ArgmaxAxis[I Index, T Float](d *Device, dst []I, src []T, outer, n, inner int) error {
	return argmaxAxis(d, dst, src, outer, n, inner, reduceAuto)
}

// ArgmaxOuter is ArgmaxAxis over the first axis of src viewed as [len(src)/len(dst), len(dst)].
func ArgmaxOuter[I Index, T Float](d *Device, dst []I, src []T) error {
	if len(dst) == 0 || len(src)%len(dst) != 0 {
		return errors.Errorf("vulkan: argmaxOuter: src of %d elements is not a multiple of dst's %d", len(src), len(dst))
	}
	return argmaxAxis(d, dst, src, 1, len(src)/len(dst), len(dst), reduceAuto)
}

func argmaxAxis[I Index, T Float](d *Device, dst []I, src []T, outer, n, inner, mode int) error {
	j, segs, err := axisJob(d, "argmaxAxis", "argmax", dst, src, outer, n, inner, mode)
	if err != nil || segs == 0 {
		return err
	}
	if err := exactCheck[T](d, "argmaxAxis", "argmax"); err != nil {
		return err
	}
	out, direct := any(dst).([]int32)
	if !direct || segs > 1 {
		out = make([]int32, outer*inner*segs)
	}
	j.args = []arg{argOf(out, false, true), argOf(src, true, false)}
	if err := d.run(j); err != nil {
		return err
	}
	if segs == 1 {
		if !direct {
			for i, v := range out {
				dst[i] = I(v)
			}
		}
		return nil
	}
	// Combine the segments' first maxima (-1: a segment of NaNs); the earliest segment wins ties.
	for a := 0; a < outer; a++ {
		for b := 0; b < inner; b++ {
			best := -1
			for s := 0; s < segs; s++ {
				j := int(out[(a*segs+s)*inner+b])
				if j >= 0 && (best < 0 || src[(a*n+j)*inner+b] > src[(a*n+best)*inner+b]) {
					best = j
				}
			}
			dst[a*inner+b] = I(max(best, 0))
		}
	}
	return nil
}

// MatMul sets dst (m×n, row-major) to op(a)·op(b) where op(a) is m×k and op(b) is k×n: a is
// stored m×k, or k×m when transA; b is stored k×n, or n×k when transB.
func MatMul[T Float](d *Device, dst, a, b []T, m, k, n int, transA, transB bool) error {
	const name = "matmul"
	if m < 0 || k < 0 || n < 0 {
		return errors.Errorf("vulkan: %s: negative size m=%d k=%d n=%d", name, m, k, n)
	}
	if len(a) != m*k || len(b) != k*n || len(dst) != m*n {
		return errors.Errorf("vulkan: %s: a of %d, b of %d, dst of %d elements do not fit m=%d k=%d n=%d",
			name, len(a), len(b), len(dst), m, k, n)
	}
	if err := checkLen(name, len(a), len(b), len(dst)); err != nil {
		return err
	}
	if len(dst) == 0 {
		return nil
	}
	if d.Type() == CPU {
		return matmulSimple(d, dst, a, b, m, k, n, transA, transB, matmulOuts, matmulK)
	}
	return matmulWith(d, dst, a, b, m, k, n, transA, transB, matmulTiles, matmulK)
}

// Work per matmul dispatch: tiles (one workgroup each) or outputs (one invocation each), and
// the length of the k range.
const (
	matmulTiles = 65535
	matmulOuts  = 65535 * 256
	matmulK     = 8192
)

// matmulWith runs the tiled shared-memory shader (GPUs) in dispatches of at most tileChunk
// tiles and kChunk products; later k ranges accumulate.
func matmulWith[T Float](d *Device, dst, a, b []T, m, k, n int, transA, transB bool, tileChunk, kChunk int) error {
	tiles := ((m + 15) / 16) * ((n + 15) / 16)
	return matmulChunked(d, "matmul", dst, a, b, m, k, n, transA, transB, tiles, 1, tileChunk, kChunk)
}

// matmulSimple runs the one-invocation-per-output shader (CPU devices) in dispatches of at
// most outChunk outputs and kChunk products.
func matmulSimple[T Float](d *Device, dst, a, b []T, m, k, n int, transA, transB bool, outChunk, kChunk int) error {
	return matmulChunked(d, "matmul_simple", dst, a, b, m, k, n, transA, transB, m*n, 256, outChunk, kChunk)
}

// matmulChunked runs a matmul shader over its units of work (units of them, perGroup per
// workgroup) in dispatches of at most chunk units and kChunk products; later k ranges
// accumulate.
func matmulChunked[T Float](d *Device, shader string, dst, a, b []T, m, k, n int, transA, transB bool, units, perGroup, chunk, kChunk int) error {
	if k == 0 {
		clear(dst)
		return nil
	}
	var passes []pass
	for u0 := 0; u0 < units; u0 += chunk {
		u1 := min(units, u0+chunk)
		for k0 := 0; k0 < k; k0 += kChunk {
			k1 := min(k, k0+kChunk)
			passes = append(passes, pass{items: u1 - u0, perGroup: perGroup, push: []uint32{uint32(m), uint32(k), uint32(n),
				uint32(u0), uint32(u1), uint32(k0), uint32(k1), b2u(k0 > 0)}})
		}
	}
	return d.run(job{op: "matmul", shader: shader + suffix[T](), spec: []uint32{b2u(transA), b2u(transB)}, passes: passes,
		args: []arg{argOf(dst, false, true), argOf(a, true, false), argOf(b, true, false)}})
}

func b2u(b bool) uint32 {
	if b {
		return 1
	}
	return 0
}

// words returns the number of 32-bit words of one T.
func words[T Float]() int {
	if is64[T]() {
		return 2
	}
	return 1
}

// maxAffineRank is the domain rank GatherAffine and ScatterAddAffine handle after merging.
const maxAffineRank = 6

// Replicate fills dst with copies of src: dst[i] = src[i % len(src)]; len(dst) must be a
// multiple of len(src) (core's replicate N x is Replicate with len(dst) = N*len(x)).
func Replicate[T Float](d *Device, dst, src []T) error {
	const name = "replicate"
	if len(src) == 0 && len(dst) == 0 {
		return nil
	}
	if len(src) == 0 || len(dst)%len(src) != 0 {
		return errors.Errorf("vulkan: %s: dst of %d elements is not a multiple of src's %d", name, len(dst), len(src))
	}
	w := words[T]()
	if err := checkLen(name, len(dst)*w); err != nil {
		return err
	}
	return d.run(job{op: name, shader: "replicate",
		passes: onePass(len(dst)*w, 256, uint32(len(dst)*w), uint32(len(src)*w)),
		args:   []arg{argOf(dst, false, true), argOf(src, true, false)}})
}

// Worthwhile is a heuristic for callers choosing between this device and their CPU kernel:
// whether a call of kernel (op for unary and binary) with the given work (elements of the
// result; m·k·n for matmul) is expected to be faster on the device, every call paying about
// 100 µs of submission and copying its operands both ways. It is never true on a CPU device
// (lavapipe), where the device path is for tests only. Only compute-heavy kernels pay for
// their transfers: matmul from m·k·n = 2^27 and transcendental element-wise ops from 2^18
// elements; cheap element-wise ops, reductions, gathers, scatters and replicate move as many
// bytes as the CPU loop reads, so they pay only once data stays on the device, which this
// package does not do.
//
// Measured once (2026-11-26) on an NVIDIA H100 (driver 580) against bulkad's CPU kernels on
// the same host's 16 cores, float32, medians of 3: matmul 512³ 0.62 ms CPU / 0.55 ms device,
// 1024³ 2.78 / 2.83, 2048³ 22.4 / 12.3, 4096³ 147 / 60 (the device's time mostly the copies:
// the shader itself ran 4096³ at about 6.5 TFLOP/s); exp of 2^20 elements 1.67 / 1.31, of
// 2^24 18.0 / 27.3; tanh 5.2 / 1.3 and 44.8 / 26.8; add 0.25 / 2.8 and 2.4 / 40. A raised MLP
// step (784-1024-1024-10, batch 512) took 59–61 ms on the CPU and 33–37 ms with
// BULKAD_VULKAN=1. On a host with fewer cores the device pays from smaller sizes; the matmul
// threshold is the break-even measured against 16 cores.
func (d *Device) Worthwhile(kernel, op string, work int) bool {
	if d == nil {
		return false
	}
	switch t := d.Type(); {
	case t == CPU, t == Other:
		return false
	}
	switch kernel {
	case "matmul":
		return work >= 1<<27
	case "unary":
		switch op {
		case "exp", "log", "sin", "cos", "tan", "tanh", "sigmoid", "log1p", "expm1":
			return work >= 1<<18
		}
	case "binary":
		return op == "pow" && work >= 1<<18
	}
	return false
}
