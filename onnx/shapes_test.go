package onnx

import (
	"encoding/binary"
	"math"
	"math/rand"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bulkad/bulkad/core"
	"github.com/bulkad/bulkad/core/tensors"
	"github.com/bulkad/bulkad/internal/testutil"
	"gorgonia.org/tensor"
)

// Tests of shape arithmetic, masks, padding, Expand, Split, broadcasting MatMul, Gather and
// LayerNormalization on single small graphs, with values worked out by hand from the ONNX
// operator specification. The encoder of ops_test.go is extended with typed graph inputs
// (float64, int64, bool), bool initializers, tensor attributes and several graph outputs.

// sIn is a graph input (kind 'f' float64, 'i' int64, 'b' bool) or an initializer ('F', 'I', 'B').
type sIn struct {
	name  string
	kind  byte
	shape []int64
	f     []float64
	i     []int64 // int64 values, or bool values as 0/1
}

// sNode is a node with tensor attributes besides tNode's (attrsT: a Constant's or a
// ConstantOfShape's value, encoded from an sIn).
type sNode struct {
	tNode
	attrsT map[string]sIn
}

var onnxType = map[byte]uint64{'f': dtDouble, 'F': dtDouble, 'i': dtInt64, 'I': dtInt64, 'b': dtBool, 'B': dtBool}

func encTyped(in sIn) []byte {
	var b []byte
	for _, d := range in.shape {
		b = append(b, fVarint(1, uint64(d))...)
	}
	b = append(b, fBytes(8, []byte(in.name))...)
	b = append(b, fVarint(2, onnxType[in.kind])...)
	var raw []byte
	switch in.kind {
	case 'f', 'F':
		raw = make([]byte, 8*len(in.f))
		for k, x := range in.f {
			binary.LittleEndian.PutUint64(raw[8*k:], math.Float64bits(x))
		}
	case 'i', 'I':
		raw = make([]byte, 8*len(in.i))
		for k, x := range in.i {
			binary.LittleEndian.PutUint64(raw[8*k:], uint64(x))
		}
	default:
		for _, x := range in.i {
			raw = append(raw, byte(x))
		}
	}
	return append(b, fBytes(9, raw)...)
}

func encTypedInfo(name string, kind byte, shape []int64) []byte {
	var dims []byte
	for _, d := range shape {
		dims = append(dims, fBytes(1, fVarint(1, uint64(d)))...)
	}
	tt := msg(fVarint(1, onnxType[kind]), fBytes(2, dims))
	return msg(fBytes(1, []byte(name)), fBytes(2, fBytes(1, tt)))
}

// encShapes encodes a model of the given inputs and nodes whose graph outputs are outs.
func encShapes(opset int64, ins []sIn, nodes []sNode, outs []string) []byte {
	var g []byte
	for _, n := range nodes {
		e := encNode(n.tNode)
		for k, v := range n.attrsT {
			e = append(e, fBytes(5, msg(fBytes(1, []byte(k)), fBytes(5, encTyped(v)), fVarint(20, 4)))...)
		}
		g = append(g, fBytes(1, e)...)
	}
	g = append(g, fBytes(2, []byte("shapes"))...)
	for _, in := range ins {
		if in.kind >= 'A' && in.kind <= 'Z' {
			g = append(g, fBytes(5, encTyped(in))...)
		} else {
			g = append(g, fBytes(11, encTypedInfo(in.name, in.kind, in.shape))...)
		}
	}
	for _, o := range outs {
		g = append(g, fBytes(12, encTypedInfo(o, 'f', nil))...)
	}
	return msg(fVarint(1, 8), fBytes(7, g), fBytes(8, msg(fBytes(1, nil), fVarint(2, uint64(opset)))))
}

// runShapes lowers the model and evaluates its outputs with core.Eval at the inputs' values.
func runShapes(t *testing.T, opset int64, ins []sIn, nodes []sNode, outs ...string) ([]*tensor.Dense, error) {
	t.Helper()
	m, err := Decode(encShapes(opset, ins, nodes, outs))
	if err != nil {
		t.Fatal(err)
	}
	p, err := Lower(m)
	if err != nil {
		return nil, err
	}
	args := map[string]*tensor.Dense{}
	for i, v := range p.InputVars {
		for _, in := range ins {
			if in.name != p.Inputs[i] {
				continue
			}
			sh := []int(v.Type().Shape)
			switch v.Type().Dtype {
			case core.Int64:
				args[v.Name] = tensor.New(tensor.WithShape(sh...), tensor.WithBacking(append([]int64{}, in.i...)))
			case core.Bool:
				bs := make([]bool, len(in.i))
				for k, x := range in.i {
					bs[k] = x != 0
				}
				args[v.Name] = tensor.New(tensor.WithShape(sh...), tensor.WithBacking(bs))
			default:
				args[v.Name] = denseOf(core.Float64, v.Type().Shape, in.f)
			}
		}
	}
	for i, v := range p.ParamVars {
		args[v.Name] = p.Values[p.Params[i]]
	}
	return tensors.EvalTuple(p.Prog, args)
}

