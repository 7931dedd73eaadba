package adapter

import (
	"fmt"
	"reflect"
	"sort"
	"strings"

	"github.com/bulkad/bulkad/core"
	"github.com/bulkad/bulkad/lower"
	"github.com/pkg/errors"
	"gorgonia.org/gorgonia"
)

// opCtx is what a translation function sees: the node, its op, the type its translation
// must have, and its operand nodes (their terms are passed as args).
type opCtx struct {
	t    *translator
	n    *gorgonia.Node
	op   gorgonia.Op
	want core.Type
	kids []*gorgonia.Node
}

// kidShape is the shape of operand i as a core shape ([] for scalars).
func (c *opCtx) kidShape(i int) core.Shape {
	if c.kids[i].IsScalar() {
		return core.Shape{}
	}
	return core.Shape(c.kids[i].Shape().Clone())
}

// entry is one row of the op table.
type entry struct {
	typ   string // the op's Go type as %T prints it, without a leading '*'
	tag   string // short name used for the lets of unnamed nodes
	arity int    // the number of operands, or variadic
	desc  string // what SupportedOps lists
	fn    func(c *opCtx, args []core.Term) (core.Term, error)
}

// variadic is the arity of an op that takes any number of operands.
const variadic = -1

// apply checks the number of operands and translates.
func (e entry) apply(c *opCtx, args []core.Term) (core.Term, error) {
	if e.arity != variadic && len(args) != e.arity {
		return nil, errors.Errorf("%d operands, want %d", len(args), e.arity)
	}
	return e.fn(c, args)
}

// unary adapts a lowering that needs nothing but its one operand.
func unary(f func(x core.Term) (core.Term, error)) func(*opCtx, []core.Term) (core.Term, error) {
	return func(_ *opCtx, args []core.Term) (core.Term, error) { return f(args[0]) }
}

// binary adapts a lowering that needs nothing but its two operands.
func binary(f func(x, y core.Term) (core.Term, error)) func(*opCtx, []core.Term) (core.Term, error) {
	return func(_ *opCtx, args []core.Term) (core.Term, error) { return f(args[0], args[1]) }
}

// The translations that an adapter makes from a lowering.
var (
	trSum           = alongAxes(lower.Sum)
	trMax           = alongAxes(lower.Max)
	trIm2col        = windowed(im2colWindow, lower.Im2Col)
	trMaxPool       = windowed(poolWindow, lower.MaxPool2D)
	trAvgPool       = windowed(poolWindow, avgPool)
	trGlobalAvgPool = unary(lower.GlobalAvgPool2D)
	trMaxBetween    = binary(lower.MaxBetween)
	trMinBetween    = binary(lower.MinBetween)
)

