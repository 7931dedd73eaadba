package onnx

import (
	"math"

	"github.com/bulkad/bulkad/core"
	"github.com/bulkad/bulkad/lower"
	"github.com/pkg/errors"
)

// Constant folding. Shapes are static, so everything an exporter computes from Shape —
// chunk sizes, the target shape of a flatten, the shape an Expand broadcasts to, the pads of
// F.pad — is known at import time, as is anything computed from integer and boolean
// initializers and Constant nodes only (masks and their slices). Lower calls early on every
// node before the operator tables: a node of an operator in foldFn whose inputs are all
// constants is evaluated here, on N-D tensors with the operator's axes, ranks and NumPy
// broadcasting, and its outputs bound as constants. Float results are rounded to the model's
// float type, so a folded single operation equals the one a runtime would do.

// maxFold is the largest number of elements of a folded constant.
const maxFold = 1 << 24

// bigFloatFill is the size above which ConstantOfShape of a float value becomes a term (a
// replicated scalar) rather than a constant listing every element.
const bigFloatFill = 1 << 16

// early lowers n if it is evaluated at import time (a constant computation, or a Cast that
// changes the dtype of an integer, boolean or float term) and reports whether it did. A float
// initializer cast to an integer or boolean type is folded with its value at import time
// (learnable parameters are float; integers computed from one are shapes or indices, which
// must be static).
func (c *ctx) early(n *Node) (bool, error) {
	if n.Domain != "" && n.Domain != "ai.onnx" {
		return false, nil
	}
	ins := make([]value, len(n.Inputs))
	allConst := true
	for i, name := range n.Inputs {
		if name == "" {
			continue
		}
		v, ok := c.env[name]
		if !ok {
			return false, nil // the operator tables report it
		}
		ins[i] = v
		if v.t != nil {
			allConst = false
		}
	}
	if n.OpType == "Cast" && (len(ins) == 0 || !isConst(ins[0]) && ins[0].t == nil) {
		return true, errors.New("input 0 is missing")
	}
	if n.OpType == "Cast" && !allConst && ins[0].t != nil {
		if vals, ok := c.constFloats(ins[0]); ok && castsToInteger(n) {
			// a float initializer used as integers (a shape, indices): its value now
			ins[0] = floatsV(convInts[int64](shapeOf(ins[0].t)), vals)
			allConst = true
		} else {
			return c.castTerm(n, ins[0].t)
		}
	}
	f := foldFn(n.OpType)
	if f == nil || !allConst || len(ins) == 0 {
		return false, nil
	}
	for i := range foldArity(n.OpType) {
		if i >= len(ins) || !isConst(ins[i]) {
			return true, errors.Errorf("input %d is missing", i)
		}
	}
	outs, err := f(c, n, ins)
	if err != nil || outs == nil {
		return outs != nil, err
	}
	for i, v := range outs {
		if i < len(n.Outputs) && n.Outputs[i] != "" {
			if err := c.bind(n.Outputs[i], v); err != nil {
				return true, err
			}
		}
	}
	return true, nil
}

// castsToInteger reports whether a Cast node's target is an integer or boolean type.
func castsToInteger(n *Node) bool {
	to := n.attrInt("to", 0)
	return to == dtInt64 || to == dtInt32 || to == dtBool
}

// castTerm lowers Cast of a term whose dtype or target is not the model's float type (a
// float-to-float Cast is left to the operator table): bool ↔ number, integer ↔ float. Casts
// to int32 give i64 (core has one integer type).
func (c *ctx) castTerm(n *Node, x core.Term) (bool, error) {
	to := n.attrInt("to", 0)
	var dt core.Dtype
	switch to {
	case dtFloat, dtDouble:
		dt = dtypeOf(to)
	case dtInt64, dtInt32:
		dt = core.Int64
	case dtBool:
		dt = core.Bool
	default:
		return true, errors.Errorf("cast of a %v array to type %d: supported targets are float (1), double (11), int64 (7), int32 (6) and bool (9)", x.Type(), to)
	}
	from := x.Type().Dtype
	if from.IsFloat() && dt.IsFloat() {
		return false, nil
	}
	if dt.IsFloat() && dt != c.dt {
		return true, errors.Errorf("cast of a %v array to type %d: only the model's float type (%v) is supported", x.Type(), to, c.dt)
	}
	t, err := lower.Convert(x, dt)
	if err != nil || len(n.Outputs) == 0 {
		return true, err
	}
	return true, c.bind(n.Outputs[0], value{t: t})
}

