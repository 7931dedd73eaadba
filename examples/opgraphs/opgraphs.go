// Package opgraphs builds one small Gorgonia graph per differentiable operation bulkad
// translates: the single-op graphs of the gradient check (examples/gradcheck) and of the
// end-to-end tests. Each graph computes cost = Σ op(inputs) ⊙ r with a random weight tensor r
// (not differentiated), so every gradient entry is distinct and non-trivial.
//
// Input values are drawn from a seeded generator, away from kinks and outside domains where an
// operation is undefined: log-like and root-like operations get values in [0.5, 2],
// operations with kinks (abs, ReLU, max/min, pooling) get values whose gaps exceed any
// finite-difference step.
package opgraphs

import (
	"math"
	"math/rand"
	"sort"

	"github.com/pkg/errors"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Graph is one built single-op graph.
type Graph struct {
	G    *G.ExprGraph
	Cost *G.Node
	Wrt  G.Nodes
}

// Case is one operation.
type Case struct {
	Name string
	// GorgoniaWrong marks operations whose gradient Gorgonia v0.9.18 gets wrong or cannot
	// compute (see shared/notes/gorgonia.md).
	GorgoniaWrong bool
	// GorgoniaRefuses marks operations Gorgonia's Grad refuses to differentiate ("Non
	// Differentiable WRTs") although their derivative exists almost everywhere (it is 0).
	GorgoniaRefuses bool
	build           func(b *builder) (*G.Node, error)
}

// Build makes the case's graph for dtype dt (tensor.Float64 or tensor.Float32) from seed.
func (c Case) Build(dt tensor.Dtype, seed int64) (gr *Graph, err error) {
	return c.BuildThen(dt, seed, nil)
}

// BuildThen is Build with then applied to the operation's result before the weighting:
// cost = Σ then(op(inputs)) ⊙ r (then may add nodes, inputs included, to the result's graph;
// they are not differentiated). A nil then is Build.
func (c Case) BuildThen(dt tensor.Dtype, seed int64, then func(*G.Node) (*G.Node, error)) (gr *Graph, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = errors.Errorf("opgraphs: %s: building panicked: %v", c.Name, r)
		}
	}()
	b := &builder{g: G.NewGraph(), dt: dt, rng: rand.New(rand.NewSource(seed))}
	out, err := c.build(b)
	if err != nil {
		return nil, errors.Wrapf(err, "opgraphs: %s", c.Name)
	}
	if then != nil {
		if out, err = then(out); err != nil {
			return nil, errors.Wrapf(err, "opgraphs: %s: then", c.Name)
		}
	}
	cost := out
	if !out.IsScalar() {
		r := b.input("r", out.Shape(), -1, 1, false)
		prod, err := G.HadamardProd(out, r)
		if err != nil {
			return nil, errors.Wrapf(err, "opgraphs: %s: weighting", c.Name)
		}
		if cost, err = G.Sum(prod); err != nil {
			return nil, errors.Wrapf(err, "opgraphs: %s: sum", c.Name)
		}
	}
	return &Graph{G: b.g, Cost: cost, Wrt: b.wrt}, nil
}

type builder struct {
	g   *G.ExprGraph
	dt  tensor.Dtype
	rng *rand.Rand
	wrt G.Nodes
	n   int
}

// input makes an input node of the given shape with values uniform in [lo, hi]; wrt marks it
// as differentiated.
func (b *builder) input(name string, shape []int, lo, hi float64, wrt bool) *G.Node {
	size := 1
	for _, k := range shape {
		size *= k
	}
	vals := make([]float64, size)
	for i := range vals {
		vals[i] = lo + (hi-lo)*b.rng.Float64()
	}
	return b.node(name, shape, vals, wrt)
}

// spread makes an input whose values are distinct and at least 0.05 apart (no ties, no
// values near 0), shuffled: for max, pooling and other kinks.
func (b *builder) spread(name string, shape []int, wrt bool) *G.Node {
	return b.spreadOff(name, shape, wrt, 0)
}

