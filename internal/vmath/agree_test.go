package vmath

import (
	"math"
	"math/big"
	"math/rand"
	"os"
	"regexp"
	"strings"
	"testing"
)

// TestScalarEqualsVector64 asserts that the slice functions (assembly on whole vectors, the
// scalar function on the tail) return the scalar function's bits on every sample, for every
// slice length 0..80 (the AVX-512 main loop, its one-vector loop, the AVX2 loops and the
// scalar tail) and every start offset 0..7 (unaligned), and in place.
func TestScalarEqualsVector64(t *testing.T) {
	scalarEqualsVector(t, samples64(sampleStep(t, 46, 52), 5000), funcs64())
}

// TestScalarEqualsVector32 is TestScalarEqualsVector64 for float32.
func TestScalarEqualsVector32(t *testing.T) {
	scalarEqualsVector(t, samples32(sampleStep(t, 14, 20), 5000), funcs32())
}

// scalarEqualsVector is TestScalarEqualsVector64 and TestScalarEqualsVector32 on the
// samples xs.
func scalarEqualsVector[F float32 | float64](t *testing.T, xs []F, fs []fn[F]) {
	for _, f := range fs {
		got := make([]F, len(xs))
		if err := f.slice(got, xs); err != nil {
			t.Fatal(err)
		}
		for i, x := range xs {
			if want := f.scalar(x); !bitsEqual(got[i], want) {
				t.Fatalf("%s: slice(%v) = %#x, scalar %#x", f.name, x, bitsOf(got[i]), bitsOf(want))
			}
		}
		for n := 0; n <= 80; n++ {
			for off := 0; off < 8; off++ {
				in := xs[off*90+n : off*90+2*n]
				out := make([]F, n+off)[off:]
				if err := f.slice(out, in); err != nil {
					t.Fatal(err)
				}
				for i := range in {
					if !bitsEqual(out[i], f.scalar(in[i])) {
						t.Fatalf("%s: n=%d off=%d element %d differs", f.name, n, off, i)
					}
				}
			}
		}
		inPlace := append([]F(nil), xs[:1000]...)
		if err := f.slice(inPlace, inPlace); err != nil {
			t.Fatal(err)
		}
		for i := range inPlace {
			if !bitsEqual(inPlace[i], f.scalar(xs[i])) {
				t.Fatalf("%s: in place, element %d differs", f.name, i)
			}
		}
	}
}

// TestShortDst checks the error for a destination shorter than x, and that the generic
// functions dispatch to the dtype's function.
func TestShortDst(t *testing.T) {
	cases := []struct {
		name string
		err  error
	}{
		{"Exp64Slice", Exp64Slice(make([]float64, 3), make([]float64, 4))},
		{"Log32Slice", Log32Slice(make([]float32, 0), make([]float32, 1))},
		{"TanhSlice", TanhSlice(make([]float64, 1), make([]float64, 9))},
		{"ErfSlice", ErfSlice(make([]float32, 7), make([]float32, 8))},
		{"SigmoidSlice", SigmoidSlice(make([]float32, 2), make([]float32, 5))},
	}
	for _, c := range cases {
		if c.err == nil || !strings.Contains(c.err.Error(), "vmath: ") || !strings.Contains(c.err.Error(), "dst has") {
			t.Errorf("%s: error %v", c.name, c.err)
		}
	}
	if err := ExpSlice(make([]float64, 5), make([]float64, 4)); err != nil {
		t.Errorf("longer dst: %v", err)
	}
	if Exp(float32(1)) != Exp32(1) || Log(2.0) != Log64(2) || Tanh(0.5) != Tanh64(0.5) ||
		Sigmoid(float32(-3)) != Sigmoid32(-3) || Erf(0.7) != Erf64(0.7) {
		t.Error("generic functions differ from the dtype's")
	}
}

