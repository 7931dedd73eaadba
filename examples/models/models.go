// Package models is bulkad's model zoo: constructors of small Gorgonia graphs (logistic
// regression, MLP with softmax cross-entropy, a convnet, an unrolled tanh RNN, an LSTM cell,
// single-head attention) reused by tests, examples and benchmarks, and the models people
// train built from stacked blocks (Gorgonia's MNIST convnet, a ResNet basic-block stack, a
// MobileNet-style depthwise-separable stack, a transformer encoder, an unrolled LSTM), whose
// block count the bench grows. Zoo builds the small ones only.
//
// Every constructor takes the dtype (gorgonia.Float64 or gorgonia.Float32), the sizes and a
// seed, and returns a Model whose nodes all hold deterministic random values (inputs and
// learnables alike), so a TapeMachine can run the graph at once; bind new data with
// gorgonia.Let. Constructors never panic: Gorgonia errors (and panics) come back as errors.
package models

import (
	"fmt"
	"math"
	"math/rand"

	"github.com/pkg/errors"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Model is a graph with its scalar cost, its learnables (the wrt nodes) and its data inputs.
type Model struct {
	Name   string
	G      *G.ExprGraph
	Cost   *G.Node
	Wrt    G.Nodes // learnables, in a fixed order
	Inputs G.Nodes // data inputs (images, targets, …)
	Out    *G.Node // the prediction (logits, probabilities, final state…)
}

// builder collects the first error of a model construction (like core.Builder).
type builder struct {
	g   *G.ExprGraph
	dt  tensor.Dtype
	rng *rand.Rand
	err error
}

func newBuilder(dt tensor.Dtype, seed int64) (*builder, error) {
	if dt != G.Float64 && dt != G.Float32 {
		return nil, errors.Errorf("models: dtype %v, want Float64 or Float32", dt)
	}
	return &builder{g: G.NewGraph(), dt: dt, rng: rand.New(rand.NewSource(seed))}, nil
}

// values makes a dense tensor of uniform values in [-scale, scale].
func (b *builder) values(scale float64, shape ...int) *tensor.Dense {
	n := 1
	for _, k := range shape {
		n *= k
	}
	if b.dt == G.Float32 {
		v := make([]float32, n)
		for i := range v {
			v[i] = float32(scale * (2*b.rng.Float64() - 1))
		}
		return tensor.New(tensor.WithShape(shape...), tensor.WithBacking(v))
	}
	v := make([]float64, n)
	for i := range v {
		v[i] = scale * (2*b.rng.Float64() - 1)
	}
	return tensor.New(tensor.WithShape(shape...), tensor.WithBacking(v))
}

// labels makes a vector of random 0/1 labels.
func (b *builder) labels(n int) *tensor.Dense {
	t := tensor.New(tensor.WithShape(n), tensor.Of(b.dt))
	for i := 0; i < n; i++ {
		v := float64(b.rng.Intn(2))
		if b.dt == G.Float32 {
			b.fail(t.SetAt(float32(v), i))
		} else {
			b.fail(t.SetAt(v, i))
		}
	}
	return t
}

// oneHot makes a [n,k] matrix of one-hot rows with random classes.
func (b *builder) oneHot(n, k int) *tensor.Dense {
	t := tensor.New(tensor.WithShape(n, k), tensor.Of(b.dt))
	for i := 0; i < n; i++ {
		c := b.rng.Intn(k)
		var err error
		if b.dt == G.Float32 {
			err = t.SetAt(float32(1), i, c)
		} else {
			err = t.SetAt(1.0, i, c)
		}
		b.fail(err)
	}
	return t
}

func (b *builder) fail(err error) {
	if b.err == nil && err != nil {
		b.err = err
	}
}

// node makes an input node of the given shape holding v (scalar when shape is empty).
func (b *builder) node(name string, v *tensor.Dense, shape ...int) *G.Node {
	if b.err != nil {
		return nil
	}
	if len(shape) == 0 {
		var s interface{} = v.Data()
		switch d := s.(type) {
		case []float64:
			return G.NewScalar(b.g, b.dt, G.WithName(name), G.WithValue(d[0]))
		case []float32:
			return G.NewScalar(b.g, b.dt, G.WithName(name), G.WithValue(d[0]))
		}
	}
	return G.NewTensor(b.g, b.dt, len(shape), G.WithShape(shape...), G.WithName(name), G.WithValue(v))
}

// param makes a learnable with uniform init of the given scale.
func (b *builder) param(name string, scale float64, shape ...int) *G.Node {
	return b.node(name, b.values(scale, shape...), shape...)
}

// do runs one Gorgonia builder call unless an error happened before.
func (b *builder) do(f func() (*G.Node, error)) *G.Node {
	if b.err != nil {
		return nil
	}
	n, err := f()
	b.fail(err)
	return n
}

func (b *builder) scalar(v float64) *G.Node {
	if b.dt == G.Float32 {
		return G.NewConstant(float32(v))
	}
	return G.NewConstant(v)
}

// dense is x × w + bias (bias broadcast over the rows).
func (b *builder) dense(x, w, bias *G.Node) *G.Node {
	xw := b.do(func() (*G.Node, error) { return G.Mul(x, w) })
	return b.do(func() (*G.Node, error) { return G.BroadcastAdd(xw, bias, nil, []byte{0}) })
}

// dropout is Dropout(x, p), or x itself when p is not positive (dropout disabled).
func (b *builder) dropout(x *G.Node, p float64) *G.Node {
	if p <= 0 {
		return x
	}
	return b.do(func() (*G.Node, error) { return G.Dropout(x, p) })
}

// convBlock is a block of Gorgonia's convnet example: conv 3×3 (pad 1) with the filters w,
// ReLU, 2×2 max-pool (stride 2), then dropout with probability p (0 disables it).
func (b *builder) convBlock(in, w *G.Node, p float64) *G.Node {
	c := b.do(func() (*G.Node, error) {
		return G.Conv2d(in, w, tensor.Shape{3, 3}, []int{1, 1}, []int{1, 1}, []int{1, 1})
	})
	a := b.do(func() (*G.Node, error) { return G.Rectify(c) })
	out := b.do(func() (*G.Node, error) { return G.MaxPool2D(a, tensor.Shape{2, 2}, []int{0, 0}, []int{2, 2}) })
	return b.dropout(out, p)
}

// mse is the mean squared error mean((out − y)²).
func (b *builder) mse(out, y *G.Node) *G.Node {
	d := b.do(func() (*G.Node, error) { return G.Sub(out, y) })
	sq := b.do(func() (*G.Node, error) { return G.Square(d) })
	return b.do(func() (*G.Node, error) { return G.Mean(sq) })
}

// softmaxXent is the mean over the rows of -Σ y ⊙ log-softmax(logits).
func (b *builder) softmaxXent(logits, y *G.Node) *G.Node {
	ls := b.do(func() (*G.Node, error) { return G.LogSoftMax(logits) })
	p := b.do(func() (*G.Node, error) { return G.HadamardProd(y, ls) })
	s := b.do(func() (*G.Node, error) { return G.Sum(p, 1) })
	m := b.do(func() (*G.Node, error) { return G.Mean(s) })
	return b.do(func() (*G.Node, error) { return G.Neg(m) })
}

func (b *builder) finish(m *Model) (mo *Model, err error) {
	if b.err != nil {
		return nil, errors.Wrapf(b.err, "models: %s", m.Name)
	}
	m.G = b.g
	return m, nil
}

// build makes the model name: body adds its nodes to a new builder and returns the model,
// whose Name and graph build fills in. An error of the builder, or a panic inside Gorgonia,
// is the error.
func build(name string, dt tensor.Dtype, seed int64, body func(b *builder) *Model) (m *Model, err error) {
	defer guard(name, &err)
	b, err := newBuilder(dt, seed)
	if err != nil {
		return nil, err
	}
	m = body(b)
	m.Name = name
	return b.finish(m)
}

// guard turns a panic inside Gorgonia into an error.
func guard(name string, err *error) {
	if r := recover(); r != nil {
		*err = errors.Errorf("models: %s: panic inside Gorgonia: %v", name, r)
	}
}

// LogReg is logistic regression: p = σ(x·w + b), cost = -mean(y log p + (1-y) log(1-p)),
// with x : [batch, features], labels y ∈ {0,1} : [batch].
func LogReg(dt tensor.Dtype, batch, features int, seed int64) (*Model, error) {
	return build("logreg", dt, seed, func(b *builder) *Model {
		x := b.node("x", b.values(1, batch, features), batch, features)
		lab := b.labels(batch)
		y := b.node("y", lab, batch)
		w := b.param("w", 0.5, features)
		bias := b.param("b", 0.5)
		xw := b.do(func() (*G.Node, error) { return G.Mul(x, w) })
		z := b.do(func() (*G.Node, error) { return G.Add(xw, bias) })
		p := b.do(func() (*G.Node, error) { return G.Sigmoid(z) })
		one := b.scalar(1)
		lp := b.do(func() (*G.Node, error) { return G.Log(p) })
		q := b.do(func() (*G.Node, error) { return G.Sub(one, p) })
		lq := b.do(func() (*G.Node, error) { return G.Log(q) })
		ny := b.do(func() (*G.Node, error) { return G.Sub(one, y) })
		t1 := b.do(func() (*G.Node, error) { return G.HadamardProd(y, lp) })
		t2 := b.do(func() (*G.Node, error) { return G.HadamardProd(ny, lq) })
		s := b.do(func() (*G.Node, error) { return G.Add(t1, t2) })
		mean := b.do(func() (*G.Node, error) { return G.Mean(s) })
		cost := b.do(func() (*G.Node, error) { return G.Neg(mean) })
		return &Model{Cost: cost, Wrt: G.Nodes{w, bias}, Inputs: G.Nodes{x, y}, Out: p}
	})
}

// MLP is a multi-layer perceptron with ReLU hidden layers and a softmax cross-entropy cost:
// sizes = [in, h1, …, out]; x : [batch, in], one-hot targets y : [batch, out].
// MLP(dt, batch, []int{784, 512, 10}, seed) is the classic MNIST network.
func MLP(dt tensor.Dtype, batch int, sizes []int, seed int64) (*Model, error) {
	if len(sizes) < 2 {
		return nil, errors.Errorf("models: mlp: sizes %v, want at least input and output", sizes)
	}
	return build("mlp", dt, seed, func(b *builder) *Model {
		x := b.node("x", b.values(1, batch, sizes[0]), batch, sizes[0])
		out := sizes[len(sizes)-1]
		y := b.node("y", b.oneHot(batch, out), batch, out)
		h := x
		var wrt G.Nodes
		for l := 0; l+1 < len(sizes); l++ {
			w := b.param(fmt.Sprintf("w%d", l), 1/math.Sqrt(float64(sizes[l])), sizes[l], sizes[l+1])
			bias := b.param(fmt.Sprintf("b%d", l), 0.1, sizes[l+1])
			wrt = append(wrt, w, bias)
			h = b.dense(h, w, bias)
			if l+2 < len(sizes) {
				hh := h
				h = b.do(func() (*G.Node, error) { return G.Rectify(hh) })
			}
		}
		cost := b.softmaxXent(h, y)
		return &Model{Cost: cost, Wrt: wrt, Inputs: G.Nodes{x, y}, Out: h}
	})
}

// ConvNet is a small convnet like Gorgonia's example: conv 3×3 (pad 1) with `filters`
// filters, ReLU, 2×2 max-pool (stride 2), dropout with probability drop (0 disables it), a
// dense layer to `classes` logits and softmax cross-entropy. x : [batch, 1, h, w] with h and w
// even; y one-hot : [batch, classes].
func ConvNet(dt tensor.Dtype, batch, h, w, filters, classes int, drop float64, seed int64) (*Model, error) {
	if h%2 != 0 || w%2 != 0 {
		return nil, errors.Errorf("models: convnet: image %dx%d, want even sizes", h, w)
	}
	return build("convnet", dt, seed, func(b *builder) *Model {
		x := b.node("x", b.values(1, batch, 1, h, w), batch, 1, h, w)
		y := b.node("y", b.oneHot(batch, classes), batch, classes)
		f := b.param("filters", 1.0/3, filters, 1, 3, 3)
		flat := filters * (h / 2) * (w / 2)
		wd := b.param("wd", 1/math.Sqrt(float64(flat)), flat, classes)
		bd := b.param("bd", 0.1, classes)
		p := b.convBlock(x, f, drop)
		fl := b.do(func() (*G.Node, error) { return G.Reshape(p, tensor.Shape{batch, flat}) })
		logits := b.dense(fl, wd, bd)
		cost := b.softmaxXent(logits, y)
		return &Model{Cost: cost, Wrt: G.Nodes{f, wd, bd}, Inputs: G.Nodes{x, y}, Out: logits}
	})
}

// RNN is a tanh RNN unrolled over `steps` inputs x_t : [batch, in]:
// h_{t+1} = tanh(x_t × Wx + h_t × Wh + b), h_0 = 0, cost = mean((h_T - y)²).
func RNN(dt tensor.Dtype, batch, in, hidden, steps int, seed int64) (*Model, error) {
	return build("rnn", dt, seed, func(b *builder) *Model {
		wx := b.param("wx", 1/math.Sqrt(float64(in)), in, hidden)
		wh := b.param("wh", 1/math.Sqrt(float64(hidden)), hidden, hidden)
		bias := b.param("bh", 0.1, hidden)
		var inputs G.Nodes
		h := b.node("h0", b.values(0, batch, hidden), batch, hidden)
		inputs = append(inputs, h)
		for t := 0; t < steps; t++ {
			x := b.node(fmt.Sprintf("x%d", t), b.values(1, batch, in), batch, in)
			inputs = append(inputs, x)
			hp := h
			xw := b.do(func() (*G.Node, error) { return G.Mul(x, wx) })
			hw := b.do(func() (*G.Node, error) { return G.Mul(hp, wh) })
			s := b.do(func() (*G.Node, error) { return G.Add(xw, hw) })
			s = b.do(func() (*G.Node, error) { return G.BroadcastAdd(s, bias, nil, []byte{0}) })
			h = b.do(func() (*G.Node, error) { return G.Tanh(s) })
		}
		y := b.node("y", b.values(1, batch, hidden), batch, hidden)
		inputs = append(inputs, y)
		cost := b.mse(h, y)
		return &Model{Cost: cost, Wrt: G.Nodes{wx, wh, bias}, Inputs: inputs, Out: h}
	})
}

// LSTM is one LSTM cell step on x : [batch, in] with state (h, c) : [batch, hidden]:
// i, f, o = σ(x Wᵢ + h Uᵢ + bᵢ), g = tanh(x W_g + h U_g + b_g), c' = f⊙c + i⊙g,
// h' = o ⊙ tanh c'; cost = mean((h' - y)²) + mean(c'²).
func LSTM(dt tensor.Dtype, batch, in, hidden int, seed int64) (*Model, error) {
	return build("lstm", dt, seed, func(b *builder) *Model {
		x := b.node("x", b.values(1, batch, in), batch, in)
		h := b.node("h", b.values(1, batch, hidden), batch, hidden)
		c := b.node("c", b.values(1, batch, hidden), batch, hidden)
		y := b.node("y", b.values(1, batch, hidden), batch, hidden)
		var wrt G.Nodes
		gate := func(name string, act func(*G.Node) (*G.Node, error)) *G.Node {
			w := b.param("w"+name, 1/math.Sqrt(float64(in)), in, hidden)
			u := b.param("u"+name, 1/math.Sqrt(float64(hidden)), hidden, hidden)
			bb := b.param("b"+name, 0.1, hidden)
			wrt = append(wrt, w, u, bb)
			xw := b.do(func() (*G.Node, error) { return G.Mul(x, w) })
			hu := b.do(func() (*G.Node, error) { return G.Mul(h, u) })
			s := b.do(func() (*G.Node, error) { return G.Add(xw, hu) })
			s = b.do(func() (*G.Node, error) { return G.BroadcastAdd(s, bb, nil, []byte{0}) })
			return b.do(func() (*G.Node, error) { return act(s) })
		}
		ig := gate("i", G.Sigmoid)
		fg := gate("f", G.Sigmoid)
		og := gate("o", G.Sigmoid)
		gg := gate("g", G.Tanh)
		fc := b.do(func() (*G.Node, error) { return G.HadamardProd(fg, c) })
		ic := b.do(func() (*G.Node, error) { return G.HadamardProd(ig, gg) })
		c2 := b.do(func() (*G.Node, error) { return G.Add(fc, ic) })
		tc := b.do(func() (*G.Node, error) { return G.Tanh(c2) })
		h2 := b.do(func() (*G.Node, error) { return G.HadamardProd(og, tc) })
		l1 := b.mse(h2, y)
		c2sq := b.do(func() (*G.Node, error) { return G.Square(c2) })
		l2 := b.do(func() (*G.Node, error) { return G.Mean(c2sq) })
		cost := b.do(func() (*G.Node, error) { return G.Add(l1, l2) })
		return &Model{Cost: cost, Wrt: wrt, Inputs: G.Nodes{x, h, c, y}, Out: h2}
	})
}

// Attention is single-head self-attention on X : [n, d]: Q = X W_q, K = X W_k, V = X W_v,
// A = softmax(Q Kᵀ / √d) (rows), out = A V; cost = mean((out - y)²).
func Attention(dt tensor.Dtype, n, d int, seed int64) (*Model, error) {
	return build("attention", dt, seed, func(b *builder) *Model {
		x := b.node("x", b.values(1, n, d), n, d)
		y := b.node("y", b.values(1, n, d), n, d)
		wq := b.param("wq", 1/math.Sqrt(float64(d)), d, d)
		wk := b.param("wk", 1/math.Sqrt(float64(d)), d, d)
		wv := b.param("wv", 1/math.Sqrt(float64(d)), d, d)
		q := b.do(func() (*G.Node, error) { return G.Mul(x, wq) })
		k := b.do(func() (*G.Node, error) { return G.Mul(x, wk) })
		v := b.do(func() (*G.Node, error) { return G.Mul(x, wv) })
		kt := b.do(func() (*G.Node, error) { return G.Transpose(k) })
		s := b.do(func() (*G.Node, error) { return G.Mul(q, kt) })
		scale := b.scalar(1 / math.Sqrt(float64(d)))
		s = b.do(func() (*G.Node, error) { return G.HadamardProd(s, scale) })
		a := b.do(func() (*G.Node, error) { return G.SoftMax(s) })
		out := b.do(func() (*G.Node, error) { return G.Mul(a, v) })
		cost := b.mse(out, y)
		return &Model{Cost: cost, Wrt: G.Nodes{wq, wk, wv}, Inputs: G.Nodes{x, y}, Out: out}
	})
}

// Zoo builds every model at small sizes (for tests and benchmarks).
func Zoo(dt tensor.Dtype, seed int64) ([]*Model, error) {
	type ctor func() (*Model, error)
	ctors := []ctor{
		func() (*Model, error) { return LogReg(dt, 8, 5, seed) },
		func() (*Model, error) { return MLP(dt, 4, []int{12, 8, 3}, seed) },
		func() (*Model, error) { return ConvNet(dt, 2, 6, 6, 3, 4, 0.25, seed) },
		func() (*Model, error) { return RNN(dt, 3, 4, 5, 4, seed) },
		func() (*Model, error) { return LSTM(dt, 3, 4, 5, seed) },
		func() (*Model, error) { return Attention(dt, 5, 4, seed) },
	}
	var ms []*Model
	for _, c := range ctors {
		m, err := c()
		if err != nil {
			return nil, err
		}
		ms = append(ms, m)
	}
	return ms, nil
}

// ConvNetMNIST is the network of Gorgonia's convnet example on 28×28 images x : [batch,1,28,28]
// with one-hot targets y : [batch,10]: three blocks conv 3×3 (pad 1; 32, 64, 128 filters),
// ReLU, 2×2 max-pool (stride 2), dropout; a dense layer 128·3·3 → 625 with ReLU and dropout; a
// dense layer 625 → 10 with softmax; cost = -mean(y ⊙ log softmax) over all elements (Gorgonia
// rewrites log(softmax) into a log-softmax). drop holds the four dropout probabilities of the
// example (0.2, 0.2, 0.2, 0.55); zeros disable them.
func ConvNetMNIST(dt tensor.Dtype, batch int, drop [4]float64, seed int64) (*Model, error) {
	return build("convnet-mnist", dt, seed, func(b *builder) *Model {
		x := b.node("x", b.values(1, batch, 1, 28, 28), batch, 1, 28, 28)
		y := b.node("y", b.oneHot(batch, 10), batch, 10)
		w0 := b.param("w0", 1.0/3, 32, 1, 3, 3)
		w1 := b.param("w1", 1/math.Sqrt(32*9), 64, 32, 3, 3)
		w2 := b.param("w2", 1/math.Sqrt(64*9), 128, 64, 3, 3)
		w3 := b.param("w3", 1/math.Sqrt(128*9), 128*3*3, 625)
		w4 := b.param("w4", 1/math.Sqrt(625), 625, 10)
		l0 := b.convBlock(x, w0, drop[0])
		l1 := b.convBlock(l0, w1, drop[1])
		l2 := b.convBlock(l1, w2, drop[2])
		r2 := b.do(func() (*G.Node, error) { return G.Reshape(l2, tensor.Shape{batch, 128 * 3 * 3}) })
		h := b.do(func() (*G.Node, error) { return G.Mul(r2, w3) })
		h = b.dropout(b.do(func() (*G.Node, error) { return G.Rectify(h) }), drop[3])
		logits := b.do(func() (*G.Node, error) { return G.Mul(h, w4) })
		out := b.do(func() (*G.Node, error) { return G.SoftMax(logits) })
		lg := b.do(func() (*G.Node, error) { return G.Log(out) })
		losses := b.do(func() (*G.Node, error) { return G.HadamardProd(lg, y) })
		mean := b.do(func() (*G.Node, error) { return G.Mean(losses) })
		cost := b.do(func() (*G.Node, error) { return G.Neg(mean) })
		return &Model{Cost: cost, Wrt: G.Nodes{w0, w1, w2, w3, w4}, Inputs: G.Nodes{x, y}, Out: out}
	})
}