// spreadOff is spread with every value moved by off: two inputs spread with offsets that
// differ by less than 0.05 never hold equal values (MaxBetween and MinBetween stay off
// their ties).
func (b *builder) spreadOff(name string, shape []int, wrt bool, off float64) *G.Node {
	size := 1
	for _, k := range shape {
		size *= k
	}
	vals := make([]float64, size)
	for i := range vals {
		v := 0.1 + 0.05*float64(i)
		if i%2 == 1 {
			v = -v
		}
		vals[i] = v + off
	}
	b.rng.Shuffle(size, func(i, j int) { vals[i], vals[j] = vals[j], vals[i] })
	return b.node(name, shape, vals, wrt)
}

func (b *builder) node(name string, shape []int, vals []float64, wrt bool) *G.Node {
	b.n++
	var v *tensor.Dense
	if b.dt == tensor.Float32 {
		f := make([]float32, len(vals))
		for i := range vals {
			f[i] = float32(vals[i])
		}
		v = tensor.New(tensor.WithShape(shape...), tensor.WithBacking(f))
	} else {
		v = tensor.New(tensor.WithShape(shape...), tensor.WithBacking(vals))
	}
	var n *G.Node
	if len(shape) == 0 {
		var s G.Value
		if b.dt == tensor.Float32 {
			s = G.NewF32(float32(vals[0]))
		} else {
			s = G.NewF64(vals[0])
		}
		n = G.NewScalar(b.g, b.dt, G.WithName(name), G.WithValue(s))
	} else {
		n = G.NewTensor(b.g, b.dt, len(shape), G.WithShape(shape...), G.WithName(name), G.WithValue(v))
	}
	if wrt {
		b.wrt = append(b.wrt, n)
	}
	return n
}

func unary(name string, f func(*G.Node) (*G.Node, error), lo, hi float64, wrong bool) Case {
	return Case{Name: name, GorgoniaWrong: wrong, build: func(b *builder) (*G.Node, error) {
		return f(b.input("x", []int{3, 4}, lo, hi, true))
	}}
}

func refused(c Case) Case {
	c.GorgoniaRefuses = true
	return c
}

func binary(name string, f func(a, c *G.Node) (*G.Node, error), lo, hi float64) Case {
	return Case{Name: name, build: func(b *builder) (*G.Node, error) {
		return f(b.input("a", []int{3, 4}, lo, hi, true), b.input("b", []int{3, 4}, lo, hi, true))
	}}
}

