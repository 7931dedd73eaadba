package onnx

import (
	"math"
	"strings"
	"testing"

	"github.com/bulkad/bulkad/core"
	"github.com/bulkad/bulkad/core/tensors"
	"gorgonia.org/tensor"
)

// Single-node models of the recurrent, resizing and transposed-convolution operators against
// values worked out by hand from the ONNX operator specification (its examples, and
// recurrences whose equal weights make every hidden unit equal, so that they are scalar
// recurrences computed here), and their errors for what is not supported.

// strsAttr and floatsAttr are attribute fields (STRINGS, FLOATS) for withAttrs.
func strsAttr(name string, vs ...string) []byte {
	a := fBytes(1, []byte(name))
	for _, v := range vs {
		a = append(a, fBytes(9, []byte(v))...)
	}
	return fBytes(5, append(a, fVarint(20, 8)...))
}

func floatsAttr(name string, vs ...float64) []byte {
	a := fBytes(1, []byte(name))
	for _, v := range vs {
		a = append(a, fFixed32(7, math.Float32bits(float32(v)))...)
	}
	return fBytes(5, append(a, fVarint(20, 6)...))
}

// runLayer lowers and evaluates a one-node model (output y) with extra attribute fields.
func runLayer(t *testing.T, opset int64, ins []tIn, n tNode, extra ...[]byte) ([]float64, []int, error) {
	t.Helper()
	nodes := single(n)
	b := encModel(opset, ins, nodes, nil)
	if len(extra) > 0 {
		// re-encode with the extra attributes appended to the node
		node := encNode(nodes[0])
		for _, e := range extra {
			node = append(node, e...)
		}
		b = encGraphModel(opset, ins, [][]byte{node}, "y", nil)
	}
	m, err := Decode(b)
	if err != nil {
		return nil, nil, err
	}
	return evalLowered(t, m, ins)
}

// evalLowered lowers m and evaluates its first output at the graph inputs' data (its values
// when it is float64, nil otherwise).
func evalLowered(t *testing.T, m *Model, ins []tIn) ([]float64, []int, error) {
	t.Helper()
	p, err := Lower(m)
	if err != nil {
		return nil, nil, err
	}
	d, err := evalProgram(p, ins)
	if err != nil {
		return nil, nil, err
	}
	var vals []float64
	if d.Dtype() == tensor.Float64 {
		vals = d.Float64s() // a scalar's too
	}
	return vals, d.Shape().Clone(), nil
}

// evalProgram evaluates p's first output with core.Eval, its inputs bound to the data of
// the graph inputs ins of the same names (float64) and its parameters to their values.
func evalProgram(p *Program, ins []tIn) (*tensor.Dense, error) {
	args := map[string]*tensor.Dense{}
	for i, v := range p.InputVars {
		for _, in := range ins {
			if in.name == p.Inputs[i] {
				args[v.Name] = denseOf(core.Float64, v.Type().Shape, in.data)
			}
		}
	}
	for i, v := range p.ParamVars {
		args[v.Name] = p.Values[p.Params[i]]
	}
	outs, err := tensors.EvalTuple(p.Prog, args)
	if err != nil {
		return nil, err
	}
	return outs[0], nil
}

func nearT(t *testing.T, what string, got, want []float64, tol float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d values %v, want %d %v", what, len(got), got, len(want), want)
	}
	for i := range want {
		if math.Abs(got[i]-want[i]) > tol*math.Max(1, math.Abs(want[i])) {
			t.Fatalf("%s: value %d = %v, want %v (all %v)", what, i, got[i], want[i], got)
		}
	}
}

func fill(n int, v float64) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = v
	}
	return out
}

func sigmoid(x float64) float64 { return 1 / (1 + math.Exp(-x)) }

