package kernel

import "math"

// argmaxFewOuter bounds the number of outer positions for which argmaxViewFew (all outer
// positions of one inner position at a time, the running maximum in a register) is used.
const argmaxFewOuter = 16

// argmaxViewFew is argmaxView for few outer positions (pooling windows): one pass over the
// inner positions, comparing the outer positions of each in turn. Floats are compared as
// order-preserving integer keys (see floatKey), which the compiler selects without branches:
// the comparisons of a max-pool depend on the data and would mispredict about half the time.
func argmaxViewFew[T num](k *ArgmaxView, out []int64, x []T) {
	var offBuf [argmaxFewOuter]int
	offs := offBuf[:len(k.OuterOff)]
	for i, o := range k.OuterOff {
		offs[i] = k.Off + o
	}
	switch xs := any(x).(type) {
	case []float64:
		argmaxFewKeys(k, out, xs, offs)
	case []float32:
		argmaxFewKeys(k, out, xs, offs)
	default:
		affineWalk(k.Inner, k.InnerSt, 0, func(p, io, count, stride int) {
			o := out[p : p+count]
			for j := range o {
				best, bi := x[offs[0]+io], 0
				for i := 1; i < len(offs); i++ {
					if v := x[offs[i]+io]; v > best {
						best, bi = v, i
					}
				}
				o[j] = int64(bi)
				io += stride
			}
		})
	}
}

// argmaxFewKeys is argmaxViewFew for floats, comparing order-preserving integer keys (a
// float32 key is the key of its exact float64 value). The keys of a window are loaded first
// and then selected: computing each key inside the selection loop measured 2× slower in this
// generic function than in per-type copies; this form is within about 15% of them on
// BenchmarkPoolArgmax and BenchmarkPoolArgmax32, and written once.
func argmaxFewKeys[T floatT](k *ArgmaxView, out []int64, xs []T, offs []int) {
	var kb [argmaxFewOuter]int64
	kv := kb[:len(offs)]
	affineWalk(k.Inner, k.InnerSt, 0, func(p, io, count, stride int) {
		o := out[p : p+count]
		for j := range o {
			for i, off := range offs {
				kv[i] = floatKey(float64(xs[off+io]))
			}
			o[j] = int64(firstMax(kv))
			io += stride
		}
	})
}

// firstMax is the position of the first maximum of kv (not empty), selected without
// branches.
func firstMax(kv []int64) int {
	best, bi := kv[0], 0
	for i := 1; i < len(kv); i++ {
		bi = selectInt(kv[i] > best, i, bi)
		best = max(best, kv[i])
	}
	return bi
}

// selectInt is a if c, else b (written so that the compiler emits a conditional move).
func selectInt(c bool, a, b int) int {
	if c {
		b = a
	}
	return b
}

// floatKey maps a float64 to an int64 with the same order on numbers, -0 and +0 equal, and
// NaN below every number: under a strict comparison the first maximum wins, a NaN never wins
// against a number, and an all-NaN column keeps its first position (argmaxOuter's rules).
func floatKey(v float64) int64 {
	if v != v {
		return math.MinInt64
	}
	b := int64(math.Float64bits(v + 0)) // v + 0 turns -0 into +0
	return b ^ (b >> 63 & math.MaxInt64)
}
