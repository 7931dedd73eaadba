package lower

import (
	"math"
	"testing"

	"github.com/bulkad/bulkad/core"
)

// The max-pool value is the element at the window's first maximum, exactly: infinities and
// ties included (a sum with a one-hot mask would turn -Inf·0 into NaN).
func TestMaxPoolInfinitiesAndTies(t *testing.T) {
	inf := math.Inf(1)
	// one [1,1,4,4] map, 2×2 windows, stride 2
	x := arr{core.Shape{1, 1, 4, 4}, []float64{
		-inf, 1, 2, 2,
		0.5, -inf, 2, -1,
		-inf, -inf, inf, 3,
		-inf, -inf, 4, -inf,
	}}
	want := []float64{1, 2, -inf, inf}
	got, sh := evalOn(t, func(v ...core.Term) (core.Term, error) {
		return MaxPool2D(v[0], Window{KH: 2, KW: 2, StrideH: 2, StrideW: 2})
	}, x)
	if !sh.Equal(core.Shape{1, 1, 2, 2}) {
		t.Fatalf("shape %v, want [1,1,2,2]", sh)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("element %d = %v, want %v (all %v)", i, got[i], want[i], got)
		}
	}
}