// n is a node of op from ins to outs with integer, float, integer-list and string attributes.
func n(op string, ins, outs []string, attrs ...any) sNode {
	nd := sNode{tNode: tNode{op: op, ins: ins, outs: outs, attrsI: map[string]int64{}, attrsF: map[string]float64{},
		attrsIs: map[string][]int64{}, attrsS: map[string]string{}}, attrsT: map[string]sIn{}}
	for k := 0; k+1 < len(attrs); k += 2 {
		name := attrs[k].(string)
		switch v := attrs[k+1].(type) {
		case int:
			nd.attrsI[name] = int64(v)
		case float64:
			nd.attrsF[name] = v
		case []int64:
			nd.attrsIs[name] = v
		case string:
			nd.attrsS[name] = v
		case sIn:
			nd.attrsT[name] = v
		}
	}
	return nd
}

func in(names ...string) []string { return names }

func ints1(name string, v ...int64) sIn {
	return sIn{name: name, kind: 'I', shape: []int64{int64(len(v))}, i: v}
}

func intScalar(name string, v int64) sIn { return sIn{name: name, kind: 'I', i: []int64{v}} }

// floatsOf is a result as float64s (bool as 0/1, int64 converted).
func floatsOf(d *tensor.Dense) []float64 {
	out, _ := testutil.Floats(d.Data())
	return out
}

// shapeCase is one case of TestShapeOperators: a graph of nodes over ins at opset, and the
// shape and values of its output y.
type shapeCase struct {
	name  string
	opset int64
	ins   []sIn
	nodes []sNode
	shape []int
	want  []float64
}

