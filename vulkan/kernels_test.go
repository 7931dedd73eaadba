package vulkan

import (
	"errors"
	"fmt"
	"math"
	"math/rand"
	"testing"
)

// Tolerances: element-wise kernels are compared with core.Eval within ULPBound
// (elementwise_test.go). Reductions, matmul, scatter-add: |got - exact| <= 1e-5 * sum of
// |terms| (float32), the condition-aware form of "1e-5 relative" (exact = float64 sum of the
// same float32 inputs); float64 uses 1e-12. Gather, replicate, argmax: exact.

// unaryDomain is the usual input range of each op (besides special values and the whole range).
func unaryDomain(op string) (lo, hi float64) {
	switch op {
	case "sqrt":
		return 0, 1000
	case "log":
		return 1e-6, 1e6
	case "exp":
		return -87, 88
	case "tan":
		return -1.5, 1.5
	case "sin", "cos":
		return -20, 20
	case "sigmoid", "tanh":
		return -30, 30
	case "log1p":
		return -0.999, 10
	case "expm1":
		return -20, 2
	}
	return -100, 100
}

// within reports |got - want| <= tol * mag (+ the smallest normal, for all-zero inputs).
func within(got, want, mag, tol float64) bool {
	return math.Abs(got-want) <= tol*mag+1e-30
}

// firstOff returns the first index at which got is not within tol of want (scaled by mag),
// or -1.
func firstOff[T Float](got []T, want, mag []float64, tol float64) int {
	for i := range got {
		if !within(float64(got[i]), want[i], mag[i], tol) {
			return i
		}
	}
	return -1
}

func tolOf[T Float]() float64 {
	if is64[T]() {
		return 1e-12
	}
	return 1e-5
}

// eachReduction runs f for every shape [outer, n, inner] in each reduction mode, with a
// random source seeded from both.
func eachReduction(shapes [][3]int, f func(sh [3]int, mode int, seed int64, rng *rand.Rand)) {
	for _, sh := range shapes {
		for _, mode := range []int{reduceAuto, reduceThread, reduceGroup} {
			seed := int64(sh[0]*31 + sh[1]*7 + sh[2] + mode)
			f(sh, mode, seed, rand.New(rand.NewSource(seed)))
		}
	}
}

func testSum[T Float](t *testing.T, d *Device) {
	shapes := [][3]int{{1, 1, 1}, {1, 7, 1}, {3, 7, 5}, {2, 1000, 17}, {1000, 3, 1}, {1, 1000003, 1}, {7, 300, 33}, {4, 0, 3}}
	eachReduction(shapes, func(sh [3]int, mode int, seed int64, rng *rand.Rand) {
		if sh[1] == 1000003 && mode == reduceThread && is64[T]() {
			return // one invocation summing a million values: correct but slow on lavapipe
		}
		outer, n, inner := sh[0], sh[1], sh[2]
		src := uniform[T](rng, outer*n*inner, -1, 1)
		dst := make([]T, outer*inner)
		for i := range dst {
			dst[i] = T(math.NaN()) // must be overwritten
		}
		if err := sumAxis(d, dst, src, outer, n, inner, mode); err != nil {
			t.Fatalf("%v mode %d: %v", sh, mode, err)
		}
		want, mag := sumRef(src, outer, n, inner)
		if i := firstOff(dst, want, mag, tolOf[T]()); i >= 0 {
			t.Errorf("%s sum %v mode %d seed %d: out[%d] = %v, want %v (scale %v)", dtypeName[T](), sh, mode, seed, i, dst[i], want[i], mag[i])
		}
	})
	// SumOuter is the first-axis case.
	src := []T{1, 2, 3, 4, 5, 6}
	dst := make([]T, 3)
	if err := SumOuter(d, dst, src); err != nil {
		t.Fatal(err)
	}
	if dst[0] != 5 || dst[1] != 7 || dst[2] != 9 {
		t.Errorf("SumOuter([[1 2 3] [4 5 6]]) = %v, want [5 7 9]", dst)
	}
}

