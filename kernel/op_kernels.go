package kernel

import (
	"github.com/bulkad/bulkad/core"
	"github.com/pkg/errors"
)

// Kernel computes an op's output into out (a flat slice of the output's element type,
// fully overwritten) from the flat input slices.
type Kernel interface {
	Run(out any, ins []any) error
}

type elem interface {
	~float64 | ~float32 | ~int64 | ~bool
}

type num interface {
	~float64 | ~float32 | ~int64
}

func typeErr(what string, out any, ins []any) error {
	ts := make([]string, len(ins))
	for i, in := range ins {
		ts[i] = typeName(in)
	}
	return errors.Errorf("kernel: %s: unexpected value types, out %s, inputs %v", what, typeName(out), ts)
}

func typeName(a any) string {
	switch a.(type) {
	case []float64:
		return "f64"
	case []float32:
		return "f32"
	case []int64:
		return "i64"
	case []bool:
		return "bool"
	}
	return "?"
}

// ---- gather ----

// odometer advances the row-major multi-index ix over shape sh.
func odometer(ix []int64, sh []int) {
	for d := len(ix) - 1; d >= 0; d-- {
		ix[d]++
		if ix[d] < int64(sh[d]) {
			return
		}
		ix[d] = 0
	}
}

// Gather is gather sh x f over flat slices: the index function is compiled once (affine
// plan, looked-up table or closures over an IndexProgram); out-of-bounds blocks read 0.
type Gather struct {
	Dom  []int // domain shape (the index function's variables)
	Src  []int // the indexed outer dims of x
	Rest int   // elements per block
	IndexPlan
}

// IndexPlan is what Gather and Scatter share: the compiled index function, its fast paths
// and the device path.
type IndexPlan struct {
	Fn *IndexProgram
	// Affine is set when the index function is affine and provably in bounds
	// (IndexProgram.AffinePlan): block offset = AffineBase + Σ AffineStrides[v]·k_v.
	Affine        bool
	AffineStrides []int
	AffineBase    int
	VK            *Vulkan // device path (nil: CPU only)
	tab           ixTable // device index table when fn reads no run-time array
	// Lookup is the looked-up fast path (an index read from a run-time array through a
	// table), nil when it does not apply.
	Lookup *Lookup

	// Clip is the clipped affine path (IndexProgram.ClipPlan) of an affine index function
	// that is not provably in bounds; it is used when Affine is not set.
	Clip *ClipPlan
	// Table is Clip's offset per point of a small domain with short rows (see clipTableFor),
	// run instead of Clip's walk unless an across plan applies; nil otherwise.
	Table []int32
	// pad is Clip run on a zero-padded copy of the addressed array (3×3 windows, see
	// ClipPlan.padded), taken before the other clipped paths for single float elements; padS
	// keeps the padded array between runs.
	pad  *padPlan
	padS *Scratch
}

// SetFastPaths sets the CPU fast paths of p.Fn over the domain dom and the indexed outer dims
// (Gather's Src, Scatter's Dst), when p.Fn reads no free term: the affine path
// (IndexProgram.AffinePlan) where it applies, and the clipped one (IndexProgram.ClipPlan),
// used when Affine is not set, with its offset table for a small domain with short rows
// (Table). Lookup is left to the caller.
func (p *IndexPlan) SetFastPaths(dom, outer []int) {
	if p.Fn == nil || len(p.Fn.Frees) != 0 {
		return
	}
	p.AffineStrides, p.AffineBase, p.Affine = p.Fn.AffinePlan(dom, outer)
	p.Clip = p.Fn.ClipPlan(dom, outer)
	if !p.Affine {
		p.Table = clipTableFor(p.Clip)
		if p.Clip != nil {
			if p.pad = p.Clip.padded(1); p.pad != nil {
				p.padS = &Scratch{}
			}
		}
	}
}

// PaddedRows reports whether the plan's clipped path runs on a zero-padded copy of the
// addressed array in its rows mode: the domain's last variable walks contiguous rows of it
// (after SetFastPaths).
func (p *IndexPlan) PaddedRows() bool { return p.pad != nil && p.pad.rows }

// PaddedWindows reports whether the plan's clipped path runs on a zero-padded copy of the
// addressed array with the domain's last two variables a 3×3 window of it (after
// SetFastPaths).
func (p *IndexPlan) PaddedWindows() bool { return p.pad != nil && !p.pad.rows }

// ixPath is the CPU path a run of a Gather or a Scatter takes (IndexPlan.route).
type ixPath int

