package adapter

import (
	"fmt"
	"strings"
	"testing"

	"github.com/pkg/errors"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// opCase builds a small graph around one op; its input nodes are the wrt nodes.
type opCase struct {
	name  string
	build func(b *gen) (*G.Node, error)
	f64   bool // float64 only (the op has no float32 kernel or a float64-only constructor)
}

// safeBuild builds the case's graph, turning a panic of Gorgonia's constructors into an error.
func (c opCase) safeBuild(b *gen) (n *G.Node, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v", r)
		}
	}()
	return c.build(b)
}

func un(f func(*G.Node) (*G.Node, error), lo, hi float64, shape ...int) func(b *gen) (*G.Node, error) {
	return func(b *gen) (*G.Node, error) { return f(b.in(lo, hi, shape...)) }
}

func bin(f func(a, c *G.Node) (*G.Node, error), sa, sc []int) func(b *gen) (*G.Node, error) {
	return func(b *gen) (*G.Node, error) { return f(b.in(0.5, 2, sa...), b.in(0.5, 2, sc...)) }
}

func cmp(f func(a, c *G.Node, retSame bool) (*G.Node, error), retSame bool, sa, sc []int) func(b *gen) (*G.Node, error) {
	return func(b *gen) (*G.Node, error) { return f(b.ints(3, sa...), b.ints(3, sc...), retSame) }
}

// harvest builds y = f(a, b) in a throw-away graph, runs Gorgonia's Grad, and returns the
// first op among the gradient nodes whose String() is want (ops like Aᵀ × B with transA only
// appear there).
func harvest(dt tensor.Dtype, want string, build func(g *gen) (*G.Node, error)) (G.Op, error) {
	b := newGen(dt, 99)
	y, err := build(b)
	if err != nil {
		return nil, err
	}
	cost, err := G.Sum(y)
	if err != nil {
		return nil, err
	}
	if _, err := G.Grad(cost, b.ins...); err != nil {
		return nil, err
	}
	var seen []string
	for _, n := range b.g.AllNodes() {
		if n.Op() != nil {
			if n.Op().String() == want {
				return n.Op(), nil
			}
			seen = append(seen, n.Op().String())
		}
	}
	return nil, errors.Errorf("no op %q among %v", want, seen)
}

func s(xs ...int) []int { return xs }

// opCases are the cases of TestOps: every op of the table in several settings.
func opCases() []opCase {
	return append(append(append(elementwiseOpCases(), algebraOpCases()...), shapeOpCases()...), convOpCases()...)
}

