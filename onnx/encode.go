package onnx

import (
	"encoding/binary"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/pkg/errors"
	"google.golang.org/protobuf/encoding/protowire"
)

// Field numbers of the ONNX schema that SetInitializers rewrites.
const (
	fieldModelGraph        = 7 // ModelProto.graph
	fieldGraphInitializer  = 5 // GraphProto.initializer
	fieldTensorDims        = 1 // TensorProto.dims
	fieldTensorDataType    = 2 // TensorProto.data_type
	fieldTensorName        = 8 // TensorProto.name
	fieldTensorRawData     = 9 // TensorProto.raw_data
	fieldTensorDataLoc     = 14
	dataLocationExternal   = 1
	maxInitializerElements = maxElems
)

// SetInitializers returns a copy of the ONNX model data in which each float initializer named
// in values holds the given elements: a []float32 for a FLOAT initializer, a []float64 for a
// DOUBLE one, as many elements as its dims say (row-major, as ONNX stores them). Every other
// byte of the model is kept: the graph, its nodes, the other initializers, the opset imports
// and metadata. This is how a model fine-tuned in Go goes back to PyTorch or any ONNX runtime.
// A name that is not a float initializer of the model, a wrong element type or length, or an
// initializer stored as external data is an error naming it.
func SetInitializers(data []byte, values map[string]any) ([]byte, error) {
	done := map[string]bool{}
	out, err := rewrite("model", data, func(num protowire.Number, typ protowire.Type, field []byte) ([]byte, bool, error) {
		if num != fieldModelGraph || typ != protowire.BytesType {
			return nil, false, nil
		}
		g, err := rewrite("graph", field, func(num protowire.Number, typ protowire.Type, t []byte) ([]byte, bool, error) {
			if num != fieldGraphInitializer || typ != protowire.BytesType {
				return nil, false, nil
			}
			nt, ok, err := setTensor(t, values)
			if ok {
				done[tensorName(t)] = true
			}
			return nt, ok, err
		})
		return g, true, err
	})
	if err != nil {
		return nil, err
	}
	var missing []string
	for name := range values {
		if !done[name] {
			missing = append(missing, name)
		}
	}
	if len(missing) > 0 {
		sort.Strings(missing)
		return nil, errors.Errorf("onnx: set initializers: %s: no initializer of that name in the model", strings.Join(missing, ", "))
	}
	return out, nil
}

// rewrite copies the fields of a message, replacing the value of each length-delimited field
// for which f returns true by the bytes it returns (re-encoded with the same field number).
func rewrite(msg string, b []byte, f func(num protowire.Number, typ protowire.Type, field []byte) ([]byte, bool, error)) ([]byte, error) {
	out := make([]byte, 0, len(b))
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return nil, errors.Errorf("onnx: set initializers: %s: bad field tag (%v)", msg, protowire.ParseError(n))
		}
		m := protowire.ConsumeFieldValue(num, typ, b[n:])
		if m < 0 {
			return nil, errors.Errorf("onnx: set initializers: %s: field %d is truncated or malformed (%v)", msg, num, protowire.ParseError(m))
		}
		whole := b[:n+m]
		if typ == protowire.BytesType {
			val, _ := protowire.ConsumeBytes(b[n:])
			nv, replace, err := f(num, typ, val)
			if err != nil {
				return nil, err
			}
			if replace {
				out = protowire.AppendTag(out, num, typ)
				out = protowire.AppendBytes(out, nv)
				b = b[n+m:]
				continue
			}
		}
		out = append(out, whole...)
		b = b[n+m:]
	}
	return out, nil
}

// tensorName reads a TensorProto's name ("" when it has none or is malformed).
func tensorName(t []byte) string {
	name := ""
	_ = walk("tensor", t, func(num protowire.Number, typ protowire.Type, v uint64, b []byte) error {
		if num == fieldTensorName && typ == protowire.BytesType {
			name = string(b)
		}
		return nil
	})
	return name
}

