package onnx

import (
	"math"

	"github.com/bulkad/bulkad/core"
	"github.com/bulkad/bulkad/lower"
	"github.com/pkg/errors"
)

// opsLayers lowers the layers beyond convolution and pooling: transposed convolution,
// resizing (Resize, Upsample) and Expand (which PyTorch's exporter puts before recurrent
// layers to make their zero initial states).
var opsLayers = map[string]opFn{
	"ConvTranspose": opConvTranspose,
	"Resize":        opResize,
	"Upsample":      opResize,
}

// --- transposed convolution ---

// opConvTranspose lowers ConvTranspose over 1, 2 or 3 spatial dimensions (lower.ConvTransposeND)
// with strides, pads, output_padding, dilations and group. output_shape fixes the pads as the
// operator's specification states (total padding = stride·(in−1) + output_padding +
// dilation·(kernel−1) + 1 − output_shape, split evenly with the odd one at the end for
// SAME_UPPER and at the beginning otherwise); auto_pad SAME_UPPER and SAME_LOWER without it
// aim at output_shape = input·stride, VALID at no padding.
func opConvTranspose(c *ctx, n *Node, ins []value) ([]value, error) {
	x, f, kernel, err := c.convOperands(n, ins, "transposed convolutions")
	if err != nil {
		return nil, err
	}
	xs, fs := shapeOf(x), shapeOf(f)
	r := len(xs) - 2
	if len(kernel) != r {
		return nil, errors.Errorf("kernel shape %v for %d spatial dimensions", kernel, r)
	}
	attr := func(name string, def int) ([]int, error) {
		out := make([]int, r)
		for k := range out {
			out[k] = def
		}
		if v, ok := n.attrInts(name); ok {
			if len(v) != r {
				return nil, errors.Errorf("%s %v for %d spatial dimensions", name, v, r)
			}
			for k := range v {
				out[k] = int(v[k])
			}
		}
		return out, nil
	}
	w := lower.WindowND{Kernel: make([]int, r), PadBegin: make([]int, r), PadEnd: make([]int, r)}
	for k := range kernel {
		w.Kernel[k] = int(kernel[k])
	}
	if w.Strides, err = attr("strides", 1); err != nil {
		return nil, err
	}
	if w.Dilations, err = attr("dilations", 1); err != nil {
		return nil, err
	}
	outPad, err := attr("output_padding", 0)
	if err != nil {
		return nil, err
	}
	autoPad := "NOTSET"
	if a, ok := n.Attrs["auto_pad"]; ok && a.S != "" {
		autoPad = a.S
	}
	outShape, hasOut := n.attrInts("output_shape")
	if hasOut && len(outShape) == r+2 {
		outShape = outShape[2:]
	}
	if hasOut && len(outShape) != r {
		return nil, errors.Errorf("output_shape %v for %d spatial dimensions", outShape, r)
	}
	switch {
	case autoPad != "NOTSET" && autoPad != "SAME_UPPER" && autoPad != "SAME_LOWER" && autoPad != "VALID":
		return nil, errors.Errorf("auto_pad %q: supported are NOTSET, SAME_UPPER, SAME_LOWER and VALID", autoPad)
	case hasOut || autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER":
		for k := 0; k < r; k++ {
			want := xs[2+k] * w.Strides[k]
			if hasOut {
				want = int(outShape[k])
			}
			total := w.Strides[k]*(xs[2+k]-1) + outPad[k] + w.Dilations[k]*(w.Kernel[k]-1) + 1 - want
			if total < 0 {
				return nil, errors.Errorf("output size %d along spatial axis %d is larger than the full transposed convolution (%d); supported are output sizes up to it", want, k, want+total)
			}
			if autoPad == "SAME_UPPER" {
				w.PadBegin[k], w.PadEnd[k] = total/2, total-total/2
			} else {
				w.PadBegin[k], w.PadEnd[k] = total-total/2, total/2
			}
		}
	case autoPad == "NOTSET":
		if p, ok := n.attrInts("pads"); ok {
			if len(p) != 2*r {
				return nil, errors.Errorf("pads %v: want %d values for %d spatial dimensions", p, 2*r, r)
			}
			for k := 0; k < r; k++ {
				w.PadBegin[k], w.PadEnd[k] = int(p[k]), int(p[r+k])
			}
		}
	}
	groups := int(n.attrInt("group", 1))
	if groups < 1 || xs[1]%groups != 0 || fs[0] != xs[1] {
		return nil, errors.Errorf("group %d: input channels %d and weight %v (want weight [input channels, output channels/group, …])", groups, xs[1], fs)
	}
	y, err := lower.ConvTransposeND(x, f, w, groups, outPad)
	if err != nil {
		return nil, err
	}
	return c.withBias(y, ins)
}

