package raise

import (
	"log"
	"math"
	"sync"
	"sync/atomic"

	"github.com/bulkad/bulkad/core"
	"github.com/bulkad/bulkad/vulkan"
	"github.com/pkg/errors"
)

// Vulkan makes the float kernels of the custom ops a raise creates try a Vulkan device first
// (Options.Vulkan). A kernel runs on the device when Force is set or Device.Worthwhile says
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
// Results agree with the CPU kernels within float tolerance (element-wise bitwise or within
// a few ulp, sums and products within 1e-5 of their magnitude in float32). Both follow package
// core's evaluator on the corner cases of max and min (NaN propagates, +0 > -0).
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

func (v *Vulkan) on() bool { return v != nil && v.Device != nil }

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
	err = errors.Wrapf(err, "raise: %s on the Vulkan device failed, ran on the CPU", what)
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
	return v.on() && (v.Force || v.Device.Worthwhile(kernel, op, work)) && vulkan.Supports[T](v.Device, kernel, op)
}

// wants is use at planning time, for a float dtype of core.
func (v *Vulkan) wants(d core.Dtype, kernel, op string, work int) bool {
	switch d {
	case core.Float32:
		return use[float32](v, kernel, op, work)
	case core.Float64:
		return use[float64](v, kernel, op, work)
	}
	return false
}

// ---- element-wise ----

func (k unaryK) device(out any, ins []any) bool {
	if !k.vk.on() || len(ins) != 1 {
		return false
	}
	switch o := out.(type) {
	case []float32:
		return devUnary(k.vk, k.op.String(), o, ins[0])
	case []float64:
		return devUnary(k.vk, k.op.String(), o, ins[0])
	}
	return false
}

func devUnary[T vulkan.Float](v *Vulkan, op string, o []T, in any) bool {
	x, ok := in.([]T)
	return ok && len(x) == len(o) && use[T](v, "unary", op, len(o)) &&
		v.done("unary "+op, vulkan.Unary(v.Device, op, o, x))
}

func (k binaryK) device(out any, ins []any) bool {
	if !k.vk.on() || len(ins) != 2 || k.op.IsComparison() {
		return false
	}
	switch o := out.(type) {
	case []float32:
		return devBinary(k.vk, k.op.String(), o, ins[0], ins[1])
	case []float64:
		return devBinary(k.vk, k.op.String(), o, ins[0], ins[1])
	}
	return false
}

func devBinary[T vulkan.Float](v *Vulkan, op string, o []T, a, b any) bool {
	x, ok1 := a.([]T)
	y, ok2 := b.([]T)
	n := len(o)
	// binLoop's cyclic reads: each operand's length divides the output's.
	if !ok1 || !ok2 || len(x) == 0 || len(y) == 0 || n%len(x) != 0 || n%len(y) != 0 {
		return false
	}
	return use[T](v, "binary", op, n) && v.done("binary "+op, vulkan.Binary(v.Device, op, o, x, y))
}

func (k stridedBinK) device(out any, ins []any) bool {
	if !k.vk.on() || len(ins) != 2 || k.op.IsComparison() || len(k.shape) == 0 || k.xo < 0 || k.yo < 0 {
		return false
	}
	for d := range k.shape {
		if k.xs[d] < 0 || k.ys[d] < 0 {
			return false
		}
	}
	switch o := out.(type) {
	case []float32:
		return devStrided(k, o, ins[0], ins[1])
	case []float64:
		return devStrided(k, o, ins[0], ins[1])
	}
	return false
}

func devStrided[T vulkan.Float](k stridedBinK, o []T, a, b any) bool {
	x, ok1 := a.([]T)
	y, ok2 := b.([]T)
	if !ok1 || !ok2 || k.xo > len(x) || k.yo > len(y) {
		return false
	}
	op := k.op.String()
	return use[T](k.vk, "binary", op, len(o)) &&
		k.vk.done("binary "+op, vulkan.BinaryStrided(k.vk.Device, op, o, x[k.xo:], y[k.yo:], k.shape, k.xs, k.ys))
}

// ---- reductions ----

func (k sumOuterK) device(out any, ins []any) bool {
	if !k.vk.on() || len(ins) != 1 || sliceLen(out) == 0 {
		return false
	}
	switch o := out.(type) {
	case []float32:
		return devSum(k.vk, o, ins[0], 1, sliceLen(ins[0])/len(o), len(o))
	case []float64:
		return devSum(k.vk, o, ins[0], 1, sliceLen(ins[0])/len(o), len(o))
	}
	return false
}

