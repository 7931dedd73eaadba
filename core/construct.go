package core

import (
	"github.com/pkg/errors"
)

// The constructors below check the typing rules of paper 000, Fig. 8 (extended to the
// operations bulkad adds) and return errors of the form "core: <operation>: <problem>".
// They never panic on any input, including nil terms.

func nilErr(op string, what string) error {
	return errors.Errorf("core: %s: %s is nil", op, what)
}

func notTuple(op string, ts ...Term) error {
	for _, t := range ts {
		if t == nil {
			return nilErr(op, "operand")
		}
		if _, ok := t.(*Tuple); ok {
			return errors.Errorf("core: %s: operand is a tuple; tuples are only allowed as a program's result", op)
		}
		if !t.Type().Dtype.Valid() {
			return errors.Errorf("core: %s: operand %T has no type (build terms with the core constructors)", op, t)
		}
	}
	return nil
}

// ValidName reports whether s can name a variable in the text syntax: a letter or '_'
// followed by letters, digits, '_' and '\”, and not a keyword.
func ValidName(s string) bool {
	if s == "" || keywords[s] {
		return false
	}
	for i, r := range s {
		letter := r == '_' || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z')
		digit := r >= '0' && r <= '9'
		if i == 0 && !letter {
			return false
		}
		if !letter && !digit && r != '\'' {
			return false
		}
	}
	return true
}

// keywords are the words of the text syntax that cannot name variables.
var keywords = func() map[string]bool {
	m := map[string]bool{
		"fn": true, "let": true, "in": true, "cond": true, "true": true, "false": true, "lit": true,
		"index": true, "sumOuter": true, "argmaxOuter": true, "gather": true, "scatter": true,
		"replicate": true, "tr": true, "reshape": true, "build1": true, "build": true, "iota": true,
		"matmul": true, "share": true, "cast": true, "f64": true, "f32": true, "i64": true, "bool": true,
		"inf": true, "nan": true,
	}
	for o := OpNeg; o < numUnOps; o++ {
		m[unFacts[o].Name] = true
	}
	for o := OpAdd; o < numBinOps; o++ {
		m[binFacts[o].Name] = true
	}
	return m
}()

// IsKeyword reports whether s is reserved by the text syntax.
func IsKeyword(s string) bool { return keywords[s] }

// NewVar makes a variable of the given name and type.
func NewVar(name string, t Type) (*Var, error) {
	if !ValidName(name) {
		return nil, errors.Errorf("core: var: %q is not a valid variable name", name)
	}
	if !t.Dtype.Valid() {
		return nil, errors.Errorf("core: var %s: invalid dtype %v", name, t.Dtype)
	}
	if !t.Shape.valid() {
		return nil, errors.Errorf("core: var %s: negative dimension in shape %v", name, t.Shape)
	}
	return &Var{node: node{Type{Shape: t.Shape.Clone(), Dtype: t.Dtype}}, Name: name}, nil
}

// NewLitF makes a floating literal of type t (Float64 or Float32) from row-major values.
// Float32 literals are rounded to float32.
func NewLitF(t Type, vals []float64) (*Lit, error) {
	if !t.Dtype.IsFloat() {
		return nil, errors.Errorf("core: lit: dtype %v is not a float dtype", t.Dtype)
	}
	if err := checkLitShape(t, len(vals)); err != nil {
		return nil, err
	}
	f := make([]float64, len(vals))
	for i, v := range vals {
		if t.Dtype == Float32 {
			v = float64(float32(v))
		}
		f[i] = v
	}
	return &Lit{node: node{Type{t.Shape.Clone(), t.Dtype}}, F: f}, nil
}

// NewLitI makes an i64 literal of the given shape from row-major values.
func NewLitI(sh Shape, vals []int64) (*Lit, error) {
	t := Type{sh, Int64}
	if err := checkLitShape(t, len(vals)); err != nil {
		return nil, err
	}
	return &Lit{node: node{Type{sh.Clone(), Int64}}, I: append([]int64{}, vals...)}, nil
}

