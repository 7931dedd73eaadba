package vulkan

import (
	"math"

	"github.com/pkg/errors"
)

// Gather copies blocks of block consecutive elements: block i of dst is block idx[i] of src,
// or zeros when idx[i] < 0 or idx[i] >= len(src)/block. len(dst) = len(idx)*block.
func Gather[T Float](d *Device, dst, src []T, idx []int32, block int) error {
	const name = "gather"
	if block < 1 || len(dst) != len(idx)*block || len(src)%block != 0 {
		return errors.Errorf("vulkan: %s: dst of %d, src of %d elements, %d indices, block %d do not fit",
			name, len(dst), len(src), len(idx), block)
	}
	w := words[T]()
	if err := checkLen(name, len(dst)*w, len(src)*w); err != nil {
		return err
	}
	if len(dst) == 0 {
		return nil
	}
	return d.run(job{op: name, shader: "gather", spec: []uint32{0},
		passes: onePass(len(dst)*w, 256, uint32(len(dst)*w), uint32(block*w), uint32(len(src)/block), 0, 0),
		args:   []arg{argOf(dst, false, true), argOf(src, true, false), argOf(idx, true, false)}})
}

func scatterShader[T Float](d *Device) string {
	if is64[T]() {
		return "scatter_cas_f64"
	}
	if d.check("scatter", "scatter_atomic_f32") == nil {
		return "scatter_atomic_f32"
	}
	return "scatter_cas_f32"
}

// casContentionMax is the most source blocks a compare-and-swap scatter (float64, or float32
// without VK_EXT_shader_atomic_float) adds into one block of dst on a GPU: its threads retry
// until each has won its swap, so heavy contention serialises them badly (a million additions
// into one element took 37 s on an H100, against about a millisecond on the CPU). Beyond it
// the scatter is ErrUnsupported and the caller's CPU kernel runs; CPU implementations
// (lavapipe), which run few invocations at once, take any.
const casContentionMax = 64

// casDeclines returns ErrUnsupported when shader is a compare-and-swap scatter, d is not a CPU
// implementation and most (the most source blocks that add into one block) exceeds
// casContentionMax.
func casDeclines(d *Device, name, shader string, most int) error {
	if shader == "scatter_atomic_f32" || most <= casContentionMax || d.Info().Type == CPU {
		return nil
	}
	return unsupported("vulkan: %s: %d source blocks add into one block of dst; compare-and-swap loops on %s serialise more than %d",
		name, most, d.Info().Name, casContentionMax)
}

// mostPerTarget is the most indices of idx that fall on one of the targets blocks (those out of
// range are dropped, so they count for none).
func mostPerTarget(idx []int32, targets int) int {
	count := make([]int32, targets)
	most := 0
	for _, i := range idx {
		if i >= 0 && int(i) < targets {
			count[i]++
			most = max(most, int(count[i]))
		}
	}
	return most
}

// ScatterAdd accumulates blocks of block consecutive elements: block idx[i] of dst gets block
// i of src added, for 0 <= idx[i] < len(dst)/block (other blocks are dropped). dst keeps its
// previous contents (zero it for a plain scatter). len(src) = len(idx)*block. Repeated indices
// accumulate atomically, in an unspecified order (results may differ from a sequential loop
// by float rounding). On a GPU without float32 atomic add (and always for float64), more than
// casContentionMax indices on one block is ErrUnsupported.
func ScatterAdd[T Float](d *Device, dst, src []T, idx []int32, block int) error {
	const name = "scatterAdd"
	if block < 1 || len(src) != len(idx)*block || len(dst)%block != 0 {
		return errors.Errorf("vulkan: %s: dst of %d, src of %d elements, %d indices, block %d do not fit",
			name, len(dst), len(src), len(idx), block)
	}
	if err := checkLen(name, len(dst), len(src)); err != nil {
		return err
	}
	if len(src) == 0 || len(dst) == 0 {
		return nil
	}
	shader := scatterShader[T](d)
	if shader != "scatter_atomic_f32" && d.Info().Type != CPU { // (only then count the indices)
		if err := casDeclines(d, name, shader, mostPerTarget(idx, len(dst)/block)); err != nil {
			return err
		}
	}
	return d.run(job{op: name, shader: shader, spec: []uint32{0},
		passes: onePass(len(src), 256, uint32(len(src)), uint32(block), uint32(len(dst)/block), 0, 0),
		args:   []arg{argOf(dst, true, true), argOf(src, true, false), argOf(idx, true, false)}})
}