func devSum[T vulkan.Float](v *Vulkan, o []T, in any, pre, n, post int) bool {
	x, ok := in.([]T)
	return ok && len(x) == pre*n*post && len(o) == pre*post && use[T](v, "sum", "", len(x)) &&
		v.done("sum", vulkan.SumAxis(v.Device, o, x, pre, n, post))
}

// sumAxisK sums along the middle axis of its operand viewed as [pre, n, post]: sumOuter of a
// transpose that moves one axis to the front (Gorgonia's Sum along an axis when no device).
type sumAxisK struct {
	pre, n, post int
	vk           *Vulkan
}

func (k sumAxisK) run(out any, ins []any) error {
	if k.device(out, ins) {
		return nil
	}
	switch o := out.(type) {
	case []float64:
		return sumAxisLoop(k, o, ins[0])
	case []float32:
		return sumAxisLoop(k, o, ins[0])
	}
	return typeErr("sumOuter", out, ins)
}

func sumAxisLoop[T ~float32 | ~float64](k sumAxisK, out []T, in any) error {
	x, ok := in.([]T)
	if !ok || len(x) != k.pre*k.n*k.post || len(out) != k.pre*k.post {
		return errors.Errorf("raise: sumOuter: input %s[%d], output %s[%d] for [%d %d %d]", typeName(in), sliceLen(in), typeName(out), len(out), k.pre, k.n, k.post)
	}
	clear(out)
	for p := 0; p < k.pre; p++ {
		o := out[p*k.post : (p+1)*k.post]
		for i := 0; i < k.n; i++ {
			row := x[(p*k.n+i)*k.post : (p*k.n+i+1)*k.post]
			for j, v := range row {
				o[j] += v
			}
		}
	}
	return nil
}

func (k sumAxisK) device(out any, ins []any) bool {
	if !k.vk.on() || len(ins) != 1 {
		return false
	}
	switch o := out.(type) {
	case []float32:
		return devSum(k.vk, o, ins[0], k.pre, k.n, k.post)
	case []float64:
		return devSum(k.vk, o, ins[0], k.pre, k.n, k.post)
	}
	return false
}

func (k argmaxK) device(out any, ins []any) bool {
	o, ok := out.([]int64)
	if !k.vk.on() || !ok || len(ins) != 1 || len(o) != k.pre*k.post {
		return false
	}
	switch x := ins[0].(type) {
	case []float32:
		return devArgmax(k, o, x)
	case []float64:
		return devArgmax(k, o, x)
	}
	return false
}

func devArgmax[T vulkan.Float](k argmaxK, o []int64, x []T) bool {
	return len(x) == k.pre*k.n*k.post && use[T](k.vk, "argmax", "", len(x)) &&
		k.vk.done("argmax", vulkan.ArgmaxAxis(k.vk.Device, o, x, k.pre, k.n, k.post))
}

// ---- matmul ----

func (g gemmK) device(out any, ins []any) bool {
	if !g.vk.on() || len(ins) != 2 {
		return false
	}
	switch o := out.(type) {
	case []float32:
		return devGemm(g, o, ins[0], ins[1])
	case []float64:
		return devGemm(g, o, ins[0], ins[1])
	}
	return false
}

func devGemm[T vulkan.Float](g gemmK, o []T, a, b any) bool {
	x, ok1 := a.([]T)
	y, ok2 := b.([]T)
	if !ok1 || !ok2 || len(x) != g.m*g.k || len(y) != g.k*g.n || len(o) != g.m*g.n {
		return false
	}
	return use[T](g.vk, "matmul", "", g.m*g.k*g.n) &&
		g.vk.done("matmul", vulkan.MatMul(g.vk.Device, o, x, y, g.m, g.k, g.n, g.transA, g.transB))
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
func indexTable(fn *ixProg, arrs []any, dom, lim []int) ([]int32, bool) {
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
		off, ok := 0, true
		for d, f := range fn.outs {
			j := f(env)
			if j < 0 || j >= int64(lim[d]) {
				ok = false
				break
			}
			off = off*lim[d] + int(j)
		}
		tab[p] = -1
		if ok {
			tab[p] = int32(off)
		}
		odometer(ix, dom)
	}
	return tab, true
}

