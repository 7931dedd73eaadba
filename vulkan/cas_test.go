//go:build (linux || darwin || freebsd) && (amd64 || arm64) && !novulkan

package vulkan

import (
	"errors"
	"testing"
)

// TestScatterCASDeclines: on a GPU, a compare-and-swap scatter with more than casContentionMax
// source blocks on one block of dst is declined (the CPU runs it), below it runs; float32
// atomic add takes any contention; a CPU device takes any.
func TestScatterCASDeclines(t *testing.T) {
	device(t)
	d, err := Open()
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	ones := func(n int) ([]float64, []int32) {
		src := make([]float64, n)
		for i := range src {
			src[i] = 1
		}
		return src, make([]int32, n)
	}
	if d.Type() == CPU && d.SupportsFloat64() {
		src, idx := ones(casContentionMax + 1)
		dst := []float64{0}
		if err := ScatterAdd(d, dst, src, idx, 1); err != nil || dst[0] != casContentionMax+1 {
			t.Errorf("CPU device, %d ones into one element: %v (err %v)", casContentionMax+1, dst[0], err)
		}
	}
	d.info.Type = DiscreteGPU // as a GPU: the limit applies
	for _, c := range []struct {
		n, targets int
		declined   bool
	}{{casContentionMax, 1, false}, {casContentionMax + 1, 1, true}, {4 * casContentionMax, 4, false}, {4*casContentionMax + 1, 4, true}} {
		src, idx := ones(c.n)
		for i := range idx {
			idx[i] = int32(i % c.targets)
		}
		idx[len(idx)-1] = 0 // the extra one lands on block 0
		if c.n%c.targets == 0 {
			idx[len(idx)-1] = int32((c.n - 1) % c.targets)
		}
		dst := make([]float64, c.targets)
		err := casDeclines(d, "test", "scatter_cas_f64", mostPerTarget(idx, c.targets))
		if declined := errors.Is(err, ErrUnsupported); declined != c.declined {
			t.Errorf("%d sources on %d targets: declined %v (err %v), want %v", c.n, c.targets, declined, err, c.declined)
		}
		if !d.SupportsFloat64() || !Supports[float64](d, "scatter", "") {
			continue
		}
		err = ScatterAdd(d, dst, src, idx, 1)
		if c.declined {
			if !errors.Is(err, ErrUnsupported) {
				t.Errorf("%d sources on %d targets: float64 ScatterAdd err = %v, want ErrUnsupported", c.n, c.targets, err)
			}
			continue
		}
		if err != nil || dst[0] != float64(c.n/c.targets) {
			t.Errorf("%d sources on %d targets: dst %v (err %v)", c.n, c.targets, dst, err)
		}
	}
	// affine: a bias gradient's sum over 100 rows (stride 0) into 3 columns
	if d.SupportsFloat64() && Supports[float64](d, "scatter", "") {
		src, _ := ones(300)
		err := ScatterAddAffine(d, make([]float64, 3), src, []int{100, 3}, []int{0, 1}, 0, 1)
		if !errors.Is(err, ErrUnsupported) {
			t.Errorf("affine sum of 100 rows into 3: err = %v, want ErrUnsupported", err)
		}
		dst := make([]float64, 3)
		if err := ScatterAddAffine(d, dst, src[:30], []int{10, 3}, []int{0, 1}, 0, 1); err != nil || dst[2] != 10 {
			t.Errorf("affine sum of 10 rows into 3: %v (err %v)", dst, err)
		}
	}
	if d.Info().AtomicFloat32Add {
		src := make([]float32, 1000)
		for i := range src {
			src[i] = 1
		}
		dst := []float32{0}
		if err := ScatterAdd(d, dst, src, make([]int32, 1000), 1); err != nil || dst[0] != 1000 {
			t.Errorf("float32 atomic add, 1000 ones into one element: %v (err %v)", dst[0], err)
		}
	}
}