// shapeCasesFolded are the cases of Gather, Shape, integer arithmetic, Squeeze, Slice and
// Expand (most folded at import time).
func shapeCasesFolded() []shapeCase {
	x6 := sIn{name: "x", kind: 'f', shape: []int64{2, 3}, f: []float64{1, 2, 3, 4, 5, 6}}
	x24 := sIn{name: "x", kind: 'f', shape: []int64{2, 4}, f: []float64{1, 2, 3, 4, 5, 6, 7, 8}}
	mask := sIn{name: "m", kind: 'B', shape: []int64{1, 1, 2, 3}, i: []int64{1, 0, 1, 0, 1, 1}}
	return []shapeCase{
		// issue 26 item 2: Gather on a multi-dimensional constant keeps the axis and the rank
		{"Gather [0] of a [1,1,2,3] bool constant", 13, []sIn{x6, mask, intScalar("zero", 0)}, []sNode{
			n("Gather", in("m", "zero"), in("g")),
			n("Gather", in("g", "zero"), in("g2")), // [2,3]
			n("Cast", in("g2"), in("c"), "to", int(dtDouble)),
			n("Mul", in("x", "c"), in("y"))}, []int{2, 3}, []float64{1, 0, 3, 0, 5, 6}},
		{"Gather axis 2 with 2-D indices of an int constant", 13, []sIn{x6,
			{name: "d", kind: 'I', shape: []int64{1, 1, 2, 3}, i: []int64{1, 2, 3, 4, 5, 6}},
			{name: "k", kind: 'I', shape: []int64{2, 1}, i: []int64{1, -2}}}, []sNode{
			n("Gather", in("d", "k"), in("y"), "axis", 2)}, []int{1, 1, 2, 1, 3}, []float64{4, 5, 6, 1, 2, 3}},
		{"Gather axis 1 of a constant by a scalar", 13, []sIn{x6,
			{name: "d", kind: 'I', shape: []int64{2, 3}, i: []int64{1, 2, 3, 4, 5, 6}}, intScalar("k", -1)}, []sNode{
			n("Gather", in("d", "k"), in("y"), "axis", 1)}, []int{2}, []float64{3, 6}},
		// torch.chunk(x, 2, dim=1): the bounds from Shape with integer Add, Div and Mul
		{"chunk bounds from Shape", 13, []sIn{x24, ints1("i1", 1), ints1("one", 1), ints1("two", 2), ints1("zero", 0)}, []sNode{
			n("Shape", in("x"), in("s")),
			n("Gather", in("s", "i1"), in("d")),   // [4]
			n("Add", in("d", "one"), in("d1")),    // [5]
			n("Div", in("d1", "two"), in("half")), // [2]: integer division truncates
			n("Mul", in("half", "two"), in("end")),
			n("Slice", in("x", "half", "end", "i1"), in("y"))}, []int{2, 2}, []float64{3, 4, 7, 8}},
		// torch.flatten(x): Slice of the shape to nothing, Concat with −1, Reshape
		{"flatten through an empty Slice", 13, []sIn{x6, ints1("zero", 0), ints1("minus", -1)}, []sNode{
			n("Shape", in("x"), in("s")),
			n("Slice", in("s", "zero", "zero", "zero"), in("e")), // []
			n("Concat", in("e", "minus"), in("shape"), "axis", 0),
			n("Reshape", in("x", "shape"), in("y"))}, []int{6}, []float64{1, 2, 3, 4, 5, 6}},
		{"Shape start end (opset 15)", 15, []sIn{{name: "x", kind: 'f', shape: []int64{2, 3, 4, 1}, f: make([]float64, 24)}}, []sNode{
			n("Shape", in("x"), in("s"), "start", 1, "end", -1),
			n("Cast", in("s"), in("y"), "to", int(dtDouble))}, []int{2}, []float64{3, 4}},
		{"Size", 13, []sIn{x6}, []sNode{n("Size", in("x"), in("s")), n("Cast", in("s"), in("y"), "to", int(dtDouble))}, []int{}, []float64{6}},
		// integer arithmetic: Div truncates toward zero, Mod follows the divisor's sign unless fmod
		{"integer Div, Mod, fmod, Neg, Min, Max", 13, []sIn{x6, ints1("a", -7, 7, -4), ints1("b", 2, -3, 3)}, []sNode{
			n("Div", in("a", "b"), in("q")),
			n("Mod", in("a", "b"), in("r")),
			n("Mod", in("a", "b"), in("f"), "fmod", 1),
			n("Neg", in("a"), in("ng")),
			n("Min", in("a", "b"), in("mn")),
			n("Max", in("a", "b"), in("mx")),
			n("Concat", in("q", "r", "f", "ng", "mn", "mx"), in("c"), "axis", 0),
			n("Cast", in("c"), in("y"), "to", int(dtDouble))}, []int{18},
			[]float64{-3, -2, -1, 1, -2, 2, -1, 1, -1, 7, -7, 4, -7, -3, -4, 2, 7, 3}},
		{"Range, Equal, Where, ConstantOfShape", 13, []sIn{x6, intScalar("s", 0), intScalar("l", 5), intScalar("d", 2), ints1("three", 3), ints1("two", 2)}, []sNode{
			n("Range", in("s", "l", "d"), in("r")), // [0 2 4]
			n("ConstantOfShape", in("three"), in("c"), "value", sIn{kind: 'I', shape: []int64{1}, i: []int64{2}}),
			n("Equal", in("r", "c"), in("e")),        // [F T F]
			n("Where", in("e", "two", "r"), in("w")), // [0 2 4]→[0 2 4] with 2 at 1
			n("Sub", in("w", "c"), in("z")),          // [-2 0 2]
			n("Cast", in("z"), in("y"), "to", int(dtDouble))}, []int{3}, []float64{-2, 0, 2}},
		{"Unsqueeze and Squeeze of constants", 13, []sIn{x6, ints1("v", 5, 6), ints1("a0", 0), ints1("a2", 2)}, []sNode{
			n("Unsqueeze", in("v", "a0"), in("u")),  // [1,2]
			n("Unsqueeze", in("u", "a2"), in("u2")), // [1,2,1]
			n("Squeeze", in("u2", "a0"), in("s")),   // [2,1]
			n("Transpose", in("s"), in("tr")),       // [1,2]
			n("Cast", in("tr"), in("y"), "to", int(dtDouble))}, []int{1, 2}, []float64{5, 6}},
		{"Slice of a constant, negative step", 13, []sIn{x6, {name: "d", kind: 'I', shape: []int64{2, 4}, i: []int64{1, 2, 3, 4, 5, 6, 7, 8}},
			ints1("s", -1), ints1("e", -5), ints1("a", 1), ints1("st", -2)}, []sNode{
			n("Slice", in("d", "s", "e", "a", "st"), in("sl")),
			n("Cast", in("sl"), in("y"), "to", int(dtDouble))}, []int{2, 2}, []float64{4, 2, 8, 6}},
		{"Expand (specification example)", 13, []sIn{{name: "x", kind: 'f', shape: []int64{3, 1}, f: []float64{1, 2, 3}}, ints1("s", 2, 1, 6)}, []sNode{
			n("Expand", in("x", "s"), in("y"))}, []int{2, 3, 6},
			[]float64{1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3}},
		{"Expand of a bool graph input", 13, []sIn{{name: "b", kind: 'b', shape: []int64{2, 1}, i: []int64{1, 0}}, ints1("s", 2, 2), x6}, []sNode{
			n("Expand", in("b", "s"), in("e")),
			n("Cast", in("e"), in("y"), "to", int(dtDouble))}, []int{2, 2}, []float64{1, 1, 0, 0}},
		// issue 26 item 3: Pad before opset 11 takes its value attribute
	}
}

