package kernel

import (
	"fmt"
	"math"
	"math/rand"
	"testing"
	"unsafe"

	"github.com/bulkad/bulkad/core"
)

// specials are operands whose results the vector loops must reproduce to the bit: NaNs with
// payloads and signs, infinities, signed zeros, subnormals, the extremes of the dtype.
func specials[T floatT]() []T {
	var z T
	f32 := any(z) == any(float32(0))
	v := []float64{math.NaN(), -math.NaN(), math.Float64frombits(0x7ff0000000000123), math.Inf(1), math.Inf(-1), 0, math.Copysign(0, -1), 1, -1, 3.5}
	if f32 {
		out := make([]T, 0, len(v)+6)
		for _, e := range v {
			out = append(out, T(e))
		}
		return append(out, T(math.Float32frombits(0x7fc00abc)), T(math.Float32frombits(1)), T(-math.Float32frombits(0x007fffff)),
			T(math.Float32frombits(0x7f7fffff)), T(math.Float32frombits(0xff7fffff)), T(math.Float32frombits(1)))
	}
	out := make([]T, 0, len(v)+4)
	for _, e := range v {
		out = append(out, T(e))
	}
	big := math.MaxFloat64 // a variable: the constant does not convert to float32
	return append(out, T(math.Float64frombits(1)), T(big), T(-big), T(math.Float64frombits(1)))
}

// operands of n elements: random magnitudes 2^±60 with specials mixed in.
func vecOperands[T floatT](rng *rand.Rand, n int) []T {
	sp := specials[T]()
	v := make([]T, n)
	for i := range v {
		if rng.Intn(4) == 0 {
			v[i] = sp[rng.Intn(len(sp))]
		} else {
			v[i] = T(math.Ldexp(rng.NormFloat64(), rng.Intn(121)-60))
		}
	}
	return v
}

// sameBitsOrNaN reports whether got is want to the bit, where want = a op b; when a and b are
// both NaN, either one's NaN will do: Go's compiler may put either operand of + and · first,
// and x86 returns the first operand's NaN, so which of two NaNs propagates is not fixed even
// in the scalar loops (IEEE 754 leaves it open).
func sameBitsOrNaN[T floatT](got, want, a, b T) bool {
	if a != a && b != b && got != got {
		q := bitsOf(got)
		return q == bitsOf(a+0) || q == bitsOf(b+0) || q == bitsOf(want)
	}
	return bitsOf(got) == bitsOf(want)
}

func bitsOf[T floatT](v T) uint64 {
	if f, ok := any(v).(float32); ok {
		return uint64(math.Float32bits(f))
	}
	return math.Float64bits(any(v).(float64))
}

// TestSIMDElementwise checks the AVX2 element-wise loops (through binaryArith, binaryFloat
// and scalarArith, which use them for the leading whole vectors) against Go's own operators
// element by element, bit for bit (NaN payloads included): + − · ÷ and the built-in max and
// min (a NaN wins, +0 > −0) of two slices and of a
// slice and a scalar on either side, float32 and float64, lengths 0 to 70 and 1000 (every
// tail length, the 4-vector and 1-vector loops), slices starting at odd offsets, in place
// (dst is x or y) and partly overlapping (the scalar loop then runs).
func TestSIMDElementwise(t *testing.T) {
	testSIMD[float32](t)
	testSIMD[float64](t)
}