// elementwiseOpCases are the cases of the element-wise unary and binary operations.
func elementwiseOpCases() []opCase {
	var cs []opCase
	// elementwise unary: every op, several shapes (scalar included)
	type u struct {
		name   string
		f      func(*G.Node) (*G.Node, error)
		lo, hi float64
	}
	unaries := []u{
		{"abs", G.Abs, -2, 2}, {"sign", G.Sign, -2, 2}, {"ceil", G.Ceil, -3, 3}, {"floor", G.Floor, -3, 3},
		{"sin", G.Sin, -3, 3}, {"cos", G.Cos, -3, 3}, {"exp", G.Exp, -2, 2}, {"ln", G.Log, 0.2, 3},
		{"log2", G.Log2, 0.2, 3}, {"neg", G.Neg, -2, 2}, {"square", G.Square, -2, 2}, {"sqrt", G.Sqrt, 0.1, 3},
		{"inv", G.Inverse, 0.3, 3}, {"invSqrt", G.InverseSqrt, 0.3, 3}, {"cube", G.Cube, -2, 2},
		{"tanh", G.Tanh, -3, 3}, {"sigmoid", G.Sigmoid, -5, 5}, {"log1p", G.Log1p, -0.5, 3},
		{"expm1", G.Expm1, -2, 2}, {"softplus", G.Softplus, -5, 5},
	}
	for _, x := range unaries {
		for _, sh := range [][]int{{3, 4}, {5}, {2, 2, 3}} {
			cs = append(cs, opCase{name: fmt.Sprintf("%s%v", x.name, sh), build: un(x.f, x.lo, x.hi, sh...)})
		}
	}
	// sigmoid and softplus beyond Gorgonia's thresholds
	extreme := []float64{-800, -710, -100, -30, -0.5, 0, 0.7, 14.5, 15.5, 16.5, 18, 20, 30, 800}
	cs = append(cs,
		opCase{name: "sigmoid-extremes", build: func(b *gen) (*G.Node, error) { return G.Sigmoid(b.from(extreme, len(extreme))) }},
		opCase{name: "softplus-extremes", build: func(b *gen) (*G.Node, error) { return G.Softplus(b.from(extreme, len(extreme))) }},
	)
	// elementwise binary with scalar broadcasting
	type bn struct {
		name string
		f    func(a, c *G.Node) (*G.Node, error)
	}
	for _, x := range []bn{{"add", G.Add}, {"sub", G.Sub}, {"mul", G.HadamardProd}, {"div", G.HadamardDiv}, {"pow", G.Pow}} {
		for _, p := range [][2][]int{{s(3, 4), s(3, 4)}, {s(), s(2, 3)}, {s(2, 3), s()}, {s(), s()}, {s(2, 3, 2), s(2, 3, 2)}} {
			cs = append(cs, opCase{name: fmt.Sprintf("%s%v%v", x.name, p[0], p[1]), build: bin(x.f, p[0], p[1])})
		}
	}
	type cm struct {
		name string
		f    func(a, c *G.Node, r bool) (*G.Node, error)
	}
	for _, x := range []cm{{"lt", G.Lt}, {"gt", G.Gt}, {"lte", G.Lte}, {"gte", G.Gte}, {"eq", G.Eq}, {"ne", G.Ne}} {
		for _, rs := range []bool{true, false} {
			for _, p := range [][2][]int{{s(3, 4), s(3, 4)}, {s(4, 2), s()}} {
				cs = append(cs, opCase{name: fmt.Sprintf("%s-retSame=%v%v%v", x.name, rs, p[0], p[1]), build: cmp(x.f, rs, p[0], p[1])})
			}
		}
	}
	cs = append(cs,
		opCase{name: "rectify", build: un(G.Rectify, -2, 2, 3, 4)},
		opCase{name: "leakyrelu", build: func(b *gen) (*G.Node, error) { return G.LeakyRelu(b.in(-2, 2, 3, 4), 0.1) }},
		opCase{name: "maxBetween", build: bin(G.MaxBetween, s(3, 4), s(3, 4))},
		opCase{name: "minBetween", build: bin(G.MinBetween, s(2, 3, 2), s(2, 3, 2))},
		opCase{name: "mish", build: un(G.Mish, -3, 3, 4, 3)},
	)
	return cs
}