func TestSumAxis(t *testing.T) {
	d := device(t)
	// Axes longer than one dispatch's segment (segThread, segGroup) are reduced per segment.
	for _, c := range []struct{ n, mode int }{{3*segGroup + 5, reduceGroup}, {5*segThread + 3, reduceThread}} {
		rng := rand.New(rand.NewSource(int64(c.n)))
		src := uniform[float32](rng, c.n, -1, 1)
		dst := make([]float32, 1)
		if err := sumAxis(d, dst, src, 1, c.n, 1, c.mode); err != nil {
			t.Fatal(err)
		}
		want, mag := sumRef(src, 1, c.n, 1)
		if !within(float64(dst[0]), want[0], mag[0], 1e-5) {
			t.Errorf("sum of %d values (mode %d) = %v, want %v", c.n, c.mode, dst[0], want[0])
		}
	}
	testSum[float32](t, d)
	if d.SupportsFloat64() {
		testSum[float64](t, d)
	}
}

func testArgmax[T Float](t *testing.T, d *Device) {
	shapes := [][3]int{{1, 1, 1}, {1, 7, 1}, {5, 7, 3}, {2, 1000, 17}, {1000, 3, 1}, {1, 1000003, 1}, {3, 300, 33}}
	eachReduction(shapes, func(sh [3]int, mode int, seed int64, rng *rand.Rand) {
		outer, n, inner := sh[0], sh[1], sh[2]
		src := make([]T, outer*n*inner)
		for i := range src {
			src[i] = T(rng.Intn(20) - 10) // many ties: the first maximum must win
		}
		want := argmaxRef(src, outer, n, inner)
		got64 := make([]int64, outer*inner)
		if err := argmaxAxis(d, got64, src, outer, n, inner, mode); err != nil {
			t.Fatalf("%v: %v", sh, err)
		}
		got32 := make([]int32, outer*inner)
		if err := argmaxAxis(d, got32, src, outer, n, inner, mode); err != nil {
			t.Fatalf("%v: %v", sh, err)
		}
		for i := range want {
			if got64[i] != want[i] || int64(got32[i]) != want[i] {
				t.Errorf("%s argmax %v mode %d seed %d: out[%d] = %d (int32 %d), want %d", dtypeName[T](), sh, mode, seed, i, got64[i], got32[i], want[i])
				break
			}
		}
	})
	src := []T{3, 5, 9, 4, 5, 1}
	dst := make([]int64, 3)
	if err := ArgmaxOuter(d, dst, src); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(dst) != "[1 0 0]" {
		t.Errorf("ArgmaxOuter([[3 5 9] [4 5 1]]) = %v, want [1 0 0]", dst)
	}
}

func TestArgmaxAxis(t *testing.T) {
	d := device(t)
	eitherType(t, d, func() { argmaxLong[float32](t, d) }, func() { argmaxLong[float64](t, d) })
	if d.Info().Float32Subnormals {
		testArgmax[float32](t, d)
	} else if err := ArgmaxAxis(d, make([]int32, 1), []float32{1, 2}, 1, 2, 1); !errors.Is(err, ErrUnsupported) {
		t.Errorf("float32 argmax on a device that may flush subnormals: err = %v, want ErrUnsupported", err)
	}
	if d.SupportsFloat64() {
		testArgmax[float64](t, d)
	}
}

// argmaxLong puts the maximum at the very end of long axes (and a tie at the start of a later
// segment).
func argmaxLong[T Float](t *testing.T, d *Device) {
	for _, c := range []struct{ n, mode int }{{1000003, reduceThread}, {1000003, reduceGroup}, {2*segGroup + 7, reduceGroup}, {3 * segThread, reduceThread}} {
		src := make([]T, c.n)
		for i := range src {
			src[i] = T(i % 1000)
		}
		src[c.n-1] = 5000
		dst := make([]int32, 1)
		if err := argmaxAxis(d, dst, src, 1, c.n, 1, c.mode); err != nil {
			t.Fatal(err)
		}
		if int(dst[0]) != c.n-1 {
			t.Errorf("argmax of %d values with the maximum last (mode %d) = %d, want %d", c.n, c.mode, dst[0], c.n-1)
		}
		src[c.n-1] = 999 // ties: the first 999 is at index 999
		if err := argmaxAxis(d, dst, src, 1, c.n, 1, c.mode); err != nil {
			t.Fatal(err)
		}
		if dst[0] != 999 {
			t.Errorf("argmax of %d values with ties (mode %d) = %d, want 999", c.n, c.mode, dst[0])
		}
	}
}