func testSIMD[T floatT](t *testing.T) {
	rng := rand.New(rand.NewSource(41))
	ops := []struct {
		op core.BinOp
		f  func(a, b T) T
	}{
		{core.OpAdd, func(a, b T) T { return a + b }},
		{core.OpSub, func(a, b T) T { return a - b }},
		{core.OpMul, func(a, b T) T { return a * b }},
		{core.OpDiv, func(a, b T) T { return a / b }},
		{core.OpMax, func(a, b T) T { return max(a, b) }},
		{core.OpMin, func(a, b T) T { return min(a, b) }},
	}
	var lens []int
	for n := 0; n <= 70; n++ {
		lens = append(lens, n)
	}
	lens = append(lens, 1000)
	check := func(what string, got, x, y []T, f func(a, b T) T) {
		t.Helper()
		for i := range got {
			if w := f(x[i], y[i]); !sameBitsOrNaN(got[i], w, x[i], y[i]) {
				t.Fatalf("%T %s: element %d of %d: %v op %v = %v (%#x), want %v (%#x)", got, what, i, len(got), x[i], y[i], got[i], bitsOf(got[i]), w, bitsOf(w))
			}
		}
	}
	for _, c := range ops {
		for _, n := range lens {
			off := rng.Intn(3)
			x, y := vecOperands[T](rng, n+off)[off:], vecOperands[T](rng, n+off)[off:]
			xc, yc := append([]T(nil), x...), append([]T(nil), y...)
			name := fmt.Sprintf("%v n=%d", c.op, n)
			// two slices
			dst := make([]T, n)
			if c.op == core.OpDiv || c.op == core.OpMax || c.op == core.OpMin {
				binaryFloat(c.op, dst, x, y)
			} else {
				binaryArith(c.op, dst, x, y)
			}
			check(name, dst, xc, yc, c.f)
			// in place, dst = x and dst = y
			binaryFloat(c.op, x, x, y)
			check(name+" in place (x)", x, xc, yc, c.f)
			copy(x, xc)
			binaryFloat(c.op, y, x, y)
			check(name+" in place (y)", y, xc, yc, c.f)
			copy(y, yc)
			// scalar on the right and on the left
			s := vecOperands[T](rng, 1)[0]
			ss := make([]T, n)
			for i := range ss {
				ss[i] = s
			}
			if scalarArith(c.op, dst, x, s, false) {
				check(name+" v op s", dst, xc, ss, c.f)
			} else {
				t.Fatalf("%s: scalarArith declined", name)
			}
			if scalarArith(c.op, dst, x, s, true) {
				// + and · commute: scalarArith computes v op s on either side (which NaN of
				// two propagates is the one choice IEEE 754 leaves open)
				if c.op == core.OpAdd || c.op == core.OpMul || c.op == core.OpMax || c.op == core.OpMin {
					check(name+" s op v", dst, xc, ss, c.f)
				} else {
					check(name+" s op v", dst, ss, xc, c.f)
				}
			} else {
				t.Fatalf("%s: scalarArith declined", name)
			}
			// partly overlapping: dst one element past x (the scalar loop's order)
			if n > 1 {
				buf := append([]T(nil), xc...)
				want := append([]T(nil), xc...)
				for i := 0; i+1 < n; i++ {
					want[i+1] = c.f(want[i], yc[i])
				}
				binaryFloat(c.op, buf[1:], buf[:n-1], y)
				for i := range want {
					if bitsOf(buf[i]) != bitsOf(want[i]) {
						t.Fatalf("%s overlapping: element %d = %v, want %v", name, i, buf[i], want[i])
					}
				}
			}
		}
	}
}