// opTable is the op table: every Gorgonia op the adapter recognises and its translation.
var opTable = [...]entry{
	{"gorgonia.elemBinOp", "bin", 2, "elementwise + - ⊙ ÷ ^ < > <= >= == != (with scalar broadcast, with and without retSame)", trElemBin},
	{"gorgonia.elemUnaryOp", "un", 1, "elementwise abs sign ceil floor sin cos exp ln log2 neg square sqrt inv invSqrt cube tanh sigmoid log1p expm1 softplus", trElemUnary},
	{"gorgonia.linAlgBinOp", "mm", 2, "A × B, Aᵀ × B, A × Bᵀ, Aᵀ × Bᵀ, A × b, Aᵀ × b, a ⋅ b, a ⊗ b, A ××× B (batched, with transposes)", trLinAlg},
	{"gorgonia.tensordotOp", "tdot", 2, "Tensordot", trTensordot},
	{"gorgonia.sumOp", "sum", 1, "Σ (Sum along axes)", trSum},
	{"gorgonia.maxOp", "max", 1, "MaxAlong (Max along axes)", trMax},
	{"gorgonia.sizeOp", "size", 1, "SizeOf (a constant)", trSize},
	{"gorgonia.reshapeOp", "reshape", 1, "Reshape", trReshape},
	{"gorgonia.transposeOp", "tr", 1, "Transpose", trTranspose},
	{"gorgonia.sliceOp", "slice", 1, "Slice (ranges with steps, integer indices)", trSlice},
	{"gorgonia.concatOp", "concat", variadic, "Concat", trConcat},
	{"gorgonia.repeatOp", "repeat", 2, "Repeat (broadcasting)", trRepeat},
	{"gorgonia.softmaxOp", "softmax", 1, "SoftMax, LogSoftMax", trSoftmax},
	{"gorgonia.im2colOp", "im2col", 1, "Im2Col (kernel, pad, stride, dilation)", trIm2col},
	{"gorgonia.col2imOp", "col2im", 1, "col2im", trCol2im},
	{"gorgonia.maxPoolOp", "maxpool", 1, "MaxPool2D (kernel, pad, stride)", trMaxPool},
	{"gorgonia.avgPoolOp", "avgpool", 1, "AveragePool2D (kernel, pad, stride; Gorgonia's divisor)", trAvgPool},
	{"gorgonia.globalAveragePoolOp", "gap", 1, "GlobalAveragePool2D", trGlobalAvgPool},
	{"gorgonia.upsampleOp", "upsample", 1, "Upsample2D", trUpsample},
	{"gorgonia.maxBetween", "maxb", 2, "MaxBetween", trMaxBetween},
	{"gorgonia.minBetween", "minb", 2, "MinBetween", trMinBetween},
	{"gorgonia.dtConvOp", "conv", 1, "ConvType (dtype conversion)", trConvType},
	{"gorgonia.dropoutOp", "dropout", 1, "Dropout (mask read from the node's own value)", trDropout},
	{"gorgonia.BatchNormOp", "bn", 1, "BatchNorm (training mode)", trBatchNorm},
	{"gorgonia.GroupNormOp", "gn", 1, "GroupNorm", trGroupNorm},
	{"gorgonia.sparsemaxOp", "sparsemax", 1, "Sparsemax (last axis)", trSparsemax},
	{"gorgonia.byIndicesOp", "take", 2, "ByIndices (indices of dtype Int become an i64 parameter)", trByIndices},
}

// lookup finds the table entry of an op by its Go type.
func lookup(op gorgonia.Op) (entry, bool) {
	name := strings.TrimPrefix(fmt.Sprintf("%T", op), "*")
	for _, e := range opTable {
		if e.typ == name {
			return e, true
		}
	}
	return entry{}, false
}

// SupportedOps lists the ops the adapter translates (Go type: description), sorted.
func SupportedOps() []string {
	out := make([]string, len(opTable))
	for i, e := range opTable {
		out[i] = e.typ + " (" + e.desc + ")"
	}
	sort.Strings(out)
	return out
}

// --- reading unexported op fields (reflect, read-only, no unsafe) ---

func field(op gorgonia.Op, name string) (reflect.Value, error) {
	v := reflect.ValueOf(op)
	for v.Kind() == reflect.Ptr || v.Kind() == reflect.Interface {
		if v.IsNil() {
			return reflect.Value{}, errors.Errorf("op %T is nil", op)
		}
		v = v.Elem()
	}
	if v.Kind() != reflect.Struct {
		return reflect.Value{}, errors.Errorf("op %T is not a struct", op)
	}
	f := v.FieldByName(name)
	if !f.IsValid() {
		return reflect.Value{}, errors.Errorf("op %T has no field %s (unexpected Gorgonia version?)", op, name)
	}
	return f, nil
}

// fields reads an op's unexported fields. The first error is kept in err and every later read
// returns a zero value, so a translation reads all the fields it needs and checks err once.
type fields struct {
	op  gorgonia.Op
	err error
}

// fields starts reading the fields of the context's op.
func (c *opCtx) fields() *fields { return &fields{op: c.op} }

// get returns field name if no read has failed yet, it exists and its kind satisfies ok
// (want describes the kinds ok accepts, for the error).
func (f *fields) get(name, want string, ok func(reflect.Kind) bool) (reflect.Value, bool) {
	if f.err != nil {
		return reflect.Value{}, false
	}
	v, err := field(f.op, name)
	if err == nil && !ok(v.Kind()) {
		err = errors.Errorf("op %T: field %s has kind %v, want %s", f.op, name, v.Kind(), want)
	}
	f.err = err
	return v, err == nil
}

func isInt(k reflect.Kind) bool { return k >= reflect.Int && k <= reflect.Int64 }