// affinePlan checks an affine index map over dom and packs the push constants shared by the
// gather and scatter shaders: n words, block words, blocks, base, rank, dom[6], strides[6].
func affinePlan(name string, dom, strides []int, base, block, words, blocks int) ([]uint32, int, error) {
	if len(strides) != len(dom) || block < 1 {
		return nil, 0, errors.Errorf("vulkan: %s: domain %v with strides %v and block %d", name, dom, strides, block)
	}
	points := 1
	reach := abs(base)
	for k, e := range dom {
		if e < 0 {
			return nil, 0, errors.Errorf("vulkan: %s: negative extent in domain %v", name, dom)
		}
		points *= e
		if e > 0 {
			reach += (e - 1) * abs(strides[k])
		}
	}
	if reach > math.MaxInt32 {
		return nil, 0, unsupported("vulkan: %s: affine offsets up to %d exceed int32 (domain %v, strides %v, base %d)", name, reach, dom, strides, base)
	}
	if err := checkLen(name, points*block*words, blocks*block*words); err != nil {
		return nil, 0, err
	}
	var sh, st []int
	for k, e := range dom {
		if e == 1 {
			continue
		}
		if last := len(sh) - 1; last >= 0 && st[last] == e*strides[k] {
			sh[last] *= e
			st[last] = strides[k]
			continue
		}
		sh, st = append(sh, e), append(st, strides[k])
	}
	if len(sh) > maxAffineRank {
		return nil, 0, unsupported("vulkan: %s: %d dimensions after merging (domain %v, strides %v), the shader takes %d", name, len(sh), dom, strides, maxAffineRank)
	}
	push := make([]uint32, 5+2*maxAffineRank)
	push[0], push[1], push[2], push[3], push[4] = uint32(points*block*words), uint32(block*words), uint32(blocks), uint32(int32(base)), uint32(len(sh))
	for k := range sh {
		push[5+k], push[5+maxAffineRank+k] = uint32(sh[k]), uint32(int32(st[k]))
	}
	return push, points, nil
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// GatherAffine is Gather with an affine index map instead of a table: dst is row-major over
// dom (times block elements), and block p = (c_1..c_r) of dst is block base + Σ c_k·strides[k]
// of src, or zeros when that is outside src (strides may be negative). Dimensions that are
// contiguous in src are merged; more than 6 remaining are ErrUnsupported.
func GatherAffine[T Float](d *Device, dst, src []T, dom, strides []int, base, block int) error {
	const name = "gatherAffine"
	if block < 1 || len(src)%block != 0 {
		return errors.Errorf("vulkan: %s: src of %d elements is not a whole number of blocks of %d", name, len(src), block)
	}
	push, points, err := affinePlan(name, dom, strides, base, block, words[T](), len(src)/block)
	if err != nil {
		return err
	}
	if len(dst) != points*block {
		return errors.Errorf("vulkan: %s: dst of %d elements for domain %v and block %d", name, len(dst), dom, block)
	}
	if len(dst) == 0 {
		return nil
	}
	return d.run(job{op: name, shader: "gather", spec: []uint32{1},
		passes: []pass{{push: push, items: int(push[0]), perGroup: 256}},
		args:   []arg{argOf(dst, false, true), argOf(src, true, false)}})
}

// ScatterAddAffine is ScatterAdd with an affine index map: src is row-major over dom (times
// block elements), and block p = (c_1..c_r) of src is added to block base + Σ c_k·strides[k]
// of dst, dropped when that is outside dst. Several points may hit one block (overlapping
// windows): the additions are atomic. dst keeps its previous contents. On a GPU without
// float32 atomic add (and always for float64), a map whose dimensions of stride 0 put more than
// casContentionMax points on one block is ErrUnsupported.
func ScatterAddAffine[T Float](d *Device, dst, src []T, dom, strides []int, base, block int) error {
	const name = "scatterAddAffine"
	if block < 1 || len(dst)%block != 0 {
		return errors.Errorf("vulkan: %s: dst of %d elements is not a whole number of blocks of %d", name, len(dst), block)
	}
	push, points, err := affinePlan(name, dom, strides, base, block, 1, len(dst)/block)
	if err != nil {
		return err
	}
	if len(src) != points*block {
		return errors.Errorf("vulkan: %s: src of %d elements for domain %v and block %d", name, len(src), dom, block)
	}
	if len(src) == 0 || len(dst) == 0 {
		return nil
	}
	// the points that differ only along dimensions of stride 0 all add into one block (a bias
	// gradient's sum over a batch); overlapping windows add a few more
	most := 1
	for k, e := range dom {
		if strides[k] == 0 {
			most *= e
		}
	}
	shader := scatterShader[T](d)
	if err := casDeclines(d, name, shader, most); err != nil {
		return err
	}
	return d.run(job{op: name, shader: shader, spec: []uint32{1},
		passes: []pass{{push: push, items: len(src), perGroup: 256}},
		args:   []arg{argOf(dst, true, true), argOf(src, true, false)}})
}
