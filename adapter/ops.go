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
	typ  string // the op's Go type as %T prints it, without a leading '*'
	tag  string // short name used for the lets of unnamed nodes
	desc string // what SupportedOps lists
	fn   func(c *opCtx, args []core.Term) (core.Term, error)
}

// opTable is the op table: every Gorgonia op the adapter recognises and its translation.
var opTable = [...]entry{
	{"gorgonia.elemBinOp", "bin", "elementwise + - ⊙ ÷ ^ < > <= >= == != (with scalar broadcast, with and without retSame)", trElemBin},
	{"gorgonia.elemUnaryOp", "un", "elementwise abs sign ceil floor sin cos exp ln log2 neg square sqrt inv invSqrt cube tanh sigmoid log1p expm1 softplus", trElemUnary},
	{"gorgonia.linAlgBinOp", "mm", "A × B, Aᵀ × B, A × Bᵀ, Aᵀ × Bᵀ, A × b, Aᵀ × b, a ⋅ b, a ⊗ b, A ××× B (batched, with transposes)", trLinAlg},
	{"gorgonia.tensordotOp", "tdot", "Tensordot", trTensordot},
	{"gorgonia.sumOp", "sum", "Σ (Sum along axes)", trSum},
	{"gorgonia.maxOp", "max", "MaxAlong (Max along axes)", trMax},
	{"gorgonia.sizeOp", "size", "SizeOf (a constant)", trSize},
	{"gorgonia.reshapeOp", "reshape", "Reshape", trReshape},
	{"gorgonia.transposeOp", "tr", "Transpose", trTranspose},
	{"gorgonia.sliceOp", "slice", "Slice (ranges with steps, integer indices)", trSlice},
	{"gorgonia.concatOp", "concat", "Concat", trConcat},
	{"gorgonia.repeatOp", "repeat", "Repeat (broadcasting)", trRepeat},
	{"gorgonia.softmaxOp", "softmax", "SoftMax, LogSoftMax", trSoftmax},
	{"gorgonia.im2colOp", "im2col", "Im2Col (kernel, pad, stride, dilation)", trIm2col},
	{"gorgonia.col2imOp", "col2im", "col2im", trCol2im},
	{"gorgonia.maxPoolOp", "maxpool", "MaxPool2D (kernel, pad, stride)", trMaxPool},
	{"gorgonia.avgPoolOp", "avgpool", "AveragePool2D (kernel, pad, stride; Gorgonia's divisor)", trAvgPool},
	{"gorgonia.globalAveragePoolOp", "gap", "GlobalAveragePool2D", trGlobalAvgPool},
	{"gorgonia.upsampleOp", "upsample", "Upsample2D", trUpsample},
	{"gorgonia.maxBetween", "maxb", "MaxBetween", trMaxBetween},
	{"gorgonia.minBetween", "minb", "MinBetween", trMinBetween},
	{"gorgonia.dtConvOp", "conv", "ConvType (dtype conversion)", trConvType},
	{"gorgonia.dropoutOp", "dropout", "Dropout (mask read from the node's own value)", trDropout},
	{"gorgonia.BatchNormOp", "bn", "BatchNorm (training mode)", trBatchNorm},
	{"gorgonia.GroupNormOp", "gn", "GroupNorm", trGroupNorm},
	{"gorgonia.sparsemaxOp", "sparsemax", "Sparsemax (last axis)", trSparsemax},
	{"gorgonia.byIndicesOp", "take", "ByIndices (indices of dtype Int become an i64 parameter)", trByIndices},
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

func intField(op gorgonia.Op, name string) (int, error) {
	f, err := field(op, name)
	if err != nil {
		return 0, err
	}
	switch f.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return int(f.Int()), nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return int(f.Uint()), nil
	}
	return 0, errors.Errorf("op %T: field %s has kind %v, want an integer", op, name, f.Kind())
}

func intsField(op gorgonia.Op, name string) ([]int, error) {
	f, err := field(op, name)
	if err != nil {
		return nil, err
	}
	if f.Kind() != reflect.Slice {
		return nil, errors.Errorf("op %T: field %s has kind %v, want a slice", op, name, f.Kind())
	}
	out := make([]int, f.Len())
	for i := range out {
		out[i] = int(f.Index(i).Int())
	}
	return out, nil
}

