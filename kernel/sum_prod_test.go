package kernel

import (
	"fmt"
	"math"
	"math/rand"
	"testing"

	"github.com/bulkad/bulkad/core"
)

// TestSumProdLast: sums along the last dimension of strided products (contiguous rows of
// products, a row broadcast, transposed and strided reads, one output, empty sums) equal the
// StridedBinary product followed by the Axis sum bit for bit, in float32 and float64, and
// refuse reads outside the operands.
func TestSumProdLast(t *testing.T) {
	cases := []SumProdLast{
		{Shape: []int{64, 32, 9}, XS: []int{288, 9, 1}, YS: []int{0, 9, 1}},      // windows × broadcast filter
		{Shape: []int{7, 5, 9}, XS: []int{45, 9, 1}, YS: []int{45, 9, 1}, XO: 0}, // both contiguous
		{Shape: []int{3, 70, 9}, XS: []int{630, 9, 1}, YS: []int{0, 9, 1}},       // rows longer than a chunk
		{Shape: []int{6, 11}, XS: []int{1, 6}, YS: []int{11, 1}},                 // a transposed read
		{Shape: []int{5, 3, 4}, XS: []int{24, 8, 2}, YS: []int{0, 0, 1}, XO: 1},  // strided, offset
		{Shape: []int{13}, XS: []int{1}, YS: []int{2}},                           // one output
		{Shape: []int{4, 0}, XS: []int{0, 1}, YS: []int{0, 1}},                   // empty sums
	}
	r := rand.New(rand.NewSource(11))
	for _, c := range cases {
		t.Run(fmt.Sprint(c.Shape, c.XS, c.YS), func(t *testing.T) {
			checkSumProdLast[float32](t, r, c)
			checkSumProdLast[float64](t, r, c)
		})
	}
	k := SumProdLast{Shape: []int{4, 3}, XS: []int{3, 1}, YS: []int{3, 1}}
	if err := k.Run(make([]float64, 4), []any{make([]float64, 11), make([]float64, 12)}); err == nil {
		t.Error("an operand too short: no error")
	}
}

func checkSumProdLast[T floatT](t *testing.T, r *rand.Rand, k SumProdLast) {
	t.Helper()
	span := func(st []int, off int) int {
		s := off + 1
		for d, v := range st {
			if k.Shape[d] > 0 {
				s += (k.Shape[d] - 1) * v
			}
		}
		return s
	}
	x, y := randSlice[T](r, span(k.XS, k.XO)), randSlice[T](r, span(k.YS, k.YO))
	n := len(k.Shape)
	outer := sizeOf(k.Shape[:n-1])
	got := make([]T, outer)
	if err := k.Run(got, []any{x, y}); err != nil {
		t.Fatal(err)
	}
	prod := make([]T, sizeOf(k.Shape))
	sb := StridedBinary{Op: core.OpMul, Shape: k.Shape, XS: k.XS, YS: k.YS, XO: k.XO, YO: k.YO}
	if err := sb.Run(prod, []any{x, y}); err != nil {
		t.Fatal(err)
	}
	want := make([]T, outer)
	if err := (Axis{Pre: outer, N: k.Shape[n-1], Post: 1}).Run(want, []any{prod}); err != nil {
		t.Fatal(err)
	}
	for i := range want {
		if math.Float64bits(float64(got[i])) != math.Float64bits(float64(want[i])) {
			t.Fatalf("%T output %d: %v, product then sum %v", got[0], i, got[i], want[i])
		}
	}
}

// TestSumProdLastSplit: a SumProdLast large enough to split across goroutines gives the
// serial run's bits at GOMAXPROCS 2 and 3.
func TestSumProdLastSplit(t *testing.T) {
	r := rand.New(rand.NewSource(5))
	for _, k := range []SumProdLast{
		{Shape: []int{4096, 32, 9}, XS: []int{288, 9, 1}, YS: []int{0, 9, 1}},   // a broadcast filter
		{Shape: []int{4096, 32, 9}, XS: []int{288, 9, 1}, YS: []int{288, 9, 1}}, // both move
	} {
		x, y := randSlice[float32](r, 4096*288), randSlice[float32](r, 4096*288)
		checkSplit(t, fmt.Sprint("sumProdLast ", k.YS), func() any {
			out := make([]float32, 4096*32)
			if err := k.Run(out, []any{x, y}); err != nil {
				t.Fatal(err)
			}
			return out
		})
	}
}
