package onnx

import (
	"fmt"
	"sort"
	"strings"
)

// The documentation of every supported operator, rendered by OperatorTable (the table of the
// README). It states what the lowering code does: TestOperatorDocs checks that it covers
// exactly SupportedOps, and TestOperatorDocsAttributes that its attributes are exactly those
// the lowering of each operator reads (a scan of this package's source).

// opDoc documents one supported operator.
type opDoc struct {
	op string
	// versions are the operator's versions in ONNX's changelog up to opset 18 (the opset
	// in which each version of its schema appeared); deprecated is the opset from which ONNX
	// deprecates the operator (0: never).
	versions   []int
	deprecated int
	// attrs are the attributes the lowering reads, each with the values it supports.
	attrs []attrDoc
	// inputs are the inputs the lowering reads, optional ones and what they must be.
	inputs string
	// notes: signature changes within opsets 7–18 and how the lowering follows them,
	// semantics where they matter (kinks, ties, rounding), what is refused.
	notes string
}

// attrDoc is one attribute an operator's lowering reads and the values it supports.
type attrDoc struct {
	name, values string
}

// reduceDoc documents a reduction whose axes become input 1 at opset since (13 for
// ReduceSum, 18 for the others).
func reduceDoc(op string, versions []int, since int, notes string) opDoc {
	return opDoc{op: op, versions: versions,
		attrs: []attrDoc{
			{"axes", fmt.Sprintf("before opset %d: any distinct axes, negative from the end (default: all); from %d the attribute is refused", since, since)},
			{"keepdims", "0 or 1 (default 1)"},
			{"noop_with_empty_axes", fmt.Sprintf("0 or 1 (default 0; opset %d, with the axes input)", since)},
		},
		inputs: fmt.Sprintf("data; from opset %d axes (optional, a constant)", since),
		notes:  strings.TrimSpace(fmt.Sprintf("Opset %d: axes move from the attribute to input 1. %s", since, notes)),
	}
}

// recurrentDoc documents RNN, GRU or LSTM (opRecurrent).
func recurrentDoc(op string, versions []int, acts string, extra []attrDoc, inputs, outputs string) opDoc {
	attrs := []attrDoc{
		{"direction", "forward (default), reverse, bidirectional"},
		{"hidden_size", "positive (default: from W's shape)"},
		{"activations", acts},
		{"activation_alpha", "refused (activations with parameters are not supported)"},
		{"activation_beta", "refused"},
		{"clip", "the input of every activation clipped to [−clip, clip] when positive (default 0: none; negative is refused)"},
		{"layout", "0 only (opset 14; layout 1, batch first, is refused)"},
	}
	return opDoc{op: op, versions: versions, attrs: append(attrs, extra...),
		inputs: "X [T, b, in], W, R; optional B, sequence_lens (a constant equal to T for every sample), initial_h" + inputs,
		notes: "Unrolled over the static sequence length T (lower.Recurrent: one input product for all steps, one recurrent product per step). Outputs " +
			outputs + ". Opset 14 adds layout."}
}

// Shared phrases of the operator documentation.
const (
	docFolded    = "Folded at import time when every input is a constant."
	docCmp       = "A bool result (no derivative). Folded at import time when both inputs are constants (integers compared exactly)."
	docLogic     = "Boolean inputs only (masks), broadcast; a non-boolean input is refused. Folded at import time when both are constants."
	docZeroSlope = "Derivative 0."
	docBinary    = "A, B (NumPy broadcasting)"
)

// convWindowDocs are the attributes of the window of Conv, ConvTranspose and the pooling
// operators (windowND, opConvTranspose).
func convWindowDocs() []attrDoc {
	return []attrDoc{
		{"strides", "positive, one per spatial axis (default 1)"},
		{"dilations", "positive, one per spatial axis (default 1)"},
		{"pads", "non-negative, begin and end values per spatial axis (default 0; read with auto_pad NOTSET)"},
		{"auto_pad", "NOTSET (default), SAME_UPPER, SAME_LOWER (output ⌈in/stride⌉, the odd padding at the end or the beginning), VALID (none)"},
	}
}

