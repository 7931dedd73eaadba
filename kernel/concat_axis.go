package kernel

import (
	"sort"

	"github.com/bulkad/bulkad/core"
	"github.com/pkg/errors"
)

// ConcatAxis writes its inputs side by side along one axis: the output is [Outer, Σ Sizes,
// Inner] and input j, of shape [Outer, Sizes[j], Inner], fills positions Offs[j] …
// Offs[j]+Sizes[j]−1 of the middle dimension; the offsets tile it (every position written
// once). It computes lower.Concat's sum of gathers, each 0 outside its operand, with one copy
// of each element instead of a gather of the whole result per operand and an addition per
// operand after the first (densenet121 concatenates up to 32 feature maps per layer). With
// AddZero (such a sum of two or more terms) each float element is written as v + 0, as the
// sum computes it: −0 becomes +0, every other value (NaN payloads included) is unchanged.
type ConcatAxis struct {
	Outer, Inner int
	Sizes, Offs  []int
	AddZero      bool
}

// Run implements Kernel.
func (k ConcatAxis) Run(out any, ins []any) error {
	return byElem("concat", out, ins, concatAxisRun[float64], concatAxisRun[float32], concatAxisRun[int64], concatAxisRun[bool], k)
}

// check validates the geometry against the output length and the input lengths: the
// inputs' ranges must tile the middle dimension.
func (k ConcatAxis) check(outLen int, inLens []int) error {
	if len(k.Sizes) != len(k.Offs) || len(inLens) != len(k.Sizes) || k.Outer < 0 || k.Inner < 0 {
		return errors.Errorf("kernel: concat: %d inputs for %d sizes and %d offsets (outer %d, inner %d)",
			len(inLens), len(k.Sizes), len(k.Offs), k.Outer, k.Inner)
	}
	order := make([]int, len(k.Sizes))
	for j, s := range k.Sizes {
		if s < 0 || k.Offs[j] < 0 {
			return errors.Errorf("kernel: concat: input %d has size %d at offset %d", j, s, k.Offs[j])
		}
		if want := k.Outer * s * k.Inner; inLens[j] != want {
			return errors.Errorf("kernel: concat: input %d has %d elements, want %d ([%d,%d,%d])",
				j, inLens[j], want, k.Outer, s, k.Inner)
		}
		order[j] = j
	}
	sort.Slice(order, func(a, b int) bool {
		i, j := order[a], order[b]
		return k.Offs[i] < k.Offs[j] || k.Offs[i] == k.Offs[j] && k.Sizes[i] < k.Sizes[j]
	})
	total := 0
	for _, j := range order {
		if k.Offs[j] != total {
			return errors.Errorf("kernel: concat: offsets %v with sizes %v do not tile the axis", k.Offs, k.Sizes)
		}
		total += k.Sizes[j]
	}
	if want := k.Outer * total * k.Inner; outLen != want {
		return errors.Errorf("kernel: concat: output has %d elements, want %d ([%d,%d,%d])",
			outLen, want, k.Outer, total, k.Inner)
	}
	return nil
}

func concatAxisRun[T elem](k ConcatAxis, out []T, ins []any) error {
	xs := make([][]T, len(ins))
	lens := make([]int, len(ins))
	for j, in := range ins {
		x, ok := in.([]T)
		if !ok {
			return typeErr("concat", out, ins)
		}
		xs[j], lens[j] = x, len(x)
	}
	if err := k.check(len(out), lens); err != nil {
		return err
	}
	total := len(out) / max(1, k.Outer*k.Inner)
	// one piece per (outer index, input): a contiguous run of the output
	pieces := k.Outer * len(xs)
	run := func(lo, hi int) {
		for p := lo; p < hi; p++ {
			o, j := p/len(xs), p%len(xs)
			w := k.Sizes[j] * k.Inner
			dst := out[(o*total+k.Offs[j])*k.Inner:][:w]
			src := xs[j][o*w:][:w]
			if k.AddZero {
				plusZero(dst, src)
			} else {
				copy(dst, src)
			}
		}
	}
	if work := costOf(len(out), wCheap); workers(pieces, work) > 1 {
		inParallel(pieces, work, run)
	} else {
		run(0, pieces)
	}
	return nil
}

// plusZero is dst[i] = src[i] + 0 for floats (−0 → +0, the bits of every other value kept),
// a copy for other types.
func plusZero[T elem](dst, src []T) {
	switch d := any(dst).(type) {
	case []float64:
		addZero(d, any(src).([]float64))
	case []float32:
		addZero(d, any(src).([]float32))
	default:
		copy(dst, src)
	}
}

func addZero[T floatT](dst, src []T) {
	if done := simdScalar(core.OpAdd, dst, src, 0, false); done > 0 {
		dst, src = dst[done:], src[done:]
	}
	var zero T
	for i, v := range src[:len(dst)] {
		dst[i] = v + zero
	}
}