// TestFMA32 compares fma32 with a*b+c computed exactly in math/big and rounded once to
// float32 (big.Float.Float32 rounds to nearest even, subnormals included).
func TestFMA32(t *testing.T) {
	r := rand.New(rand.NewSource(2))
	vals := []float32{0, 1, -1, 0x1p-149, 0x1p-126, math.MaxFloat32, 3, 1.0 / 3, 0x1.fffffep-1}
	pick := func() float32 {
		switch r.Intn(4) {
		case 0:
			return vals[r.Intn(len(vals))] * float32(1-2*r.Intn(2))
		case 1:
			return math.Float32frombits(r.Uint32()&^(0xff<<23) | uint32(100+r.Intn(56))<<23)
		default:
			return float32(r.NormFloat64()) * float32(math.Ldexp(1, r.Intn(60)-30))
		}
	}
	for i := 0; i < 200000; i++ {
		a, b, c := pick(), pick(), pick()
		// make c nearly cancel a*b now and then
		if i%3 == 0 {
			c = -float32(float64(a) * float64(b))
			c = math.Float32frombits(math.Float32bits(c) + uint32(r.Intn(3)) - 1)
		}
		if math.IsInf(float64(c), 0) || c != c {
			continue
		}
		ex := new(big.Float).SetPrec(400).SetFloat64(float64(a))
		ex.Mul(ex, new(big.Float).SetFloat64(float64(b)))
		ex.Add(ex, new(big.Float).SetFloat64(float64(c)))
		want, _ := ex.Float32()
		if want == 0 { // the sign of an exact zero: +0 unless both terms are -0
			want = float32(float64(a)*float64(b) + float64(c))
		}
		if got := fma32(a, b, c); math.Float32bits(got) != math.Float32bits(want) && !(math.IsInf(float64(got), 0) && math.IsInf(float64(want), 0) && got == want) {
			t.Fatalf("fma32(%v, %v, %v) = %v, want %v", a, b, c, got, want)
		}
	}
}

// FuzzScalarVector64 asserts slice == scalar bitwise for fuzzed inputs (the five float64
// functions on 8 values: two whole vectors, so the assembly runs on all of them).
func FuzzScalarVector64(f *testing.F) {
	f.Add(uint64(0), uint64(0x7ff0000000000000), uint64(0x3ff0000000000000), uint64(1))
	f.Fuzz(func(t *testing.T, a, b, c, d uint64) {
		in := []float64{}
		for _, u := range []uint64{a, b, c, d} {
			in = append(in, math.Float64frombits(u), -math.Float64frombits(u))
		}
		sliceIsScalar(t, in, funcs64())
	})
}

// FuzzScalarVector32 is FuzzScalarVector64 for float32 (16 values).
func FuzzScalarVector32(f *testing.F) {
	f.Add(uint64(0), uint64(0x7f8000003f800000), uint64(0x0000000180000001), uint64(0x42b2000042d00000))
	f.Fuzz(func(t *testing.T, a, b, c, d uint64) {
		in := []float32{}
		for _, u := range []uint64{a, b, c, d} {
			for _, h := range []uint32{uint32(u), uint32(u >> 32)} {
				in = append(in, math.Float32frombits(h), -math.Float32frombits(h))
			}
		}
		sliceIsScalar(t, in, funcs32())
	})
}

// sliceIsScalar asserts that each function's slice version gives its scalar version's bits
// on in.
func sliceIsScalar[F float32 | float64](t *testing.T, in []F, fs []fn[F]) {
	out := make([]F, len(in))
	for _, fn := range fs {
		if err := fn.slice(out, in); err != nil {
			t.Fatal(err)
		}
		for i, x := range in {
			if !bitsEqual(out[i], fn.scalar(x)) {
				t.Fatalf("%s(%v): slice %#x scalar %#x", fn.name, x, bitsOf(out[i]), bitsOf(fn.scalar(x)))
			}
		}
	}
}

// TestAVX2Registers asserts that the AVX2 kernels of the generated assembly use only the
// registers AVX2 encodes, Y0–Y15: they run on CPUs without AVX-512, and avo's register
// allocator hands out Y16–Y31 too when a main loop interleaves more vectors than those hold
// (the unroll of each function in internal/asmgen is chosen to fit). The AVX-512 kernels
// (TEXT ·…AVX512) may use every register.
func TestAVX2Registers(t *testing.T) {
	src, err := os.ReadFile("vmath_amd64.s")
	if err != nil {
		t.Fatal(err)
	}
	bad := regexp.MustCompile(`\b(Y(1[6-9]|2[0-9]|3[01])|Z[0-9]+|X(1[6-9]|2[0-9]|3[01])|K[1-7])\b`)
	avx2, kernels := false, 0
	for i, line := range strings.Split(string(src), "\n") {
		if strings.HasPrefix(line, "TEXT ") {
			avx2 = strings.Contains(line, "AVX2(SB)")
			if avx2 {
				kernels++
			}
		}
		if r := bad.FindString(line); avx2 && r != "" {
			t.Errorf("vmath_amd64.s:%d: %s needs AVX-512: %s", i+1, r, strings.TrimSpace(line))
		}
	}
	if kernels != 10 {
		t.Errorf("found %d AVX2 kernels in vmath_amd64.s, want 10", kernels)
	}
}
