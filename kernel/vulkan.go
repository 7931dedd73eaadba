package kernel

import (
	"log"
	"math"
	"sync"
	"sync/atomic"

	"github.com/bulkad/bulkad/core"
	"github.com/bulkad/bulkad/vulkan"
	"github.com/pkg/errors"
)

// Vulkan makes the float kernels of this package (those of the custom ops package raise
// creates, with raise.Options.Vulkan) try a Vulkan device first. A kernel runs on the device when Force is set or Device.Worthwhile says
// the call pays, and the device supports the kernel for its element type; otherwise, and
// whenever the device call fails, the op's CPU kernel runs: a step never fails because of the
// device. An ErrUnsupported answer falls back silently; the first other error is recorded
// (Err) and reported once (Report, or the standard logger).
//
// What dispatches: element-wise unary and binary float operations (plain, cyclic and strided;
// not comparisons, atan2, quot, rem), sumOuter and sums along an axis, argmaxOuter (also along
// an axis), matmul with its transpose flags, gathers and scatters (affine ones directly,
// others through int32 tables of block indices, computed once when the index function reads
// no run-time array), replicate and transposes. int64 and bool kernels, casts, cond, not,
// the fused mask products, strided argmax and the core-evaluator fallback stay on the CPU.
//
// With a Vulkan set, raise also replaces the Gorgonia ops it would emit for float unary
// functions, + - * / pow, sumOuter (also of a transpose) and transposes by its own custom ops
// when the device would run them (Force, or Worthwhile for their static size, and supported):
// Gorgonia's kernels cannot dispatch. Reshapes stay Gorgonia's (a view, no work).
//
// Results agree with package core's evaluator as the CPU kernels do, special values
// included: element-wise bitwise, except the float32 transcendentals (exp log sin cos tan
// tanh sigmoid log1p expm1 pow), which are within vulkan.ULPBound(op) units in the last
// place; sums and products within 1e-5 of their magnitude in float32. Element-wise ops the
// device declines (every float64 transcendental and pow, comparisons, atan2, erf) run on the
// CPU even with Force.
//
// A Vulkan is safe for concurrent use (the Device serialises its calls); share one among
// graphs. A graph raised with it keeps using it (and its device) at every run.
type Vulkan struct {
	// Device is the open device; nil disables the device path.
	Device *vulkan.Device
	// Force runs every supported kernel on the device, however small (tests on CPU devices
	// such as lavapipe, where Worthwhile is always false).
	Force bool
	// Report, when set, is called once with the first device error other than
	// ErrUnsupported; nil logs it with the standard logger.
	Report func(error)

	calls, fallbacks atomic.Int64
	once             sync.Once
	mu               sync.Mutex
	err              error
}

