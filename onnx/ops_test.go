package onnx

import (
	"encoding/binary"
	"math"
	"slices"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
	"gorgonia.org/tensor"
)

// A small ONNX encoder for tests: one graph of nodes over float64 inputs and constant
// initializers, in the wire format Decode reads.

type tIn struct {
	name  string
	shape []int64
	data  []float64 // graph input value (nil: initializer from ints)
	ints  []int64   // int64 initializer
	init  bool      // a float initializer rather than a graph input
}

type tNode struct {
	op      string
	ins     []string
	outs    []string
	attrsI  map[string]int64
	attrsF  map[string]float64
	attrsIs map[string][]int64
	attrsS  map[string]string
	attrsT  map[string]tIn // tensor attributes (Constant's value)
}

func msg(fields ...[]byte) []byte {
	var b []byte
	for _, f := range fields {
		b = append(b, f...)
	}
	return b
}

func fBytes(num protowire.Number, v []byte) []byte {
	b := protowire.AppendTag(nil, num, protowire.BytesType)
	return protowire.AppendBytes(b, v)
}

func fVarint(num protowire.Number, v uint64) []byte {
	b := protowire.AppendTag(nil, num, protowire.VarintType)
	return protowire.AppendVarint(b, v)
}

func fFixed32(num protowire.Number, v uint32) []byte {
	b := protowire.AppendTag(nil, num, protowire.Fixed32Type)
	return protowire.AppendFixed32(b, v)
}

func encTensor(in tIn) []byte {
	var b []byte
	for _, d := range in.shape {
		b = append(b, fVarint(1, uint64(d))...)
	}
	b = append(b, fBytes(8, []byte(in.name))...)
	if in.ints != nil {
		b = append(b, fVarint(2, dtInt64)...)
		raw := make([]byte, 8*len(in.ints))
		for i, x := range in.ints {
			binary.LittleEndian.PutUint64(raw[8*i:], uint64(x))
		}
		return append(b, fBytes(9, raw)...)
	}
	b = append(b, fVarint(2, dtDouble)...)
	raw := make([]byte, 8*len(in.data))
	for i, x := range in.data {
		binary.LittleEndian.PutUint64(raw[8*i:], math.Float64bits(x))
	}
	return append(b, fBytes(9, raw)...)
}

func encValueInfo(name string, shape []int64) []byte {
	var dims []byte
	for _, d := range shape {
		dims = append(dims, fBytes(1, fVarint(1, uint64(d)))...)
	}
	tt := msg(fVarint(1, dtDouble), fBytes(2, dims))
	return msg(fBytes(1, []byte(name)), fBytes(2, fBytes(1, tt)))
}

func encNode(n tNode) []byte {
	var b []byte
	for _, s := range n.ins {
		b = append(b, fBytes(1, []byte(s))...)
	}
	for _, s := range n.outs {
		b = append(b, fBytes(2, []byte(s))...)
	}
	b = append(b, fBytes(4, []byte(n.op))...)
	for k, v := range n.attrsI {
		b = append(b, fBytes(5, msg(fBytes(1, []byte(k)), fVarint(3, uint64(v)), fVarint(20, 2)))...)
	}
	for k, v := range n.attrsF {
		b = append(b, fBytes(5, msg(fBytes(1, []byte(k)), fFixed32(2, math.Float32bits(float32(v))), fVarint(20, 1)))...)
	}
	for k, vs := range n.attrsIs {
		a := fBytes(1, []byte(k))
		for _, v := range vs {
			a = append(a, fVarint(8, uint64(v))...)
		}
		b = append(b, fBytes(5, append(a, fVarint(20, 7)...))...)
	}
	for k, v := range n.attrsS {
		b = append(b, fBytes(5, msg(fBytes(1, []byte(k)), fBytes(4, []byte(v)), fVarint(20, 3)))...)
	}
	for k, v := range n.attrsT {
		b = append(b, fBytes(5, msg(fBytes(1, []byte(k)), fBytes(5, encTensor(v)), fVarint(20, 4)))...)
	}
	return b
}