const (
	viaLoop   ixPath = iota // the index program point by point, its extra inputs bound
	viaLookup               // the looked-up path (Lookup)
	viaAffine               // the affine path (Affine)
	viaClip                 // the clipped affine path (Clip)
)

// route picks the CPU path of a run over the domain dom with the inputs ins (the moved array,
// then the extra inputs of p.Fn): the looked-up one when Lookup applies to ins (lk its
// indices), else the affine or else the clipped one when there are no extra inputs, else the
// loop of p.Fn with the extra inputs bound in env (err when they do not fit).
func (p *IndexPlan) route(dom []int, ins []any) (path ixPath, lk []int64, env *ixEnv, err error) {
	if ix, ok := p.Lookup.indices(dom, ins); ok {
		return viaLookup, ix, nil, nil
	}
	switch {
	case p.Affine && len(ins) == 1:
		return viaAffine, nil, nil, nil
	case p.Clip != nil && len(ins) == 1:
		return viaClip, nil, nil, nil
	}
	env, err = p.Fn.newEnv(ins[1:])
	return viaLoop, nil, env, err
}

// Run implements Kernel.
func (k *Gather) Run(out any, ins []any) error {
	if k.device(out, ins) {
		return nil
	}
	return byElem("gather", out, ins, gatherRun[float64], gatherRun[float32], gatherRun[int64], gatherRun[bool], k)
}

// byElem calls the instance of a generic kernel function for out's element type.
func byElem[K any](what string, out any, ins []any, f64 func(K, []float64, []any) error, f32 func(K, []float32, []any) error,
	i64 func(K, []int64, []any) error, b func(K, []bool, []any) error, k K) error {
	switch o := out.(type) {
	case []float64:
		return f64(k, o, ins)
	case []float32:
		return f32(k, o, ins)
	case []int64:
		return i64(k, o, ins)
	case []bool:
		return b(k, o, ins)
	}
	return typeErr(what, out, ins)
}

func gatherRun[T elem](k *Gather, o []T, ins []any) error {
	x, ok := ins[0].([]T)
	if !ok {
		return typeErr("gather", o, ins)
	}
	path, lk, env, err := k.route(k.Dom, ins)
	switch {
	case err != nil:
		return err
	case path == viaLookup && k.Lookup.Dims != nil:
		gatherLookupClip(o, x, lk, k.Dom, k.Lookup.Dims, k.Rest)
	case path == viaLookup:
		gatherLookup(o, x, lk, k.Lookup.Table, k.Dom, k.Lookup.St, k.Lookup.Base, k.Rest)
	case path == viaAffine:
		gatherAffine(o, x, k.Dom, k.AffineStrides, k.AffineBase, k.Rest)
	case path == viaClip && k.pad != nil && k.Rest == 1 && padRun(k.Clip, k.pad, k.padS, k.Dom, o, x, false):
	case path == viaClip && k.Table != nil && (k.Rest != 1 || k.Clip.across == nil):
		return gatherTable(k.Clip, k.Table, o, x, k.Rest)
	case path == viaClip:
		return gatherClip(k.Clip, o, x, k.Rest)
	default:
		gatherLoop(k, env, o, x)
	}
	return nil
}

func gatherLoop[T elem](k *Gather, env *ixEnv, out, x []T) {
	var zero T
	ix := env.slots[:len(k.Dom)]
	r := k.Rest
	for p := 0; p < len(out); p += r {
		if off := k.Fn.offset(env, k.Src); off >= 0 {
			if r == 1 {
				out[p] = x[off]
			} else {
				copy(out[p:p+r], x[off*r:off*r+r])
			}
		} else {
			for i := p; i < p+r; i++ {
				out[i] = zero
			}
		}
		odometer(ix, k.Dom)
	}
}

// ---- scatter ----

// Scatter is scatter sh x f over flat slices: out-of-range writes are dropped and colliding
// writes added, in the order of the domain.
type Scatter struct {
	Dom  []int // domain shape = outer dims of x
	Dst  []int // outer dims of the result addressed by the index function
	Rest int
	IndexPlan
}

// Run implements Kernel.
func (k *Scatter) Run(out any, ins []any) error {
	if k.device(out, ins) {
		return nil
	}
	return byElem("scatter", out, ins, scatterRun[float64], scatterRun[float32], scatterRun[int64], scatterRun[bool], k)
}