// setTensor returns the TensorProto t with its data replaced by values[name] (as raw_data),
// or false when t's name is not in values.
func setTensor(t []byte, values map[string]any) ([]byte, bool, error) {
	var name string
	var dims []int64
	var dtype int64
	external := false
	err := walk("tensor", t, func(num protowire.Number, typ protowire.Type, v uint64, b []byte) error {
		switch {
		case num == fieldTensorName && typ == protowire.BytesType:
			name = string(b)
		case num == fieldTensorDataType && typ == protowire.VarintType:
			dtype = int64(v)
		case num == fieldTensorDataLoc && typ == protowire.VarintType:
			external = v == dataLocationExternal
		case num == fieldTensorDims && typ == protowire.VarintType:
			dims = append(dims, int64(v))
		case num == fieldTensorDims && typ == protowire.BytesType:
			for len(b) > 0 {
				d, n := protowire.ConsumeVarint(b)
				if n < 0 {
					return errors.New("onnx: set initializers: malformed packed dims")
				}
				dims, b = append(dims, int64(d)), b[n:]
			}
		}
		return nil
	})
	if err != nil {
		return nil, false, err
	}
	val, ok := values[name]
	if !ok {
		return nil, false, nil
	}
	if external {
		return nil, true, errors.Errorf("onnx: set initializers: %s is stored as external data (not supported)", name)
	}
	size := int64(1)
	for _, d := range dims {
		if d < 0 || (d > 0 && size > maxInitializerElements/d) {
			return nil, true, errors.Errorf("onnx: set initializers: %s: bad dims %v", name, dims)
		}
		size *= d
	}
	var raw []byte
	switch x := val.(type) {
	case []float32:
		raw, err = rawData(name, dtype, dims, size, x)
	case []float64:
		raw, err = rawData(name, dtype, dims, size, x)
	default:
		err = errors.Errorf("onnx: set initializers: %s: values of Go type %T, want []float32 or []float64", name, val)
	}
	if err != nil {
		return nil, true, err
	}
	var nt []byte
	for _, d := range dims {
		nt = protowire.AppendTag(nt, fieldTensorDims, protowire.VarintType)
		nt = protowire.AppendVarint(nt, uint64(d))
	}
	nt = protowire.AppendTag(nt, fieldTensorDataType, protowire.VarintType)
	nt = protowire.AppendVarint(nt, uint64(dtype))
	nt = protowire.AppendTag(nt, fieldTensorName, protowire.BytesType)
	nt = protowire.AppendString(nt, name)
	nt = protowire.AppendTag(nt, fieldTensorRawData, protowire.BytesType)
	nt = protowire.AppendBytes(nt, raw)
	return nt, true, nil
}

// rawData is the raw_data field (little-endian) of the values x of initializer name, whose
// element type dtype must be x's (FLOAT or DOUBLE) and whose dims (size elements) must hold
// exactly len(x) values.
func rawData[T float32 | float64](name string, dtype int64, dims []int64, size int64, x []T) ([]byte, error) {
	want, goType := int64(dtDouble), "float64"
	if _, ok := any(x).([]float32); ok {
		want, goType = dtFloat, "float32"
	}
	if dtype != want {
		return nil, errors.Errorf("onnx: set initializers: %s has element type %s, given %s values", name, floatTypeName(dtype), goType)
	}
	if int64(len(x)) != size {
		return nil, errors.Errorf("onnx: set initializers: %s has dims %v (%d elements), given %d", name, dims, size, len(x))
	}
	var raw []byte
	switch v := any(x).(type) {
	case []float32:
		raw = make([]byte, 4*len(v))
		for i, f := range v {
			binary.LittleEndian.PutUint32(raw[4*i:], math.Float32bits(f))
		}
	case []float64:
		raw = make([]byte, 8*len(v))
		for i, f := range v {
			binary.LittleEndian.PutUint64(raw[8*i:], math.Float64bits(f))
		}
	}
	return raw, nil
}

// floatTypeName names the element type of an initializer SetInitializers meets.
func floatTypeName(t int64) string {
	switch t {
	case dtFloat:
		return "FLOAT"
	case dtDouble:
		return "DOUBLE"
	}
	return "element type " + strconv.FormatInt(t, 10) + " (not a float initializer)"
}
