package raise

import (
	"math/rand"
	"strings"
	"testing"

	kern "github.com/bulkad/bulkad/kernel"
)

// TestSingletonTranspose: a transpose that moves only axes of one element moves no element, so
// a broadcast read through it (a batch norm's per-channel coefficients in its gradient,
// tr [0,2,1] (reshape [n, 1, c] (replicate n v))) stays a stride-0 read of v in the fused
// kernel: one step writes an array of the output's size, and the values are core.Eval's bits.
func TestSingletonTranspose(t *testing.T) {
	for _, tc := range []struct {
		name, src string
		big       int // steps writing an array of p's size
	}{
		{"singleton moved", "let c = tr [0,2,1] (reshape [8192,1,32] (replicate 8192 (v * v))) in c * p + c * p", 1},
		{"read twice", "let c = tr [0,2,1] (reshape [8192,1,32] (replicate 8192 (v * v))) in let q = c * p in q + q", 1},
	} {
		for _, dt := range []string{"f64", "f32"} {
			p := parseProgram(t, strings.ReplaceAll("v : [32] %s, p : [8192,32,1] %s", "%s", dt), tc.src)
			args := randArgs(rand.New(rand.NewSource(3)), p)
			got, want, plans := coarseRun(t, p, args)
			if d := bitsEqual(got, want); d != "" {
				t.Errorf("%s %s: %s", tc.name, dt, d)
			}
			big := 0
			for _, kp := range plans {
				for i := 0; i < kp.Steps(); i++ {
					if kp.StepTerm(i).Type().Shape.Size() == 8192*32 {
						big++
						if _, fused := kp.StepKernel(i).(*kern.Fused); !fused {
							t.Errorf("%s %s: step %d (%T) writes an array of the output's size: %v", tc.name, dt, i, kp.StepKernel(i), kp.StepTerm(i))
						}
					}
				}
			}
			if big != tc.big {
				t.Errorf("%s %s: %d steps write arrays of the output's size, want %d", tc.name, dt, big, tc.big)
			}
		}
	}
}