func scatterRun[T elem](k *Scatter, o []T, ins []any) error {
	x, ok := ins[0].([]T)
	if !ok {
		return typeErr("scatter", o, ins)
	}
	add := addOf[T]()
	path, lk, env, err := k.route(k.Dom, ins)
	switch {
	case err != nil:
		return err
	case path == viaLookup && k.Lookup.Dims != nil:
		scatterLookupClip(o, x, lk, k.Dom, k.Lookup.Dims, k.Rest, add)
	case path == viaLookup:
		scatterLookup(o, x, lk, k.Lookup.Table, k.Dom, k.Lookup.St, k.Lookup.Base, k.Rest, add)
	case path == viaAffine:
		scatterAffine(o, x, k.Dom, k.AffineStrides, k.AffineBase, k.Rest, add)
	case path == viaClip && k.pad != nil && k.Rest == 1 && padRun(k.Clip, k.pad, k.padS, k.Dom, o, x, true):
	case path == viaClip && k.Table != nil && (k.Rest != 1 || k.Clip.acrossAdd == nil):
		return scatterTable(k.Clip, k.Table, o, x, k.Rest)
	case path == viaClip:
		return scatterClip(k.Clip, o, x, k.Rest)
	default:
		scatterLoop(k, env, o, x, add)
	}
	return nil
}

// addOf is how a scatter accumulates elements of T: + for numbers, || for booleans. The
// functions are static (see staticArith: a literal here would allocate at every call).
func addOf[T elem]() func(a, b T) T {
	var f any
	switch any(*new(T)).(type) {
	case float64:
		f = addT[float64]
	case float32:
		f = addT[float32]
	case int64:
		f = addT[int64]
	case bool:
		f = orBool
	}
	return f.(func(a, b T) T)
}

func orBool(a, b bool) bool { return a || b }

func scatterLoop[T elem](k *Scatter, env *ixEnv, out, x []T, add func(a, b T) T) {
	var zero T
	for i := range out {
		out[i] = zero
	}
	ix := env.slots[:len(k.Dom)]
	r := k.Rest
	for p := 0; p < len(x); p += r {
		if off := k.Fn.offset(env, k.Dst); off >= 0 {
			dst := out[off*r : off*r+r]
			for i, v := range x[p : p+r] {
				dst[i] = add(dst[i], v)
			}
		}
		odometer(ix, k.Dom)
	}
}

// ---- moves: replicate, fromVector, cond, copy, transpose ----

// Concat writes its inputs one after another (fromVector; replicate when n copies of one input).
type Concat struct {
	Copies int
	VK     *Vulkan // device path for replicate (nil: CPU only)
}

// Run implements Kernel.
func (k Concat) Run(out any, ins []any) error {
	if k.device(out, ins) {
		return nil
	}
	return byElem("fromVector", out, ins, concatLoop[float64], concatLoop[float32], concatLoop[int64], concatLoop[bool], k.Copies)
}

func concatLoop[T elem](copies int, out []T, ins []any) error {
	p := 0
	for c := 0; c < copies; c++ {
		for _, in := range ins {
			x, ok := in.([]T)
			if !ok || p+len(x) > len(out) {
				return typeErr("fromVector", out, ins)
			}
			copy(out[p:], x)
			p += len(x)
		}
	}
	if p != len(out) {
		return errors.Errorf("kernel: fromVector: wrote %d of %d elements", p, len(out))
	}
	return nil
}

// Cond selects between inputs 1 and 2 by the scalar bool input 0.
type Cond struct{}

// Run implements Kernel.
func (Cond) Run(out any, ins []any) error {
	c, ok := ins[0].([]bool)
	if !ok || len(c) != 1 {
		return typeErr("cond", out, ins)
	}
	src := ins[2]
	if c[0] {
		src = ins[1]
	}
	return Concat{Copies: 1}.Run(out, []any{src})
}

// Transpose is the generalised transpose for any dtype.
type Transpose struct {
	Perm  []int // full permutation
	Shape []int // input shape
	VK    *Vulkan
}

// Run implements Kernel.
func (k Transpose) Run(out any, ins []any) error {
	if k.device(out, ins) {
		return nil
	}
	return byElem("tr", out, ins, transposeLoop[float64], transposeLoop[float32], transposeLoop[int64], transposeLoop[bool], k)
}

// ---- index ----

// Index is index x [e1..ek]: fixed holds literal components (or -1 for a component read
// from the next scalar i64 input).
type Index struct {
	Outer []int // x's first k dims
	Fixed []int64
	Rest  int
}

