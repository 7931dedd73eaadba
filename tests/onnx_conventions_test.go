package tests

import (
	"testing"

	"github.com/bulkad/bulkad"
	"github.com/bulkad/bulkad/examples/opgraphs"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// TestONNXConventions: the fixtures of onnx/testdata/gen_conventions.py (issue 26) import
// with bulkad.ImportONNXFile, run on a TapeMachine, and give PyTorch's output and, through
// bulkad.Grad of loss = Σ output ⊙ r, PyTorch's autograd gradient of every parameter —
// at kinks and ties included (relu, leaky relu, elu, hardswish and softplus at their kinks;
// Max, Min, ReduceMax and ReduceMin ties split evenly; Clip at its bounds, the bounds
// learnable), for variadic Max/Min/Sum/Mean, the opset-18 reductions with the axes as an
// input, a Cast to float as the graph output, rank-0 initializers in Gorgonia-native ops and
// weight norm's ReduceL2. Tolerances as TestONNXFixtures' (1e-9 / 1e-8 relative in float64,
// 1e-5 / 1e-4 in float32) except where a fixture says why; gradcheck.Check (finite differences
// through the raised nodes) runs on the smooth fixtures only, since at a tie a central
// difference sees neither side's derivative.
func TestONNXConventions(t *testing.T) {
	cases := []struct {
		name string
		// fwd64 is the float64 forward tolerance when not 1e-9.
		fwd64 float64
		// smooth: no kink or tie at the fixture's point (gradcheck.Check applies).
		smooth bool
	}{
		{name: "kinks_op14"},
		// PyTorch exports hardsigmoid's α = 1/6 as a float32 attribute; the importer computes
		// the specification's α·x + β with it, PyTorch (x + 3)/6: 3e-8 relative apart.
		{name: "hardsigmoid_op13", fwd64: 5e-8},
		{name: "castout_op13"},
		{name: "scalars_op13", smooth: true},
		{name: "maxmin_op11"}, {name: "maxmin_op13"},
		{name: "reduce_op11"}, {name: "reduce_op13"}, {name: "reduce_op18"},
		{name: "clip_op11"}, {name: "clip_op13"},
		{name: "variadic_op13"},
		{name: "weightnorm_op11", smooth: true}, {name: "weightnorm_op13", smooth: true},
	}
	for _, c := range cases {
		for _, tag := range []string{"f64", "f32"} {
			c, tag := c, tag
			t.Run(c.name+"_"+tag, func(t *testing.T) {
				checkONNXFixture(t, onnxCase{base: fixtureBase("", c.name, tag), tag: tag, fwd64: c.fwd64, check: c.smooth})
			})
		}
	}
}

// TestONNXRankZeroInitializer: the rank-0 initializers of an imported model are Gorgonia
// scalars holding scalar values, so Gorgonia's own ops take them: a regulariser c·c beside
// the model (c also scales the model's input) runs, coarse and one node per operation (it
// failed with "Unhandled Scalar Type" when the value was a rank-0 tensor), and the gradient
// of Σ y ⊙ r + c·c with respect to c is PyTorch's gradient of the first term plus 2c.
func TestONNXRankZeroInitializer(t *testing.T) {
	for _, mode := range []string{"", "ops"} {
		for _, tag := range []string{"f64", "f32"} {
			t.Run(tag+"_"+mode, func(t *testing.T) {
				t.Setenv(bulkad.RaiseEnv, mode)
				fx, m := importFixture(t, fixtureBase("", "scalars_op13", tag), false)
				dt, tol := tensor.Float64, 1e-9
				if tag == "f32" {
					dt, tol = tensor.Float32, 1e-5
				}
				c := m.Param("c")
				if c == nil || !c.IsScalar() {
					t.Fatalf("parameter c: %v, want a scalar node", c)
				}
				if err := G.Let(m.Inputs[0], opgraphs.Dense(dt, tensor.Shape(fx.Input.Shape), fx.Input.Data)); err != nil {
					t.Fatal(err)
				}
				r := G.NewTensor(m.Graph, dt, len(fx.Output.Shape), G.WithShape(fx.Output.Shape...), G.WithName("r"), G.WithValue(opgraphs.Dense(dt, tensor.Shape(fx.Output.Shape), fx.R)))
				cost := G.Must(G.Add(G.Must(G.Sum(G.Must(G.HadamardProd(m.Outputs[0], r)))), G.Must(G.Mul(c, c))))
				grads, err := bulkad.Grad(cost, c)
				if err != nil {
					t.Fatal(err)
				}
				mustRunOnce(t, m.Graph, G.Nodes{c})
				cv := valuesOf(c.Value())[0]
				if e := relErr(valuesOf(cost.Value()), []float64{fx.Loss + cv*cv}); !(e <= 10*tol) {
					t.Errorf("cost %v, want PyTorch's loss %v + c² = %v", cost.Value(), fx.Loss, fx.Loss+cv*cv)
				}
				if e := relErr(valuesOf(grads[0].Value()), []float64{fx.Grads["c"][0] + 2*cv}); !(e <= 10*tol) {
					t.Errorf("∂cost/∂c = %v, want PyTorch's %v + 2c = %v", grads[0].Value(), fx.Grads["c"][0], fx.Grads["c"][0]+2*cv)
				}
				// a solver steps the scalar parameter (it panicked on the rank-0 tensor value)
				g := valuesOf(grads[0].Value())[0]
				if err := G.NewVanillaSolver(G.WithLearnRate(0.5)).Step(G.NodesToValueGrads(G.Nodes{c})); err != nil {
					t.Fatal(err)
				}
				if e := relErr(valuesOf(c.Value()), []float64{cv - 0.5*g}); !(e <= tol) {
					t.Errorf("c after a step of 0.5: %v, want %v", c.Value(), cv-0.5*g)
				}
			})
		}
	}
}