func testMatMul[T Float](t *testing.T, d *Device, sizes [][3]int) {
	for _, sz := range sizes {
		m, k, n := sz[0], sz[1], sz[2]
		for _, ta := range []bool{false, true} {
			for _, tb := range []bool{false, true} {
				seed := int64(m*1000000 + k*1000 + n)
				rng := rand.New(rand.NewSource(seed))
				a := uniform[T](rng, m*k, -1, 1)
				b := uniform[T](rng, k*n, -1, 1)
				want, mag := matmulRef(a, b, m, k, n, ta, tb)
				// Both shaders whatever the device: tiled (GPUs) and one invocation per output
				// (CPU devices), then the automatic choice.
				variants := []func([]T) error{
					func(dst []T) error { return matmulWith(d, dst, a, b, m, k, n, ta, tb, matmulTiles, matmulK) },
					func(dst []T) error { return matmulSimple(d, dst, a, b, m, k, n, ta, tb, matmulOuts, matmulK) },
					func(dst []T) error { return MatMul(d, dst, a, b, m, k, n, ta, tb) },
				}
				for vi, run := range variants {
					dst := make([]T, m*n)
					for i := range dst {
						dst[i] = 42
					}
					if err := run(dst); err != nil {
						t.Fatalf("%v variant %d: %v", sz, vi, err)
					}
					if i := firstOff(dst, want, mag, tolOf[T]()); i >= 0 {
						t.Errorf("%s matmul variant %d m=%d k=%d n=%d tA=%v tB=%v seed=%d: out[%d,%d] = %v, want %v",
							dtypeName[T](), vi, m, k, n, ta, tb, seed, i/n, i%n, dst[i], want[i])
					}
				}
			}
		}
	}
}

func TestMatMul(t *testing.T) {
	d := device(t)
	// Split into several dispatches: tile ranges of 2 tiles and k ranges of 32, accumulating.
	for _, sz := range [][3]int{{33, 100, 17}, {5, 20000, 3}} {
		m, k, n := sz[0], sz[1], sz[2]
		rng := rand.New(rand.NewSource(int64(m + k + n)))
		a := uniform[float32](rng, m*k, -1, 1)
		b := uniform[float32](rng, k*n, -1, 1)
		dst := make([]float32, m*n)
		kChunk := 32
		if k > 10000 {
			kChunk = matmulK
		}
		want, mag := matmulRef(a, b, m, k, n, true, false)
		for vi, run := range []func() error{
			func() error { return matmulWith(d, dst, a, b, m, k, n, true, false, 2, kChunk) },
			func() error { return matmulSimple(d, dst, a, b, m, k, n, true, false, 37, kChunk) },
		} {
			clear(dst)
			if err := run(); err != nil {
				t.Fatal(err)
			}
			if i := firstOff(dst, want, mag, 1e-5); i >= 0 {
				t.Errorf("split matmul variant %d %v: out[%d] = %v, want %v", vi, sz, i, dst[i], want[i])
			}
		}
	}
	testMatMul[float32](t, d, [][3]int{{1, 1, 1}, {7, 5, 3}, {1, 7, 1}, {33, 17, 45}, {100, 300, 70}, {16, 16, 16}, {5, 0, 4}})
	if d.SupportsFloat64() {
		testMatMul[float64](t, d, [][3]int{{1, 1, 1}, {33, 17, 45}, {64, 100, 31}})
	}
}

func testGather[T Float](t *testing.T, d *Device, n int) {
	for _, block := range []int{1, 3} {
		seed := int64(n + block)
		rng := rand.New(rand.NewSource(seed))
		src := uniform[T](rng, 1000*block, -5, 5)
		idx := make([]int32, n)
		for i := range idx {
			idx[i] = int32(rng.Intn(1100) - 50) // about 9% out of range (dropped, read as 0)
		}
		dst := make([]T, n*block)
		for i := range dst {
			dst[i] = 42 // must be overwritten, also with zeros
		}
		if err := Gather(d, dst, src, idx, block); err != nil {
			t.Fatal(err)
		}
		want := gatherRef(src, idx, block)
		for i := range want {
			if dst[i] != want[i] {
				t.Errorf("%s gather n=%d block=%d seed=%d: out[%d] = %v, want %v", dtypeName[T](), n, block, seed, i, dst[i], want[i])
				break
			}
		}
	}
}

