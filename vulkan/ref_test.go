package vulkan

import (
	"math"
	"math/rand"
)

// Plain Go reference kernels (naive loops, float64 accumulation) and comparison helpers.

// ulps is the distance between two float32 values in units in the last place (NaN == NaN);
// values of opposite sign count their distance through zero.
func ulps(a, b float32) float64 {
	if a == b || (a != a && b != b) {
		return 0
	}
	if a != a || b != b {
		return math.Inf(1)
	}
	ord := func(x float32) int64 {
		i := int64(math.Float32bits(x))
		if i >= 0x80000000 {
			return 0x80000000 - i
		}
		return i
	}
	d := ord(a) - ord(b)
	if d < 0 {
		d = -d
	}
	return float64(d)
}

// unaryRef is the float64 definition of each unary op.
func unaryRef(op string, x float64) float64 {
	switch op {
	case "neg":
		return -x
	case "abs":
		return math.Abs(x)
	case "sign":
		switch {
		case x > 0:
			return 1
		case x < 0:
			return -1
		}
		return x
	case "floor":
		return math.Floor(x)
	case "ceil":
		return math.Ceil(x)
	case "recip":
		return 1 / x
	case "sqrt":
		return math.Sqrt(x)
	case "exp":
		return math.Exp(x)
	case "log":
		return math.Log(x)
	case "sin":
		return math.Sin(x)
	case "cos":
		return math.Cos(x)
	case "tan":
		return math.Tan(x)
	case "tanh":
		return math.Tanh(x)
	case "sigmoid":
		return 1 / (1 + math.Exp(-x))
	case "log1p":
		return math.Log1p(x)
	case "expm1":
		return math.Expm1(x)
	}
	panic("unknown op " + op)
}

func binaryRef(op string, x, y float64) float64 {
	switch op {
	case "+":
		return x + y
	case "-":
		return x - y
	case "*":
		return x * y
	case "/":
		return x / y
	case "max", "min":
		// bulkad's core evaluator: a NaN operand wins (unlike math.Max(NaN, +Inf) = +Inf),
		// and +0 > -0.
		if x != x || y != y {
			return math.NaN()
		}
		if op == "max" {
			return math.Max(x, y)
		}
		return math.Min(x, y)
	case "pow":
		return math.Pow(x, y)
	}
	panic("unknown op " + op)
}

// binary32 applies op in float32 arithmetic (Go rounds each float32 operation to float32).
func binary32(op string, x, y float32) float32 {
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
	return float32(binaryRef(op, float64(x), float64(y)))
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

// logUniform draws ±10^u, u uniform in [lo, hi], with values below min replaced by their
// negation's absolute value (for ops defined above a bound).
func logUniform[T Float](rng *rand.Rand, n int, lo, hi, min float64) []T {
	s := make([]T, n)
	for i := range s {
		v := math.Pow(10, lo+(hi-lo)*rng.Float64())
		if rng.Intn(2) == 0 {
			v = -v
		}
		if v < min {
			v = math.Abs(v)
		}
		s[i] = T(v)
	}
	return s
}

// stridedRef evaluates x op y over shape with strides in float64 (float32 ops in float32).
func stridedRef(op string, x, y []float32, shape, xs, ys []int) []float32 {
	n := 1
	for _, e := range shape {
		n *= e
	}
	out := make([]float32, n)
	ix := make([]int, len(shape))
	for i := range out {
		xi, yi := 0, 0
		for k := range ix {
			xi += ix[k] * xs[k]
			yi += ix[k] * ys[k]
		}
		out[i] = binary32(op, x[xi], y[yi])
		for k := len(ix) - 1; k >= 0; k-- {
			ix[k]++
			if ix[k] < shape[k] {
				break
			}
			ix[k] = 0
		}
	}
	return out
}

// affineRef walks dom row-major and returns, for each point, the block index base + Σ c·st.
func affineRef(dom, st []int, base int) []int {
	n := 1
	for _, e := range dom {
		n *= e
	}
	out := make([]int, n)
	ix := make([]int, len(dom))
	for p := range out {
		j := base
		for k, c := range ix {
			j += c * st[k]
		}
		out[p] = j
		for k := len(ix) - 1; k >= 0; k-- {
			ix[k]++
			if ix[k] < dom[k] {
				break
			}
			ix[k] = 0
		}
	}
	return out
}
