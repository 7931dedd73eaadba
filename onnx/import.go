package onnx

import (
	"fmt"
	"sort"
	"strings"

	"github.com/bulkad/bulkad/core"
	"github.com/pkg/errors"
	"gorgonia.org/tensor"
)

// Program is an ONNX model lowered into the core language.
type Program struct {
	// Prog's parameters are the graph inputs (Inputs) followed by the float initializers
	// (Params); its body is the tuple of the graph outputs (Outputs order). A graph input is
	// of the model's float type, or i64 (ONNX int64 and int32 inputs, such as token ids) or
	// bool (masks): InputVars' types say which.
	Prog *core.Program
	// Inputs, Params and Outputs are the ONNX names; InputVars and ParamVars the matching
	// parameters of Prog.
	Inputs, Params, Outputs []string
	InputVars, ParamVars    []*core.Var
	// Values holds each float initializer's value (by ONNX name), in the model's dtype.
	Values map[string]*tensor.Dense
	// Dtype is the model's float type.
	Dtype core.Dtype
	// Opset is the version of the default operator set.
	Opset int64
}

// value is what an ONNX name denotes while lowering: a term (of the model's float type, or
// i64 or bool where it comes from an integer or boolean graph input), or a constant known at
// import time (integer and boolean tensors such as shapes, axes, indices and masks; float
// constants).
type value struct {
	t      core.Term // nil for a constant
	ints   []int64   // an integer or boolean (0 or 1) constant (isInt)
	floats []float64 // a float constant (isFloat)
	dims   []int64   // the constant's shape
	isInt  bool
	isF    bool
	isBool bool // a boolean constant (isInt is set too)
}

// ctx is the state of one lowering.
type ctx struct {
	dt     core.Dtype
	opset  int64
	env    map[string]value
	lets   []*core.Var
	bounds []core.Term
	used   map[string]bool
	n      int
	// initVals holds the values of float initializers by their core parameter name, for
	// operators that need a constant (Clip's bounds, Pow's exponent).
	initVals map[string][]float64
}

