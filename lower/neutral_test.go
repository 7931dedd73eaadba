package lower

import (
	"math"
	"testing"

	"github.com/bulkad/bulkad/core"
)

// TestUnaryNeutral: lower's sigmoid and softplus are the mathematical functions (no
// framework's clamps), checked against the math package and, far out, hand limits.
func TestUnaryNeutral(t *testing.T) {
	xs := []float64{-800, -710, -100, -30, -1, math.Copysign(0, -1), 0, 0.5, 17, 25, 30, 100, 800}
	sigmoid := func(x float64) float64 { return 1 / (1 + math.Exp(-x)) }
	softplus := func(x float64) float64 {
		if x > 30 {
			return x // log1p(exp x) = x + log1p(exp(-x)), and exp(-30) < 2^-43 · 1
		}
		return math.Log1p(math.Exp(x))
	}
	for _, tc := range []struct {
		name string
		want func(float64) float64
	}{{"sigmoid", sigmoid}, {"softplus", softplus}} {
		got, _ := evalOn(t, func(v ...core.Term) (core.Term, error) { return Unary(tc.name, v[0]) }, arr{core.Shape{len(xs)}, xs})
		for i, x := range xs {
			w := tc.want(x)
			if d := math.Abs(got[i] - w); d > 4e-16*math.Max(1, math.Abs(w)) || math.Signbit(got[i]) != math.Signbit(w) && w != 0 {
				t.Errorf("%s(%g) = %v, want %v", tc.name, x, got[i], w)
			}
		}
	}
	// the point where Gorgonia's sigmoid is already exactly 1
	got, _ := evalOn(t, func(v ...core.Term) (core.Term, error) { return Unary("sigmoid", v[0]) }, arr{core.Shape{1}, []float64{25}})
	if got[0] == 1 {
		t.Errorf("sigmoid(25) = 1 exactly: clamped, want 1/(1+e^-25) = %v", sigmoid(25))
	}
}