// encModel encodes a model whose graph output is the first output of the last node.
func encModel(opset int64, ins []tIn, nodes []tNode, outShape []int64) []byte {
	enc := make([][]byte, len(nodes))
	for i, n := range nodes {
		enc[i] = encNode(n)
	}
	return encGraphModel(opset, ins, enc, nodes[len(nodes)-1].outs[0], outShape)
}

// encGraphModel encodes a model of the encoded nodes whose graph output is out, of shape
// outShape (unknown when nil).
func encGraphModel(opset int64, ins []tIn, nodes [][]byte, out string, outShape []int64) []byte {
	var g []byte
	for _, n := range nodes {
		g = append(g, fBytes(1, n)...)
	}
	g = append(g, fBytes(2, []byte("test"))...)
	for _, in := range ins {
		if in.ints != nil || in.init {
			g = append(g, fBytes(5, encTensor(in))...)
		} else {
			g = append(g, fBytes(11, encValueInfo(in.name, in.shape))...)
		}
	}
	g = append(g, fBytes(12, encValueInfo(out, outShape))...)
	return msg(fVarint(1, 8), fBytes(7, g), fBytes(8, msg(fBytes(1, nil), fVarint(2, uint64(opset)))))
}

// runModel lowers the model and evaluates it with core.Eval at the graph inputs' data.
func runModel(t *testing.T, opset int64, ins []tIn, nodes []tNode) ([]float64, []int, error) {
	t.Helper()
	m, err := Decode(encModel(opset, ins, nodes, nil))
	if err != nil {
		return nil, nil, err
	}
	return evalLowered(t, m, ins)
}

// single is the one-node graph of n, whose inputs default to x and whose output is y.
func single(n tNode) []tNode {
	if n.ins == nil {
		n.ins = []string{"x"}
	}
	n.outs = []string{"y"}
	return []tNode{n}
}

// wantValues fails t unless got is want, exactly (length included).
func wantValues(t *testing.T, got []float64, want ...float64) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Fatalf("%v, want %v", got, want)
	}
}

// wantClose fails t unless got has want's length and each element is within tol of want's.
func wantClose(t *testing.T, got, want []float64, tol float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%v, want %v", got, want)
	}
	for i := range got {
		if !(math.Abs(got[i]-want[i]) <= tol) {
			t.Fatalf("%v, want %v", got, want)
		}
	}
}

// iota is 0, 1, …, n−1.
func iota(n int) []float64 { return tensor.Range(tensor.Float64, 0, n).([]float64) }

// nodeCase is a single-node model (its opset, inputs and node) with its output's shape and
// values.
type nodeCase struct {
	name  string
	opset int64
	ins   []tIn
	node  tNode
	shape []int
	want  []float64
}