// TestRecurrentScalar: with every weight w and recurrent weight u equal and biases b, every
// hidden unit follows the same scalar recurrence, written here from the specification's
// equations (input 2, hidden 3, one sample, three steps x = (1,2), (3,4), (5,6)); the clips
// are exact in float32, the attribute's type.
func TestRecurrentScalar(t *testing.T) {
	const w, u, bias = 0.1, 0.2, 0.05
	xs := [][2]float64{{1, 2}, {3, 4}, {5, 6}}
	x := tIn{name: "x", shape: []int64{3, 1, 2}, data: []float64{1, 2, 3, 4, 5, 6}}
	const hid = 3
	for _, c := range []struct {
		op      string
		gates   int
		reverse bool
		clip    float64
		lbr     int64
		out     int // which output: 0 Y, 1 Y_h, 2 Y_c
	}{
		{"RNN", 1, false, 0, 0, 0}, {"RNN", 1, true, 0, 0, 0}, {"RNN", 1, false, 0.25, 0, 1},
		{"GRU", 3, false, 0, 0, 0}, {"GRU", 3, false, 0, 1, 0}, {"GRU", 3, true, 0.375, 1, 1},
		{"LSTM", 4, false, 0, 0, 0}, {"LSTM", 4, true, 0, 0, 1}, {"LSTM", 4, false, 0.5, 0, 2},
	} {
		clip := func(v float64) float64 {
			if c.clip > 0 {
				return math.Max(-c.clip, math.Min(c.clip, v))
			}
			return v
		}
		// the scalar recurrence
		var h, cs float64
		ys := make([]float64, 3)
		for k := 0; k < 3; k++ {
			tt := k
			if c.reverse {
				tt = 2 - k
			}
			xw := w*(xs[tt][0]+xs[tt][1]) + bias // Xt·Wᵀ + Wb, per unit
			hu := u*hid*h + bias                 // Ht−1·Rᵀ + Rb, per unit
			switch c.op {
			case "RNN":
				h = math.Tanh(clip(xw + hu))
			case "GRU":
				z := sigmoid(clip(xw + hu))
				r := sigmoid(clip(xw + hu))
				var hh float64
				if c.lbr != 0 {
					hh = math.Tanh(clip(xw + r*hu))
				} else {
					hh = math.Tanh(clip(xw + u*hid*r*h + bias))
				}
				h = (1-z)*hh + z*h
			case "LSTM":
				g := sigmoid(clip(xw + hu))
				cs = g*cs + g*math.Tanh(clip(xw+hu))
				h = g * math.Tanh(clip(cs))
			}
			ys[tt] = h
		}
		var want []float64
		switch c.out {
		case 0:
			for _, y := range ys {
				want = append(want, fill(hid, y)...)
			}
		case 1:
			want = fill(hid, h)
		case 2:
			want = fill(hid, cs)
		}
		g := c.gates * hid
		ins := []tIn{x,
			{name: "W", shape: []int64{1, int64(g), 2}, data: fill(g*2, w), init: true},
			{name: "R", shape: []int64{1, int64(g), hid}, data: fill(g*hid, u), init: true},
			{name: "B", shape: []int64{1, int64(2 * g)}, data: fill(2*g, bias), init: true}}
		outs := []string{"", "", ""}
		outs[c.out] = "y"
		n := tNode{op: c.op, ins: []string{"x", "W", "R", "B"}, attrsI: map[string]int64{"hidden_size": hid}, attrsF: map[string]float64{}, attrsS: map[string]string{}}
		if c.reverse {
			n.attrsS["direction"] = "reverse"
		}
		if c.clip > 0 {
			n.attrsF["clip"] = c.clip
		}
		if c.op == "GRU" {
			n.attrsI["linear_before_reset"] = c.lbr
		}
		nodes := []tNode{n}
		nodes[0].outs = outs[:c.out+1]
		m, err := Decode(encModel(14, ins, nodes, nil))
		if err != nil {
			t.Fatal(err)
		}
		m.Graph.Outputs[0].Name = "y"
		got, sh, err := evalLowered(t, m, ins)
		if err != nil {
			t.Fatalf("%s %+v: %v", c.op, c, err)
		}
		wantShape := map[int][]int{0: {3, 1, 1, hid}, 1: {1, 1, hid}, 2: {1, 1, hid}}[c.out]
		if len(sh) != len(wantShape) {
			t.Errorf("%s %+v: shape %v, want %v", c.op, c, sh, wantShape)
		}
		nearT(t, c.op, got, want, 1e-14)
	}
}