// NewLitB makes a bool literal of the given shape from row-major values.
func NewLitB(sh Shape, vals []bool) (*Lit, error) {
	t := Type{sh, Bool}
	if err := checkLitShape(t, len(vals)); err != nil {
		return nil, err
	}
	return &Lit{node: node{Type{sh.Clone(), Bool}}, B: append([]bool{}, vals...)}, nil
}

func checkLitShape(t Type, n int) error {
	if !t.Shape.valid() {
		return errors.Errorf("core: lit: negative dimension in shape %v", t.Shape)
	}
	if t.Shape.Size() != n {
		return errors.Errorf("core: lit: shape %v needs %d values, got %d", t.Shape, t.Shape.Size(), n)
	}
	return nil
}

// ScalarF is the rank-0 floating literal v of dtype d (Float64 or Float32; anything else gives Float64).
func ScalarF(d Dtype, v float64) *Lit {
	if d != Float32 {
		d = Float64
	} else {
		v = float64(float32(v))
	}
	return &Lit{node: node{Scalar(d)}, F: []float64{v}}
}

// ScalarI is the rank-0 i64 literal v.
func ScalarI(v int64) *Lit { return &Lit{node: node{Scalar(Int64)}, I: []int64{v}} }

// ScalarB is the rank-0 bool literal v.
func ScalarB(v bool) *Lit { return &Lit{node: node{Scalar(Bool)}, B: []bool{v}} }

// Fill is a literal of type t with every element equal to v (converted to t's dtype).
func Fill(t Type, v float64) (*Lit, error) {
	if !t.Shape.valid() || !t.Dtype.Valid() {
		return nil, errors.Errorf("core: fill: invalid type %v", t)
	}
	n := t.Shape.Size()
	l := &Lit{node: node{Type{t.Shape.Clone(), t.Dtype}}}
	switch t.Dtype {
	case Float64, Float32:
		if t.Dtype == Float32 {
			v = float64(float32(v))
		}
		l.F = make([]float64, n)
		for i := range l.F {
			l.F[i] = v
		}
	case Int64:
		l.I = make([]int64, n)
		for i := range l.I {
			l.I[i] = int64(v)
		}
	case Bool:
		l.B = make([]bool, n)
		for i := range l.B {
			l.B[i] = v != 0
		}
	}
	return l, nil
}

// NewLet makes let v = bound in body; bound must have v's type.
func NewLet(v *Var, bound, body Term) (*Let, error) {
	if v == nil {
		return nil, nilErr("let", "variable")
	}
	if err := notTuple("let "+v.Name, bound); err != nil {
		return nil, err
	}
	if body == nil {
		return nil, nilErr("let "+v.Name, "body")
	}
	if !bound.Type().Equal(v.Type()) {
		return nil, errors.Errorf("core: let %s: variable has type %v but the bound term has type %v", v.Name, v.Type(), bound.Type())
	}
	return &Let{node: node{body.Type()}, Var: v, Bound: bound, Body: body}, nil
}

// NewShare wraps body in global sharing with the given ID.
func NewShare(id int, body Term) (*Share, error) {
	if err := notTuple("share", body); err != nil {
		return nil, err
	}
	return &Share{node: node{body.Type()}, ID: id, Body: body}, nil
}

// NewCond makes the strict conditional cond c u v.
func NewCond(c, u, v Term) (*Cond, error) {
	if err := notTuple("cond", c, u, v); err != nil {
		return nil, err
	}
	if !c.Type().Equal(Scalar(Bool)) {
		return nil, errors.Errorf("core: cond: condition has type %v, want [] bool", c.Type())
	}
	if !u.Type().Equal(v.Type()) {
		return nil, errors.Errorf("core: cond: branch types %v and %v differ", u.Type(), v.Type())
	}
	return &Cond{node: node{u.Type()}, C: c, Then: u, Else: v}, nil
}

// NewUnary makes the element-wise operation op x.
func NewUnary(op UnOp, x Term) (*Unary, error) {
	if op == 0 || op >= numUnOps {
		return nil, errors.Errorf("core: unary: unknown operation %d", uint8(op))
	}
	if err := notTuple(op.String(), x); err != nil {
		return nil, err
	}
	if !op.Accepts(x.Type().Dtype) {
		return nil, errors.Errorf("core: %s: operand dtype %v not supported (want %v)", op, x.Type().Dtype, op.Facts().Dtypes)
	}
	return &Unary{node: node{x.Type()}, Op: op, X: x}, nil
}