// shapeCasesMore are the cases of Pad, Split, Cast, the logic operators, MatMul's
// broadcasting and Gather by ids computed at run time.
func shapeCasesMore() []shapeCase {
	x6 := sIn{name: "x", kind: 'f', shape: []int64{2, 3}, f: []float64{1, 2, 3, 4, 5, 6}}
	return []shapeCase{
		{"Pad opset 10 value 1.5", 10, []sIn{{name: "x", kind: 'f', shape: []int64{1, 2}, f: []float64{1, 2}}}, []sNode{
			n("Pad", in("x"), in("y"), "pads", []int64{0, 1, 1, 0}, "value", 1.5)}, []int{2, 3}, []float64{1.5, 1, 2, 1.5, 1.5, 1.5}},
		{"Pad opset 11 reflect, pads computed", 11, []sIn{{name: "x", kind: 'f', shape: []int64{1, 3}, f: []float64{1, 2, 3}}, ints1("one", 1), ints1("p", 2), ints1("q", 1)}, []sNode{
			n("ConstantOfShape", in("one"), in("z"), "value", sIn{kind: 'I', shape: []int64{1}, i: []int64{0}}),
			n("Concat", in("z", "p", "z", "q"), in("pads"), "axis", 0), // begins [0 2], ends [0 1]
			n("Pad", in("x", "pads"), in("y"), "mode", "reflect")}, []int{1, 6}, []float64{3, 2, 1, 2, 3, 2}},
		{"Pad opset 13 edge", 13, []sIn{{name: "x", kind: 'f', shape: []int64{3}, f: []float64{1, 2, 3}}, ints1("p", 2, 1)}, []sNode{
			n("Pad", in("x", "p"), in("y"), "mode", "edge")}, []int{6}, []float64{1, 1, 1, 2, 3, 3}},
		{"Pad opset 18 axes and a value", 18, []sIn{x6, ints1("p", 1, 0), ints1("a", -1)}, []sNode{
			n("Constant", nil, in("cv"), "value", sIn{kind: 'F', f: []float64{-1}}),
			n("Pad", in("x", "p", "cv", "a"), in("y"))}, []int{2, 4}, []float64{-1, 1, 2, 3, -1, 4, 5, 6}},
		{"Pad value from an initializer", 13, []sIn{x6, ints1("p", 0, 0, 1, 0), {name: "v", kind: 'F', f: []float64{2.5}}}, []sNode{
			n("Pad", in("x", "p", "v"), in("y"))}, []int{3, 3}, []float64{1, 2, 3, 4, 5, 6, 2.5, 2.5, 2.5}},
		{"Pad negative pads crop", 13, []sIn{x6, ints1("p", 0, -1, 0, 1)}, []sNode{
			n("Pad", in("x", "p"), in("y"))}, []int{2, 3}, []float64{2, 3, 0, 5, 6, 0}},
		// issue 26 item 4: Split at opset 18 with uneven num_outputs (specification example)
		{"Split opset 18 num_outputs 4 of 7", 18, []sIn{{name: "x", kind: 'f', shape: []int64{7}, f: []float64{1, 2, 3, 4, 5, 6, 7}}}, []sNode{
			n("Split", in("x"), in("a", "b", "c", "d"), "num_outputs", 4),
			n("Concat", in("d", "c", "b", "a"), in("y"), "axis", 0)}, []int{7}, []float64{7, 5, 6, 3, 4, 1, 2}},
		{"Split of a constant", 13, []sIn{x6, ints1("v", 1, 2, 3), ints1("sz", 1, 2)}, []sNode{
			n("Split", in("v", "sz"), in("a", "b")),
			n("Concat", in("b", "a"), in("c"), "axis", 0),
			n("Cast", in("c"), in("y"), "to", int(dtDouble))}, []int{3}, []float64{2, 3, 1}},
		// issue 26 item 4: Cast between bool and float, and bool initializers as conditions
		{"Cast bool term to float and float to bool", 13, []sIn{{name: "x", kind: 'f', shape: []int64{4}, f: []float64{-1, 0, 2, 0.5}}, {name: "z", kind: 'F', f: []float64{0}}}, []sNode{
			n("Greater", in("x", "z"), in("g")),
			n("Cast", in("g"), in("gf"), "to", int(dtDouble)), // [0 0 1 1]
			n("Cast", in("x"), in("b"), "to", int(dtBool)),
			n("Cast", in("b"), in("bf"), "to", int(dtDouble)), // [1 0 1 1]
			n("Add", in("gf", "bf"), in("y"))}, []int{4}, []float64{1, 0, 2, 2}},
		{"Where with a bool initializer", 13, []sIn{x6, {name: "m", kind: 'B', shape: []int64{3}, i: []int64{1, 0, 1}}, {name: "c", kind: 'F', f: []float64{-9}}}, []sNode{
			n("Constant", nil, in("k"), "value", sIn{kind: 'F', f: []float64{-9}}),
			n("Where", in("m", "x", "k"), in("y"))}, []int{2, 3}, []float64{1, -9, 3, 4, -9, 6}},
		{"Not of a bool initializer", 13, []sIn{x6, {name: "m", kind: 'B', shape: []int64{3}, i: []int64{1, 0, 1}}}, []sNode{
			n("Not", in("m"), in("nm")),
			n("Constant", nil, in("k"), "value", sIn{kind: 'F', f: []float64{0}}),
			n("Where", in("nm", "x", "k"), in("y"))}, []int{2, 3}, []float64{0, 2, 0, 0, 5, 0}},
		{"And, Or, Xor of a bool input and a bool initializer", 13, []sIn{x6,
			{name: "a", kind: 'b', shape: []int64{2, 2}, i: []int64{1, 0, 1, 1}}, {name: "b", kind: 'B', shape: []int64{2}, i: []int64{0, 1}}}, []sNode{
			n("And", in("a", "b"), in("an")), // [0 0 0 1]
			n("Or", in("a", "b"), in("or")),  // [1 1 1 1]
			n("Xor", in("a", "b"), in("xo")), // [1 1 1 0]
			n("Concat", in("an", "or", "xo"), in("c"), "axis", 0),
			n("Cast", in("c"), in("y"), "to", int(dtDouble))}, []int{6, 2}, []float64{0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 0}},
		// issue 26 item 5: MatMul broadcasting batches of rank 4
		{"MatMul [2,1,1,2] × [1,3,2,1]", 13, []sIn{
			{name: "a", kind: 'f', shape: []int64{2, 1, 1, 2}, f: []float64{1, 2, 3, 4}},
			{name: "b", kind: 'F', shape: []int64{1, 3, 2, 1}, f: []float64{1, 0, 0, 1, 1, 1}}}, []sNode{
			n("MatMul", in("a", "b"), in("y"))}, []int{2, 3, 1, 1}, []float64{1, 2, 3, 3, 4, 7}},
		{"MatMul vector × rank 3", 13, []sIn{
			{name: "a", kind: 'f', shape: []int64{2}, f: []float64{1, 2}},
			{name: "b", kind: 'F', shape: []int64{2, 2, 2}, f: []float64{1, 0, 0, 1, 1, 1, 2, 3}}}, []sNode{
			n("MatMul", in("a", "b"), in("y"))}, []int{2, 2}, []float64{1, 2, 5, 7}},
		// issue 26 item 6: Gather of a float table by int64 graph input ids (negative: from the end)
		{"Gather table by int64 ids", 13, []sIn{
			{name: "ids", kind: 'i', shape: []int64{2, 2}, i: []int64{2, 0, -1, 2}},
			{name: "w", kind: 'F', shape: []int64{3, 2}, f: []float64{1, 2, 3, 4, 5, 6}}}, []sNode{
			n("Gather", in("w", "ids"), in("y"))}, []int{2, 2, 2}, []float64{5, 6, 1, 2, 5, 6, 5, 6}},
		{"Gather of int64 ids, then of a table", 13, []sIn{
			{name: "ids", kind: 'i', shape: []int64{2, 2}, i: []int64{2, 0, 1, 2}}, intScalar("zero", 0),
			{name: "w", kind: 'F', shape: []int64{3, 2}, f: []float64{1, 2, 3, 4, 5, 6}}}, []sNode{
			n("Gather", in("ids", "zero"), in("col"), "axis", 1), // [2 1]
			n("Gather", in("w", "col"), in("y"))}, []int{2, 2}, []float64{5, 6, 3, 4}},
		{"float initializer cast to a shape", 13, []sIn{x6, {name: "s", kind: 'F', shape: []int64{2}, f: []float64{3, 2}}}, []sNode{
			n("Cast", in("s"), in("si"), "to", int(dtInt64)),
			n("Reshape", in("x", "si"), in("y"))}, []int{3, 2}, []float64{1, 2, 3, 4, 5, 6}},
	}
}