type foldFunc func(c *ctx, n *Node, ins []value) ([]value, error)

// foldFn is the import-time evaluation of an operator on constants, or nil.
func foldFn(op string) foldFunc {
	switch op {
	case "Identity":
		return func(c *ctx, n *Node, ins []value) ([]value, error) { return ins[:1], nil }
	case "Add", "Sub", "Mul", "Div", "Mod", "Pow":
		return foldArith
	case "Min", "Max", "Sum":
		return foldVariadic
	case "Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual", "And", "Or", "Xor":
		return foldCompare
	case "Neg", "Abs", "Sign", "Not", "Floor", "Ceil", "Sqrt", "Reciprocal":
		return foldUnary
	case "Where":
		return foldWhere
	case "Cast":
		return foldCast
	case "ConstantOfShape":
		return foldConstantOfShape
	case "Range":
		return foldRange
	case "Reshape":
		return foldReshape
	case "Flatten":
		return foldFlatten
	case "Squeeze":
		return foldSqueeze(false)
	case "Unsqueeze":
		return foldSqueeze(true)
	case "Transpose":
		return foldTranspose
	case "Concat":
		return foldConcat
	case "Gather":
		return foldGather
	case "Slice":
		return foldSlice
	case "Split":
		return foldSplit
	case "Expand":
		return foldExpand
	case "ReduceSum", "ReduceProd", "ReduceMin", "ReduceMax":
		return foldReduce
	}
	return nil
}

// foldArity is the number of inputs an operator's folding needs.
func foldArity(op string) int {
	switch op {
	case "Add", "Sub", "Mul", "Div", "Mod", "Pow", "Equal", "Less", "Greater", "LessOrEqual",
		"GreaterOrEqual", "And", "Or", "Xor", "Gather", "Reshape", "Expand":
		return 2
	case "Where", "Range":
		return 3
	}
	return 1
}

// --- constant tensors ---

func numel(dims []int64) int {
	n := 1
	for _, d := range dims {
		n *= int(d)
	}
	return n
}

// checkSize fails unless an array of shape dims has at most limit elements (without
// overflowing on absurd shapes).
func checkSize(dims []int64, limit int64) error {
	n := int64(1)
	for _, d := range dims {
		if d < 0 || d > limit || (d > 0 && n > limit/d) {
			return errors.Errorf("an array of shape %v is too large to fold (at most %d elements)", dims, limit)
		}
		n *= d
	}
	return nil
}

func intsV(dims []int64, xs []int64) value {
	return value{ints: xs, dims: dims, isInt: true}
}

func boolsV(dims []int64, xs []int64) value {
	return value{ints: xs, dims: dims, isInt: true, isBool: true}
}

func floatsV(dims []int64, xs []float64) value {
	return value{floats: xs, dims: dims, isF: true}
}

// isConst reports whether v is a constant (not a term, not a missing input).
func isConst(v value) bool { return v.t == nil && (v.isInt || v.isF) }

// f64s is a constant's elements as floats.
func f64s(v value) []float64 {
	if v.isF {
		return v.floats
	}
	out := make([]float64, len(v.ints))
	for i, x := range v.ints {
		out[i] = float64(x)
	}
	return out
}

// round rounds a folded float to the model's float type.
func (c *ctx) round(x float64) float64 {
	if c.dt == core.Float32 {
		return float64(float32(x))
	}
	return x
}