// NewCast converts x to dtype to.
func NewCast(to Dtype, x Term) (*Cast, error) {
	if err := notTuple("cast", x); err != nil {
		return nil, err
	}
	if !to.Valid() {
		return nil, errors.Errorf("core: cast: invalid target dtype %v", to)
	}
	return &Cast{node: node{Type{x.Type().Shape, to}}, To: to, X: x}, nil
}

// NewBinary makes the element-wise operation x op y; the operands must have equal types.
func NewBinary(op BinOp, x, y Term) (*Binary, error) {
	if op == 0 || op >= numBinOps {
		return nil, errors.Errorf("core: binary: unknown operation %d", uint8(op))
	}
	w := op.Word()
	if err := notTuple(w, x, y); err != nil {
		return nil, err
	}
	tx, ty := x.Type(), y.Type()
	if !tx.Shape.Equal(ty.Shape) {
		return nil, errors.Errorf("core: %s: operand shapes %v and %v differ", w, tx.Shape, ty.Shape)
	}
	if tx.Dtype != ty.Dtype {
		return nil, errors.Errorf("core: %s: operand dtypes %v and %v differ", w, tx.Dtype, ty.Dtype)
	}
	if !op.Accepts(tx.Dtype) {
		return nil, errors.Errorf("core: %s: operand dtype %v not supported", w, tx.Dtype)
	}
	t := tx
	if op.IsComparison() {
		t = Type{tx.Shape, Bool}
	}
	return &Binary{node: node{t}, Op: op, X: x, Y: y}, nil
}

func checkIndexTerms(op string, ix []Term) error {
	for k, e := range ix {
		if e == nil {
			return errors.Errorf("core: %s: index component %d is nil", op, k)
		}
		if err := notTuple(op, e); err != nil {
			return err
		}
		if !e.Type().Equal(Scalar(Int64)) {
			return errors.Errorf("core: %s: index component %d has type %v, want [] i64", op, k, e.Type())
		}
	}
	return nil
}

// NewIndex makes index x ix: the subarray of x at the m = len(ix) outermost positions.
func NewIndex(x Term, ix []Term) (*Index, error) {
	if err := notTuple("index", x); err != nil {
		return nil, err
	}
	if err := checkIndexTerms("index", ix); err != nil {
		return nil, err
	}
	sh := x.Type().Shape
	if len(ix) > len(sh) {
		return nil, errors.Errorf("core: index: %d indices into an array of shape %v", len(ix), sh)
	}
	return &Index{node: node{Type{sh[len(ix):].Clone(), x.Type().Dtype}}, X: x, Ix: append([]Term{}, ix...)}, nil
}

// checkOuterArg checks the operand of an operation along the outermost dimension (sumOuter,
// argmaxOuter: op): a numeric array of rank ≥ 1. It returns the operand's type.
func checkOuterArg(op string, x Term) (Type, error) {
	if err := notTuple(op, x); err != nil {
		return Type{}, err
	}
	t := x.Type()
	if len(t.Shape) == 0 {
		return Type{}, errors.Errorf("core: %s: operand is a scalar (shape %v), want rank ≥ 1", op, t.Shape)
	}
	if !t.Dtype.IsNumeric() {
		return Type{}, errors.Errorf("core: %s: operand dtype %v not supported, want f64, f32 or i64", op, t.Dtype)
	}
	return t, nil
}

// NewSumOuter sums x along its outermost dimension.
func NewSumOuter(x Term) (*SumOuter, error) {
	t, err := checkOuterArg("sumOuter", x)
	if err != nil {
		return nil, err
	}
	return &SumOuter{node: node{Type{t.Shape[1:].Clone(), t.Dtype}}, X: x}, nil
}