// TestOperators: single-node models against values worked out by hand from the ONNX
// operator specification (opset 13 unless stated).
func TestOperators(t *testing.T) {
	x23 := tIn{name: "x", shape: []int64{2, 3}, data: []float64{-1, 2, -3, 4, -5, 6}}
	x234 := tIn{name: "x", shape: []int64{2, 3, 4}, data: iota(24)}
	ints := func(name string, v ...int64) tIn { return tIn{name: name, shape: []int64{int64(len(v))}, ints: v} }
	cases := []nodeCase{
		{"Relu", 13, []tIn{x23}, tNode{op: "Relu"}, []int{2, 3}, []float64{0, 2, 0, 4, 0, 6}},
		{"LeakyRelu", 13, []tIn{x23}, tNode{op: "LeakyRelu", attrsF: map[string]float64{"alpha": 0.5}}, []int{2, 3}, []float64{-0.5, 2, -1.5, 4, -2.5, 6}},
		{"Elu", 13, []tIn{x23}, tNode{op: "Elu"}, []int{2, 3}, []float64{math.Expm1(-1), 2, math.Expm1(-3), 4, math.Expm1(-5), 6}},
		{"Abs", 13, []tIn{x23}, tNode{op: "Abs"}, []int{2, 3}, []float64{1, 2, 3, 4, 5, 6}},
		{"Add broadcast", 13, []tIn{x23, {name: "b", shape: []int64{3}, data: []float64{10, 20, 30}, init: true}}, tNode{op: "Add", ins: []string{"x", "b"}}, []int{2, 3}, []float64{9, 22, 27, 14, 15, 36}},
		{"Sub broadcast col", 13, []tIn{x23, {name: "b", shape: []int64{2, 1}, data: []float64{1, 2}, init: true}}, tNode{op: "Sub", ins: []string{"x", "b"}}, []int{2, 3}, []float64{-2, 1, -4, 2, -7, 4}},
		{"Transpose", 13, []tIn{x23}, tNode{op: "Transpose"}, []int{3, 2}, []float64{-1, 4, 2, -5, -3, 6}},
		{"Flatten axis 2", 13, []tIn{x234}, tNode{op: "Flatten", attrsI: map[string]int64{"axis": 2}}, []int{6, 4}, iota(24)},
		{"Reshape 0 -1", 13, []tIn{x234, ints("s", 0, -1)}, tNode{op: "Reshape", ins: []string{"x", "s"}}, []int{2, 12}, iota(24)},
		{"Unsqueeze", 13, []tIn{x23, ints("a", 0, 3)}, tNode{op: "Unsqueeze", ins: []string{"x", "a"}}, []int{1, 2, 3, 1}, x23.data},
		{"Unsqueeze opset 11", 11, []tIn{x23}, tNode{op: "Unsqueeze", attrsIs: map[string][]int64{"axes": {1}}}, []int{2, 1, 3}, x23.data},
		{"Squeeze", 13, []tIn{{name: "x", shape: []int64{1, 3, 1}, data: []float64{1, 2, 3}}}, tNode{op: "Squeeze"}, []int{3}, []float64{1, 2, 3}},
		{"Slice neg step 2", 13, []tIn{x234, ints("s", 1), ints("e", -1), ints("a", 2), ints("st", 2)}, tNode{op: "Slice", ins: []string{"x", "s", "e", "a", "st"}}, []int{2, 3, 1}, []float64{1, 5, 9, 13, 17, 21}},
		{"Slice reverse", 13, []tIn{x23, ints("s", -1), ints("e", math.MinInt64), ints("a", 1), ints("st", -1)}, tNode{op: "Slice", ins: []string{"x", "s", "e", "a", "st"}}, []int{2, 3}, []float64{-3, 2, -1, 6, -5, 4}},
		{"Slice step -2", 13, []tIn{x234, ints("s", 3), ints("e", 0), ints("a", 2), ints("st", -2)}, tNode{op: "Slice", ins: []string{"x", "s", "e", "a", "st"}}, []int{2, 3, 2}, []float64{3, 1, 7, 5, 11, 9, 15, 13, 19, 17, 23, 21}},
		{"Slice clamp", 13, []tIn{x23, ints("s", 1), ints("e", 100), ints("a", 0)}, tNode{op: "Slice", ins: []string{"x", "s", "e", "a"}}, []int{1, 3}, []float64{4, -5, 6}},
		{"Gather scalar", 13, []tIn{x23, {name: "i", shape: nil, ints: []int64{1}}}, tNode{op: "Gather", ins: []string{"x", "i"}, attrsI: map[string]int64{"axis": 1}}, []int{2}, []float64{2, -5}},
		{"Gather vector", 13, []tIn{x23, ints("i", 2, 0, -1)}, tNode{op: "Gather", ins: []string{"x", "i"}, attrsI: map[string]int64{"axis": 1}}, []int{2, 3}, []float64{-3, -1, -3, 6, 4, 6}},
		{"Concat", 13, []tIn{x23, {name: "y", shape: []int64{2, 1}, data: []float64{7, 8}, init: true}}, tNode{op: "Concat", ins: []string{"x", "y"}, attrsI: map[string]int64{"axis": -1}}, []int{2, 4}, []float64{-1, 2, -3, 7, 4, -5, 6, 8}},
		{"Pad", 13, []tIn{{name: "x", shape: []int64{1, 2}, data: []float64{1, 2}}, ints("p", 1, 0, 0, 2)}, tNode{op: "Pad", ins: []string{"x", "p"}}, []int{2, 4}, []float64{0, 0, 0, 0, 1, 2, 0, 0}},
		{"ReduceSum keepdims", 13, []tIn{x23, ints("a", 1)}, tNode{op: "ReduceSum", ins: []string{"x", "a"}}, []int{2, 1}, []float64{-2, 5}},
		{"ReduceMean no keepdims", 13, []tIn{x23}, tNode{op: "ReduceMean", attrsIs: map[string][]int64{"axes": {0}}, attrsI: map[string]int64{"keepdims": 0}}, []int{3}, []float64{1.5, -1.5, 1.5}},
		{"ReduceMax all", 13, []tIn{x23}, tNode{op: "ReduceMax", attrsI: map[string]int64{"keepdims": 0}}, []int{}, []float64{6}},
		{"ReduceProd", 13, []tIn{x23}, tNode{op: "ReduceProd", attrsIs: map[string][]int64{"axes": {1}}, attrsI: map[string]int64{"keepdims": 0}}, []int{2}, []float64{6, -120}},
		{"ReduceMin keepdims", 13, []tIn{x23}, tNode{op: "ReduceMin", attrsIs: map[string][]int64{"axes": {0}}}, []int{1, 3}, []float64{-1, -5, -3}},
		{"ReduceLogSumExp all", 13, []tIn{{name: "x", shape: []int64{2}, data: []float64{0, math.Log(3)}}}, tNode{op: "ReduceLogSumExp", attrsI: map[string]int64{"keepdims": 0}}, []int{}, []float64{math.Log(4)}},
		{"CumSum exclusive reverse", 13, []tIn{x23, {name: "a", shape: nil, ints: []int64{1}}}, tNode{op: "CumSum", ins: []string{"x", "a"}, attrsI: map[string]int64{"exclusive": 1, "reverse": 1}}, []int{2, 3}, []float64{-1, -3, 0, 1, 6, 0}},
		{"CumSum axis 0", 13, []tIn{x23, {name: "a", shape: nil, ints: []int64{0}}}, tNode{op: "CumSum", ins: []string{"x", "a"}}, []int{2, 3}, []float64{-1, 2, -3, 3, -3, 3}},
		{"Clip", 13, []tIn{x23, {name: "lo", data: []float64{-2}, init: true}, {name: "hi", data: []float64{3}, init: true}}, tNode{op: "Clip", ins: []string{"x", "lo", "hi"}}, []int{2, 3}, []float64{-1, 2, -2, 3, -2, 3}},
		{"Clip opset 6 attrs", 7, []tIn{x23}, tNode{op: "Clip", attrsF: map[string]float64{"min": 0}}, []int{2, 3}, []float64{0, 2, 0, 4, 0, 6}},
		{"Gemm alpha beta transB", 13, []tIn{
			{name: "a", shape: []int64{1, 2}, data: []float64{1, 2}},
			{name: "b", shape: []int64{3, 2}, data: []float64{1, 0, 0, 1, 1, 1}, init: true},
			{name: "c", shape: []int64{3}, data: []float64{1, 2, 3}, init: true}},
			tNode{op: "Gemm", ins: []string{"a", "b", "c"}, attrsI: map[string]int64{"transB": 1}, attrsF: map[string]float64{"alpha": 2, "beta": 0.5}}, []int{1, 3}, []float64{2.5, 5, 7.5}},
		{"MatMul 3x2", 13, []tIn{x234, {name: "w", shape: []int64{4, 1}, data: []float64{1, 1, 1, 1}, init: true}}, tNode{op: "MatMul", ins: []string{"x", "w"}}, []int{2, 3, 1}, []float64{6, 22, 38, 54, 70, 86}},
		{"Softmax opset 13 axis 0", 13, []tIn{{name: "x", shape: []int64{2, 1}, data: []float64{0, math.Log(3)}}}, tNode{op: "Softmax", attrsI: map[string]int64{"axis": 0}}, []int{2, 1}, []float64{0.25, 0.75}},
		{"Softmax opset 11 coerced", 11, []tIn{{name: "x", shape: []int64{1, 2, 2}, data: []float64{0, 0, 0, math.Log(5)}}}, tNode{op: "Softmax"}, []int{1, 2, 2}, []float64{0.125, 0.125, 0.125, 0.625}},
		{"GlobalAveragePool", 13, []tIn{{name: "x", shape: []int64{1, 2, 2, 2}, data: iota(8)}}, tNode{op: "GlobalAveragePool"}, []int{1, 2, 1, 1}, []float64{1.5, 5.5}},
		{"MaxPool stride 1", 13, []tIn{{name: "x", shape: []int64{1, 1, 2, 3}, data: []float64{1, 5, 2, 4, 0, 6}}}, tNode{op: "MaxPool", attrsIs: map[string][]int64{"kernel_shape": {2, 2}}}, []int{1, 1, 1, 2}, []float64{5, 6}},
		{"AveragePool pad include", 13, []tIn{{name: "x", shape: []int64{1, 1, 1, 2}, data: []float64{2, 4}}}, tNode{op: "AveragePool", attrsIs: map[string][]int64{"kernel_shape": {1, 2}, "pads": {0, 1, 0, 0}}, attrsI: map[string]int64{"count_include_pad": 1}}, []int{1, 1, 1, 2}, []float64{1, 3}},
		{"Conv groups", 13, []tIn{{name: "x", shape: []int64{1, 2, 1, 2}, data: []float64{1, 2, 3, 4}}, {name: "w", shape: []int64{2, 1, 1, 1}, data: []float64{10, 100}, init: true}},
			tNode{op: "Conv", ins: []string{"x", "w"}, attrsI: map[string]int64{"group": 2}}, []int{1, 2, 1, 2}, []float64{10, 20, 300, 400}},
		{"BatchNormalization inference", 13, []tIn{{name: "x", shape: []int64{1, 2, 1, 1}, data: []float64{3, 3}},
			{name: "s", shape: []int64{2}, data: []float64{2, 1}, init: true}, {name: "b", shape: []int64{2}, data: []float64{1, 0}, init: true},
			{name: "m", shape: []int64{2}, data: []float64{1, 3}, init: true}, {name: "v", shape: []int64{2}, data: []float64{4, 1}, init: true}},
			tNode{op: "BatchNormalization", ins: []string{"x", "s", "b", "m", "v"}, attrsF: map[string]float64{"epsilon": 0}}, []int{1, 2, 1, 1}, []float64{3, 0}},
	}
	for _, c := range cases {
		c := c
		t.Run(c.name, func(t *testing.T) {
			got, shape, err := runModel(t, c.opset, c.ins, single(c.node))
			if err != nil {
				t.Fatal(err)
			}
			if len(shape) != len(c.shape) {
				t.Fatalf("shape %v, want %v", shape, c.shape)
			}
			for i := range shape {
				if shape[i] != c.shape[i] {
					t.Fatalf("shape %v, want %v", shape, c.shape)
				}
			}
			wantClose(t, got, c.want, 1e-12)
		})
	}
}

