package onnx

import (
	"github.com/bulkad/bulkad/core"
	"github.com/bulkad/bulkad/lower"
	"github.com/pkg/errors"
)

// opFn lowers one node: ins are its inputs (a missing optional input is the zero value), the
// result its outputs in order (fewer when trailing optional outputs are not produced).
type opFn func(c *ctx, n *Node, ins []value) ([]value, error)

// opsElementwise lowers the element-wise operators and the other operators of no family of
// their own (Identity, Dropout, Where, Clip, Cast).
var opsElementwise = map[string]opFn{
	"Identity":   func(c *ctx, n *Node, ins []value) ([]value, error) { return input0(ins) },
	"Dropout":    opDropout,
	"Relu":       unary(relu),
	"Tanh":       named("tanh"),
	"Sigmoid":    coreUnary(core.OpSigmoid),
	"Atan":       coreUnary(core.OpAtan),
	"Exp":        named("exp"),
	"Log":        named("ln"),
	"Sqrt":       named("sqrt"),
	"Neg":        named("neg"),
	"Abs":        named("abs"),
	"Reciprocal": named("inv"),
	"Softplus":   unary(softplus),
	"Floor":      named("floor"),
	"Ceil":       named("ceil"),
	"Sign":       named("sign"),
	"Sin":        named("sin"),
	"Cos":        named("cos"),
	"Erf":        named("erf"),
	"LeakyRelu": floatOp(1, func(c *ctx, n *Node, x []core.Term) (core.Term, error) {
		return leakyRelu(x[0], n.attrFloat("alpha", 0.01))
	}),
	"Elu": floatOp(1, func(c *ctx, n *Node, x []core.Term) (core.Term, error) {
		return elu(x[0], n.attrFloat("alpha", 1))
	}),
	"HardSigmoid": floatOp(1, func(c *ctx, n *Node, x []core.Term) (core.Term, error) {
		return hardSigmoid(x[0], n.attrFloat("alpha", 0.2), n.attrFloat("beta", 0.5))
	}),
	"HardSwish":      unary(hardSwish),
	"Add":            binaryOp(core.OpAdd),
	"Sub":            binaryOp(core.OpSub),
	"Mul":            binaryOp(core.OpMul),
	"Div":            binaryOp(core.OpDiv),
	"Max":            opVariadic(core.OpMax),
	"Min":            opVariadic(core.OpMin),
	"Sum":            opVariadic(core.OpAdd),
	"Mean":           opVariadic(core.OpDiv),
	"Pow":            opPow,
	"Greater":        binaryOp(core.OpGt),
	"Less":           binaryOp(core.OpLt),
	"GreaterOrEqual": binaryOp(core.OpGe),
	"LessOrEqual":    binaryOp(core.OpLe),
	"Equal":          binaryOp(core.OpEq),
	"Not": floatOp(1, func(c *ctx, n *Node, x []core.Term) (core.Term, error) {
		var b core.Builder
		t := b.Unary(core.OpNot, x[0])
		return t, b.Err()
	}),
	"Where": opWhere,
	"Clip":  floatFirst(opClip),
	"Cast":  opCast,
}

// opTables are the operator tables, one per family (each in its file); an operator type
// appears in one of them.
func opTables() []map[string]opFn {
	return []map[string]opFn{opsElementwise, opsNN, opsShape, opsReduce, opsNorm, opsLayers, opsRecurrent}
}

// lookupOp returns the lowering of an ONNX operator type of the default domain.
func lookupOp(name string) (opFn, bool) {
	for _, t := range opTables() {
		if f, ok := t[name]; ok {
			return f, true
		}
	}
	return nil, false
}

// opCount is the number of supported operators.
func opCount() int {
	n := 0
	for _, t := range opTables() {
		n += len(t)
	}
	return n
}

