package bulkad

import (
	"os"

	"github.com/bulkad/bulkad/onnx"
	"github.com/pkg/errors"
	"gorgonia.org/tensor"
)

// Encode returns the imported ONNX model with every parameter (initializer) holding its
// node's current value, so a model trained or fine-tuned in Go goes back to PyTorch or any
// ONNX runtime: the rest of the file (graph, operators, opsets, other initializers) is the
// one imported, byte for byte.
func (m *ONNXModel) Encode() ([]byte, error) {
	if m == nil || m.source == nil {
		return nil, errors.New("bulkad: onnx encode: the model was not made by ImportONNX")
	}
	values := make(map[string]any, len(m.Params))
	for i, n := range m.Params {
		v := n.Value()
		if v == nil {
			return nil, errors.Errorf("bulkad: onnx encode: parameter %s has no value", m.ParamNames[i])
		}
		switch d := v.Data().(type) {
		case []float64:
			values[m.ParamNames[i]] = append([]float64(nil), d...)
		case []float32:
			values[m.ParamNames[i]] = append([]float32(nil), d...)
		case float64:
			values[m.ParamNames[i]] = []float64{d}
		case float32:
			values[m.ParamNames[i]] = []float32{d}
		default:
			return nil, errors.Errorf("bulkad: onnx encode: parameter %s holds %T, want float32 or float64 data", m.ParamNames[i], v.Data())
		}
		if dn, ok := v.(*tensor.Dense); ok && dn.RequiresIterator() {
			return nil, errors.Errorf("bulkad: onnx encode: parameter %s holds a view; give it a dense value", m.ParamNames[i])
		}
	}
	out, err := onnx.SetInitializers(m.source, values)
	if err != nil {
		return nil, wrapOnce(err, "onnx encode")
	}
	return out, nil
}

// Save writes Encode's bytes to path.
func (m *ONNXModel) Save(path string) error {
	b, err := m.Encode()
	if err != nil {
		return err
	}
	return errors.Wrap(os.WriteFile(path, b, 0o644), "bulkad: onnx save")
}