// TestResizeSpecExamples: examples of the ONNX specification (Upsample's nearest, at opset 9
// with the scales as an input and at 7 as an attribute; Resize-18's axes; Resize's
// downsample_scales_nearest and upsample_scales_linear_align_corners) and the asymmetric
// linear mode of Resize-10.
func TestResizeSpecExamples(t *testing.T) {
	x22 := tIn{name: "x", shape: []int64{1, 1, 2, 2}, data: []float64{1, 2, 3, 4}}
	scales := func(v ...float64) tIn { return tIn{name: "s", shape: []int64{int64(len(v))}, data: v, init: true} }
	empty := tIn{name: "roi", shape: []int64{0}, data: []float64{}, init: true}
	// align corners: y[i, j] = 1 + 2·i/3 + j/3 on the 4×4 grid
	var ac []float64
	for i := 0; i < 4; i++ {
		for j := 0; j < 4; j++ {
			ac = append(ac, 1+2*float64(i)/3+float64(j)/3)
		}
	}
	for _, c := range []struct {
		name  string
		opset int64
		ins   []tIn
		node  tNode
		want  []float64
	}{
		{"Upsample nearest", 9, []tIn{x22, scales(1, 1, 2, 3)}, tNode{op: "Upsample", ins: []string{"x", "s"}, attrsS: map[string]string{"mode": "nearest"}},
			[]float64{1, 1, 1, 2, 2, 2, 1, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 4, 3, 3, 3, 4, 4, 4}},
		{"downsample nearest", 11, []tIn{{name: "x", shape: []int64{1, 1, 2, 4}, data: iota(8)}, empty, scales(1, 1, 0.6, 0.6)},
			tNode{op: "Resize", ins: []string{"x", "roi", "s"}, attrsS: map[string]string{"mode": "nearest"}}, []float64{0, 2}},
		{"align corners", 13, []tIn{x22, empty, scales(1, 1, 2, 2)},
			tNode{op: "Resize", ins: []string{"x", "roi", "s"}, attrsS: map[string]string{"mode": "linear", "coordinate_transformation_mode": "align_corners"}}, ac},
		// Resize-18 with axes: the scales of the listed axes only (half_pixel, round_prefer_floor:
		// x = (j + 0.5)/2 − 0.5 rounds to j/2, and likewise for 3)
		{"Resize-18 axes", 18, []tIn{x22, empty, scales(2, 3)}, tNode{op: "Resize", ins: []string{"x", "roi", "s"}, attrsIs: map[string][]int64{"axes": {2, -1}}},
			[]float64{1, 1, 1, 2, 2, 2, 1, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 4, 3, 3, 3, 4, 4, 4}},
		// Resize-10 linear is asymmetric: x = j/2 → 1, 1.5, 2, 2 (clamped) along each axis
		{"Resize-10 linear", 10, []tIn{x22, scales(1, 1, 2, 2)}, tNode{op: "Resize", ins: []string{"x", "s"}, attrsS: map[string]string{"mode": "linear"}},
			[]float64{1, 1.5, 2, 2, 2, 2.5, 3, 3, 3, 3.5, 4, 4, 3, 3.5, 4, 4}},
	} {
		got, _, err := runModel(t, c.opset, c.ins, single(c.node))
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		nearT(t, c.name, got, c.want, 1e-14)
	}
	// Upsample-7 takes its scales as an attribute
	got, _, err := runLayer(t, 7, []tIn{x22}, tNode{op: "Upsample", attrsS: map[string]string{"mode": "nearest"}}, floatsAttr("scales", 1, 1, 2, 3))
	if err != nil {
		t.Fatal(err)
	}
	nearT(t, "Upsample-7", got, []float64{1, 1, 1, 2, 2, 2, 1, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 4, 3, 3, 3, 4, 4, 4}, 0)
}

