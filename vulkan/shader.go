//go:build (linux || darwin || freebsd) && (amd64 || arm64) && !novulkan

package vulkan

import (
	"embed"
	"encoding/binary"

	"github.com/pkg/errors"
)

// Feature bits a shader needs.
const (
	needFloat64 = 1 << iota
	needAtomicFloat32
	needFloat64Atomics
)

// shaderNeeds lists every embedded shader with the device features it needs.
func shaderNeeds(name string) (needs int, ok bool) {
	switch name {
	case "unary_f32", "binary_f32", "sum_thread_f32", "sum_group_f32", "argmax_thread_f32",
		"argmax_group_f32", "matmul_f32", "matmul_simple_f32", "gather", "replicate", "scatter_cas_f32":
		return 0, true
	case "unary_f64", "binary_f64", "unary_f32x", "binary_f32x", "sum_thread_f64", "sum_group_f64", "argmax_thread_f64",
		"argmax_group_f64", "matmul_f64", "matmul_simple_f64":
		return needFloat64, true
	case "scatter_atomic_f32":
		return needAtomicFloat32, true
	case "scatter_cas_f64":
		return needFloat64Atomics, true
	}
	return 0, false
}

//go:embed shaders/*.spv
var spirv embed.FS

// shaderWords returns the SPIR-V of a shader as aligned 32-bit words.
func shaderWords(name string) ([]uint32, error) {
	b, err := spirv.ReadFile("shaders/" + name + ".spv")
	if err != nil {
		return nil, errors.Errorf("vulkan: shader %s: not embedded: %v", name, err)
	}
	if len(b) < 20 || len(b)%4 != 0 {
		return nil, errors.Errorf("vulkan: shader %s: %d bytes is not SPIR-V", name, len(b))
	}
	w := make([]uint32, len(b)/4)
	for i := range w {
		w[i] = binary.LittleEndian.Uint32(b[4*i:])
	}
	if w[0] != 0x07230203 {
		return nil, errors.Errorf("vulkan: shader %s: bad SPIR-V magic %#x", name, w[0])
	}
	return w, nil
}