// gatherV makes the constant of shape dims whose element k is v's element src[k].
func gatherV(v value, dims []int64, src []int) value {
	if v.isF {
		out := make([]float64, len(src))
		for k, s := range src {
			out[k] = v.floats[s]
		}
		return value{floats: out, dims: dims, isF: true}
	}
	out := make([]int64, len(src))
	for k, s := range src {
		out[k] = v.ints[s]
	}
	return value{ints: out, dims: dims, isInt: true, isBool: v.isBool}
}

// forEach calls f with every multi-index of dims in row-major order (once with an empty
// index for rank 0; never for an empty shape).
func forEach(dims []int64, f func(ix []int)) {
	if numel(dims) == 0 {
		return
	}
	ix := make([]int, len(dims))
	for {
		f(ix)
		k := len(dims) - 1
		for ; k >= 0; k-- {
			ix[k]++
			if ix[k] < int(dims[k]) {
				break
			}
			ix[k] = 0
		}
		if k < 0 {
			return
		}
	}
}

// broadcastDims is the NumPy broadcast of shapes.
func broadcastDims(ds ...[]int64) ([]int64, error) {
	r := 0
	for _, d := range ds {
		r = max(r, len(d))
	}
	out := make([]int64, r)
	for i := range out {
		out[i] = 1
	}
	for _, d := range ds {
		off := r - len(d)
		for j, k := range d {
			switch {
			case k == out[off+j] || k == 1:
			case out[off+j] == 1:
				out[off+j] = k
			default:
				return nil, errors.Errorf("shapes %v do not broadcast", ds)
			}
		}
	}
	return out, nil
}

// bcastSrc maps every position of the broadcast shape out to the position of an array of
// shape in (NumPy's rule: aligned at the end, dimensions of 1 repeated).
func bcastSrc(in, out []int64) []int {
	src := make([]int, 0, numel(out))
	off := len(out) - len(in)
	forEach(out, func(ix []int) {
		s := 0
		for j, d := range in {
			s *= int(d)
			if d != 1 {
				s += ix[off+j]
			}
		}
		src = append(src, s)
	})
	return src
}

// broadcastAll brings constants to their common shape.
func broadcastAll(vs ...value) ([]value, []int64, error) {
	ds := make([][]int64, len(vs))
	for i, v := range vs {
		ds[i] = v.dims
	}
	out, err := broadcastDims(ds...)
	if err != nil {
		return nil, nil, err
	}
	if err := checkSize(out, maxFold); err != nil {
		return nil, nil, err
	}
	res := make([]value, len(vs))
	for i, v := range vs {
		res[i] = gatherV(v, out, bcastSrc(v.dims, out))
	}
	return res, out, nil
}

// --- element-wise ---

// broadcastTwo is broadcastAll for the two constant inputs of a folded binary operation.
func broadcastTwo(ins []value) ([]value, []int64, error) {
	if len(ins) != 2 || !isConst(ins[0]) || !isConst(ins[1]) {
		return nil, nil, errors.New("two inputs are required")
	}
	return broadcastAll(ins[0], ins[1])
}