// TestConvTransposeSpecExample: the specification's ConvTranspose example (a 3×3 image
// 0…8, two output channels of 3×3 ones) and its example with strides 3, 2 and
// output_padding 1, 1, whose output is 10×8.
func TestConvTransposeSpecExample(t *testing.T) {
	x := tIn{name: "x", shape: []int64{1, 1, 3, 3}, data: iota(9)}
	w := tIn{name: "w", shape: []int64{1, 2, 3, 3}, data: fill(18, 1), init: true}
	got, sh, err := runModel(t, 13, []tIn{x, w}, single(tNode{op: "ConvTranspose", ins: []string{"x", "w"}}))
	if err != nil {
		t.Fatal(err)
	}
	one := []float64{0, 1, 3, 3, 2, 3, 8, 15, 12, 7, 9, 21, 36, 27, 15, 9, 20, 33, 24, 13, 6, 13, 21, 15, 8}
	nearT(t, "ConvTranspose", got, append(append([]float64{}, one...), one...), 0)
	if len(sh) != 4 || sh[2] != 5 || sh[3] != 5 {
		t.Errorf("shape %v, want [1 2 5 5]", sh)
	}
	_, sh, err = runModel(t, 13, []tIn{x, w}, single(tNode{op: "ConvTranspose", ins: []string{"x", "w"},
		attrsIs: map[string][]int64{"strides": {3, 2}, "output_padding": {1, 1}}}))
	if err != nil {
		t.Fatal(err)
	}
	if len(sh) != 4 || sh[2] != 10 || sh[3] != 8 {
		t.Errorf("strides and output_padding: shape %v, want [1 2 10 8]", sh)
	}
}

// TestExpand: Expand broadcasts both ways (x [3,1] to [2,1,6] gives [2,3,6]).
func TestExpand(t *testing.T) {
	x := tIn{name: "x", shape: []int64{3, 1}, data: []float64{1, 2, 3}}
	shape := tIn{name: "shape", shape: []int64{3}, ints: []int64{2, 1, 6}}
	got, sh, err := runModel(t, 13, []tIn{x, shape}, single(tNode{op: "Expand", ins: []string{"x", "shape"}}))
	if err != nil {
		t.Fatal(err)
	}
	var want []float64
	for k := 0; k < 2; k++ {
		for _, v := range []float64{1, 2, 3} {
			want = append(want, fill(6, v)...)
		}
	}
	nearT(t, "Expand", got, want, 0)
	if len(sh) != 3 || sh[0] != 2 || sh[1] != 3 || sh[2] != 6 {
		t.Errorf("shape %v, want [2 3 6]", sh)
	}
}