func isUint(k reflect.Kind) bool { return k >= reflect.Uint && k <= reflect.Uint64 }

// int reads a field of any integer kind.
func (f *fields) int(name string) int {
	v, ok := f.get(name, "an integer", func(k reflect.Kind) bool { return isInt(k) || isUint(k) })
	switch {
	case !ok:
		return 0
	case isUint(v.Kind()):
		return int(v.Uint())
	}
	return int(v.Int())
}

// ints reads a slice of integers.
func (f *fields) ints(name string) []int {
	v, ok := f.get(name, "a slice", func(k reflect.Kind) bool { return k == reflect.Slice })
	if !ok {
		return nil
	}
	out := make([]int, v.Len())
	for i := range out {
		out[i] = int(v.Index(i).Int())
	}
	return out
}

// bool reads a boolean field.
func (f *fields) bool(name string) bool {
	v, ok := f.get(name, "bool", func(k reflect.Kind) bool { return k == reflect.Bool })
	return ok && v.Bool()
}

// float reads a float32 or float64 field.
func (f *fields) float(name string) float64 {
	v, ok := f.get(name, "a float", func(k reflect.Kind) bool { return k == reflect.Float64 || k == reflect.Float32 })
	if !ok {
		return 0
	}
	return v.Float()
}

// --- translations ---

var binSymbols = map[string]core.BinOp{
	"+": core.OpAdd, "-": core.OpSub, "⊙": core.OpMul, "÷": core.OpDiv, "^": core.OpPow,
	"<": core.OpLt, ">": core.OpGt, "<=": core.OpLe, ">=": core.OpGe, "==": core.OpEq, "!=": core.OpNe,
}

func trElemBin(c *opCtx, args []core.Term) (core.Term, error) {
	s := c.op.String()
	i := strings.LastIndexByte(s, ' ')
	if i < 0 {
		return nil, errors.Errorf("cannot parse the operator from %q", s)
	}
	o, ok := binSymbols[s[:i]]
	if !ok {
		return nil, errors.Errorf("unknown elementwise operator %q", s[:i])
	}
	f := c.fields()
	retSame := f.bool("retSame")
	if f.err != nil {
		return nil, f.err
	}
	return lower.Binary(o, args[0], args[1], retSame)
}

func trElemUnary(c *opCtx, args []core.Term) (core.Term, error) {
	switch name := c.op.String(); name {
	case "sigmoid", "softplus":
		return gorgoniaClamped(name, args[0])
	default:
		return lower.Unary(name, args[0])
	}
}

// The linear-algebra operators in the order of Gorgonia's āBinaryOperator constants.
const (
	laMatMul = iota
	laMatVec
	laDot
	laOuter
	laBatched
)

func trLinAlg(c *opCtx, args []core.Term) (core.Term, error) {
	f := c.fields()
	kind, ta, tb := f.int("āBinaryOperator"), f.bool("transA"), f.bool("transB")
	if f.err != nil {
		return nil, f.err
	}
	switch kind {
	case laMatMul:
		return lower.MatMul(args[0], args[1], ta, tb)
	case laMatVec:
		return lower.MatVec(args[0], args[1], ta)
	case laDot:
		return lower.Dot(args[0], args[1])
	case laOuter:
		return lower.Outer(args[0], args[1])
	case laBatched:
		return lower.BatchedMatMul(args[0], args[1], ta, tb)
	}
	return nil, errors.Errorf("unknown linear-algebra operator %d", kind)
}

func trTensordot(c *opCtx, args []core.Term) (core.Term, error) {
	f := c.fields()
	a, b := f.ints("aAxes"), f.ints("bAxes")
	if f.err != nil {
		return nil, f.err
	}
	return lower.Tensordot(args[0], args[1], a, b)
}

// alongAxes adapts a reduction along the axes of the op's field along.
func alongAxes(reduce func(x core.Term, along ...int) (core.Term, error)) func(*opCtx, []core.Term) (core.Term, error) {
	return func(c *opCtx, args []core.Term) (core.Term, error) {
		f := c.fields()
		along := f.ints("along")
		if f.err != nil {
			return nil, f.err
		}
		return reduce(args[0], along...)
	}
}

