package raise

import (
	"math"
	"math/rand"
	"strings"
	"testing"

	"gorgonia.org/tensor"

	kern "github.com/bulkad/bulkad/kernel"
)

// TestLeadingSum: a coarse plan sums x over its leading dimensions into the rest (scatter sh
// x (\[i, j, …] -> [j, …])) as a fused sum of an element-wise x that nothing else reads (the
// product never written) or as the column sums of a plain x (kern.Axis), and gives
// core.Eval's bits: a column of signed zeros (products −0 and +0, whose sum from +0 is +0),
// one summing to exactly zero, an infinity; a scatter of another form is not taken.
func TestLeadingSum(t *testing.T) {
	for _, tc := range []struct {
		name, params, src string
		kind              string // the kernel that sums (empty: neither fused nor Axis)
	}{
		{"product", "x : [4096,32,1] %s, y : [4096,32,1] %s", "scatter [32,1] (x * y) (\\[i, j, k] -> [j, k])", "fused"},
		{"plain", "x : [4096,32,1] %s", "scatter [32,1] x (\\[i, j, k] -> [j, k])", "axis"},
		{"two leading", "x : [64,64,32] %s, y : [64,64,32] %s", "scatter [32] (x * y) (\\[i, j, k] -> [k])", "fused"},
		{"not leading", "x : [4096,32,1] %s", "scatter [1,32] x (\\[i, j, k] -> [k, j])", ""},
	} {
		for _, dt := range []string{"f64", "f32"} {
			p := parseProgram(t, strings.ReplaceAll(tc.params, "%s", dt), tc.src)
			args := randArgs(rand.New(rand.NewSource(5)), p)
			leadingSpecial(args["x"])
			got, want, plans := coarseRun(t, p, args)
			if d := bitsEqual(got, want); d != "" {
				t.Errorf("%s %s: %s", tc.name, dt, d)
			}
			fused, axis, big := 0, 0, 0
			for _, kp := range plans {
				for i := 0; i < kp.Steps(); i++ {
					switch kp.StepKernel(i).(type) {
					case *kern.Fused:
						fused++
					case kern.Axis:
						axis++
					}
					if kp.StepTerm(i).Type().Shape.Size() >= 4096 {
						big++ // a step writing an array of x's size
					}
				}
			}
			kind := map[bool]string{fused == 1: "fused", axis == 1: "axis"}[true]
			if kind != tc.kind || tc.kind != "" && big != 0 {
				t.Errorf("%s %s: %d fused sums, %d Axis sums, %d steps writing an array of x's size; want the %q kind and no such step", tc.name, dt, fused, axis, big, tc.kind)
			}
		}
	}
}

// leadingSpecial puts into x (columns of 32 or 1) a column of signed zeros, one whose elements
// cancel exactly and an infinity.
func leadingSpecial(x *tensor.Dense) {
	set := func(i int, v float64) { setElem(x, i, v) }
	n := x.Shape().TotalSize()
	rows := n / 32
	for r := 0; r < rows; r++ {
		z := 0.0
		if r%3 == 0 {
			z = math.Copysign(0, -1)
		}
		set(r*32, z)                  // column 0: ±0
		set(r*32+1, float64(r%5-2)*8) // column 1: integers …
	}
	var s float64
	for r := 0; r < rows; r++ {
		s += float64(r%5-2) * 8
	}
	set((rows-1)*32+1, float64((rows-1)%5-2)*8-s) // … summing to exactly zero
	set(7*32+2, math.Inf(1))
}