// algebraOpCases are the cases of linear algebra, the reductions and the softmax family.
func algebraOpCases() []opCase {
	var cs []opCase
	// linear algebra
	cs = append(cs,
		opCase{name: "matmul", build: bin(G.Mul, s(3, 4), s(4, 2))},
		opCase{name: "matvec", build: bin(G.Mul, s(3, 4), s(4))},
		opCase{name: "vecmat(transA matvec)", build: bin(G.Mul, s(3), s(3, 5))},
		opCase{name: "dot", build: bin(G.Mul, s(6), s(6))},
		opCase{name: "outer", build: bin(G.OuterProd, s(3), s(4))},
		opCase{name: "batched", build: bin(func(a, c *G.Node) (*G.Node, error) { return G.BatchedMatMul(a, c) }, s(2, 3, 4), s(2, 4, 5))},
		opCase{name: "batched-transA", build: bin(func(a, c *G.Node) (*G.Node, error) { return G.BatchedMatMul(a, c, true) }, s(2, 4, 3), s(2, 4, 5))},
		opCase{name: "batched-transB", build: bin(func(a, c *G.Node) (*G.Node, error) { return G.BatchedMatMul(a, c, false, true) }, s(3, 3, 4), s(3, 5, 4))},
		opCase{name: "batched-transAB", build: bin(func(a, c *G.Node) (*G.Node, error) { return G.BatchedMatMul(a, c, true, true) }, s(2, 4, 3), s(2, 5, 4))},
		opCase{name: "tensordot[1,2]x[1,0]", build: bin(func(a, c *G.Node) (*G.Node, error) { return G.Tensordot([]int{1, 2}, []int{1, 0}, a, c) }, s(2, 3, 4), s(4, 3, 5))},
		opCase{name: "tensordot[1]x[0]", build: bin(func(a, c *G.Node) (*G.Node, error) { return G.Tensordot([]int{1}, []int{0}, a, c) }, s(3, 4), s(4, 5))},
		opCase{name: "tensordot[0]x[1]", build: bin(func(a, c *G.Node) (*G.Node, error) { return G.Tensordot([]int{0}, []int{1}, a, c) }, s(3, 4, 2), s(5, 3))},
	)
	for _, tc := range []struct {
		name, op string
		sa, sb   []int
	}{
		{"matmul-transA (harvested)", "Aᵀ × B", s(4, 3), s(4, 2)},
		{"matmul-transB (harvested)", "A × Bᵀ", s(3, 4), s(2, 4)},
	} {
		tc := tc
		cs = append(cs, opCase{name: tc.name, build: func(b *gen) (*G.Node, error) {
			op, err := harvest(b.dt, tc.op, func(h *gen) (*G.Node, error) { return G.Mul(h.in(-1, 1, 3, 4), h.in(-1, 1, 4, 2)) })
			if err != nil {
				return nil, err
			}
			return G.ApplyOp(op, b.in(-1, 1, tc.sa...), b.in(-1, 1, tc.sb...))
		}})
	}
	// reductions
	for _, p := range []struct {
		sh   []int
		axes []int
	}{{s(3, 4), s(0)}, {s(3, 4), s(1)}, {s(3, 4), s(0, 1)}, {s(3, 4), nil}, {s(2, 3, 4), s(1)}, {s(2, 3, 4), s(0, 2)}, {s(2, 3, 4), s(2)}, {s(5), s(0)}} {
		p := p
		cs = append(cs,
			opCase{name: fmt.Sprintf("sum%v%v", p.sh, p.axes), build: func(b *gen) (*G.Node, error) { return G.Sum(b.in(-2, 2, p.sh...), p.axes...) }},
			opCase{name: fmt.Sprintf("max%v%v", p.sh, p.axes), build: func(b *gen) (*G.Node, error) { return G.Max(b.in(-2, 2, p.sh...), p.axes...) }},
			opCase{name: fmt.Sprintf("mean%v%v", p.sh, p.axes), build: func(b *gen) (*G.Node, error) { return G.Mean(b.in(-2, 2, p.sh...), p.axes...) }},
		)
	}
	cs = append(cs, opCase{name: "max-ties", build: func(b *gen) (*G.Node, error) { return G.Max(b.ints(2, 3, 4), 1) }})
	// softmax family
	for _, p := range []struct {
		sh   []int
		axes []int
	}{{s(3, 4), nil}, {s(5), nil}, {s(3, 4), s(0)}, {s(3, 4), s(1)}, {s(2, 3, 4), s(1)}, {s(2, 3, 4), nil}, {s(4, 1), nil}, {s(1, 4), nil}} {
		p := p
		cs = append(cs,
			opCase{name: fmt.Sprintf("softmax%v%v", p.sh, p.axes), build: func(b *gen) (*G.Node, error) { return G.SoftMax(b.in(-3, 3, p.sh...), p.axes...) }},
			opCase{name: fmt.Sprintf("logsoftmax%v%v", p.sh, p.axes), build: func(b *gen) (*G.Node, error) { return G.LogSoftMax(b.in(-3, 3, p.sh...), p.axes...) }},
		)
	}
	return cs
}

