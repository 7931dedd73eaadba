package bulkad_test

import (
	"fmt"

	"github.com/bulkad/bulkad"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// mustRun runs g once on a TapeMachine, as the program would after building its gradient
// nodes; the values (and, with BindDualValues, the gradients) stay on the nodes. Like G.Must,
// it panics on an error.
func mustRun(g *G.ExprGraph, opts ...G.VMOpt) {
	vm := G.NewTapeMachine(g, opts...)
	defer vm.Close()
	if err := vm.RunAll(); err != nil {
		panic(err)
	}
}

// The one-line switch: bulkad.Grad where the program called gorgonia.Grad. The TapeMachine
// (mustRun) with BindDualValues fills x.Grad() as before.
func ExampleGrad() {
	g := G.NewGraph()
	x := G.NewVector(g, tensor.Float64, G.WithShape(3), G.WithName("x"),
		G.WithValue(tensor.New(tensor.WithShape(3), tensor.WithBacking([]float64{1, 2, 3}))))
	sq := G.Must(G.Square(x))
	cost := G.Must(G.Sum(sq)) // Σ x²

	// grads, err := G.Grad(cost, x)
	grads, err := bulkad.Grad(cost, x)
	if err != nil {
		fmt.Println(err)
		return
	}
	mustRun(g, G.BindDualValues(x))
	dx, _ := x.Grad()
	fmt.Println("cost:", cost.Value())
	fmt.Println("gradient node:", grads[0].Value().Data())
	fmt.Println("x.Grad():", dx.Data())
	// Output:
	// cost: 14
	// gradient node: [2 4 6]
	// x.Grad(): [2 4 6]
}

// Solvers work unchanged: gradient descent on a least-squares fit x·w ≈ y (exact solution
// w = [2 -1]); the printed losses are the same as with gorgonia.Grad.
func ExampleGrad_solver() {
	g := G.NewGraph()
	x := G.NewMatrix(g, tensor.Float64, G.WithShape(4, 2), G.WithName("x"),
		G.WithValue(tensor.New(tensor.WithShape(4, 2), tensor.WithBacking([]float64{1, 0, 0, 1, 1, 1, 2, 1}))))
	y := G.NewVector(g, tensor.Float64, G.WithShape(4), G.WithName("y"),
		G.WithValue(tensor.New(tensor.WithShape(4), tensor.WithBacking([]float64{2, -1, 1, 3}))))
	w := G.NewVector(g, tensor.Float64, G.WithShape(2), G.WithName("w"),
		G.WithValue(tensor.New(tensor.WithShape(2), tensor.WithBacking([]float64{0, 0}))))
	pred := G.Must(G.Mul(x, w))
	diff := G.Must(G.Sub(pred, y))
	cost := G.Must(G.Mean(G.Must(G.Square(diff))))

	if _, err := bulkad.Grad(cost, w); err != nil { // was: G.Grad(cost, w)
		fmt.Println(err)
		return
	}
	vm := G.NewTapeMachine(g, G.BindDualValues(w))
	defer vm.Close()
	solver := G.NewVanillaSolver(G.WithLearnRate(0.1))
	for step := 0; step < 50; step++ {
		if err := vm.RunAll(); err != nil {
			fmt.Println(err)
			return
		}
		if step%10 == 0 {
			fmt.Printf("step %2d: loss %.4f\n", step, cost.Value().Data())
		}
		if err := solver.Step(G.NodesToValueGrads(G.Nodes{w})); err != nil {
			fmt.Println(err)
			return
		}
		vm.Reset()
	}
	fmt.Printf("w = %.3f\n", w.Value().Data())
	// Output:
	// step  0: loss 3.7500
	// step 10: loss 0.3186
	// step 20: loss 0.0979
	// step 30: loss 0.0301
	// step 40: loss 0.0092
	// w = [1.948 -0.915]
}

// Differentiate returns the gradient as a core program without touching the graph; it can be
// printed, inspected and evaluated on its own.
func ExampleDifferentiate() {
	g := G.NewGraph()
	x := G.NewVector(g, tensor.Float64, G.WithShape(2), G.WithName("x"),
		G.WithValue(tensor.New(tensor.WithShape(2), tensor.WithBacking([]float64{0.5, -1}))))
	cost := G.Must(G.Sum(G.Must(G.Exp(x))))
	before := len(g.AllNodes())

	d, err := bulkad.Differentiate(cost, x)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("graph unchanged:", len(g.AllNodes()) == before)
	fmt.Println("results:", len(d.Program().Params), "param(s), value and", len(d.Artifact.Wrt()), "gradient(s)")
	args := map[string]*tensor.Dense{}
	for name, n := range d.Translation.Params {
		args[name] = n.Value().(*tensor.Dense)
	}
	_, grads, err := d.Artifact.Run(args)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("∂cost/∂x = exp(x) = %.4f\n", grads[d.Translation.Wrt[0]].Data())
	// Output:
	// graph unchanged: true
	// results: 1 param(s), value and 1 gradient(s)
	// ∂cost/∂x = exp(x) = [1.6487 0.3679]
}

// Unlike gorgonia.Grad, bulkad differentiates with respect to any node the cost depends on:
// here the interior node h = 2x, for cost = Σ h³ (∂cost/∂h = 3h²).
func ExampleGrad_interiorNode() {
	g := G.NewGraph()
	x := G.NewVector(g, tensor.Float64, G.WithShape(2), G.WithName("x"),
		G.WithValue(tensor.New(tensor.WithShape(2), tensor.WithBacking([]float64{1, 2}))))
	h := G.Must(G.Mul(x, G.NewConstant(2.0)))
	cost := G.Must(G.Sum(G.Must(G.Cube(h))))
	grads, err := bulkad.Grad(cost, h)
	if err != nil {
		fmt.Println(err)
		return
	}
	mustRun(g)
	fmt.Println(grads[0].Value().Data())
	// Output:
	// [12 48]
}

// GradAll gives every node on the path a gradient node, as gorgonia.Grad does, so Grad()
// works on intermediate nodes: for cost = Σ h² with h = tanh(x), ∂cost/∂h = 2h.
func ExampleGradAll() {
	g := G.NewGraph()
	x := G.NewVector(g, tensor.Float64, G.WithShape(2), G.WithName("x"),
		G.WithValue(tensor.New(tensor.WithShape(2), tensor.WithBacking([]float64{0.5, -1}))))
	h := G.Must(G.Tanh(x))
	cost := G.Must(G.Sum(G.Must(G.Square(h))))
	if _, err := bulkad.GradAll(cost, x); err != nil {
		fmt.Println(err)
		return
	}
	mustRun(g, G.BindDualValues(x))
	dh, err := h.Grad()
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%.4f\n", dh.Data())
	// Output:
	// [0.9242 -1.5232]
}

// The Hessian-vector product of cost = Σ x³ at x = [1 2 3] along v = [1 0 -1]: the Hessian
// is diag(6x), so H·v = [6 0 -18]. One forward-over-reverse program, no second reverse pass.
func ExampleHessianVector() {
	g := G.NewGraph()
	x := G.NewVector(g, tensor.Float64, G.WithShape(3), G.WithName("x"),
		G.WithValue(tensor.New(tensor.WithShape(3), tensor.WithBacking([]float64{1, 2, 3}))))
	v := G.NewVector(g, tensor.Float64, G.WithShape(3), G.WithName("v"),
		G.WithValue(tensor.New(tensor.WithShape(3), tensor.WithBacking([]float64{1, 0, -1}))))
	cost := G.Must(G.Sum(G.Must(G.Cube(x))))

	hv, err := bulkad.HessianVector(cost, G.Nodes{x}, G.Nodes{v})
	if err != nil {
		fmt.Println(err)
		return
	}
	mustRun(g)
	fmt.Println("H·v:", hv[0].Value().Data())
	// Output:
	// H·v: [6 0 -18]
}

// A model exported from PyTorch becomes an ordinary Gorgonia graph: set its input, add a
// loss with Gorgonia ops, differentiate with respect to its parameters (the ONNX
// initializers). The MLP here is one of package onnx's test fixtures (6 → 8 → 3).
func ExampleImportONNX() {
	m, err := bulkad.ImportONNXFile("onnx/testdata/mlp_f64.onnx")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("inputs:", m.InputNames, m.Inputs[0].Shape())
	fmt.Println("parameters:", m.ParamNames)
	out := m.Outputs[0] // log-probabilities [4 3]
	cost := G.Must(G.Neg(G.Must(G.Mean(out))))
	grads, err := bulkad.Grad(cost, m.Params...)
	if err != nil {
		fmt.Println(err)
		return
	}
	mustRun(m.Graph)
	fmt.Println("gradient of fc1.weight:", grads[0].Shape())
	// Output:
	// inputs: [x] (4, 6)
	// parameters: [fc1.weight fc1.bias fc2.weight fc2.bias]
	// gradient of fc1.weight: (8, 6)
}
