package onnx

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/pkg/errors"
	"google.golang.org/protobuf/encoding/protowire"
)

// The subset of the ONNX protobuf schema (onnx/onnx.proto3, IR version ≤ 9) the importer reads,
// decoded field by field with protowire. Unknown fields are skipped, as protobuf requires.

// Model is a decoded ONNX model.
type Model struct {
	IRVersion int64
	// Opsets maps an operator-set domain ("" is the default ai.onnx domain) to its version.
	Opsets map[string]int64
	Graph  Graph
}

// Graph is an ONNX graph.
type Graph struct {
	Name        string
	Nodes       []Node
	Initializer []Tensor
	Inputs      []ValueInfo
	Outputs     []ValueInfo
}

// Node is one operator application.
type Node struct {
	Inputs, Outputs []string
	Name, OpType    string
	Domain          string
	Attrs           map[string]Attr
}

// Attr is an operator attribute (one of its fields is set, by Type).
type Attr struct {
	Type    int64 // AttributeProto.AttributeType: 1 FLOAT, 2 INT, 3 STRING, 4 TENSOR, 6 FLOATS, 7 INTS, 8 STRINGS
	F       float64
	I       int64
	S       string
	T       *Tensor
	Floats  []float64
	Ints    []int64
	Strings []string
}

// Tensor is a constant tensor: an initializer or a Constant's value. Float data are kept as
// float64, integer data as int64.
type Tensor struct {
	Name     string
	Dims     []int64
	DataType int64 // TensorProto.DataType: 1 FLOAT, 6 INT32, 7 INT64, 9 BOOL, 11 DOUBLE
	Floats   []float64
	Ints     []int64
}

// ValueInfo names a graph input or output with its element type and static shape (a
// dimension without a value is -1).
type ValueInfo struct {
	Name     string
	ElemType int64
	Shape    []int64
}

// ONNX data types the importer reads.
const (
	dtFloat  = 1
	dtInt32  = 6
	dtInt64  = 7
	dtBool   = 9
	dtDouble = 11
)

// typeName is the name of an ONNX element type (TensorProto.DataType) as onnx.proto writes
// it ("FLOAT", "BOOL", "INT64", …), or "element type N" for a number outside the
// specification.
func typeName(t int64) string {
	names := [...]string{
		"UNDEFINED", "FLOAT", "UINT8", "INT8", "UINT16", "INT16", "INT32", "INT64", "STRING", "BOOL",
		"FLOAT16", "DOUBLE", "UINT32", "UINT64", "COMPLEX64", "COMPLEX128", "BFLOAT16",
		"FLOAT8E4M3FN", "FLOAT8E4M3FNUZ", "FLOAT8E5M2", "FLOAT8E5M2FNUZ", "UINT4", "INT4", "FLOAT4E2M1",
	}
	if t >= 0 && t < int64(len(names)) {
		return names[t]
	}
	return fmt.Sprintf("element type %d", t)
}

// maxElems bounds the element count of one decoded tensor (a corrupt file must not allocate
// without limit).
const maxElems = 1 << 28

// fieldFn is called for each field of a message: the field number, its wire type and the
// value (v for varint and fixed fields, b for length-delimited ones).
type fieldFn func(num protowire.Number, typ protowire.Type, v uint64, b []byte) error

// walk decodes the fields of one message.
func walk(msg string, b []byte, f fieldFn) error {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return errors.Errorf("onnx: decode: %s: bad field tag (%v)", msg, protowire.ParseError(n))
		}
		b = b[n:]
		var v uint64
		var val []byte
		switch typ {
		case protowire.VarintType:
			v, n = protowire.ConsumeVarint(b)
		case protowire.Fixed32Type:
			var x uint32
			x, n = protowire.ConsumeFixed32(b)
			v = uint64(x)
		case protowire.Fixed64Type:
			v, n = protowire.ConsumeFixed64(b)
		case protowire.BytesType:
			val, n = protowire.ConsumeBytes(b)
		default:
			n = protowire.ConsumeFieldValue(num, typ, b)
		}
		if n < 0 {
			return errors.Errorf("onnx: decode: %s: field %d is truncated or malformed (%v)", msg, num, protowire.ParseError(n))
		}
		b = b[n:]
		if typ == protowire.StartGroupType || typ == protowire.EndGroupType {
			continue
		}
		if err := f(num, typ, v, val); err != nil {
			return err
		}
	}
	return nil
}