// Err returns the first device error other than ErrUnsupported (nil when none happened).
func (v *Vulkan) Err() error {
	if v == nil {
		return nil
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.err
}

// Calls is the number of kernel calls that ran on the device.
func (v *Vulkan) Calls() int64 {
	if v == nil {
		return 0
	}
	return v.calls.Load()
}

// Fallbacks is the number of device calls that failed (other than ErrUnsupported) and ran
// on the CPU instead.
func (v *Vulkan) Fallbacks() int64 {
	if v == nil {
		return 0
	}
	return v.fallbacks.Load()
}

// On reports whether a device is set.
func (v *Vulkan) On() bool { return v != nil && v.Device != nil }

// done records the outcome of a device call and reports whether it produced the result.
func (v *Vulkan) done(what string, err error) bool {
	if err == nil {
		v.calls.Add(1)
		return true
	}
	if errors.Is(err, vulkan.ErrUnsupported) {
		return false
	}
	v.fallbacks.Add(1)
	err = errors.Wrapf(err, "kernel: %s on the Vulkan device failed, ran on the CPU", what)
	v.mu.Lock()
	if v.err == nil {
		v.err = err
	}
	v.mu.Unlock()
	v.once.Do(func() {
		if v.Report != nil {
			v.Report(err)
			return
		}
		log.Printf("bulkad: %v (reported once)", err)
	})
	return false
}

// use reports whether a call of kernel (op for unary and binary) with work (result elements;
// m·k·n for matmul) on T should run on the device.
func use[T vulkan.Float](v *Vulkan, kernel, op string, work int) bool {
	return v.On() && (v.Force || v.Device.Worthwhile(kernel, op, work)) && vulkan.Supports[T](v.Device, kernel, op)
}

// Wants is use at planning time, for a float dtype of core.
func (v *Vulkan) Wants(d core.Dtype, kernel, op string, work int) bool {
	switch d {
	case core.Float32:
		return use[float32](v, kernel, op, work)
	case core.Float64:
		return use[float64](v, kernel, op, work)
	}
	return false
}

// ---- element-wise ----

func (k Unary) device(out any, ins []any) bool {
	if !k.VK.On() || len(ins) != 1 {
		return false
	}
	return devUnary[float32](k.VK, k.Op.String(), out, ins[0]) || devUnary[float64](k.VK, k.Op.String(), out, ins[0])
}

func devUnary[T vulkan.Float](v *Vulkan, op string, out, in any) bool {
	o, x, ok := typed2[T](out, in)
	return ok && len(x) == len(o) && use[T](v, "unary", op, len(o)) &&
		v.done("unary "+op, vulkan.Unary(v.Device, op, o, x))
}

func (k Binary) device(out any, ins []any) bool {
	if !k.VK.On() || len(ins) != 2 || k.Op.IsComparison() {
		return false
	}
	return devBinary[float32](k.VK, k.Op.String(), out, ins[0], ins[1]) || devBinary[float64](k.VK, k.Op.String(), out, ins[0], ins[1])
}

func devBinary[T vulkan.Float](v *Vulkan, op string, out, a, b any) bool {
	o, x, y, ok := typed3[T](out, a, b)
	n := len(o)
	// binLoop's cyclic reads: each operand's length divides the output's.
	if !ok || len(x) == 0 || len(y) == 0 || n%len(x) != 0 || n%len(y) != 0 {
		return false
	}
	return use[T](v, "binary", op, n) && v.done("binary "+op, vulkan.Binary(v.Device, op, o, x, y))
}

func (k StridedBinary) device(out any, ins []any) bool {
	if !k.VK.On() || len(ins) != 2 || k.Op.IsComparison() || len(k.Shape) == 0 || k.XO < 0 || k.YO < 0 {
		return false
	}
	for d := range k.Shape {
		if k.XS[d] < 0 || k.YS[d] < 0 {
			return false
		}
	}
	return devStrided[float32](k, out, ins[0], ins[1]) || devStrided[float64](k, out, ins[0], ins[1])
}

func devStrided[T vulkan.Float](k StridedBinary, out, a, b any) bool {
	o, x, y, ok := typed3[T](out, a, b)
	if !ok || k.XO > len(x) || k.YO > len(y) {
		return false
	}
	op := k.Op.String()
	return use[T](k.VK, "binary", op, len(o)) &&
		k.VK.done("binary "+op, vulkan.BinaryStrided(k.VK.Device, op, o, x[k.XO:], y[k.YO:], k.Shape, k.XS, k.YS))
}

// ---- reductions ----

func (k SumOuter) device(out any, ins []any) bool {
	if !k.VK.On() || len(ins) != 1 || SliceLen(out) == 0 {
		return false
	}
	n := SliceLen(out)
	return devSum[float32](k.VK, out, ins[0], 1, SliceLen(ins[0])/n, n) || devSum[float64](k.VK, out, ins[0], 1, SliceLen(ins[0])/n, n)
}

func devSum[T vulkan.Float](v *Vulkan, out, in any, pre, n, post int) bool {
	o, x, ok := typed2[T](out, in)
	return ok && len(x) == pre*n*post && len(o) == pre*post && use[T](v, "sum", "", len(x)) &&
		v.done("sum", vulkan.SumAxis(v.Device, o, x, pre, n, post))
}

func (k Axis) device(out any, ins []any) bool {
	if !k.VK.On() || len(ins) != 1 {
		return false
	}
	if k.Argmax {
		return devArgmax[float32](k, out, ins[0]) || devArgmax[float64](k, out, ins[0])
	}
	return devSum[float32](k.VK, out, ins[0], k.Pre, k.N, k.Post) || devSum[float64](k.VK, out, ins[0], k.Pre, k.N, k.Post)
}

func devArgmax[T vulkan.Float](k Axis, out, in any) bool {
	o, ok1 := out.([]int64)
	x, ok2 := in.([]T)
	return ok1 && ok2 && len(o) == k.Pre*k.Post && len(x) == k.Pre*k.N*k.Post && use[T](k.VK, "argmax", "", len(x)) &&
		k.VK.done("argmax", vulkan.ArgmaxAxis(k.VK.Device, o, x, k.Pre, k.N, k.Post))
}

// ---- matmul ----

// device runs a single product on the device; a batched one (Batch > 1) is declined and runs
// on the CPU (the device has no batched GEMM).
func (g MatMul) device(out any, ins []any) bool {
	if !g.VK.On() || len(ins) != 2 || g.Batch > 1 {
		return false
	}
	return devGemm[float32](g, out, ins[0], ins[1]) || devGemm[float64](g, out, ins[0], ins[1])
}

func devGemm[T vulkan.Float](g MatMul, out, a, b any) bool {
	o, x, y, ok := typed3[T](out, a, b)
	if !ok || len(x) != g.M*g.K || len(y) != g.K*g.N || len(o) != g.M*g.N {
		return false
	}
	return use[T](g.VK, "matmul", "", g.M*g.K*g.N) &&
		g.VK.done("matmul", vulkan.MatMul(g.VK.Device, o, x, y, g.M, g.K, g.N, g.TransA, g.TransB))
}

// ---- gather, scatter, replicate, transpose ----

// ixTable holds the int32 block-index table of a gather or scatter whose index function reads
// no run-time array, computed at its first device call.
type ixTable struct {
	once sync.Once
	tab  []int32
	ok   bool
}

// indexTable evaluates fn over the domain dom (row-major) into flat block indices of an
// array whose indexed outer dims are lim; -1 marks a point out of range.
func indexTable(fn *IndexProgram, arrs []any, dom, lim []int) ([]int32, bool) {
	if core.Shape(lim).Size() > math.MaxInt32 {
		return nil, false
	}
	env, err := fn.newEnv(arrs)
	if err != nil {
		return nil, false
	}
	tab := make([]int32, core.Shape(dom).Size())
	ix := env.slots[:len(dom)]
	for p := range tab {
		tab[p] = int32(fn.offset(env, lim))
		odometer(ix, dom)
	}
	return tab, true
}

// table returns the index table of a gather (dom over src) or scatter (dom over dst).
func (t *ixTable) get(fn *IndexProgram, arrs []any, dom, lim []int) ([]int32, bool) {
	if len(fn.Frees) > 0 {
		return indexTable(fn, arrs, dom, lim)
	}
	t.once.Do(func() { t.tab, t.ok = indexTable(fn, nil, dom, lim) })
	return t.tab, t.ok
}

func (k *Gather) device(out any, ins []any) bool {
	return devMove[float32](&k.IndexPlan, false, out, ins, k.Dom, k.Src, k.Rest) ||
		devMove[float64](&k.IndexPlan, false, out, ins, k.Dom, k.Src, k.Rest)
}

func (k *Scatter) device(out any, ins []any) bool {
	return devMove[float32](&k.IndexPlan, true, out, ins, k.Dom, k.Dst, k.Rest) ||
		devMove[float64](&k.IndexPlan, true, out, ins, k.Dom, k.Dst, k.Rest)
}

// devMove runs a gather (scatter false: out[point] = x[f(point)], f into lim) or a scatter
// (out[f(point)] += x[point]) over the domain dom with blocks of rest elements on the device:
// an affine one directly, others through the index table.
func devMove[T vulkan.Float](p *IndexPlan, scatter bool, out any, ins []any, dom, lim []int, rest int) bool {
	if !p.VK.On() || len(ins) < 1 || rest < 1 {
		return false
	}
	o, x, ok := typed2[T](out, ins[0])
	what, points := "gather", len(o)
	if scatter {
		what, points = "scatter", len(x)
	}
	if !ok || points == 0 || !use[T](p.VK, what, "", points) {
		return false
	}
	d := p.VK.Device
	if p.Affine && len(ins) == 1 {
		if scatter {
			clear(o)
			return p.VK.done(what, vulkan.ScatterAddAffine(d, o, x, dom, p.AffineStrides, p.AffineBase, rest))
		}
		return p.VK.done(what, vulkan.GatherAffine(d, o, x, dom, p.AffineStrides, p.AffineBase, rest))
	}
	tab, ok := p.tab.get(p.Fn, ins[1:], dom, lim)
	if !ok || len(tab)*rest != points {
		return false
	}
	if scatter {
		clear(o)
		return p.VK.done(what, vulkan.ScatterAdd(d, o, x, tab, rest))
	}
	return p.VK.done(what, vulkan.Gather(d, o, x, tab, rest))
}

func (k Concat) device(out any, ins []any) bool {
	if !k.VK.On() || len(ins) != 1 || k.Copies < 2 {
		return false
	}
	return devReplicate[float32](k.VK, out, ins[0]) || devReplicate[float64](k.VK, out, ins[0])
}

func devReplicate[T vulkan.Float](v *Vulkan, out, in any) bool {
	o, x, ok := typed2[T](out, in)
	return ok && len(x) > 0 && len(o)%len(x) == 0 && use[T](v, "replicate", "", len(o)) &&
		v.done("replicate", vulkan.Replicate(v.Device, o, x))
}

// device runs a transpose as an affine gather: the output's dimension p walks the input with
// the stride of its dimension perm[p].
func (k Transpose) device(out any, ins []any) bool {
	if !k.VK.On() || len(ins) != 1 || len(k.Shape) == 0 {
		return false
	}
	in := core.Shape(k.Shape).Strides()
	dom := make([]int, len(k.Perm))
	st := make([]int, len(k.Perm))
	for p, q := range k.Perm {
		dom[p], st[p] = k.Shape[q], in[q]
	}
	return devTranspose[float32](k.VK, out, ins[0], dom, st) || devTranspose[float64](k.VK, out, ins[0], dom, st)
}

func devTranspose[T vulkan.Float](v *Vulkan, out, in any, dom, st []int) bool {
	o, x, ok := typed2[T](out, in)
	return ok && len(x) == len(o) && len(o) > 0 && use[T](v, "gather", "", len(o)) &&
		v.done("transpose", vulkan.GatherAffine(v.Device, o, x, dom, st, 0, 1))
}