func foldArith(c *ctx, n *Node, ins []value) ([]value, error) {
	vs, dims, err := broadcastTwo(ins)
	if err != nil {
		return nil, err
	}
	a, b := vs[0], vs[1]
	fmod := n.attrInt("fmod", 0) != 0
	if a.isInt && b.isInt && !a.isBool && !b.isBool {
		out := make([]int64, len(a.ints))
		for i := range out {
			x, y := a.ints[i], b.ints[i]
			switch n.OpType {
			case "Add":
				out[i] = x + y
			case "Sub":
				out[i] = x - y
			case "Mul":
				out[i] = x * y
			case "Div", "Mod":
				if y == 0 {
					return nil, errors.Errorf("integer %s by zero (%d, %d) in a constant computation", n.OpType, x, y)
				}
				q, r := x/y, x%y // C's truncated division, as ONNX runtimes compute it
				if n.OpType == "Div" {
					out[i] = q
				} else {
					if !fmod && r != 0 && (r < 0) != (y < 0) {
						r += y // the sign of the divisor (fmod = 0, Python's %)
					}
					out[i] = r
				}
			case "Pow":
				if y < 0 {
					return nil, errors.Errorf("integer Pow with a negative exponent %d", y)
				}
				p := int64(1)
				for k := int64(0); k < y; k++ {
					p *= x
				}
				out[i] = p
			}
		}
		return []value{intsV(dims, out)}, nil
	}
	if a.isBool || b.isBool {
		return nil, errors.Errorf("%s of boolean tensors", n.OpType)
	}
	if n.OpType == "Mod" && !fmod {
		return nil, errors.New("Mod of floats needs fmod = 1")
	}
	fa, fb := f64s(a), f64s(b)
	out := make([]float64, len(fa))
	for i := range out {
		x, y := fa[i], fb[i]
		var r float64
		switch n.OpType {
		case "Add":
			r = x + y
		case "Sub":
			r = x - y
		case "Mul":
			r = x * y
		case "Div":
			r = x / y
		case "Mod":
			r = math.Mod(x, y)
		case "Pow":
			r = math.Pow(x, y)
		}
		out[i] = c.round(r)
	}
	return []value{floatsV(dims, out)}, nil
}

// foldVariadic: Min, Max and Sum of one or more constants.
func foldVariadic(c *ctx, n *Node, ins []value) ([]value, error) {
	for _, v := range ins {
		if !isConst(v) {
			return nil, errors.New("an input is missing")
		}
	}
	vs, dims, err := broadcastAll(ins...)
	if err != nil {
		return nil, err
	}
	allInt := true
	for _, v := range vs {
		allInt = allInt && v.isInt && !v.isBool
	}
	if allInt {
		out := append([]int64(nil), vs[0].ints...)
		for _, v := range vs[1:] {
			for i, x := range v.ints {
				switch n.OpType {
				case "Min":
					out[i] = min(out[i], x)
				case "Max":
					out[i] = max(out[i], x)
				default:
					out[i] += x
				}
			}
		}
		return []value{intsV(dims, out)}, nil
	}
	out := append([]float64(nil), f64s(vs[0])...)
	for _, v := range vs[1:] {
		for i, x := range f64s(v) {
			switch n.OpType {
			case "Min":
				out[i] = math.Min(out[i], x)
			case "Max":
				out[i] = math.Max(out[i], x)
			default:
				out[i] = c.round(out[i] + x)
			}
		}
	}
	return []value{floatsV(dims, out)}, nil
}

func foldCompare(c *ctx, n *Node, ins []value) ([]value, error) {
	vs, dims, err := broadcastTwo(ins)
	if err != nil {
		return nil, err
	}
	logic := n.OpType == "And" || n.OpType == "Or" || n.OpType == "Xor"
	if logic && !(vs[0].isBool && vs[1].isBool) {
		return nil, errors.Errorf("%s of non-boolean tensors", n.OpType)
	}
	fa, fb := f64s(vs[0]), f64s(vs[1])
	out := make([]int64, len(fa))
	for i := range out {
		// o is −1, 0 or 1 as a < b, a = b, a > b (exact for integers; 2 for a NaN)
		o := cmp3(fa[i], fb[i])
		if vs[0].isInt && vs[1].isInt {
			o = cmp3(vs[0].ints[i], vs[1].ints[i])
		}
		a, b := fa[i] != 0, fb[i] != 0
		var r bool
		switch n.OpType {
		case "Equal":
			r = o == 0
		case "Less":
			r = o == -1
		case "Greater":
			r = o == 1
		case "LessOrEqual":
			r = o == -1 || o == 0
		case "GreaterOrEqual":
			r = o == 1 || o == 0
		case "And":
			r = a && b
		case "Or":
			r = a || b
		case "Xor":
			r = a != b
		}
		if r {
			out[i] = 1
		}
	}
	return []value{boolsV(dims, out)}, nil
}

