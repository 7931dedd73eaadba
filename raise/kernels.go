package raise

import (
	"math"

	"github.com/bulkad/bulkad/core"
	"github.com/pkg/errors"
)

// A kernel computes an op's output into out (a flat slice of the output's element type,
// fully overwritten) from the flat input slices.
type kernel interface {
	run(out any, ins []any) error
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
	return errors.Errorf("raise: %s: unexpected value types, out %s, inputs %v", what, typeName(out), ts)
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

type gatherK struct {
	dom  []int // domain shape (the index function's variables)
	src  []int // the indexed outer dims of x
	rest int   // elements per block
	fn   *ixProg
	// affine fast path (see affinePlan)
	aff   bool
	ast   []int
	abase int
	vk    *Vulkan // device path (nil: CPU only)
	tab   ixTable // device index table when fn reads no run-time array
	lk    *lookupK
}

func (k *gatherK) run(out any, ins []any) error {
	if k.device(out, ins) {
		return nil
	}
	if k.lk != nil && k.lk.gather(k, out, ins) {
		return nil
	}
	if k.aff && len(ins) == 1 {
		switch o := out.(type) {
		case []float64:
			if x, ok := ins[0].([]float64); ok {
				gatherAffine(o, x, k.dom, k.ast, k.abase, k.rest)
				return nil
			}
		case []float32:
			if x, ok := ins[0].([]float32); ok {
				gatherAffine(o, x, k.dom, k.ast, k.abase, k.rest)
				return nil
			}
		case []int64:
			if x, ok := ins[0].([]int64); ok {
				gatherAffine(o, x, k.dom, k.ast, k.abase, k.rest)
				return nil
			}
		case []bool:
			if x, ok := ins[0].([]bool); ok {
				gatherAffine(o, x, k.dom, k.ast, k.abase, k.rest)
				return nil
			}
		}
		return typeErr("gather", out, ins)
	}
	env, err := k.fn.newEnv(ins[1:])
	if err != nil {
		return err
	}
	switch o := out.(type) {
	case []float64:
		x, ok := ins[0].([]float64)
		if !ok {
			break
		}
		gatherLoop(k, env, o, x)
		return nil
	case []float32:
		x, ok := ins[0].([]float32)
		if !ok {
			break
		}
		gatherLoop(k, env, o, x)
		return nil
	case []int64:
		x, ok := ins[0].([]int64)
		if !ok {
			break
		}
		gatherLoop(k, env, o, x)
		return nil
	case []bool:
		x, ok := ins[0].([]bool)
		if !ok {
			break
		}
		gatherLoop(k, env, o, x)
		return nil
	}
	return typeErr("gather", out, ins)
}

func gatherLoop[T elem](k *gatherK, env *ixEnv, out, x []T) {
	var zero T
	ix := env.slots[:len(k.dom)]
	r := k.rest
	for p := 0; p < len(out); p += r {
		off, ok := 0, true
		for d, f := range k.fn.outs {
			j := f(env)
			if j < 0 || j >= int64(k.src[d]) {
				ok = false
				break
			}
			off = off*k.src[d] + int(j)
		}
		if ok {
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
		odometer(ix, k.dom)
	}
}

// ---- scatter ----

type scatterK struct {
	dom  []int // domain shape = outer dims of x
	dst  []int // outer dims of the result addressed by the index function
	rest int
	fn   *ixProg
	// affine fast path (see affinePlan)
	aff   bool
	ast   []int
	abase int
	vk    *Vulkan // device path (nil: CPU only)
	tab   ixTable // device index table when fn reads no run-time array
	lk    *lookupK
}

func (k *scatterK) run(out any, ins []any) error {
	if k.device(out, ins) {
		return nil
	}
	if k.lk != nil && k.lk.scatter(k, out, ins) {
		return nil
	}
	if k.aff && len(ins) == 1 {
		switch o := out.(type) {
		case []float64:
			if x, ok := ins[0].([]float64); ok {
				scatterAffine(o, x, k.dom, k.ast, k.abase, k.rest, func(a, b float64) float64 { return a + b })
				return nil
			}
		case []float32:
			if x, ok := ins[0].([]float32); ok {
				scatterAffine(o, x, k.dom, k.ast, k.abase, k.rest, func(a, b float32) float32 { return a + b })
				return nil
			}
		case []int64:
			if x, ok := ins[0].([]int64); ok {
				scatterAffine(o, x, k.dom, k.ast, k.abase, k.rest, func(a, b int64) int64 { return a + b })
				return nil
			}
		case []bool:
			if x, ok := ins[0].([]bool); ok {
				scatterAffine(o, x, k.dom, k.ast, k.abase, k.rest, func(a, b bool) bool { return a || b })
				return nil
			}
		}
		return typeErr("scatter", out, ins)
	}
	env, err := k.fn.newEnv(ins[1:])
	if err != nil {
		return err
	}
	switch o := out.(type) {
	case []float64:
		if x, ok := ins[0].([]float64); ok {
			scatterLoop(k, env, o, x, func(a, b float64) float64 { return a + b })
			return nil
		}
	case []float32:
		if x, ok := ins[0].([]float32); ok {
			scatterLoop(k, env, o, x, func(a, b float32) float32 { return a + b })
			return nil
		}
	case []int64:
		if x, ok := ins[0].([]int64); ok {
			scatterLoop(k, env, o, x, func(a, b int64) int64 { return a + b })
			return nil
		}
	case []bool:
		if x, ok := ins[0].([]bool); ok {
			scatterLoop(k, env, o, x, func(a, b bool) bool { return a || b })
			return nil
		}
	}
	return typeErr("scatter", out, ins)
}

func scatterLoop[T elem](k *scatterK, env *ixEnv, out, x []T, add func(a, b T) T) {
	var zero T
	for i := range out {
		out[i] = zero
	}
	ix := env.slots[:len(k.dom)]
	r := k.rest
	for p := 0; p < len(x); p += r {
		off, ok := 0, true
		for d, f := range k.fn.outs {
			j := f(env)
			if j < 0 || j >= int64(k.dst[d]) {
				ok = false
				break
			}
			off = off*k.dst[d] + int(j)
		}
		if ok {
			dst := out[off*r : off*r+r]
			for i, v := range x[p : p+r] {
				dst[i] = add(dst[i], v)
			}
		}
		odometer(ix, k.dom)
	}
}

// ---- moves: replicate, fromVector, cond, copy, transpose ----

// concatK writes its inputs one after another (fromVector; replicate when n copies of one input).
type concatK struct {
	copies int
	vk     *Vulkan // device path for replicate (nil: CPU only)
}

func (k concatK) run(out any, ins []any) error {
	if k.device(out, ins) {
		return nil
	}
	switch o := out.(type) {
	case []float64:
		return concatLoop(k.copies, o, ins)
	case []float32:
		return concatLoop(k.copies, o, ins)
	case []int64:
		return concatLoop(k.copies, o, ins)
	case []bool:
		return concatLoop(k.copies, o, ins)
	}
	return typeErr("fromVector", out, ins)
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
		return errors.Errorf("raise: fromVector: wrote %d of %d elements", p, len(out))
	}
	return nil
}

// condK selects between inputs 1 and 2 by the scalar bool input 0.
type condK struct{}

func (condK) run(out any, ins []any) error {
	c, ok := ins[0].([]bool)
	if !ok || len(c) != 1 {
		return typeErr("cond", out, ins)
	}
	src := ins[2]
	if c[0] {
		src = ins[1]
	}
	return concatK{copies: 1}.run(out, []any{src})
}

// transposeK is the generalised transpose for any dtype.
type transposeK struct {
	perm  []int // full permutation
	shape []int // input shape
	vk    *Vulkan
}

func (k transposeK) run(out any, ins []any) error {
	if k.device(out, ins) {
		return nil
	}
	switch o := out.(type) {
	case []float64:
		return transposeLoop(k, o, ins)
	case []float32:
		return transposeLoop(k, o, ins)
	case []int64:
		return transposeLoop(k, o, ins)
	case []bool:
		return transposeLoop(k, o, ins)
	}
	return typeErr("tr", out, ins)
}

func transposeLoop[T elem](k transposeK, out []T, ins []any) error {
	x, ok := ins[0].([]T)
	if !ok || len(x) != len(out) {
		return typeErr("tr", out, ins)
	}
	n := len(k.shape)
	inStr := core.Shape(k.shape).Strides()
	osh := make([]int, n)
	str := make([]int, n) // input stride of each output dimension
	for p, q := range k.perm {
		osh[p] = k.shape[q]
		str[p] = inStr[q]
	}
	ix := make([]int, n)
	off := 0
	for i := range out {
		out[i] = x[off]
		for d := n - 1; d >= 0; d-- {
			ix[d]++
			off += str[d]
			if ix[d] < osh[d] {
				break
			}
			off -= str[d] * ix[d]
			ix[d] = 0
		}
	}
	return nil
}

// ---- index ----

// indexK is index x [e1..ek]: fixed holds literal components (or -1 for a component read
// from the next scalar i64 input).
type indexK struct {
	outer []int // x's first k dims
	fixed []int64
	rest  int
}

func (k indexK) run(out any, ins []any) error {
	off, ok := 0, true
	in := 1
	for d, f := range k.fixed {
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
		if j >= int64(k.outer[d]) {
			ok = false
		}
		if ok {
			off = off*k.outer[d] + int(j)
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
		return errors.Errorf("raise: index: input type %s, output type %s", typeName(in), typeName(out))
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

type sumOuterK struct{ vk *Vulkan }

func (k sumOuterK) run(out any, ins []any) error {
	if k.device(out, ins) {
		return nil
	}
	switch o := out.(type) {
	case []float64:
		return sumLoop(o, ins[0])
	case []float32:
		return sumLoop(o, ins[0])
	case []int64:
		return sumLoop(o, ins[0])
	}
	return typeErr("sumOuter", out, ins)
}

func sumLoop[T num](out []T, in any) error {
	x, ok := in.([]T)
	if !ok || len(out) == 0 && len(x) != 0 || len(out) > 0 && len(x)%len(out) != 0 {
		return errors.Errorf("raise: sumOuter: input %s[%d], output %s[%d]", typeName(in), sliceLen(in), typeName(out), len(out))
	}
	for i := range out {
		out[i] = 0
	}
	r := len(out)
	for p := 0; p+r <= len(x) && r > 0; p += r {
		for i, v := range x[p : p+r] {
			out[i] += v
		}
	}
	return nil
}

// argmaxK is argmax along the middle axis of an operand viewed as [pre, n, post].
type argmaxK struct {
	pre, n, post int
	vk           *Vulkan
}

func (k argmaxK) run(out any, ins []any) error {
	if k.device(out, ins) {
		return nil
	}
	o, ok := out.([]int64)
	if !ok {
		return typeErr("argmaxOuter", out, ins)
	}
	if len(o) != k.pre*k.post || sliceLen(ins[0]) != k.pre*k.n*k.post {
		return typeErr("argmaxOuter", out, ins)
	}
	for p := 0; p < k.pre; p++ {
		oo := o[p*k.post : (p+1)*k.post]
		lo, hi := p*k.n*k.post, (p+1)*k.n*k.post
		switch x := ins[0].(type) {
		case []float64:
			argmaxLoop(oo, x[lo:hi], k.n, func(v float64) bool { return v != v })
		case []float32:
			argmaxLoop(oo, x[lo:hi], k.n, func(v float32) bool { return v != v })
		case []int64:
			argmaxLoop(oo, x[lo:hi], k.n, func(int64) bool { return false })
		default:
			return typeErr("argmaxOuter", out, ins)
		}
	}
	return nil
}

// argmaxLoop streams over the rows of x ([n, len(out)]): the first maximum wins, NaN never
// wins against a number, an all-NaN (or empty) column gives 0.
func argmaxLoop[T num](out []int64, x []T, n int, _ func(T) bool) {
	r := len(out)
	for j := range out {
		out[j] = 0
	}
	for i := 1; i < n; i++ {
		row := x[i*r : (i+1)*r]
		for j, v := range row {
			b := x[int(out[j])*r+j]
			if v > b || (b != b && v == v) {
				out[j] = int64(i)
			}
		}
	}
}

// ---- casts ----

type castK struct{}

func (castK) run(out any, ins []any) error {
	switch o := out.(type) {
	case []float64:
		switch x := ins[0].(type) {
		case []float64:
			copy(o, x)
		case []float32:
			convLoop(o, x)
		case []int64:
			convLoop(o, x)
		case []bool:
			boolToNum(o, x)
		}
	case []float32:
		switch x := ins[0].(type) {
		case []float64:
			convLoop(o, x)
		case []float32:
			copy(o, x)
		case []int64:
			convLoop(o, x)
		case []bool:
			boolToNum(o, x)
		}
	case []int64:
		switch x := ins[0].(type) {
		case []float64:
			for i, v := range x {
				o[i] = truncInt(v)
			}
		case []float32:
			for i, v := range x {
				o[i] = truncInt(float64(v))
			}
		case []int64:
			copy(o, x)
		case []bool:
			boolToNum(o, x)
		}
	case []bool:
		switch x := ins[0].(type) {
		case []float64:
			numToBool(o, x)
		case []float32:
			numToBool(o, x)
		case []int64:
			numToBool(o, x)
		case []bool:
			copy(o, x)
		}
	default:
		return typeErr("cast", out, ins)
	}
	return nil
}

func convLoop[T, U num](out []T, x []U) {
	for i, v := range x {
		out[i] = T(v)
	}
}

func boolToNum[T num](out []T, x []bool) {
	for i, v := range x {
		if v {
			out[i] = 1
		} else {
			out[i] = 0
		}
	}
}

func numToBool[T num](out []bool, x []T) {
	for i, v := range x {
		out[i] = v != 0
	}
}

// ---- element-wise ----

// unaryK applies a unary operation element-wise in Go (for what Gorgonia lacks).
type unaryK struct {
	op core.UnOp
	vk *Vulkan
}

func (k unaryK) run(out any, ins []any) error {
	if k.device(out, ins) {
		return nil
	}
	switch o := out.(type) {
	case []float64:
		x, ok := ins[0].([]float64)
		f := floatUnary(k.op)
		if !ok || f == nil {
			break
		}
		for i, v := range x {
			o[i] = f(v)
		}
		return nil
	case []float32:
		x, ok := ins[0].([]float32)
		f := floatUnary(k.op)
		if !ok || f == nil {
			break
		}
		for i, v := range x {
			o[i] = float32(f(float64(v)))
		}
		return nil
	case []int64:
		x, ok := ins[0].([]int64)
		if !ok {
			break
		}
		for i, v := range x {
			switch k.op {
			case core.OpNeg:
				o[i] = -v
			case core.OpAbs:
				if v < 0 {
					v = -v
				}
				o[i] = v
			case core.OpSign:
				o[i] = b2i(v > 0) - b2i(v < 0)
			default:
				return typeErr(k.op.String(), out, ins)
			}
		}
		return nil
	case []bool:
		x, ok := ins[0].([]bool)
		if !ok || k.op != core.OpNot {
			break
		}
		for i, v := range x {
			o[i] = !v
		}
		return nil
	}
	return typeErr(k.op.String(), out, ins)
}

func floatUnary(op core.UnOp) func(float64) float64 {
	switch op {
	case core.OpNeg:
		return func(x float64) float64 { return -x }
	case core.OpAbs:
		return math.Abs
	case core.OpSign:
		return func(x float64) float64 {
			switch {
			case x > 0:
				return 1
			case x < 0:
				return -1
			}
			return x // ±0 and NaN
		}
	case core.OpExp:
		return math.Exp
	case core.OpLog:
		return math.Log
	case core.OpSqrt:
		return math.Sqrt
	case core.OpSin:
		return math.Sin
	case core.OpCos:
		return math.Cos
	case core.OpTan:
		return math.Tan
	case core.OpTanh:
		return math.Tanh
	case core.OpSigmoid:
		return func(x float64) float64 { return 1 / (1 + math.Exp(-x)) }
	case core.OpRecip:
		return func(x float64) float64 { return 1 / x }
	case core.OpFloor:
		return math.Floor
	case core.OpCeil:
		return math.Ceil
	case core.OpLog1p:
		return math.Log1p
	case core.OpExpm1:
		return math.Expm1
	}
	return nil
}

// binaryK applies a binary operation element-wise; an operand shorter than the output is
// read cyclically (the fused x op replicate n y).
type binaryK struct {
	op core.BinOp
	vk *Vulkan
}

func (k binaryK) run(out any, ins []any) error {
	if k.device(out, ins) {
		return nil
	}
	switch x := ins[0].(type) {
	case []float64:
		y, ok := ins[1].([]float64)
		if !ok {
			break
		}
		if f := floatBin(k.op); f != nil {
			if o, ok := out.([]float64); ok {
				return binLoop(o, x, y, fastF64(k.op, f))
			}
		}
		if f := floatCmp[float64](k.op); f != nil {
			if o, ok := out.([]bool); ok {
				return binLoop(o, x, y, f)
			}
		}
	case []float32:
		y, ok := ins[1].([]float32)
		if !ok {
			break
		}
		if f := floatBin(k.op); f != nil {
			if o, ok := out.([]float32); ok {
				return binLoop(o, x, y, func(a, b float32) float32 { return float32(f(float64(a), float64(b))) })
			}
		}
		if f := floatCmp[float32](k.op); f != nil {
			if o, ok := out.([]bool); ok {
				return binLoop(o, x, y, f)
			}
		}
	case []int64:
		y, ok := ins[1].([]int64)
		f := intBinFunc(k.op)
		if !ok || f == nil || k.op == core.OpAnd || k.op == core.OpOr {
			break
		}
		switch o := out.(type) {
		case []int64:
			if !k.op.IsComparison() {
				return binLoop(o, x, y, f)
			}
		case []bool:
			if k.op.IsComparison() {
				return binLoop(o, x, y, func(a, b int64) bool { return f(a, b) != 0 })
			}
		}
	case []bool:
		y, ok := ins[1].([]bool)
		o, ok2 := out.([]bool)
		if !ok || !ok2 {
			break
		}
		switch k.op {
		case core.OpAnd:
			return binLoop(o, x, y, func(a, b bool) bool { return a && b })
		case core.OpOr:
			return binLoop(o, x, y, func(a, b bool) bool { return a || b })
		case core.OpEq:
			return binLoop(o, x, y, func(a, b bool) bool { return a == b })
		case core.OpNe:
			return binLoop(o, x, y, func(a, b bool) bool { return a != b })
		}
	}
	return typeErr(k.op.String(), out, ins)
}

// fastF64 returns f; the common arithmetic operations are inlined by binLoop's callers
// through these small closures.
func fastF64(op core.BinOp, f func(a, b float64) float64) func(a, b float64) float64 {
	switch op {
	case core.OpAdd:
		return func(a, b float64) float64 { return a + b }
	case core.OpMul:
		return func(a, b float64) float64 { return a * b }
	}
	return f
}

func binLoop[T, U elem](out []U, x, y []T, f func(a, b T) U) error {
	n := len(out)
	switch {
	case len(x) == n && len(y) == n:
		for i := range out {
			out[i] = f(x[i], y[i])
		}
	case len(x) == n && len(y) > 0 && n%len(y) == 0:
		py := len(y)
		for b := 0; b < n; b += py {
			o, xs := out[b:b+py], x[b:b+py]
			for j := range o {
				o[j] = f(xs[j], y[j])
			}
		}
	case len(y) == n && len(x) > 0 && n%len(x) == 0:
		px := len(x)
		for b := 0; b < n; b += px {
			o, ys := out[b:b+px], y[b:b+px]
			for j := range o {
				o[j] = f(x[j], ys[j])
			}
		}
	default:
		return errors.Errorf("raise: element-wise: operand lengths %d and %d do not fit output length %d", len(x), len(y), n)
	}
	return nil
}

func floatBin(op core.BinOp) func(a, b float64) float64 {
	switch op {
	case core.OpAdd:
		return func(a, b float64) float64 { return a + b }
	case core.OpSub:
		return func(a, b float64) float64 { return a - b }
	case core.OpMul:
		return func(a, b float64) float64 { return a * b }
	case core.OpDiv:
		return func(a, b float64) float64 { return a / b }
	case core.OpPow:
		return math.Pow
	case core.OpMax:
		// As core's evaluator: NaN propagates, +0 is above −0 (math.Max's rules).
		return math.Max
	case core.OpMin:
		return math.Min
	case core.OpAtan2:
		return math.Atan2
	}
	return nil
}

func floatCmp[T ~float64 | ~float32](op core.BinOp) func(a, b T) bool {
	switch op {
	case core.OpLt:
		return func(a, b T) bool { return a < b }
	case core.OpLe:
		return func(a, b T) bool { return a <= b }
	case core.OpGt:
		return func(a, b T) bool { return a > b }
	case core.OpGe:
		return func(a, b T) bool { return a >= b }
	case core.OpEq:
		return func(a, b T) bool { return a == b }
	case core.OpNe:
		return func(a, b T) bool { return a != b }
	}
	return nil
}

// stridedBinK is an element-wise binary operation whose operands are read through strides
// (0 along broadcast dimensions): the fused x op tr (replicate … y) and friends.
type stridedBinK struct {
	op     core.BinOp
	shape  []int
	xs, ys []int
	xo, yo int // offsets of the first element
	vk     *Vulkan
}

func (k stridedBinK) run(out any, ins []any) error {
	if k.device(out, ins) {
		return nil
	}
	switch x := ins[0].(type) {
	case []float64:
		y, ok := ins[1].([]float64)
		if !ok {
			break
		}
		if o, ok := out.([]float64); ok {
			switch k.op {
			case core.OpAdd:
				return stridedLoop(k, o, x, y, func(a, b float64) float64 { return a + b })
			case core.OpSub:
				return stridedLoop(k, o, x, y, func(a, b float64) float64 { return a - b })
			case core.OpMul:
				return stridedLoop(k, o, x, y, func(a, b float64) float64 { return a * b })
			case core.OpDiv:
				return stridedLoop(k, o, x, y, func(a, b float64) float64 { return a / b })
			}
			if f := floatBin(k.op); f != nil {
				return stridedLoop(k, o, x, y, f)
			}
		}
		if o, ok := out.([]bool); ok {
			if f := floatCmp[float64](k.op); f != nil {
				return stridedLoop(k, o, x, y, f)
			}
		}
	case []float32:
		y, ok := ins[1].([]float32)
		if !ok {
			break
		}
		if o, ok := out.([]float32); ok {
			switch k.op {
			case core.OpAdd:
				return stridedLoop(k, o, x, y, func(a, b float32) float32 { return a + b })
			case core.OpSub:
				return stridedLoop(k, o, x, y, func(a, b float32) float32 { return a - b })
			case core.OpMul:
				return stridedLoop(k, o, x, y, func(a, b float32) float32 { return a * b })
			case core.OpDiv:
				return stridedLoop(k, o, x, y, func(a, b float32) float32 { return a / b })
			}
			if f := floatBin(k.op); f != nil {
				return stridedLoop(k, o, x, y, func(a, b float32) float32 { return float32(f(float64(a), float64(b))) })
			}
		}
		if o, ok := out.([]bool); ok {
			if f := floatCmp[float32](k.op); f != nil {
				return stridedLoop(k, o, x, y, f)
			}
		}
	case []int64:
		y, ok := ins[1].([]int64)
		f := intBinFunc(k.op)
		if !ok || f == nil || k.op == core.OpAnd || k.op == core.OpOr {
			break
		}
		switch o := out.(type) {
		case []int64:
			if !k.op.IsComparison() {
				return stridedLoop(k, o, x, y, f)
			}
		case []bool:
			if k.op.IsComparison() {
				return stridedLoop(k, o, x, y, func(a, b int64) bool { return f(a, b) != 0 })
			}
		}
	case []bool:
		y, ok := ins[1].([]bool)
		o, ok2 := out.([]bool)
		if !ok || !ok2 {
			break
		}
		switch k.op {
		case core.OpAnd:
			return stridedLoop(k, o, x, y, func(a, b bool) bool { return a && b })
		case core.OpOr:
			return stridedLoop(k, o, x, y, func(a, b bool) bool { return a || b })
		case core.OpEq:
			return stridedLoop(k, o, x, y, func(a, b bool) bool { return a == b })
		case core.OpNe:
			return stridedLoop(k, o, x, y, func(a, b bool) bool { return a != b })
		}
	}
	return typeErr(k.op.String(), out, ins)
}

func stridedLoop[T, U elem](k stridedBinK, out []U, x, y []T, f func(a, b T) U) error {
	n := len(k.shape)
	if n == 0 {
		out[0] = f(x[k.xo], y[k.yo])
		return nil
	}
	last := k.shape[n-1]
	sx, sy := k.xs[n-1], k.ys[n-1]
	var idxBuf [8]int
	idx := idxBuf[:0]
	if n-1 > len(idxBuf) {
		idx = make([]int, n-1)
	} else {
		idx = idxBuf[:n-1]
	}
	xo, yo := k.xo, k.yo
	for p := 0; p+last <= len(out) && last > 0; p += last {
		o := out[p : p+last]
		xi, yi := xo, yo
		switch {
		case sx == 1 && sy == 0:
			b := y[yi]
			for j, a := range x[xi : xi+last] {
				o[j] = f(a, b)
			}
		case sx == 0 && sy == 1:
			a := x[xi]
			for j, b := range y[yi : yi+last] {
				o[j] = f(a, b)
			}
		case sx == 1 && sy == 1:
			xs, ys := x[xi:xi+last], y[yi:yi+last]
			for j := range o {
				o[j] = f(xs[j], ys[j])
			}
		default:
			for j := range o {
				o[j] = f(x[xi], y[yi])
				xi += sx
				yi += sy
			}
		}
		for d := n - 2; d >= 0; d-- {
			idx[d]++
			xo += k.xs[d]
			yo += k.ys[d]
			if idx[d] < k.shape[d] {
				break
			}
			xo -= k.xs[d] * k.shape[d]
			yo -= k.ys[d] * k.shape[d]
			idx[d] = 0
		}
	}
	return nil
}

// maskMulK is out = z · (1 if p cmp q else 0) with p, q, z read through strides.
type maskMulK struct {
	cmp   core.BinOp
	shape []int
	st    [3][]int
	off   [3]int
}

func (k maskMulK) run(out any, ins []any) error {
	switch o := out.(type) {
	case []float64:
		z, ok := ins[2].([]float64)
		if !ok {
			break
		}
		return maskDispatch(k, o, ins[0], ins[1], z)
	case []float32:
		z, ok := ins[2].([]float32)
		if !ok {
			break
		}
		return maskDispatch(k, o, ins[0], ins[1], z)
	}
	return typeErr("maskMul", out, ins)
}

func maskDispatch[F ~float64 | ~float32](k maskMulK, out []F, p, q any, z []F) error {
	switch a := p.(type) {
	case []int64:
		if b, ok := q.([]int64); ok {
			return maskLoop(k, out, a, b, z, numCmp[int64](k.cmp))
		}
	case []float64:
		if b, ok := q.([]float64); ok {
			return maskLoop(k, out, a, b, z, numCmp[float64](k.cmp))
		}
	case []float32:
		if b, ok := q.([]float32); ok {
			return maskLoop(k, out, a, b, z, numCmp[float32](k.cmp))
		}
	}
	return errors.Errorf("raise: maskMul: operand types %s and %s", typeName(p), typeName(q))
}

func numCmp[T num](op core.BinOp) func(a, b T) bool {
	switch op {
	case core.OpLt:
		return func(a, b T) bool { return a < b }
	case core.OpLe:
		return func(a, b T) bool { return a <= b }
	case core.OpGt:
		return func(a, b T) bool { return a > b }
	case core.OpGe:
		return func(a, b T) bool { return a >= b }
	case core.OpEq:
		return func(a, b T) bool { return a == b }
	}
	return func(a, b T) bool { return a != b }
}

func maskLoop[T num, F ~float64 | ~float32](k maskMulK, out []F, p, q []T, z []F, cmp func(a, b T) bool) error {
	if cmp == nil {
		return errors.Errorf("raise: maskMul: comparison %v", k.cmp)
	}
	n := len(k.shape)
	if n == 0 {
		out[0] = z[k.off[2]] * b2f[F](cmp(p[k.off[0]], q[k.off[1]]))
		return nil
	}
	last := k.shape[n-1]
	sp, sq, sz := k.st[0][n-1], k.st[1][n-1], k.st[2][n-1]
	idx := make([]int, n-1)
	po, qo, zo := k.off[0], k.off[1], k.off[2]
	for at := 0; at+last <= len(out) && last > 0; at += last {
		pi, qi, zi := po, qo, zo
		o := out[at : at+last]
		for j := range o {
			if cmp(p[pi], q[qi]) {
				o[j] = z[zi]
			} else {
				o[j] = z[zi] * 0
			}
			pi += sp
			qi += sq
			zi += sz
		}
		for d := n - 2; d >= 0; d-- {
			idx[d]++
			po += k.st[0][d]
			qo += k.st[1][d]
			zo += k.st[2][d]
			if idx[d] < k.shape[d] {
				break
			}
			po -= k.st[0][d] * k.shape[d]
			qo -= k.st[1][d] * k.shape[d]
			zo -= k.st[2][d] * k.shape[d]
			idx[d] = 0
		}
	}
	return nil
}

func b2f[F ~float64 | ~float32](b bool) F {
	if b {
		return 1
	}
	return 0
}

// argmaxViewK is argmax over the outer positions (flat offsets outerOff) of a strided view of
// its input, for every inner position (shape inner, strides innerSt): first maximum wins, NaN
// never wins against a number, all-NaN gives 0.
type argmaxViewK struct {
	outerOff []int
	inner    []int
	innerSt  []int
	off      int
}

func (k *argmaxViewK) run(out any, ins []any) error {
	o, ok := out.([]int64)
	if !ok {
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

func argmaxView[T num](k *argmaxViewK, out []int64, x []T) {
	if len(k.outerOff) <= argmaxFewOuter && len(k.inner) > 0 {
		argmaxViewFew(k, out, x)
		return
	}
	for j := range out {
		out[j] = 0
	}
	n := len(k.inner)
	for i := 1; i < len(k.outerOff); i++ {
		oi := k.off + k.outerOff[i]
		if n == 0 {
			v, b := x[oi], x[k.off+k.outerOff[out[0]]]
			if v > b || (b != b && v == v) {
				out[0] = int64(i)
			}
			continue
		}
		last, sl := k.inner[n-1], k.innerSt[n-1]
		var idxBuf [8]int
		idx := idxBuf[:0]
		if n-1 <= len(idxBuf) {
			idx = idxBuf[:n-1]
		} else {
			idx = make([]int, n-1)
		}
		io := 0
		for p := 0; p+last <= len(out) && last > 0; p += last {
			ii := io
			for j := p; j < p+last; j++ {
				v, b := x[oi+ii], x[k.off+k.outerOff[out[j]]+ii]
				if v > b || (b != b && v == v) {
					out[j] = int64(i)
				}
				ii += sl
			}
			for d := n - 2; d >= 0; d-- {
				idx[d]++
				io += k.innerSt[d]
				if idx[d] < k.inner[d] {
					break
				}
				io -= k.innerSt[d] * k.inner[d]
				idx[d] = 0
			}
		}
	}
}