// shapeOpCases are the cases of the operations on shapes.
func shapeOpCases() []opCase {
	var cs []opCase
	// shapes
	cs = append(cs,
		opCase{name: "reshape[2,6]->[3,4]", build: func(b *gen) (*G.Node, error) { return G.Reshape(b.in(-1, 1, 2, 6), tensor.Shape{3, 4}) }},
		opCase{name: "reshape[12]->[2,2,3]", build: func(b *gen) (*G.Node, error) { return G.Reshape(b.in(-1, 1, 12), tensor.Shape{2, 2, 3}) }},
		opCase{name: "transpose[2,3]", build: func(b *gen) (*G.Node, error) { return G.Transpose(b.in(-1, 1, 2, 3)) }},
		opCase{name: "transpose[2,3,4](2,0,1)", build: func(b *gen) (*G.Node, error) { return G.Transpose(b.in(-1, 1, 2, 3, 4), 2, 0, 1) }},
		opCase{name: "transpose[2,3,4](0,2,1)", build: func(b *gen) (*G.Node, error) { return G.Transpose(b.in(-1, 1, 2, 3, 4), 0, 2, 1) }},
		opCase{name: "slice[1:3]", build: func(b *gen) (*G.Node, error) { return G.Slice(b.in(-1, 1, 5, 3), G.S(1, 3)) }},
		opCase{name: "slice[0:5:2]", build: func(b *gen) (*G.Node, error) { return G.Slice(b.in(-1, 1, 6, 3), G.S(0, 5, 2)) }},
		opCase{name: "slice[2] (index)", build: func(b *gen) (*G.Node, error) { return G.Slice(b.in(-1, 1, 4, 3), G.S(2)) }},
		opCase{name: "slice[:,1] (index)", build: func(b *gen) (*G.Node, error) { return G.Slice(b.in(-1, 1, 4, 3), nil, G.S(1)) }},
		opCase{name: "slice[:,1:3]", build: func(b *gen) (*G.Node, error) { return G.Slice(b.in(-1, 1, 4, 5), nil, G.S(1, 3)) }},
		opCase{name: "slice[1,:,0:2] 3-D", build: func(b *gen) (*G.Node, error) { return G.Slice(b.in(-1, 1, 3, 2, 4), G.S(1), nil, G.S(0, 2)) }},
		opCase{name: "slice vector index (scalar)", build: func(b *gen) (*G.Node, error) { return G.Slice(b.in(-1, 1, 5), G.S(3)) }},
		opCase{name: "concat axis 0", build: func(b *gen) (*G.Node, error) { return G.Concat(0, b.in(-1, 1, 2, 3), b.in(-1, 1, 3, 3)) }},
		opCase{name: "concat axis 1 x3", build: func(b *gen) (*G.Node, error) {
			return G.Concat(1, b.in(-1, 1, 2, 1), b.in(-1, 1, 2, 3), b.in(-1, 1, 2, 2))
		}},
		opCase{name: "concat 3-D axis 2", build: func(b *gen) (*G.Node, error) { return G.Concat(2, b.in(-1, 1, 2, 2, 1), b.in(-1, 1, 2, 2, 3)) }},
		opCase{name: "broadcast add rows", build: func(b *gen) (*G.Node, error) {
			return G.BroadcastAdd(b.in(-1, 1, 3, 4), b.in(-1, 1, 4), nil, []byte{0})
		}},
		opCase{name: "broadcast mul cols", build: func(b *gen) (*G.Node, error) {
			return G.BroadcastHadamardProd(b.in(-1, 1, 3, 4), b.in(-1, 1, 3), nil, []byte{1})
		}},
		opCase{name: "broadcast sub left", build: func(b *gen) (*G.Node, error) {
			return G.BroadcastSub(b.in(-1, 1, 4), b.in(-1, 1, 3, 4), []byte{0}, nil)
		}},
		opCase{name: "broadcast 3-D", build: func(b *gen) (*G.Node, error) {
			return G.BroadcastAdd(b.in(-1, 1, 2, 3, 4), b.in(-1, 1, 3), nil, []byte{0, 2})
		}},
		opCase{name: "dtype float->int->float", build: func(b *gen) (*G.Node, error) {
			i, err := G.ConvType(b.in(-3, 3, 3, 4), b.dt, tensor.Int)
			if err != nil {
				return nil, err
			}
			return G.ConvType(i, tensor.Int, b.dt)
		}},
	)
	return cs
}

