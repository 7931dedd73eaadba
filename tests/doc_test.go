// Package tests holds bulkad's end-to-end tests: bulkad.Grad on Gorgonia graphs (every op of
// the adapter's table, every zoo model) against the artifact's own evaluator, central finite
// differences and Gorgonia's own Grad; training equivalence; node economy; bad inputs.
package tests