// TestLayerErrors: attribute values the lowering does not cover give errors that name the
// node, the operator and what is supported.
func TestLayerErrors(t *testing.T) {
	x := tIn{name: "x", shape: []int64{2, 1, 2}, data: iota(4)}
	w := tIn{name: "W", shape: []int64{1, 4, 2}, data: fill(8, 0.1), init: true}
	r := tIn{name: "R", shape: []int64{1, 4, 4}, data: fill(16, 0.1), init: true}
	rnn := []tIn{x, w, r}
	img := tIn{name: "x", shape: []int64{1, 1, 4, 4}, data: iota(16)}
	sc := tIn{name: "s", shape: []int64{4}, data: []float64{1, 1, 2, 2}, init: true}
	roi := tIn{name: "roi", shape: []int64{0}, data: []float64{}, init: true}
	filt := tIn{name: "f", shape: []int64{1, 1, 3, 3}, data: fill(9, 1), init: true}
	for _, c := range []struct {
		name  string
		ins   []tIn
		node  tNode
		extra [][]byte
		want  []string
	}{
		{"layout", rnn, tNode{op: "RNN", ins: []string{"x", "W", "R"}, attrsI: map[string]int64{"layout": 1}}, nil, []string{`(RNN, opset 14)`, "layout 1", "only layout 0"}},
		{"direction", rnn, tNode{op: "RNN", ins: []string{"x", "W", "R"}, attrsS: map[string]string{"direction": "both"}}, nil, []string{`direction "both"`, "bidirectional"}},
		{"activation", rnn, tNode{op: "RNN", ins: []string{"x", "W", "R"}}, [][]byte{strsAttr("activations", "Softsign")}, []string{`activation "Softsign"`, "Sigmoid, Tanh and Relu"}},
		{"activation alpha", rnn, tNode{op: "RNN", ins: []string{"x", "W", "R"}}, [][]byte{strsAttr("activations", "LeakyRelu"), floatsAttr("activation_alpha", 0.1)}, []string{"activation_alpha"}},
		{"input_forget", []tIn{x, {name: "W", shape: []int64{1, 16, 2}, data: fill(32, 0.1), init: true}, {name: "R", shape: []int64{1, 16, 4}, data: fill(64, 0.1), init: true}},
			tNode{op: "LSTM", ins: []string{"x", "W", "R"}, attrsI: map[string]int64{"input_forget": 1}}, nil, []string{"input_forget"}},
		{"sequence_lens", append(rnn, tIn{name: "lens", shape: []int64{1}, ints: []int64{1}}), tNode{op: "RNN", ins: []string{"x", "W", "R", "", "lens"}}, nil, []string{"sequence_lens [1]", "full length 2"}},
		{"weights", []tIn{x, w, {name: "R", shape: []int64{1, 4, 3}, data: fill(12, 0.1), init: true}}, tNode{op: "RNN", ins: []string{"x", "W", "R"}}, nil, []string{"R [1 4 3], want [1 4 4]"}},
		{"crop and resize", []tIn{img, roi, sc}, tNode{op: "Resize", ins: []string{"x", "roi", "s"}, attrsS: map[string]string{"coordinate_transformation_mode": "tf_crop_and_resize"}}, nil, []string{"tf_crop_and_resize"}},
		{"resize mode", []tIn{img, roi, sc}, tNode{op: "Resize", ins: []string{"x", "roi", "s"}, attrsS: map[string]string{"mode": "area"}}, nil, []string{`mode "area"`, "nearest, linear and cubic"}},
		{"nearest mode", []tIn{img, roi, sc}, tNode{op: "Resize", ins: []string{"x", "roi", "s"}, attrsS: map[string]string{"nearest_mode": "up"}}, nil, []string{`nearest_mode "up"`}},
		{"scales input", []tIn{img, roi, sc}, tNode{op: "Resize", ins: []string{"x", "roi", "x"}}, nil, []string{"scales", "must be a constant"}},
		{"resize antialias", []tIn{img, roi, sc}, tNode{op: "Resize", ins: []string{"x", "roi", "s"}, attrsI: map[string]int64{"antialias": 1}}, nil, []string{"antialias"}},
		{"transpose auto_pad", []tIn{img, filt}, tNode{op: "ConvTranspose", ins: []string{"x", "f"}, attrsS: map[string]string{"auto_pad": "SAME"}}, nil, []string{`auto_pad "SAME"`}},
		{"transpose output_shape", []tIn{img, filt}, tNode{op: "ConvTranspose", ins: []string{"x", "f"}, attrsIs: map[string][]int64{"output_shape": {9, 9}}}, nil, []string{"output size 9", "larger than the full transposed convolution (6)"}},
		{"transpose groups", []tIn{img, filt}, tNode{op: "ConvTranspose", ins: []string{"x", "f"}, attrsI: map[string]int64{"group": 2}}, nil, []string{"group 2"}},
		{"conv 4-D", []tIn{{name: "x", shape: []int64{1, 1, 2, 2, 2, 2}, data: iota(16)}, {name: "f", shape: []int64{1, 1, 1, 1, 1, 1}, data: []float64{1}, init: true}},
			tNode{op: "Conv", ins: []string{"x", "f"}}, nil, []string{"1-D, 2-D and 3-D convolutions"}},
		{"expand", []tIn{{name: "x", shape: []int64{3}, data: iota(3)}, {name: "shape", shape: []int64{1}, ints: []int64{2}}},
			tNode{op: "Expand", ins: []string{"x", "shape"}}, nil, []string{"do not broadcast"}},
	} {
		opset := int64(14)
		_, _, err := runLayer(t, opset, c.ins, c.node, c.extra...)
		if err == nil {
			t.Errorf("%s: no error", c.name)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: error %q does not mention %q", c.name, err, w)
			}
		}
	}
}