// convOpCases are the cases of the convolution family, pooling, dropout and batch normalisation.
func convOpCases() []opCase {
	var cs []opCase
	// convolution family
	for _, w := range []struct{ k, p, st, d []int }{
		{s(3, 3), s(0, 0), s(1, 1), s(1, 1)},
		{s(3, 3), s(1, 1), s(1, 1), s(1, 1)},
		{s(2, 3), s(1, 0), s(2, 1), s(1, 1)},
		{s(3, 3), s(2, 1), s(2, 2), s(2, 1)},
		{s(1, 1), s(0, 0), s(1, 2), s(1, 1)},
	} {
		w := w
		cs = append(cs,
			opCase{name: fmt.Sprintf("im2col k%v p%v s%v d%v", w.k, w.p, w.st, w.d), build: func(b *gen) (*G.Node, error) {
				return G.Im2Col(b.in(-1, 1, 2, 3, 7, 6), tensor.Shape(w.k), tensor.Shape(w.p), tensor.Shape(w.st), tensor.Shape(w.d))
			}},
			opCase{name: fmt.Sprintf("conv2d k%v p%v s%v d%v", w.k, w.p, w.st, w.d), build: func(b *gen) (*G.Node, error) {
				return G.Conv2d(b.in(-1, 1, 2, 3, 7, 6), b.in(-1, 1, 4, 3, w.k[0], w.k[1]), tensor.Shape(w.k), w.p, w.st, w.d)
			}},
		)
	}
	cs = append(cs, opCase{name: "col2im (harvested)", build: func(b *gen) (*G.Node, error) {
		var op G.Op
		// find the col2im op of Im2Col's gradient
		h := newGen(b.dt, 5)
		x := h.in(-1, 1, 2, 2, 5, 5)
		y, err := G.Im2Col(x, tensor.Shape{3, 2}, tensor.Shape{1, 0}, tensor.Shape{2, 1}, tensor.Shape{1, 2})
		if err != nil {
			return nil, err
		}
		c, err := G.Sum(y)
		if err != nil {
			return nil, err
		}
		if _, err := G.Grad(c, x); err != nil {
			return nil, err
		}
		for _, n := range h.g.AllNodes() {
			if n.Op() != nil && strings.Contains(fmt.Sprintf("%T", n.Op()), "col2im") {
				op = n.Op()
			}
		}
		if op == nil {
			return nil, errors.New("no col2im op in Im2Col's gradient")
		}
		return G.ApplyOp(op, b.in(-1, 1, y.Shape()...))
	}})
	for _, p := range []struct{ k, pad, st []int }{
		{s(2, 2), s(0, 0), s(2, 2)},
		{s(3, 3), s(1, 1), s(1, 1)},
		{s(3, 2), s(1, 0), s(2, 1)},
		{s(2, 2), s(1, 0, 0, 1), s(2, 2)},
		{s(3, 3), s(0, 2, 1, 0), s(1, 2)},
	} {
		p := p
		cs = append(cs,
			opCase{name: fmt.Sprintf("maxpool k%v p%v s%v", p.k, p.pad, p.st), build: func(b *gen) (*G.Node, error) {
				return G.MaxPool2D(b.in(-2, 2, 2, 3, 6, 5), tensor.Shape(p.k), p.pad, p.st)
			}},
			opCase{name: fmt.Sprintf("maxpool-negative k%v p%v s%v", p.k, p.pad, p.st), build: func(b *gen) (*G.Node, error) {
				return G.MaxPool2D(b.in(-3, -1, 1, 2, 5, 5), tensor.Shape(p.k), p.pad, p.st)
			}},
			opCase{name: fmt.Sprintf("avgpool k%v p%v s%v", p.k, p.pad, p.st), build: func(b *gen) (*G.Node, error) {
				return G.AveragePool2D(b.in(-2, 2, 2, 3, 6, 5), tensor.Shape(p.k), p.pad, p.st)
			}},
		)
	}
	cs = append(cs,
		opCase{name: "byIndices axis 0", build: func(b *gen) (*G.Node, error) { return G.ByIndices(b.in(-2, 2, 4, 3), intVec(b, 3, 0, 3, 3), 0) }},
		opCase{name: "byIndices axis 1", build: func(b *gen) (*G.Node, error) { return G.ByIndices(b.in(-2, 2, 1, 4, 3), intVec(b, 1, 3, 1), 1) }},
		opCase{name: "sparsemax [3,5]", build: func(b *gen) (*G.Node, error) { return G.Sparsemax(b.in(-2, 2, 3, 5)) }},
		opCase{name: "sparsemax [2,2,6]", build: func(b *gen) (*G.Node, error) { return G.Sparsemax(b.in(-1, 1, 2, 2, 6)) }},
		opCase{name: "sparsemax [3,4] axis 1", build: func(b *gen) (*G.Node, error) { return G.Sparsemax(b.in(-1, 1, 3, 4), 1) }},
		opCase{name: "sparsemax [7]", build: func(b *gen) (*G.Node, error) { return G.Sparsemax(b.in(-0.3, 0.3, 7)) }},
		opCase{name: "groupnorm [2,4,3,3] 2 groups", build: func(b *gen) (*G.Node, error) {
			return G.GroupNorm(b.in(-2, 2, 2, 4, 3, 3), b.in(0.5, 1.5, 2, 4, 3, 3), b.in(-1, 1, 2, 4, 3, 3), 2, 4, 1e-5)
		}},
		opCase{name: "groupnorm [3,6,5] 3 groups", build: func(b *gen) (*G.Node, error) {
			return G.GroupNorm(b.in(-2, 2, 3, 6, 5), b.in(0.5, 1.5, 3, 6, 5), b.in(-1, 1, 3, 6, 5), 3, 6, 1e-3)
		}},
		opCase{name: "global average pool", build: func(b *gen) (*G.Node, error) { return G.GlobalAveragePool2D(b.in(-2, 2, 2, 3, 4, 5)) }},
		opCase{name: "upsample x2", build: func(b *gen) (*G.Node, error) { return G.Upsample2D(b.in(-2, 2, 2, 3, 2, 3), 2) }},
		opCase{name: "upsample x3", build: func(b *gen) (*G.Node, error) { return G.Upsample2D(b.in(-2, 2, 1, 2, 3, 2), 3) }},
		opCase{name: "dropout 0.5", build: func(b *gen) (*G.Node, error) { return G.Dropout(b.in(-2, 2, 4, 5), 0.5) }},
		opCase{name: "dropout 0", build: func(b *gen) (*G.Node, error) { return G.Dropout(b.in(-2, 2, 4, 5), 0) }},
		opCase{name: "batchnorm [4,3]", build: func(b *gen) (*G.Node, error) {
			y, _, _, _, err := G.BatchNorm(b.in(-2, 2, 4, 3), b.in(0.5, 1.5, 4, 3), b.in(-1, 1, 4, 3), 0.9, 1e-5)
			return y, err
		}},
		opCase{name: "batchnorm [2,3,2,2]", build: func(b *gen) (*G.Node, error) {
			y, _, _, _, err := G.BatchNorm(b.in(-2, 2, 2, 3, 2, 2), b.in(0.5, 1.5, 2, 3, 2, 2), b.in(-1, 1, 2, 3, 2, 2), 0.9, 1e-3)
			return y, err
		}},
	)
	return cs
}

