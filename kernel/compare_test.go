package kernel

import (
	"math"
	"testing"

	"github.com/bulkad/bulkad/core"
)

// TestCompareScalar: every ordering against the definition, ±0, ±Inf and NaN (which compares
// false), both dtypes, in place; a non-ordering operation and a short output are errors.
func TestCompareScalar(t *testing.T) {
	xs := []float64{-2, math.Copysign(0, -1), 0, 0.5, 3, math.Inf(1), math.Inf(-1), math.NaN(), 0.5}
	ops := map[core.BinOp]func(a, b float64) bool{
		core.OpGe: func(a, b float64) bool { return a >= b },
		core.OpGt: func(a, b float64) bool { return a > b },
		core.OpLe: func(a, b float64) bool { return a <= b },
		core.OpLt: func(a, b float64) bool { return a < b },
	}
	for op, def := range ops {
		for _, s := range []float64{0, math.Copysign(0, -1), 0.5, math.Inf(1)} {
			out := make([]float64, len(xs))
			if err := CompareScalar(out, xs, s, op); err != nil {
				t.Fatal(err)
			}
			x32 := make([]float32, len(xs))
			for i, v := range xs {
				x32[i] = float32(v)
			}
			if err := CompareScalar(x32, x32, float32(s), op); err != nil {
				t.Fatal(err)
			}
			for i, x := range xs {
				want := 0.0
				if def(x, s) {
					want = 1
				}
				if out[i] != want || float64(x32[i]) != want {
					t.Errorf("%v %v %v: f64 %v, f32 %v, want %v", x, op, s, out[i], x32[i], want)
				}
			}
		}
	}
	// A large input, split across goroutines, against the definition.
	big := make([]float32, 1<<19)
	for i := range big {
		big[i] = float32(i%9) - 4
	}
	bigOut := make([]float32, len(big))
	if err := CompareScalar(bigOut, big, 0, core.OpGe); err != nil {
		t.Fatal(err)
	}
	for i, v := range big {
		want := float32(0)
		if v >= 0 {
			want = 1
		}
		if bigOut[i] != want {
			t.Fatalf("large input: element %d (%v >= 0) = %v", i, v, bigOut[i])
		}
	}
	if err := CompareScalar(make([]float64, 2), make([]float64, 2), 0, core.OpEq); err == nil {
		t.Error("== was accepted")
	}
	if err := CompareScalar(make([]float64, 1), make([]float64, 2), 0, core.OpGe); err == nil {
		t.Error("a short output was accepted")
	}
}

// BenchmarkCompareScalar is the ReLU mask of the convnet's 32×32×28×28 activations.
func BenchmarkCompareScalar(b *testing.B) {
	x := make([]float32, 32*32*28*28)
	for i := range x {
		x[i] = float32(math.Sin(float64(i) * 0.7))
	}
	out := make([]float32, len(x))
	b.SetBytes(int64(8 * len(x)))
	for i := 0; i < b.N; i++ {
		if err := CompareScalar(out, x, 0, core.OpGe); err != nil {
			b.Fatal(err)
		}
	}
}
