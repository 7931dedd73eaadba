package kernel

import (
	"fmt"
	"testing"

	"github.com/bulkad/bulkad/core"
	"gorgonia.org/tensor"
)

// Benchmarks of the index patterns of convolutional networks at a realistic size (batch 50,
// 32 channels, 14×14 and 28×28 maps, float64), as the op kernels that package raise builds
// (BenchmarkIndexOp: AffinePlan, else ClipPlan, else the interpreter) and as the compiled
// evaluator runs them (BenchmarkIndexEval):
//
//	go test -run xxx -bench 'Index(Op|Eval)' ./kernel

// ixPattern is an affine index function over dom addressing the dims outer of an array
// whose blocks have shape rest: output k is c0[k] + Σ_j c[k][j]·i_j.
type ixPattern struct {
	name       string
	dom, outer []int
	rest       []int
	c          [][]int64
	c0         []int64
}

func (p ixPattern) fn(b *core.Builder) *core.IndexFn {
	return randAffineCase{dom: p.dom, c: p.c, c0: p.c0, dyn: make([]bool, len(p.c))}.fn(b, nil)
}

// convPattern is the window function of a convolution (lower.Window's windowFn): domain
// [b, oh, ow, c, kh, kw] over an image [b, c, h, w], rows s·i − pad + d·r.
func convPattern(name string, b, c, h, w, k, s, d, pad int) ixPattern {
	oh, ow := (h+2*pad-(d*(k-1)+1))/s+1, (w+2*pad-(d*(k-1)+1))/s+1
	S, D, P := int64(s), int64(d), int64(-pad)
	return ixPattern{name: name, dom: []int{b, oh, ow, c, k, k}, outer: []int{b, c, h, w},
		c:  [][]int64{{1, 0, 0, 0, 0, 0}, {0, 0, 0, 1, 0, 0}, {0, S, 0, 0, D, 0}, {0, 0, S, 0, 0, D}},
		c0: []int64{0, 0, P, P}}
}

// indexBench is one benchmarked pattern: a gather, or a scatter.
type indexBench struct {
	cc      ixPattern
	scatter bool
}

func indexBenches() []indexBench {
	window := func(name string, r, s, pad int, dom, outer []int) ixPattern {
		// pooling windows, window position outermost: [r, s, b, c, i, j] over [b, c, h, w]
		return ixPattern{name: name, dom: dom, outer: outer,
			c:  [][]int64{{0, 0, 1, 0, 0, 0}, {0, 0, 0, 1, 0, 0}, {1, 0, 0, 0, int64(r), 0}, {0, 1, 0, 0, 0, int64(s)}},
			c0: []int64{0, 0, int64(-pad), int64(-pad)}}
	}
	depthwise := ixPattern{name: "depthwise_3x3_pad1", dom: []int{50, 32, 14, 14, 3, 3}, outer: []int{50, 32, 14, 14},
		c:  [][]int64{{1, 0, 0, 0, 0, 0}, {0, 1, 0, 0, 0, 0}, {0, 0, 1, 0, 1, 0}, {0, 0, 0, 1, 0, 1}},
		c0: []int64{0, 0, -1, -1}}
	return []indexBench{
		{convPattern("im2col_3x3_pad1_s1", 50, 32, 14, 14, 3, 1, 1, 1), false},
		{convPattern("im2col_3x3_pad1_s2", 50, 32, 28, 28, 3, 2, 1, 1), false},
		{convPattern("col2im_3x3_pad1_s1", 50, 32, 14, 14, 3, 1, 1, 1), true},
		{convPattern("col2im_3x3_pad1_s2", 50, 32, 28, 28, 3, 2, 1, 1), true},
		{convPattern("col2im_convnet_8ch", 50, 8, 14, 14, 3, 1, 1, 1), true},
		{window("pool_2x2_s2", 2, 2, 0, []int{2, 2, 50, 32, 14, 14}, []int{50, 32, 28, 28}), false},
		{window("pool_3x3_pad1_s1", 1, 1, 1, []int{3, 3, 50, 32, 14, 14}, []int{50, 32, 14, 14}), false},
		{depthwise, false},
		{depthwise, true},
		// torchvision's windows over resnet18's last 2×2 maps at batch 2: rows of 2 (by table)
		{ixPattern{name: "windows_2x2_maps_512ch", dom: []int{512, 3, 3, 2, 2, 2}, outer: []int{2, 512, 2, 2},
			c:  [][]int64{{0, 0, 0, 1, 0, 0}, {1, 0, 0, 0, 0, 0}, {0, 1, 0, 0, 1, 0}, {0, 0, 1, 0, 0, 1}},
			c0: []int64{0, 0, -1, -1}}, false},
		{ixPattern{name: "windows_2x2_maps_512ch", dom: []int{512, 3, 3, 2, 2, 2}, outer: []int{2, 512, 2, 2},
			c:  [][]int64{{0, 0, 0, 1, 0, 0}, {1, 0, 0, 0, 0, 0}, {0, 1, 0, 0, 1, 0}, {0, 0, 1, 0, 0, 1}},
			c0: []int64{0, 0, -1, -1}}, true},
		// the ONNX importer's im2col, [c, kh, kw, b, oh, ow] over [b, c, h, w] (densenet121's
		// 3×3 convolutions at batch 2, 16×16 maps): rows of ow, clipped at the borders
		{ixPattern{name: "im2col_onnx_3x3_pad1", dom: []int{128, 3, 3, 2, 16, 16}, outer: []int{2, 128, 16, 16},
			c:  [][]int64{{0, 0, 0, 1, 0, 0}, {1, 0, 0, 0, 0, 0}, {0, 1, 0, 0, 1, 0}, {0, 0, 1, 0, 0, 1}},
			c0: []int64{0, 0, -1, -1}}, false},
		{ixPattern{name: "im2col_onnx_3x3_pad1", dom: []int{128, 3, 3, 2, 16, 16}, outer: []int{2, 128, 16, 16},
			c:  [][]int64{{0, 0, 0, 1, 0, 0}, {1, 0, 0, 0, 0, 0}, {0, 1, 0, 0, 1, 0}, {0, 0, 1, 0, 0, 1}},
			c0: []int64{0, 0, -1, -1}}, true},
		// Gorgonia's im2col of a channels-last image (the zoo MobileNet's depthwise input)
		{ixPattern{name: "im2col_nhwc_3x3_pad1", dom: []int{50, 14, 14, 32, 3, 3}, outer: []int{50, 14, 14, 32},
			c:  [][]int64{{1, 0, 0, 0, 0, 0}, {0, 1, 0, 0, 1, 0}, {0, 0, 1, 0, 0, 1}, {0, 0, 0, 1, 0, 0}},
			c0: []int64{0, -1, -1, 0}}, false},
		{ixPattern{name: "transpose_nchw_nhwc", dom: []int{50, 28, 28, 32}, outer: []int{50, 32, 28, 28},
			c:  [][]int64{{1, 0, 0, 0}, {0, 0, 0, 1}, {0, 1, 0, 0}, {0, 0, 1, 0}},
			c0: []int64{0, 0, 0, 0}}, false},
	}
}