// Run implements Kernel.
func (k Index) Run(out any, ins []any) error {
	off, ok := 0, true
	in := 1
	for d, f := range k.Fixed {
		j := f
		if j < 0 {
			s, isI := ins[in].([]int64)
			if !isI || len(s) != 1 {
				return typeErr("index", out, ins)
			}
			j = s[0]
			in++
			if j < 0 {
				ok = false
			}
		}
		if j >= int64(k.Outer[d]) {
			ok = false
		}
		if ok {
			off = off*k.Outer[d] + int(j)
		}
	}
	switch o := out.(type) {
	case []float64:
		return indexCopy(o, ins[0], off, ok)
	case []float32:
		return indexCopy(o, ins[0], off, ok)
	case []int64:
		return indexCopy(o, ins[0], off, ok)
	case []bool:
		return indexCopy(o, ins[0], off, ok)
	}
	return typeErr("index", out, ins)
}

func indexCopy[T elem](out []T, in any, off int, ok bool) error {
	x, isT := in.([]T)
	if !isT {
		return errors.Errorf("kernel: index: input type %s, output type %s", typeName(in), typeName(out))
	}
	if !ok {
		var zero T
		for i := range out {
			out[i] = zero
		}
		return nil
	}
	r := len(out)
	copy(out, x[off*r:off*r+r])
	return nil
}

// ---- reductions ----

// SumOuter sums along the outer dimension (on the Vulkan device VK when it pays).
type SumOuter struct{ VK *Vulkan }

// Run implements Kernel.
func (k SumOuter) Run(out any, ins []any) error {
	if k.device(out, ins) {
		return nil
	}
	// [1, rows, n]: the operand's rows of the output's length (an empty output: no rows)
	n, rows := SliceLen(out), 0
	if n > 0 && len(ins) == 1 {
		rows = SliceLen(ins[0]) / n
	}
	return alongAxis("sumOuter", out, ins, 1, rows, n, false)
}

// alongAxis runs a sum (sumOuterBuf) or, with argmax, an argmax (argmaxOuterBuf) along the
// middle axis of its operand viewed as [pre, n, post]. (The kernels are called directly, not
// through a function value, so that the two buffers stay on the stack.)
func alongAxis(what string, out any, ins []any, pre, n, post int, argmax bool) error {
	if len(ins) != 1 {
		return errors.Errorf("kernel: %s: %d inputs, want 1", what, len(ins))
	}
	var ob, xb buf
	o, x := bufAt(&ob, out), bufAt(&xb, ins[0])
	ok := false
	if argmax {
		ok = argmaxOuterBuf(o, x, pre, n, post)
	} else {
		ok = sumOuterBuf(o, x, pre, n, post)
	}
	if !ok {
		return errors.Errorf("kernel: %s: input %s[%d], output %s[%d] for [%d %d %d]", what, typeName(ins[0]), SliceLen(ins[0]), typeName(out), SliceLen(out), pre, n, post)
	}
	return nil
}

// SumAround sums an operand viewed as [Pre, N, Post] along its first and last axes into [N]:
// out[n] = Σ_p Σ_q x[p, n, q], each output's terms added in the order of (p, q) from zero,
// which is the order, and so the bits, of sumOuter (reshape [Pre·Post, N] (tr [0,2,1] x)).
// It is that sum without the transpose (a batch norm's per-channel sums of [b, c, h·w]:
// each step of the transposition wrote and read the whole activation once more).
type SumAround struct{ Pre, N, Post int }

// Run implements Kernel.
func (k SumAround) Run(out any, ins []any) error {
	if len(ins) != 1 || k.Pre < 0 || k.N < 0 || k.Post < 0 || SliceLen(out) != k.N || SliceLen(ins[0]) != k.Pre*k.N*k.Post {
		return errors.Errorf("kernel: sumAround: %d inputs, output of %d and input of %d elements for [%d %d %d] summed around the middle axis", len(ins), SliceLen(out), sliceLens(ins), k.Pre, k.N, k.Post)
	}
	dom, st := []int{k.Pre, k.N, k.Post}, []int{0, 1, 0}
	switch o := out.(type) {
	case []float64:
		if x, ok := ins[0].([]float64); ok {
			scatterAffine(o, x, dom, st, 0, 1, addOf[float64]())
			return nil
		}
	case []float32:
		if x, ok := ins[0].([]float32); ok {
			scatterAffine(o, x, dom, st, 0, 1, addOf[float32]())
			return nil
		}
	case []int64:
		if x, ok := ins[0].([]int64); ok {
			scatterAffine(o, x, dom, st, 0, 1, addOf[int64]())
			return nil
		}
	}
	return typeErr("sumAround", out, ins)
}

// sliceLens is the total length of the slices.
func sliceLens(ins []any) int {
	n := 0
	for _, in := range ins {
		n += SliceLen(in)
	}
	return n
}

// Axis is a sum (or, with Argmax, the argmax) along the middle axis of an operand viewed as
// [Pre, N, Post]; the sum is sumOuter of a transpose that moves one axis to the front
// (Gorgonia's Sum along an axis when no device).
type Axis struct {
	Argmax       bool
	Pre, N, Post int
	VK           *Vulkan
}