// NewArgmaxOuter returns the position of the maximum along x's outermost dimension.
func NewArgmaxOuter(x Term) (*ArgmaxOuter, error) {
	t, err := checkOuterArg("argmaxOuter", x)
	if err != nil {
		return nil, err
	}
	return &ArgmaxOuter{node: node{Type{t.Shape[1:].Clone(), Int64}}, X: x}, nil
}

// NewIndexFn makes the index function \[vars] -> [out]; vars are i64 scalars with distinct
// names and every output is an i64 scalar term.
func NewIndexFn(vars []*Var, out []Term) (*IndexFn, error) {
	seen := map[string]bool{}
	for k, v := range vars {
		if v == nil {
			return nil, errors.Errorf("core: index function: variable %d is nil", k)
		}
		if !v.Type().Equal(Scalar(Int64)) {
			return nil, errors.Errorf("core: index function: variable %s has type %v, want [] i64", v.Name, v.Type())
		}
		if seen[v.Name] {
			return nil, errors.Errorf("core: index function: variable %s bound twice", v.Name)
		}
		seen[v.Name] = true
	}
	if err := checkIndexTerms("index function", out); err != nil {
		return nil, err
	}
	return &IndexFn{Vars: append([]*Var{}, vars...), Out: append([]Term{}, out...)}, nil
}

func checkShapeArg(op string, sh Shape) error {
	if !sh.valid() {
		return errors.Errorf("core: %s: negative dimension in shape %v", op, sh)
	}
	return nil
}

// checkIndexedArgs checks what gather and scatter (op) ask of each argument on its own: x is
// not a tuple, fn is not nil, sh has no negative dimension.
func checkIndexedArgs(op string, sh Shape, x Term, fn *IndexFn) error {
	if err := notTuple(op, x); err != nil {
		return err
	}
	if fn == nil {
		return nilErr(op, "index function")
	}
	return checkShapeArg(op, sh)
}

// checkIndexedShapes checks the shapes of a gather or a scatter (op) with operand shape xs
// and result shape sh: the index function indexes the first kx dimensions of xs and the first
// ks of sh (xWord and shWord say how: "takes" for its variables, "returns" for its results),
// and the dimensions after them are the same.
func checkIndexedShapes(op string, xs, sh Shape, kx, ks int, xWord, shWord string) error {
	if kx > len(xs) {
		return errors.Errorf("core: %s: index function %s %d indices into an operand of shape %v", op, xWord, kx, xs)
	}
	if ks > len(sh) {
		return errors.Errorf("core: %s: index function %s %d indices but the result shape %v has rank %d", op, shWord, ks, sh, len(sh))
	}
	if !Shape(sh[ks:]).Equal(xs[kx:]) {
		return errors.Errorf("core: %s: result shape %v and operand shape %v differ after their indexed dimensions (%d and %d): %v and %v",
			op, sh, xs, ks, kx, Shape(sh[ks:]), Shape(xs[kx:]))
	}
	return nil
}

// NewGather makes gather sh x fn. With n = len(fn.Vars) and m = len(fn.Out): x has shape
// [k1..km] ++ rest, and sh = [k'1..k'n] ++ rest is the result shape; the variables range over
// sh[:n].
func NewGather(sh Shape, x Term, fn *IndexFn) (*Gather, error) {
	if err := checkIndexedArgs("gather", sh, x, fn); err != nil {
		return nil, err
	}
	// The index function's results index the operand's leading dimensions, its variables
	// range over the result's.
	if err := checkIndexedShapes("gather", x.Type().Shape, sh, len(fn.Out), len(fn.Vars), "returns", "takes"); err != nil {
		return nil, err
	}
	return &Gather{node: node{Type{sh.Clone(), x.Type().Dtype}}, Shape: sh.Clone(), X: x, Fn: fn}, nil
}