// TestShapeOperators: one case per behaviour, the expected shape and values derived by hand
// from the operator specification.
func TestShapeOperators(t *testing.T) {
	for _, c := range append(shapeCasesFolded(), shapeCasesMore()...) {
		t.Run(c.name, func(t *testing.T) {
			outs, err := runShapes(t, c.opset, c.ins, c.nodes, "y")
			if err != nil {
				t.Fatal(err)
			}
			got := outs[0]
			if !tensor.Shape(c.shape).Eq(got.Shape()) && !(len(c.shape) == 0 && got.Shape().IsScalar()) {
				t.Fatalf("shape %v, want %v", got.Shape(), c.shape)
			}
			wantClose(t, floatsOf(got), c.want, 1e-12)
		})
	}
}

// TestLayerNormalization: opset 17's LayerNormalization and its Mean and InvStdDev outputs
// from the specification: x = [[1 2 3 4] [2 2 2 6]], axis −1, epsilon 0.25: the means are
// 2.5 and 3, the variances 1.25 and 3, so InvStdDev = 1/√1.5 and 1/√3.25; Y = (x − mean) ·
// InvStdDev · scale + bias. With axis 0 the statistics cover the whole array (mean 2.75,
// variance 2.1875).
func TestLayerNormalization(t *testing.T) {
	x := sIn{name: "x", kind: 'f', shape: []int64{2, 4}, f: []float64{1, 2, 3, 4, 2, 2, 2, 6}}
	scale := sIn{name: "s", kind: 'F', shape: []int64{4}, f: []float64{1, 2, 1, 2}}
	bias := sIn{name: "b", kind: 'F', shape: []int64{4}, f: []float64{0, 0, 1, 1}}
	nodes := []sNode{n("LayerNormalization", in("x", "s", "b"), in("y", "mean", "inv"), "epsilon", 0.25)}
	outs, err := runShapes(t, 17, []sIn{x, scale, bias}, nodes, "y", "mean", "inv")
	if err != nil {
		t.Fatal(err)
	}
	i1, i2 := 1/math.Sqrt(1.5), 1/math.Sqrt(3.25)
	want := [][]float64{
		{-1.5 * i1, -0.5 * i1 * 2, 0.5*i1 + 1, 1.5*i1*2 + 1, -1 * i2, -1 * i2 * 2, -1*i2 + 1, 3*i2*2 + 1},
		{2.5, 3},
		{i1, i2},
	}
	shapes := []tensor.Shape{{2, 4}, {2, 1}, {2, 1}}
	for k, o := range outs {
		if !o.Shape().Eq(shapes[k]) {
			t.Errorf("output %d: shape %v, want %v", k, o.Shape(), shapes[k])
		}
		for i, v := range floatsOf(o) {
			if math.Abs(v-want[k][i]) > 1e-12 {
				t.Errorf("output %d: %v, want %v", k, floatsOf(o), want[k])
				break
			}
		}
	}
	// axis 0, no bias, scale [2,4] of ones: the whole array's statistics
	ones := sIn{name: "s", kind: 'F', shape: []int64{2, 4}, f: []float64{1, 1, 1, 1, 1, 1, 1, 1}}
	nodes = []sNode{n("LayerNormalization", in("x", "s"), in("y"), "axis", 0, "epsilon", 0.0)}
	outs, err = runShapes(t, 17, []sIn{x, ones}, nodes, "y")
	if err != nil {
		t.Fatal(err)
	}
	inv := 1 / math.Sqrt(2.1875)
	for i, v := range floatsOf(outs[0]) {
		if w := (x.f[i] - 2.75) * inv; math.Abs(v-w) > 1e-12 {
			t.Fatalf("axis 0: element %d = %v, want %v", i, v, w)
		}
	}
}

