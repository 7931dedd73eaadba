package conformance

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/bulkad/bulkad/core"
	"github.com/bulkad/bulkad/core/tensors"
	"github.com/bulkad/bulkad/kernel"
	"gorgonia.org/tensor"
)

// The operations under test, their operands (columns of special values) and the comparison
// of result columns.

// dtypes lists the four dtypes of the core language.
func dtypes() []core.Dtype { return []core.Dtype{core.Float64, core.Float32, core.Int64, core.Bool} }

// operation is one element-wise operation at one operand dtype: a unary operation (un), a
// binary operation (bin) or a cast to the dtype to (cast).
type operation struct {
	un   core.UnOp
	bin  core.BinOp
	cast bool
	to   core.Dtype
	in   core.Dtype // the operands' dtype
}

func (o operation) String() string {
	switch {
	case o.cast:
		return fmt.Sprintf("cast_%v_%v", o.in, o.to)
	case o.un != 0:
		return fmt.Sprintf("%s_%v", o.un.String(), o.in)
	}
	return fmt.Sprintf("%s_%v", o.bin.Word(), o.in)
}

// arity is 1 for unary operations and casts, 2 for binary operations.
func (o operation) arity() int {
	if o.bin != 0 {
		return 2
	}
	return 1
}

// apply builds the operation on its operands.
func (o operation) apply(b *core.Builder, xs ...core.Term) core.Term {
	switch {
	case o.cast:
		return b.Cast(o.to, xs[0])
	case o.un != 0:
		return b.Unary(o.un, xs[0])
	}
	return b.Binary(o.bin, xs[0], xs[1])
}

// out is the result dtype.
func (o operation) out() core.Dtype {
	switch {
	case o.cast:
		return o.to
	case o.bin != 0 && o.bin.IsComparison():
		return core.Bool
	}
	return o.in
}

// operations lists every element-wise operation at every operand dtype its constructor
// accepts (core.NewUnary, core.NewBinary: the type checker decides, so an operation or dtype
// added to core is tested without editing this list), and every cast between two dtypes.
func operations() []operation {
	var ops []operation
	for _, op := range core.UnOps() {
		for _, d := range dtypes() {
			if v, err := core.NewVar("x", core.Scalar(d)); err == nil {
				if _, err := core.NewUnary(op, v); err == nil {
					ops = append(ops, operation{un: op, in: d})
				}
			}
		}
	}
	for _, op := range core.BinOps() {
		for _, d := range dtypes() {
			if v, err := core.NewVar("x", core.Scalar(d)); err == nil {
				if _, err := core.NewBinary(op, v, v); err == nil {
					ops = append(ops, operation{bin: op, in: d})
				}
			}
		}
	}
	for _, from := range dtypes() {
		for _, to := range dtypes() {
			ops = append(ops, operation{cast: true, in: from, to: to})
		}
	}
	return ops
}

// negZero is a real negative zero (-0.0 in Go source is +0).
func negZero() float64 { return math.Copysign(0, -1) }

// specialsF64 are the float64 special values: ±0, ±smallest subnormal, ±smallest normal,
// ±0.5, ±1, ±2.5, ±25 (past Gorgonia's sigmoid clamp), ±1e30, ±2⁶³ (the edge of the cast
// to i64), ±MaxFloat64, ±Inf, NaN and a NaN with the sign bit set.
func specialsF64() []float64 {
	nan := math.NaN()
	return []float64{
		0, negZero(), math.SmallestNonzeroFloat64, -math.SmallestNonzeroFloat64,
		0x1p-1022, -0x1p-1022, 0.5, -0.5, 1, -1, 2.5, -2.5, 25, -25, 1e30, -1e30,
		0x1p63, -0x1p63, math.MaxFloat64, -math.MaxFloat64, math.Inf(1), math.Inf(-1),
		nan, math.Copysign(nan, -1),
	}
}

