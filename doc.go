// Package bulkad is an autodiff backend for Gorgonia (gorgonia.org/gorgonia v0.9.18): it
// reads an existing expression graph, differentiates it with the algorithm of Smeding,
// Konarski, Peyton Jones and Fitzgibbon (bulk-operation transform, dual-array reverse AD,
// symbolic transposition) and adds the gradient to the same graph as ordinary Gorgonia nodes.
//
// # The one-line switch
//
// Replace gorgonia.Grad by bulkad.Grad; nothing else changes:
//
//	// grads, err := gorgonia.Grad(cost, w, b)
//	grads, err := bulkad.Grad(cost, w, b)
//	…
//	vm := gorgonia.NewTapeMachine(g, gorgonia.BindDualValues(w, b))
//	solver := gorgonia.NewVanillaSolver(gorgonia.WithLearnRate(0.1))
//	vm.RunAll()
//	solver.Step(gorgonia.NodesToValueGrads(gorgonia.Nodes{w, b}))
//
// Grad returns the gradient nodes in the order of its arguments and registers each with
// gorgonia.SetDerivOf, so BindDualValues, Node.Grad, NodesToValueGrads and every solver work
// unchanged. The forward pass is not recomputed: the gradient nodes read the values of the
// graph's own nodes.
//
// # Differences from gorgonia.Grad
//
//   - wrt may be any node the cost depends on, not only an input: the graph is cut at that
//     node and the gradient is taken with respect to its value (gorgonia.Grad refuses).
//   - A wrt node the cost does not depend on gets a zero gradient; a wrt node given twice gets
//     the same gradient node at both positions.
//   - Gradients Gorgonia gets wrong or cannot compute (Log2, InverseSqrt, AveragePool2D,
//     OuterProd, GlobalAveragePool2D) are correct.
//   - Grad has no side effects on failure: a bad argument (nil or non-scalar cost, a wrt node
//     of another graph or that the cost does not depend on, an operation without a
//     translation) returns an error and leaves the graph unchanged.
//   - Grad may be called several times on one graph (for several costs). With
//     BindDualValues, all gradient nodes registered for a wrt node add into its gradient, as
//     with several derivOf registrations in Gorgonia.
//
// Differentiate does the same work without touching the graph and returns the gradient as
// an inspectable core program (see package core for its text syntax).
//
// # Vulkan
//
// The float kernels of the gradient nodes can run on a Vulkan device (package vulkan, no
// cgo). The environment variable BULKAD_VULKAN, read at every Grad call, selects where:
//
//	unset, "" or "0"  the CPU (the default)
//	"1"               the device, for the kernels vulkan.Device.Worthwhile expects to gain
//	                  (large matrix products, transcendental functions; never on a CPU
//	                  device such as Mesa's lavapipe)
//	"force"           the device, for every kernel it supports, however small (tests)
//
// UseVulkan, UseVulkanForce and UseCPU set it from the program; UseVulkan returns an error
// saying why when no device can be opened, and everything stays on the CPU. Any other value
// of BULKAD_VULKAN makes Grad fail. Gradient.RaiseOn takes an explicit raise.Vulkan instead.
// The device is opened once per process (VulkanDevice) and shared; it is safe for concurrent
// use, its calls being serialised. A graph keeps the setting it was raised with: switching
// later affects only later Grad calls. A device call that fails never fails the step: the
// kernel runs on the CPU and the first such error is logged once (CurrentVulkan().Err()
// returns it). Which kernels dispatch is listed at raise.Vulkan; the forward pass built with
// Gorgonia's own ops stays Gorgonia's.
package bulkad
