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
// operator outside it, an attribute value the lowering does not cover (auto_pad, ceil_mode,
// average pooling of padding without counting it, non-constant shapes) or an operator set
// outside 7–18 is an error naming the node, the operator and the opset.
//
// Conv with group > 1 (grouped and depthwise convolution) is one bulk operation,
// lower.GroupedConv2d, whatever the number of groups: a depthwise MobileNetV2 imports as a few
// hundred Gorgonia nodes, not one convolution per channel.
//
// Not supported yet: LayerNormalization as one operator (opset 17; the
// decomposed form that PyTorch 1.13 exports works), Resize, recurrent operators (LSTM/GRU/RNN
// as single operators; unrolled cells work), Dropout in training mode (random masks),
// BatchNormalization's running-statistics outputs, integer arithmetic on graph inputs.
package onnx
