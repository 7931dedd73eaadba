package kernel

import (
	"math"

	"github.com/bulkad/bulkad/internal/vmath"
	"github.com/pkg/errors"
)

// Softmax writes the softmax of x along the middle dimension of the shape [pre, n, post] to
// out, or with log the log-softmax: out = exp(x − m) / Σ exp(x − m), resp.
// (x − m) − log Σ exp(x − m), with m the maximum along the dimension (the result does not
// depend on m; subtracting it keeps exp from overflowing). Sums and logarithms are taken in
// float64 for both dtypes. A NaN in a group makes the whole group NaN; a group of −Inf only
// (0/0) or holding +Inf (Inf − Inf) is NaN, as the core language's lowering of softmax gives.
// out and x have pre·n·post elements and may be the same slice. Rows are split across
// goroutines (GOMAXPROCS) when there are enough of them.
func Softmax[T ~float32 | ~float64](out, x []T, pre, n, post int, log bool) error {
	if pre < 0 || n < 0 || post < 0 || len(x) != pre*n*post || len(out) != len(x) {
		return errors.Errorf("kernel: softmax: shape [%d %d %d] (%d elements), input of %d, output of %d", pre, n, post, pre*n*post, len(x), len(out))
	}
	if n == 0 || pre == 0 || post == 0 {
		return nil
	}
	if post == 1 {
		inParallel(pre, costOf(len(x), wHeavy), func(lo, hi int) {
			for r := lo; r < hi; r++ {
				softmaxRow(out[r*n:(r+1)*n], x[r*n:(r+1)*n], log)
			}
		})
		return nil
	}
	inParallel(pre, costOf(len(x), wHeavy), func(lo, hi int) {
		m := make([]float64, post)
		s := make([]float64, post)
		for r := lo; r < hi; r++ {
			softmaxInner(out[r*n*post:(r+1)*n*post], x[r*n*post:(r+1)*n*post], n, post, m, s, log)
		}
	})
	return nil
}

// softmaxRow is Softmax of one contiguous group. The exponentials are package vmath's vector
// exp over chunks of x − m (float32 groups: x − m rounded to float32 and exp in float32, as
// PyTorch computes; sums in float64).
func softmaxRow[T ~float32 | ~float64](out, x []T, log bool) {
	m := math.Inf(-1)
	for _, v := range x {
		if f := float64(v); f > m {
			m = f
		}
	}
	var tmp [256]T
	s := 0.0
	for lo := 0; lo < len(x); lo += len(tmp) {
		xs := x[lo:min(lo+len(tmp), len(x))]
		e := tmp[:len(xs)]
		for i, v := range xs {
			e[i] = T(float64(v) - m)
		}
		expInPlace(e)
		for _, v := range e {
			s += float64(v)
		}
		if !log {
			copy(out[lo:], e) // after reading xs: out may be x
		}
	}
	if log {
		ls := math.Log(s)
		for i, v := range x {
			out[i] = T(float64(v) - m - ls)
		}
		return
	}
	r := 1 / s
	for i, v := range out {
		out[i] = T(float64(v) * r)
	}
}

// expInPlace sets every element of e to its exponential with vmath's vector kernels (float32
// or float64 slices; other element types through math.Exp).
func expInPlace[T ~float32 | ~float64](e []T) {
	switch d := any(e).(type) {
	case []float64:
		if vmath.Exp64Slice(d, d) == nil {
			return
		}
	case []float32:
		if vmath.Exp32Slice(d, d) == nil {
			return
		}
	}
	for i, v := range e {
		e[i] = T(math.Exp(float64(v)))
	}
}

// softmaxInner is Softmax of the post groups of one [n, post] block (group j is column j),
// walking the block row by row; m and s are scratch of length post.
func softmaxInner[T ~float32 | ~float64](out, x []T, n, post int, m, s []float64, log bool) {
	for j := range m {
		m[j], s[j] = math.Inf(-1), 0
	}
	for i := 0; i < n; i++ {
		for j, v := range x[i*post : (i+1)*post] {
			if f := float64(v); f > m[j] {
				m[j] = f
			}
		}
	}
	for i := 0; i < n; i++ {
		for j, v := range x[i*post : (i+1)*post] {
			s[j] += math.Exp(float64(v) - m[j])
		}
	}
	if log {
		for j := range s {
			s[j] = math.Log(s[j])
		}
	}
	for i := 0; i < n; i++ {
		row := out[i*post : (i+1)*post]
		for j, v := range x[i*post : (i+1)*post] {
			if log {
				row[j] = T(float64(v) - m[j] - s[j])
			} else {
				row[j] = T(math.Exp(float64(v)-m[j]) / s[j])
			}
		}
	}
}