// trSize: SizeOf is the (static) length of an axis of its operand, in the node's dtype.
func trSize(c *opCtx, args []core.Term) (core.Term, error) {
	f := c.fields()
	axis := f.int("axis")
	if f.err != nil {
		return nil, f.err
	}
	sh := c.kidShape(0)
	v := 1
	if len(sh) > 0 {
		if axis < 0 || axis >= len(sh) {
			return nil, errors.Errorf("axis %d out of range for operand shape %v", axis, sh)
		}
		v = sh[axis]
	}
	return lower.FullLike(c.want, float64(v))
}

func trReshape(c *opCtx, args []core.Term) (core.Term, error) {
	return lower.Reshape(args[0], c.want.Shape)
}

func trTranspose(c *opCtx, args []core.Term) (core.Term, error) {
	f := c.fields()
	p := f.ints("pattern")
	if f.err != nil {
		return nil, f.err
	}
	return lower.Transpose(args[0], p)
}

type ranger interface {
	Start() int
	End() int
	Step() int
}

func trSlice(c *opCtx, args []core.Term) (core.Term, error) {
	f := c.fields()
	along := f.int("along")
	s, _ := f.get("Slice", "an interface", func(k reflect.Kind) bool { return k == reflect.Interface })
	if f.err != nil {
		return nil, f.err
	}
	if s.IsNil() { // T[:]
		return args[0], nil
	}
	r, ok := c.op.(ranger)
	if !ok {
		return nil, errors.Errorf("op %T has no Start/End/Step", c.op)
	}
	in := c.kidShape(0)
	if along < 0 || along >= len(in) {
		return nil, errors.Errorf("axis %d out of range for operand shape %v", along, in)
	}
	start, step := r.Start(), r.Step()
	if step < 1 {
		step = 1
	}
	keep := c.want.Shape.Rank() == in.Rank()
	n := 1
	if keep {
		n = c.want.Shape[along]
	}
	return lower.Slice(args[0], along, start, step, n, keep)
}

func trConcat(c *opCtx, args []core.Term) (core.Term, error) {
	f := c.fields()
	axis := f.int("axis")
	if f.err != nil {
		return nil, f.err
	}
	return lower.Concat(axis, args...)
}

// trRepeat: Repeat(x, n) along an axis, where the count is the (static) second operand; the
// result shape is the node's. A scalar or lower-rank operand is first padded with unit axes.
func trRepeat(c *opCtx, args []core.Term) (core.Term, error) {
	f := c.fields()
	along := f.int("along")
	if f.err != nil {
		return nil, f.err
	}
	x := args[0]
	in, out := x.Type().Shape, c.want.Shape
	if in.Size() == 1 {
		s, err := lower.Reshape(x, core.Shape{})
		if err != nil {
			return nil, err
		}
		return lower.BroadcastScalar(s, out)
	}
	if in.Rank() < out.Rank() {
		padded := append(in.Clone(), make(core.Shape, out.Rank()-in.Rank())...)
		for i := in.Rank(); i < out.Rank(); i++ {
			padded[i] = 1
		}
		var err error
		if x, err = lower.Reshape(x, padded); err != nil {
			return nil, err
		}
		in = padded
	}
	if along < 0 || along >= in.Rank() || in.Rank() != out.Rank() || out[along]%in[along] != 0 {
		return nil, errors.Errorf("cannot repeat shape %v along axis %d to %v", in, along, out)
	}
	return lower.Repeat(x, along, out[along]/in[along])
}

// trSoftmax reads isLog from the op itself: SoftMax and LogSoftMax have the same hash, so a
// graph may hold the other one than its builder asked for.
func trSoftmax(c *opCtx, args []core.Term) (core.Term, error) {
	f := c.fields()
	axis, isLog := f.int("axis"), f.bool("isLog")
	if f.err != nil {
		return nil, f.err
	}
	if axis == -1 { // Gorgonia's default: the last axis, or 0 for (column) vectors
		sh := c.kids[0].Shape()
		axis = sh.Dims() - 1
		if sh.IsColVec() || (sh.IsVector() && !sh.IsRowVec()) {
			axis = 0
		}
	}
	if isLog {
		return lower.LogSoftmax(args[0], axis)
	}
	return lower.Softmax(args[0], axis)
}

