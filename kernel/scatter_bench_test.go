package kernel

import "testing"

// BenchmarkScatterRowSum is scatter [1,32,9] x (\[k0] -> [0]) over 8192 rows of float32: the
// gradient of a depthwise filter broadcast over the rows (the bench's MobileNet blocks).
func BenchmarkScatterRowSum(b *testing.B) {
	n, r := 8192, 288
	x := make([]float32, n*r)
	for i := range x {
		x[i] = float32(i % 7)
	}
	out := make([]float32, r)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		scatterAffine(out, x, []int{n}, []int{0}, 0, r, addOf[float32]())
	}
}