// node lowers one node and binds its outputs.
func (c *ctx) node(n *Node) error {
	if n.Domain != "" && n.Domain != "ai.onnx" {
		return errors.Errorf("operator domain %q is not supported (only the default ONNX domain)", n.Domain)
	}
	f, ok := lookupOp(n.OpType)
	if !ok {
		return errors.Errorf("operator %s is not supported (onnx.SupportedOps() lists the %d supported operators)", n.OpType, opCount())
	}
	if len(n.Inputs) == 0 && n.OpType != "Constant" {
		return errors.Errorf("no inputs: %s takes one or more", n.OpType)
	}
	named := false
	for _, o := range n.Outputs {
		named = named || o != ""
	}
	if !named {
		return errors.Errorf("no outputs: %s produces one or more", n.OpType)
	}
	ins := make([]value, len(n.Inputs))
	for i, name := range n.Inputs {
		if name == "" {
			continue // an omitted optional input
		}
		v, ok := c.env[name]
		if !ok {
			return errors.Errorf("input %d (%q) is not computed by an earlier node, an input or an initializer", i, name)
		}
		ins[i] = v
	}
	outs, err := f(c, n, ins)
	if err != nil {
		return err
	}
	for i, v := range outs {
		if i < len(n.Outputs) && n.Outputs[i] != "" {
			if err := c.bind(n.Outputs[i], v); err != nil {
				return err
			}
		}
	}
	return nil
}

// --- attributes and inputs ---

func (n *Node) attrInt(name string, def int64) int64 {
	if a, ok := n.Attrs[name]; ok {
		return a.I
	}
	return def
}

func (n *Node) attrFloat(name string, def float64) float64 {
	if a, ok := n.Attrs[name]; ok {
		return a.F
	}
	return def
}

func (n *Node) attrInts(name string) ([]int64, bool) {
	a, ok := n.Attrs[name]
	return a.Ints, ok
}

// floatIn is input i as a float term.
func (c *ctx) floatIn(ins []value, i int) (core.Term, error) {
	if i >= len(ins) || (ins[i].t == nil && !ins[i].isF && !ins[i].isInt) {
		return nil, errors.Errorf("input %d is missing", i)
	}
	return c.term(ins[i])
}

// floatIns is the first k inputs as float terms.
func (c *ctx) floatIns(ins []value, k int) ([]core.Term, error) {
	xs := make([]core.Term, k)
	for i := range xs {
		t, err := c.floatIn(ins, i)
		if err != nil {
			return nil, err
		}
		xs[i] = t
	}
	return xs, nil
}

// constInts is input i as integer constants (shapes, axes, indices).
func constInts(ins []value, i int, what string) ([]int64, bool, error) {
	if i >= len(ins) || (ins[i].t == nil && !ins[i].isInt && !ins[i].isF) {
		return nil, false, nil
	}
	v := ins[i]
	switch {
	case v.isInt:
		return v.ints, true, nil
	case v.isF:
		out := make([]int64, len(v.floats))
		for k, f := range v.floats {
			out[k] = int64(f)
		}
		return out, true, nil
	}
	return nil, false, errors.Errorf("input %d (%s) must be a constant (an initializer, a Constant node or a shape computation); it depends on graph inputs", i, what)
}

// floatAlong reads the first input as a float term with its shape and the node's axis
// attribute (default 0), normalised to that rank.
func (c *ctx) floatAlong(n *Node, ins []value) (x core.Term, sh core.Shape, axis int, err error) {
	if x, err = c.floatIn(ins, 0); err != nil {
		return nil, nil, 0, err
	}
	sh = shapeOf(x)
	axis, err = normAxis(n.attrInt("axis", 0), len(sh))
	return x, sh, axis, err
}

func shapeOf(t core.Term) core.Shape { return t.Type().Shape }

// normAxis maps a possibly negative axis into [0, rank).
func normAxis(axis int64, rank int) (int, error) {
	a := int(axis)
	if a < 0 {
		a += rank
	}
	if a < 0 || a >= rank {
		return 0, errors.Errorf("axis %d out of range for rank %d", axis, rank)
	}
	return a, nil
}

// --- element-wise ---

func unary(f func(core.Term) (core.Term, error)) opFn {
	return floatOp(1, func(c *ctx, n *Node, x []core.Term) (core.Term, error) { return f(x[0]) })
}