// opDocs is the documentation of every supported operator (in no particular order).
func opDocs() []opDoc {
	return append(append(opDocsAToD(), opDocsEToP()...), opDocsRToZ()...)
}

// opDocsAToD documents the operators from Abs to Dropout.
func opDocsAToD() []opDoc {
	return []opDoc{
		{op: "Abs", versions: []int{1, 6, 13}, inputs: "X", notes: "Derivative sign(x), 0 at 0 (as PyTorch). " + docFolded},
		{op: "Add", versions: []int{1, 6, 7, 13, 14}, inputs: docBinary, notes: docFolded},
		{op: "And", versions: []int{1, 7}, inputs: "A, B", notes: docLogic},
		{op: "Atan", versions: []int{7}, inputs: "input", notes: "core's atan (math.Atan); derivative 1/(1+x²)."},
		{op: "AveragePool", versions: []int{1, 7, 10, 11},
			attrs: append([]attrDoc{
				{"kernel_shape", "required; 1, 2 or 3 spatial axes"},
				{"ceil_mode", "0 or 1 (default 0; opset 10)"},
				{"count_include_pad", "0 or 1 (default 0)"},
			}, convWindowDocs()...),
			inputs: "X [b, c, d…] of rank 3 to 5",
			notes: "The divisor counts the window's positions inside the input, and inside its pads too with count_include_pad = 1; the overhang of a ceil_mode window is never counted (as PyTorch). " +
				"dilations are read at every opset (ONNX adds them to AveragePool at 19)."},
		{op: "BatchNormalization", versions: []int{1, 6, 7, 9, 14, 15},
			attrs: []attrDoc{
				{"epsilon", "any (default 1e-5)"},
				{"training_mode", "0 or 1 (default 0; opset 14)"},
			},
			inputs: "X [b, c, …], scale, B, input_mean, input_var (per channel, all required)",
			notes: "Inference: (x − mean)/√(var + ε)·scale + B. Batch statistics (mean and biased variance over the batch and spatial axes) with training_mode = 1, or before opset 14 when the node has more than one output; " +
				"the other outputs (running or saved statistics) are never produced: a model that reads them is refused. momentum is not read; neither is opsets 7–8's spatial (spatial = 0's per-activation parameters fail on their shapes)."},
		{op: "Cast", versions: []int{1, 6, 9, 13},
			attrs:  []attrDoc{{"to", "FLOAT, DOUBLE, INT64, INT32, BOOL"}},
			inputs: "input",
			notes: "Constants are cast at import time (to integers by truncation toward zero, INT32 wrapping to 32 bits); a float initializer cast to an integer or boolean type is folded with its value. " +
				"An array computed at run time converts between the model's float type, integers (INT64 and INT32 both give i64) and BOOL (x ≠ 0); a cast to the other float type is refused, one to the model's float type of a float array is the identity."},
		{op: "Ceil", versions: []int{1, 6, 13}, inputs: "X", notes: docZeroSlope + " " + docFolded},
		{op: "Clip", versions: []int{1, 6, 11, 12, 13},
			attrs: []attrDoc{
				{"min", "any (before opset 11; default: no bound)"},
				{"max", "any (before opset 11; default: no bound)"},
			},
			inputs: "input; from opset 11 min and max (optional, one element each: a float initializer stays a learnable parameter, a constant is a literal)",
			notes: "Opset 11: min and max move from attributes to inputs. min(max(x, min), max): min above max gives max. At a bound x keeps its derivative (torch.clamp); a bound that is a parameter collects the derivative of the elements beyond it. " +
				"PyTorch's relu6 and hardtanh, also exported as Clip, give 0 at the bounds: the importer follows clamp."},
		{op: "Concat", versions: []int{1, 4, 11, 13},
			attrs:  []attrDoc{{"axis", "−r … r−1 (default 0 when absent)"}},
			inputs: "one or more: float arrays, or integer and boolean arrays (each then keeps its type)",
			notes:  docFolded + " Constants must then have one rank and type."},
		{op: "Constant", versions: []int{1, 9, 11, 12, 13},
			attrs: []attrDoc{
				{"value", "a tensor of FLOAT, DOUBLE, INT32, INT64 or BOOL"},
				{"value_float", "any (opset 12)"},
				{"value_floats", "any (opset 12)"},
				{"value_int", "any (opset 12)"},
				{"value_ints", "any (opset 12)"},
			},
			inputs: "none",
			notes:  "An import-time constant (integer and boolean ones stay constants for shape arithmetic; float ones become literals where a term uses them). sparse_value, value_string(s) and tensors of other types are refused."},
		{op: "ConstantOfShape", versions: []int{9},
			attrs:  []attrDoc{{"value", "a one-element tensor of FLOAT, DOUBLE, INT32, INT64 or BOOL (default float 0)"}},
			inputs: "input: a constant 1-D integer shape",
			notes:  "Evaluated at import time (a float fill above 65,536 elements becomes a replicated scalar term); a shape computed at run time is refused."},
		{op: "Conv", versions: []int{1, 11},
			attrs: append([]attrDoc{
				{"kernel_shape", "optional (default: W's spatial shape); 1, 2 or 3 spatial axes"},
				{"group", "any ≥ 1 dividing the input and output channels (W [o, c/group, k…])"},
			}, convWindowDocs()...),
			inputs: "X [b, c, d…] of rank 3 to 5, W; B (optional)",
			notes: "One bulk operation for any group (depthwise included; lower.ConvND, GroupedConv2d in 2-D). Negative pads are refused. " +
				"B is added when it is a graph input, an initializer or computed at run time: a B that is an import-time constant (a Constant node) is ignored."},
		{op: "ConvTranspose", versions: []int{1, 11},
			attrs: []attrDoc{
				{"kernel_shape", "optional (default: W's spatial shape); 1, 2 or 3 spatial axes"},
				{"group", "any ≥ 1 dividing the input channels (W [c, o/group, k…])"},
				{"output_padding", "non-negative, below the stride or the dilation (default 0)"},
				{"output_shape", "spatial sizes (or with batch and channels first), each at most the full transposed convolution's; fixes the pads"},
				convWindowDocs()[0], convWindowDocs()[1],
				{"pads", "begin and end values per spatial axis (default 0; read with auto_pad NOTSET and no output_shape)"},
				{"auto_pad", "NOTSET (default), SAME_UPPER, SAME_LOWER (output in·stride, the odd padding at the end or the beginning), VALID (none)"},
			},
			inputs: "X [b, c, d…] of rank 3 to 5, W; B (optional)",
			notes: "With output_shape the total padding is stride·(in−1) + output_padding + dilation·(k−1) + 1 − output_shape, split evenly with the odd one at the end for SAME_UPPER and at the beginning otherwise; " +
				"SAME_UPPER and SAME_LOWER without it aim at in·stride; VALID pads nothing."},
		{op: "Cos", versions: []int{7}, inputs: "X"},
		{op: "CumSum", versions: []int{11, 14},
			attrs: []attrDoc{
				{"exclusive", "0 or 1 (default 0)"},
				{"reverse", "0 or 1 (default 0)"},
			},
			inputs: "x; axis (a constant of one element)"},
		{op: "Div", versions: []int{1, 6, 7, 13, 14}, inputs: docBinary,
			notes: docFolded + " Integer constants divide with truncation (as ONNX runtimes); a zero integer divisor is an error."},
		{op: "Dropout", versions: []int{1, 6, 7, 10, 12, 13},
			inputs: "data; ratio (not read); training_mode (opset 12; a constant true is refused)",
			notes:  "The identity (inference). Opset 12: ratio moves from the attribute to input 1 and training_mode appears; the ratio and seed attributes are not read, nor a training_mode computed at run time. The mask output is refused."},
	}
}