// TestPowConstant: x² with the exponent from a Constant node is exact at negative x.
func TestPowConstant(t *testing.T) {
	x := tIn{name: "x", shape: []int64{3}, data: []float64{-3, 0.5, 2}}
	nodes := []tNode{
		{op: "Constant", outs: []string{"e"}, attrsF: map[string]float64{"value_float": 2}},
		{op: "Pow", ins: []string{"x", "e"}, outs: []string{"y"}},
	}
	got, _, err := runModel(t, 13, []tIn{x}, nodes)
	if err != nil {
		t.Fatal(err)
	}
	wantValues(t, got, 9, 0.25, 4)
}

// TestWhere: Where(Greater(x, 0), x, c) with c = −10 broadcast from a scalar is x where
// x > 0, else −10; Not(Less(x, 0)) selects the other way.
func TestWhere(t *testing.T) {
	x := tIn{name: "x", shape: []int64{2, 2}, data: []float64{-1, 2, 0, 4}}
	z := tIn{name: "z", data: []float64{0}, init: true}
	c := tIn{name: "c", data: []float64{-10}, init: true}
	nodes := []tNode{
		{op: "Greater", ins: []string{"x", "z"}, outs: []string{"m"}},
		{op: "Where", ins: []string{"m", "x", "c"}, outs: []string{"y"}},
	}
	got, _, err := runModel(t, 13, []tIn{x, z, c}, nodes)
	if err != nil {
		t.Fatal(err)
	}
	wantValues(t, got, -10, 2, -10, 4)
	nodes = []tNode{
		{op: "Less", ins: []string{"x", "z"}, outs: []string{"l"}},
		{op: "Not", ins: []string{"l"}, outs: []string{"m"}},
		{op: "Where", ins: []string{"m", "c", "x"}, outs: []string{"y"}},
	}
	if got, _, err = runModel(t, 13, []tIn{x, z, c}, nodes); err != nil {
		t.Fatal(err)
	}
	wantValues(t, got, -1, -10, -10, -10)
}

