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
	"Identity":   func(c *ctx, n *Node, ins []value) ([]value, error) { return ins[:1], nil },
	"Dropout":    opDropout,
	"Relu":       unary(func(x core.Term) (core.Term, error) { return lower.MaxBetween(x, zerosLike(x)) }),
	"Tanh":       named("tanh"),
	"Sigmoid":    coreUnary(core.OpSigmoid),
	"Exp":        named("exp"),
	"Log":        named("ln"),
	"Sqrt":       named("sqrt"),
	"Neg":        named("neg"),
	"Abs":        named("abs"),
	"Reciprocal": named("inv"),
	"Softplus":   named("softplus"),
	"Floor":      named("floor"),
	"Ceil":       named("ceil"),
	"Sign":       named("sign"),
	"Sin":        named("sin"),
	"Cos":        named("cos"),
	"Erf":        named("erf"),
	"LeakyRelu": func(c *ctx, n *Node, ins []value) ([]value, error) {
		alpha := n.attrFloat("alpha", 0.01)
		return unary(func(x core.Term) (core.Term, error) { return reluMix(x, alpha, false) })(c, n, ins)
	},
	"Elu": func(c *ctx, n *Node, ins []value) ([]value, error) {
		alpha := n.attrFloat("alpha", 1)
		return unary(func(x core.Term) (core.Term, error) { return reluMix(x, alpha, true) })(c, n, ins)
	},
	"Add":            binaryOp(core.OpAdd),
	"Sub":            binaryOp(core.OpSub),
	"Mul":            binaryOp(core.OpMul),
	"Div":            binaryOp(core.OpDiv),
	"Max":            binaryOp(core.OpMax),
	"Min":            binaryOp(core.OpMin),
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
	return []map[string]opFn{opsElementwise, opsNN, opsShape, opsReduce, opsLayers, opsRecurrent}
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

// reluMix is max(x, 0) + α·min(x, 0) (LeakyRelu), or max(x, 0) + α·(exp(min(x, 0)) − 1) (Elu).
func reluMix(x core.Term, alpha float64, elu bool) (core.Term, error) {
	var b core.Builder
	z := zerosLike(x)
	pos, err := lower.MaxBetween(x, z)
	if err != nil {
		return nil, err
	}
	neg, err := lower.MinBetween(x, z)
	if err != nil {
		return nil, err
	}
	if elu {
		if neg, err = lower.Unary("expm1", neg); err != nil {
			return nil, err
		}
	}
	a, err := lower.FullLike(x.Type(), alpha)
	if err != nil {
		return nil, err
	}
	t := b.Add(pos, b.Mul(a, neg))
	return t, b.Err()
}

// broadcastPair brings x and y to their NumPy broadcast shape.
func broadcastPair(x, y core.Term) (core.Term, core.Term, error) {
	xs, ys := shapeOf(x), shapeOf(y)
	if xs.Equal(ys) {
		return x, y, nil
	}
	r := len(xs)
	if len(ys) > r {
		r = len(ys)
	}
	out := make(core.Shape, r)
	for i := 0; i < r; i++ {
		a, b := 1, 1
		if j := i - (r - len(xs)); j >= 0 {
			a = xs[j]
		}
		if j := i - (r - len(ys)); j >= 0 {
			b = ys[j]
		}
		switch {
		case a == b || b == 1:
			out[i] = a
		case a == 1:
			out[i] = b
		default:
			return nil, nil, errors.Errorf("shapes %v and %v do not broadcast", xs, ys)
		}
	}
	var err error
	if !xs.Equal(out) {
		if x, err = lower.Broadcast(x, out); err != nil {
			return nil, nil, err
		}
	}
	if !ys.Equal(out) {
		if y, err = lower.Broadcast(y, out); err != nil {
			return nil, nil, err
		}
	}
	return x, y, nil
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

func opDropout(c *ctx, n *Node, ins []value) ([]value, error) {
	if len(ins) > 2 && ins[2].isInt && len(ins[2].ints) == 1 && ins[2].ints[0] != 0 {
		return nil, errors.New("training_mode = true: dropout draws random masks; export the model in eval mode")
	}
	if len(n.Outputs) > 1 && n.Outputs[1] != "" {
		return nil, errors.New("the mask output is not supported")
	}
	return ins[:1], nil
}