// coreUnary lowers an element-wise function to the core operation itself (the
// mathematical function, as PyTorch computes it): lower.Unary's names follow Gorgonia, whose
// sigmoid is clamped to exactly 1 above 15 in float32 (and 0 below -88), which PyTorch's is not.
func coreUnary(op core.UnOp) opFn {
	return unary(func(x core.Term) (core.Term, error) {
		if !x.Type().Dtype.IsFloat() {
			return nil, errors.Errorf("%v of a %v operand, want f64 or f32", op, x.Type().Dtype)
		}
		return core.NewUnary(op, x)
	})
}

func named(name string) opFn {
	return unary(func(x core.Term) (core.Term, error) { return lower.Unary(name, x) })
}

// floatOp lowers a node whose first k inputs are float terms and whose one output is f's.
func floatOp(k int, f func(c *ctx, n *Node, x []core.Term) (core.Term, error)) opFn {
	return func(c *ctx, n *Node, ins []value) ([]value, error) {
		xs, err := c.floatIns(ins, k)
		if err != nil {
			return nil, err
		}
		return one(f(c, n, xs))
	}
}

// floatFirst lowers a node whose first input is a float term x and whose one output is f's;
// f reads the node's other inputs from ins.
func floatFirst(f func(c *ctx, n *Node, x core.Term, ins []value) (core.Term, error)) opFn {
	return func(c *ctx, n *Node, ins []value) ([]value, error) {
		x, err := c.floatIn(ins, 0)
		if err != nil {
			return nil, err
		}
		return one(f(c, n, x, ins))
	}
}

// one is the outputs of a node whose one output is t (none when err is set).
func one(t core.Term, err error) ([]value, error) {
	if err != nil {
		return nil, err
	}
	return []value{{t: t}}, nil
}

func zerosLike(x core.Term) core.Term {
	z, _ := lower.FullLike(x.Type(), 0)
	return z
}

// The activations below follow PyTorch at their kinks (the rule of this front end, see the
// package documentation): core's max and min give a tie to their first operand, so a
// constant first takes the tie (derivative 0 there) and x first passes it.

// relu is max(0, x): the derivative at 0 is 0, as PyTorch's (x > 0).
func relu(x core.Term) (core.Term, error) { return lower.MaxBetween(zerosLike(x), x) }

// leakyRelu is max(0, x) + α·min(x, 0): the slope at 0 is α, as PyTorch's (x > 0 ? 1 : α).
func leakyRelu(x core.Term, alpha float64) (core.Term, error) {
	var b core.Builder
	t := x.Type()
	z := b.Full(t, 0)
	r := b.Add(b.Binary(core.OpMax, z, x), b.Mul(b.Full(t, alpha), b.Binary(core.OpMin, x, z)))
	return r, b.Err()
}

// elu is x for x > 0 and α·(eˣ − 1) below, written where(x > 0, x, α·where(x < 0,
// expm1(min(x, 0)), x)): at 0 the value is 0, the slope α and the second derivative 0, as
// PyTorch's (its backward takes the x ≤ 0 branch, its double backward masks x < 0). The
// min keeps expm1 finite where it is not selected (an infinite eˣ would make its
// derivative, scaled by a zero cotangent, NaN).
func elu(x core.Term, alpha float64) (core.Term, error) {
	var b core.Builder
	t := x.Type()
	z := b.Full(t, 0)
	neg := where(&b, b.Binary(core.OpLt, x, z), b.Unary(core.OpExpm1, b.Binary(core.OpMin, x, z)), x)
	return where(&b, b.Binary(core.OpGt, x, z), x, b.Mul(b.Full(t, alpha), neg)), b.Err()
}

// hardSigmoid is max(0, min(1, α·x + β)) (ONNX HardSigmoid): constants first, so the slope
// is α strictly inside (0, 1) and 0 at the kinks, as PyTorch's hardsigmoid (−3 < x < 3).
// PyTorch exports α = 1/6 rounded to float32 (ONNX attributes are float32); the value is
// the specification's with that α (PyTorch computes (x + 3)/6, a relative 3e-8 apart in
// float64), the slope PyTorch's own (its backward multiplies by the same float32 1/6).
func hardSigmoid(x core.Term, alpha, beta float64) (core.Term, error) {
	var b core.Builder
	t := x.Type()
	y := b.Add(b.Mul(b.Full(t, alpha), x), b.Full(t, beta))
	return b.Binary(core.OpMax, b.Full(t, 0), b.Binary(core.OpMin, b.Full(t, 1), y)), b.Err()
}