// cmp3 is −1, 0 or 1 as a < b, a = b or a > b, and 2 when they are unordered (a NaN).
func cmp3[T int64 | float64](a, b T) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	case a == b:
		return 0
	}
	return 2
}

func foldUnary(c *ctx, n *Node, ins []value) ([]value, error) {
	v := ins[0]
	if n.OpType == "Not" {
		if !v.isBool {
			return nil, errors.New("Not of a non-boolean tensor")
		}
		out := make([]int64, len(v.ints))
		for i, x := range v.ints {
			if x == 0 {
				out[i] = 1
			}
		}
		return []value{boolsV(v.dims, out)}, nil
	}
	if v.isBool {
		return nil, errors.Errorf("%s of a boolean tensor", n.OpType)
	}
	if v.isInt {
		out := make([]int64, len(v.ints))
		for i, x := range v.ints {
			switch n.OpType {
			case "Neg":
				out[i] = -x
			case "Abs":
				out[i] = max(x, -x)
			case "Sign":
				out[i] = int64(cmp3(x, 0))
			case "Floor", "Ceil":
				out[i] = x
			default:
				return nil, errors.Errorf("%s of an integer tensor", n.OpType)
			}
		}
		return []value{intsV(v.dims, out)}, nil
	}
	out := make([]float64, len(v.floats))
	for i, x := range v.floats {
		var r float64
		switch n.OpType {
		case "Neg":
			r = -x
		case "Abs":
			r = math.Abs(x)
		case "Sign":
			r = x // 0, −0 and NaN are their own sign
			if x > 0 {
				r = 1
			} else if x < 0 {
				r = -1
			}
		case "Floor":
			r = math.Floor(x)
		case "Ceil":
			r = math.Ceil(x)
		case "Sqrt":
			r = math.Sqrt(x)
		case "Reciprocal":
			r = 1 / x
		}
		out[i] = c.round(r)
	}
	return []value{floatsV(v.dims, out)}, nil
}

func foldWhere(c *ctx, n *Node, ins []value) ([]value, error) {
	if len(ins) != 3 || !isConst(ins[0]) || !isConst(ins[1]) || !isConst(ins[2]) {
		return nil, errors.New("three inputs are required")
	}
	if !ins[0].isBool {
		return nil, errors.New("the condition is not boolean")
	}
	vs, dims, err := broadcastAll(ins...)
	if err != nil {
		return nil, err
	}
	cond, x, y := vs[0], vs[1], vs[2]
	if x.isF != y.isF {
		return nil, errors.New("the branches have different types")
	}
	src := make([]int, len(cond.ints))
	for i, b := range cond.ints {
		src[i] = i
		if b == 0 {
			src[i] = i + len(cond.ints)
		}
	}
	both := x
	if x.isF {
		both.floats = append(append([]float64(nil), x.floats...), y.floats...)
	} else {
		both.ints = append(append([]int64(nil), x.ints...), y.ints...)
	}
	return []value{gatherV(both, dims, src)}, nil
}

func foldCast(c *ctx, n *Node, ins []value) ([]value, error) {
	v := ins[0]
	switch to := n.attrInt("to", 0); to {
	case dtFloat, dtDouble:
		out := f64s(v)
		if to == dtFloat {
			out = append([]float64(nil), out...)
			for i, x := range out {
				out[i] = float64(float32(x))
			}
		}
		return []value{floatsV(v.dims, out)}, nil
	case dtInt64, dtInt32:
		out := make([]int64, 0, numel(v.dims))
		if v.isF {
			for _, x := range v.floats {
				if math.IsNaN(x) || math.Abs(x) >= 1<<63 {
					return nil, errors.Errorf("cast of %v to an integer", x)
				}
				out = append(out, int64(x)) // truncation toward zero
			}
		} else {
			out = append(out, v.ints...)
		}
		if to == dtInt32 {
			for i, x := range out {
				out[i] = int64(int32(x))
			}
		}
		return []value{intsV(v.dims, out)}, nil
	case dtBool:
		out := make([]int64, numel(v.dims))
		for i, x := range f64s(v) {
			if x != 0 {
				out[i] = 1
			}
		}
		return []value{boolsV(v.dims, out)}, nil
	default:
		return nil, errors.Errorf("cast to type %d: supported targets are float (1), double (11), int64 (7), int32 (6) and bool (9)", to)
	}
}