// specialsF32 are the float32 counterparts of specialsF64.
func specialsF32() []float32 {
	nan := float32(math.NaN())
	return []float32{
		0, float32(negZero()), math.SmallestNonzeroFloat32, -math.SmallestNonzeroFloat32,
		0x1p-126, -0x1p-126, 0.5, -0.5, 1, -1, 2.5, -2.5, 25, -25, 1e30, -1e30,
		0x1p63, -0x1p63, math.MaxFloat32, -math.MaxFloat32, float32(math.Inf(1)), float32(math.Inf(-1)),
		nan, float32(math.Copysign(float64(nan), -1)),
	}
}

// specials returns the special values of a dtype as a column.
func specials(d core.Dtype) any {
	switch d {
	case core.Float64:
		return specialsF64()
	case core.Float32:
		return specialsF32()
	case core.Int64:
		// 2⁵³+1 and 2⁶⁰+2³⁶+1 round differently to float64 and float32 when converted once
		// and when converted through float64 (double rounding).
		return []int64{0, 1, -1, 2, -2, 3, 7, -7, 1<<53 + 1, 1<<60 + 1<<36 + 1, math.MaxInt64, math.MinInt64}
	}
	return []bool{false, true}
}

// pairs returns the columns x and y of every pair (a, b) of elements of vals, a major: the
// operands of a binary operation at every pair of special values.
func pairs(vals any) (x, y any) {
	n := colLen(vals)
	idx := make([]int, 0, n*n)
	idy := make([]int, 0, n*n)
	for i := range n {
		for j := range n {
			idx = append(idx, i)
			idy = append(idy, j)
		}
	}
	return pick(vals, idx), pick(vals, idy)
}

// operands returns the operand columns of o: its dtype's special values for a unary
// operation or cast, every pair of them for a binary operation.
func operands(o operation) []any {
	vals := specials(o.in)
	if o.arity() == 1 {
		return []any{vals}
	}
	x, y := pairs(vals)
	return []any{x, y}
}

// extraOperands returns operand columns off the grid of special values for the few
// operations where a Gorgonia native op (package raise) was seen to disagree with core.Eval
// only there (nil for the others); every executor but the device's runs them too:
//   - sigmoid: past Gorgonia's clamps (1 above 19 and 0 below -709 in float64; 1 above 15 and
//     0 below -88 in float32) where the float result is still not 1 or 0;
//   - tanh f32: ±0.625, where package math32's tanh (Gorgonia's arrays) is 1 ulp off;
//   - pow f64: x² and x³ with subnormal results, where Gorgonia's arrays compute x*x and
//     x*x*x (one rounding) and math.Pow rounds twice.
//
// Each column has 4 elements (rank n: [2,2]).
func extraOperands(o operation) []any {
	switch {
	case o.un == core.OpSigmoid && o.in == core.Float64:
		return []any{[]float64{20, -20, -710, -745}}
	case o.un == core.OpSigmoid && o.in == core.Float32:
		return []any{[]float32{16, -16, -88.5, -100}}
	case o.un == core.OpTanh && o.in == core.Float32:
		return []any{[]float32{0.625, -0.625, 0.75, -0.75}}
	case o.bin == core.OpPow && o.in == core.Float64:
		return []any{
			[]float64{1.0230426852789173e-154, -9.647027795810217e-155, 2.117727878180869e-103, -1.6961985240301736e-103},
			[]float64{2, 2, 3, 3},
		}
	}
	return nil
}

// colLen is the length of a column ([]float64, []float32, []int64 or []bool).
func colLen(c any) int {
	n := kernel.SliceLen(c)
	if n < 0 {
		panic(fmt.Sprintf("not a column: %T", c))
	}
	return n
}

// pick returns the column of c's elements at the positions idx.
func pick(c any, idx []int) any {
	switch c := c.(type) {
	case []float64:
		return pickT(c, idx)
	case []float32:
		return pickT(c, idx)
	case []int64:
		return pickT(c, idx)
	case []bool:
		return pickT(c, idx)
	}
	panic(fmt.Sprintf("not a column: %T", c))
}

func pickT[T any](c []T, idx []int) []T {
	out := make([]T, len(idx))
	for k, i := range idx {
		out[k] = c[i]
	}
	return out
}