// opDocsEToP documents the operators from Elu to Pow, GRU and LSTM among them.
func opDocsEToP() []opDoc {
	return []opDoc{
		{op: "Elu", versions: []int{1, 6},
			attrs:  []attrDoc{{"alpha", "any (default 1)"}},
			inputs: "X", notes: "Slope α at 0 and second derivative 0 there (PyTorch's)."},
		{op: "Equal", versions: []int{1, 7, 11, 13}, inputs: docBinary, notes: "Floats compared exactly. " + docCmp},
		{op: "Erf", versions: []int{9, 13}, inputs: "input"},
		{op: "Exp", versions: []int{1, 6, 13}, inputs: "input"},
		{op: "Expand", versions: []int{8, 13}, inputs: "input; shape (a constant)",
			notes: "The NumPy broadcast of the input's shape and shape. " + docFolded},
		{op: "Flatten", versions: []int{1, 9, 11, 13},
			attrs:  []attrDoc{{"axis", "−r … r (default 1)"}},
			inputs: "input", notes: docFolded},
		{op: "Floor", versions: []int{1, 6, 13}, inputs: "X", notes: docZeroSlope + " " + docFolded},
		recurrentDoc("GRU", []int{1, 3, 7, 14}, "Sigmoid, Tanh, Relu: two per direction (default Sigmoid, Tanh)",
			[]attrDoc{{"linear_before_reset", "0 (default) or 1 (PyTorch exports 1)"}}, "", "Y [T, directions, b, hidden] and Y_h [directions, b, hidden]"),
		{op: "Gather", versions: []int{1, 11, 13},
			attrs:  []attrDoc{{"axis", "−r … r−1 (default 0)"}},
			inputs: "data (float, integer or boolean); indices: INT64 or INT32, a constant or an array computed at run time (token ids); float and boolean indices are refused",
			notes: "Indices of any rank. Constant indices are checked (negative ones count from the end; out of range is refused); run-time indices count from the end when negative and read 0 outside [−d, d). " +
				"The derivative with respect to data is a scatter-add (an embedding table). " + docFolded},
		{op: "Gemm", versions: []int{1, 6, 7, 9, 11, 13},
			attrs: []attrDoc{
				{"transA", "0 or 1 (default 0)"},
				{"transB", "0 or 1 (default 0)"},
				{"alpha", "any (default 1)"},
				{"beta", "any (default 1)"},
			},
			inputs: "A, B (matrices); C (optional, as ONNX makes it from opset 11; broadcast to the product)"},
		{op: "GlobalAveragePool", versions: []int{1}, inputs: "X [b, c, d…] with at least one spatial axis"},
		{op: "Greater", versions: []int{1, 7, 9, 13}, inputs: docBinary, notes: docCmp},
		{op: "GreaterOrEqual", versions: []int{12, 16}, inputs: docBinary, notes: docCmp},
		{op: "HardSigmoid", versions: []int{1, 6},
			attrs: []attrDoc{
				{"alpha", "any (default 0.2)"},
				{"beta", "any (default 0.5)"},
			},
			inputs: "X",
			notes:  "max(0, min(1, α·x + β)) with α as written (a float32: PyTorch's 1/6 is 3e-8 relative from its (x + 3)/6); slope α strictly inside (0, 1), 0 at the kinks."},
		{op: "HardSwish", versions: []int{14}, inputs: "X",
			notes: "x·min(max(x + 3, 0), 6)/6, as PyTorch: the middle piece includes −3 and 3 (slopes −½ and 3/2 there)."},
		{op: "Identity", versions: []int{1, 13, 14, 16}, inputs: "input", notes: "Tensors only. " + docFolded},
		{op: "LayerNormalization", versions: []int{17},
			attrs: []attrDoc{
				{"axis", "−r … r−1 (default −1): normalised over axis … r−1"},
				{"epsilon", "any (default 1e-5)"},
				{"stash_type", "1 (default) or 11; the statistics are computed in the model's float type either way (as onnxruntime); others are refused"},
			},
			inputs: "X, Scale; B (optional); Scale and B broadcast to X",
			notes:  "(x − mean)/√(var + ε)·Scale + B with the population variance; outputs Y, Mean and InvStdDev (the normalised axes kept as 1). Accepted at any opset of 7–18."},
		{op: "LeakyRelu", versions: []int{1, 6, 16},
			attrs:  []attrDoc{{"alpha", "any (default 0.01)"}},
			inputs: "X", notes: "Slope α at 0 (PyTorch's)."},
		{op: "Less", versions: []int{1, 7, 9, 13}, inputs: docBinary, notes: docCmp},
		{op: "LessOrEqual", versions: []int{12, 16}, inputs: docBinary, notes: docCmp},
		{op: "Log", versions: []int{1, 6, 13}, inputs: "input"},
		{op: "LogSoftmax", versions: []int{1, 11, 13},
			attrs:  []attrDoc{{"axis", "before opset 13: default 1, the input coerced to 2-D [Π d[:axis], Π d[axis:]]; from 13: default −1, that one axis"}},
			inputs: "input", notes: "Opset 13 changes axis's meaning and default; the lowering follows the model's opset."},
		recurrentDoc("LSTM", []int{1, 7, 14}, "Sigmoid, Tanh, Relu: three per direction (default Sigmoid, Tanh, Tanh)",
			[]attrDoc{{"input_forget", "0 only (default; 1, coupled gates, is refused)"}},
			", initial_c, P (peepholes)", "Y [T, directions, b, hidden], Y_h and Y_c [directions, b, hidden]"),
		{op: "MatMul", versions: []int{1, 9, 13}, inputs: "A, B",
			notes: "NumPy's matmul: vectors, matrices, and stacks of matrices whose batch axes broadcast."},
		{op: "Max", versions: []int{1, 6, 8, 12, 13}, inputs: "one or more (NumPy broadcasting)",
			notes: "The derivative is split evenly among the inputs tied for the maximum (½ each for two, as torch.maximum; 1/k for k). " + docFolded},
		{op: "MaxPool", versions: []int{1, 8, 10, 11, 12},
			attrs: append([]attrDoc{
				{"kernel_shape", "required; 1, 2 or 3 spatial axes"},
				{"ceil_mode", "0 or 1 (default 0; opset 10)"},
				{"storage_order", "0 only (opset 8; 1 is refused)"},
			}, convWindowDocs()...),
			inputs: "X [b, c, d…] of rank 3 to 5",
			notes: "Padding and the overhang of a ceil_mode window are ignored (as PyTorch); the derivative goes to the window's first maximum (row-major), as PyTorch's. " +
				"The Indices output (opset 8) is refused. dilations are ONNX's from opset 10 and read at every opset."},
		{op: "Mean", versions: []int{1, 6, 8, 13}, inputs: "one or more (NumPy broadcasting)"},
		{op: "Min", versions: []int{1, 6, 8, 12, 13}, inputs: "one or more (NumPy broadcasting)",
			notes: "The derivative is split evenly among the inputs tied for the minimum (½ each for two, as torch.minimum; 1/k for k). " + docFolded},
		{op: "Mod", versions: []int{10, 13},
			attrs:  []attrDoc{{"fmod", "0 or 1 (default 0); float operands need 1"}},
			inputs: "A, B: constants only",
			notes:  "Evaluated at import time: the remainder has the divisor's sign with fmod = 0 (Python's %), the dividend's with fmod = 1; a zero integer divisor is an error. Operands computed at run time are refused."},
		{op: "Mul", versions: []int{1, 6, 7, 13, 14}, inputs: docBinary, notes: docFolded},
		{op: "Neg", versions: []int{1, 6, 13}, inputs: "X", notes: docFolded},
		{op: "Not", versions: []int{1}, inputs: "X (boolean)", notes: docFolded},
		{op: "Or", versions: []int{1, 7}, inputs: "A, B", notes: docLogic},
		{op: "Pad", versions: []int{1, 2, 11, 13, 18},
			attrs: []attrDoc{
				{"mode", "constant (default), reflect, edge"},
				{"pads", "before opset 11: begin and end values per axis (required; negative ones crop)"},
				{"value", "before opset 11: any (default 0)"},
			},
			inputs: "data; from opset 11 pads (a constant; negative ones crop), constant_value (optional: a constant or an initializer's value, one element), from 18 axes (optional, a constant)",
			notes:  "Opset 11: pads and value move from attributes to inputs; opset 18 adds axes."},
		{op: "Pow", versions: []int{1, 7, 12, 13, 15}, inputs: "X, Y (NumPy broadcasting)",
			notes: "A constant exponent of one element (not an initializer, which stays a learnable parameter) of 1, 2, 3, 0.5 or −1 is the exact function (x, x², x³, √x, 1/x); other exponents are core's pow. " +
				docFolded + " Integer constants need a non-negative exponent."},
	}
}

