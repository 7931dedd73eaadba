// Package machine runs a whole Gorgonia graph on bulkad's kernels: Machine is a gorgonia.VM
// that translates every node a user can read — the forward nodes a model is built from and the
// gradient nodes bulkad.Grad (or gorgonia.Grad, where the adapter translates its ops) added —
// into one core program, compiles it once into one kernel.Plan (package raise's coarse
// planning: fused element-wise loops, GEMMs with transpose flags, the max-pool's argmax view,
// buffers shared between values whose lifetimes do not overlap) and, on RunAll, reads the
// input nodes' values, runs the plan and fills every node's value, the dual values of the
// gradient registrations and the Read targets, so that every gorgonia.Solver works unchanged.
//
// # Why a machine and not a graph rewrite
//
// The other way to put the forward pass on bulkad's kernels is a pass that replaces forward
// subgraphs with plan nodes and lets the TapeMachine run the result. That pass must change the
// user's graph (nodes removed or rerouted, which Gorgonia's position-cached graph handles
// badly, see the adapter's notes), must keep gorgonia.Grad usable on the rewritten graph, and
// still pays the TapeMachine's compile, quadratic in the number of nodes, and its per-node
// value copies. A machine leaves the graph exactly as the user built it: gorgonia.Grad,
// bulkad.Grad, gorgonia.NewTapeMachine and this machine can all be used on the same graph, and
// the choice of machine is one line (machine.New instead of gorgonia.NewTapeMachine). The
// whole graph being one program, the gradient reads the forward's values where the kernels
// left them (the pooling gradient the forward's argmax, the softmax gradient its output)
// instead of reading them back from Gorgonia nodes, and set-up is linear in the graph: one
// translation, one raise into a scratch graph, no TapeMachine compile.
//
// # What a run does (the TapeMachine's semantics, reproduced)
//
//   - Input nodes (no op) and constants are read as they are bound when RunAll starts
//     (gorgonia.Let, WithValue, a solver's in-place update); an input without a value is an
//     error naming the node.
//   - Every node with an op gets a new value at every run, as the TapeMachine's nodes do after
//     Reset: a value kept from one run is not changed by the next (unless ReuseValues is
//     given: then every run writes into the last run's packed vector and allocates nothing
//     for its values). The values are views of one
//     packed vector allocated per run (no copies); two nodes that denote the same elements (a
//     full slice, an identity) get their own copy, so a solver updating a gradient in place
//     never changes another node's value, except a Gorgonia reshape, which shares its
//     operand's elements as it does on the TapeMachine (reshapeOp.Do returns a shallow clone). Scalars are *gorgonia.F64 / *gorgonia.F32, as the
//     TapeMachine makes them.
//   - Values are bound with gorgonia.UnsafeLet given a Value: that is exactly the
//     TapeMachine's own (unexported) bind after a shape and dtype check, including its
//     handling of a node that already holds a dual value (only the value part is replaced).
//     It is never given a tensor.Slice (which would change a slice node's op).
//   - With Lean(keep...), only the gradient nodes, the nodes read by Read statements and the
//     nodes in keep get values; every other node's
//     value is left as it was. The plan then skips writing those intermediate values and
//     fuses across them (the zoo MobileNet's step 5–10% faster, the ResNet's 3–5%).
//   - With BindDualValues, each gradient node (a node with DerivOf) adds its value into the
//     dual value of each node it is the derivative of, creating a zero dual value first, as
//     the TapeMachine does: gradients accumulate across runs until a solver's Step zeroes
//     them. The dual value is set with gorgonia.WithGrad, an exported node option that may be
//     applied to an existing node (it binds the dual value the TapeMachine would). Whether a
//     node already holds a dual value is read with reflect (no unsafe). Without
//     BindDualValues, n.Grad() returns the value of n's gradient node, which the run filled.
//   - gorgonia.Read(n, &v) targets: after the run, v receives a copy of n's value (copied into
//     v's existing value when v is non-nil), as the TapeMachine's read instruction does. The
//     target pointer is a field of Gorgonia's unexported readOp; it is reached with reflect
//     and one unsafe.Pointer conversion of reflect.Value.UnsafePointer (the only unsafe use,
//     checked to be a *gorgonia.Value first).
//   - Like the TapeMachine, RunAll runs the program once per Reset: a second RunAll without
//     Reset does nothing (so a loop written for the TapeMachine, RunAll then Reset, behaves
//     the same, dual values included).
//   - A slice node whose op gorgonia.UnsafeLet changed after New makes RunAll fail (the plan
//     was compiled for the old slice), as bulkad's guard nodes do for a gradient.
//
// # Nodes that are not translated
//
// Nodes that depend on no input node but have an op (random nodes, arithmetic on constants)
// are run by their own Gorgonia op (Do) before the plan, in graph order, at every run. The
// plan nodes of a coarse raise (bulkad.Grad's packed vectors) get no value: the adapter inlines
// their programs and their part nodes (the gradients) get theirs. raise's keepAlive and guard
// nodes, which only affect the TapeMachine, are run by their op after the plan (a guard still
// fails when its node changed). Every other node the adapter cannot translate — an op without
// a translation on a path from an input, a dropout node (the adapter reads its own output,
// which only Gorgonia's op computes), an unknown statement — makes New fail with an error
// naming the node and its op and saying to use gorgonia.NewTapeMachine; the machine never
// runs a graph it would compute differently.
//
// Nodes of several dtypes are planned as one program per dtype (one packed vector has one
// dtype); a node of a minority dtype may then be recomputed. A Machine is not safe for
// concurrent use (neither is a TapeMachine); distinct machines are independent.
package machine