// Lower turns a decoded model into a core program. Every graph input and float initializer
// becomes a parameter (initializers that are only shapes, axes or indices stay constants);
// nodes become let-bound terms through package lower.
func Lower(m *Model) (*Program, error) {
	if m == nil {
		return nil, errors.New("onnx: lower: nil model")
	}
	p := &Program{Values: map[string]*tensor.Dense{}, Opset: m.Opsets[""]}
	if p.Opset < 7 || p.Opset > 18 {
		return nil, errors.Errorf("onnx: lower: default operator set version %d; supported: 7 to 18", p.Opset)
	}
	c := &ctx{opset: p.Opset, env: map[string]value{}, used: map[string]bool{}, initVals: map[string][]float64{}}
	init := map[string]*Tensor{}
	for i := range m.Graph.Initializer {
		t := &m.Graph.Initializer[i]
		init[t.Name] = t
	}
	// The model's float type: the first float graph input, else the first float initializer.
	for _, in := range m.Graph.Inputs {
		if init[in.Name] == nil && (in.ElemType == dtFloat || in.ElemType == dtDouble) {
			c.dt = dtypeOf(in.ElemType)
			break
		}
	}
	if c.dt == core.InvalidDtype {
		for _, t := range m.Graph.Initializer {
			if t.DataType == dtFloat || t.DataType == dtDouble {
				c.dt = dtypeOf(t.DataType)
				break
			}
		}
	}
	if c.dt == core.InvalidDtype {
		return nil, errors.New("onnx: lower: the model has no float input or initializer (supported element types: float, double)")
	}
	p.Dtype = c.dt
	var params []*core.Var
	for _, in := range m.Graph.Inputs {
		if init[in.Name] != nil {
			continue // older exporters list initializers among the inputs
		}
		dt := c.dt
		switch in.ElemType {
		case dtFloat, dtDouble:
		case dtInt64, dtInt32:
			dt = core.Int64
		case dtBool:
			dt = core.Bool
		default:
			return nil, errors.Errorf("onnx: lower: graph input %q has element type %s; supported: FLOAT, DOUBLE, INT64, INT32 and BOOL", in.Name, typeName(in.ElemType))
		}
		for i, d := range in.Shape {
			if d <= 0 {
				return nil, errors.Errorf("onnx: lower: graph input %q has shape %v: dimension %d is not fixed (bulkad needs static shapes; export with fixed sizes)", in.Name, in.Shape, i)
			}
		}
		v, err := c.param("input", in.Name, core.Type{Shape: shapeOfDims(in.Shape), Dtype: dt}, &params)
		if err != nil {
			return nil, err
		}
		p.Inputs = append(p.Inputs, in.Name)
		p.InputVars = append(p.InputVars, v)
	}
	for _, t := range m.Graph.Initializer {
		switch t.DataType {
		case dtFloat, dtDouble:
			sh := shapeOfDims(t.Dims)
			v, err := c.param("initializer", t.Name, core.Type{Shape: sh, Dtype: c.dt}, &params)
			if err != nil {
				return nil, err
			}
			p.Params = append(p.Params, t.Name)
			p.ParamVars = append(p.ParamVars, v)
			p.Values[t.Name] = denseOf(c.dt, sh, t.Floats)
			c.initVals[v.Name] = t.Floats
		case dtInt32, dtInt64, dtBool:
			c.env[t.Name] = value{ints: t.Ints, dims: t.Dims, isInt: true, isBool: t.DataType == dtBool}
		default:
			return nil, errors.Errorf("onnx: lower: initializer %q has data type %s; supported: FLOAT, DOUBLE, INT32, INT64, BOOL", t.Name, typeName(t.DataType))
		}
	}
	if err := unsupported(m.Graph.Nodes, c.opset); err != nil {
		return nil, err
	}
	for i := range m.Graph.Nodes {
		n := &m.Graph.Nodes[i]
		// shape arithmetic and other computations on constants are folded here (fold.go);
		// everything else is lowered by the operator tables
		done, err := c.early(n)
		if err == nil && !done {
			err = c.node(n)
		}
		if err != nil {
			return nil, errors.Wrapf(err, "onnx: %s", nodeLabel(n, c.opset))
		}
	}
	var outs []core.Term
	for _, o := range m.Graph.Outputs {
		v, ok := c.env[o.Name]
		if !ok {
			return nil, errors.Errorf("onnx: lower: graph output %q is computed by no node", o.Name)
		}
		t, err := c.term(v)
		if err != nil {
			return nil, errors.Wrapf(err, "onnx: lower: graph output %q", o.Name)
		}
		if (o.ElemType == dtFloat || o.ElemType == dtDouble) && !t.Type().Dtype.IsFloat() {
			// the output node would have the wrong dtype: refuse rather than raise it
			return nil, errors.Errorf("onnx: lower: graph output %q is declared %s but lowers to %v (shape %v)", o.Name, typeName(o.ElemType), t.Type().Dtype, shapeOf(t))
		}
		outs = append(outs, t)
		p.Outputs = append(p.Outputs, o.Name)
	}
	body, err := core.NewTuple(outs)
	if err != nil {
		return nil, errors.Wrap(err, "onnx: lower: outputs")
	}
	var b core.Term = body
	for i := len(c.lets) - 1; i >= 0; i-- {
		if b, err = core.NewLet(c.lets[i], c.bounds[i], b); err != nil {
			return nil, errors.Wrap(err, "onnx: lower")
		}
	}
	if p.Prog, err = core.NewProgram(params, b); err != nil {
		return nil, errors.Wrap(err, "onnx: lower: the program")
	}
	return p, nil
}

// nodeLabel names a node in messages: node "name" (OpType, opset N), the name being the
// node's or, without one, its first output's.
func nodeLabel(n *Node, opset int64) string {
	name := n.Name
	if name == "" && len(n.Outputs) > 0 {
		name = n.Outputs[0]
	}
	if n.Domain != "" && n.Domain != "ai.onnx" {
		return fmt.Sprintf("node %q (%s, domain %s, opset %d)", name, n.OpType, n.Domain, opset)
	}
	return fmt.Sprintf("node %q (%s, opset %d)", name, n.OpType, opset)
}

// unsupported is an error listing every operator type of the graph that the importer does
// not lower (of another domain, or outside SupportedOps), each with its number of nodes and
// its first node, or nil when there is none: a model is refused once, with all it lacks.
func unsupported(nodes []Node, opset int64) error {
	type use struct {
		first *Node
		n     int
	}
	uses := map[string]*use{}
	var keys []string
	for i := range nodes {
		n := &nodes[i]
		key := n.OpType
		if n.Domain != "" && n.Domain != "ai.onnx" {
			key = n.Domain + "." + n.OpType
		} else if _, ok := lookupOp(n.OpType); ok {
			continue
		}
		if u := uses[key]; u != nil {
			u.n++
			continue
		}
		uses[key] = &use{first: n, n: 1}
		keys = append(keys, key)
	}
	if len(keys) == 0 {
		return nil
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s ×%d (first: %s)", k, uses[k].n, nodeLabel(uses[k].first, opset))
	}
	what := fmt.Sprintf("%d operator types are", len(keys))
	if len(keys) == 1 {
		what = "1 operator type is"
	}
	return errors.Errorf("onnx: lower: %s not supported (onnx.SupportedOps() lists the %d supported operators, all of the default ONNX domain): %s",
		what, opCount(), strings.Join(parts, "; "))
}

