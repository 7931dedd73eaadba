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
// # Granularity
//
// Grad adds one node per wrt node and one plan node, whatever the size of the gradient
// program: the plan node runs the whole program (package raise's coarse mode, a kernel.Plan of
// fused kernels with buffers reused between runs) and each gradient node copies its gradient
// out of the plan node's value. Gorgonia's graph and TapeMachine compile are quadratic in the
// number of nodes, so a gradient raised one node per operation (175,000 nodes for a depthwise
// CNN) took minutes to set up. ImportONNX likewise makes a model one plan node plus one node
// per output; that plan node keeps the model's activations in its value, and the gradient of a
// loss on the outputs reads them there. The environment variable BULKAD_RAISE=ops (RaiseEnv)
// (or Options.Raise = RaiseOps) brings back one node per operation.
//
// # Differences from gorgonia.Grad
//
//   - wrt may be any node the cost depends on, not only an input (gorgonia.Grad refuses).
//     Asking for an intermediate node h does not cut the graph, as PyTorch's retain_grad:
//     h gets its adjoint ∂cost/∂h, and every other gradient stays the full derivative
//     (Grad(cost, w, h) gives w the same gradient as Grad(cost, w)).
//   - Intermediate gradients: gorgonia.Grad gives every node on a path from a wrt node to
//     the cost a gradient node, so y.Grad() and y.Deriv() work on any intermediate y. Grad
//     gives one only to the wrt nodes: the gradient program is fused, and an intermediate
//     adjoint is a node the TapeMachine computes at every step. Name the intermediate nodes
//     you read among wrt (Grad(cost, w, y)), or call GradAll, which registers a gradient node
//     for every node on the path as gorgonia.Grad does.
//   - A wrt node the cost does not depend on gets a zero gradient (as PyTorch's allow_unused
//     with materialised gradients), not an error; a wrt node given twice gets the same
//     gradient node at both positions.
//   - Calling Grad again for the same cost and wrt node gives back the gradient node already
//     in the graph and registers nothing new (gorgonia.Grad likewise reuses the derivatives it
//     made), whatever the order of the calls and the other wrt nodes: with BindDualValues,
//     w.Grad() is ∂cost/∂w once. Gradients of different costs add up, as several derivOf
//     registrations do in Gorgonia: Grad(c1, w) then Grad(c2, w) gives w.Grad() = ∂(c1+c2)/∂w
//     (unless both costs have the very same gradient node, which then counts once). A wrt node
//     whose gradient gorgonia.Grad (or another autodiff) already registered is refused with an
//     error naming it: BindDualValues would silently add the two gradients.
//   - Operations whose derivative is zero almost everywhere (Sign, Ceil, Floor, comparisons,
//     argmax) have a zero gradient; gorgonia.Grad fails with "Non Differentiable WRTs".
//   - Gradients Gorgonia gets wrong or cannot compute (Log2, InverseSqrt, AveragePool2D,
//     OuterProd, GlobalAveragePool2D, Dropout) are correct.
//   - Higher order: the gradient nodes are themselves differentiable. Every op Grad adds
//     carries its core program (adapter.Planned and adapter.Part for plan nodes and their
//     results, adapter.Programmed per operation), which the adapter reads back, so
//     Grad(Sum(g ⊙ v), x) with g from an earlier Grad gives the Hessian-vector product, and
//     Grad of that the third derivative, to any order. At non-smooth points bulkad gives one
//     fixed one-sided derivative and a second derivative of 0: ReLU (Rectify) has slope 1 at
//     x = 0 (Gorgonia's x >= 0 mask), Abs slope 0 at 0, Max and MaxBetween send the whole
//     adjoint to the first of tied entries; their second derivatives are 0 everywhere, the
//     kink included (no Dirac term), like PyTorch's and JAX's. gorgonia.Grad applied twice is
//     wrong on several ops (Σ x³ gives 3x instead of 6x) and panics on others (SoftMax).
//   - The graph's structure is read once, at Grad time, its values at every run (Let on
//     inputs and solver updates are followed). Ops changed afterwards are not followed:
//     after UnsafeLet moves the window of a slice that lies between a wrt node and the cost,
//     the gradient nodes would scatter into the old window while reading the slice node's
//     new value, so Grad adds a small guard node per such slice and the next run fails with
//     an error naming it (gorgonia.Grad's nodes share the slice op and follow the move). A
//     slice of data off that path is only a value and is followed (the minibatch pattern
//     works). Fix the structure before calling Grad, or build the graph again.
//   - Grad has no side effects on failure: a bad argument (nil or non-scalar cost, a wrt node
//     of another graph, an operation without a translation) returns an error and leaves the
//     graph unchanged.
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
// It is only the default: a program chooses per call with Options (Options{Device: v} with v
// from VulkanAuto or VulkanForce, which return an error saying why when no device can be
// opened; Options{CPU: true}), and no function of the package writes the variable. Any other
// value of BULKAD_VULKAN makes Grad fail.
// The device is opened once per process (VulkanDevice) and shared; it is safe for concurrent
// use, its calls being serialised. A graph keeps the setting it was raised with: switching
// later affects only later Grad calls. A device call that fails never fails the step: the
// kernel runs on the CPU and the first such error is logged once (CurrentVulkan().Err()
// returns it). Which kernels dispatch is listed at kernel.Vulkan; the forward pass built with
// Gorgonia's own ops stays Gorgonia's.
//
// # Resource limits
//
// Grad refuses, with an error naming the term and its size, a gradient program with an array
// larger than the array limit, before any node is added: BULKAD_MAX_ARRAY_BYTES (bytes, with
// an optional K, M, G or T suffix; 0 or off: no limit), by default a quarter of the physical
// memory (see core.ArrayLimit; raise.Options.MaxArrayBytes sets it per call).
//
// # Reference
//
// The algorithm, and "paper 000" with its sections (§) and figures (Fig.) throughout
// bulkad's documentation, is T. Smeding, M. Konarski, S. Peyton Jones and A. Fitzgibbon, “Dual-Numbers Reverse AD for Array Programs”, technical report, July 2025.
package bulkad