// --- generators ---

func foldConstantOfShape(c *ctx, n *Node, ins []value) ([]value, error) {
	shape := ins[0]
	if shape.isF || len(shape.dims) != 1 {
		return nil, errors.Errorf("the shape input (dims %v) must be a 1-D integer tensor", shape.dims)
	}
	dims := append([]int64{}, shape.ints...)
	if err := checkSize(dims, maxElems); err != nil {
		return nil, err
	}
	fill := value{floats: []float64{0}, isF: true} // the default: float 0
	if a, ok := n.Attrs["value"]; ok && a.T != nil {
		t := a.T
		if len(t.Ints)+len(t.Floats) != 1 {
			return nil, errors.Errorf("value has %d elements, want 1", len(t.Ints)+len(t.Floats))
		}
		switch t.DataType {
		case dtFloat, dtDouble:
			fill = value{floats: t.Floats, isF: true}
		case dtInt32, dtInt64, dtBool:
			fill = value{ints: t.Ints, isInt: true, isBool: t.DataType == dtBool}
		default:
			return nil, errors.Errorf("value of data type %d; supported: float, double, int32, int64, bool", t.DataType)
		}
	}
	size := numel(dims)
	if fill.isF {
		if size > bigFloatFill {
			t, err := lower.FullLike(core.Type{Shape: shapeOfDims(dims), Dtype: c.dt}, fill.floats[0])
			return []value{{t: t}}, err
		}
		out := make([]float64, size)
		for i := range out {
			out[i] = c.round(fill.floats[0])
		}
		return []value{floatsV(dims, out)}, nil
	}
	if err := checkSize(dims, maxFold); err != nil {
		return nil, err
	}
	out := make([]int64, size)
	for i := range out {
		out[i] = fill.ints[0]
	}
	return []value{{ints: out, dims: dims, isInt: true, isBool: fill.isBool}}, nil
}

func foldRange(c *ctx, n *Node, ins []value) ([]value, error) {
	if len(ins) != 3 {
		return nil, errors.New("start, limit and delta are required")
	}
	for i, v := range ins {
		if !isConst(v) || numel(v.dims) != 1 || v.isBool {
			return nil, errors.Errorf("input %d must be a numeric scalar", i)
		}
	}
	if ins[0].isInt && ins[1].isInt && ins[2].isInt {
		s, l, d := ins[0].ints[0], ins[1].ints[0], ins[2].ints[0]
		if d == 0 {
			return nil, errors.New("delta 0")
		}
		// max(ceil((limit − start) / delta), 0) in integers
		num, k := l-s, int64(0)
		if (num > 0) == (d > 0) && num != 0 {
			k = (num + d - sgn(d)) / d
		}
		if k > maxFold {
			return nil, errors.Errorf("range of %d elements is too large to fold", k)
		}
		out := make([]int64, k)
		for i := range out {
			out[i] = s + int64(i)*d
		}
		return []value{intsV([]int64{k}, out)}, nil
	}
	s, l, d := f64s(ins[0])[0], f64s(ins[1])[0], f64s(ins[2])[0]
	k := math.Max(math.Ceil((l-s)/d), 0)
	if d == 0 || math.IsNaN(k) || k > maxFold {
		return nil, errors.Errorf("range(%v, %v, %v) cannot be folded", s, l, d)
	}
	out := make([]float64, int(k))
	for i := range out {
		out[i] = c.round(s + float64(i)*d)
	}
	return []value{floatsV([]int64{int64(k)}, out)}, nil
}

func sgn(x int64) int64 {
	if x < 0 {
		return -1
	}
	return 1
}