// --- Resize and Upsample ---

// resizeSpec is a Resize node's interpolation: mode (nearest, linear, cubic), the coordinate
// transformation, the rounding of nearest, cubic's coefficient and exclude_outside.
type resizeSpec struct {
	mode, coord, nearest string
	cubicA               float64
	excludeOutside       bool
}

// opResize lowers Resize (operator sets 10 to 18) and Upsample (7 to 9), every axis whose size
// or scale changes resampled by lower.Resample: mode nearest (nearest_mode round_prefer_floor,
// round_prefer_ceil, floor or ceil), linear (and bilinear, trilinear: one axis after the
// other) or cubic (cubic_coeff_a, exclude_outside), with the coordinate transformations
// half_pixel, pytorch_half_pixel, align_corners, asymmetric and tf_half_pixel_for_nn, from
// scales or sizes (constants). Upsample and Resize-10 are asymmetric, with nearest rounding
// down (as ONNX's version converter from 10 to 11 states). Refused: tf_crop_and_resize (a
// region of interest), antialias, keep_aspect_ratio_policy other than stretch.
func opResize(c *ctx, n *Node, ins []value) ([]value, error) {
	x, err := c.floatIn(ins, 0)
	if err != nil {
		return nil, err
	}
	xs := shapeOf(x)
	r := len(xs)
	spec := resizeSpec{mode: "nearest", coord: "asymmetric", nearest: "floor", cubicA: -0.75}
	if a, ok := n.Attrs["mode"]; ok && a.S != "" {
		spec.mode = a.S
	}
	var scales []float64
	var sizes []int64
	legacy := n.OpType == "Upsample" || c.opset < 11
	switch {
	case n.OpType == "Upsample" && c.opset < 9:
		s, ok := n.Attrs["scales"]
		if !ok {
			return nil, errors.New("the scales attribute is required")
		}
		scales = s.Floats
	case legacy: // Upsample-9, Resize-10: X, scales
		if scales, err = c.resizeConst(ins, 1, "scales"); err != nil {
			return nil, err
		}
	default:
		spec.coord = "half_pixel"
		spec.nearest = "round_prefer_floor"
		if a, ok := n.Attrs["coordinate_transformation_mode"]; ok && a.S != "" {
			spec.coord = a.S
		}
		if a, ok := n.Attrs["nearest_mode"]; ok && a.S != "" {
			spec.nearest = a.S
		}
		spec.cubicA = n.attrFloat("cubic_coeff_a", -0.75)
		spec.excludeOutside = n.attrInt("exclude_outside", 0) != 0
		if n.attrInt("antialias", 0) != 0 {
			return nil, errors.New("antialias = 1 is not supported")
		}
		if a, ok := n.Attrs["keep_aspect_ratio_policy"]; ok && a.S != "" && a.S != "stretch" {
			return nil, errors.Errorf("keep_aspect_ratio_policy %q: only stretch is supported", a.S)
		}
		if spec.coord == "tf_crop_and_resize" {
			return nil, errors.New("coordinate_transformation_mode tf_crop_and_resize (a region of interest) is not supported")
		}
		if scales, err = c.resizeConst(ins, 2, "scales"); err != nil {
			return nil, err
		}
		// sizes: a constant, or shape arithmetic on constants (Shape, Slice, Concat, Cast)
		sz, err := c.resizeConst(ins, 3, "sizes")
		if err != nil {
			return nil, err
		}
		for _, v := range sz {
			sizes = append(sizes, int64(v))
		}
	}
	axes := seqInts(0, r)
	if a, ok := n.attrInts("axes"); ok && c.opset >= 18 {
		axes = axes[:0]
		for _, v := range a {
			ax, err := normAxis(v, r)
			if err != nil {
				return nil, err
			}
			axes = append(axes, ax)
		}
	}
	if (len(scales) == 0) == (len(sizes) == 0) {
		return nil, errors.Errorf("scales %v and sizes %v: want exactly one of them", scales, sizes)
	}
	if k := max(len(scales), len(sizes)); k != len(axes) {
		return nil, errors.Errorf("scales %v or sizes %v for %d axes of input %v", scales, sizes, len(axes), xs)
	}
	switch spec.mode {
	case "nearest", "linear", "cubic":
	case "bilinear", "trilinear": // Upsample-7's names in some exporters
		spec.mode = "linear"
	default:
		return nil, errors.Errorf("mode %q: supported are nearest, linear and cubic", spec.mode)
	}
	y := x
	for i, ax := range axes {
		in := xs[ax]
		var out int
		var scale float64
		if len(scales) > 0 {
			scale = scales[i]
			if !(scale > 0) || math.IsInf(scale, 0) {
				return nil, errors.Errorf("scale %v along axis %d: want a positive number", scale, ax)
			}
			out = int(math.Floor(float64(in) * scale))
		} else {
			out = int(sizes[i])
			scale = float64(out) / float64(in)
		}
		if out < 1 || out > 1<<28 {
			return nil, errors.Errorf("axis %d of size %d resized to %d: want 1 to 2^28", ax, in, out)
		}
		idx, wt, err := resizeTaps(spec, in, out, scale)
		if err != nil {
			return nil, err
		}
		if identityTaps(idx, wt, in) {
			continue
		}
		if y, err = lower.Resample(y, ax, idx, wt); err != nil {
			return nil, err
		}
	}
	return []value{{t: y}}, nil
}

