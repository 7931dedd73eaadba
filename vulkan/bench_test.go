package vulkan

import (
	"errors"
	"math"
	"math/rand"
	"testing"
)

// Benchmarks: each kernel on the device and as a plain Go loop on the CPU. The device runs
// report upload-ns/op, compute-ns/op and download-ns/op separately (Device.Timings); ns/op is
// their sum plus Go overhead. On lavapipe (a CPU device) the numbers only show that the
// shaders run: they are correctness runs, never speed claims.
//
//	MESA_SHADER_CACHE_DISABLE=true go test -run '^$' -bench . -benchtime 20x ./vulkan

// benchBoth runs kernel on the device and cpu, the same work as a plain Go loop, as the
// sub-benchmarks "device" and "cpu". The device run reports the transfer and compute split.
func benchBoth(b *testing.B, kernel func(d *Device) error, cpu func()) {
	b.Run("device", func(b *testing.B) {
		d := device(b)
		if d.Type() == CPU {
			b.Logf("device %q is a CPU implementation (lavapipe): correctness run only, not a speed claim", d.Name())
		}
		if err := kernel(d); errors.Is(err, ErrUnsupported) {
			b.Skip(err)
		} else if err != nil { // warm-up: pipeline creation, buffer growth
			b.Fatal(err)
		}
		d.ResetTimings()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			if err := kernel(d); err != nil {
				b.Fatal(err)
			}
		}
		b.StopTimer()
		t := d.Timings()
		n := float64(b.N)
		b.ReportMetric(float64(t.Upload.Nanoseconds())/n, "upload-ns/op")
		b.ReportMetric(float64(t.Compute.Nanoseconds())/n, "compute-ns/op")
		b.ReportMetric(float64(t.Download.Nanoseconds())/n, "download-ns/op")
	})
	b.Run("cpu", func(b *testing.B) {
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			cpu()
		}
	})
}

const benchN = 1 << 20

func BenchmarkUnaryExp(b *testing.B) {
	rng := rand.New(rand.NewSource(1))
	src := uniform[float32](rng, benchN, -10, 10)
	dst := make([]float32, benchN)
	benchBoth(b, func(d *Device) error { return Unary(d, "exp", dst, src) }, func() {
		for i, v := range src {
			dst[i] = float32(math.Exp(float64(v)))
		}
	})
}

func BenchmarkBinaryAdd(b *testing.B) {
	rng := rand.New(rand.NewSource(2))
	x := uniform[float32](rng, benchN, -10, 10)
	y := uniform[float32](rng, benchN, -10, 10)
	dst := make([]float32, benchN)
	benchBoth(b, func(d *Device) error { return Binary(d, "+", dst, x, y) }, func() {
		for i := range dst {
			dst[i] = x[i] + y[i]
		}
	})
}

func BenchmarkSumOuter(b *testing.B) {
	rng := rand.New(rand.NewSource(3))
	const rows, cols = 1024, 1024
	src := uniform[float32](rng, rows*cols, -1, 1)
	dst := make([]float32, cols)
	benchBoth(b, func(d *Device) error { return SumOuter(d, dst, src) }, func() {
		clear(dst)
		for r := 0; r < rows; r++ {
			for c, v := range src[r*cols : (r+1)*cols] {
				dst[c] += v
			}
		}
	})
}

func BenchmarkArgmaxOuter(b *testing.B) {
	rng := rand.New(rand.NewSource(4))
	const rows, cols = 10, benchN / 10
	src := uniform[float32](rng, rows*cols, -1, 1)
	dst := make([]int64, cols)
	benchBoth(b, func(d *Device) error { return ArgmaxOuter(d, dst, src) }, func() {
		for c := range dst {
			best := 0
			for r := 1; r < rows; r++ {
				if src[r*cols+c] > src[best*cols+c] {
					best = r
				}
			}
			dst[c] = int64(best)
		}
	})
}

func BenchmarkMatMul(b *testing.B) {
	rng := rand.New(rand.NewSource(5))
	const m, k, n = 256, 256, 256
	x := uniform[float32](rng, m*k, -1, 1)
	y := uniform[float32](rng, k*n, -1, 1)
	dst := make([]float32, m*n)
	// The CPU loop is a naive i-l-j loop, not a BLAS.
	benchBoth(b, func(d *Device) error { return MatMul(d, dst, x, y, m, k, n, false, false) }, func() {
		clear(dst)
		for i := 0; i < m; i++ {
			row := dst[i*n : (i+1)*n]
			for l := 0; l < k; l++ {
				a := x[i*k+l]
				for j, v := range y[l*n : (l+1)*n] {
					row[j] += a * v
				}
			}
		}
	})
}

func BenchmarkGather(b *testing.B) {
	rng := rand.New(rand.NewSource(6))
	src := uniform[float32](rng, benchN, -1, 1)
	idx := make([]int32, benchN)
	for i := range idx {
		idx[i] = int32(rng.Intn(benchN))
	}
	dst := make([]float32, benchN)
	benchBoth(b, func(d *Device) error { return Gather(d, dst, src, idx, 1) }, func() {
		for i, j := range idx {
			dst[i] = src[j]
		}
	})
}

func BenchmarkScatterAdd(b *testing.B) {
	rng := rand.New(rand.NewSource(7))
	src := uniform[float32](rng, benchN, -1, 1)
	idx := make([]int32, benchN)
	for i := range idx {
		idx[i] = int32(rng.Intn(benchN / 16)) // 16 writes per target on average
	}
	dst := make([]float32, benchN/16)
	benchBoth(b, func(d *Device) error { clear(dst); return ScatterAdd(d, dst, src, idx, 1) }, func() {
		clear(dst)
		for i, j := range idx {
			dst[j] += src[i]
		}
	})
}

func BenchmarkReplicate(b *testing.B) {
	rng := rand.New(rand.NewSource(8))
	src := uniform[float32](rng, 1024, -1, 1)
	dst := make([]float32, benchN)
	benchBoth(b, func(d *Device) error { return Replicate(d, dst, src) }, func() {
		for i := 0; i < len(dst); i += len(src) {
			copy(dst[i:], src)
		}
	})
}