// TestShapeErrors: what is refused says what is supported, and shape arithmetic on static
// shapes never reports a dependence on graph inputs.
func TestShapeErrors(t *testing.T) {
	x := sIn{name: "x", kind: 'f', shape: []int64{2, 3}, f: []float64{1, 2, 3, 4, 5, 6}}
	cases := []struct {
		name  string
		opset int64
		ins   []sIn
		nodes []sNode
		want  []string
	}{
		{"Range of a term", 13, []sIn{x}, []sNode{n("Range", in("x", "x", "x"), in("y"))}, []string{"Range", "constants only"}},
		{"Pad wrap", 13, []sIn{x, ints1("p", 0, 1, 0, 1)}, []sNode{n("Pad", in("x", "p"), in("y"), "mode", "wrap")}, []string{`mode "wrap"`, "constant, reflect and edge"}},
		{"Pad reflect too far", 13, []sIn{x, ints1("p", 0, 3, 0, 0)}, []sNode{n("Pad", in("x", "p"), in("y"), "mode", "reflect")}, []string{"reflecting 3"}},
		{"Cast to float16", 13, []sIn{x}, []sNode{n("Cast", in("x"), in("y"), "to", 10)}, []string{"type 10"}},
		{"Split uneven before 18", 13, []sIn{{name: "x", kind: 'f', shape: []int64{7}, f: make([]float64, 7)}}, []sNode{n("Split", in("x"), in("y", "z"))}, []string{"do not split 7 evenly", "opset 18"}},
		{"Split 18 without num_outputs", 18, []sIn{{name: "x", kind: 'f', shape: []int64{6}, f: make([]float64, 6)}}, []sNode{n("Split", in("x"), in("y", "z"))}, []string{"num_outputs"}},
		{"LayerNormalization stash_type", 17, []sIn{x, {name: "s", kind: 'F', shape: []int64{3}, f: []float64{1, 1, 1}}}, []sNode{n("LayerNormalization", in("x", "s"), in("y"), "stash_type", 10)}, []string{"stash_type 10", "1 (float) and 11 (double)"}},
		{"integer Div by zero", 13, []sIn{x, ints1("a", 1), ints1("z", 0)}, []sNode{n("Div", in("a", "z"), in("y"))}, []string{"by zero"}},
		{"MatMul batches", 13, []sIn{{name: "x", kind: 'f', shape: []int64{2, 2, 3}, f: make([]float64, 12)}, {name: "w", kind: 'F', shape: []int64{3, 3, 1}, f: make([]float64, 9)}}, []sNode{n("MatMul", in("x", "w"), in("y"))}, []string{"MatMul of [2 2 3] and [3 3 1]", "do not broadcast"}},
		{"Gather out of range", 13, []sIn{x, ints1("i", 3)}, []sNode{n("Gather", in("x", "i"), in("y"), "axis", 1)}, []string{"index 3 out of range"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := runShapes(t, c.opset, c.ins, c.nodes, "y")
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
			if !strings.Contains(err.Error(), "opset") {
				t.Errorf("error %q does not name the opset", err)
			}
		})
	}
	// every static computation above: none says "depends on graph inputs"
	_, err := runShapes(t, 13, []sIn{x, ints1("i1", 1), ints1("two", 2)}, []sNode{
		n("Shape", in("x"), in("s")), n("Gather", in("s", "i1"), in("d")), n("Div", in("d", "two"), in("h")),
		n("Concat", in("h", "two"), in("sh"), "axis", 0), n("Reshape", in("x", "sh"), in("y"))}, "y")
	if err == nil || strings.Contains(err.Error(), "graph inputs") {
		t.Errorf("a shape computed from Shape: %v (want the reshape's size error, not a dependence on graph inputs)", err)
	}
}