// resizeConst reads the float constant input i (empty or omitted: nil).
func (c *ctx) resizeConst(ins []value, i int, what string) ([]float64, error) {
	if i >= len(ins) || (ins[i].t == nil && !ins[i].isF && !ins[i].isInt) {
		return nil, nil
	}
	v, ok, err := c.constFloatsDeep(ins[i])
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, errors.Errorf("input %d (%s) must be a constant; it depends on graph inputs", i, what)
	}
	return v, nil
}

// resizeTaps returns the taps (lower.Resample's index and weights; nil weights for nearest)
// of one axis of size in resized to out with scale, by the coordinate transformations and
// interpolations of ONNX's Resize.
func resizeTaps(spec resizeSpec, in, out int, scale float64) ([][]int, [][]float64, error) {
	coord := func(j int) (float64, error) {
		xr := float64(j)
		switch spec.coord {
		case "half_pixel":
			return (xr+0.5)/scale - 0.5, nil
		case "pytorch_half_pixel":
			if out == 1 {
				return 0, nil
			}
			return (xr+0.5)/scale - 0.5, nil
		case "align_corners":
			if out == 1 {
				return 0, nil
			}
			return xr * float64(in-1) / float64(out-1), nil
		case "asymmetric":
			return xr / scale, nil
		case "tf_half_pixel_for_nn":
			return (xr + 0.5) / scale, nil
		}
		return 0, errors.Errorf("coordinate_transformation_mode %q: supported are half_pixel, pytorch_half_pixel, align_corners, asymmetric and tf_half_pixel_for_nn", spec.coord)
	}
	clampIx := func(i int) int { return min(max(i, 0), in-1) }
	switch spec.mode {
	case "nearest":
		idx := make([]int, out)
		for j := range idx {
			xo, err := coord(j)
			if err != nil {
				return nil, nil, err
			}
			var i float64
			switch spec.nearest {
			case "round_prefer_floor":
				if xo == math.Floor(xo)+0.5 {
					i = math.Floor(xo)
				} else {
					i = math.Round(xo)
				}
			case "round_prefer_ceil":
				if xo == math.Floor(xo)+0.5 {
					i = math.Ceil(xo)
				} else {
					i = math.Round(xo)
				}
			case "floor":
				i = math.Floor(xo)
			case "ceil":
				i = math.Ceil(xo)
			default:
				return nil, nil, errors.Errorf("nearest_mode %q: supported are round_prefer_floor, round_prefer_ceil, floor and ceil", spec.nearest)
			}
			idx[j] = clampIx(int(i))
		}
		return [][]int{idx}, nil, nil
	case "linear":
		idx := [][]int{make([]int, out), make([]int, out)}
		wt := [][]float64{make([]float64, out), make([]float64, out)}
		for j := 0; j < out; j++ {
			xo, err := coord(j)
			if err != nil {
				return nil, nil, err
			}
			i0 := math.Floor(xo)
			l := xo - i0
			idx[0][j], idx[1][j] = clampIx(int(i0)), clampIx(int(i0)+1)
			wt[0][j], wt[1][j] = 1-l, l
		}
		return idx, wt, nil
	}
	// cubic: taps at floor(x) − 1 … floor(x) + 2 with Keys' weights of coefficient A
	a := spec.cubicA
	keys := func(d float64) float64 {
		d = math.Abs(d)
		switch {
		case d <= 1:
			return ((a+2)*d-(a+3))*d*d + 1
		case d < 2:
			return ((a*d-5*a)*d+8*a)*d - 4*a
		}
		return 0
	}
	idx := make([][]int, 4)
	wt := make([][]float64, 4)
	for k := range idx {
		idx[k], wt[k] = make([]int, out), make([]float64, out)
	}
	for j := 0; j < out; j++ {
		xo, err := coord(j)
		if err != nil {
			return nil, nil, err
		}
		i0 := int(math.Floor(xo))
		t := xo - math.Floor(xo)
		sum := 0.0
		for k := 0; k < 4; k++ {
			i := i0 - 1 + k
			wk := keys(t + 1 - float64(k))
			if spec.excludeOutside && (i < 0 || i >= in) {
				wk = 0
			}
			idx[k][j], wt[k][j] = clampIx(i), wk
			sum += wk
		}
		if spec.excludeOutside && sum != 0 {
			for k := 0; k < 4; k++ {
				wt[k][j] /= sum
			}
		}
	}
	return idx, wt, nil
}