// Cases returns every single-op case, sorted by name.
func Cases() []Case {
	cs := []Case{
		unary("abs", G.Abs, 0.2, 1, false),
		refused(unary("sign", G.Sign, 0.2, 1, false)),
		refused(unary("ceil", G.Ceil, 0.2, 0.8, false)),
		refused(unary("floor", G.Floor, 0.2, 0.8, false)),
		unary("sin", G.Sin, -2, 2, false),
		unary("cos", G.Cos, -2, 2, false),
		unary("exp", G.Exp, -1, 1, false),
		unary("ln", G.Log, 0.5, 2, false),
		unary("log2", G.Log2, 0.5, 2, true),
		unary("neg", G.Neg, -1, 1, false),
		unary("square", G.Square, -1, 1, false),
		unary("sqrt", G.Sqrt, 0.5, 2, false),
		unary("inverse", G.Inverse, 0.5, 2, false),
		unary("inverseSqrt", G.InverseSqrt, 0.5, 2, true),
		unary("cube", G.Cube, -1, 1, false),
		unary("tanh", G.Tanh, -2, 2, false),
		unary("sigmoid", G.Sigmoid, -2, 2, false),
		unary("log1p", G.Log1p, 0.1, 1, false),
		unary("expm1", G.Expm1, -1, 1, false),
		unary("softplus", G.Softplus, -2, 2, false),
		{Name: "rectify", build: func(b *builder) (*G.Node, error) { return G.Rectify(b.spread("x", []int{3, 4}, true)) }},
		binary("add", G.Add, -1, 1),
		binary("sub", G.Sub, -1, 1),
		binary("hadamardProd", G.HadamardProd, -1, 1),
		binary("hadamardDiv", G.HadamardDiv, 0.5, 2),
		binary("pow", G.Pow, 0.5, 2),
		{Name: "gt(retSame)*x", build: func(b *builder) (*G.Node, error) {
			x := b.spread("x", []int{3, 4}, true)
			y := b.input("y", []int{3, 4}, -0.01, 0.01, false)
			m, err := G.Gt(x, y, true)
			if err != nil {
				return nil, err
			}
			return G.HadamardProd(m, x)
		}},
		{Name: "maxBetween", build: func(b *builder) (*G.Node, error) {
			return G.MaxBetween(b.spread("a", []int{3, 4}, true), b.spreadOff("b", []int{3, 4}, true, 0.025))
		}},
		{Name: "minBetween", build: func(b *builder) (*G.Node, error) {
			return G.MinBetween(b.spread("a", []int{3, 4}, true), b.spreadOff("b", []int{3, 4}, true, 0.025))
		}},
		{Name: "matmul", build: func(b *builder) (*G.Node, error) {
			return G.Mul(b.input("a", []int{3, 4}, -1, 1, true), b.input("b", []int{4, 5}, -1, 1, true))
		}},
		{Name: "matvec", build: func(b *builder) (*G.Node, error) {
			return G.Mul(b.input("a", []int{3, 4}, -1, 1, true), b.input("v", []int{4}, -1, 1, true))
		}},
		{Name: "dot", build: func(b *builder) (*G.Node, error) {
			return G.Mul(b.input("u", []int{5}, -1, 1, true), b.input("v", []int{5}, -1, 1, true))
		}},
		{Name: "outerProd", GorgoniaWrong: true, build: func(b *builder) (*G.Node, error) {
			return G.OuterProd(b.input("u", []int{3}, -1, 1, true), b.input("v", []int{4}, -1, 1, true))
		}},
		{Name: "batchedMatMul", build: func(b *builder) (*G.Node, error) {
			return G.BatchedMatMul(b.input("a", []int{2, 3, 4}, -1, 1, true), b.input("b", []int{2, 4, 5}, -1, 1, true))
		}},
		{Name: "tensordot", build: func(b *builder) (*G.Node, error) {
			return G.Tensordot([]int{1}, []int{0}, b.input("a", []int{3, 4}, -1, 1, true), b.input("b", []int{4, 2}, -1, 1, true))
		}},
		{Name: "sum(all)", build: func(b *builder) (*G.Node, error) { return G.Sum(b.input("x", []int{3, 4}, -1, 1, true)) }},
		{Name: "sum(axis0)", build: func(b *builder) (*G.Node, error) { return G.Sum(b.input("x", []int{3, 4}, -1, 1, true), 0) }},
		{Name: "sum(axis1)", build: func(b *builder) (*G.Node, error) { return G.Sum(b.input("x", []int{3, 4, 2}, -1, 1, true), 1) }},
		{Name: "mean(axis1)", build: func(b *builder) (*G.Node, error) { return G.Mean(b.input("x", []int{3, 4}, -1, 1, true), 1) }},
		{Name: "max(axis1)", build: func(b *builder) (*G.Node, error) { return G.Max(b.spread("x", []int{3, 4}, true), 1) }},
		{Name: "softmax", build: func(b *builder) (*G.Node, error) { return G.SoftMax(b.input("x", []int{3, 4}, -2, 2, true)) }},
		{Name: "logSoftmax", build: func(b *builder) (*G.Node, error) { return G.LogSoftMax(b.input("x", []int{3, 4}, -2, 2, true)) }},
		{Name: "reshape", build: func(b *builder) (*G.Node, error) {
			return G.Reshape(b.input("x", []int{3, 4}, -1, 1, true), tensor.Shape{2, 6})
		}},
		{Name: "transpose", build: func(b *builder) (*G.Node, error) {
			return G.Transpose(b.input("x", []int{2, 3, 4}, -1, 1, true), 2, 0, 1)
		}},
		{Name: "slice(step)", build: func(b *builder) (*G.Node, error) {
			return G.Slice(b.input("x", []int{6, 4}, -1, 1, true), G.S(1, 6, 2))
		}},
		{Name: "slice(index)", build: func(b *builder) (*G.Node, error) {
			return G.Slice(b.input("x", []int{3, 4, 2}, -1, 1, true), nil, G.S(2))
		}},
		{Name: "concat", build: func(b *builder) (*G.Node, error) {
			return G.Concat(1, b.input("a", []int{3, 2}, -1, 1, true), b.input("b", []int{3, 4}, -1, 1, true))
		}},
		{Name: "broadcastAdd", build: func(b *builder) (*G.Node, error) {
			return G.BroadcastAdd(b.input("a", []int{3, 4}, -1, 1, true), b.input("b", []int{4}, -1, 1, true), nil, []byte{0})
		}},
		{Name: "broadcastHadamardProd", build: func(b *builder) (*G.Node, error) {
			return G.BroadcastHadamardProd(b.input("a", []int{3, 4}, -1, 1, true), b.input("b", []int{3}, -1, 1, true), nil, []byte{1})
		}},
		{Name: "conv2d", build: func(b *builder) (*G.Node, error) {
			x := b.input("x", []int{2, 2, 5, 5}, -1, 1, true)
			w := b.input("w", []int{3, 2, 3, 3}, -1, 1, true)
			return G.Conv2d(x, w, tensor.Shape{3, 3}, []int{1, 1}, []int{1, 1}, []int{1, 1})
		}},
		{Name: "conv2d(stride2,pad0)", build: func(b *builder) (*G.Node, error) {
			x := b.input("x", []int{1, 2, 6, 6}, -1, 1, true)
			w := b.input("w", []int{2, 2, 2, 2}, -1, 1, true)
			return G.Conv2d(x, w, tensor.Shape{2, 2}, []int{0, 0}, []int{2, 2}, []int{1, 1})
		}},
		{Name: "maxPool2D", build: func(b *builder) (*G.Node, error) {
			return G.MaxPool2D(b.spread("x", []int{2, 2, 4, 4}, true), tensor.Shape{2, 2}, []int{0, 0}, []int{2, 2})
		}},
		{Name: "averagePool2D", GorgoniaWrong: true, build: func(b *builder) (*G.Node, error) {
			return G.AveragePool2D(b.input("x", []int{2, 2, 4, 4}, -1, 1, true), tensor.Shape{2, 2}, []int{0, 0}, []int{2, 2})
		}},
		{Name: "globalAveragePool2D", GorgoniaWrong: true, build: func(b *builder) (*G.Node, error) {
			return G.GlobalAveragePool2D(b.input("x", []int{2, 3, 4, 4}, -1, 1, true))
		}},
		{Name: "upsample2D", build: func(b *builder) (*G.Node, error) {
			return G.Upsample2D(b.input("x", []int{1, 2, 3, 3}, -1, 1, true), 2)
		}},
	}
	sort.Slice(cs, func(i, j int) bool { return cs[i].Name < cs[j].Name })
	return cs
}