func (ib indexBench) name() string {
	if ib.scatter {
		return "scatter_" + ib.cc.name
	}
	return "gather_" + ib.cc.name
}

// sizes are the numbers of elements of the domain side and the addressed side.
func (ib indexBench) sizes() (domSide, other int) {
	r := core.Shape(ib.cc.rest).Size()
	return core.Shape(ib.cc.dom).Size() * r, core.Shape(ib.cc.outer).Size() * r
}

// opKernel is the pattern's op kernel as package raise builds it.
func (ib indexBench) opKernel(b *testing.B) Kernel {
	var bl core.Builder
	prog, err := CompileIndexFn(ib.cc.fn(&bl))
	if err != nil {
		b.Fatal(err)
	}
	r := core.Shape(ib.cc.rest).Size()
	dom, outer := ib.cc.dom, ib.cc.outer
	if ib.scatter {
		k := &Scatter{Dom: dom, Dst: outer, Rest: r, IndexPlan: IndexPlan{Fn: prog}}
		k.SetFastPaths(dom, outer)
		return k
	}
	k := &Gather{Dom: dom, Src: outer, Rest: r, IndexPlan: IndexPlan{Fn: prog}}
	k.SetFastPaths(dom, outer)
	return k
}

func BenchmarkIndexOp(b *testing.B) {
	for _, ib := range indexBenches() {
		b.Run(ib.name(), func(b *testing.B) {
			k := ib.opKernel(b)
			dom, other := ib.sizes()
			in, out := make([]float64, other), dom
			if ib.scatter {
				in, out = make([]float64, dom), other
			}
			copy(in, benchData(len(in), 1))
			benchOp(b, k, make([]float64, out), in)
		})
	}
}

func BenchmarkIndexEval(b *testing.B) {
	for _, ib := range indexBenches() {
		b.Run(ib.name(), func(b *testing.B) {
			var bl core.Builder
			rest := core.Shape(ib.cc.rest)
			big := append(append(core.Shape{}, ib.cc.outer...), rest...)
			small := append(append(core.Shape{}, ib.cc.dom...), rest...)
			in, out := big, small
			if ib.scatter {
				in, out = small, big
			}
			x := bl.Var("x", ty(core.Float64, in...))
			var body core.Term
			if ib.scatter {
				body = bl.Scatter(out, x, ib.cc.fn(&bl))
			} else {
				body = bl.Gather(out, x, ib.cc.fn(&bl))
			}
			e := benchExec(b, &bl, []*core.Var{x}, body)
			o := tensor.New(tensor.WithShape(out...), tensor.Of(tensor.Float64))
			arg := benchDense(in, 1)
			if err := e.RunInto([]*tensor.Dense{o}, arg); err != nil {
				b.Fatal(fmt.Errorf("%s: %v", ib.name(), err))
			}
			runBench(b, e, out, arg)
		})
	}
}

// BenchmarkIndexLoop: hand-written Go loops of im2col and col2im (3×3, pad 1, stride 1) at
// the benchmarks' size, the floor the kernels are measured against.
func BenchmarkIndexLoop(b *testing.B) {
	const n, c, h, w = 50, 32, 14, 14
	for _, scatter := range []bool{false, true} {
		name := "gather_im2col_3x3_pad1_s1"
		if scatter {
			name = "scatter_col2im_3x3_pad1_s1"
		}
		b.Run(name, func(b *testing.B) {
			img, cols := benchData(n*c*h*w, 1), benchData(n*h*w*c*9, 2)
			b.ResetTimer()
			for range b.N {
				if scatter {
					clear(img)
				}
				p := 0
				for bi := range n {
					for i := range h {
						for j := range w {
							for ci := range c {
								base := (bi*c + ci) * h * w
								for r := range 3 {
									for s := range 3 {
										y, x := i-1+r, j-1+s
										in := y >= 0 && y < h && x >= 0 && x < w
										switch {
										case scatter && in:
											img[base+y*w+x] += cols[p]
										case in:
											cols[p] = img[base+y*w+x]
										case !scatter:
											cols[p] = 0
										}
										p++
									}
								}
							}
						}
					}
				}
			}
		})
	}
}
