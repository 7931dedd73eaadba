package bulkad

import (
	"os"

	"github.com/bulkad/bulkad/core"
	"github.com/bulkad/bulkad/onnx"
	"github.com/bulkad/bulkad/raise"
	"github.com/pkg/errors"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// ONNXModel is a model imported from ONNX as an ordinary Gorgonia graph: its inputs are input
// nodes (give them values with gorgonia.Let), its float initializers are parameter nodes
// holding their values (learnable: pass them to bulkad.Grad and a Solver), its outputs are
// nodes. Add a loss with Gorgonia ops and differentiate it like any other graph.
type ONNXModel struct {
	Graph *gorgonia.ExprGraph
	// Inputs, Params and Outputs are the nodes, in the order of the names beside them.
	Inputs, Params, Outputs             gorgonia.Nodes
	InputNames, ParamNames, OutputNames []string
	// Opset is the version of the default ONNX operator set the model was exported with.
	Opset int64
	// Program is the model as a core program (inputs and parameters as its parameters).
	Program *onnx.Program

	source []byte // the ONNX file's bytes (see Encode)
}

// Param returns the parameter node of the initializer called name, or nil.
func (m *ONNXModel) Param(name string) *gorgonia.Node {
	for i, n := range m.ParamNames {
		if n == name {
			return m.Params[i]
		}
	}
	return nil
}

// inputZero is the zero tensor (false for Bool) of dtype dt and shape sh (a scalar for rank 0).
func inputZero(dt tensor.Dtype, sh []int) *tensor.Dense {
	if len(sh) == 0 {
		switch dt {
		case tensor.Float32:
			return tensor.New(tensor.FromScalar(float32(0)))
		case tensor.Int64:
			return tensor.New(tensor.FromScalar(int64(0)))
		case tensor.Bool:
			return tensor.New(tensor.FromScalar(false))
		}
		return tensor.New(tensor.FromScalar(0.0))
	}
	return tensor.New(tensor.Of(dt), tensor.WithShape(sh...))
}

// ImportONNXFile is ImportONNX of a .onnx file's bytes.
func ImportONNXFile(path string) (*ONNXModel, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, errors.Wrap(err, "bulkad: import onnx")
	}
	m, err := ImportONNX(data)
	if err != nil {
		return nil, errors.Wrapf(err, "%s", path)
	}
	return m, nil
}

// ImportONNX decodes an ONNX model (the bytes of a .onnx file, float or double, static shapes,
// default operator set 7–18; onnx.SupportedOps lists the operators) and builds it in a new
// Gorgonia graph: the model is lowered into the core language (package onnx) and raised into
// Gorgonia nodes (package raise), so its operators run bulkad's kernels and bulkad.Grad
// differentiates through them. Input nodes start at zero (false). A float input node has the
// model's float type; an int64 or int32 ONNX input (token ids of an embedding) is an Int64
// node and a bool input (an attention or padding mask) a Bool node: give them values with
// gorgonia.Let of an Int64 or Bool tensor. They are not differentiable.
//
// The model becomes one plan node that runs it whole (its activations kept in the node's
// value, where bulkad.Grad's gradient reads them) and one node per output, whatever the
// model's size; with BULKAD_RAISE=ops (RaiseEnv) it becomes one node per operation instead.
func ImportONNX(data []byte) (*ONNXModel, error) { return Options{}.ImportONNX(data) }

// ImportONNX is the package-level ImportONNX with the device and granularity of o.
func (o Options) ImportONNX(data []byte) (*ONNXModel, error) {
	md, err := onnx.Decode(data)
	if err != nil {
		return nil, wrapOnce(err, "import onnx")
	}
	p, err := onnx.Lower(md)
	if err != nil {
		return nil, wrapOnce(err, "import onnx")
	}
	g := gorgonia.NewGraph()
	out := &ONNXModel{source: append([]byte(nil), data...), Graph: g, Opset: p.Opset, Program: p, InputNames: p.Inputs, ParamNames: p.Params, OutputNames: p.Outputs}
	dt := tensor.Float64
	if p.Dtype.String() == "f32" {
		dt = tensor.Float32
	}
	bind := map[string]*gorgonia.Node{}
	// node makes an input or parameter node of dtype dt holding val. A rank-0 one is a
	// Gorgonia scalar, whose value must be a scalar value (*F64, *F32, …): Gorgonia's own ops
	// reject a rank-0 *tensor.Dense there ("Unhandled Scalar Type", "Type Mismatch: float64 !=
	// Tensor-0").
	node := func(name string, dt tensor.Dtype, shape []int, val *tensor.Dense) *gorgonia.Node {
		if len(shape) == 0 {
			return gorgonia.NewScalar(g, dt, gorgonia.WithName(name), gorgonia.WithValue(scalarValue(dt, val)))
		}
		return gorgonia.NewTensor(g, dt, len(shape), gorgonia.WithShape(shape...), gorgonia.WithName(name), gorgonia.WithValue(val))
	}
	for i, v := range p.InputVars {
		sh := []int(v.Type().Shape)
		idt := dt // float inputs have the model's type; integer and boolean inputs their own
		switch v.Type().Dtype {
		case core.Int64:
			idt = tensor.Int64
		case core.Bool:
			idt = tensor.Bool
		}
		n := node(p.Inputs[i], idt, sh, inputZero(idt, sh))
		bind[v.Name] = n
		out.Inputs = append(out.Inputs, n)
	}
	for i, v := range p.ParamVars {
		n := node(p.Params[i], dt, []int(v.Type().Shape), p.Values[p.Params[i]])
		bind[v.Name] = n
		out.Params = append(out.Params, n)
	}
	dev, coarse, err := o.resolve()
	if err != nil {
		return nil, wrapOnce(err, "import onnx")
	}
	comps := make([]int, len(p.Outputs))
	for i := range comps {
		comps[i] = i
	}
	// Coarse: one plan node runs the whole model and keeps its activations (Tape), which the
	// gradient of a loss on the outputs reads instead of recomputing them.
	if out.Outputs, err = raise.RaiseWith(g, p.Prog, bind, raise.Options{FreshResults: true, Components: comps, Vulkan: dev,
		Coarse: coarse, Tape: coarse}); err != nil {
		return nil, wrapOnce(err, "import onnx")
	}
	return out, nil
}

// scalarValue is the Gorgonia scalar value of dtype dt holding a rank-0 (or one-element)
// tensor's element, 0 for nil.
func scalarValue(dt tensor.Dtype, d *tensor.Dense) gorgonia.Value {
	var x float64
	if d != nil {
		switch v := d.Data().(type) {
		case float64:
			x = v
		case float32:
			x = float64(v)
		case []float64:
			x = v[0]
		case []float32:
			x = float64(v[0])
		case int64:
			return gorgonia.NewI64(v)
		case []int64:
			return gorgonia.NewI64(v[0])
		case bool:
			return gorgonia.NewB(v)
		case []bool:
			return gorgonia.NewB(v[0])
		}
	}
	switch dt {
	case tensor.Float32:
		return gorgonia.NewF32(float32(x))
	case tensor.Int64:
		return gorgonia.NewI64(int64(x))
	case tensor.Bool:
		return gorgonia.NewB(x != 0)
	}
	return gorgonia.NewF64(x)
}