// TestSplit: three outputs of sizes 1, 2, 1 along axis 1 (sizes from the input at opset 13).
func TestSplit(t *testing.T) {
	x := tIn{name: "x", shape: []int64{1, 4}, data: []float64{1, 2, 3, 4}}
	sizes := tIn{name: "s", shape: []int64{3}, ints: []int64{1, 2, 1}}
	nodes := []tNode{
		{op: "Split", ins: []string{"x", "s"}, outs: []string{"a", "b", "c"}, attrsI: map[string]int64{"axis": 1}},
		{op: "Concat", ins: []string{"c", "b", "a"}, outs: []string{"y"}, attrsI: map[string]int64{"axis": 1}},
	}
	got, _, err := runModel(t, 13, []tIn{x, sizes}, nodes)
	if err != nil {
		t.Fatal(err)
	}
	wantValues(t, got, 4, 2, 3, 1)
}

// TestErrors: unsupported operators and attributes name the node, the operator and the opset.
func TestErrors(t *testing.T) {
	x := tIn{name: "x", shape: []int64{1, 1, 2, 2}, data: []float64{1, 2, 3, 4}}
	cases := []struct {
		node tNode
		want []string
	}{
		{tNode{op: "NonMaxSuppression"}, []string{`node "y" (NonMaxSuppression, opset 13)`, "not supported", "onnx.SupportedOps()"}},
		{tNode{op: "AveragePool", attrsIs: map[string][]int64{"kernel_shape": {2, 2}}, attrsS: map[string]string{"auto_pad": "SAME"}}, []string{"auto_pad", "SAME_UPPER"}},
		{tNode{op: "MaxPool", attrsIs: map[string][]int64{"kernel_shape": {2, 2}}, attrsI: map[string]int64{"storage_order": 1}}, []string{"storage_order"}},
		{tNode{op: "Conv", ins: []string{"x", "x"}, attrsIs: map[string][]int64{"pads": {1, 1}}}, []string{"pads [1 1]", "want 4 values"}},
		{tNode{op: "Reshape", ins: []string{"x", "x"}}, []string{"must be a constant"}},
		{tNode{op: "Relu", ins: []string{"nope"}}, []string{`"nope"`, "not computed"}},
	}
	for _, c := range cases {
		_, _, err := runModel(t, 13, []tIn{x}, single(c.node))
		if err == nil {
			t.Errorf("%s: no error", c.node.op)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: error %q does not mention %q", c.node.op, err, w)
			}
		}
	}
	m, err := Decode(encModel(19, []tIn{x}, []tNode{{op: "Relu", ins: []string{"x"}, outs: []string{"y"}}}, nil))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Lower(m); err == nil || !strings.Contains(err.Error(), "operator set version 19") {
		t.Errorf("opset 19: %v", err)
	}
	if len(SupportedOps()) < 40 {
		t.Errorf("SupportedOps lists %d operators", len(SupportedOps()))
	}
}

