//go:build (linux || darwin || freebsd) && (amd64 || arm64) && !novulkan

package vulkan

import (
	"errors"
	"testing"
)

// TestFloat32ShaderChoice checks which float32 element-wise shaders run. With float64 on the
// device, the ones that divide and take square roots through float64; the ones without
// float64 (for devices that lack it, run here on a second device told to use them) give
// core.Eval's results for every op they take and decline division, reciprocal and square
// root; a device that may flush float32 subnormals declines every float32 element-wise op.
func TestFloat32ShaderChoice(t *testing.T) {
	shared := device(t)
	t.Logf("%s: %+v", shared.Name(), shared.Info())
	if !shared.Info().Float32Subnormals {
		t.Logf("%s may flush float32 subnormals: its float32 element-wise kernels run on the CPU", shared.Name())
	}
	if shared.SupportsFloat64() {
		if got := elementwiseShader[float32](shared, "unary"); got != "unary_f32x" {
			t.Errorf("device with float64: float32 unary shader %s, want unary_f32x", got)
		}
	}
	d, err := Open()
	if err != nil {
		t.Fatalf("second device: %v", err)
	}
	defer d.Close()
	d.plainFloat32 = true
	if got := elementwiseShader[float32](d, "binary"); got != "binary_f32" {
		t.Errorf("plain float32: binary shader %s, want binary_f32", got)
	}
	if d.Info().Float32Subnormals {
		testUnaryCore[float32](t, d)
		testBinaryCore[float32](t, d)
	}
	for _, c := range []struct{ kind, op string }{{"unary", "recip"}, {"unary", "sqrt"}, {"binary", "/"}} {
		if Supports[float32](d, c.kind, c.op) {
			t.Errorf("plain float32 shaders: Supports(%s %s) = true, want false", c.kind, c.op)
		}
	}
	d.info.Float32Subnormals = false
	x := []float32{1, 2}
	if err := Unary(d, "exp", x, x); !errors.Is(err, ErrUnsupported) {
		t.Errorf("flushing device: float32 exp err = %v, want ErrUnsupported", err)
	}
	if err := Binary(d, "+", x, x, x); !errors.Is(err, ErrUnsupported) {
		t.Errorf("flushing device: float32 + err = %v, want ErrUnsupported", err)
	}
	if err := BinaryStrided(d, "*", x, x, x, []int{2}, []int{1}, []int{1}); !errors.Is(err, ErrUnsupported) {
		t.Errorf("flushing device: float32 strided * err = %v, want ErrUnsupported", err)
	}
	if Supports[float32](d, "unary", "neg") || Supports[float32](d, "binary", "max") {
		t.Error("flushing device: Supports accepts float32 element-wise ops")
	}
	if d.SupportsFloat64() {
		y := []float64{4, 9}
		if err := Unary(d, "sqrt", y, y); err != nil || y[0] != 2 || y[1] != 3 {
			t.Errorf("flushing device: float64 sqrt = %v (err %v), want [2 3] on the device", y, err)
		}
	}
	if !Supports[float32](d, "sum", "") {
		t.Error("flushing device: float32 sums declined; only element-wise kernels promise core.Eval's results")
	}
}