func im2colWindow(c *opCtx) (lower.Window, error) {
	f := c.fields()
	w := lower.Window{KH: f.int("h"), KW: f.int("w"), PadTop: f.int("padH"), PadLeft: f.int("padW"),
		StrideH: f.int("strideH"), StrideW: f.int("strideW"), DilationH: f.int("dilationH"), DilationW: f.int("dilationW")}
	w.PadBottom, w.PadRight = w.PadTop, w.PadLeft
	return w, f.err
}

// poolWindow reads a pooling op's window. Gorgonia's output size uses north+south (west+east)
// padding, but its loops offset windows by padNorth (padWest), or by padSouth (padEast) when
// four paddings were given.
func poolWindow(c *opCtx) (lower.Window, error) {
	f := c.fields()
	north, south, west, east := f.int("padNorth"), f.int("padSouth"), f.int("padWest"), f.int("padEast")
	w := lower.Window{KH: f.int("h"), KW: f.int("w"), StrideH: f.int("strideH"), StrideW: f.int("strideW")}
	w.PadTop, w.PadLeft = north, west
	if f.bool("explicitPadding") {
		w.PadTop, w.PadLeft = south, east
	}
	w.PadBottom, w.PadRight = north+south-w.PadTop, west+east-w.PadLeft
	return w, f.err
}

// windowed adapts a lowering of one operand and the window that window reads from the op.
func windowed(window func(*opCtx) (lower.Window, error), f func(x core.Term, w lower.Window) (core.Term, error)) func(*opCtx, []core.Term) (core.Term, error) {
	return func(c *opCtx, args []core.Term) (core.Term, error) {
		w, err := window(c)
		if err != nil {
			return nil, err
		}
		return f(args[0], w)
	}
}

// trCol2im: the output shape is the node's.
func trCol2im(c *opCtx, args []core.Term) (core.Term, error) {
	w, err := im2colWindow(c)
	if err != nil {
		return nil, err
	}
	return lower.Col2Im(args[0], c.want.Shape, w)
}

// avgPool reproduces Gorgonia v0.9.18's AveragePool2D, which divides each window's sum by
// the input width (not by the window size).
func avgPool(x core.Term, w lower.Window) (core.Term, error) {
	s, err := lower.SumPool2D(x, w)
	if err != nil {
		return nil, err
	}
	return divConst(s, float64(x.Type().Shape[3]))
}

// divConst is x ÷ k for a constant k.
func divConst(x core.Term, k float64) (core.Term, error) {
	d, err := lower.FullLike(x.Type(), k)
	if err != nil {
		return nil, err
	}
	return lower.Binary(core.OpDiv, x, d, false)
}

func trUpsample(c *opCtx, args []core.Term) (core.Term, error) {
	f := c.fields()
	s := f.int("stride")
	if f.err != nil {
		return nil, f.err
	}
	return lower.Upsample2D(args[0], s+1)
}

// trConvType converts to the node's dtype.
func trConvType(c *opCtx, args []core.Term) (core.Term, error) {
	return lower.Convert(args[0], c.want.Dtype)
}

// trDropout: the mask is drawn inside the op, so the node's own output y = x ⊙ m / keep is
// bound as a parameter and the translation is x ⊙ (y ≠ 0) ÷ keep — y's value exactly, and
// the right derivative wherever x ≠ 0.
func trDropout(c *opCtx, args []core.Term) (core.Term, error) {
	f := c.fields()
	p, training := f.float("probability"), f.bool("isTraining")
	if f.err != nil {
		return nil, f.err
	}
	x := args[0]
	if p == 0 || !training {
		return x, nil
	}
	y, err := c.t.newParam(c.n, "_value")
	if err != nil {
		return nil, err
	}
	zero, err := lower.FullLike(y.Type(), 0)
	if err != nil {
		return nil, err
	}
	mask, err := lower.Binary(core.OpNe, y, zero, true)
	if err != nil {
		return nil, err
	}
	xm, err := lower.Binary(core.OpMul, x, mask, false)
	if err != nil {
		return nil, err
	}
	return divConst(xm, 1-p)
}