// TestSigmoidUnclamped: Sigmoid is the mathematical function as PyTorch computes it, not
// Gorgonia's (exactly 1 above 19 in float64, 0 below -709): 1/(1 + e^-x) worked out here
// with math.Exp, at the former clamps and beyond, within 2^-52 relative (1 to 2 ulps: the
// formula rounds three times in float64 and is 1 ulp off the true value at -30, 19.5, 25
// and 30, where the importer's sigmoid is correctly rounded; the clamps are 1e-11 and more
// away).
func TestSigmoidUnclamped(t *testing.T) {
	xs := []float64{-750, -720, -30, 0, 19.5, 25, 30, 40}
	got, _, err := runModel(t, 13, []tIn{{name: "x", shape: []int64{int64(len(xs))}, data: xs}}, single(tNode{op: "Sigmoid"}))
	if err != nil {
		t.Fatal(err)
	}
	for i, x := range xs {
		want := 1 / (1 + math.Exp(-x))
		if x < 0 {
			want = math.Exp(x) / (1 + math.Exp(x))
		}
		if d := math.Abs(got[i] - want); d > 0x1p-52*math.Max(want, 1e-300) { // this formula is itself 1 ulp off at some points
			t.Errorf("sigmoid(%v) = %v, want %v", x, got[i], want)
		}
	}
	if got[5] == 1 || got[1] == 0 {
		t.Errorf("sigmoid(25) = %v and sigmoid(-720) = %v: clamped", got[5], got[1])
	}
}