// Run implements Kernel.
func (k Axis) Run(out any, ins []any) error {
	switch {
	case k.device(out, ins):
		return nil
	case k.Argmax:
		return alongAxis("argmaxOuter", out, ins, k.Pre, k.N, k.Post, true)
	}
	return alongAxis("sumOuter", out, ins, k.Pre, k.N, k.Post, false)
}

// ---- casts ----

// ArgmaxView is argmax over the outer positions (flat offsets outerOff) of a strided view of
// its input, for every inner position (shape inner, strides innerSt): first maximum wins, NaN
// never wins against a number, all-NaN gives 0.
type ArgmaxView struct {
	OuterOff []int
	Inner    []int
	InnerSt  []int
	Off      int
}

// Run implements Kernel.
func (k *ArgmaxView) Run(out any, ins []any) error {
	o, ok := out.([]int64)
	if !ok || len(ins) != 1 || len(o) != core.Shape(k.Inner).Size() {
		return typeErr("argmaxOuter", out, ins)
	}
	switch x := ins[0].(type) {
	case []float64:
		argmaxView(k, o, x)
	case []float32:
		argmaxView(k, o, x)
	case []int64:
		argmaxView(k, o, x)
	default:
		return typeErr("argmaxOuter", out, ins)
	}
	return nil
}

// argmaxView splits the inner positions along their first dimension across goroutines
// (inParallel) and runs argmaxViewRange on each part.
func argmaxView[T num](k *ArgmaxView, out []int64, x []T) {
	if len(k.Inner) == 0 || k.Inner[0] < 2 {
		argmaxViewRange(k, out, x)
		return
	}
	if workers(k.Inner[0], len(out)*len(k.OuterOff)) <= 1 {
		argmaxViewRange(k, out, x) // (the split's closure would allocate)
		return
	}
	rest := len(out) / k.Inner[0] // outputs per index of the first inner dimension
	inParallel(k.Inner[0], len(out)*len(k.OuterOff), func(lo, hi int) {
		if lo == 0 && hi == k.Inner[0] {
			argmaxViewRange(k, out, x)
			return
		}
		part := *k
		part.Inner = append([]int{hi - lo}, k.Inner[1:]...)
		part.Off = k.Off + lo*k.InnerSt[0]
		argmaxViewRange(&part, out[lo*rest:hi*rest], x)
	})
}

// contiguousOffsets reports whether offs are consecutive positions (offs[i] = offs[0] + i).
func contiguousOffsets(offs []int) bool {
	for i, o := range offs {
		if o != offs[0]+i {
			return false
		}
	}
	return len(offs) > 0
}

// rowArgmax is the first position of row's maximum under argmaxOuter's rules: a strict
// comparison (the first of equal maxima, −0 and +0 equal), a number always beating a NaN, an
// all-NaN row giving 0.
func rowArgmax[T num](row []T) int64 {
	best, bi := row[0], 0
	for i, v := range row[1:] {
		if v > best || (best != best && v == v) {
			best, bi = v, i+1
		}
	}
	return int64(bi)
}

// argmaxViewRange is argmaxView on the calling goroutine.
func argmaxViewRange[T num](k *ArgmaxView, out []int64, x []T) {
	if len(k.OuterOff) <= argmaxFewOuter && len(k.Inner) > 0 {
		argmaxViewFew(k, out, x)
		return
	}
	if n := len(k.OuterOff); contiguousOffsets(k.OuterOff) {
		// each output's positions are a contiguous row (the argmax of a softmax along its
		// last axis, read through tr [2,0,1]): one pass along it, where the loop below walks
		// every output once per position (the zoo transformer's [16, 64, 64] scores: 2.9 ns
		// an element)
		at := k.Off + k.OuterOff[0]
		affineWalk(k.Inner, k.InnerSt, 0, func(p, io, count, stride int) {
			for j := p; j < p+count; j++ {
				out[j] = rowArgmax(x[at+io : at+io+n])
				io += stride
			}
		})
		return
	}
	clear(out)
	for i := 1; i < len(k.OuterOff); i++ {
		oi := k.Off + k.OuterOff[i]
		affineWalk(k.Inner, k.InnerSt, 0, func(p, io, count, stride int) {
			for j := p; j < p+count; j++ {
				v, b := x[oi+io], x[k.Off+k.OuterOff[out[j]]+io]
				if v > b || (b != b && v == v) {
					out[j] = int64(i)
				}
				io += stride
			}
		})
	}
}
