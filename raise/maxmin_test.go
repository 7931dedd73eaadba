package raise

import (
	"math"
	"testing"

	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/bulkad/bulkad/core"
	"github.com/bulkad/bulkad/core/coretest"
	"github.com/bulkad/bulkad/core/tensors"
)

// TestMaxMinNaNAndSignedZero: raised max and min agree with core's evaluator on NaN (it
// propagates) and on signed zeros (+0 is above −0), as math.Max and math.Min.
func TestMaxMinNaNAndSignedZero(t *testing.T) {
	nan, negz := math.NaN(), math.Copysign(0, -1)
	a := []float64{nan, 1, 2, 0, negz, 3}
	bv := []float64{1, nan, nan, negz, 0, 3}
	x := mustVar(t, "a", coretest.F64(6))
	y := mustVar(t, "b", coretest.F64(6))
	var b core.Builder
	p, err := core.NewProgram([]*core.Var{x, y}, b.Tuple(b.Binary(core.OpMax, x, y), b.Binary(core.OpMin, x, y)))
	if err != nil || b.Err() != nil {
		t.Fatal(err, b.Err())
	}
	want, err := tensors.EvalTuple(p, map[string]*tensor.Dense{
		"a": tensor.New(tensor.WithShape(6), tensor.WithBacking(append([]float64{}, a...))),
		"b": tensor.New(tensor.WithShape(6), tensor.WithBacking(append([]float64{}, bv...))),
	})
	if err != nil {
		t.Fatal(err)
	}
	g := gorgonia.NewGraph()
	res := run(t, g, p, map[string]*gorgonia.Node{"a": input(t, g, "a", []int{6}, a), "b": input(t, g, "b", []int{6}, bv)})
	for k, op := range []string{"max", "min"} {
		got := values(t, res[k]).([]float64)
		w := want[k].Data().([]float64)
		for i := range w {
			same := got[i] == w[i] && math.Signbit(got[i]) == math.Signbit(w[i])
			if !same && !(math.IsNaN(got[i]) && math.IsNaN(w[i])) {
				t.Errorf("%s(%v, %v) = %v, core gives %v", op, a[i], bv[i], got[i], w[i])
			}
		}
	}
}
