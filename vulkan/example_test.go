package vulkan_test

import (
	"errors"
	"fmt"

	"github.com/bulkad/bulkad/vulkan"
)

// A CPU kernel that tries the device first and falls back to Go.
func Example() {
	dev, err := vulkan.Open()
	if err != nil {
		fmt.Println("no Vulkan, CPU only:", err)
	}
	defer dev.Close() // a nil *Device is fine

	x := []float32{1, 2, 3, 4}
	y := []float32{10}
	out := make([]float32, len(x))
	if err := vulkan.Binary(dev, "*", out, x, y); err != nil {
		if !errors.Is(err, vulkan.ErrUnsupported) && dev != nil {
			fmt.Println("device failed, using the CPU:", err)
		}
		for i := range out {
			out[i] = x[i] * y[0]
		}
	}
	fmt.Println(out)
}
