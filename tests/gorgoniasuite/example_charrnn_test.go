package gorgoniasuite

import (
	"math/rand"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// trainCharRNN is Gorgonia's examples/charRNN at a small size: an embedding row picked by
// Slice, two stacked LSTM layers (input, forget, output gates and cell write, each W·x + U·h +
// b), a dense layer and SoftMax per character; cost = Σ over the sentence (with start and
// end markers) of −log p(next character), picked by Slice; RMSProp with learn rate, L2
// regularisation and clipping as in the example. Vocabulary 6, embedding 5, hidden 6 and 6,
// sentence "abcab" (7 steps unrolled). Weights from a fixed seed. It returns the cost per step.
func trainCharRNN(t *testing.T, grad gradFunc, steps int) []float64 {
	t.Helper()
	const vocab, emb = 6, 5
	hidden := []int{6, 6}
	r := rand.New(rand.NewSource(5))
	g := G.NewGraph()
	param := func(name string, shape tensor.Shape, scale float64) *G.Node {
		data := make([]float64, shape.TotalSize())
		for i := range data {
			data[i] = r.NormFloat64() * scale
		}
		return inputNode(g, tensor.Float64, shape, data, name)
	}
	zeros := func(name string, n int) *G.Node {
		return inputNode(g, tensor.Float64, tensor.Shape{n}, make([]float64, n), name)
	}
	var learnables G.Nodes
	embedding := param("embedding", tensor.Shape{vocab, emb}, 0.1)
	learnables = append(learnables, embedding)
	type lstm struct{ wx, wh [4]*G.Node }
	var bias [][4]*G.Node
	var layers []lstm
	in := emb
	for li, h := range hidden {
		var l lstm
		var b [4]*G.Node
		for k, gate := range []string{"i", "f", "o", "c"} {
			l.wx[k] = param("wx"+gate+string(rune('0'+li)), tensor.Shape{h, in}, 0.2)
			l.wh[k] = param("wh"+gate+string(rune('0'+li)), tensor.Shape{h, h}, 0.2)
			b[k] = zeros("b"+gate+string(rune('0'+li)), h)
			learnables = append(learnables, l.wx[k], l.wh[k], b[k])
		}
		layers = append(layers, l)
		bias = append(bias, b)
		in = h
	}
	whd := param("whd", tensor.Shape{vocab, in}, 0.2)
	bd := zeros("bias_d", vocab)
	learnables = append(learnables, whd, bd)

	gate := func(wx, wh, b, x, h *G.Node) *G.Node {
		return G.Must(G.Add(G.Must(G.Add(G.Must(G.Mul(wx, x)), G.Must(G.Mul(wh, h)))), b))
	}
	hs := make([]*G.Node, len(hidden))
	cs := make([]*G.Node, len(hidden))
	for i, h := range hidden {
		hs[i] = zeros("h0_"+string(rune('0'+i)), h)
		cs[i] = zeros("c0_"+string(rune('0'+i)), h)
	}
	// Characters: 0 is the start marker, 1 the end marker, a=2, b=3, c=4.
	seq := []int{0, 2, 3, 4, 2, 3, 1}
	var cost *G.Node
	for s := 0; s+1 < len(seq); s++ {
		x := G.Must(G.Slice(embedding, G.S(seq[s])))
		for li, l := range layers {
			b := bias[li]
			ig := G.Must(G.Sigmoid(gate(l.wx[0], l.wh[0], b[0], x, hs[li])))
			fg := G.Must(G.Sigmoid(gate(l.wx[1], l.wh[1], b[1], x, hs[li])))
			og := G.Must(G.Sigmoid(gate(l.wx[2], l.wh[2], b[2], x, hs[li])))
			cw := G.Must(G.Tanh(gate(l.wx[3], l.wh[3], b[3], x, hs[li])))
			cs[li] = G.Must(G.Add(G.Must(G.HadamardProd(fg, cs[li])), G.Must(G.HadamardProd(ig, cw))))
			hs[li] = G.Must(G.HadamardProd(og, G.Must(G.Tanh(cs[li]))))
			x = hs[li]
		}
		probs := G.Must(G.SoftMax(G.Must(G.Add(G.Must(G.Mul(whd, x)), bd))))
		loss := G.Must(G.Slice(G.Must(G.Neg(G.Must(G.Log(probs)))), G.S(seq[s+1])))
		if cost == nil {
			cost = loss
		} else {
			cost = G.Must(G.Add(cost, loss))
		}
	}
	return trainSolver(t, grad, cost, learnables, G.NewRMSPropSolver(G.WithLearnRate(0.01), G.WithL2Reg(1e-6), G.WithClip(5)), steps)
}

// TestExampleCharRNN trains the charRNN port for 10 steps from identical weights with
// gorgonia.Grad and with bulkad.Grad (separate graphs); the cost curves must agree to 1e-9
// and the cost must fall.
func TestExampleCharRNN(t *testing.T) {
	const steps = 10
	sameCurves(t, trainCharRNN, steps)
}