// Decode parses the bytes of a .onnx file.
func Decode(data []byte) (*Model, error) {
	m := &Model{Opsets: map[string]int64{}}
	var graph []byte
	err := walk("ModelProto", data, func(num protowire.Number, typ protowire.Type, v uint64, b []byte) error {
		switch {
		case num == 1 && typ == protowire.VarintType:
			m.IRVersion = int64(v)
		case num == 7 && typ == protowire.BytesType:
			graph = b
		case num == 8 && typ == protowire.BytesType:
			var domain string
			var version int64
			if err := walk("OperatorSetIdProto", b, func(num protowire.Number, typ protowire.Type, v uint64, b []byte) error {
				switch {
				case num == 1 && typ == protowire.BytesType:
					domain = string(b)
				case num == 2 && typ == protowire.VarintType:
					version = int64(v)
				}
				return nil
			}); err != nil {
				return err
			}
			m.Opsets[domain] = version
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if graph == nil {
		return nil, errors.New("onnx: decode: the model has no graph (not an ONNX model file?)")
	}
	if err := m.Graph.decode(graph); err != nil {
		return nil, err
	}
	if len(m.Graph.Nodes) == 0 || len(m.Graph.Outputs) == 0 {
		return nil, errors.Errorf("onnx: decode: graph %q has %d nodes and %d outputs: nothing to import", m.Graph.Name, len(m.Graph.Nodes), len(m.Graph.Outputs))
	}
	if _, ok := m.Opsets[""]; !ok {
		if v, ok := m.Opsets["ai.onnx"]; ok {
			m.Opsets[""] = v
		} else {
			return nil, errors.New("onnx: decode: the model imports no version of the default operator set")
		}
	}
	return m, nil
}

func (g *Graph) decode(b []byte) error {
	return walk("GraphProto", b, func(num protowire.Number, typ protowire.Type, v uint64, b []byte) error {
		if typ != protowire.BytesType {
			return nil
		}
		switch num {
		case 1:
			n, err := decodeNode(b)
			if err != nil {
				return err
			}
			g.Nodes = append(g.Nodes, n)
		case 2:
			g.Name = string(b)
		case 5:
			t, err := decodeTensor(b)
			if err != nil {
				return err
			}
			g.Initializer = append(g.Initializer, *t)
		case 11, 12:
			vi, err := decodeValueInfo(b)
			if err != nil {
				return err
			}
			if num == 11 {
				g.Inputs = append(g.Inputs, vi)
			} else {
				g.Outputs = append(g.Outputs, vi)
			}
		}
		return nil
	})
}

func decodeNode(b []byte) (Node, error) {
	n := Node{Attrs: map[string]Attr{}}
	err := walk("NodeProto", b, func(num protowire.Number, typ protowire.Type, v uint64, b []byte) error {
		if typ != protowire.BytesType {
			return nil
		}
		switch num {
		case 1:
			n.Inputs = append(n.Inputs, string(b))
		case 2:
			n.Outputs = append(n.Outputs, string(b))
		case 3:
			n.Name = string(b)
		case 4:
			n.OpType = string(b)
		case 5:
			name, a, err := decodeAttr(b)
			if err != nil {
				return err
			}
			n.Attrs[name] = a
		case 7:
			n.Domain = string(b)
		}
		return nil
	})
	return n, err
}

func decodeAttr(b []byte) (string, Attr, error) {
	var name string
	var a Attr
	err := walk("AttributeProto", b, func(num protowire.Number, typ protowire.Type, v uint64, b []byte) error {
		switch {
		case num == 1 && typ == protowire.BytesType:
			name = string(b)
		case num == 2 && typ == protowire.Fixed32Type:
			a.F = float64(math.Float32frombits(uint32(v)))
		case num == 3 && typ == protowire.VarintType:
			a.I = int64(v)
		case num == 4 && typ == protowire.BytesType:
			a.S = string(b)
		case num == 5 && typ == protowire.BytesType:
			t, err := decodeTensor(b)
			if err != nil {
				return err
			}
			a.T = t
		case num == 7: // floats: packed or not
			fs, err := fixed32s(typ, v, b)
			if err != nil {
				return err
			}
			a.Floats = append(a.Floats, fs...)
		case num == 8:
			is, err := varints(typ, v, b)
			if err != nil {
				return err
			}
			a.Ints = append(a.Ints, is...)
		case num == 9 && typ == protowire.BytesType:
			a.Strings = append(a.Strings, string(b))
		case num == 20 && typ == protowire.VarintType:
			a.Type = int64(v)
		}
		return nil
	})
	return name, a, err
}

func decodeTensor(b []byte) (*Tensor, error) {
	t := &Tensor{}
	var raw []byte
	var f32 []float64
	err := walk("TensorProto", b, func(num protowire.Number, typ protowire.Type, v uint64, b []byte) error {
		switch num {
		case 1:
			is, err := varints(typ, v, b)
			if err != nil {
				return err
			}
			t.Dims = append(t.Dims, is...)
		case 2:
			t.DataType = int64(v)
		case 4:
			fs, err := fixed32s(typ, v, b)
			if err != nil {
				return err
			}
			f32 = append(f32, fs...)
		case 5, 7: // int32_data (also bool), int64_data
			is, err := varints(typ, v, b)
			if err != nil {
				return err
			}
			for _, x := range is {
				if num == 5 {
					x = int64(int32(x))
				}
				t.Ints = append(t.Ints, x)
			}
		case 8:
			t.Name = string(b)
		case 9:
			raw = b
		case 10:
			ds, err := fixed64s(typ, v, b)
			if err != nil {
				return err
			}
			t.Floats = append(t.Floats, ds...)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	n := int64(1)
	for _, d := range t.Dims {
		if d < 0 || d > maxElems || n*d > maxElems {
			return nil, errors.Errorf("onnx: decode: tensor %q has dims %v (at most %d elements)", t.Name, t.Dims, maxElems)
		}
		n *= d
	}
	if t.DataType == dtFloat && len(f32) > 0 {
		t.Floats = f32
	}
	if raw != nil {
		if err := t.fromRaw(raw, n); err != nil {
			return nil, err
		}
	}
	got := int64(len(t.Floats) + len(t.Ints))
	if (t.DataType == dtFloat || t.DataType == dtDouble) != (len(t.Ints) == 0) && got > 0 {
		// the values are in the fields of the other kind (int64_data of a FLOAT tensor)
		return nil, errors.Errorf("onnx: decode: tensor %q (%s, dims %v) holds %d float and %d integer values", t.Name, typeName(t.DataType), t.Dims, len(t.Floats), len(t.Ints))
	}
	if got != n {
		return nil, errors.Errorf("onnx: decode: tensor %q (%s, dims %v) holds %d values, want %d", t.Name, typeName(t.DataType), t.Dims, got, n)
	}
	return t, nil
}

func (t *Tensor) fromRaw(raw []byte, n int64) error {
	size := map[int64]int64{dtFloat: 4, dtDouble: 8, dtInt32: 4, dtInt64: 8, dtBool: 1}[t.DataType]
	if size == 0 {
		return errors.Errorf("onnx: decode: tensor %q has data type %s; supported: FLOAT, DOUBLE, INT32, INT64, BOOL", t.Name, typeName(t.DataType))
	}
	if int64(len(raw)) != n*size {
		return errors.Errorf("onnx: decode: tensor %q: %d bytes of raw data for %d values of %d bytes", t.Name, len(raw), n, size)
	}
	le := binary.LittleEndian
	for i := int64(0); i < n; i++ {
		p := raw[i*size:]
		switch t.DataType {
		case dtFloat:
			t.Floats = append(t.Floats, float64(math.Float32frombits(le.Uint32(p))))
		case dtDouble:
			t.Floats = append(t.Floats, math.Float64frombits(le.Uint64(p)))
		case dtInt32:
			t.Ints = append(t.Ints, int64(int32(le.Uint32(p))))
		case dtInt64:
			t.Ints = append(t.Ints, int64(le.Uint64(p)))
		case dtBool:
			t.Ints = append(t.Ints, int64(p[0]))
		}
	}
	return nil
}

func decodeValueInfo(b []byte) (ValueInfo, error) {
	vi := ValueInfo{ElemType: dtFloat}
	err := walk("ValueInfoProto", b, func(num protowire.Number, typ protowire.Type, v uint64, b []byte) error {
		switch {
		case num == 1 && typ == protowire.BytesType:
			vi.Name = string(b)
		case num == 2 && typ == protowire.BytesType: // TypeProto
			return walk("TypeProto", b, func(num protowire.Number, typ protowire.Type, v uint64, b []byte) error {
				if num != 1 || typ != protowire.BytesType { // tensor_type
					return nil
				}
				return walk("TypeProto.Tensor", b, func(num protowire.Number, typ protowire.Type, v uint64, b []byte) error {
					switch {
					case num == 1 && typ == protowire.VarintType:
						vi.ElemType = int64(v)
					case num == 2 && typ == protowire.BytesType:
						return walk("TensorShapeProto", b, func(num protowire.Number, typ protowire.Type, v uint64, b []byte) error {
							if num != 1 || typ != protowire.BytesType {
								return nil
							}
							d := int64(-1)
							err := walk("Dimension", b, func(num protowire.Number, typ protowire.Type, v uint64, b []byte) error {
								if num == 1 && typ == protowire.VarintType {
									d = int64(v)
								}
								return nil
							})
							vi.Shape = append(vi.Shape, d)
							return err
						})
					}
					return nil
				})
			})
		}
		return nil
	})
	return vi, err
}

// varints reads a repeated varint field, packed (bytes) or not (one value).
func varints(typ protowire.Type, v uint64, b []byte) ([]int64, error) {
	if typ == protowire.VarintType {
		return []int64{int64(v)}, nil
	}
	if typ != protowire.BytesType {
		return nil, errors.New("onnx: decode: repeated integer field with a wrong wire type")
	}
	var out []int64
	for len(b) > 0 {
		x, n := protowire.ConsumeVarint(b)
		if n < 0 {
			return nil, errors.New("onnx: decode: truncated packed integers")
		}
		out = append(out, int64(x))
		b = b[n:]
		if len(out) > maxElems {
			return nil, errors.New("onnx: decode: too many packed integers")
		}
	}
	return out, nil
}

func fixed32s(typ protowire.Type, v uint64, b []byte) ([]float64, error) {
	if typ == protowire.Fixed32Type {
		return []float64{float64(math.Float32frombits(uint32(v)))}, nil
	}
	if typ != protowire.BytesType || len(b)%4 != 0 {
		return nil, errors.New("onnx: decode: repeated float field with a wrong wire type or length")
	}
	out := make([]float64, len(b)/4)
	for i := range out {
		out[i] = float64(math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:])))
	}
	return out, nil
}

func fixed64s(typ protowire.Type, v uint64, b []byte) ([]float64, error) {
	if typ == protowire.Fixed64Type {
		return []float64{math.Float64frombits(v)}, nil
	}
	if typ != protowire.BytesType || len(b)%8 != 0 {
		return nil, errors.New("onnx: decode: repeated double field with a wrong wire type or length")
	}
	out := make([]float64, len(b)/8)
	for i := range out {
		out[i] = math.Float64frombits(binary.LittleEndian.Uint64(b[8*i:]))
	}
	return out, nil
}