// opDocsRToZ documents the operators from Range to Xor, and RNN.
func opDocsRToZ() []opDoc {
	return []opDoc{
		{op: "Range", versions: []int{11}, inputs: "start, limit, delta: constant scalars",
			notes: "Evaluated at import time; operands computed at run time are refused."},
		{op: "Reciprocal", versions: []int{1, 6, 13}, inputs: "X", notes: docFolded},
		reduceDoc("ReduceL1", []int{1, 11, 13, 18}, 18, "Σ abs(x): derivative sign(x), 0 at 0."),
		reduceDoc("ReduceL2", []int{1, 11, 13, 18}, 18, "√Σx² with derivative 0 where the norm is 0 (as torch.norm)."),
		reduceDoc("ReduceLogSum", []int{1, 11, 13, 18}, 18, "log Σx."),
		reduceDoc("ReduceLogSumExp", []int{1, 11, 13, 18}, 18, "log(eᵃ + eᵇ) folded over the axes, stably (no overflow, no NaN at −∞)."),
		reduceDoc("ReduceMax", []int{1, 11, 12, 13, 18}, 18, "The derivative is split evenly among tied elements (as torch.amax; torch.max(x, dim), exported as the same operator, gives it to one index). Integer constants are folded."),
		reduceDoc("ReduceMean", []int{1, 11, 13, 18}, 18, ""),
		reduceDoc("ReduceMin", []int{1, 11, 12, 13, 18}, 18, "The derivative is split evenly among tied elements (as torch.amin). Integer constants are folded."),
		reduceDoc("ReduceProd", []int{1, 11, 13, 18}, 18, "Integer constants are folded."),
		reduceDoc("ReduceSum", []int{1, 11, 13}, 13, "Integer constants are folded."),
		reduceDoc("ReduceSumSquare", []int{1, 11, 13, 18}, 18, "Σx²."),
		{op: "Relu", versions: []int{1, 6, 13, 14}, inputs: "X", notes: "Derivative 0 at 0 (as PyTorch)."},
		{op: "Reshape", versions: []int{1, 5, 13, 14},
			attrs:  []attrDoc{{"allowzero", "0 or 1 (default 0; opset 14)"}},
			inputs: "data; shape (a constant: 0 copies the input's dimension unless allowzero, −1 is inferred)",
			notes:  docFolded},
		{op: "Resize", versions: []int{10, 11, 13, 18},
			attrs: []attrDoc{
				{"mode", "nearest (default), linear (also bilinear, trilinear), cubic"},
				{"coordinate_transformation_mode", "opset 11: half_pixel (default), pytorch_half_pixel, align_corners, asymmetric, tf_half_pixel_for_nn; tf_crop_and_resize is refused"},
				{"nearest_mode", "opset 11: round_prefer_floor (default), round_prefer_ceil, floor, ceil"},
				{"cubic_coeff_a", "opset 11: any (default −0.75)"},
				{"exclude_outside", "opset 11: 0 or 1 (default 0)"},
				{"antialias", "opset 18: 0 only"},
				{"keep_aspect_ratio_policy", "opset 18: stretch only (refused otherwise, with scales too)"},
				{"axes", "opset 18: distinct axes, negative from the end (default: all)"},
			},
			inputs: "opset 10: X, scales; from 11: X, roi (not read), scales, sizes: exactly one of scales and sizes, each a constant or computed from constants",
			notes: "Opset 10 is asymmetric with nearest rounding down (as ONNX's 10→11 converter states). Each resized axis is one resampling with fixed taps; an output size is ⌊in·scale⌋ (1 to 2^28). " +
				"extrapolation_value is not read (it applies to tf_crop_and_resize only)."},
		{op: "Shape", versions: []int{1, 13, 15},
			attrs: []attrDoc{
				{"start", "opset 15: any, negative from the end, clamped (default 0)"},
				{"end", "opset 15: any, negative from the end, clamped (default: the rank)"},
			},
			inputs: "data", notes: "A constant (shapes are static)."},
		{op: "Sigmoid", versions: []int{1, 6, 13}, inputs: "X", notes: "The mathematical function (not Gorgonia's clamped one)."},
		{op: "Sign", versions: []int{9, 13}, inputs: "input", notes: docZeroSlope + " " + docFolded},
		{op: "Sin", versions: []int{7}, inputs: "input"},
		{op: "Size", versions: []int{1, 13}, inputs: "data", notes: "A constant scalar (shapes are static)."},
		{op: "Slice", versions: []int{1, 10, 11, 13},
			attrs: []attrDoc{
				{"starts", "before opset 10 (required), clamped as the specification says"},
				{"ends", "before opset 10 (required), clamped as the specification says"},
				{"axes", "before opset 10: distinct axes, negative from the end (default: the first ones)"},
				{"steps", "read as an attribute before opset 10 too (Slice-1's schema has none); non-zero"},
			},
			inputs: "data; from opset 10 starts, ends, axes (optional), steps (optional; negative reverses): constants",
			notes:  "Opset 10: starts, ends and axes move from attributes to inputs, steps is added. An empty result is refused for an array computed at run time. " + docFolded},
		{op: "Softmax", versions: []int{1, 11, 13},
			attrs:  []attrDoc{{"axis", "before opset 13: default 1, the input coerced to 2-D [Π d[:axis], Π d[axis:]]; from 13: default −1, that one axis"}},
			inputs: "input", notes: "Opset 13 changes axis's meaning and default; the lowering follows the model's opset."},
		{op: "Softplus", versions: []int{1}, inputs: "X",
			notes: "log(1 + eˣ) as specified, computed stably, derivative σ(x) (PyTorch's F.softplus returns x above 20, under 2e-9 away)."},
		{op: "Split", versions: []int{1, 2, 11, 13, 18},
			attrs: []attrDoc{
				{"axis", "−r … r−1 (default 0)"},
				{"split", "before opset 13: non-negative sizes adding up to the axis"},
				{"num_outputs", "opset 18: equal to the number of outputs; parts of ⌈d/n⌉, the last one smaller"},
			},
			inputs: "input; from opset 13 split (optional, a constant)",
			notes: "Opset 13: split moves from the attribute to input 1; opset 18 adds num_outputs, required without split. Without sizes, one equal part per output (before 18 they must divide the axis). Empty parts are refused for an array computed at run time. " +
				docFolded},
		{op: "Sqrt", versions: []int{1, 6, 13}, inputs: "X", notes: docFolded},
		{op: "Squeeze", versions: []int{1, 11, 13},
			attrs:  []attrDoc{{"axes", "before opset 13: axes of size 1, negative from the end (default: every axis of size 1)"}},
			inputs: "data; from opset 13 axes (optional, a constant)",
			notes:  "Opset 13: axes move from the attribute to input 1. " + docFolded},
		{op: "Sub", versions: []int{1, 6, 7, 13, 14}, inputs: docBinary, notes: docFolded},
		{op: "Sum", versions: []int{1, 6, 8, 13}, inputs: "one or more (NumPy broadcasting)", notes: docFolded},
		{op: "Tanh", versions: []int{1, 6, 13}, inputs: "input"},
		{op: "Transpose", versions: []int{1, 13},
			attrs:  []attrDoc{{"perm", "a permutation of the axes (default: reversed)"}},
			inputs: "data", notes: docFolded},
		{op: "Unsqueeze", versions: []int{1, 11, 13},
			attrs:  []attrDoc{{"axes", "before opset 13: required, distinct positions of the result, negative from the end"}},
			inputs: "data; from opset 13 axes (required, a constant)",
			notes:  "Opset 13: axes move from the attribute to input 1. " + docFolded},
		{op: "Upsample", versions: []int{1, 7, 9}, deprecated: 10,
			attrs: []attrDoc{
				{"mode", "nearest (default), linear (also bilinear, trilinear), cubic"},
				{"scales", "opsets 7–8: one positive scale per axis"},
			},
			inputs: "X; from opset 9 scales (a constant or computed from constants)",
			notes:  "Opset 9: scales move from the attribute to input 1. Asymmetric coordinates, nearest rounding down (as Resize-10). Also accepted at opsets 10–18, as Upsample-9."},
		{op: "Where", versions: []int{9, 16}, inputs: "condition (boolean), X, Y: NumPy broadcasting",
			notes: "The derivative flows to the selected branch only. " + docFolded},
		{op: "Xor", versions: []int{1, 7}, inputs: "A, B", notes: docLogic},
		recurrentDoc("RNN", []int{1, 7, 14}, "Sigmoid, Tanh, Relu: one per direction (default Tanh)", nil, "",
			"Y [T, directions, b, hidden] and Y_h [directions, b, hidden]"),
	}
}