// BenchmarkSIMDElementwise: x·y and x·s of 4096 float32 (L1-resident) through the kernels'
// loops (the AVX2 assembly for the whole vectors).
func BenchmarkSIMDElementwise(b *testing.B) {
	n := 4096
	x, y, dst := make([]float32, n), make([]float32, n), make([]float32, n)
	for i := range x {
		x[i], y[i] = float32(i%13)/4, float32(i%7)/8
	}
	b.Run("vv", func(b *testing.B) {
		for range b.N {
			binaryArith(core.OpMul, dst, x, y)
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/elem")
	})
	b.Run("vs", func(b *testing.B) {
		for range b.N {
			scalarArith(core.OpMul, dst, x, 1.5, false)
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/elem")
	})
}

// TestSIMDBoolCastAndAddTo checks the other two users of the vector loops against their
// definitions: the cast of bools to float32 and float64 (1 for true, 0 for false; the Cast
// kernel) and addTo (dst[i] += src[i], the scatters' row adds), every length from 0 to 70 and
// 1000, slices at odd offsets.
func TestSIMDBoolCastAndAddTo(t *testing.T) {
	rng := rand.New(rand.NewSource(43))
	lens := []int{1000}
	for n := 0; n <= 70; n++ {
		lens = append(lens, n)
	}
	for _, n := range lens {
		off := rng.Intn(3)
		src := make([]bool, n+off)[off:]
		for i := range src {
			src[i] = rng.Intn(2) == 0
		}
		f32, f64 := make([]float32, n+1)[1:], make([]float64, n)
		for i := range f32 {
			f32[i], f64[i] = -7, -7 // dirty: every element must be written
		}
		if err := (Cast{}).Run(f32, []any{src}); err != nil {
			t.Fatal(err)
		}
		if err := (Cast{}).Run(f64, []any{src}); err != nil {
			t.Fatal(err)
		}
		for i, b := range src {
			want := 0.0
			if b {
				want = 1
			}
			if float64(f32[i]) != want || f64[i] != want {
				t.Fatalf("n=%d: cast of %v at %d = %v (float32), %v (float64)", n, b, i, f32[i], f64[i])
			}
		}
		x, y := vecOperands[float32](rng, n), vecOperands[float32](rng, n+off)[off:]
		want := make([]float32, n)
		for i := range want {
			want[i] = x[i] + y[i]
		}
		x0 := append([]float32(nil), x...)
		addTo(x, y)
		for i := range want {
			if !sameBitsOrNaN(x[i], want[i], x0[i], y[i]) {
				t.Fatalf("n=%d: addTo element %d = %v, want %v", n, i, x[i], want[i])
			}
		}
	}
}

// TestSIMDCompare checks the vector comparisons with a broadcast operand (cmpRow, the masks of
// ReLUs and max-pools) against Go's comparisons element by element: every comparison, float32
// and float64, each special value (NaNs, infinities, signed zeros, subnormals) as the scalar,
// operands mixing specials and random values, lengths 0 to 70 and 1000, a dirty output.
func TestSIMDCompare(t *testing.T) {
	testSIMDCompare[float32](t)
	testSIMDCompare[float64](t)
}

func testSIMDCompare[T floatT](t *testing.T) {
	rng := rand.New(rand.NewSource(47))
	ops := []struct {
		op core.BinOp
		f  func(a, b T) bool
	}{
		{core.OpLt, func(a, b T) bool { return a < b }},
		{core.OpLe, func(a, b T) bool { return a <= b }},
		{core.OpGt, func(a, b T) bool { return a > b }},
		{core.OpGe, func(a, b T) bool { return a >= b }},
		{core.OpEq, func(a, b T) bool { return a == b }},
		{core.OpNe, func(a, b T) bool { return a != b }},
	}
	lens := []int{1000}
	for n := 0; n <= 70; n++ {
		lens = append(lens, n)
	}
	scalars := append(specials[T](), vecOperands[T](rng, 4)...)
	for _, c := range ops {
		for _, s := range scalars {
			for _, n := range lens {
				x := vecOperands[T](rng, n)
				for i := range x {
					if rng.Intn(5) == 0 {
						x[i] = s // equal to the scalar
					}
				}
				o := make([]bool, n)
				for i := range o {
					o[i] = i%2 == 0
				}
				cmpRow(c.op, o, x, []T{s}, true)
				for i := range o {
					if want := c.f(x[i], s); o[i] != want {
						t.Fatalf("%T %v n=%d: %v %v %v = %v, want %v", x, c.op, n, x[i], c.op, s, o[i], want)
					}
				}
			}
		}
	}
}

// TestSumRows checks the sums along the last axis (Axis with Post 1: sixteen float32 or
// eight float64 rows at a time in vector lanes where the rows are a multiple of 8 or 4 long,
// then four rows at a time) against each row summed in order from zero, bit for bit, on
// operands of magnitudes 2^±60 with specials (a sum in another order rounds differently),
// float32, float64 and int64, row lengths 1 to 20 and row counts past two vector blocks that
// leave every remainder of four.
func TestSumRows(t *testing.T) {
	rng := rand.New(rand.NewSource(53))
	for n := 1; n <= 20; n++ {
		for rows := 0; rows <= 37; rows++ {
			x64 := vecOperands[float64](rng, rows*n)
			x32 := vecOperands[float32](rng, rows*n)
			xi := make([]int64, rows*n)
			for i := range xi {
				xi[i] = rng.Int63n(1<<40) - 1<<39
			}
			o64, o32, oi := make([]float64, rows), make([]float32, rows), make([]int64, rows)
			k := Axis{Pre: rows, N: n, Post: 1}
			for _, c := range [][2]any{{o64, x64}, {o32, x32}, {oi, xi}} {
				if err := k.Run(c[0], []any{c[1]}); err != nil {
					t.Fatal(err)
				}
			}
			for p := range rows {
				var w64 float64
				var w32 float32
				var wi int64
				for i := range n {
					w64 += x64[p*n+i]
					w32 += x32[p*n+i]
					wi += xi[p*n+i]
				}
				if !sameBitsOrNaN(o64[p], w64, w64, w64) || !sameBitsOrNaN(o32[p], w32, w32, w32) || oi[p] != wi {
					t.Fatalf("n=%d rows=%d: row %d sums to %v %v %v, want %v %v %v", n, rows, p, o64[p], o32[p], oi[p], w64, w32, wi)
				}
			}
		}
	}
}

// TestSIMDAxpy checks axpyUnit (d[t] += s[t]·v, the vector loop for the whole vectors, the
// product rounded before the sum) against Go's d += s*v element by element, bit for bit
// (NaNs of two operands excepted as in sameBitsOrNaN), float32 and float64, lengths 0 to 70
// and 1000, specials in d, s and v.
func TestSIMDAxpy(t *testing.T) {
	testSIMDAxpy[float32](t)
	testSIMDAxpy[float64](t)
}

func testSIMDAxpy[T floatT](t *testing.T) {
	rng := rand.New(rand.NewSource(59))
	lens := []int{1000}
	for n := 0; n <= 70; n++ {
		lens = append(lens, n)
	}
	for _, n := range lens {
		for _, v := range append(specials[T](), vecOperands[T](rng, 3)...) {
			d, s := vecOperands[T](rng, n), vecOperands[T](rng, n)
			want := append([]T(nil), d...)
			for i := range want {
				want[i] += s[i] * v
			}
			d0 := append([]T(nil), d...)
			axpyUnit(d, s, v)
			for i := range d {
				if !sameBitsOrNaN(d[i], want[i], d0[i], s[i]*v) {
					t.Fatalf("%T n=%d v=%v: element %d: %v + %v·%v = %v, want %v", d, n, v, i, d0[i], s[i], v, d[i], want[i])
				}
			}
		}
	}
}

// TestGatherAxpy checks gatherAxpyVec against the loop it replaces (each column's products in
// the order of q from +0, then added to out) bit for bit, NaNs aside, with special values in
// v and b; the columns past its vectors are left alone, and offsets reading outside b are
// refused.
func TestGatherAxpy(t *testing.T) {
	testGatherAxpy[float32](t)
	testGatherAxpy[float64](t)
}

func testGatherAxpy[T floatT](t *testing.T) {
	rng := rand.New(rand.NewSource(61))
	lanes := 32 / int(unsafe.Sizeof(T(0)))
	for _, n := range []int{1, 2, 3, 14, 33} {
		for _, vecs := range []int{1, 2, 3} {
			width := vecs*lanes + rng.Intn(lanes) // b's rows, and out: a scalar rest past the vectors
			rows := 7
			b := vecOperands[T](rng, rows*width)
			v := vecOperands[T](rng, n)
			offs := make([]int, n)
			for q := range offs {
				offs[q] = rng.Intn(rows) * width
			}
			out := vecOperands[T](rng, width)
			want := append([]T(nil), out...)
			for j := 0; j < vecs*lanes; j++ {
				var a T
				for q := range v {
					a += v[q] * b[offs[q]+j]
				}
				want[j] += a
			}
			if done := gatherAxpyVec(v, offs, b, out, width); done != vecs*lanes {
				if hasVec || done != 0 {
					t.Fatalf("%T n=%d vecs=%d: %d columns done of %d", b, n, vecs, done, width)
				}
				return
			}
			for j := range out {
				if out[j] != want[j] && !(out[j] != out[j] && want[j] != want[j]) {
					t.Fatalf("%T n=%d vecs=%d: column %d = %v, want %v", b, n, vecs, j, out[j], want[j])
				}
			}
			offs[n-1] = rows*width - vecs*lanes + 1 // the last row's vectors run past b
			if gatherAxpyVec(v, offs, b, out, width) != 0 {
				t.Fatalf("%T n=%d vecs=%d: an offset past b accepted", b, n, vecs)
			}
		}
	}
}
