// Package onnx is bulkad's second front end: it reads ONNX models (the format PyTorch,
// TensorFlow and others export) and lowers them into the core language through package
// lower, so raise can turn them into Gorgonia nodes and bulkad.Grad can differentiate them
// (bulkad.ImportONNX does both steps).
//
// # Decoding
//
// Decode reads the protobuf wire format with google.golang.org/protobuf's protowire (already
// in the module graph through Gorgonia), field by field, for the subset of the ONNX schema an
// importer needs: the model's operator-set imports, the graph's nodes, initializers, inputs
// and outputs, attributes and tensors (float, double, int32, int64 and bool; raw or typed
// data). github.com/owulveryck/onnx-go v0.5.0 was evaluated and not used: its decoder drives a
// gonum graph builder that hides the opset imports (operator semantics change between opsets:
// Softmax's axis at 13, Squeeze/Unsqueeze/Split/ReduceSum/Clip/Pad moving attributes to inputs
// at 11–13, BatchNormalization's training outputs at 14), it applies operations on a graph
// of its own rather than giving the node list, and it pulls old gogo/golang protobuf and gonum
// versions. The decoder checks every length and bounds every tensor (at most 2^28 elements,
// data length equal to the dims), so a truncated or corrupt file gives an error, never a panic
// (TestCorruptModels, FuzzImport).
//
// # Lowering
//
// Lower makes a core program whose parameters are the graph inputs and the float initializers
// (the learnable parameters, Clip's bounds and Pow's exponent included when they are
// initializers) and whose body is the tuple of the graph outputs. Integer
// initializers and Constant nodes that only carry shapes, axes or indices are evaluated at
// import time, as is shape arithmetic on them (Shape, Gather, Concat, Unsqueeze, Cast), so
// shapes must be static: export with fixed input sizes. SupportedOps lists the operators and
// OperatorTable documents each (the opsets, the attributes its lowering reads with the values
// it supports, its inputs, what it refuses: the table of the README); an
// operator outside SupportedOps, an attribute value the lowering does not cover (non-constant shapes, a
// recurrent layer's layout 1, Resize's tf_crop_and_resize, …) or an operator set outside 7–18
// is an error naming the node, the operator and the opset.
//
// Conv with group > 1 (grouped and depthwise convolution) is one bulk operation,
// lower.GroupedConv2d, whatever the number of groups: a depthwise MobileNetV2 imports as a few
// hundred Gorgonia nodes, not one convolution per channel.
//
// Conv, MaxPool, AveragePool and ConvTranspose work over 1, 2 and 3 spatial dimensions
// (lower.ConvND, MaxPoolND, AvgPoolND, ConvTransposeND: two dimensions are the 2-D forms
// above, one is them over a height of 1), with auto_pad, ceil_mode and count_include_pad.
// LSTM, GRU and RNN are unrolled over the static sequence length (lower.Recurrent): one
// input product for all steps, one recurrent product per step; the whole model still raises
// to one plan node, so a long sequence costs no Gorgonia nodes. Resize and Upsample resample
// one axis at a time with fixed taps (lower.Resample: nearest, linear, cubic).
//
// Every unsupported operator type of a model is named in one error, with its number of
// nodes and its first node; element types print by name (BOOL, INT64).
//
// # Conventions at kinks and ties: PyTorch's
//
// Where an operator's derivative is not defined (a kink, a tie), the importer gives the
// derivative PyTorch's autograd gives the function PyTorch exports as that operator (checked
// with PyTorch 1.13 at exact kinks and ties; testdata/gen_conventions.py records them): that
// is the rule of this front end. Package lower is framework-neutral (core's max and min give a
// tie to their first operand); the ONNX lowerings choose their operand order and masks to
// follow PyTorch:
//   - Relu: derivative 0 at 0. LeakyRelu: slope α at 0. Elu: slope α at 0 and second
//     derivative 0 there (PyTorch's double backward masks x < 0).
//   - HardSigmoid: slope α strictly inside (0, 1), 0 at the kinks. HardSwish: the middle piece
//     includes −3 and 3 (slopes −½ and 3/2 there).
//   - Clip (torch.clamp): x keeps its derivative at a bound; a bound from an initializer is a
//     parameter whose derivative collects the elements beyond it. (PyTorch's relu6 and
//     hardtanh, which export as Clip too, give 0 at the bounds: the importer cannot tell
//     them apart and follows clamp.)
//   - Max and Min of any number of inputs: the derivative is split evenly among the inputs
//     tied for the extreme (½ each for two, as torch.maximum; 1/k for k, as torch.amax over
//     the stacked inputs). ReduceMax and ReduceMin: split evenly among the tied elements, as
//     torch.amax and torch.amin (torch.max(x, dim), which exports as the same ReduceMax, gives
//     it to one index instead).
//   - ReduceL2: derivative 0 where the norm is 0, as torch.norm.
//   - Softplus: log(1 + eˣ) as the specification defines it, stably and with derivative σ(x);
//     PyTorch's F.softplus returns x above its threshold of 20, less than 2e-9 away.
//
// Values follow the ONNX specification: Sigmoid and Softplus are the mathematical functions
// (not Gorgonia's clamped ones), HardSigmoid uses its α attribute as written (a float32: the
// 1/6 PyTorch exports is 3e-8 relative away from PyTorch's (x + 3)/6 in float64).
//
// Integer (INT64, INT32) and BOOL graph inputs are supported (token ids, masks: bulkad makes
// Int64 and Bool input nodes for them); shape arithmetic on constants (Shape, integer
// arithmetic, Concat, Gather, Slice, Range, ConstantOfShape, Where, …) is folded at import.
//
// Not supported yet: Dropout in training mode (random masks), BatchNormalization's
// running-statistics outputs, integer arithmetic on values computed at run time (Mod, Range
// and ConstantOfShape of run-time values).
package onnx