// NewScatter makes scatter sh x fn. With n = len(fn.Vars) and m = len(fn.Out): x has shape
// [k1..kn] ++ rest (the variables range over it), and sh = [k'1..k'm] ++ rest.
func NewScatter(sh Shape, x Term, fn *IndexFn) (*Scatter, error) {
	if err := checkIndexedArgs("scatter", sh, x, fn); err != nil {
		return nil, err
	}
	if !x.Type().Dtype.IsNumeric() {
		return nil, errors.Errorf("core: scatter: operand dtype %v not supported, want f64, f32 or i64", x.Type().Dtype)
	}
	// The index function's variables range over the operand's leading dimensions, its
	// results index the result's.
	if err := checkIndexedShapes("scatter", x.Type().Shape, sh, len(fn.Vars), len(fn.Out), "takes", "returns"); err != nil {
		return nil, err
	}
	return &Scatter{node: node{Type{sh.Clone(), x.Type().Dtype}}, Shape: sh.Clone(), X: x, Fn: fn}, nil
}

// NewFromVector stacks elems (at least one, all of one type) into an array [len(elems)] ++ shape.
func NewFromVector(elems []Term) (*FromVector, error) {
	if len(elems) == 0 {
		return nil, errors.New("core: fromVector: no elements (need at least one to know the type)")
	}
	if err := notTuple("fromVector", elems...); err != nil {
		return nil, err
	}
	t0 := elems[0].Type()
	for k, e := range elems[1:] {
		if !e.Type().Equal(t0) {
			return nil, errors.Errorf("core: fromVector: element %d has type %v, element 0 has %v", k+1, e.Type(), t0)
		}
	}
	sh := append(Shape{len(elems)}, t0.Shape...)
	return &FromVector{node: node{Type{sh, t0.Dtype}}, Elems: append([]Term{}, elems...)}, nil
}

// NewReplicate makes replicate n x.
func NewReplicate(n int, x Term) (*Replicate, error) {
	if err := notTuple("replicate", x); err != nil {
		return nil, err
	}
	if n < 0 {
		return nil, errors.Errorf("core: replicate: negative count %d", n)
	}
	sh := append(Shape{n}, x.Type().Shape...)
	return &Replicate{node: node{Type{sh, x.Type().Dtype}}, N: n, X: x}, nil
}

// NewTranspose makes tr perm x; perm is a permutation of 0..m-1 with m ≤ rank x.
func NewTranspose(perm []int, x Term) (*Transpose, error) {
	if err := notTuple("tr", x); err != nil {
		return nil, err
	}
	xs := x.Type().Shape
	if len(perm) > len(xs) {
		return nil, errors.Errorf("core: tr: permutation %v longer than the rank of shape %v", perm, xs)
	}
	seen := make([]bool, len(perm))
	for _, p := range perm {
		if p < 0 || p >= len(perm) || seen[p] {
			return nil, errors.Errorf("core: tr: %v is not a permutation of 0..%d", perm, len(perm)-1)
		}
		seen[p] = true
	}
	sh := make(Shape, len(xs))
	for i := range xs {
		if i < len(perm) {
			sh[i] = xs[perm[i]]
		} else {
			sh[i] = xs[i]
		}
	}
	return &Transpose{node: node{Type{sh, x.Type().Dtype}}, Perm: append([]int{}, perm...), X: x}, nil
}

// NewReshape makes reshape sh x; sh must have as many elements as x.
func NewReshape(sh Shape, x Term) (*Reshape, error) {
	if err := notTuple("reshape", x); err != nil {
		return nil, err
	}
	if err := checkShapeArg("reshape", sh); err != nil {
		return nil, err
	}
	xs := x.Type().Shape
	if sh.Size() != xs.Size() {
		return nil, errors.Errorf("core: reshape: cannot reshape %v (%d elements) to %v (%d elements)", xs, xs.Size(), sh, sh.Size())
	}
	return &Reshape{node: node{Type{sh.Clone(), x.Type().Dtype}}, Shape: sh.Clone(), X: x}, nil
}

// NewBuild1 makes build1 n (\v -> body); v must be an i64 scalar.
func NewBuild1(n int, v *Var, body Term) (*Build1, error) {
	if v == nil {
		return nil, nilErr("build1", "variable")
	}
	if err := notTuple("build1", body); err != nil {
		return nil, err
	}
	if n < 0 {
		return nil, errors.Errorf("core: build1: negative size %d", n)
	}
	if !v.Type().Equal(Scalar(Int64)) {
		return nil, errors.Errorf("core: build1: variable %s has type %v, want [] i64", v.Name, v.Type())
	}
	sh := append(Shape{n}, body.Type().Shape...)
	return &Build1{node: node{Type{sh, body.Type().Dtype}}, N: n, Var: v, Body: body}, nil
}