// TestLargeFloatFills: a float ConstantOfShape or Expand of a float constant to more than
// 65,536 elements becomes a replicated term, not a literal listing every element; its values
// are the fill.
func TestLargeFloatFills(t *testing.T) {
	x := sIn{name: "x", kind: 'f', shape: []int64{300, 300}, f: make([]float64, 90000)}
	for i := range x.f {
		x.f[i] = float64(i % 7)
	}
	nodes := []sNode{
		n("ConstantOfShape", in("s"), in("c"), "value", sIn{kind: 'F', shape: []int64{1}, f: []float64{1.5}}),
		n("Constant", nil, in("h"), "value", sIn{kind: 'F', shape: []int64{1}, f: []float64{0.25}}),
		n("Expand", in("h", "s"), in("e")),
		n("Add", in("c", "e"), in("ce")),
		n("Add", in("x", "ce"), in("y")),
	}
	ins := []sIn{x, ints1("s", 300, 300)}
	m, err := Decode(encShapes(13, ins, nodes, []string{"y"}))
	if err != nil {
		t.Fatal(err)
	}
	p, err := Lower(m)
	if err != nil {
		t.Fatal(err)
	}
	core.PostOrder(p.Prog.Body, func(u core.Term) {
		if l, ok := u.(*core.Lit); ok && len(l.F)+len(l.I) > 1000 {
			t.Errorf("a literal of %d elements in the program", len(l.F)+len(l.I))
		}
	})
	outs, err := runShapes(t, 13, ins, nodes, "y")
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range floatsOf(outs[0]) {
		if v != x.f[i]+1.75 {
			t.Fatalf("element %d = %v, want %v", i, v, x.f[i]+1.75)
		}
	}
}

