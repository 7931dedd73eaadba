// Package accel speeds up a Gorgonia graph's own forward pass on Gorgonia's TapeMachine,
// without changing what the graph means: UseBLAS gives Gorgonia's matrix products a fast
// GEMM (a system BLAS through purego, or bulkad's kernel), and Engine is a Gorgonia tensor
// engine that runs the transposes, softmaxes, comparisons and element-wise arithmetic of the
// forward pass with package kernel's kernels.
//
// It is a package of its own (these were bulkad.UseBLAS and bulkad.Engine) because it
// accelerates Gorgonia's forward ops and has nothing to do with differentiation: the gradient
// nodes bulkad.Grad adds run their own kernels whether or not accel is used. Package machine
// goes further and runs the whole graph, forward and gradient, from compiled plans.
package accel