// hardSwish is x·max(0, min(1, x/6 + ½)) (ONNX HardSwish, opset 14), computed as PyTorch
// does, x·min(max(x + 3, 0), 6)/6, with x first in the clamp: the slope at −3 and 3 is
// PyTorch's −½ and 3/2 (its backward takes −3 ≤ x ≤ 3 as the middle piece).
func hardSwish(x core.Term) (core.Term, error) {
	var b core.Builder
	t := x.Type()
	h := b.Binary(core.OpMin, b.Binary(core.OpMax, b.Add(x, b.Full(t, 3)), b.Full(t, 0)), b.Full(t, 6))
	return b.Div(b.Mul(x, h), b.Full(t, 6)), b.Err()
}

// softplus is log(1 + eˣ) (ONNX Softplus: no threshold, unlike PyTorch's F.softplus, which
// returns x above 20; the two differ by less than 2e-9 there), computed stably as
// max(0, x) + log1p(exp(min(x, −x))): exact where eˣ overflows, and the derivative is
// σ(x) everywhere, ½ at 0 (the maximum's tie goes to 0, the minimum's to x).
func softplus(x core.Term) (core.Term, error) {
	var b core.Builder
	t := x.Type()
	tail := b.Unary(core.OpLog1p, b.Unary(core.OpExp, b.Binary(core.OpMin, x, b.Unary(core.OpNeg, x))))
	return b.Add(b.Binary(core.OpMax, b.Full(t, 0), x), tail), b.Err()
}

// where is lower.Where inside a builder's chain: nothing once b has an error, which it
// records otherwise.
func where(b *core.Builder, mask, x, y core.Term) core.Term {
	if b.Err() != nil {
		return nil
	}
	t, err := lower.Where(mask, x, y)
	if err != nil {
		b.SetErr(err)
	}
	return t
}