// TestOps: every op of the table, in several settings and both float dtypes, evaluates to
// the TapeMachine's value.
func TestOps(t *testing.T) {
	cases := opCases()
	for i, c := range cases {
		for _, dt := range []tensor.Dtype{tensor.Float64, tensor.Float32} {
			if c.f64 && dt == tensor.Float32 {
				continue
			}
			seed := int64(1000 + i)
			label := fmt.Sprintf("%s/%v/seed=%d", c.name, dt, seed)
			b := newGen(dt, seed)
			out, err := c.safeBuild(b)
			if err != nil {
				t.Errorf("%s: building the Gorgonia graph: %v", label, err)
				continue
			}
			t.Run(label, func(t *testing.T) { checkNode(t, label, out, b.ins) })
		}
	}
}

// TestOpTableCoverage: every entry of the op table is exercised by TestOps.
func TestOpTableCoverage(t *testing.T) {
	hit := map[string]bool{}
	for i, c := range opCases() {
		b := newGen(tensor.Float64, int64(i))
		out, err := c.safeBuild(b)
		if err != nil {
			continue
		}
		seen := map[int64]bool{}
		var walk func(n *G.Node)
		walk = func(n *G.Node) {
			if seen[n.ID()] {
				return
			}
			seen[n.ID()] = true
			if n.Op() != nil {
				hit[strings.TrimPrefix(fmt.Sprintf("%T", n.Op()), "*")] = true
			}
			it := b.g.From(n.ID())
			for it.Next() {
				walk(it.Node().(*G.Node))
			}
		}
		walk(out)
	}
	for _, e := range opTable {
		if !hit[e.typ] {
			t.Errorf("op table entry %s is not exercised by any case", e.typ)
		}
	}
}

// intVec makes an input vector of dtype Int (off the differentiable path).
func intVec(b *gen, vals ...int) *G.Node {
	return G.NewTensor(b.g, tensor.Int, 1, G.WithShape(len(vals)), G.WithName(fmt.Sprintf("idx%d", len(b.ins))),
		G.WithValue(tensor.New(tensor.WithShape(len(vals)), tensor.WithBacking(append([]int{}, vals...)))))
}