func TestGather(t *testing.T) {
	d := device(t)
	for _, n := range []int{1, 7, 1000, 1000003} {
		testGather[float32](t, d, n)
	}
	for _, n := range []int{1, 7, 1000} {
		testGather[float64](t, d, n)
	}
}

func testScatter[T Float](t *testing.T, d *Device, n int, shader string) {
	for _, block := range []int{1, 4} {
		for _, nDst := range []int{1, 7, 1000} {
			seed := int64(n*3 + block + nDst)
			rng := rand.New(rand.NewSource(seed))
			src := uniform[T](rng, n*block, -1, 1)
			idx := make([]int32, n)
			for i := range idx {
				idx[i] = int32(rng.Intn(nDst+4) - 2) // repeated indices, some negative or too large
			}
			dst := uniform[T](rng, nDst*block, -1, 1) // ScatterAdd accumulates onto dst
			want, mag := scatterRef(dst, src, idx, block)
			var err error
			if shader == "" {
				err = ScatterAdd(d, dst, src, idx, block)
			} else {
				err = scatterAdd(d, dst, src, idx, block, shader)
			}
			if err != nil {
				t.Fatal(err)
			}
			if i := firstOff(dst, want, mag, tolOf[T]()); i >= 0 {
				t.Errorf("%s scatter %q n=%d nDst=%d block=%d seed=%d: out[%d] = %v, want %v", dtypeName[T](), shader, n, nDst, block, seed, i, dst[i], want[i])
			}
		}
	}
}

func TestScatterAdd(t *testing.T) {
	d := device(t)
	for _, n := range []int{1, 7, 1000, 1000003} {
		testScatter[float32](t, d, n, "")
	}
	// The compare-and-swap fallback (devices without float atomics) must also be right.
	testScatter[float32](t, d, 1000, "scatter_cas_f32")
	if Supports[float64](d, "scatter", "") {
		for _, n := range []int{1, 7, 1000} {
			testScatter[float64](t, d, n, "")
		}
	} else {
		err := ScatterAdd(d, make([]float64, 2), make([]float64, 2), []int32{0, 1}, 1)
		if !errors.Is(err, ErrUnsupported) {
			t.Errorf("float64 scatter on a device without 64-bit atomics: err = %v, want ErrUnsupported", err)
		}
	}
}

func testReplicate[T Float](t *testing.T, d *Device) {
	for _, sz := range [][2]int{{1, 1}, {1, 7}, {7, 3}, {1000, 5}, {3, 333334}} {
		rng := rand.New(rand.NewSource(int64(sz[0] + sz[1])))
		src := uniform[T](rng, sz[0], -3, 3)
		dst := make([]T, sz[0]*sz[1])
		if err := Replicate(d, dst, src); err != nil {
			t.Fatal(err)
		}
		for i := range dst {
			if dst[i] != src[i%len(src)] {
				t.Errorf("%s replicate %v: out[%d] = %v, want %v", dtypeName[T](), sz, i, dst[i], src[i%len(src)])
				break
			}
		}
	}
}

func TestReplicate(t *testing.T) {
	d := device(t)
	testReplicate[float32](t, d)
	testReplicate[float64](t, d)
}

// TestArgumentErrors needs no device: shapes are checked before anything runs, and a nil
// device is an error, never a panic.
func TestArgumentErrors(t *testing.T) {
	var d *Device
	f := make([]float32, 6)
	cases := []struct {
		name string
		err  error
	}{
		{"unknown unary", Unary(d, "erf", f, f)},
		{"unary lengths", Unary(d, "neg", f[:2], f)},
		{"unknown binary", Binary(d, "atan2", f, f, f)},
		{"binary lengths", Binary(d, "+", f, f[:4], f)},
		{"strided shape", BinaryStrided(d, "+", f, f, f, []int{2, 3}, []int{3}, []int{3, 1})},
		{"sum shape", SumAxis(d, f[:2], f, 1, 5, 1)},
		{"sumOuter", SumOuter(d, f[:4], f)},
		{"argmax shape", ArgmaxAxis(d, []int32{0}, f[:5], 1, 6, 1)},
		{"matmul shape", MatMul(d, f[:4], f, f, 2, 2, 2, false, false)},
		{"gather block", Gather(d, f, f, []int32{0, 1}, 2)},
		{"gather zero block", Gather(d, f, f, []int32{0}, 0)},
		{"scatter block", ScatterAdd(d, f[:5], f[:4], []int32{0, 1}, 2)},
		{"replicate", Replicate(d, f[:5], f[:2])},
		{"nil device", Unary(d, "neg", f, f)},
	}
	for _, c := range cases {
		if c.err == nil {
			t.Errorf("%s: no error", c.name)
		} else if len(c.err.Error()) < 8 || c.err.Error()[:8] != "vulkan: " {
			t.Errorf("%s: error %q does not start with \"vulkan: \"", c.name, c.err)
		}
	}
	if Supports[float32](d, "unary", "neg") {
		t.Error("a nil device supports nothing")
	}
	// Empty inputs are no-ops that need no device.
	if err := Unary(d, "neg", f[:0], f[:0]); err != nil {
		t.Errorf("empty unary: %v", err)
	}
}