// elem returns element i of a column (boxed).
func elem(c any, i int) any {
	switch c := c.(type) {
	case []float64:
		return c[i]
	case []float32:
		return c[i]
	case []int64:
		return c[i]
	case []bool:
		return c[i]
	}
	panic(fmt.Sprintf("not a column: %T", c))
}

// single is the one-element column holding element i of c.
func single(c any, i int) any { return pick(c, []int{i}) }

// concat joins columns of one type.
func concat(cs []any) any {
	if len(cs) == 0 {
		return nil
	}
	var idx []int
	var out any
	for _, c := range cs {
		idx = idx[:0]
		for i := range colLen(c) {
			idx = append(idx, i)
		}
		switch o := out.(type) {
		case nil:
			out = pick(c, idx)
		case []float64:
			out = append(o, c.([]float64)...)
		case []float32:
			out = append(o, c.([]float32)...)
		case []int64:
			out = append(o, c.([]int64)...)
		case []bool:
			out = append(o, c.([]bool)...)
		}
	}
	return out
}

// dtypeOf is the core dtype of a column (core.InvalidDtype for another value).
func dtypeOf(c any) core.Dtype { return kernel.SliceDtype(c) }

// dense is a fresh tensor of shape sh holding a copy of column c (shape () for a scalar).
func dense(c any, sh core.Shape) *tensor.Dense {
	idx := make([]int, colLen(c))
	for i := range idx {
		idx[i] = i
	}
	if len(sh) == 0 {
		return tensor.New(tensor.FromScalar(elem(c, 0)))
	}
	return tensor.New(tensor.WithShape(sh...), tensor.WithBacking(pick(c, idx)))
}

// flat is the row-major column of a tensor's elements (a copy).
func flat(d *tensor.Dense) (any, error) {
	ty, err := tensors.TypeOf(d)
	if err != nil {
		return nil, err
	}
	n := ty.Shape.Size()
	f64, f32, i64, b, err := tensors.Data(d, ty.Dtype, n)
	if err != nil {
		return nil, err
	}
	var c any
	switch {
	case f64 != nil:
		c = f64
	case f32 != nil:
		c = f32
	case i64 != nil:
		c = i64
	default:
		c = b
	}
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	return pick(c, idx), nil
}

// flatAll concatenates the columns of several tensors.
func flatAll(ds []*tensor.Dense) (any, error) {
	cs := make([]any, len(ds))
	for i, d := range ds {
		c, err := flat(d)
		if err != nil {
			return nil, err
		}
		cs[i] = c
	}
	return concat(cs), nil
}

// fmtElem prints element i of a column so that signed zeros, NaNs and float32 values are
// told apart (%v of -0 and +0 differ, NaN shows its sign bit).
func fmtElem(c any, i int) string {
	switch c := c.(type) {
	case []float64:
		return fmtF(c[i])
	case []float32:
		return fmtF(float64(c[i])) + "f"
	}
	return fmt.Sprint(elem(c, i))
}

func fmtF(x float64) string {
	switch {
	case math.IsNaN(x) && math.Signbit(x):
		return "-NaN"
	case x == 0 && math.Signbit(x):
		return "-0"
	}
	return fmt.Sprint(x)
}

// tolerance is how close a result must be to the reference: exact (the zero value: the same
// bits, any NaN equal to any NaN), or within ulps units in the last place (or rel relative
// error) where the reference is finite and nonzero, exact elsewhere.
type tolerance struct {
	ulps int64
	rel  float64
}

func (t tolerance) String() string {
	switch {
	case t.rel > 0:
		return fmt.Sprintf("within %g relative", t.rel)
	case t.ulps > 0:
		return fmt.Sprintf("within %d ulp", t.ulps)
	}
	return "bitwise"
}

// sameElem reports whether got[i] matches want[i] under tol.
func sameElem(got, want any, i int, tol tolerance) bool {
	switch w := want.(type) {
	case []float64:
		g, ok := got.([]float64)
		return ok && sameFloat(g[i], w[i], 64, tol)
	case []float32:
		g, ok := got.([]float32)
		return ok && sameFloat(float64(g[i]), float64(w[i]), 32, tol)
	case []int64:
		g, ok := got.([]int64)
		return ok && g[i] == w[i]
	case []bool:
		g, ok := got.([]bool)
		return ok && g[i] == w[i]
	}
	return false
}