func boolField(op gorgonia.Op, name string) (bool, error) {
	f, err := field(op, name)
	if err != nil {
		return false, err
	}
	if f.Kind() != reflect.Bool {
		return false, errors.Errorf("op %T: field %s has kind %v, want bool", op, name, f.Kind())
	}
	return f.Bool(), nil
}

func floatField(op gorgonia.Op, name string) (float64, error) {
	f, err := field(op, name)
	if err != nil {
		return 0, err
	}
	if f.Kind() != reflect.Float64 && f.Kind() != reflect.Float32 {
		return 0, errors.Errorf("op %T: field %s has kind %v, want a float", op, name, f.Kind())
	}
	return f.Float(), nil
}

// ints reads several integer fields at once (first error wins).
func ints(op gorgonia.Op, names ...string) ([]int, error) {
	out := make([]int, len(names))
	for i, nm := range names {
		v, err := intField(op, nm)
		if err != nil {
			return nil, err
		}
		out[i] = v
	}
	return out, nil
}

func arity(args []core.Term, n int) error {
	if len(args) != n {
		return errors.Errorf("%d operands, want %d", len(args), n)
	}
	return nil
}

// --- translations ---

var binSymbols = map[string]core.BinOp{
	"+": core.OpAdd, "-": core.OpSub, "⊙": core.OpMul, "÷": core.OpDiv, "^": core.OpPow,
	"<": core.OpLt, ">": core.OpGt, "<=": core.OpLe, ">=": core.OpGe, "==": core.OpEq, "!=": core.OpNe,
}

func trElemBin(c *opCtx, args []core.Term) (core.Term, error) {
	if err := arity(args, 2); err != nil {
		return nil, err
	}
	s := c.op.String()
	i := strings.LastIndexByte(s, ' ')
	if i < 0 {
		return nil, errors.Errorf("cannot parse the operator from %q", s)
	}
	o, ok := binSymbols[s[:i]]
	if !ok {
		return nil, errors.Errorf("unknown elementwise operator %q", s[:i])
	}
	retSame, err := boolField(c.op, "retSame")
	if err != nil {
		return nil, err
	}
	return lower.Binary(o, args[0], args[1], retSame)
}