// TestOpTablesDisjoint: every operator type is lowered by one table only (lookupOp would
// silently pick the first), and SupportedOps lists each once.
func TestOpTablesDisjoint(t *testing.T) {
	seen := map[string]int{}
	for i, tab := range opTables() {
		for name := range tab {
			if j, ok := seen[name]; ok {
				t.Errorf("operator %s is in tables %d and %d", name, j, i)
			}
			seen[name] = i
		}
	}
	if ops := SupportedOps(); len(ops) != len(seen) || !slices.IsSorted(ops) {
		t.Errorf("SupportedOps lists %d operators (sorted: %v), the tables %d", len(ops), slices.IsSorted(ops), len(seen))
	}
}

// TestConvConstantBias: a bias that is a Constant node (not an initializer, not computed) is
// added (it was silently dropped): conv of [1,1,1,2] x = [1,2] with a 1×1 filter 10 and bias 5
// is [15, 25], worked out by hand.
func TestConvConstantBias(t *testing.T) {
	x := tIn{name: "x", shape: []int64{1, 1, 1, 2}, data: []float64{1, 2}}
	w := tIn{name: "w", shape: []int64{1, 1, 1, 1}, data: []float64{10}, init: true}
	nodes := []tNode{
		{op: "Constant", outs: []string{"b"}, attrsT: map[string]tIn{"value": {name: "bv", shape: []int64{1}, data: []float64{5}}}},
		{op: "Conv", ins: []string{"x", "w", "b"}, outs: []string{"y"}, attrsIs: map[string][]int64{"kernel_shape": {1, 1}}},
	}
	got, _, err := runModel(t, 13, []tIn{x, w}, nodes)
	if err != nil {
		t.Fatal(err)
	}
	wantValues(t, got, 15, 25)
}

// TestNoOutputs: a node without outputs (a recurrent one, whose lowering names its lets
// after the first output, panicked) is an error.
func TestNoOutputs(t *testing.T) {
	x := tIn{name: "x", shape: []int64{1, 1, 2}, data: []float64{1, 2}}
	wv := tIn{name: "w", shape: []int64{1, 1, 2}, data: []float64{1, 1}, init: true}
	r := tIn{name: "r", shape: []int64{1, 1, 1}, data: []float64{1}, init: true}
	nodes := []tNode{{op: "RNN", ins: []string{"x", "w", "r"}, attrsI: map[string]int64{"hidden_size": 1}}, {op: "Identity", ins: []string{"x"}, outs: []string{"y"}}}
	_, _, err := runModel(t, 13, []tIn{x, wv, r}, nodes)
	if err == nil || !strings.Contains(err.Error(), "no outputs") {
		t.Errorf("error %v, want one saying the node has no outputs", err)
	}
}

// TestAtan: ONNX Atan is core's atan, the math package's arctangent, at special values too.
func TestAtan(t *testing.T) {
	xs := []float64{math.Inf(-1), -1e300, -1, math.Copysign(0, -1), 0, 0.5, 1, 1e300, math.Inf(1)}
	got, _, err := runModel(t, 13, []tIn{{name: "x", shape: []int64{int64(len(xs))}, data: xs}}, single(tNode{op: "Atan"}))
	if err != nil {
		t.Fatal(err)
	}
	for i, x := range xs {
		if want := math.Atan(x); math.Float64bits(got[i]) != math.Float64bits(want) {
			t.Errorf("atan(%v) = %v, want %v", x, got[i], want)
		}
	}
}
