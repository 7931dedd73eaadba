//go:build amd64 && !purego

package vmath

import "testing"

// TestAVX2PathEqualsScalar runs the AVX2 kernels alone (vec…With without the AVX-512 ones,
// which the slice functions use on CPUs that have them) on every sample and every length
// 0..40, and asserts the scalar functions' bits: on an AVX-512 machine the other tests
// exercise the AVX-512 kernels, so this one keeps the AVX2 kernels tested there too.
func TestAVX2PathEqualsScalar(t *testing.T) {
	if !useAVX2() {
		t.Skip("the CPU has no AVX2 and FMA")
	}
	xs64 := samples64(sampleStep(t, 46, 52), 5000)
	for _, c := range []struct {
		name   string
		vec    func(dst, x []float64, z bool) int
		scalar func(float64) float64
	}{
		{"Exp64", vecExp64With, Exp64}, {"Log64", vecLog64With, Log64}, {"Tanh64", vecTanh64With, Tanh64},
		{"Sigmoid64", vecSigmoid64With, Sigmoid64}, {"Erf64", vecErf64With, Erf64},
	} {
		avx2Path(t, c.name, xs64, c.vec, c.scalar)
	}
	xs32 := samples32(sampleStep(t, 14, 20), 5000)
	for _, c := range []struct {
		name   string
		vec    func(dst, x []float32, z bool) int
		scalar func(float32) float32
	}{
		{"Exp32", vecExp32With, Exp32}, {"Log32", vecLog32With, Log32}, {"Tanh32", vecTanh32With, Tanh32},
		{"Sigmoid32", vecSigmoid32With, Sigmoid32}, {"Erf32", vecErf32With, Erf32},
	} {
		avx2Path(t, c.name, xs32, c.vec, c.scalar)
	}
}

// avx2Path is TestAVX2PathEqualsScalar for one function: the elements vec did must be the
// scalar function's, and it must do every whole vector.
func avx2Path[F float32 | float64](t *testing.T, name string, xs []F, vec func(dst, x []F, z bool) int, scalar func(F) F) {
	lanes := 4
	if _, f32 := any(F(0)).(float32); f32 {
		lanes = 8
	}
	check := func(in []F) {
		out := make([]F, len(in))
		done := vec(out, in, false)
		if done != len(in)/lanes*lanes {
			t.Fatalf("%s: AVX2 path did %d of %d elements", name, done, len(in))
		}
		for i := range done {
			if !bitsEqual(out[i], scalar(in[i])) {
				t.Fatalf("%s: AVX2 path, length %d: element %d (%v) = %#x, scalar %#x", name, len(in), i, in[i], bitsOf(out[i]), bitsOf(scalar(in[i])))
			}
		}
	}
	check(xs)
	for n := 0; n <= 40; n++ {
		check(xs[n : 2*n])
	}
}
