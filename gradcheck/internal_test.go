package gradcheck

import (
	"math"
	"testing"
)

// TestCompareRelativeNearZero: the relative error of an entry that should be 0 is measured
// against the largest reference entry, not against 0 (hand-computed values).
func TestCompareRelativeNearZero(t *testing.T) {
	cfg := config{atol: 1e-6, rtol: 1e-5}
	for _, tc := range []struct {
		name      string
		got, want []float64
		rel       float64
		ok        bool
	}{
		{"tiny error on a zero entry", []float64{0.5, 1e-12, 2}, []float64{0.5, 0, 2}, 1e-12 / 2, true},
		{"both zero", []float64{0, 0}, []float64{0, 0}, 0, true},
		{"large entry, 10%", []float64{1.1, 0.01}, []float64{1, 0.01}, 0.1 / 1.1, false},
		{"all-zero reference", []float64{1e-3}, []float64{0}, 1, false},
		{"NaN", []float64{math.NaN()}, []float64{1}, math.Inf(1), false},
	} {
		probes := make([]int, len(tc.want))
		for i := range probes {
			probes[i] = i
		}
		s := compare(tc.got, tc.want, probes, cfg)
		if math.Abs(s.MaxRel-tc.rel) > 1e-15*math.Max(1, tc.rel) && !(math.IsInf(tc.rel, 1) && math.IsInf(s.MaxRel, 1)) {
			t.Errorf("%s: MaxRel %g, want %g", tc.name, s.MaxRel, tc.rel)
		}
		if s.OK != tc.ok {
			t.Errorf("%s: OK %v, want %v", tc.name, s.OK, tc.ok)
		}
	}
}