func TestOpenClose(t *testing.T) {
	device(t) // skip without Vulkan
	d, err := Open()
	if err != nil {
		t.Fatal(err)
	}
	x := []float32{1, 2}
	rep := make([]float32, 4)
	if err := Replicate(d, rep, x); err != nil || fmt.Sprint(rep) != "[1 2 1 2]" {
		t.Fatalf("replicate: %v %v", rep, err)
	}
	if tm := d.Timings(); tm.Calls != 1 || tm.Compute <= 0 {
		t.Errorf("timings after one call: %+v", tm)
	}
	d.ResetTimings()
	if tm := d.Timings(); tm.Calls != 0 || tm.Total() != 0 {
		t.Errorf("timings after reset: %+v", tm)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	if err := d.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if err := Unary(d, "neg", x, x); err == nil {
		t.Error("kernel on a closed device: no error")
	}
}

func TestBinaryStrided(t *testing.T) {
	d := device(t)
	eitherType(t, d, func() { binaryStrided[float32](t, d) }, func() { binaryStrided[float64](t, d) })
}

func binaryStrided[T Float](t *testing.T, d *Device) {
	cases := []struct {
		shape, xs, ys []int
		nx, ny        int
	}{
		{[]int{3, 4, 5}, []int{20, 5, 1}, []int{0, 1, 0}, 60, 4},                       // y broadcast over rows and columns
		{[]int{3, 4, 5}, []int{1, 3, 12}, []int{20, 5, 1}, 60, 60},                     // x transposed
		{[]int{2, 3, 1, 4, 5}, []int{60, 20, 0, 5, 1}, []int{0, 0, 0, 5, 1}, 120, 20},  // merges to rank 2
		{[]int{17, 33}, []int{0, 0}, []int{33, 1}, 1, 561},                             // x scalar
		{[]int{2, 3, 2, 3, 2}, []int{1, 2, 6, 12, 36}, []int{36, 12, 6, 2, 1}, 72, 72}, // 5 unmergeable dims
		{[]int{}, []int{}, []int{}, 1, 1},                                              // rank 0
	}
	for ci, c := range cases {
		rng := rand.New(rand.NewSource(int64(ci)))
		x := uniform[T](rng, c.nx, -3, 3)
		y := uniform[T](rng, c.ny, -3, 3)
		want := stridedRef("-", x, y, c.shape, c.xs, c.ys)
		dst := make([]T, len(want))
		err := BinaryStrided(d, "-", dst, x, y, c.shape, c.xs, c.ys)
		if len(c.shape) == 5 && c.xs[0] == 1 {
			if !errors.Is(err, ErrUnsupported) {
				t.Errorf("case %d: 5 unmergeable dimensions: err = %v, want ErrUnsupported", ci, err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("case %d: %v", ci, err)
		}
		for i := range want {
			if !sameBits(dst[i], want[i]) {
				t.Errorf("case %d (shape %v): out[%d] = %v, want %v", ci, c.shape, i, dst[i], want[i])
				break
			}
		}
	}
	if err := BinaryStrided(d, "+", make([]T, 4), make([]T, 4), make([]T, 2), []int{4}, []int{1}, []int{1}); err == nil {
		t.Error("strides reading past y: no error")
	}
}

func TestArgmaxNaN(t *testing.T) {
	d := device(t)
	eitherType(t, d, func() { argmaxNaN[float32](t, d) }, func() { argmaxNaN[float64](t, d) })
}

func argmaxNaN[T Float](t *testing.T, d *Device) {
	nan := T(math.NaN())
	// Columns: NaN first then values; all NaN; a tie after a NaN.
	src := []T{
		nan, nan, 1,
		2, nan, nan,
		5, nan, 1,
	}
	for _, mode := range []int{reduceThread, reduceGroup} {
		dst := make([]int64, 3)
		if err := argmaxAxis(d, dst, src, 1, 3, 3, mode); err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(dst) != "[2 0 0]" {
			t.Errorf("mode %d: argmax with NaNs = %v, want [2 0 0]", mode, dst)
		}
	}
	// A long axis whose first segments are NaN only.
	n := 3*segThread + 5
	long := make([]T, n)
	for i := range long {
		long[i] = nan
	}
	long[n-3], long[n-2] = 7, 7
	for _, mode := range []int{reduceThread, reduceGroup} {
		dst := make([]int32, 1)
		if err := argmaxAxis(d, dst, long, 1, n, 1, mode); err != nil {
			t.Fatal(err)
		}
		if int(dst[0]) != n-3 {
			t.Errorf("mode %d: argmax of NaNs then two 7s = %d, want %d", mode, dst[0], n-3)
		}
	}
	// Empty axis: 0, like core's evaluator.
	dst := []int64{5, 5}
	if err := ArgmaxAxis(d, dst, []T{}, 1, 0, 2); err != nil || dst[0] != 0 || dst[1] != 0 {
		t.Errorf("argmax over an empty axis = %v (err %v), want [0 0]", dst, err)
	}
}

// TestConcurrentCalls shares one device between goroutines (calls are serialised inside).
func TestConcurrentCalls(t *testing.T) {
	d := device(t)
	eitherType(t, d, func() { concurrentCalls[float32](t, d) }, func() { concurrentCalls[float64](t, d) })
}

func concurrentCalls[T Float](t *testing.T, d *Device) {
	work := func(g int) error {
		rng := rand.New(rand.NewSource(int64(g)))
		for it := 0; it < 10; it++ {
			n := 1 + rng.Intn(5000)
			x := uniform[T](rng, n, -1, 1)
			y := uniform[T](rng, n, -1, 1)
			dst := make([]T, n)
			if err := Binary(d, "*", dst, x, y); err != nil {
				return err
			}
			for i := range dst {
				if dst[i] != x[i]*y[i] {
					return fmt.Errorf("goroutine %d iteration %d: out[%d] = %v, want %v", g, it, i, dst[i], x[i]*y[i])
				}
			}
		}
		return nil
	}
	errs := make(chan error, 4)
	for g := 0; g < 4; g++ {
		go func(g int) { errs <- work(g) }(g)
	}
	for g := 0; g < 4; g++ {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}

func TestWorthwhile(t *testing.T) {
	var none *Device
	if none.Worthwhile("matmul", "", 1<<30) {
		t.Error("a nil device is never worthwhile")
	}
	d, err := shared()
	if err != nil {
		t.Skip("no device")
	}
	if d.Type() == CPU && d.Worthwhile("matmul", "", 1<<30) {
		t.Error("a CPU device (lavapipe) is never worthwhile")
	}
}

func testAffine[T Float](t *testing.T, d *Device) {
	cases := []struct {
		name          string
		dom, st       []int
		base, block   int
		srcBlocks     int
		unsupportedOK bool
	}{
		{"transpose", []int{3, 4}, []int{1, 3}, 0, 1, 12, false},
		{"im2col 3x3 windows, 2 channels", []int{4, 5, 3, 3}, []int{7, 1, 7, 1}, 0, 2, 42, false},
		{"reverse", []int{10}, []int{-1}, 9, 3, 10, false},
		{"partly out of range", []int{5}, []int{2}, 3, 1, 8, false},
		{"negative base", []int{4, 2}, []int{1, 4}, -2, 1, 6, false},
		{"broadcast rows", []int{6, 5}, []int{0, 1}, 0, 1, 5, false},
		{"rank 7", []int{2, 2, 2, 2, 2, 2, 2}, []int{1, 2, 4, 8, 16, 32, 64}, 0, 1, 128, true},
		{"rank 7 that merges", []int{2, 2, 2, 2, 2, 2, 2}, []int{64, 32, 16, 8, 4, 2, 1}, 0, 1, 128, false},
	}
	for ci, c := range cases {
		rng := rand.New(rand.NewSource(int64(ci)))
		src := uniform[T](rng, c.srcBlocks*c.block, -2, 2)
		js := affineRef(c.dom, c.st, c.base)
		idx := make([]int32, len(js)) // the same block indices for the plain references
		for p, j := range js {
			idx[p] = int32(j)
		}
		// gather
		dst := make([]T, len(js)*c.block)
		for i := range dst {
			dst[i] = 42
		}
		err := GatherAffine(d, dst, src, c.dom, c.st, c.base, c.block)
		if c.unsupportedOK {
			if !errors.Is(err, ErrUnsupported) {
				t.Errorf("%s gather %s: err = %v, want ErrUnsupported", dtypeName[T](), c.name, err)
			}
		} else if err != nil {
			t.Fatalf("%s gather %s: %v", dtypeName[T](), c.name, err)
		} else {
			for i, want := range gatherRef(src, idx, c.block) {
				if got := dst[i]; got != want {
					p, r := i/c.block, i%c.block
					t.Errorf("%s gather %s: block %d elem %d = %v, want %v (source block %d)", dtypeName[T](), c.name, p, r, got, want, js[p])
				}
			}
		}
		// scatter-add: the same map, the other way, onto a non-zero dst
		acc := uniform[T](rng, c.srcBlocks*c.block, -1, 1)
		upd := uniform[T](rng, len(js)*c.block, -1, 1)
		want, mag := scatterRef(acc, upd, idx, c.block)
		err = ScatterAddAffine(d, acc, upd, c.dom, c.st, c.base, c.block)
		if c.unsupportedOK || (is64[T]() && !Supports[T](d, "scatter", "")) {
			if !errors.Is(err, ErrUnsupported) {
				t.Errorf("%s scatter %s: err = %v, want ErrUnsupported", dtypeName[T](), c.name, err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s scatter %s: %v", dtypeName[T](), c.name, err)
		}
		if i := firstOff(acc, want, mag, tolOf[T]()); i >= 0 {
			t.Errorf("%s scatter %s: out[%d] = %v, want %v", dtypeName[T](), c.name, i, acc[i], want[i])
		}
	}
}

func TestAffineGatherScatter(t *testing.T) {
	d := device(t)
	testAffine[float32](t, d)
	testAffine[float64](t, d)
	// A large im2col-like gather: 1000003 is prime, so use a domain just over a million.
	src := uniform[float32](rand.New(rand.NewSource(9)), 1030*1030, -1, 1)
	dom, st := []int{1000, 1000, 2, 2}, []int{1030, 1, 1030, 1}
	dst := make([]float32, 4000000)
	if err := GatherAffine(d, dst, src, dom, st, 0, 1); err != nil {
		t.Fatal(err)
	}
	for p, j := range affineRef(dom, st, 0) {
		if dst[p] != src[j] {
			t.Fatalf("large affine gather: out[%d] = %v, want %v", p, dst[p], src[j])
		}
	}
}

// TestScatterContention sends every element to one target (worst case for the atomics and
// the compare-and-swap loops).
func TestScatterContention(t *testing.T) {
	d := device(t)
	n := 1000003
	if d.Type() != CPU {
		n = 20011 // a GPU's compare-and-swap loops take a million ones into one element in 37 s
	}
	src := make([]float32, n)
	for i := range src {
		src[i] = 1
	}
	idx := make([]int32, n)
	for _, shader := range []string{"", "scatter_cas_f32"} {
		dst := []float32{0.5}
		var err error
		if shader == "" {
			err = ScatterAdd(d, dst, src, idx, 1)
		} else {
			err = scatterAdd(d, dst, src, idx, 1, shader)
		}
		if err != nil {
			t.Fatal(err)
		}
		if dst[0] != float32(n)+0.5 { // every partial sum below 2^24 is exact
			t.Errorf("%q: %d ones into one element = %v, want %v", shader, n, dst[0], float32(n)+0.5)
		}
	}
	if Supports[float64](d, "scatter", "") {
		src64 := make([]float64, n)
		for i := range src64 {
			src64[i] = 1
		}
		dst := []float64{0.5}
		if err := ScatterAdd(d, dst, src64, idx, 1); err != nil {
			t.Fatal(err)
		}
		if dst[0] != float64(n)+0.5 {
			t.Errorf("float64: %d ones into one element = %v, want %v", n, dst[0], float64(n)+0.5)
		}
	}
}