// TestFoldLimits: folding refuses absurd constant shapes with an error instead of allocating
// (or overflowing the element count).
func TestFoldLimits(t *testing.T) {
	x := sIn{name: "x", kind: 'f', shape: []int64{1}, f: []float64{1}}
	cases := []struct {
		name  string
		ins   []sIn
		nodes []sNode
	}{
		{"ConstantOfShape 2^40 × 2^40", []sIn{x, ints1("s", 1<<40, 1<<40)}, []sNode{
			n("ConstantOfShape", in("s"), in("c"), "value", sIn{kind: 'I', shape: []int64{1}, i: []int64{1}}),
			n("Cast", in("c"), in("y"), "to", int(dtDouble))}},
		{"broadcast [2^20,1] + [1,2^20]", []sIn{x, ints1("a", 1<<20, 1), ints1("one", 1)}, []sNode{
			n("ConstantOfShape", in("a"), in("c"), "value", sIn{kind: 'I', shape: []int64{1}, i: []int64{1}}),
			n("Transpose", in("c"), in("ct")),
			n("Add", in("c", "ct"), in("s")),
			n("Cast", in("s"), in("y"), "to", int(dtDouble))}},
		{"Expand to 2^30 integers", []sIn{x, ints1("v", 1), ints1("s", 1<<15, 1<<15)}, []sNode{
			n("Expand", in("v", "s"), in("e")),
			n("Cast", in("e"), in("y"), "to", int(dtDouble))}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := runShapes(t, 13, c.ins, c.nodes, "y")
			if err == nil || !strings.Contains(err.Error(), "too large to fold") {
				t.Fatalf("error %v, want one saying the constant is too large to fold", err)
			}
		})
	}
}

// shapeFixtures are the exports of gen_shapes.py (testdata/shapes).
func shapeFixtures(t testing.TB) [][]byte {
	return readFixtures(t, filepath.Join("testdata", "shapes"))
}

// TestCorruptShapeModels: bit-flipped exports of gen_shapes.py (shape arithmetic, masks,
// attention; bit flips change shapes, axes and indices that folding reads) give errors or
// programs, never a panic; every error names the package.
func TestCorruptShapeModels(t *testing.T) {
	rng := rand.New(rand.NewSource(2))
	for _, b := range shapeFixtures(t) {
		corrupt(t, rng, b, 0, 40)
	}
}

// FuzzImportShapes is FuzzImport seeded with the exports of gen_shapes.py:
//
//	go test -run XXX -fuzz FuzzImportShapes -fuzztime 60s ./onnx
func FuzzImportShapes(f *testing.F) { fuzzImport(f, shapeFixtures(f)) }