func trElemUnary(c *opCtx, args []core.Term) (core.Term, error) {
	if err := arity(args, 1); err != nil {
		return nil, err
	}
	return lower.Unary(c.op.String(), args[0])
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
	if err := arity(args, 2); err != nil {
		return nil, err
	}
	kind, err := intField(c.op, "āBinaryOperator")
	if err != nil {
		return nil, err
	}
	ta, err := boolField(c.op, "transA")
	if err != nil {
		return nil, err
	}
	tb, err := boolField(c.op, "transB")
	if err != nil {
		return nil, err
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
	if err := arity(args, 2); err != nil {
		return nil, err
	}
	a, err := intsField(c.op, "aAxes")
	if err != nil {
		return nil, err
	}
	b, err := intsField(c.op, "bAxes")
	if err != nil {
		return nil, err
	}
	return lower.Tensordot(args[0], args[1], a, b)
}

func trSum(c *opCtx, args []core.Term) (core.Term, error) {
	if err := arity(args, 1); err != nil {
		return nil, err
	}
	along, err := intsField(c.op, "along")
	if err != nil {
		return nil, err
	}
	return lower.Sum(args[0], along...)
}

func trMax(c *opCtx, args []core.Term) (core.Term, error) {
	if err := arity(args, 1); err != nil {
		return nil, err
	}
	along, err := intsField(c.op, "along")
	if err != nil {
		return nil, err
	}
	return lower.Max(args[0], along...)
}

// trSize: SizeOf is the (static) length of an axis of its operand, in the node's dtype.
func trSize(c *opCtx, args []core.Term) (core.Term, error) {
	if err := arity(args, 1); err != nil {
		return nil, err
	}
	axis, err := intField(c.op, "axis")
	if err != nil {
		return nil, err
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
	if err := arity(args, 1); err != nil {
		return nil, err
	}
	return lower.Reshape(args[0], c.want.Shape)
}

func trTranspose(c *opCtx, args []core.Term) (core.Term, error) {
	if err := arity(args, 1); err != nil {
		return nil, err
	}
	p, err := intsField(c.op, "pattern")
	if err != nil {
		return nil, err
	}
	return lower.Transpose(args[0], p)
}

type ranger interface {
	Start() int
	End() int
	Step() int
}

func trSlice(c *opCtx, args []core.Term) (core.Term, error) {
	if err := arity(args, 1); err != nil {
		return nil, err
	}
	along, err := intField(c.op, "along")
	if err != nil {
		return nil, err
	}
	f, err := field(c.op, "Slice")
	if err != nil {
		return nil, err
	}
	if f.IsNil() { // T[:]
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
	axis, err := intField(c.op, "axis")
	if err != nil {
		return nil, err
	}
	return lower.Concat(axis, args...)
}

// trRepeat: Repeat(x, n) along an axis, where the count is the (static) second operand; the
// result shape is the node's. A scalar or lower-rank operand is first padded with unit axes.
func trRepeat(c *opCtx, args []core.Term) (core.Term, error) {
	if err := arity(args, 2); err != nil {
		return nil, err
	}
	along, err := intField(c.op, "along")
	if err != nil {
		return nil, err
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
	if err := arity(args, 1); err != nil {
		return nil, err
	}
	axis, err := intField(c.op, "axis")
	if err != nil {
		return nil, err
	}
	isLog, err := boolField(c.op, "isLog")
	if err != nil {
		return nil, err
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

func im2colWindow(op gorgonia.Op) (lower.Window, error) {
	v, err := ints(op, "h", "w", "padH", "padW", "strideH", "strideW", "dilationH", "dilationW")
	if err != nil {
		return lower.Window{}, err
	}
	return lower.Window{KH: v[0], KW: v[1], PadTop: v[2], PadBottom: v[2], PadLeft: v[3], PadRight: v[3],
		StrideH: v[4], StrideW: v[5], DilationH: v[6], DilationW: v[7]}, nil
}

func trIm2col(c *opCtx, args []core.Term) (core.Term, error) {
	if err := arity(args, 1); err != nil {
		return nil, err
	}
	w, err := im2colWindow(c.op)
	if err != nil {
		return nil, err
	}
	return lower.Im2Col(args[0], w)
}

func trCol2im(c *opCtx, args []core.Term) (core.Term, error) {
	if err := arity(args, 1); err != nil {
		return nil, err
	}
	w, err := im2colWindow(c.op)
	if err != nil {
		return nil, err
	}
	return lower.Col2Im(args[0], c.want.Shape, w)
}

// poolWindow reads a pooling op's window. Gorgonia's output size uses north+south (west+east)
// padding, but its loops offset windows by padNorth (padWest), or by padSouth (padEast) when
// four paddings were given.
func poolWindow(op gorgonia.Op) (lower.Window, error) {
	v, err := ints(op, "h", "w", "padNorth", "padSouth", "padWest", "padEast", "strideH", "strideW")
	if err != nil {
		return lower.Window{}, err
	}
	explicit, err := boolField(op, "explicitPadding")
	if err != nil {
		return lower.Window{}, err
	}
	top, left := v[2], v[4]
	if explicit {
		top, left = v[3], v[5]
	}
	return lower.Window{KH: v[0], KW: v[1], PadTop: top, PadBottom: v[2] + v[3] - top,
		PadLeft: left, PadRight: v[4] + v[5] - left, StrideH: v[6], StrideW: v[7]}, nil
}

func trMaxPool(c *opCtx, args []core.Term) (core.Term, error) {
	if err := arity(args, 1); err != nil {
		return nil, err
	}
	w, err := poolWindow(c.op)
	if err != nil {
		return nil, err
	}
	return lower.MaxPool2D(args[0], w)
}

// trAvgPool reproduces Gorgonia v0.9.18's AveragePool2D, which divides each window's sum by
// the input width (not by the window size).
func trAvgPool(c *opCtx, args []core.Term) (core.Term, error) {
	if err := arity(args, 1); err != nil {
		return nil, err
	}
	w, err := poolWindow(c.op)
	if err != nil {
		return nil, err
	}
	s, err := lower.SumPool2D(args[0], w)
	if err != nil {
		return nil, err
	}
	d, err := lower.FullLike(s.Type(), float64(args[0].Type().Shape[3]))
	if err != nil {
		return nil, err
	}
	return lower.Binary(core.OpDiv, s, d, false)
}

func trGlobalAvgPool(c *opCtx, args []core.Term) (core.Term, error) {
	if err := arity(args, 1); err != nil {
		return nil, err
	}
	return lower.GlobalAvgPool2D(args[0])
}

func trUpsample(c *opCtx, args []core.Term) (core.Term, error) {
	if err := arity(args, 1); err != nil {
		return nil, err
	}
	s, err := intField(c.op, "stride")
	if err != nil {
		return nil, err
	}
	return lower.Upsample2D(args[0], s+1)
}

func trMaxBetween(c *opCtx, args []core.Term) (core.Term, error) {
	if err := arity(args, 2); err != nil {
		return nil, err
	}
	return lower.MaxBetween(args[0], args[1])
}

func trMinBetween(c *opCtx, args []core.Term) (core.Term, error) {
	if err := arity(args, 2); err != nil {
		return nil, err
	}
	return lower.MinBetween(args[0], args[1])
}

// trConvType converts to the node's dtype.
func trConvType(c *opCtx, args []core.Term) (core.Term, error) {
	if err := arity(args, 1); err != nil {
		return nil, err
	}
	return lower.Convert(args[0], c.want.Dtype)
}

// trDropout: the mask is drawn inside the op, so the node's own output y = x ⊙ m / keep is
// bound as a parameter and the translation is x ⊙ (y ≠ 0) ÷ keep — y's value exactly, and
// the right derivative wherever x ≠ 0.
func trDropout(c *opCtx, args []core.Term) (core.Term, error) {
	if err := arity(args, 1); err != nil {
		return nil, err
	}
	p, err := floatField(c.op, "probability")
	if err != nil {
		return nil, err
	}
	training, err := boolField(c.op, "isTraining")
	if err != nil {
		return nil, err
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
	keep, err := lower.FullLike(xm.Type(), 1-p)
	if err != nil {
		return nil, err
	}
	return lower.Binary(core.OpDiv, xm, keep, false)
}

func trBatchNorm(c *opCtx, args []core.Term) (core.Term, error) {
	if err := arity(args, 1); err != nil {
		return nil, err
	}
	training, err := boolField(c.op, "training")
	if err != nil {
		return nil, err
	}
	if !training {
		return nil, errors.New("batch norm in inference mode reads running statistics held inside the op; only training mode is supported")
	}
	eps, err := floatField(c.op, "epsilon")
	if err != nil {
		return nil, err
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
	if err := arity(args, 2); err != nil {
		return nil, err
	}
	axis, err := intField(c.op, "axis")
	if err != nil {
		return nil, err
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
	if err := arity(args, 1); err != nil {
		return nil, err
	}
	axis, err := intField(c.op, "axis")
	if err != nil {
		return nil, err
	}
	last := args[0].Type().Shape.Rank() - 1
	if axis != -1 && axis != last {
		return nil, errors.Errorf("Sparsemax along axis %d of shape %v: Gorgonia's kernel computes wrong values for any axis but the last, so it is not translated", axis, args[0].Type().Shape)
	}
	return lower.Sparsemax(args[0], last)
}

func trGroupNorm(c *opCtx, args []core.Term) (core.Term, error) {
	if err := arity(args, 1); err != nil {
		return nil, err
	}
	groups, err := intField(c.op, "numGroups")
	if err != nil {
		return nil, err
	}
	eps, err := floatField(c.op, "epsilon")
	if err != nil {
		return nil, err
	}
	return lower.GroupNorm(args[0], groups, eps)
}
