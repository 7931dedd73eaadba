package models

import (
	"fmt"
	"math"

	"github.com/pkg/errors"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// This file holds the models people train, built from stacked blocks: a ResNet basic-block
// stack, a MobileNet-style depthwise-separable stack, a transformer encoder and an unrolled
// LSTM. Each takes its number of blocks (layers, steps), so the bench can grow it.

// bnEps is the batch-norm and layer-norm ε (PyTorch's default).
const bnEps = 1e-5

// batchNorm is Gorgonia's BatchNorm in training mode (normalise each channel — axis 1 — by the
// batch's mean and biased variance over every other axis) followed by the per-channel scale
// γ and shift β. γ and β have x's rank with size 1 on every axis but the channel axis
// ([1,C,1,1] for an image batch, [1,C] for a matrix of rows), so Gorgonia's BatchNorm
// broadcasts them (it requires operands of equal rank).
func (b *builder) batchNorm(x *G.Node, name string) (y *G.Node, gamma, beta *G.Node) {
	if b.err != nil {
		return nil, nil, nil
	}
	shape := make([]int, x.Dims())
	for i := range shape {
		shape[i] = 1
	}
	c := x.Shape()[1]
	shape[1] = c
	gamma = b.node(name+"_g", b.around(1, 0.1, shape...), shape...)
	beta = b.node(name+"_b", b.values(0.1, shape...), shape...)
	if b.err != nil {
		return nil, nil, nil
	}
	out, _, _, _, err := G.BatchNorm(x, gamma, beta, 0.1, bnEps)
	b.fail(err)
	return out, gamma, beta
}

// around makes a dense tensor of uniform values in [mean-scale, mean+scale].
func (b *builder) around(mean, scale float64, shape ...int) *tensor.Dense {
	t := b.values(scale, shape...)
	switch d := t.Data().(type) {
	case []float64:
		for i := range d {
			d[i] += mean
		}
	case []float32:
		for i := range d {
			d[i] += float32(mean)
		}
	}
	return t
}

// relu is Gorgonia's Rectify.
func (b *builder) relu(x *G.Node) *G.Node {
	return b.do(func() (*G.Node, error) { return G.Rectify(x) })
}

// conv3 is a 3×3 convolution, padding 1, stride 1, no bias.
func (b *builder) conv3(x, w *G.Node) *G.Node {
	return b.do(func() (*G.Node, error) {
		return G.Conv2d(x, w, tensor.Shape{3, 3}, []int{1, 1}, []int{1, 1}, []int{1, 1})
	})
}

// head is global average pooling of x : [N,C,H,W] over H and W, a dense layer to `classes`
// logits and the softmax cross-entropy against y. The pooling reshapes x to [N, C, H·W] and
// takes the mean along the last axis: gorgonia.Mean(x, 2, 3) (and Sum) computes wrong values
// on such shapes (gorgonia.org/tensor v0.9.24's Sum along two axes of a 4-D tensor, e.g.
// [2,3,4,4] along 2 and 3), and GlobalAveragePool2D has no gradient in Gorgonia.
func (b *builder) head(x, y *G.Node, classes int) (cost, logits *G.Node, wrt G.Nodes) {
	if b.err != nil {
		return nil, nil, nil
	}
	s := x.Shape()
	c := s[1]
	wd := b.param("wd", 1/math.Sqrt(float64(c)), c, classes)
	bd := b.param("bd", 0.1, classes)
	flat := b.do(func() (*G.Node, error) { return G.Reshape(x, tensor.Shape{s[0], c, s[2] * s[3]}) })
	pooled := b.do(func() (*G.Node, error) { return G.Mean(flat, 2) })
	logits = b.dense(pooled, wd, bd)
	return b.softmaxXent(logits, y), logits, G.Nodes{wd, bd}
}

// checkSizes refuses non-positive sizes.
func checkSizes(name string, sizes ...int) error {
	for _, s := range sizes {
		if s <= 0 {
			return errors.Errorf("models: %s: sizes %v, want all positive", name, sizes)
		}
	}
	return nil
}

// newImageModel checks the sizes of an image classifier and starts it: a builder, the images
// x : [batch, 3, size, size] and the one-hot targets y : [batch, classes].
func newImageModel(name string, dt tensor.Dtype, batch, size, ch, blocks, classes int, seed int64) (b *builder, x, y *G.Node, err error) {
	if err := checkSizes(name, batch, size, ch, blocks, classes); err != nil {
		return nil, nil, nil, err
	}
	if b, err = newBuilder(dt, seed); err != nil {
		return nil, nil, nil, err
	}
	x = b.node("x", b.values(1, batch, 3, size, size), batch, 3, size, size)
	y = b.node("y", b.oneHot(batch, classes), batch, classes)
	return b, x, y, nil
}

// ResNet is a stack of ResNet basic blocks on images x : [batch, 3, size, size] with one-hot
// targets y : [batch, classes]. A stem conv 3×3 (3 → ch) + batch norm + ReLU is followed by
// `blocks` basic blocks, each
//
//	relu(bn(conv3×3(relu(bn(conv3×3(h))))) + h)
//
// (ch → ch channels, padding 1, no conv bias; identity shortcut), then global average pooling,
// a dense layer to `classes` logits and softmax cross-entropy. Batch norm is Gorgonia's
// BatchNorm in training mode with per-channel γ, β. Learnables, in order: the stem's filters,
// γ, β; each block's two (filters, γ, β); the dense weights and bias.
func ResNet(dt tensor.Dtype, batch, size, ch, blocks, classes int, seed int64) (m *Model, err error) {
	defer guard("resnet", &err)
	b, x, y, err := newImageModel("resnet", dt, batch, size, ch, blocks, classes, seed)
	if err != nil {
		return nil, err
	}
	var wrt G.Nodes
	convBN := func(in *G.Node, name string, cin int) *G.Node {
		w := b.param(name+"_w", 1/math.Sqrt(float64(cin*9)), ch, cin, 3, 3)
		out, g, be := b.batchNorm(b.conv3(in, w), name+"_bn")
		wrt = append(wrt, w, g, be)
		return out
	}
	h := b.relu(convBN(x, "stem", 3))
	for k := 0; k < blocks; k++ {
		a := b.relu(convBN(h, fmt.Sprintf("b%d_1", k), ch))
		r := convBN(a, fmt.Sprintf("b%d_2", k), ch)
		hp := h
		s := b.do(func() (*G.Node, error) { return G.Add(r, hp) })
		h = b.relu(s)
	}
	cost, logits, hw := b.head(h, y, classes)
	wrt = append(wrt, hw...)
	return b.finish(&Model{Name: "resnet", Cost: cost, Wrt: wrt, Inputs: G.Nodes{x, y}, Out: logits})
}

// depthwise is a depthwise 3×3 convolution (padding 1, stride 1, one filter per channel, no
// bias) of x : [N,C,H,W] with the filters w : [C, 9], built from Gorgonia primitives (Gorgonia
// has no grouped convolution): Im2Col gives [N,H,W,C·9] with each channel's 3×3 window
// contiguous; reshaped to [N·H·W, C, 9] it is multiplied element-wise by w broadcast over the
// rows, and summed over the window axis. The result is [N·H·W, C]: the channels-last rows
// the pointwise convolution (a matrix product) and a 2-D batch norm take directly. Six
// Gorgonia nodes (im2col, reshape, the broadcast's reshape and repeat, ⊙, Σ).
func (b *builder) depthwise(x, w *G.Node) *G.Node {
	if b.err != nil {
		return nil
	}
	s := x.Shape()
	n, c, h, wd := s[0], s[1], s[2], s[3]
	cols := b.do(func() (*G.Node, error) {
		return G.Im2Col(x, tensor.Shape{3, 3}, tensor.Shape{1, 1}, tensor.Shape{1, 1}, tensor.Shape{1, 1})
	})
	rows := b.do(func() (*G.Node, error) { return G.Reshape(cols, tensor.Shape{n * h * wd, c, 9}) })
	prod := b.do(func() (*G.Node, error) { return G.BroadcastHadamardProd(rows, w, nil, []byte{0}) })
	return b.do(func() (*G.Node, error) { return G.Sum(prod, 2) })
}

// MobileNet is a MobileNet-style stack of depthwise-separable blocks on images
// x : [batch, 3, size, size] with one-hot targets y : [batch, classes]. A stem conv 3×3
// (3 → ch) + batch norm + ReLU is followed by `blocks` blocks, each
//
//	relu(bn(pointwise(relu(bn(depthwise3×3(h))))))
//
// at ch channels and stride 1 (see depthwise for its construction; the pointwise 1×1
// convolution is the matrix product of the channels-last rows [N·H·W, ch] with w : [ch, ch],
// and both batch norms run on those rows), then global average pooling, a dense layer to
// `classes` logits and softmax cross-entropy. Learnables, in order: the stem's filters, γ, β;
// each block's depthwise filters [ch, 9], γ, β, pointwise weights [ch, ch], γ, β; the dense
// weights and bias.
func MobileNet(dt tensor.Dtype, batch, size, ch, blocks, classes int, seed int64) (m *Model, err error) {
	defer guard("mobilenet", &err)
	b, x, y, err := newImageModel("mobilenet", dt, batch, size, ch, blocks, classes, seed)
	if err != nil {
		return nil, err
	}
	ws := b.param("stem_w", 1/math.Sqrt(27), ch, 3, 3, 3)
	h, g, be := b.batchNorm(b.conv3(x, ws), "stem_bn")
	h = b.relu(h)
	wrt := G.Nodes{ws, g, be}
	for k := 0; k < blocks; k++ {
		wdw := b.param(fmt.Sprintf("b%d_dw", k), 1.0/3, ch, 9)
		d, g1, b1 := b.batchNorm(b.depthwise(h, wdw), fmt.Sprintf("b%d_bn1", k))
		d = b.relu(d)
		wpw := b.param(fmt.Sprintf("b%d_pw", k), 1/math.Sqrt(float64(ch)), ch, ch)
		p := b.do(func() (*G.Node, error) { return G.Mul(d, wpw) })
		p, g2, b2 := b.batchNorm(p, fmt.Sprintf("b%d_bn2", k))
		p = b.relu(p)
		p = b.do(func() (*G.Node, error) { return G.Reshape(p, tensor.Shape{batch, size, size, ch}) })
		h = b.do(func() (*G.Node, error) { return G.Transpose(p, 0, 3, 1, 2) })
		wrt = append(wrt, wdw, g1, b1, wpw, g2, b2)
	}
	cost, logits, hw := b.head(h, y, classes)
	wrt = append(wrt, hw...)
	return b.finish(&Model{Name: "mobilenet", Cost: cost, Wrt: wrt, Inputs: G.Nodes{x, y}, Out: logits})
}

// layerNorm normalises each row of x : [R, d] to mean 0 and variance 1 (biased, ε = 1e-5),
// then scales by g : [d] and shifts by be : [d], from Gorgonia primitives (Gorgonia has no
// layer norm): x − mean, ÷ √(var + ε). (Not InverseSqrt: Gorgonia's gradient of it is wrong.)
func (b *builder) layerNorm(x *G.Node, name string) (y, g, be *G.Node) {
	if b.err != nil {
		return nil, nil, nil
	}
	d := x.Shape()[1]
	g = b.node(name+"_g", b.around(1, 0.1, d), d)
	be = b.param(name+"_b", 0.1, d)
	mu := b.do(func() (*G.Node, error) { return G.Mean(x, 1) })
	xc := b.do(func() (*G.Node, error) { return G.BroadcastSub(x, mu, nil, []byte{1}) })
	sq := b.do(func() (*G.Node, error) { return G.Square(xc) })
	v := b.do(func() (*G.Node, error) { return G.Mean(sq, 1) })
	v = b.do(func() (*G.Node, error) { return G.Add(v, b.scalar(bnEps)) })
	sd := b.do(func() (*G.Node, error) { return G.Sqrt(v) })
	xh := b.do(func() (*G.Node, error) { return G.BroadcastHadamardDiv(xc, sd, nil, []byte{1}) })
	xh = b.do(func() (*G.Node, error) { return G.BroadcastHadamardProd(xh, g, nil, []byte{0}) })
	return b.do(func() (*G.Node, error) { return G.BroadcastAdd(xh, be, nil, []byte{0}) }), g, be
}

// gelu is the tanh approximation 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³))) (PyTorch's
// gelu(approximate="tanh")).
func (b *builder) gelu(x *G.Node) *G.Node {
	c := b.do(func() (*G.Node, error) { return G.Cube(x) })
	c = b.do(func() (*G.Node, error) { return G.HadamardProd(c, b.scalar(0.044715)) })
	s := b.do(func() (*G.Node, error) { return G.Add(x, c) })
	s = b.do(func() (*G.Node, error) { return G.HadamardProd(s, b.scalar(math.Sqrt(2/math.Pi))) })
	t := b.do(func() (*G.Node, error) { return G.Tanh(s) })
	t = b.do(func() (*G.Node, error) { return G.Add(t, b.scalar(1)) })
	t = b.do(func() (*G.Node, error) { return G.HadamardProd(x, t) })
	return b.do(func() (*G.Node, error) { return G.HadamardProd(t, b.scalar(0.5)) })
}

// heads turns the rows [B·S, d] into [B·H, S, d/H] (one matrix per sequence and head).
func (b *builder) heads(x *G.Node, batch, seq, heads int) *G.Node {
	if b.err != nil {
		return nil
	}
	d := x.Shape()[1]
	r := b.do(func() (*G.Node, error) { return G.Reshape(x, tensor.Shape{batch, seq, heads, d / heads}) })
	t := b.do(func() (*G.Node, error) { return G.Transpose(r, 0, 2, 1, 3) })
	return b.do(func() (*G.Node, error) { return G.Reshape(t, tensor.Shape{batch * heads, seq, d / heads}) })
}

// Transformer is a stack of `layers` transformer encoder layers (post-norm, as PyTorch's
// nn.TransformerEncoderLayer by default) on batch sequences of seq tokens of width d, held
// as the rows x : [batch·seq, d], with a regression target y of the same shape. Each layer is
//
//	h = LN(x + MHA(x)),  out = LN(h + W₂ gelu(W₁ h + b₁) + b₂)
//
// where MHA is multi-head self-attention with `heads` heads (Q, K, V and output projections
// d×d with biases; per head softmax(Q Kᵀ/√(d/heads)) V, as batched matrix products over
// [batch·heads, seq, d/heads]; the heads are split and merged with Reshape and Transpose),
// LN a layer norm with gain and shift (see layerNorm), W₁ : [d, ff], W₂ : [ff, d], and gelu
// the tanh approximation. Cost = mean((out − y)²). Learnables per layer, in order: wq, bq,
// wk, bk, wv, bv, wo, bo, LN₁ g, b, w1, b1, w2, b2, LN₂ g, b.
func Transformer(dt tensor.Dtype, batch, seq, d, heads, ff, layers int, seed int64) (*Model, error) {
	if err := checkSizes("transformer", batch, seq, d, heads, ff, layers); err != nil {
		return nil, err
	}
	if d%heads != 0 {
		return nil, errors.Errorf("models: transformer: width %d not divisible by %d heads", d, heads)
	}
	return build("transformer", dt, seed, func(b *builder) *Model {
		rows := batch * seq
		x := b.node("x", b.values(1, rows, d), rows, d)
		y := b.node("y", b.values(1, rows, d), rows, d)
		var wrt G.Nodes
		lin := func(in *G.Node, name string, k, n int) *G.Node {
			w := b.param(name, 1/math.Sqrt(float64(k)), k, n)
			bias := b.param("b"+name[1:], 0.1, n)
			wrt = append(wrt, w, bias)
			return b.dense(in, w, bias)
		}
		scale := b.scalar(1 / math.Sqrt(float64(d/heads)))
		h := x
		for l := 0; l < layers; l++ {
			p := fmt.Sprintf("%d", l)
			q := b.heads(lin(h, "wq"+p, d, d), batch, seq, heads)
			k := b.heads(lin(h, "wk"+p, d, d), batch, seq, heads)
			v := b.heads(lin(h, "wv"+p, d, d), batch, seq, heads)
			s := b.do(func() (*G.Node, error) { return G.BatchedMatMul(q, k, false, true) })
			s = b.do(func() (*G.Node, error) { return G.HadamardProd(s, scale) })
			a := b.do(func() (*G.Node, error) { return G.SoftMax(s) })
			o := b.do(func() (*G.Node, error) { return G.BatchedMatMul(a, v) })
			o = b.do(func() (*G.Node, error) { return G.Reshape(o, tensor.Shape{batch, heads, seq, d / heads}) })
			o = b.do(func() (*G.Node, error) { return G.Transpose(o, 0, 2, 1, 3) })
			o = b.do(func() (*G.Node, error) { return G.Reshape(o, tensor.Shape{rows, d}) })
			o = lin(o, "wo"+p, d, d)
			hp := h
			r := b.do(func() (*G.Node, error) { return G.Add(hp, o) })
			h1, g1, be1 := b.layerNorm(r, "ln1_"+p)
			wrt = append(wrt, g1, be1)
			f := b.gelu(lin(h1, "w1_"+p, d, ff))
			f = lin(f, "w2_"+p, ff, d)
			r = b.do(func() (*G.Node, error) { return G.Add(h1, f) })
			h2, g2, be2 := b.layerNorm(r, "ln2_"+p)
			wrt = append(wrt, g2, be2)
			h = h2
		}
		cost := b.mse(h, y)
		return &Model{Cost: cost, Wrt: wrt, Inputs: G.Nodes{x, y}, Out: h}
	})
}

// LSTMSeq is an LSTM unrolled over `steps` inputs x_t : [batch, in] from h₀ = c₀ = 0, with
// the four gates fused: z = x_t W + h U + b (W : [in, 4·hidden], U : [hidden, 4·hidden],
// b : [4·hidden]) sliced along the columns into i, f, g, o (PyTorch's order);
// c' = σ(f)⊙c + σ(i)⊙tanh(g), h' = σ(o)⊙tanh(c'). Cost = mean((h_T − y)²). Learnables: W, U, b.
func LSTMSeq(dt tensor.Dtype, batch, in, hidden, steps int, seed int64) (*Model, error) {
	if err := checkSizes("lstm-seq", batch, in, hidden, steps); err != nil {
		return nil, err
	}
	return build("lstm-seq", dt, seed, func(b *builder) *Model {
		w := b.param("w", 1/math.Sqrt(float64(hidden)), in, 4*hidden)
		u := b.param("u", 1/math.Sqrt(float64(hidden)), hidden, 4*hidden)
		bias := b.param("b", 0.1, 4*hidden)
		h := b.node("h0", b.values(0, batch, hidden), batch, hidden)
		c := b.node("c0", b.values(0, batch, hidden), batch, hidden)
		inputs := G.Nodes{h, c}
		gate := func(z *G.Node, k int, act func(*G.Node) (*G.Node, error)) *G.Node {
			s := b.do(func() (*G.Node, error) { return G.Slice(z, nil, G.S(k*hidden, (k+1)*hidden)) })
			return b.do(func() (*G.Node, error) { return act(s) })
		}
		for t := 0; t < steps; t++ {
			x := b.node(fmt.Sprintf("x%d", t), b.values(1, batch, in), batch, in)
			inputs = append(inputs, x)
			hp, cp := h, c
			xw := b.do(func() (*G.Node, error) { return G.Mul(x, w) })
			hu := b.do(func() (*G.Node, error) { return G.Mul(hp, u) })
			z := b.do(func() (*G.Node, error) { return G.Add(xw, hu) })
			z = b.do(func() (*G.Node, error) { return G.BroadcastAdd(z, bias, nil, []byte{0}) })
			ig, fg, gg, og := gate(z, 0, G.Sigmoid), gate(z, 1, G.Sigmoid), gate(z, 2, G.Tanh), gate(z, 3, G.Sigmoid)
			fc := b.do(func() (*G.Node, error) { return G.HadamardProd(fg, cp) })
			ic := b.do(func() (*G.Node, error) { return G.HadamardProd(ig, gg) })
			c = b.do(func() (*G.Node, error) { return G.Add(fc, ic) })
			cc := c
			tc := b.do(func() (*G.Node, error) { return G.Tanh(cc) })
			h = b.do(func() (*G.Node, error) { return G.HadamardProd(og, tc) })
		}
		y := b.node("y", b.values(1, batch, hidden), batch, hidden)
		inputs = append(inputs, y)
		cost := b.mse(h, y)
		return &Model{Cost: cost, Wrt: G.Nodes{w, u, bias}, Inputs: inputs, Out: h}
	})
}
