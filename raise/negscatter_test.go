package raise

import (
	"math"
	"math/rand"
	"strings"
	"testing"

	"gorgonia.org/tensor"

	"github.com/bulkad/bulkad/core"
	kern "github.com/bulkad/bulkad/kernel"
)

// TestNegatedScatter: a coarse plan sums a negated operand's elements as 0 − the sum of the
// operand's (negatedScatter), with no step negating the whole operand, and gives core.Eval's
// bits: signed zeros (a channel of zeros and negative zeros, whose negated sum is +0 where the
// negated sum of the elements would be −0), exact cancellations, infinities, outputs no
// element reaches, and a negation whose operand is a computed product (a batch norm's
// gradient).
func TestNegatedScatter(t *testing.T) {
	for _, tc := range []struct {
		name, params, src string
	}{
		{"middle axis", "x : [4,3,5] %s", "scatter [3,1] (neg x) (\\[i, j, k] -> [j, 0])"},
		{"outer axes", "x : [4,3,5] %s", "scatter [5] (neg x) (\\[i, j, k] -> [k])"},
		{"unhit outputs", "x : [4,3,5] %s", "scatter [3,7] (neg x) (\\[i, j, k] -> [j, k + 2])"},
		{"of a product", "x : [4,3,5] %s, y : [4,3,5] %s", "scatter [3,1] (neg (x * y)) (\\[i, j, k] -> [j, 0])"},
	} {
		for _, dt := range []string{"f64", "f32"} {
			p := parseProgram(t, strings.ReplaceAll(tc.params, "%s", dt), tc.src)
			r := rand.New(rand.NewSource(7))
			args := randArgs(r, p)
			special(args["x"])
			got, want, plans := coarseRun(t, p, args)
			if d := bitsEqual(got, want); d != "" {
				t.Errorf("%s %s: %s", tc.name, dt, d)
			}
			for _, kp := range plans {
				for i := 0; i < kp.Steps(); i++ {
					if u, ok := kp.StepKernel(i).(kern.Unary); ok && u.Op == core.OpNeg && kp.StepTerm(i).Type().Shape.Size() == 60 {
						t.Errorf("%s %s: step %d negates the whole operand: %v", tc.name, dt, i, kp.StepTerm(i))
					}
				}
			}
		}
	}
}

// special puts signed zeros, an exact cancellation and an infinity into x [4,3,5]: channel 0
// all ±0, channel 1 summing to exactly zero, and one +Inf in channel 2.
func special(x *tensor.Dense) {
	set := func(i int, v float64) { setElem(x, i, v) }
	for b := 0; b < 4; b++ {
		for k := 0; k < 5; k++ {
			z := 0.0
			if (b+k)%2 == 0 {
				z = math.Copysign(0, -1)
			}
			set(b*15+k, z)              // channel 0
			set(b*15+5+k, float64(b-k)) // channel 1, before the cancellation below
		}
	}
	// channel 1: make the elements cancel exactly (integers)
	var sum float64
	for b := 0; b < 4; b++ {
		for k := 0; k < 5; k++ {
			sum += float64(b - k)
		}
	}
	set(3*15+5+4, float64(3-4)-sum)
	set(2*15+10+1, math.Inf(1))
}