// Lookup returns the case with the given name.
func Lookup(name string) (Case, bool) {
	for _, c := range Cases() {
		if c.Name == name {
			return c, true
		}
	}
	return Case{}, false
}

// Values returns a copy of a node's value as float64s (see Floats).
func Values(n *G.Node) []float64 { return Floats(n.Value()) }

// Floats returns a copy of a Gorgonia value's data as float64s (float32 converted, a scalar
// as one element); nil for no value, [NaN] for a non-float value.
func Floats(v G.Value) []float64 {
	if v == nil {
		return nil
	}
	switch d := v.Data().(type) {
	case []float64:
		return widen(d)
	case []float32:
		return widen(d)
	case float64:
		return []float64{d}
	case float32:
		return []float64{float64(d)}
	}
	return []float64{math.NaN()}
}

// Dense makes a tensor of dtype dt (Float64, or Float32 with each value rounded) and shape
// sh holding a copy of v.
func Dense(dt tensor.Dtype, sh []int, v []float64) *tensor.Dense {
	shape := append([]int(nil), sh...)
	if dt == tensor.Float32 {
		f := make([]float32, len(v))
		for i, x := range v {
			f[i] = float32(x)
		}
		return tensor.New(tensor.WithShape(shape...), tensor.WithBacking(f))
	}
	return tensor.New(tensor.WithShape(shape...), tensor.WithBacking(append([]float64(nil), v...)))
}

// widen converts floats to a new slice of float64s.
func widen[T float32 | float64](x []T) []float64 {
	out := make([]float64, len(x))
	for i, v := range x {
		out[i] = float64(v)
	}
	return out
}
