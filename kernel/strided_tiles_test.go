package kernel

import (
	"fmt"
	"math"
	"math/rand"
	"testing"

	"github.com/bulkad/bulkad/core"
)

// TestStridedTiles checks the tiled walk of StridedBinary (operands transposed relative to
// the output) against the definition out[i] = x[XO + Σ i_d·XS_d] op y[YO + Σ i_d·YS_d],
// written out here, bit for bit: random shapes with the last dimension read across rows by
// at least one operand and some other dimension read in order (or broadcast) by both, every
// dtype, + − · (written out in the tiles), ÷ and pow (through the operation's function), and
// operands of magnitudes 2^±20. The tiled path must be taken (stridedTilesFor) in every
// trial; the large cases also run split across goroutines (checkSplit).
func TestStridedTiles(t *testing.T) {
	rng := rand.New(rand.NewSource(29))
	ops := []struct {
		op core.BinOp
		f  func(a, b float64) float64
	}{
		{core.OpAdd, func(a, b float64) float64 { return a + b }},
		{core.OpSub, func(a, b float64) float64 { return a - b }},
		{core.OpMul, func(a, b float64) float64 { return a * b }},
		{core.OpDiv, func(a, b float64) float64 { return a / b }},
		{core.OpPow, math.Pow},
	}
	shapes := [][]int{{32, 256, 16}, {3, 40, 9}, {17, 33}, {2, 3, 8, 20}, {64, 2, 64}, {5, 8, 8}}
	for trial := 0; trial < 120; trial++ {
		sh := shapes[trial%len(shapes)]
		rank := len(sh)
		// a: a dimension other than the last, read in order by both operands (one of them
		// may broadcast along it); the last is read across rows (the operand's stride along
		// a times a's extent, or a broadcast for at most one operand).
		var long []int
		for d := 0; d < rank-1; d++ {
			if sh[d] >= tileSide/2 {
				long = append(long, d)
			}
		}
		a := long[rng.Intn(len(long))]
		strides := func(bcastA, bcastLast bool) []int {
			st := make([]int, rank)
			acc := 1
			if !bcastA {
				st[a] = 1
				acc = sh[a]
			}
			order := append([]int{rank - 1}, rng.Perm(rank-1)...)
			for _, d := range order {
				if d == a || d == rank-1 && bcastLast {
					continue
				}
				st[d] = acc
				acc *= sh[d]
			}
			return st
		}
		bx, by := rng.Intn(4) == 0, false
		if !bx {
			by = rng.Intn(4) == 0
		}
		xs := strides(bx, by && rng.Intn(2) == 0)
		ys := strides(by, false)
		if rowsContiguous(xs[rank-1], ys[rank-1]) { // rows both in order: not this path
			xs, ys = strides(false, false), strides(false, false)
		}
		xo, yo := rng.Intn(3), rng.Intn(3)
		c := ops[trial%len(ops)]
		k := StridedBinary{Op: c.op, Shape: sh, XS: xs, YS: ys, XO: xo, YO: yo}
		if _, ok := stridedTilesFor(k); !ok {
			t.Fatalf("trial %d: %v XS %v YS %v: not tiled", trial, sh, xs, ys)
		}
		n := core.Shape(sh).Size()
		x, y := make([]float64, n+3), make([]float64, n+3)
		for i := range x {
			x[i] = math.Ldexp(rng.NormFloat64(), rng.Intn(41)-20)
			y[i] = math.Ldexp(rng.NormFloat64(), rng.Intn(41)-20)
			if c.op == core.OpPow {
				x[i], y[i] = math.Abs(x[i]), float64(rng.Intn(5)-2)
			}
		}
		want := make([]float64, 0, n)
		each(sh, func(idx []int) {
			xi, yi := xo, yo
			for d, v := range idx {
				xi += v * xs[d]
				yi += v * ys[d]
			}
			want = append(want, c.f(x[xi], y[yi]))
		})
		for _, dt := range []core.Dtype{core.Float64, core.Float32, core.Int64} {
			if dt == core.Int64 && (c.op == core.OpDiv || c.op == core.OpPow) {
				continue
			}
			t.Run(fmt.Sprintf("%d/%v/%v", trial, c.op, dt), func(t *testing.T) {
				xv, yv := convertTo(dt, x), convertTo(dt, y)
				wantDt := want
				if dt != core.Float64 { // the definition in the dtype's own arithmetic
					wantDt = make([]float64, 0, n)
					xf, yf := convertTo(core.Float64, toF64(xv)), convertTo(core.Float64, toF64(yv))
					each(sh, func(idx []int) {
						xi, yi := xo, yo
						for d, v := range idx {
							xi += v * xs[d]
							yi += v * ys[d]
						}
						wantDt = append(wantDt, roundTo(dt, c.op, xf.([]float64)[xi], yf.([]float64)[yi], c.f))
					})
				}
				run := func() any {
					out := NewSlice(dt, n)
					if err := k.Run(out, []any{xv, yv}); err != nil {
						t.Fatal(err)
					}
					return out
				}
				got := run()
				if n >= 1<<16 {
					got = checkSplit(t, "strided tiles", run)
				}
				g := toF64(got)
				for i := range wantDt {
					if math.Float64bits(g[i]) != math.Float64bits(wantDt[i]) {
						t.Fatalf("%v XS %v YS %v offsets %d %d: element %d = %v, want %v", sh, xs, ys, xo, yo, i, g[i], wantDt[i])
					}
				}
			})
		}
	}
}