// opsetsText is the opsets of 7–18 in which the operator exists, with its versions in that
// range: the version in force at opset 7 (the latest not above it) and every later one.
func (d opDoc) opsetsText() string {
	first := 0
	var vs []string
	for i, v := range d.versions {
		if v <= 7 && (i+1 == len(d.versions) || d.versions[i+1] > 7) {
			first = i
		}
	}
	for _, v := range d.versions[first:] {
		vs = append(vs, fmt.Sprint(v))
	}
	lo, hi := max(7, d.versions[0]), 18
	if d.deprecated != 0 {
		hi = d.deprecated - 1
	}
	s := fmt.Sprintf("%d–%d (%s)", lo, hi, strings.Join(vs, ", "))
	if lo == hi {
		s = fmt.Sprintf("%d (%s)", lo, strings.Join(vs, ", "))
	}
	if d.deprecated != 0 {
		s += fmt.Sprintf("; deprecated at %d", d.deprecated)
	}
	return s
}

// OperatorTable renders the documentation of every operator of SupportedOps as a markdown
// table sorted by operator name (the table of the README, which a test keeps equal to it).
// Its columns: the operator; the opsets of 7–18 in which ONNX defines it, with its versions
// there (the version a model's opset selects is the latest not above it; the importer does
// not check that a node's operator exists in the model's opset); the attributes the lowering
// reads, with the values it supports (any other attribute is ignored); the inputs it reads;
// and notes on signature changes between opsets, semantics (conventions at kinks and ties,
// which follow PyTorch) and what is refused.
func OperatorTable() string {
	docs := opDocs()
	sort.Slice(docs, func(i, j int) bool { return docs[i].op < docs[j].op })
	var b strings.Builder
	b.WriteString("| operator | opsets (versions) | attributes read | inputs | notes |\n")
	b.WriteString("|---|---|---|---|---|\n")
	for _, d := range docs {
		attrs := "—"
		if len(d.attrs) > 0 {
			parts := make([]string, len(d.attrs))
			for i, a := range d.attrs {
				parts[i] = fmt.Sprintf("`%s`: %s", a.name, a.values)
			}
			attrs = strings.Join(parts, "; ")
		}
		notes := d.notes
		if notes == "" {
			notes = "—"
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s | %s |\n", d.op, d.opsetsText(), attrs, d.inputs, notes)
	}
	return b.String()
}