// broadcastTerms brings every x to the broadcast shape of all of them.
func broadcastTerms(xs []core.Term) ([]core.Term, error) {
	sh := shapeOf(xs[0])
	for _, x := range xs[1:] {
		var err error
		if sh, err = lower.BroadcastShapes(sh, shapeOf(x)); err != nil {
			return nil, err
		}
	}
	out := make([]core.Term, len(xs))
	for i, x := range xs {
		if shapeOf(x).Equal(sh) {
			out[i] = x
			continue
		}
		var err error
		if out[i], err = lower.Broadcast(x, sh); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// broadcastPair brings x and y to their NumPy broadcast shape.
func broadcastPair(x, y core.Term) (core.Term, core.Term, error) {
	xy, err := broadcastTerms([]core.Term{x, y})
	if err != nil {
		return nil, nil, err
	}
	return xy[0], xy[1], nil
}

// opVariadic lowers Max, Min (op max or min), Sum (add) and Mean (div): every input, with
// multidirectional broadcasting. Max and Min split the derivative evenly among the inputs
// tied for the extreme (tieSplit).
func opVariadic(op core.BinOp) opFn {
	return func(c *ctx, n *Node, ins []value) ([]value, error) {
		if len(ins) == 0 {
			return nil, errors.New("no inputs; the operator takes one or more")
		}
		xs, err := c.floatIns(ins, len(ins))
		if err != nil {
			return nil, err
		}
		if xs, err = broadcastTerms(xs); err != nil {
			return nil, errors.Wrapf(err, "%d inputs", len(xs))
		}
		if len(xs) == 1 {
			return []value{{t: xs[0]}}, nil
		}
		if op == core.OpMax || op == core.OpMin {
			return one(tieSplit(op, xs))
		}
		var b core.Builder
		t := xs[0]
		for _, x := range xs[1:] {
			t = b.Add(t, x)
		}
		if op == core.OpDiv {
			t = b.Div(t, b.Full(t.Type(), float64(len(xs))))
		}
		return one(t, b.Err())
	}
}

// tieSplit is the element-wise maximum (op max) or minimum (min) of xs (two or more arrays
// of one type) whose derivative is split evenly among the tied inputs, 1/k to each of k,
// as PyTorch's torch.maximum (½ each) and torch.amax over the stacked inputs do:
//
//	m + Σᵢ where(dᵢ == 0, dᵢ, 0) / max(Σᵢ [dᵢ == 0], 1),  dᵢ = xᵢ − m,
//
// m the fold of op. The value is m exactly (a tied dᵢ is 0; an infinite or NaN dᵢ is never
// selected, so an infinite extreme stays infinite); the derivative is 1/k to each tied
// input whatever share of m's own derivative went to which (the sum takes it back).
func tieSplit(op core.BinOp, xs []core.Term) (core.Term, error) {
	t := xs[0].Type()
	namer := core.NewNamer(xs...)
	var b core.Builder
	m := xs[0]
	for _, x := range xs[1:] {
		m = b.Binary(op, m, x)
	}
	mv := namer.FreshVar("extreme", t)
	zero := b.Full(t, 0)
	ds := make([]*core.Var, len(xs))
	var sum, count core.Term
	for i := range xs {
		ds[i] = namer.FreshVar("tie", t)
		tied := b.Binary(core.OpEq, ds[i], zero)
		s, k := where(&b, tied, ds[i], zero), b.Cast(t.Dtype, tied)
		if i == 0 {
			sum, count = s, k
		} else {
			sum, count = b.Add(sum, s), b.Add(count, k)
		}
	}
	r := b.Add(mv, b.Div(sum, b.Binary(core.OpMax, count, b.Full(t, 1))))
	for i := len(xs) - 1; i >= 0; i-- {
		r = b.Let(ds[i], b.Sub(xs[i], mv), r)
	}
	r = b.Let(mv, m, r)
	if b.Err() != nil {
		return nil, errors.Wrapf(b.Err(), "%s of %d inputs of type %v", op.Word(), len(xs), t)
	}
	return r, nil
}

func binaryOp(op core.BinOp) opFn {
	return floatOp(2, func(c *ctx, n *Node, x []core.Term) (core.Term, error) {
		a, b, err := broadcastPair(x[0], x[1])
		if err != nil {
			return nil, err
		}
		return lower.Binary(op, a, b, false)
	})
}

// opPow: a constant exponent (a Constant node, not an initializer, which stays learnable) of
// 1, 2, 3, 0.5 or −1 becomes the exact function (a negative base raised to 2 is fine; core's
// pow is exp(y·ln x)); other exponents use pow.
func opPow(c *ctx, n *Node, ins []value) ([]value, error) {
	x, err := c.floatIn(ins, 0)
	if err != nil {
		return nil, err
	}
	if len(ins) > 1 && ins[1].t == nil { // a constant, not a (learnable) initializer
		ef, ok := c.constFloats(ins[1])
		if ok && len(ef) == 1 {
			name := map[float64]string{2: "square", 3: "cube", 0.5: "sqrt", -1: "inv"}[ef[0]]
			if ef[0] == 1 {
				return []value{{t: x}}, nil
			}
			if name != "" {
				return one(lower.Unary(name, x))
			}
		}
	}
	return binaryOp(core.OpPow)(c, n, ins)
}

// input0 is the node's first input as its one output, an error when it is missing.
func input0(ins []value) ([]value, error) {
	if len(ins) == 0 || (ins[0].t == nil && !ins[0].isInt && !ins[0].isF) {
		return nil, errors.New("input 0 is missing")
	}
	return ins[:1], nil
}

func opDropout(c *ctx, n *Node, ins []value) ([]value, error) {
	if len(ins) > 2 && ins[2].isInt && len(ins[2].ints) == 1 && ins[2].ints[0] != 0 {
		return nil, errors.New("training_mode = true: dropout draws random masks; export the model in eval mode")
	}
	if len(n.Outputs) > 1 && n.Outputs[1] != "" {
		return nil, errors.New("the mask output is not supported")
	}
	return input0(ins)
}