// convertTo is v in dtype dt (float32 rounded, int64 truncated).
func convertTo(dt core.Dtype, v []float64) any {
	switch dt {
	case core.Float32:
		o := make([]float32, len(v))
		for i, e := range v {
			o[i] = float32(e)
		}
		return o
	case core.Int64:
		o := make([]int64, len(v))
		for i, e := range v {
			o[i] = int64(math.Mod(e*64, 1<<20)) // products stay exact in float64
		}
		return o
	}
	return append([]float64(nil), v...)
}

// toF64 is a float64, float32 or int64 slice as float64s.
func toF64(v any) []float64 {
	switch s := v.(type) {
	case []float64:
		return s
	case []float32:
		o := make([]float64, len(s))
		for i, e := range s {
			o[i] = float64(e)
		}
		return o
	case []int64:
		o := make([]float64, len(s))
		for i, e := range s {
			o[i] = float64(e)
		}
		return o
	}
	return nil
}

// roundTo is a op b computed in dtype dt: float32 + − · ÷ exactly rounded from the float64
// result (a float64 sum, difference, product or quotient of two float32s rounds to the same
// float32 as the float32 operation), pow through float64 as the kernels compute it, int64
// exactly.
func roundTo(dt core.Dtype, op core.BinOp, a, b float64, f func(a, b float64) float64) float64 {
	switch dt {
	case core.Float32:
		return float64(float32(f(a, b)))
	case core.Int64:
		return float64(int64(f(a, b)))
	}
	return f(a, b)
}

// BenchmarkStridedTiles: x·x for x = tr [0,2,1] of a float32 [32, c, 256] activation (a
// Gorgonia-built batch norm's square, the output [32, 256, c]), c = 16 and 32; -cpu 1 for one
// thread.
func BenchmarkStridedTiles(b *testing.B) {
	for _, c := range []int{16, 32} {
		n := 32 * 256 * c
		x := make([]float32, n)
		for i := range x {
			x[i] = float32(i%97) / 8
		}
		k := StridedBinary{Op: core.OpMul, Shape: []int{32, 256, c}, XS: []int{256 * c, 1, 256}, YS: []int{256 * c, 1, 256}}
		b.Run(fmt.Sprintf("c=%d", c), func(b *testing.B) {
			benchOp(b, k, make([]float32, n), x, x)
		})
	}
}