// sameFloat compares two floats of the given width (float32 values held in float64).
func sameFloat(g, w float64, bits int, tol tolerance) bool {
	if math.IsNaN(w) || math.IsNaN(g) {
		return math.IsNaN(w) && math.IsNaN(g)
	}
	if g == w && math.Signbit(g) == math.Signbit(w) {
		return true
	}
	if math.IsInf(w, 0) || w == 0 || math.IsInf(g, 0) {
		return false
	}
	if tol.rel > 0 {
		return math.Abs(g-w) <= tol.rel*math.Abs(w)
	}
	return tol.ulps > 0 && ulpDist(g, w, bits) <= tol.ulps
}

// ulpDist is the number of representable values of the width between two finite floats.
func ulpDist(a, b float64, bits int) int64 {
	ord := func(x float64) int64 {
		var i int64
		if bits == 32 {
			i = int64(int32(math.Float32bits(float32(x))))
			if i < 0 {
				i = math.MinInt32 - i
			}
			return i
		}
		i = int64(math.Float64bits(x))
		if i < 0 {
			i = math.MinInt64 - i
		}
		return i
	}
	d := ord(a) - ord(b)
	if d < 0 {
		d = -d
	}
	return d
}

// mismatches compares got with want (what wantName computes) element by element and
// describes the first few differences, each with the operands that gave it ("" when they
// agree). Element i belongs to the operands at position i mod len(ins[0]); a position is
// reported once however many of its elements differ (two runs of a machine). A column of the
// wrong type or length is one mismatch.
func mismatches(o operation, ins []any, got, want any, wantName string, tol tolerance) string {
	if got == nil || dtypeOf(got) != dtypeOf(want) || colLen(got) != colLen(want) {
		return fmt.Sprintf("result %T of length %d, want %T of length %d", got, lenOrZero(got), want, colLen(want))
	}
	var sb strings.Builder
	n := colLen(ins[0])
	seen := map[int]bool{}
	for i := range colLen(want) {
		if seen[i%n] || sameElem(got, want, i, tol) {
			continue
		}
		seen[i%n] = true
		if len(seen) <= 8 {
			args := make([]string, len(ins))
			for k, in := range ins {
				args[k] = fmtElem(in, i%n)
			}
			fmt.Fprintf(&sb, "\n  %s(%s) = %s, %s gives %s", o.name(), strings.Join(args, ", "), fmtElem(got, i), wantName, fmtElem(want, i))
		}
	}
	if len(seen) == 0 {
		return ""
	}
	if len(seen) > 8 {
		fmt.Fprintf(&sb, "\n  … %d operands in all", len(seen))
	}
	return fmt.Sprintf("%d of %d operands differ (%v):%s", len(seen), n, tol, sb.String())
}

func lenOrZero(c any) int {
	if dtypeOf(c) == core.InvalidDtype {
		return 0
	}
	return colLen(c)
}

// name is the operation as a function name in messages: max, cast f32, …
func (o operation) name() string {
	switch {
	case o.cast:
		return "cast " + o.to.String()
	case o.un != 0:
		return o.un.String()
	}
	return o.bin.Word()
}

// TestOperationsCovered: every unary and binary operation of core is under test at some
// dtype, and both float dtypes reach every operation that takes floats.
func TestOperationsCovered(t *testing.T) {
	seenUn, seenBin := map[core.UnOp]int{}, map[core.BinOp]int{}
	for _, o := range operations() {
		switch {
		case o.un != 0:
			seenUn[o.un]++
		case o.bin != 0:
			seenBin[o.bin]++
		}
	}
	for _, op := range core.UnOps() {
		if seenUn[op] == 0 {
			t.Errorf("unary %v: no dtype accepted", op)
		}
	}
	for _, op := range core.BinOps() {
		if seenBin[op] == 0 {
			t.Errorf("binary %v: no dtype accepted", op)
		}
	}
	if n := len(operations()); n < 60 {
		t.Errorf("only %d operations under test", n)
	}
}