// fresh makes a core identifier from an ONNX name, unique in this lowering.
func (c *ctx) fresh(name string) string {
	var b strings.Builder
	for _, r := range name {
		if r < 128 && (r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	s := strings.Trim(b.String(), "_")
	if s == "" || s[0] >= '0' && s[0] <= '9' {
		s = "v_" + s
	}
	for c.used[s] {
		c.n++
		s = fmt.Sprintf("%s_%d", strings.TrimRight(s, "0123456789_"), c.n)
	}
	c.used[s] = true
	return s
}

// bind names a node output: a float term becomes a let-bound variable.
// param makes the parameter for a graph input or float initializer (what: "input" or
// "initializer") of type t, appends it to params and binds name to it.
func (c *ctx) param(what, name string, t core.Type, params *[]*core.Var) (*core.Var, error) {
	v, err := core.NewVar(c.fresh(name), t)
	if err != nil {
		return nil, errors.Wrapf(err, "onnx: lower: %s %q", what, name)
	}
	*params = append(*params, v)
	c.env[name] = value{t: v}
	return v, nil
}

func (c *ctx) bind(name string, v value) error {
	if v.t != nil {
		lv, err := core.NewVar(c.fresh(name), v.t.Type())
		if err != nil {
			return err
		}
		c.lets = append(c.lets, lv)
		c.bounds = append(c.bounds, v.t)
		v = value{t: lv}
	}
	c.env[name] = v
	return nil
}

// term is a value as a term: a float constant, or an integer constant used as a float,
// becomes a float literal of the model's type; a boolean constant a bool literal.
func (c *ctx) term(v value) (core.Term, error) {
	switch {
	case v.t != nil:
		return v.t, nil
	case v.isBool:
		return c.typedTerm(v)
	case v.isF || v.isInt:
		xs := v.floats
		if v.isInt {
			xs = make([]float64, len(v.ints))
			for i, x := range v.ints {
				xs[i] = float64(x)
			}
		}
		return core.NewLitF(core.Type{Shape: shapeOfDims(v.dims), Dtype: c.dt}, xs)
	}
	return nil, errors.New("empty value")
}

// typedTerm is a value as a term of its own type: an integer constant becomes an i64
// literal, a boolean constant a bool literal, a float constant a literal of the model's type.
func (c *ctx) typedTerm(v value) (core.Term, error) {
	switch {
	case v.t != nil:
		return v.t, nil
	case v.isBool:
		bs := make([]bool, len(v.ints))
		for i, x := range v.ints {
			bs[i] = x != 0
		}
		return core.NewLitB(shapeOfDims(v.dims), bs)
	case v.isInt:
		return core.NewLitI(shapeOfDims(v.dims), v.ints)
	}
	return c.term(v)
}

// shapeOfDims is an ONNX tensor's dims as a shape.
func shapeOfDims(dims []int64) core.Shape {
	sh := make(core.Shape, len(dims))
	for i, d := range dims {
		sh[i] = int(d)
	}
	return sh
}

func dtypeOf(onnxType int64) core.Dtype {
	switch onnxType {
	case dtFloat:
		return core.Float32
	case dtDouble:
		return core.Float64
	}
	return core.InvalidDtype
}

func denseOf(dt core.Dtype, sh core.Shape, xs []float64) *tensor.Dense {
	shape := []int(sh)
	if dt == core.Float32 {
		f := make([]float32, len(xs))
		for i, x := range xs {
			f[i] = float32(x)
		}
		if len(shape) == 0 {
			return tensor.New(tensor.FromScalar(f[0]))
		}
		return tensor.New(tensor.WithShape(shape...), tensor.WithBacking(f))
	}
	if len(shape) == 0 {
		return tensor.New(tensor.FromScalar(xs[0]))
	}
	return tensor.New(tensor.WithShape(shape...), tensor.WithBacking(append([]float64(nil), xs...)))
}

// SupportedOps lists the ONNX operators the importer lowers, sorted.
func SupportedOps() []string {
	out := make([]string, 0, opCount())
	for _, t := range opTables() {
		for k := range t {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

// constFloats returns the values of a float constant or of a float initializer.
func (c *ctx) constFloats(v value) ([]float64, bool) {
	switch {
	case v.isF:
		return v.floats, true
	case v.isInt:
		out := make([]float64, len(v.ints))
		for i, x := range v.ints {
			out[i] = float64(x)
		}
		return out, true
	}
	if x, ok := v.t.(*core.Var); ok {
		vals, ok := c.initVals[x.Name]
		return vals, ok
	}
	return nil, false
}
