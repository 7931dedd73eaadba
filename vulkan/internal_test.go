package vulkan

// scatterAdd is ScatterAdd with a chosen shader, to test the compare-and-swap fallback on
// devices that have float atomics.
func scatterAdd[T Float](d *Device, dst, src []T, idx []int32, block int, shader string) error {
	return d.run(job{op: "scatterAdd", shader: shader, spec: []uint32{0},
		passes: onePass(len(src), 256, uint32(len(src)), uint32(block), uint32(len(dst)/block), 0, 0),
		args:   []arg{argOf(dst, true, true), argOf(src, true, false), argOf(idx, true, false)}})
}
