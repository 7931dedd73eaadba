// Package gradcheck checks gradients: Check differentiates a Gorgonia cost four ways —
// bulkad's gradient program, the nodes bulkad.Grad adds run on a TapeMachine, Gorgonia's own
// Grad, and central finite differences in float64 — and reports where they disagree, with
// WithSecondOrder also the Hessian-vector products of bulkad.HessianVector and of a gradient
// differentiated twice.
//
// It is a package of its own (it was bulkad.Check) because it is a testing tool with its own
// machinery — finite differences on a float64 promotion of the program, clones of the user's
// graph, report formats — that the gradient API neither needs nor should carry; it imports
// bulkad, never the reverse.
package gradcheck
