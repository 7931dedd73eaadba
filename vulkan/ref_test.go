package vulkan

import (
	"math"
	"math/rand"
)

// Plain Go reference kernels (naive loops, float64 accumulation) and comparison helpers.

// binaryRef applies an arithmetic op (+ - * /) in T's arithmetic (Go rounds each float32
// operation to float32, as core.Eval's single rounding of the float64 result does).
func binaryRef[T Float](op string, x, y T) T {
	switch op {
	case "+":
		return x + y
	case "-":
		return x - y
	case "*":
		return x * y
	case "/":
		return x / y
	}
	panic("binaryRef: not an arithmetic op: " + op)
}

func uniform[T Float](rng *rand.Rand, n int, lo, hi float64) []T {
	s := make([]T, n)
	for i := range s {
		s[i] = T(lo + (hi-lo)*rng.Float64())
	}
	return s
}

// sumRef sums src viewed as [outer, n, inner] over the middle axis in float64, and also
// returns the sums of magnitudes (the condition scale for the tolerance).
func sumRef[T Float](src []T, outer, n, inner int) (sum, mag []float64) {
	sum = make([]float64, outer*inner)
	mag = make([]float64, outer*inner)
	for a := 0; a < outer; a++ {
		for j := 0; j < n; j++ {
			for b := 0; b < inner; b++ {
				v := float64(src[(a*n+j)*inner+b])
				sum[a*inner+b] += v
				mag[a*inner+b] += math.Abs(v)
			}
		}
	}
	return sum, mag
}

func argmaxRef[T Float](src []T, outer, n, inner int) []int64 {
	out := make([]int64, outer*inner)
	for a := 0; a < outer; a++ {
		for b := 0; b < inner; b++ {
			arg := -1
			for j := 0; j < n; j++ {
				v := src[(a*n+j)*inner+b]
				if v != v {
					continue // NaN is skipped
				}
				if arg < 0 || v > src[(a*n+arg)*inner+b] {
					arg = j
				}
			}
			out[a*inner+b] = int64(max(arg, 0))
		}
	}
	return out
}

// matmulRef returns op(a)·op(b) in float64 and the matching sums of |a_il|·|b_lj|.
func matmulRef[T Float](a, b []T, m, k, n int, ta, tb bool) (c, mag []float64) {
	c = make([]float64, m*n)
	mag = make([]float64, m*n)
	for i := 0; i < m; i++ {
		for j := 0; j < n; j++ {
			var s, g float64
			for l := 0; l < k; l++ {
				var x, y float64
				if ta {
					x = float64(a[l*m+i])
				} else {
					x = float64(a[i*k+l])
				}
				if tb {
					y = float64(b[j*k+l])
				} else {
					y = float64(b[l*n+j])
				}
				s += x * y
				g += math.Abs(x * y)
			}
			c[i*n+j], mag[i*n+j] = s, g
		}
	}
	return c, mag
}

func gatherRef[T Float](src []T, idx []int32, block int) []T {
	out := make([]T, len(idx)*block)
	nb := len(src) / block
	for i, id := range idx {
		if id < 0 || int(id) >= nb {
			continue
		}
		copy(out[i*block:(i+1)*block], src[int(id)*block:(int(id)+1)*block])
	}
	return out
}

// scatterRef adds in float64 and returns the sums of magnitudes too.
func scatterRef[T Float](dst0, src []T, idx []int32, block int) (sum, mag []float64) {
	sum = make([]float64, len(dst0))
	mag = make([]float64, len(dst0))
	for i, v := range dst0 {
		sum[i] = float64(v)
		mag[i] = math.Abs(float64(v))
	}
	nb := len(dst0) / block
	for i, id := range idx {
		if id < 0 || int(id) >= nb {
			continue
		}
		for r := 0; r < block; r++ {
			v := float64(src[i*block+r])
			sum[int(id)*block+r] += v
			mag[int(id)*block+r] += math.Abs(v)
		}
	}
	return sum, mag
}

// rowMajor calls f with each multi-index of shape in row-major order (once, with the empty
// index, for rank 0).
func rowMajor(shape []int, f func(ix []int)) {
	for _, e := range shape {
		if e == 0 {
			return
		}
	}
	ix := make([]int, len(shape))
	for {
		f(ix)
		k := len(ix) - 1
		for ; k >= 0 && ix[k]+1 == shape[k]; k-- {
			ix[k] = 0
		}
		if k < 0 {
			return
		}
		ix[k]++
	}
}

// dot is Σ ix[k]·st[k].
func dot(ix, st []int) int {
	s := 0
	for k, c := range ix {
		s += c * st[k]
	}
	return s
}

// stridedRef evaluates x op y over shape with strides (float32 ops in float32).
func stridedRef[T Float](op string, x, y []T, shape, xs, ys []int) []T {
	var out []T
	rowMajor(shape, func(ix []int) {
		out = append(out, binaryRef(op, x[dot(ix, xs)], y[dot(ix, ys)]))
	})
	return out
}

// affineRef walks dom row-major and returns, for each point, the block index base + Σ c·st.
func affineRef(dom, st []int, base int) []int {
	var out []int
	rowMajor(dom, func(ix []int) {
		out = append(out, base+dot(ix, st))
	})
	return out
}

// sameBits reports whether a and b have the same bits.
func sameBits[T Float](a, b T) bool {
	if is64[T]() {
		return math.Float64bits(float64(a)) == math.Float64bits(float64(b))
	}
	return math.Float32bits(float32(a)) == math.Float32bits(float32(b))
}