// NewIota makes the i64 vector [0..n-1].
func NewIota(n int) (*Iota, error) {
	if n < 0 {
		return nil, errors.Errorf("core: iota: negative size %d", n)
	}
	return &Iota{node: node{Type{Shape{n}, Int64}}, N: n}, nil
}

// NewMatMul makes matmul x y for x : B ++ [m,k] and y : B ++ [k,n] of one float dtype, with
// the same batch dimensions B (possibly none): the result B ++ [m,n] holds one matrix product
// per batch position. Rank 2 is the ordinary matrix product.
func NewMatMul(x, y Term) (*MatMul, error) {
	if err := notTuple("matmul", x, y); err != nil {
		return nil, err
	}
	tx, ty := x.Type(), y.Type()
	r := len(tx.Shape)
	if r < 2 || len(ty.Shape) != r {
		return nil, errors.Errorf("core: matmul: operand shapes %v and %v, want two matrices or two stacks of matrices of one rank", tx.Shape, ty.Shape)
	}
	if !tx.Shape[:r-2].Equal(ty.Shape[:r-2]) {
		return nil, errors.Errorf("core: matmul: operand shapes %v and %v have different batch dimensions %v and %v", tx.Shape, ty.Shape, tx.Shape[:r-2], ty.Shape[:r-2])
	}
	if tx.Shape[r-1] != ty.Shape[r-2] {
		return nil, errors.Errorf("core: matmul: operand shapes %v and %v do not match (inner dimensions %d and %d)", tx.Shape, ty.Shape, tx.Shape[r-1], ty.Shape[r-2])
	}
	if tx.Dtype != ty.Dtype || !tx.Dtype.IsFloat() {
		return nil, errors.Errorf("core: matmul: operand dtypes %v and %v, want one float dtype", tx.Dtype, ty.Dtype)
	}
	sh := append(tx.Shape[:r-1].Clone(), ty.Shape[r-1])
	return &MatMul{node: node{Type{sh, tx.Dtype}}, X: x, Y: y}, nil
}

// SwapLastTwo is the permutation of rank ≥ 2 that swaps the last two dimensions and keeps the
// others: [1,0] for a matrix, [0,2,1] for a stack of matrices. tr (SwapLastTwo r) x transposes
// every matrix of x (the operand transpose of a batched matmul).
func SwapLastTwo(rank int) []int {
	p := make([]int, rank)
	for i := range p {
		p[i] = i
	}
	if rank >= 2 {
		p[rank-2], p[rank-1] = rank-1, rank-2
	}
	return p
}

// IsSwapLastTwo reports whether perm (a transpose's permutation, possibly shorter than rank:
// the missing dimensions stay in place) is SwapLastTwo(rank) for rank ≥ 2.
func IsSwapLastTwo(perm []int, rank int) bool {
	if rank < 2 || len(perm) > rank {
		return false
	}
	for i := range rank {
		want := i
		switch i {
		case rank - 2:
			want = rank - 1
		case rank - 1:
			want = rank - 2
		}
		got := i
		if i < len(perm) {
			got = perm[i]
		}
		if got != want {
			return false
		}
	}
	return true
}

// NewTuple groups results; allowed only as a program's body (possibly under lets).
func NewTuple(elems []Term) (*Tuple, error) {
	if err := notTuple("tuple", elems...); err != nil {
		return nil, err
	}
	return &Tuple{Elems: append([]Term{}, elems...)}, nil
}

// NewProgram makes fn (params) => body after checking it: parameter names are distinct, every
// free variable of body is a parameter of the same type, every variable is used at its
// binder's type, and tuples appear only as the result.
func NewProgram(params []*Var, body Term) (*Program, error) {
	p := &Program{Params: append([]*Var{}, params...), Body: body}
	size, err := checkProgram(p)
	if err != nil {
		return nil, err
	}
	p.checked = &checkedProgram{body: body, params: append([]*Var{}, params...), size: size}
	return p, nil
}
