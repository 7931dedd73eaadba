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
	// Specialised per float type on purpose: one generic loop over floatT (keys of the
	// float64 value) measured 1.8× slower on BenchmarkPoolArgmax (the branch-free selection
	// is not kept through the generic instantiation).
	switch xs := any(x).(type) {
	case []float64:
		affineWalk(k.Inner, k.InnerSt, 0, func(p, io, count, stride int) {
			o := out[p : p+count]
			for j := range o {
				best, bi := floatKey(xs[offs[0]+io]), 0
				for i := 1; i < len(offs); i++ {
					kv := floatKey(xs[offs[i]+io])
					bi = selectInt(kv > best, i, bi)
					best = max(best, kv)
				}
				o[j] = int64(bi)
				io += stride
			}
		})
	case []float32:
		affineWalk(k.Inner, k.InnerSt, 0, func(p, io, count, stride int) {
			o := out[p : p+count]
			for j := range o {
				best, bi := float32Key(xs[offs[0]+io]), 0
				for i := 1; i < len(offs); i++ {
					kv := float32Key(xs[offs[i]+io])
					bi = selectInt(kv > best, i, bi)
					best = max(best, kv)
				}
				o[j] = int64(bi)
				io += stride
			}
		})
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

// float32Key is floatKey for float32.
func float32Key(v float32) int64 {
	if v != v {
		return math.MinInt64
	}
	b := int64(int32(math.Float32bits(v + 0)))
	return b ^ (b >> 63 & math.MaxInt32)
}