func trBatchNorm(c *opCtx, args []core.Term) (core.Term, error) {
	f := c.fields()
	training := f.bool("training")
	if f.err == nil && !training {
		return nil, errors.New("batch norm in inference mode reads running statistics held inside the op; only training mode is supported")
	}
	eps := f.float("epsilon")
	if f.err != nil {
		return nil, f.err
	}
	return lower.BatchNormTrain(args[0], eps)
}

// trByIndices selects along an axis at integer indices (a data-dependent gather). The indices
// are usually an input of dtype Int: its parameter has type i64 and takes an int64 tensor.
//
// It computes what tensor v0.9.24's kernel computes (checked by hand in the tests): element
// (o, i, j) of the result — o over the axes before axis, j over the axes after it — is x's
// element o·A·J + k·J + j in row-major order, A the axis length, J the size after it, k the
// index, except that an index k ≥ A reads as 0 (the kernel's coordinate check returns offset
// 0 on failure) and a negative one panics in Gorgonia (here: 0). Between the first and the
// last axis with outer dimensions, the kernel steps over the outer dimensions by 2·J instead
// of A·J, which is right only for A = 2: refused otherwise.
func trByIndices(c *opCtx, args []core.Term) (core.Term, error) {
	f := c.fields()
	axis := f.int("axis")
	if f.err != nil {
		return nil, f.err
	}
	x, idx := args[0], args[1]
	xs := x.Type().Shape
	if axis < 0 || axis >= xs.Rank() {
		return nil, errors.Errorf("ByIndices along axis %d of shape %v: no such axis", axis, xs)
	}
	outer, A, J := xs[:axis].Size(), xs[axis], xs[axis+1:].Size()
	if axis > 0 && axis < xs.Rank()-1 && outer > 1 && A != 2 {
		return nil, errors.Errorf("ByIndices along axis %d of shape %v: Gorgonia's kernel computes wrong values here (it steps over the outer dimensions by twice the inner size instead of %d times), so it is not translated", axis, xs, A)
	}
	n := idx.Type().Shape.Size()
	var b core.Builder
	if idx.Type().Shape.Rank() != 1 {
		idx = b.Reshape(core.Shape{n}, idx)
	}
	// k ≥ A reads as 0: k · (k < A).
	idx = b.Mul(idx, b.Cast(core.Int64, b.Binary(core.OpLt, idx, b.Replicate(n, core.ScalarI(int64(A))))))
	o := b.Var("o'", core.Scalar(core.Int64))
	i := b.Var("i'", core.Scalar(core.Int64))
	j := b.Var("j'", core.Scalar(core.Int64))
	k := b.Index(idx, i)
	// Negative indices must not reach a neighbouring row: o·A·J + k·J + j only for 0 ≤ k.
	flat := b.Add(b.Add(b.Mul(o, core.ScalarI(int64(A*J))), b.Mul(k, core.ScalarI(int64(J)))), j)
	neg := b.Binary(core.OpLt, k, core.ScalarI(0))
	flat = b.Cond(neg, core.ScalarI(-1), flat)
	g := b.Gather(core.Shape{outer, n, J}, b.Reshape(core.Shape{xs.Size()}, x), b.IndexFn([]*core.Var{o, i, j}, flat))
	sh := xs.Clone()
	sh[axis] = n
	out := b.Reshape(sh, g)
	if err := b.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

// trSparsemax: Gorgonia's kernel is right only along the last axis (for another axis it
// builds an invalid transpose and returns the transposed data under the input's shape).
func trSparsemax(c *opCtx, args []core.Term) (core.Term, error) {
	f := c.fields()
	axis := f.int("axis")
	if f.err != nil {
		return nil, f.err
	}
	last := args[0].Type().Shape.Rank() - 1
	if axis != -1 && axis != last {
		return nil, errors.Errorf("Sparsemax along axis %d of shape %v: Gorgonia's kernel computes wrong values for any axis but the last, so it is not translated", axis, args[0].Type().Shape)
	}
	return lower.Sparsemax(args[0], last)
}

func trGroupNorm(c *opCtx, args []core.Term) (core.Term, error) {
	f := c.fields()
	groups, eps := f.int("numGroups"), f.float("epsilon")
	if f.err != nil {
		return nil, f.err
	}
	return lower.GroupNorm(args[0], groups, eps)
}
