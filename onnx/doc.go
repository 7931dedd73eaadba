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
// (the learnable parameters) and whose body is the tuple of the graph outputs. Integer
// initializers and Constant nodes that only carry shapes, axes or indices are evaluated at
// import time, as is shape arithmetic on them (Shape, Gather, Concat, Unsqueeze, Cast), so
// shapes must be static: export with fixed input sizes. SupportedOps lists the operators; an
// operator outside it, an attribute value the lowering does not cover (non-constant shapes, a
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
// Not supported yet: LayerNormalization as one operator (opset 17; the
// decomposed form that PyTorch 1.13 exports works), Dropout in training mode (random masks),
// BatchNormalization's running-statistics outputs, integer arithmetic on graph inputs.
package onnx
