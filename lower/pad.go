package lower

import (
	"github.com/bulkad/bulkad/core"
	"github.com/pkg/errors"
)

// PadMode is how Pad fills the positions it adds.
type PadMode int

// The padding modes (ONNX's Pad modes, PyTorch's F.pad modes constant, reflect and replicate).
const (
	// PadConstant fills with a constant value.
	PadConstant PadMode = iota
	// PadReflect mirrors x at its edges without repeating the edge: 3 2 | 1 2 3 4 | 3 2.
	PadReflect
	// PadEdge repeats the edge: 1 1 | 1 2 3 4 | 4 4.
	PadEdge
)

func (m PadMode) String() string {
	switch m {
	case PadConstant:
		return "constant"
	case PadReflect:
		return "reflect"
	case PadEdge:
		return "edge"
	}
	return "unknown"
}

// Pad adds before[a] positions in front of and after[a] positions behind every axis a of x,
// filled as mode says (value is PadConstant's fill). A negative count removes positions
// instead (ONNX's negative pads). Reflection needs counts below the axis' length; edge
// padding a non-empty axis. Zero padding is one gather per axis (a gather reads 0 outside
// its operand), constant padding with another value a concatenation with constant blocks,
// reflection and edge padding a gather through a table of source positions (whose
// derivative adds the copies' gradients into the positions they came from).
func Pad(x core.Term, before, after []int, mode PadMode, value float64) (core.Term, error) {
	if err := checkTerm("pad", x); err != nil {
		return nil, err
	}
	sh := x.Type().Shape
	if len(before) != sh.Rank() || len(after) != sh.Rank() {
		return nil, errors.Errorf("lower: pad: %d and %d counts for shape %v", len(before), len(after), sh)
	}
	if mode != PadConstant && mode != PadReflect && mode != PadEdge {
		return nil, errors.Errorf("lower: pad: unknown mode %d", int(mode))
	}
	var err error
	for a := range sh {
		lo, hi := before[a], after[a]
		// crop first: negative counts remove positions
		if cl, ch := max(-lo, 0), max(-hi, 0); cl+ch > 0 {
			d := x.Type().Shape[a]
			if cl+ch >= d {
				return nil, errors.Errorf("lower: pad: removing %d and %d positions of axis %d of shape %v leaves nothing", cl, ch, a, sh)
			}
			if x, err = Slice(x, a, cl, 1, d-cl-ch, true); err != nil {
				return nil, err
			}
		}
		lo, hi = max(lo, 0), max(hi, 0)
		if lo == 0 && hi == 0 {
			continue
		}
		if x, err = padAxis(x, a, lo, hi, mode, value); err != nil {
			return nil, err
		}
	}
	return x, nil
}

// padAxis pads axis a of x by lo and hi ≥ 0 positions.
func padAxis(x core.Term, a, lo, hi int, mode PadMode, value float64) (core.Term, error) {
	xs := x.Type().Shape
	d := xs[a]
	out := xs.Clone()
	out[a] = d + lo + hi
	var b core.Builder
	switch mode {
	case PadConstant:
		if value == 0 {
			vs, ts := indexVars(&b, a+1)
			ix := append([]core.Term{}, ts...)
			ix[a] = affine(&b, ts[a], 1, int64(-lo))
			return result("pad", &b, b.Gather(out, x, b.IndexFn(vs, ix...)))
		}
		parts := []core.Term{}
		block := func(k int) core.Term {
			bs := xs.Clone()
			bs[a] = k
			return b.Full(core.Type{Shape: bs, Dtype: x.Type().Dtype}, value)
		}
		if lo > 0 {
			parts = append(parts, block(lo))
		}
		parts = append(parts, x)
		if hi > 0 {
			parts = append(parts, block(hi))
		}
		if err := wrap("pad", &b); err != nil {
			return nil, err
		}
		return Concat(a, parts...)
	case PadReflect:
		if lo >= d || hi >= d {
			return nil, errors.Errorf("lower: pad: reflecting %d and %d positions of axis %d of shape %v (at most %d)", lo, hi, a, xs, d-1)
		}
	case PadEdge:
		if d == 0 {
			return nil, errors.Errorf("lower: pad: edge padding of the empty axis %d of shape %v", a, xs)
		}
	}
	src := make([]int64, out[a])
	for j := range src {
		s := j - lo
		switch {
		case s < 0 && mode == PadReflect:
			s = -s
		case s < 0:
			s = 0
		case s >= d && mode == PadReflect:
			s = 2*(d-1) - s
		case s >= d:
			s = d - 1
		}
		src[j] = int64(s)
	}
	idx, err := core.NewLitI(core.Shape{len(src)}, src)
	if err != nil {
		return nil, errors.Wrap(err, "lower: pad")
	}
	return Take(x, idx, a)
}