// table returns the index table of a gather (dom over src) or scatter (dom over dst).
func (t *ixTable) get(fn *ixProg, arrs []any, dom, lim []int) ([]int32, bool) {
	if len(fn.frees) > 0 {
		return indexTable(fn, arrs, dom, lim)
	}
	t.once.Do(func() { t.tab, t.ok = indexTable(fn, nil, dom, lim) })
	return t.tab, t.ok
}

func (k *gatherK) device(out any, ins []any) bool {
	if !k.vk.on() || len(ins) < 1 || k.rest < 1 || sliceLen(out) == 0 {
		return false
	}
	switch o := out.(type) {
	case []float32:
		return devGather(k, o, ins)
	case []float64:
		return devGather(k, o, ins)
	}
	return false
}

func devGather[T vulkan.Float](k *gatherK, o []T, ins []any) bool {
	x, ok := ins[0].([]T)
	if !ok || !use[T](k.vk, "gather", "", len(o)) {
		return false
	}
	if k.aff && len(ins) == 1 {
		return k.vk.done("gather", vulkan.GatherAffine(k.vk.Device, o, x, k.dom, k.ast, k.abase, k.rest))
	}
	tab, ok := k.tab.get(k.fn, ins[1:], k.dom, k.src)
	if !ok || len(tab)*k.rest != len(o) {
		return false
	}
	return k.vk.done("gather", vulkan.Gather(k.vk.Device, o, x, tab, k.rest))
}

func (k *scatterK) device(out any, ins []any) bool {
	if !k.vk.on() || len(ins) < 1 || k.rest < 1 || sliceLen(out) == 0 || sliceLen(ins[0]) == 0 {
		return false
	}
	switch o := out.(type) {
	case []float32:
		return devScatter(k, o, ins)
	case []float64:
		return devScatter(k, o, ins)
	}
	return false
}

func devScatter[T vulkan.Float](k *scatterK, o []T, ins []any) bool {
	x, ok := ins[0].([]T)
	if !ok || !use[T](k.vk, "scatter", "", len(x)) {
		return false
	}
	if k.aff && len(ins) == 1 {
		clear(o)
		return k.vk.done("scatter", vulkan.ScatterAddAffine(k.vk.Device, o, x, k.dom, k.ast, k.abase, k.rest))
	}
	tab, ok := k.tab.get(k.fn, ins[1:], k.dom, k.dst)
	if !ok || len(tab)*k.rest != len(x) {
		return false
	}
	clear(o)
	return k.vk.done("scatter", vulkan.ScatterAdd(k.vk.Device, o, x, tab, k.rest))
}

func (k concatK) device(out any, ins []any) bool {
	if !k.vk.on() || len(ins) != 1 || k.copies < 2 {
		return false
	}
	switch o := out.(type) {
	case []float32:
		return devReplicate(k.vk, o, ins[0])
	case []float64:
		return devReplicate(k.vk, o, ins[0])
	}
	return false
}

func devReplicate[T vulkan.Float](v *Vulkan, o []T, in any) bool {
	x, ok := in.([]T)
	return ok && len(x) > 0 && len(o)%len(x) == 0 && use[T](v, "replicate", "", len(o)) &&
		v.done("replicate", vulkan.Replicate(v.Device, o, x))
}

// device runs a transpose as an affine gather: the output's dimension p walks the input with
// the stride of its dimension perm[p].
func (k transposeK) device(out any, ins []any) bool {
	if !k.vk.on() || len(ins) != 1 || len(k.shape) == 0 {
		return false
	}
	in := core.Shape(k.shape).Strides()
	dom := make([]int, len(k.perm))
	st := make([]int, len(k.perm))
	for p, q := range k.perm {
		dom[p], st[p] = k.shape[q], in[q]
	}
	switch o := out.(type) {
	case []float32:
		return devTranspose(k.vk, o, ins[0], dom, st)
	case []float64:
		return devTranspose(k.vk, o, ins[0], dom, st)
	}
	return false
}

func devTranspose[T vulkan.Float](v *Vulkan, o []T, in any, dom, st []int) bool {
	x, ok := in.([]T)
	return ok && len(x) == len(o) && len(o) > 0 && use[T](v, "gather", "", len(o)) &&
		v.done("transpose", vulkan.GatherAffine(v.Device, o, x, dom, st, 0, 1))
}
