package kernel

import (
	"fmt"
	"testing"

	"github.com/bulkad/bulkad/core"
)

// TestStridedComparisons checks every comparison of a StridedBinary against Go's own
// comparison written out here, with each operand a row, a broadcast element or a strided
// (transposed) read, over ±0, ±tiny (0 in float32), ±1, ±Inf and NaN in both float dtypes
// (NaN compares false except !=, -0 == +0).
func TestStridedComparisons(t *testing.T) {
	n, grid := specialGrid()
	x, y := grid(func(i, j int) int { return i }), grid(func(i, j int) int { return j })
	ops := []struct {
		op core.BinOp
		f  func(a, b float64) bool
	}{
		{core.OpLt, func(a, b float64) bool { return a < b }},
		{core.OpLe, func(a, b float64) bool { return a <= b }},
		{core.OpGt, func(a, b float64) bool { return a > b }},
		{core.OpGe, func(a, b float64) bool { return a >= b }},
		{core.OpEq, func(a, b float64) bool { return a == b }},
		{core.OpNe, func(a, b float64) bool { return a != b }},
	}
	// reads of element (i, j): x and y offsets through strides (and a base for a broadcast)
	layouts := []struct {
		name   string
		xs, ys []int
		yo     int
	}{
		{"rows", []int{n, 1}, []int{n, 1}, 0},
		{"y broadcast", []int{n, 1}, []int{0, 0}, 7},
		{"x column broadcast", []int{1, 0}, []int{n, 1}, 0},
		{"y transposed", []int{n, 1}, []int{1, n}, 0},
		{"both broadcast", []int{0, 0}, []int{0, 0}, 3},
	}
	for _, c := range ops {
		for _, l := range layouts {
			t.Run(fmt.Sprintf("%v/%s", c.op, l.name), func(t *testing.T) {
				k := StridedBinary{Op: c.op, Shape: []int{n, n}, XS: l.xs, YS: l.ys, YO: l.yo}.Merged()
				got64, got32 := make([]bool, n*n), make([]bool, n*n)
				if err := k.Run(got64, []any{x, y}); err != nil {
					t.Fatal(err)
				}
				if err := k.Run(got32, []any{toF32(x), toF32(y)}); err != nil {
					t.Fatal(err)
				}
				for i := 0; i < n; i++ {
					for j := 0; j < n; j++ {
						a, b := x[i*l.xs[0]+j*l.xs[1]], y[l.yo+i*l.ys[0]+j*l.ys[1]]
						want, want32 := c.f(a, b), c.f(float64(float32(a)), float64(float32(b)))
						if got64[i*n+j] != want || got32[i*n+j] != want32 {
							t.Errorf("%v %v %v: float64 %v (want %v), float32 %v (want %v)", a, c.op, b, got64[i*n+j], want, got32[i*n+j], want32)
						}
					}
				}
			})
		}
	}
}

// BenchmarkOpCompare is x ≥ 0 (the 0 broadcast) on 1M float32: a ReLU mask.
func BenchmarkOpCompare(b *testing.B) {
	x := toF32(benchData(opBenchN, 1))
	k := StridedBinary{Op: core.OpGe, Shape: []int{opBenchN}, XS: []int{1}, YS: []int{0}}
	benchOp(b, k, make([]bool, opBenchN), x, []float32{0})
}
