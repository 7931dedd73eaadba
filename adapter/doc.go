// Package adapter translates a Gorgonia (gorgonia.org/gorgonia v0.9.18) expression graph into a
// core program, so that bulkad can differentiate graphs people already have.
//
// Translate walks the graph from a scalar cost node down to the wrt nodes. Every node on a
// path from a wrt node to the cost is translated through the op table (ops.go: one entry per
// recognised Gorgonia op type, each a few lines calling package lower) into one let of the
// program, named after the node (sanitised name + "_" + node ID). The wrt nodes, and every
// node the cost reads that does not depend on a wrt node (data inputs, constants, random
// nodes, or whole subgraphs of ops without a translation), become parameters bound to their
// nodes; their values are whatever Gorgonia computes for them.
//
// Gorgonia's op structs are unexported: ops are recognised by their Go type name (%T) and
// their parameters are read with reflect (never unsafe) or from String(). Translation never
// panics: a panic inside a Gorgonia call is turned into an error.
//
// Traps handled (see the shared notes on Gorgonia):
//   - hash-deduplicated nodes (x*x has the child x twice; equal subexpressions are one node):
//     every node is translated once, by ID;
//   - SoftMax/LogSoftMax share a hash, so LogSoftMax(x) after SoftMax(x) returns the softmax
//     node: the translation reads the op's isLog field, so it computes what the graph computes;
//   - build-time stabilising rewrites (log1p, expm1, softplus nodes appear): translated as such;
//   - Read statement nodes consume a node and are never ancestors of the cost: never visited;
//   - constants are parameters bound to their nodes;
//   - Gorgonia's Dropout draws its mask inside the op: its translation binds the dropout node's
//     own output as a parameter and rebuilds x ⊙ mask / keep from it (exact where x ≠ 0).
//
// Gorgonia v0.9.18 behaviour reproduced (the translation computes what the TapeMachine computes)
// or refused (the translation reports an error instead of disagreeing):
//   - AveragePool2D divides each window's sum by the input width, not the window size
//     (reproduced; lower.AvgPool2D is the textbook version);
//   - sigmoid is exactly 1 above 19 (float32: 15) and 0 below -709 (-88), softplus is x above
//     16 (14) and 0 below -708 (-103) (reproduced);
//   - MaxPool2D/AveragePool2D with four paddings offset the windows by the south/east padding
//     (reproduced);
//   - ByIndices reads an index ≥ the axis length as 0 (reproduced; a negative index panics in
//     Gorgonia); along a middle axis with outer dimensions it steps over them by twice the
//     inner size, right only when the axis has length 2 (refused otherwise); Sparsemax along
//     any axis but the last fails or transposes wrongly (refused);
//   - Log(SoftMax(a)) is rewritten by turning the softmax node itself into a log-softmax, which
//     every other consumer of that node then sees: translate after the graph is complete;
//   - ConvType converts only between floats and Int (Int lets are i64; an Int parameter must be
//     given as an int64 tensor).
package adapter
