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
// float32 key is the key of its exact float64 value). Written once for both float types; the
// 2×2 windows of the common max-pool run unrolled (BenchmarkPoolArgmax at one thread: 1.10 ms
// in both dtypes, against 1.27 ms f64 and 1.38 ms f32 for the per-type copies this replaced,
// and 1.51 ms for the generic loop alone).
func argmaxFewKeys[T floatT](k *ArgmaxView, out []int64, xs []T, offs []int) {
	affineWalk(k.Inner, k.InnerSt, 0, func(p, io, count, stride int) {
		argmaxKeysRow(out[p:p+count], xs, offs, io, stride)
	})
}

// argmaxKeysRow is one row of argmaxFewKeys: o[j] is the first window position holding the
// maximum at inner offset io + j·stride.
func argmaxKeysRow[T floatT](o []int64, xs []T, offs []int, io, stride int) {
	if len(offs) == 4 { // 2×2 windows, the common pool: unrolled
		o0, o1, o2, o3 := offs[0], offs[1], offs[2], offs[3]
		if stride == 2 && o1 == o0+1 && o3 == o2+1 {
			// a max-pool of stride 2: eight (then four) windows a step in vector registers;
			// a rest of 1 to 3 windows is the last four again (the rows of a pool of width
			// 14 or 7 left 2 and 3 of them to the loop below: 14% and 43% of its windows)
			done := simdArgmax4(o, xs, o0+io, o2+io)
			if r := len(o) - done; done > 0 && r > 0 {
				simdArgmax4(o[len(o)-4:], xs, o0+io+2*(len(o)-4), o2+io+2*(len(o)-4))
				done = len(o)
			}
			o, io = o[done:], io+2*done
		}
		for j := range o {
			best := floatKey(float64(xs[o0+io]))
			k1, k2, k3 := floatKey(float64(xs[o1+io])), floatKey(float64(xs[o2+io])), floatKey(float64(xs[o3+io]))
			bi := selectInt(k1 > best, 1, 0)
			best = max(best, k1)
			bi = selectInt(k2 > best, 2, bi)
			best = max(best, k2)
			o[j] = int64(selectInt(k3 > best, 3, bi))
			io += stride
		}
		return
	}
	for j := range o {
		best, bi := floatKey(float64(xs[offs[0]+io])), 0
		for i, off := range offs[1:] {
			kv := floatKey(float64(xs[off+io]))
			bi = selectInt(kv > best, i+1, bi)
			best = max(best, kv)
		}
		o[j] = int64(bi)
		io += stride
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
	b := int64(math.Float64bits(v + 0)) // v + 0 turns -0 into +0
	k := b ^ (b >> 63 & math.MaxInt64)
	if v != v {
		k = math.MinInt64
	}
	return k
}
