package kernel

import (
	"fmt"
	"math"
	"math/rand"
	"testing"
)

// softmaxRef is the definition, in float64, for moderate inputs (no shift needed):
// exp x_i / Σ_j exp x_j along the middle dimension of [pre, n, post].
func softmaxRef(x []float64, pre, n, post int, log bool) []float64 {
	out := make([]float64, len(x))
	for a := 0; a < pre; a++ {
		for c := 0; c < post; c++ {
			s := 0.0
			for i := 0; i < n; i++ {
				s += math.Exp(x[(a*n+i)*post+c])
			}
			for i := 0; i < n; i++ {
				k := (a*n+i)*post + c
				if log {
					out[k] = x[k] - math.Log(s)
				} else {
					out[k] = math.Exp(x[k]) / s
				}
			}
		}
	}
	return out
}

// TestSoftmax: both dtypes, every layout (the group along the last, middle and first
// dimension), softmax and log-softmax, out of place and in place, against the definition;
// large shapes run split across goroutines.
func TestSoftmax(t *testing.T) {
	shapes := [][3]int{{1, 1, 1}, {3, 5, 1}, {1, 7, 4}, {2, 3, 5}, {4, 1, 3}, {600, 300, 1}, {3, 200, 300}}
	rng := rand.New(rand.NewSource(5))
	for _, sh := range shapes {
		pre, n, post := sh[0], sh[1], sh[2]
		x := make([]float64, pre*n*post)
		for i := range x {
			x[i] = rng.Float64()*10 - 5
		}
		for _, log := range []bool{false, true} {
			want := softmaxRef(x, pre, n, post, log)
			name := fmt.Sprintf("%v/log=%v", sh, log)
			t.Run(name+"/f64", func(t *testing.T) {
				out := make([]float64, len(x))
				if err := Softmax(out, x, pre, n, post, log); err != nil {
					t.Fatal(err)
				}
				checkNear(t, "out of place", out, want, 1e-14)
				in := append([]float64(nil), x...)
				if err := Softmax(in, in, pre, n, post, log); err != nil {
					t.Fatal(err)
				}
				checkNear(t, "in place", in, want, 1e-14)
			})
			t.Run(name+"/f32", func(t *testing.T) {
				x32 := make([]float32, len(x))
				for i, v := range x {
					x32[i] = float32(v)
				}
				want32 := softmaxRef(f32to64(x32), pre, n, post, log)
				out := make([]float32, len(x))
				if err := Softmax(out, x32, pre, n, post, log); err != nil {
					t.Fatal(err)
				}
				checkNear(t, "f32", f32to64(out), want32, 3e-7)
			})
		}
	}
}

// TestSoftmaxEdges: values the unshifted definition overflows on, and the non-finite rules.
func TestSoftmaxEdges(t *testing.T) {
	inf, nan := math.Inf(1), math.NaN()
	cases := []struct {
		x, soft, log []float64
	}{
		{[]float64{1000, 0}, []float64{1, 0}, []float64{0, -1000}},
		{[]float64{-1000, -1000}, []float64{0.5, 0.5}, []float64{-math.Ln2, -math.Ln2}},
		{[]float64{math.Inf(-1), 0}, []float64{0, 1}, []float64{math.Inf(-1), 0}},
		{[]float64{math.Inf(-1), math.Inf(-1)}, []float64{nan, nan}, []float64{nan, nan}},
		{[]float64{inf, 0}, []float64{nan, nan}, []float64{nan, nan}},
		{[]float64{nan, 0}, []float64{nan, nan}, []float64{nan, nan}},
	}
	for _, c := range cases {
		for _, log := range []bool{false, true} {
			want := c.soft
			if log {
				want = c.log
			}
			out := make([]float64, len(c.x))
			if err := Softmax(out, c.x, 1, len(c.x), 1, log); err != nil {
				t.Fatal(err)
			}
			col := make([]float64, len(c.x)) // the same group as a column of [1, n, 2] (two equal columns)
			x2 := make([]float64, 2*len(c.x))
			for i, v := range c.x {
				x2[2*i], x2[2*i+1] = v, v
			}
			out2 := make([]float64, len(x2))
			if err := Softmax(out2, x2, 1, len(c.x), 2, log); err != nil {
				t.Fatal(err)
			}
			for i := range col {
				col[i] = out2[2*i+1]
			}
			for _, got := range [][]float64{out, col} {
				for i := range want {
					if !(got[i] == want[i] || math.IsNaN(got[i]) && math.IsNaN(want[i]) || math.Abs(got[i]-want[i]) < 1e-15) {
						t.Errorf("softmax(log=%v) of %v = %v, want %v", log, c.x, got, want)
						break
					}
				}
			}
		}
	}
	if err := Softmax(make([]float64, 3), make([]float64, 4), 1, 4, 1, false); err == nil {
		t.Error("an output of the wrong length was accepted")
	}
	if err := Softmax(make([]float64, 0), make([]float64, 0), 0, 5, 1, false); err != nil {
		t.Errorf("no groups: %v", err)
	}
}

func f32to64(x []float32) []float64 {
	out := make([]float64, len(x))
	for i, v := range x {
		out[i] = float64(v)
	}
	return out
}

func checkNear(t *testing.T, what string, got, want []float64, tol float64) {
	t.Helper()
	for i := range want {
		if math.Abs(got[i]-want[i]) > tol*math.Max(1, math.Abs(want[i])) {
			t.Fatalf("%s: element %d = %v, want %v", what, i, got[i], want[i])
		}
	}
}

func BenchmarkSoftmaxRows(b *testing.B) {
	for _, dt := range []string{"f64", "f32"} {
		b.Run(dt, func(b *testing.B) {
			const pre, n = 256, 128
			x64 := make([]float64, pre*n)
			for i := range x64 {
				x64[i] = float64(i%97)/10 - 4
			}
			x32 := make([]float32, len(x64))
			for i, v := range x64 {
				x32[i] = float32(v)
			}
			o64, o32 := make([]float64, len(x64)), make([]float32, len(x64))
			for i := 0; i < b.N; i++ {
				if dt == "f64" {
					_ = Softmax(o64, x64, pre, n, 1, false)
				} else {
					_ = Softmax(o32, x32, pre, n, 1, false)
				}
			}
		})
	}
}