// identityTaps reports whether the taps map an axis of size in onto itself unchanged.
func identityTaps(idx [][]int, wt [][]float64, in int) bool {
	if len(idx[0]) != in {
		return false
	}
	for j := 0; j < in; j++ {
		s := 0.0
		for k := range idx {
			w := 1.0
			if wt != nil {
				w = wt[k][j]
			}
			if w != 0 && idx[k][j] != j {
				return false
			}
			s += w
		}
		if s != 1 {
			return false
		}
	}
	return true
}

// constFloatsDeep returns the values of a float constant, of a float initializer, or of a
// term that depends on no graph input (a Concat of Constants, say), evaluated now.
func (c *ctx) constFloatsDeep(v value) ([]float64, bool, error) {
	if f, ok := c.constFloats(v); ok {
		return f, true, nil
	}
	if v.t == nil {
		return nil, false, nil
	}
	env := map[string]*core.Lit{}
	if !c.closedEnv(v.t, env, 0) {
		return nil, false, nil
	}
	l, err := core.EvalTerm(v.t, env)
	if err != nil {
		return nil, false, err
	}
	if l.F == nil {
		return nil, false, nil
	}
	return l.F, true, nil
}

// closedEnv fills env with the values of t's free variables when each is a let-bound value of
// this lowering that itself depends on no graph input or initializer (within depth 64).
func (c *ctx) closedEnv(t core.Term, env map[string]*core.Lit, depth int) bool {
	if depth > 64 {
		return false
	}
	for _, fv := range core.FreeVars(t) {
		if _, ok := env[fv.Name]; ok {
			continue
		}
		k := -1
		for i, lv := range c.lets {
			if lv.Name == fv.Name {
				k = i
				break
			}
		}
		if k < 0 || !c.closedEnv(c.bounds[k], env, depth+1) {
			return false
		}
		l, err := core.EvalTerm(c.bounds[k], env)
		if err != nil {
			return false
		}
		env[fv.Name] = l
	}
	return true
}
