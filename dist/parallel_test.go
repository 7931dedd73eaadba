package dist_test

import (
	"math"
	"strings"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/bulkad/bulkad/dist"
	"github.com/bulkad/bulkad/dist/mpitest"
)

// TestDataParallelOneProcess: in the one-process world the data-parallel loop is the plain
// loop, bit for bit, for every solver, both autodiffs and both bindings.
func TestDataParallelOneProcess(t *testing.T) {
	world := mpitest.OneProcess(t)
	for _, cfg := range testConfigs(rows/batch + 1) { // the last step sees the first batch again
		want, err := trainSingle(cfg)
		if err != nil {
			t.Fatalf("%v: %v", cfg, err)
		}
		got, err := trainDistributed(world, cfg, nil)
		if err != nil {
			t.Fatalf("%v: %v", cfg, err)
		}
		for s := range want.Loss {
			if got.Loss[s] != want.Loss[s] {
				t.Errorf("%v step %d: loss %v, want %v", cfg, s+1, got.Loss[s], want.Loss[s])
			}
		}
		if !sameParams(got.Params, want.Params) {
			t.Errorf("%v: parameters differ from the plain loop's", cfg)
		}
		// Gorgonia v0.9.18's AdamW never changes the parameters: its Step decays a copy of the
		// weights (w, err = tensor.Mul(w, decay)) and adds the update to that copy.
		if last := want.Loss[len(want.Loss)-1]; cfg.Solver != "adamw" && !(last < want.Loss[0]) {
			t.Errorf("%v: loss on the first batch went from %v to %v", cfg, want.Loss[0], last)
		}
	}
}

func sameParams(a, b [][]float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if len(a[i]) != len(b[i]) {
			return false
		}
		for j := range a[i] {
			if math.Float64bits(a[i][j]) != math.Float64bits(b[i][j]) {
				return false
			}
		}
	}
	return true
}

func TestDataParallelErrors(t *testing.T) {
	world := mpitest.OneProcess(t)
	if _, err := dist.NewDataParallel(nil, nil); err == nil {
		t.Error("nil Comm: no error")
	}
	if _, err := dist.NewDataParallel(world, nil); err == nil || !strings.Contains(err.Error(), "no parameters") {
		t.Errorf("no parameters: %v", err)
	}
	if _, err := dist.NewDataParallelModel(world, []G.ValueGrad{(*G.Node)(nil)}); err == nil || !strings.Contains(err.Error(), "nil") {
		t.Errorf("nil parameter: %v", err)
	}
	// Before the machine runs, a gradient node has no value: the error names the parameter.
	cfg := runConfig{Dtype: tensor.Float64, Grad: "bulkad", Solver: "adam", Steps: 1}
	r, err := newReplica(cfg, batch, initParams(cfg.Dtype, 1))
	if err != nil {
		t.Fatal(err)
	}
	defer r.vm.Close()
	dp, err := dist.NewDataParallel(world, r.learn)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := dp.AverageGradients(batch, 1); err == nil || !strings.Contains(err.Error(), "gradient of w0") || !strings.Contains(err.Error(), "rank 0 of 1") {
		t.Errorf("gradient before running: %v", err)
	}
	x, y := shardOf(cfg.Dtype, 0, 0, batch)
	if _, err := r.forward(x, y); err != nil {
		t.Fatal(err)
	}
	for _, w := range []float64{-1, math.NaN(), math.Inf(1), 0} {
		if _, err := dp.AverageGradients(w); err == nil {
			t.Errorf("weight %v: no error", w)
		}
	}
	m, err := dp.AverageGradients(batch, 0.5, 2)
	if err != nil || len(m) != 2 || m[0] != 0.5 || m[1] != 2 {
		t.Errorf("one rank's metrics: %v, %v", m, err)
	}
	if err := dp.CheckParams(); err != nil {
		t.Error(err)
	}
	// Integer parameters cannot be averaged.
	g := G.NewGraph()
	iv := G.NewVector(g, tensor.Int, G.WithShape(2), G.WithName("counts"), G.WithValue(tensor.New(tensor.WithBacking([]int{1, 2}))))
	dpi, err := dist.NewDataParallel(world, G.Nodes{iv})
	if err != nil {
		t.Fatal(err)
	}
	if err := dpi.BroadcastParams(); err == nil || !strings.Contains(err.Error(), "value of counts") || !strings.Contains(err.Error(), "dtype int") {
		t.Errorf("int parameter: %v", err)
	}
}
